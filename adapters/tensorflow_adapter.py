"""TensorFlow adapter (tensorflow-cpu). ``tf.Tensor`` is immutable: item assignment raises
TypeError, and it has no in-place methods (those entries are absent, naming the
``tf.Variable`` counterparts). ``tf.Variable`` is mutable: ``assign``, ``assign_add``,
``assign_sub``, ``scatter_nd_update`` and the sliced ``v[i].assign(...)`` are in the table
under their own names, for the cases written for TensorFlow.

Gradients: TensorFlow records them only inside a ``tf.GradientTape``; the corpus's steps
(``requires_grad``, ``backward()``, ``.grad``, ``no_grad:``) have no tape-free counterpart
and are absent, with that reason.

Memory: a tensor's buffer is read through ``EagerTensor._numpy()``, a NumPy array over the
tensor's own buffer (the public ``numpy()`` returns a copy; ``np.from_dlpack(t)`` the same
buffer, read-only). The behaviour probe writes through that array, raw memory: TensorFlow's
own writes (``Variable.assign``) are copy-on-write when the buffer is shared, so they could
never show sharing. TensorFlow is imported on first use only.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from typing import Any, Sequence

from conformance.adapters.base import (
    NUMPY_CONVERSIONS,
    Adapter,
    GlobalState,
    Immutability,
    Layout,
    NotApplicable,
    Operation,
    TensorProbes,
    absent,
    dtype_named,
    is_device_name,
    numpy_style_views,
)

_NO_INPLACE = ("tf.Tensor is immutable and has no in-place '_' methods; the counterparts are the out-of-place "
               "operation, or on a tf.Variable assign / assign_add / assign_sub")
# issue 18, the structural in-place methods (none of them on an immutable tf.Tensor)
_STRUCTURAL_INPLACE = (
    "index_add_ index_copy_ index_fill_ index_put_ index_reduce_ scatter_ scatter_add_ scatter_reduce_ "
    "masked_scatter_ put_ fill_diagonal_ tril_ triu_ bernoulli_ cauchy_ exponential_ geometric_ log_normal_ "
    "random_ resize_as_ set_ cumsum_ cumprod_ renorm_ addmm_ addbmm_ baddbmm_ addmv_ addr_ addcdiv_ addcmul_ "
    "conj_physical_ put_along_axis_ reshape_ flatten_ cast_").split()
_TAPE = ("TensorFlow records gradients only inside a tf.GradientTape (tape.gradient(y, x)); a tensor has no "
         "requires_grad, .grad, backward() or grad mode of its own")
_NO_TRAIN_MODE = ("Keras layers have no train() / eval() mode; training is an argument of each call, "
                  "layer(x, training=True)")


@functools.cache
def _tf() -> Any:
    # TensorFlow logs from C++ on import; TF_CPP_MIN_LOG_LEVEL quiets what goes through its
    # logger (not the oneDNN notice, printed before absl is initialised)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow

    return tensorflow


def _tnp() -> Any:
    return _tf().experimental.numpy


def _shape(args: tuple) -> list:
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)


def _dtype(name: Any) -> Any:
    """The tf.DType a case names (the suite's dtype names are TensorFlow's)."""
    return _tf().dtypes.as_dtype(dtype_named(name))


def _rank(x: Any) -> int:
    return len(x.shape)


def _swap_perm(x: Any, d0: int, d1: int) -> list:
    perm = list(range(_rank(x)))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm


def _t(x: Any) -> Any:
    """torch's t(): the transpose of at most 2 dimensions; TensorFlow's counterpart is
    tf.transpose, which reverses every axis of a tensor of more (where torch refuses)."""
    if _rank(x) > 2:
        raise NotApplicable("TensorFlow has no t(); its counterpart tf.transpose reverses all axes of a tensor of "
                            "more than 2 dimensions, where torch's t() takes at most 2")
    return _tf().transpose(x)


def _view(x: Any, *args: Any) -> Any:
    """view(*shape): tf.reshape, which never copies (a TensorFlow tensor is always dense,
    and reshape hands the output the input's buffer); view(dtype): tf.bitcast, for dtypes of
    the same size (TensorFlow's bitcast to another size adds or removes a last dimension,
    where torch's view(dtype) rescales the last one)."""
    tf = _tf()
    if len(args) == 1 and isinstance(args[0], str):
        dtype = _dtype(args[0])
        if dtype.size != x.dtype.size:
            raise NotApplicable(f"TensorFlow's view(dtype) counterpart tf.bitcast changes the shape, not the last "
                                f"dimension's size, between {x.dtype.name} and {dtype.name} (different sizes)")
        return tf.bitcast(x, dtype)
    return tf.reshape(x, _shape(args))


def _flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    """TensorFlow has no flatten(): tf.reshape to the shape flatten(start_dim, end_dim) means."""
    shape = list(x.shape)
    n = len(shape)
    if n == 0:
        return _tf().reshape(x, [1])
    start, end = start_dim % n, end_dim % n
    merged = 1
    for d in shape[start:end + 1]:
        merged *= d
    return _tf().reshape(x, shape[:start] + [merged] + shape[end + 1:])


def _unflatten(x: Any, dim: int, sizes: Any) -> Any:
    shape = list(x.shape)
    dim = dim % len(shape)
    return _tf().reshape(x, shape[:dim] + list(sizes) + shape[dim + 1:])


def _narrow(x: Any, dim: int, start: int, length: int) -> Any:
    begin = [0] * _rank(x)
    size = [-1] * _rank(x)
    begin[dim], size[dim] = start, length
    return _tf().slice(x, begin, size)


def _expand(x: Any, *s: Any) -> Any:
    """torch's expand(*sizes), where -1 keeps a dimension: tf.broadcast_to of those sizes."""
    sizes = _shape(s)
    offset = len(sizes) - _rank(x)
    sizes = [x.shape[i - offset] if v == -1 and i >= offset else v for i, v in enumerate(sizes)]
    return _tf().broadcast_to(x, sizes)


def _split(x: Any, size: Any, dim: int = 0) -> list:
    """torch.split semantics (pieces of ``size``, or a list of piece sizes) with tf.split,
    whose int is a number of equal pieces."""
    if isinstance(size, (list, tuple)):
        return _tf().split(x, list(size), axis=dim)
    n = x.shape[dim]
    sections = [size] * (n // size) + ([n % size] if n % size else [])
    return _tf().split(x, sections, axis=dim)


def _unfold(x: Any, dim: int, size: int, step: int) -> Any:
    """torch's unfold(dim, size, step): tf.signal.frame, which puts the window right after
    ``dim``; torch puts it last. The same only when ``dim`` is the last dimension."""
    if dim % _rank(x) != _rank(x) - 1:
        raise NotApplicable("TensorFlow's unfold counterpart tf.signal.frame puts the window after the framed "
                            "axis, not last: the same as torch's unfold only along the last dimension")
    return _tf().signal.frame(x, size, step, axis=dim)


def _to(x: Any, target: str) -> Any:
    """to(dtype): tf.cast; to(device): TensorFlow places tensors with tf.device scopes."""
    if is_device_name(target):
        raise NotApplicable("TensorFlow tensors have no to(device); placement is a tf.device(...) scope around "
                            "the operation that makes the tensor")
    return _tf().cast(x, _dtype(target))


def _from_dlpack(a: Any) -> Any:
    """tf.experimental.dlpack.from_dlpack takes a DLPack capsule: what a TensorFlow user
    passes is the producer's capsule (``a.__dlpack__()``, or a capsule already)."""
    dl = _tf().experimental.dlpack
    if hasattr(a, "__dlpack__"):
        a = a.__dlpack__()
    return dl.from_dlpack(a)


def _variable(value: Any, **kwargs: Any) -> Any:
    dtype = kwargs.pop("dtype", None)
    return _tf().Variable(value, dtype=None if dtype is None else _dtype(dtype), **kwargs)


# Tensor Views page (issue 18, views-torch): TensorFlow's counterparts of the ops torch's page lists
def _tensor_view_operations() -> dict[str, Operation]:
    tf, tnp = _tf, _tnp
    return {
        "method:view_as": lambda x, other: _view(x, *other.shape),
        "method:reshape_as": lambda x, other: tf().reshape(x, other.shape),
        "method:expand_as": lambda x, other: _expand(x, *other.shape),
        "method:as_strided": absent("TensorFlow tensors have no strides: there is no as_strided; the counterparts "
                                    "are tf.strided_slice and tf.gather"),
        "method:as_strided_": absent(_NO_INPLACE),
        "method:swapaxes": lambda x, d0, d1: tnp().swapaxes(x, d0, d1),
        "method:swapdims": lambda x, d0, d1: tnp().swapaxes(x, d0, d1),
        "method:swapaxes_": absent(_NO_INPLACE),
        "method:swapdims_": absent(_NO_INPLACE),
        "method:select": _select,
        # tf.linalg.adjoint: the conjugate transpose of the last two dimensions
        "attr:H": lambda x: tf().linalg.adjoint(x),
        "attr:mH": lambda x: tf().linalg.adjoint(x),
        "method:adjoint": lambda x: tf().linalg.adjoint(x),
        "method:hsplit": lambda x, sections: tnp().hsplit(x, sections),
        "method:vsplit": lambda x, sections: tnp().vsplit(x, sections),
        "method:dsplit": lambda x, sections: tnp().dsplit(x, sections),
        "method:split_with_sizes": lambda x, sizes, dim=0: tf().split(x, list(sizes), axis=dim),
        # tf.sparse.SparseTensor: indices are (nnz, ndim) where torch's are (ndim, nnz)
        "method:to_sparse": lambda x: tf().sparse.from_dense(x),
        "method:to_dense": lambda x: tf().sparse.to_dense(x),
        "method:indices": lambda x: tf().transpose(x.indices),
        "method:values": lambda x: x.values,
        "method:coalesce": lambda x: tf().sparse.reorder(x),
        # test_view_ops.py facts (lists)
        **dict.fromkeys(("method:to_sparse_csr", "method:crow_indices", "method:col_indices"),
                        absent("TensorFlow has no CSR tensor with index accessors: its sparse tensor is "
                               "tf.sparse.SparseTensor, in COO form (indices, values)")),
        **{f"setattr:{part}": absent(f"tf.Tensor has no {part} attribute to assign: the {part} part is "
                                     f"tf.math.{part}(x), a new tensor, and tensors are immutable; the counterpart "
                                     f"is a new tensor, tf.complex(...) of the parts")
           for part in ("real", "imag")},
    }


def _select(x: Any, dim: int, index: int) -> Any:
    """torch's select(dim, index): TensorFlow has no select(); the counterpart is basic indexing,
    x[:, index, ...] with index at position dim."""
    return x[(slice(None),) * (dim % len(x.shape)) + (index, Ellipsis)]


def _keras_layer(name: str) -> Operation:
    def make(*args: Any, **kwargs: Any) -> Any:
        return getattr(_tf().keras.layers, name)(*args, **kwargs)

    make.__name__ = name
    return make


def _call_layer(layer: Any, *args: Any, **kwargs: Any) -> Any:
    if not isinstance(layer, _tf().keras.layers.Layer):
        raise TypeError(f"only layers can be called, not {type(layer).__name__}")
    return layer(*args, **kwargs)


class _WritableAlias:
    """The array interface of a read-only array with its write flag cleared: NumPy then
    makes a writable array over the same memory (holding this object, and so the export,
    alive)."""

    def __init__(self, exported: Any) -> None:
        self.exported = exported
        interface = dict(exported.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NAME_COUNTER = re.compile(r"name: [\w/]+_\d+/")


class TensorflowProbes(TensorProbes):
    """The probes for TensorFlow tensors and variables (NumPy arrays: ArrayProbes')."""

    def _is_tensor(self, obj: Any) -> bool:
        tf = _tf()
        return isinstance(obj, (tf.Tensor, tf.Variable))

    def _buffer(self, obj: Any) -> Any:
        """A writable NumPy array over the tensor's (the variable's) own buffer. The address
        is DLPack's (``np.from_dlpack(t)``: TensorFlow exports its buffer, read-only); a
        variable's ``value()`` is a tensor over the variable's buffer. NumPy takes no
        bfloat16 through DLPack: ``EagerTensor._numpy()``, an array over the same buffer
        (the public ``numpy()`` copies it), is used for that dtype."""
        if isinstance(obj, _tf().Variable):
            obj = obj.value()
        import numpy as np

        try:
            exported = np.from_dlpack(obj)
        except RuntimeError:  # "Unsupported dtype in DLTensor." (bfloat16)
            array = obj._numpy()
            if not isinstance(array, np.ndarray):
                raise TypeError(f"no NumPy array over the buffer of a 0-d {obj.dtype.name} tensor") from None
            return array
        return np.asarray(_WritableAlias(exported))

    def tensor_to_numpy(self, obj: Any) -> Any:
        tf = _tf()
        if obj.dtype == tf.bfloat16:
            obj = tf.cast(obj, tf.float32)
        return super().to_numpy(obj.numpy())

    def tensor_dtype_name(self, obj: Any) -> str:
        return str(obj.dtype.name)

    def tensor_shape_of(self, obj: Any) -> tuple[int, ...]:
        return tuple(int(d) for d in obj.shape)

    def tensor_layout(self, obj: Any) -> Layout:
        buf = self._buffer(obj)
        # a TensorFlow tensor is dense, row-major, at offset 0 of its buffer; the buffer's
        # bounds are the elements' (alloc None)
        return Layout(buf.__array_interface__["data"][0], tuple(buf.shape), tuple(buf.strides), buf.itemsize, None)

    def tensor_probe_fill(self, obj: Any, value: Any) -> None:
        self._buffer(obj)[...] = value

    def tensor_probe_restore(self, obj: Any, snapshot: Any) -> None:
        self._buffer(obj)[...] = snapshot



def _clamp(x: Any, min: Any = None, max: Any = None, **kw: Any) -> Any:  # noqa: A002 (torch's names)
    """torch's clamp(x, min=None, max=None): tf.clip_by_value(x, min, max) takes both bounds
    (it cannot convert a None), so a call with one bound is TensorFlow's one-sided counterpart,
    tf.maximum(x, min) or tf.minimum(x, max); with both (or neither) it is clip_by_value, whose
    own refusal of two None bounds is TensorFlow's, as torch refuses clamp() without a bound."""
    tf = _tf()
    if min is not None and max is None and not kw:
        return tf.maximum(x, min)
    if max is not None and min is None and not kw:
        return tf.minimum(x, max)
    return tf.clip_by_value(x, min, max, **kw)

class TensorflowAdapter(TensorflowProbes, Adapter):
    name = "tensorflow"
    module = "tensorflow"
    distribution = "tensorflow-cpu"
    install_hint = "pip install 'conformance[tensorflow]'"
    title = "TensorFlow"
    report_rank = 50
    storage_bounds = ("TensorFlow tensors have no strides or storage a case can address: as_strided, as_strided_, "
                      "set_, resize_ and resize_as_ are not applicable")
    # importing Paddle into a process that imported TensorFlow first crashes it (SIGSEGV in
    # paddle's import; measured with tensorflow-cpu 2.21.0 and paddlepaddle 3.3.1), and the
    # other order works: Paddle goes first wherever TensorFlow is imported
    imports_first = ("paddle",)
    # the capability is autograd on tensors (backward(), .grad): TensorFlow records gradients on
    # a tf.GradientTape, so the corpus's gradient steps are absent here
    autograd = False
    device_kinds = ("cpu",)
    dlpack_export = dlpack_import = True
    # tf.Tensor refuses item assignment (it has no __setitem__): the framework's refusal of a
    # mutation. A tf.Variable refuses it too ("'ResourceVariable' object does not support
    # item assignment"), but a variable is mutable (v[i].assign(...)): that is Python's
    # refusal of the syntax, classified type_error like any other object without __setitem__
    immutable = Immutability(raises=(
        r"^TypeError: '[\w.]*(EagerTensor|SymbolicTensor)' object does not support item assignment",
        # x[m] = v with a tensor or array key m: EagerTensor has no item assignment, and Python
        # converts the key with __index__ before it finds that out (NumPy's refusal of that)
        r"^TypeError: only integer scalar arrays can be converted to a scalar index",
        # an out= argument: TensorFlow's operations write into no tensor (its dispatch's message)
        r"^TypeError: Got an unexpected keyword argument 'out'",
    ))
    # a backward() step is read as tape.gradient of the steps before it, run inside a
    # tf.GradientTape that watches the inputs that require grad (conformance/run/gradients.py):
    # a leaf's gradient is observable; requires_grad, is_leaf and version counters are not
    functional_gradient = "tf.GradientTape"
    # strides: a tf.Tensor exposes none (no strides attribute or method; every tensor is a
    # dense buffer of its own), so a layout a case states is not observable on TensorFlow
    unobservable = frozenset({"version_change", "requires_grad", "is_leaf", "strides"})
    # each a message the corpus records (docs/case-format.md, "Error kinds"): a message never
    # met is classified on purpose when a case first meets it (tests/test_error_kinds.py)
    error_patterns = {
        # tf.add(int_tensor, float_tensor): no implicit promotion between tensors
        "dtype_cast": (r"cannot compute \w+ as input #\d+\(zero-based\) was expected to be a \w+ tensor but is a "
                       r"\w+ tensor",),
        "shape_mismatch": (r"Can not squeeze dim\[\d+\], expected a dimension of 1",
                           r"ConcatOp : Dimension \d+ in both shapes must be equal",
                           r"Number of ways to split should evenly divide the split dimension",
                           # tf.linalg.adjoint (.H / .mH / adjoint()) of a 1-D tensor
                           r"should be a \(batch\) matrix with rank >= 2"),
        # a Keras layer given a keyword it has no parameter for (ReLU(inplace=True))
        "type_error": (r"^ValueError: Unrecognized keyword arguments passed to \w+",
                       # TensorFlow's dispatch refusing a keyword (tf.nn.leaky_relu(x, inplace=True))
                       r"^TypeError: Got an unexpected keyword argument"),
        # NumPy's refusals, in TensorFlow's runs (np.asarray(t) is a read-only view)
        "read_only": (r"read-only",),
        # none of the kinds: x[[0, 2]] is x[0, 2] in TensorFlow (a list is one index per
        # dimension), out of range
        "other": (r"Index out of range using input dim \d+",
                  # tf.slice (the counterpart of narrow) given a negative start
                  r"Expected begin\[\d+\] in \[0, \d+\], but got -\d+",
                  # tf.where(x) of one argument is one [N, ndim] tensor of indices, not a tuple of
                  # ndim index arrays: unpacking it into ndim names iterates its N rows
                  r"^ValueError: cannot unpack \d+ values into \d+ names",
                  # a sparse tensor's accessor on a dense tensor: tf.sparse.reorder (the counterpart of
                  # coalesce) and the attributes of a tf.SparseTensor
                  r"^TypeError: Input must be a SparseTensor",
                  r"^AttributeError: '[\w.]*EagerTensor' object has no attribute '(indices|values)'"),
    }
    exception_types = frozenset({  # every exception class it defines (base.Adapter.exception_types)
        "tensorflow.lite.python.authoring.authoring.CompatibilityError",
        "tensorflow.lite.python.convert_phase.ConverterError",
        "tensorflow.python.autograph.impl.api.AutoGraphError",
        "tensorflow.python.autograph.impl.api.ConversionError", "tensorflow.python.autograph.impl.api.StagingError",
        "tensorflow.python.autograph.pyct.error_utils.MultilineMessageKeyError",
        "tensorflow.python.autograph.pyct.errors.InaccessibleSourceCodeError",
        "tensorflow.python.autograph.pyct.errors.PyCTError",
        "tensorflow.python.autograph.pyct.errors.UnsupportedLanguageElementError",
        "tensorflow.python.checkpoint.saveable_compat.CheckpointConversionError",
        "tensorflow.python.debug.cli.debugger_cli_common.CommandLineExit",
        "tensorflow.python.debug.lib.debug_data.WatchKeyDoesNotExistInDebugDumpDirError",
        "tensorflow.python.debug.lib.debug_graphs.GraphTracingReachedDestination",
        "tensorflow.python.distribute.coordinator.cluster_coordinator.ClosureAbortedError",
        "tensorflow.python.distribute.coordinator.cluster_coordinator.ClosureInputError",
        "tensorflow.python.distribute.coordinator.cluster_coordinator.PSUnavailableError",
        "tensorflow.python.distribute.mirrored_run._RequestedStop",
        "tensorflow.python.distribute.multi_process_runner.NotInitializedError",
        "tensorflow.python.distribute.multi_process_runner.SubprocessTimeoutError",
        "tensorflow.python.distribute.multi_process_runner.UnexpectedSubprocessExitError",
        "tensorflow.python.eager.core._FallbackException", "tensorflow.python.eager.core._NotOkStatusException",
        "tensorflow.python.eager.core._SymbolicException",
        "tensorflow.python.framework.c_api_util.AlreadyGarbageCollectedError",
        "tensorflow.python.framework.errors_impl.AbortedError",
        "tensorflow.python.framework.errors_impl.AlreadyExistsError",
        "tensorflow.python.framework.errors_impl.CancelledError",
        "tensorflow.python.framework.errors_impl.DataLossError",
        "tensorflow.python.framework.errors_impl.DeadlineExceededError",
        "tensorflow.python.framework.errors_impl.FailedPreconditionError",
        "tensorflow.python.framework.errors_impl.InaccessibleTensorError",
        "tensorflow.python.framework.errors_impl.InternalError",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError",
        "tensorflow.python.framework.errors_impl.NotFoundError", "tensorflow.python.framework.errors_impl.OpError",
        "tensorflow.python.framework.errors_impl.OperatorNotAllowedInGraphError",
        "tensorflow.python.framework.errors_impl.OutOfRangeError",
        "tensorflow.python.framework.errors_impl.PermissionDeniedError",
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
        "tensorflow.python.framework.errors_impl.UnauthenticatedError",
        "tensorflow.python.framework.errors_impl.UnavailableError",
        "tensorflow.python.framework.errors_impl.UnimplementedError",
        "tensorflow.python.framework.errors_impl.UnknownError", "tensorflow.python.ops.op_selector.UnliftableError",
        "tensorflow.python.ops.parallel_for.pfor.ConversionNotImplementedError",
        "tensorflow.python.saved_model.nested_structure_coder.NotEncodableError",
        "tensorflow.python.saved_model.pywrap_saved_model.fingerprinting.FileNotFoundException",
        "tensorflow.python.saved_model.pywrap_saved_model.fingerprinting.FingerprintException",
        "tensorflow.python.saved_model.pywrap_saved_model.metrics.MetricException",
        "tensorflow.python.summary.tb_summary.TBNotInstalledError",
        "tensorflow.python.summary.writer.event_file_writer.QueueClosedError",
        "tensorflow.python.trackable.data_structures._UntrackableError",
        "tensorflow.python.trackable.trackable_utils.CyclicDependencyError",
        "tensorflow.python.training.basic_session_run_hooks.NanLossDuringTrainingError",
        "tensorflow.python.util.deprecation.DeprecatedNamesAlreadySetError",
        "tensorflow.python.util.tf_export.InvalidSymbolNameError"
    })

    def load(self) -> None:
        _tf()

    def error_message(self, exc: BaseException) -> str:
        # TensorFlow's messages may carry op names numbered per process and addresses
        text = super().error_message(exc)
        return _ADDRESS.sub("0x?", text)

    def out_of_memory(self, exc: BaseException) -> bool:
        return super().out_of_memory(exc) or isinstance(exc, _tf().errors.ResourceExhaustedError)

    def device_unavailable(self, device: str) -> str | None:
        return None if device == "cpu" else "tensorflow-cpu runs on the CPU only"

    def global_states(self) -> list[GlobalState]:
        tf = _tf()
        from tensorflow.python.eager import context
        from tensorflow.python.framework import config, ops
        from tensorflow.python.framework import tensor as tensor_lib
        from tensorflow.python.ops import stateful_random_ops
        from tensorflow.python.ops.numpy_ops import np_dtypes

        ctx = context.context()

        def get_seed() -> Any:
            rng = getattr(ctx, "_rng", None)
            return ctx._seed, None if rng is None else rng.getstate()

        def set_seed(saved: Any) -> None:
            seed, rng_state = saved
            ctx._set_global_seed(seed)
            if rng_state is not None and getattr(ctx, "_rng", None) is not None:
                ctx._rng.setstate(rng_state)

        def get_generator() -> Any:
            gen = stateful_random_ops.global_generator
            return gen, None if gen is None else gen.state.numpy()

        def set_generator(saved: Any) -> None:
            gen, state = saved
            stateful_random_ops.global_generator = gen
            if gen is not None and state is not None:
                gen.state.assign(state)

        # tf.experimental.numpy.experimental_enable_numpy_behavior(): module flags, and methods
        # it adds to tf.Tensor (T, reshape, ravel, ...), which nothing public removes
        tensor_class = tensor_lib.Tensor

        def get_numpy_behavior() -> Any:
            return (ops._dtype_conversion_mode, ops._numpy_style_slicing, np_dtypes._prefer_float32,
                    np_dtypes._allow_float64, dict(vars(tensor_class)))

        def set_numpy_behavior(saved: Any) -> None:
            mode, slicing, prefer32, allow64, attrs = saved
            ops._dtype_conversion_mode = mode
            ops._numpy_style_slicing = slicing
            np_dtypes._prefer_float32 = prefer32
            np_dtypes._allow_float64 = allow64
            for key in set(vars(tensor_class)) - set(attrs):
                delattr(tensor_class, key)
            for key, value in attrs.items():
                if vars(tensor_class).get(key, _MISSING) is not value:
                    setattr(tensor_class, key, value)

        experimental = tf.config.experimental
        return super().global_states() + [
            GlobalState("tensorflow.random.seed", get_seed, set_seed, always_restore=True),
            GlobalState("tensorflow.random.global_generator", get_generator, set_generator, always_restore=True),
            GlobalState("tensorflow.numpy_behavior", get_numpy_behavior, set_numpy_behavior),
            GlobalState("tensorflow.run_functions_eagerly", tf.config.functions_run_eagerly,
                        tf.config.run_functions_eagerly),
            GlobalState("tensorflow.tensor_float_32_execution", experimental.tensor_float_32_execution_enabled,
                        experimental.enable_tensor_float_32_execution),
            # tf.config.experimental.enable_op_determinism; the getter and the way back are not
            # exported (tensorflow/python/framework/config.py)
            GlobalState("tensorflow.op_determinism", config.is_op_determinism_enabled,
                        lambda on: (config.enable_op_determinism if on else config.disable_op_determinism)()),
        ]

    def seed(self, seed: int) -> None:
        super().seed(seed)
        _tf().random.set_seed(seed)

    def __init__(self) -> None:
        self._tapes: list[Any] = []  # the tapes of the gradients being computed, innermost last
        super().__init__()

    def gradient(self, fn: Any, args: list[Any], wrt: Sequence[int], cotangent: Any = None) -> list[Any]:
        """``fn`` run inside a tf.GradientTape watching the arguments at ``wrt``, and
        tape.gradient of its result with respect to them (``output_gradients``: the
        cotangent); None where the tape says the loss does not depend on one."""
        tf = _tf()
        sources = [args[i] for i in wrt]
        with tf.GradientTape() as tape:
            for source in sources:
                tape.watch(source)
            self._tapes.append(tape)
            try:
                loss = fn(*args)
            finally:
                self._tapes.pop()
        return list(tape.gradient(loss, sources, output_gradients=cotangent))

    def _no_grad(self) -> Any:
        """``no_grad:``: the tape a backward() step's function runs in stops recording
        (``tape.stop_recording()``: what runs inside is not differentiated); outside a gradient
        there is no tape, and the block changes nothing."""
        return self._tapes[-1].stop_recording() if self._tapes else contextlib.nullcontext()

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        return _tf().constant(array, dtype=_dtype(spec.dtype))

    def operations(self) -> dict[str, Operation]:
        tf, tnp = _tf, _tnp
        ops: dict[str, Operation] = {
            # views and reshapes (TensorFlow has no strided views: what shares memory is what
            # hands its output the input's buffer: reshape, expand_dims, squeeze, identity...)
            "method:view": _view,
            "method:reshape": lambda x, *s, **kw: tf().reshape(x, _shape(s), **kw),
            "method:transpose": lambda x, d0, d1: tf().transpose(x, _swap_perm(x, d0, d1)),
            "method:permute": lambda x, *d: tf().transpose(x, _shape(d)),
            "method:t": _t,
            "method:flatten": _flatten,
            "method:ravel": lambda x: tnp().ravel(x),
            "method:squeeze": lambda x, dim=None: tf().squeeze(x, axis=dim),
            "method:unsqueeze": lambda x, dim: tf().expand_dims(x, dim),
            "method:expand": _expand,
            "method:broadcast_to": lambda x, *s: tf().broadcast_to(x, _shape(s)),
            "method:diagonal": lambda x, offset=0, dim1=0, dim2=1: tnp().diagonal(x, offset, dim1, dim2),
            "method:split": _split,
            # tf.split(x, n): n equal pieces, refused where they cannot be equal (torch's chunk
            # makes pieces of ceil(size / n))
            "method:chunk": lambda x, n, dim=0: tf().split(x, n, axis=dim),
            "method:tensor_split": absent("TensorFlow has no tensor_split / array_split; tf.split takes a number "
                                          "of equal pieces or the pieces' sizes"),
            "method:unbind": lambda x, dim=0: tf().unstack(x, axis=dim),
            "method:movedim": lambda x, source, destination: tnp().moveaxis(x, source, destination),
            "method:unfold": _unfold,
            "method:unflatten": _unflatten,
            "method:narrow": _narrow,
            "method:flip": lambda x, dims: tf().reverse(x, list(dims) if isinstance(dims, (list, tuple)) else [dims]),
            "method:conj": lambda x: tf().math.conj(x),
            "fn:view_as_real": absent("TensorFlow has no view_as_real; tf.math.real / tf.math.imag give the parts "
                                      "as new tensors"),
            "fn:view_as_complex": absent("TensorFlow has no view_as_complex; tf.complex(re, im) makes a new tensor"),
            "attr:T": lambda x: tf().transpose(x),
            "attr:mT": lambda x: tf().linalg.matrix_transpose(x),
            "attr:real": lambda x: tf().math.real(x),
            "attr:imag": lambda x: tf().math.imag(x),
            "attr:shape": lambda x: x.shape,
            # copies and conversions
            "method:clone": lambda x: tf().identity(x),
            "method:contiguous": absent("TensorFlow tensors are always dense and row-major: there is no "
                                        "contiguous()"),
            "method:detach": lambda x: tf().stop_gradient(x),
            "method:to": _to,
            "method:astype": lambda x, dtype, **kw: tf().cast(x, _dtype(dtype), **kw),  # cast takes no copy=
            "method:cpu": absent("TensorFlow tensors have no cpu(); placement is a tf.device('CPU') scope"),
            "method:numpy": lambda x: x.numpy(),
            "method:sum": lambda x, dim=None: tf().reduce_sum(x, axis=dim),
            "method:index_select": lambda x, dim, index: tf().gather(x, index, axis=dim),
            "method:masked_select": lambda x, mask: tf().boolean_mask(x, mask),
            "method:gather": lambda x, dim, index: tnp().take_along_axis(x, index, axis=dim),
            "method:take": lambda x, *args, **kwargs: tnp().take(x, *args, **kwargs),  # axis= too
            "fn:take_along_dim": lambda x, index, dim=None, **kw: tnp().take_along_axis(x, index, axis=dim, **kw),
            # torch's nonzero(): an (n, ndim) tensor of indices, tf.where(x) with one argument
            "method:nonzero": lambda x: tf().where(x),
            "method:item": lambda x: x.numpy().item(),
            "method:tolist": lambda x: x.numpy().tolist(),
            "method:scale": absent("TensorFlow has no scale(); the counterpart is tf.multiply"),
            # functions: TensorFlow's own, with what the case wrote (an out= reaches them and is
            # refused: TypeError, unexpected keyword)
            "fn:add": lambda x, y, **kw: tf().add(x, y, **kw),
            "fn:mul": lambda x, y, **kw: tf().multiply(x, y, **kw),
            "fn:exp": lambda x, **kw: tf().exp(x, **kw),
            "fn:abs": lambda x, **kw: tf().abs(x, **kw),
            "fn:sqrt": lambda x, **kw: tf().sqrt(x, **kw),
            "fn:sigmoid": lambda x, **kw: tf().sigmoid(x, **kw),
            "fn:clamp": _clamp,
            "fn:where": lambda c, *xy, **kw: tf().where(c, *xy, **kw),
            "fn:cat": lambda xs, dim=0, **kw: tf().concat(xs, axis=dim, **kw),
            "fn:stack": lambda xs, dim=0, **kw: tf().stack(xs, axis=dim, **kw),
            # without a dtype, TensorFlow's default: float32
            "fn:zeros": lambda *s, dtype=None, **kw: tf().zeros(_shape(s), dtype=tf().float32 if dtype is None
                                                           else _dtype(dtype), **kw),
            "fn:ones": lambda *s, dtype=None, **kw: tf().ones(_shape(s), dtype=tf().float32 if dtype is None
                                                         else _dtype(dtype), **kw),
            "fn:empty": lambda *s, dtype=None, **kw: tnp().empty(_shape(s), dtype=tf().float32 if dtype is None
                                                                 else _dtype(dtype), **kw),
            "fn:tensor": lambda a, dtype=None: tf().constant(a, dtype=None if dtype is None else _dtype(dtype)),
            "fn:as_tensor": lambda a, dtype=None: tf().convert_to_tensor(
                a, dtype=None if dtype is None else _dtype(dtype)),
            "fn:from_numpy": absent("TensorFlow has no from_numpy (a tensor over the array's memory); "
                                    "tf.convert_to_tensor copies the array"),
            "fn:from_dlpack": _from_dlpack,
            # activations: tf.nn's own, with what the case wrote (inplace= reaches them and is refused)
            "fn:relu": lambda x, **kw: tf().nn.relu(x, **kw),
            "fn:leaky_relu": lambda x, negative_slope=0.2, **kw: tf().nn.leaky_relu(x, negative_slope, **kw),
            "fn:elu": lambda x, *args, **kw: tf().nn.elu(x, *args, **kw),
            # TensorFlow has no hardtanh: the counterpart is clip_by_value
            "fn:hardtanh": lambda x, min_val=-1.0, max_val=1.0, **kw: tf().clip_by_value(x, min_val, max_val, **kw),
            "fn:dropout": lambda x, p=0.5, **kw: tf().nn.dropout(x, rate=p, **kw),
            "fn:ReLU": _keras_layer("ReLU"),
            "fn:LeakyReLU": _keras_layer("LeakyReLU"),
            "fn:ELU": _keras_layer("ELU"),
            "fn:Dropout": _keras_layer("Dropout"),
            "fn:Hardtanh": absent("TensorFlow / Keras have no Hardtanh layer; the counterpart is tf.clip_by_value"),
            "method:eval": absent(_NO_TRAIN_MODE),
            "method:train": absent(_NO_TRAIN_MODE),
            "call": _call_layer,
            # TensorFlow's own operations, for the cases written for it
            "fn:Variable": _variable,
            "fn:constant": lambda a, dtype=None: tf().constant(a, dtype=None if dtype is None else _dtype(dtype)),
            "fn:convert_to_tensor": lambda a, dtype=None: tf().convert_to_tensor(
                a, dtype=None if dtype is None else _dtype(dtype)),
            "fn:identity": lambda x: tf().identity(x),
            "fn:stop_gradient": lambda x: tf().stop_gradient(x),
            "fn:reshape": lambda x, shape: tf().reshape(x, shape),
            "fn:cast": lambda x, dtype: tf().cast(x, _dtype(dtype)),
            "fn:expand_dims": lambda x, axis: tf().expand_dims(x, axis),
            "fn:to_dlpack": lambda x: tf().experimental.dlpack.to_dlpack(x),
            "method:assign": lambda v, value, **kw: v.assign(value, **kw),
            "method:assign_add": lambda v, value, **kw: v.assign_add(value, **kw),
            "method:assign_sub": lambda v, value, **kw: v.assign_sub(value, **kw),
            "method:scatter_nd_update": lambda v, indices, updates: v.scatter_nd_update(indices, updates),
            "method:read_value": lambda v: v.read_value(),
            "method:value": lambda v: v.value(),
        }
        ops.update(_np_view_operations())  # issue 18, NumPy's documented views (views-np-paddle)
        ops.update(_tensor_view_operations())
        ops.update(NUMPY_CONVERSIONS)
        for name in ("add_", "sub_", "mul_", "div_", "exp_", "zero_", "fill_", "normal_", "uniform_", "clamp_",
                     "relu_", "sigmoid_", "abs_", "neg_", "sqrt_", "copy_", "scale_", "t_", "transpose_",
                     "resize_", "unsqueeze_", "squeeze_", "masked_fill_"):
            ops["method:" + name] = absent(_NO_INPLACE)
        for key in ("fn:abs_", "fn:relu_", "fn:leaky_relu_", "fn:elu_", "fn:hardtanh_"):
            ops[key] = absent(_NO_INPLACE)
        # issue 18, the structural in-place methods
        for name in _STRUCTURAL_INPLACE:
            ops["method:" + name] = absent(_NO_INPLACE)
        for key in ("method:backward", "method:requires_grad_", "method:detach_", "attr:grad", "attr:is_leaf",
                    "attr:requires_grad", "setattr:requires_grad", "attr:data", "setattr:data",
                    "block:enable_grad", "block:inference_mode"):
            ops[key] = absent(_TAPE)
        ops["block:no_grad"] = self._no_grad
        # torch.autograd.grad / paddle.grad as a step (issue 37): read as tape.gradient of the steps
        # before it, as backward() is (conformance/run/gradients.py); a tensor has no graph to call
        ops["fn:autograd_grad"] = absent(_TAPE)
        ops.update(_issue38_operations())
        return ops


_MISSING = object()


def _np_view_operations() -> dict[str, Operation]:
    """Issue 18 (views-np-paddle): tf.experimental.numpy's counterparts of NumPy's documented
    views (TensorFlow has no strided views); meshgrid and einsum are TensorFlow's own."""
    tf = _tf
    return {
        **numpy_style_views(_tnp),
        "method:rollaxis": absent("TensorFlow has no rollaxis (tf.experimental.numpy has none); the counterpart "
                                  "is tf.experimental.numpy.moveaxis"),
        "fn:meshgrid": lambda *xs, indexing="ij", **kw: tuple(tf().meshgrid(*xs, indexing=indexing, **kw)),
        "fn:einsum": lambda equation, *xs: tf().einsum(equation, *xs),
    }


def _issue38_operations() -> dict[str, Operation]:
    """Issue 38, operations people ask about, as tf.experimental.numpy spells them (each entry
    says what it calls)."""
    tf, tnp = _tf, _tnp
    return {
        # torch's repeat tiles: tnp.tile(x, reps) (tf.tile's multiples); tnp.repeat is np.repeat
        "method:repeat": lambda x, *repeats: tnp().tile(x, _shape(repeats)),
        # tf.where(mask, value, x): a new tensor (tf.Tensor is immutable)
        "method:masked_fill": lambda x, mask, value: tf().where(mask, value, x),
        # tnp.tril(m, k): torch's diagonal= is its k
        "fn:tril": lambda m, diagonal=0, **kwargs: tnp().tril(m, diagonal, **kwargs),
        "fn:triu": lambda m, diagonal=0, **kwargs: tnp().triu(m, diagonal, **kwargs),
        "fn:slice_scatter": absent("TensorFlow has no slice_scatter; the counterpart is "
                                   "tf.tensor_scatter_nd_update(x, indices of the slice, src), a new tensor"),
        # tnp.arange(start, stop, step, dtype=<the tf.DType of the dtype name>)
        "fn:arange": lambda *args, dtype=None, **kwargs: tnp().arange(
            *args, dtype=None if dtype is None else _dtype(dtype), **kwargs),
    }
