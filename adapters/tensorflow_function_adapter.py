"""TensorFlow compiled (issue 19): each case's steps as one function, compiled with
``tf.function`` (traced into a graph, AutoGraph on, ``jit_compile`` left at its default:
the graph runs on TensorFlow's executor, not XLA). Everything else is the TensorFlow
adapter's.

What a ``tf.function`` returns is tensors: it converts every other value it can (a Python
int, bool or TensorShape becomes a constant tensor, a returned ``tf.Variable`` its value
read as a tensor) and refuses the rest (a DType). The case's function returns, besides
tensors and variables, ``None`` (an output that was not bound) and Python values a step
computed while tracing (a shape, an int, a dtype, whether a name was bound). ``compile``
wraps the function so that only its tensor and variable leaves (``tf.nest``) go through
``tf.function``, and the rest of its output is kept aside while TensorFlow traces it and put
back around the tensors the call returns: what the caller sees of a tensor is what
``tf.function`` returns (a variable returned comes back as a tensor of its value).

Reset between items: every item compiles a ``tf.function`` of its own (a new Python function
object), whose traces and concrete functions belong to it alone; nothing of an earlier
item's function is reused, so there is no process-wide compile cache to empty (TensorFlow has
no public call that empties one). ``tf.Variable`` inputs are captured by reference: their
``assign`` / ``assign_add`` inside the function are the caller's variables' writes."""

from __future__ import annotations

from typing import Any

from conformance.adapters.tensorflow_adapter import TensorflowAdapter, _tf


class TensorflowFunctionAdapter(TensorflowAdapter):
    name = "tensorflow_function"
    title = "TensorFlow, tf.function"
    report_rank = 51
    compiles = "tensorflow"
    jit_compile: bool | None = None  # tf.function's default: the graph executor, not XLA
    # the same refusals as in eager, as TensorFlow words them when it builds the graph (the
    # op's type and shape checks run at trace time, with the op's own message, before any kernel)
    error_patterns = {
        **TensorflowAdapter.error_patterns,
        "dtype_cast": TensorflowAdapter.error_patterns["dtype_cast"] + (
            r"Input '\w+' of '\w+' Op has type \w+ that does not match type \w+ of argument",
            r"Tensors in list passed to '\w+' of '\w+' Op have types \[[\w, ]+\] that don't all match"),
        "shape_mismatch": TensorflowAdapter.error_patterns["shape_mismatch"] + (
            r"Dimension \d+ in both shapes must be equal",),
        # the graph's own refusals, none of the kinds (docs/case-format.md, "Error kinds")
        "other": TensorflowAdapter.error_patterns["other"] + (
            r"Expected any non-tensor type, but got a tensor instead",
            r"from_dlpack received an invalid capsule",
            r"tf\.function only supports singleton tf\.Variables created on the first call",
            r"We failed to lift variable creations out of this tf\.function",
            r"TFE_FromDlpackCapsule\(\): incompatible function arguments",
            r"'SymbolicTensor' object has no attribute",
            r"Cannot convert a symbolic tf\.Tensor",
            r"Tensor conversion requested dtype \w+ for Tensor with dtype",
            # unpacking a symbolic tensor (tf.where's [N, ndim] indices into ndim names)
            r"Iterating over a symbolic .tf\.Tensor. is not allowed",
            # jax.dlpack.from_dlpack given a symbolic tensor, which has no __dlpack__
            r"The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods",
        ),
    }

    def compile(self, fn: Any) -> Any:
        tf = _tf()
        from tensorflow.python.framework import composite_tensor

        tensor_types = (tf.Tensor, tf.Variable, composite_tensor.CompositeTensor)
        static: dict[str, Any] = {}

        def tensors_only(*args: Any) -> list[Any]:
            out = fn(*args)
            leaves = tf.nest.flatten(out)
            traced = [isinstance(leaf, tensor_types) for leaf in leaves]
            static["out"], static["leaves"], static["traced"] = out, leaves, traced
            return [leaf for leaf, is_traced in zip(leaves, traced) if is_traced]

        compiled = tf.function(tensors_only, jit_compile=self.jit_compile)

        def call(*args: Any) -> Any:
            out = iter(compiled(*args))
            leaves = [next(out) if is_traced else leaf for leaf, is_traced in zip(static["leaves"], static["traced"])]
            return tf.nest.pack_sequence_as(static["out"], leaves)

        return call

    # ---- errors: what a step raised inside the function

    def error_message(self, exc: BaseException) -> str:
        return super().error_message(_raised(exc))

    def refused_mutation(self, exc: BaseException) -> bool:
        return super().refused_mutation(_raised(exc))

    def classify_error(self, exc: BaseException) -> str:
        return super().classify_error(_raised(exc))


def _raised(exc: BaseException) -> BaseException:
    """The exception the operation raised, where AutoGraph re-raised it: an error raised while
    ``tf.function`` traces is raised again as a new exception of the same type whose message
    is "in user code:", the traced frames (paths of this checkout), then the original's
    ``Type: message``; the original is its ``__context__``. Its type is the same, so the
    recorded type is what the step raised either way."""
    while getattr(exc, "ag_error_metadata", None) is not None and isinstance(exc.__context__, type(exc)):
        exc = exc.__context__
    return exc
