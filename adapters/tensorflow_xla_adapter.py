"""TensorFlow compiled with XLA (issue 19): ``tf.function(jit_compile=True)``, the same
function as :mod:`tensorflow_function_adapter` (the same wrapping of what crosses the
boundary), whose graph XLA compiles as one cluster; an operation XLA has no kernel for is
an error of the call, not a fallback to TensorFlow's executor."""

from __future__ import annotations

from conformance.adapters.base import Operation, absent
from conformance.adapters.tensorflow_function_adapter import TensorflowFunctionAdapter

# measured with tensorflow-cpu 2.21.0: tf.sparse.from_dense in a function compiled by XLA
# aborts the process now and then (shape.cc "Check failed: size == kUnboundedSize ... the
# 0-th dimension is dynamic"): the dynamic size of tf.where's output is read from memory XLA
# never initialised (openxla/xla#44941), so the outcome of a case would be chance
_SPARSE_ABORTS = ("tf.sparse.from_dense inside tf.function(jit_compile=True) aborts the process at random (XLA reads "
                  "the dynamic size of tf.where's output from uninitialised memory: 'Check failed: size == "
                  "kUnboundedSize', openxla/xla#44941; measured with tensorflow-cpu 2.21.0): no case with it can be "
                  "run to a reproducible outcome in this mode")


class TensorflowXlaAdapter(TensorflowFunctionAdapter):
    name = "tensorflow_xla"
    title = "TensorFlow, tf.function (jit_compile=True, XLA)"
    report_rank = 52
    jit_compile = True

    def operations(self) -> dict[str, Operation]:
        ops = super().operations()
        ops["method:to_sparse"] = absent(_SPARSE_ABORTS)
        return ops
