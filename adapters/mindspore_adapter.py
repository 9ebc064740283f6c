"""MindSpore adapter (issue 17): MindSpore's CPU build, in PyNative (eager) mode.

MindSpore 2.x has most of PyTorch's tensor method names (``add_``, ``view``, ``transpose``,
``copy_``, ...) and a PyTorch-like function namespace, ``mindspore.mint``; where it has the
case's operation the table calls it with what the case wrote. Autograd is functional
(``mindspore.grad`` / ``mindspore.value_and_grad``): tensors have no ``backward()``,
``.grad``, ``requires_grad`` or ``is_leaf``, so those steps are not applicable and those
properties are not observable. MindSpore tensors expose their memory like torch's
(``data_ptr()``, ``stride()``, ``untyped_storage()``), which the metadata probe reads; the
behaviour probe writes through a NumPy array over the tensor's own elements (see
:meth:`MindsporeProbes.probe_fill`).

Importing this module imports no MindSpore. :meth:`MindsporeAdapter.load` refuses, with the
reason, a process that imported Paddle first: Paddle's bundled oneDNN then shadows
MindSpore's and ``import mindspore`` fails with an undefined symbol (NOTES of issue 17).
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Any, Sequence

from conformance.adapters.base import (
    NUMPY_CONVERSIONS,
    Adapter,
    GlobalState,
    Layout,
    Operation,
    TensorProbes,
    absent,
    attribute,
    attribute_setter,
    dtype_named,
    is_device_name,
    of_leaves,
    passthrough,
)
from conformance.adapters.extent import DTYPE_SIZES, GROWS_STORAGE, check, contiguous_strides, integer
from conformance.model import DTYPES

# Tensor methods MindSpore 2.10 has under the case's name and meaning, called as written
METHODS = (
    # in place (on the CPU build several have no kernel: the call's RuntimeError is recorded)
    "add_", "sub_", "mul_", "div_", "exp_", "zero_", "fill_", "normal_", "uniform_", "clamp_",
    "sigmoid_", "copy_", "masked_fill_", "requires_grad_",
    # views, copies, reductions, conversions
    "reshape", "permute", "t", "ravel", "unsqueeze", "diagonal", "split", "chunk", "clone",
    "contiguous", "numpy", "sum", "index_select", "masked_select", "gather", "item", "tolist", "movedim",
    "narrow", "unbind", "tensor_split", "conj", "take", "nonzero", "copy", "squeeze", "flatten",
    "transpose",
)
ATTRIBUTES = ("T", "mT", "shape", "data")
# issue 18, the in-place surface: the structural in-place methods MindSpore 2.10 has under
# torch's name, meaning and parameter order (its docs give torch's signatures), called as
# written; on the CPU build most have no kernel, and the call's RuntimeError is recorded
INPLACE_STRUCTURAL = (
    "index_add_", "index_copy_", "index_fill_", "index_put_", "scatter_", "scatter_add_", "masked_scatter_",
    "put_", "fill_diagonal_", "bernoulli_", "exponential_", "random_", "set_", "addmm_",
)
# (set_ is bounded by the source's storage first: _set_bound)

# in place, elementwise (issue 18, the in-place surface): MindSpore's own methods of the
# same name, passed through, and torch's documented aliases as MindSpore's method of that
# meaning (torch.divide / true_divide are div, multiply is mul, subtract is sub, clip is clamp)
INPLACE_ELEMENTWISE = ("erfinv_", "floor_", "floor_divide_", "log_", "remainder_", "sign_", "tanh_")
INPLACE_ELEMENTWISE_ALIASES = {"divide_": "div_", "true_divide_": "div_", "multiply_": "mul_", "subtract_": "sub_",
                               "clip_": "clamp_"}

_NO_TENSOR_AUTOGRAD = ("MindSpore has no tensor-level autograd (no backward(), .grad, requires_grad, is_leaf); "
                       "gradients are functional: mindspore.grad / mindspore.value_and_grad")
_NO_DLPACK_PROTOCOL = ("MindSpore tensors have no __dlpack__: its DLPack is capsule-based (mindspore.to_dlpack(x) "
                       "gives a capsule, mindspore.from_dlpack takes one)")
_PADDLE_FIRST = ("MindSpore cannot be imported in a process that imported Paddle first: Paddle's bundled oneDNN "
                 "shadows MindSpore's and 'import mindspore' fails with ImportError: ...libmindspore_ops_cpu.so: "
                 "undefined symbol: dnnl_threadpool_interop_stream_create (import mindspore before paddle, or in "
                 "its own process)")

# the C++ call stack MindSpore appends to its messages, and per-process noise in them
_CPP_STACK = re.compile(r"\s*-{10,}.*", re.S)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def _dtype_or_none(name: Any) -> Any:
    return None if name is None else _dtype(name)


def _ms() -> Any:
    return _load_mindspore()


@functools.cache
def _load_mindspore() -> Any:
    if "mindspore" not in sys.modules and "paddle" in sys.modules:
        raise ImportError(_PADDLE_FIRST)
    import mindspore

    # Errors of a kernel are raised by the call that launched it, not by a later step:
    # PyNative launches asynchronously by default, and then a step's failure (a kernel the
    # CPU build lacks) surfaces at the next step or probe (mindspore.runtime.launch_blocking)
    mindspore.runtime.launch_blocking()
    # MindSpore 2.10's C++ is built against NumPy 1.x's C API: with NumPy 2 its first
    # argument parse in a process fails once ("Numpy init failed": SystemError from the first
    # operation called, whatever it is); the process's first call absorbs it here, so that no
    # case's first step gets it
    import numpy

    try:
        mindspore.Tensor(numpy.zeros(1, numpy.float32)) + 1.0
    except SystemError:
        pass
    return mindspore


@functools.cache
def _dtypes() -> dict[str, Any]:
    ms = _ms()
    return {name: getattr(ms, name) for name in DTYPES}


def _dtype(name: Any) -> Any:
    return _dtypes()[dtype_named(name)]


def _shape(args: tuple) -> tuple:
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)


def _view(x: Any, *args: Any) -> Any:
    """view(*shape) or view(dtype): a dtype name is the MindSpore dtype of that name."""
    if len(args) == 1 and isinstance(args[0], str):
        return x.view(_dtype(args[0]))
    return x.view(*args)


def _to(x: Any, target: str) -> Any:
    """to(device) as written; to(dtype) with the mindspore dtype of the name (MindSpore's
    Tensor.to reads a string as a device: ``x.to('float64')`` is refused)."""
    if is_device_name(target):
        return x.to(target)
    return x.to(_dtype(target))


# Tensor Views page (issue 18, views-torch): MindSpore's counterparts of the ops torch's page lists
def _tensor_view_operations() -> dict[str, Operation]:
    ops: dict[str, Operation] = {"method:" + m: passthrough(m) for m in (
        "view_as", "reshape_as", "expand_as", "swapaxes", "swapdims", "select", "adjoint", "hsplit", "vsplit",
        "dsplit")}
    ops.update({"attr:H": attribute("H"), "attr:mH": attribute("mH")})
    ops["method:split_with_sizes"] = lambda x, sizes, dim=0: x.split(list(sizes), dim)
    for name in ("as_strided_", "swapaxes_", "swapdims_"):
        ops["method:" + name] = absent(f"MindSpore tensors have no {name}() method")
    no_sparse = absent("MindSpore tensors have no to_sparse(); MindSpore's sparse tensors are mindspore.COOTensor "
                       "(Tensor.to_coo(), its indices and values), which this adapter does not map")
    for name in ("to_sparse", "indices", "values", "coalesce"):
        ops["method:" + name] = no_sparse
    # a sparse tensor's to_dense() (mindspore.COOTensor's and CSRTensor's own method)
    ops["method:to_dense"] = passthrough("to_dense")
    # test_view_ops.py facts (lists): torch's CSR tensor is MindSpore's CSRTensor (Tensor.to_csr()),
    # its crow_indices() / col_indices() the CSRTensor's indptr / indices properties
    ops["method:to_sparse_csr"] = lambda x: x.to_csr()
    ops["method:crow_indices"] = lambda s: s.indptr
    ops["method:col_indices"] = lambda s: s.indices
    # real and imag are methods of mindspore.Tensor (attr:real calls x.real()): assigning x.real
    # binds a Python attribute of the object, as written
    ops["setattr:real"] = attribute_setter("real")
    ops["setattr:imag"] = attribute_setter("imag")
    ops["method:as_strided"] = absent("MindSpore tensors have no as_strided() method")
    return ops


def _cell(cell: Any, what: str = "switched between train and eval mode") -> Any:
    if not isinstance(cell, _ms().nn.Cell):
        raise TypeError(f"only layers can be {what}, not {type(cell).__name__}")
    return cell


def _call_cell(cell: Any, *args: Any, **kwargs: Any) -> Any:
    return _cell(cell, "called")(*args, **kwargs)


class MindsporeProbes(TensorProbes):
    """The probes for MindSpore tensors (Parameter included; NumPy arrays: ArrayProbes')."""

    def _is_tensor(self, obj: Any) -> bool:
        return "mindspore" in sys.modules and isinstance(obj, _ms().Tensor)

    def tensor_to_numpy(self, obj: Any) -> Any:
        ms = _ms()
        if obj.dtype == ms.bfloat16:  # NumPy has no bfloat16
            obj = obj.astype(ms.float32)
        return super().to_numpy(obj.asnumpy())

    def tensor_dtype_name(self, obj: Any) -> str:
        return str(obj.dtype).lower()  # Float32, BFloat16, UInt8, Bool, Complex64

    def shape_of(self, obj: Any) -> tuple[int, ...]:
        return tuple(int(d) for d in obj.shape)

    def tensor_layout(self, obj: Any) -> Layout:
        size = int(obj.itemsize)
        storage = obj.untyped_storage()
        start = int(storage.data_ptr())
        # data_ptr() includes the view's storage_offset(); stride() is in elements
        return Layout(int(obj.data_ptr()), tuple(int(d) for d in obj.shape), tuple(int(s) * size for s in obj.stride()),
                      size, (start, start + int(storage.nbytes())))

    def tensor_strides_of(self, obj: Any) -> tuple[int, ...] | None:
        # stride() is the layout, in elements ([1, 3] for the transpose of a 2x3 tensor); the
        # strides property is not: NumPy-style bytes of a contiguous tensor of the same shape
        # ((8, 4) for that transpose; measured on MindSpore 2.10.0)
        return tuple(int(s) for s in obj.stride())

    def tensor_version_of(self, obj: Any) -> int | None:
        return int(obj._version)

    def _elements(self, obj: Any) -> Any:
        """A writable NumPy array over the tensor's own elements (its data pointer and byte
        strides, inside its storage): the behaviour probe's write path. MindSpore's own
        writes cannot serve: on the CPU build fill_ has no kernel, and copy_ and item
        assignment into a non-contiguous view do not reach the memory they view (the
        corpus records both)."""
        import ctypes

        import numpy as np

        lay = self.layout(obj)
        low, high = lay.element_bounds()
        start, end = lay.alloc
        if not (start <= low and high <= end):
            raise RuntimeError(f"elements [{low:#x}, {high:#x}) outside the storage [{start:#x}, {end:#x})")
        np_dtype = np.uint16 if obj.dtype == _ms().bfloat16 else np.dtype(self.dtype_name(obj))
        raw = (ctypes.c_uint8 * (end - start)).from_address(start)
        return np.ndarray(lay.shape, dtype=np_dtype, buffer=raw, offset=lay.data_ptr - start, strides=lay.strides)

    def _write(self, obj: Any, values: Any) -> None:
        import numpy as np

        ms = _ms()
        ms.runtime.synchronize()
        target = self._elements(obj)
        values = np.asarray(values)
        if obj.dtype == ms.bfloat16:  # the upper half of a float32 is its bfloat16
            values = (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)
        target[...] = values.astype(target.dtype)

    def tensor_probe_fill(self, obj: Any, value: Any) -> None:
        self._write(obj, value)

    def tensor_probe_restore(self, obj: Any, snapshot: Any) -> None:
        self._write(obj, snapshot)


class MindsporeAdapter(MindsporeProbes, Adapter):
    name = "mindspore"
    module = "mindspore"
    distribution = "mindspore"
    install_hint = "pip install 'conformance[mindspore]'"
    title = "MindSpore"
    report_rank = 60
    storage_bounds = ("set_ is checked against the source's storage (untyped_storage().nbytes()) before "
                      "MindSpore is called, which would grow it; MindSpore tensors have no as_strided, as_strided_, "
                      "resize_ or resize_as_ (not applicable)")
    # issue 18: the reductions the structural in-place methods take by name (scatter_'s reduce=,
    # scatter_reduce_'s and index_reduce_'s reduce)
    case_strings = frozenset({"sum", "prod", "mean", "amax", "amin", "add", "multiply"})
    # 'import mindspore' fails in a process that imported Paddle first (_PADDLE_FIRST): its
    # items run in a sandbox child of their own; and it has no DLPack import, so no other
    # framework's run imports it
    own_process = True
    # tensor-level autograd is what the suite's autograd cases exercise (backward(), .grad);
    # MindSpore's is functional (mindspore.grad), so: none, and its properties unobservable
    autograd = False
    # a backward() step is read as mindspore.grad (mindspore.vjp with backward(g)) of the steps
    # before it, as a function of the inputs that require grad (conformance/run/gradients.py):
    # a leaf's gradient is observable; requires_grad and is_leaf are no notion of its tensors
    functional_gradient = "mindspore.grad / mindspore.vjp"
    unobservable = frozenset({"requires_grad", "is_leaf"})
    # capsule-based DLPack only (no __dlpack__ on its tensors; from_dlpack takes a capsule):
    # neither direction of the protocol the suite's fn:<name>_from_dlpack calls
    dlpack_export = dlpack_import = False
    exception_types = frozenset({  # every exception class it defines (base.Adapter.exception_types)
        "mindspore.common.recompute._StopRecomputationError", "mindspore.graph._utils.pijit_context.Unsupported",
        *(f"mindspore.mindrecord.common.exceptions.{name}" for name in (
            "DbConnectionError", "MRMAddIndexError", "MRMAddSchemaError", "MRMBuildSchemaError", "MRMCloseError",
            "MRMCommitError", "MRMDefineBlobError", "MRMDefineCategoryError", "MRMDefineIndexError",
            "MRMFetchCandidateFieldsError", "MRMFetchDataError", "MRMFinishError", "MRMGenerateIndexError",
            "MRMGetMetaError", "MRMIndexGeneratorError", "MRMInitSegmentError", "MRMInvalidHeaderSizeError",
            "MRMInvalidPageSizeError", "MRMInvalidSchemaError", "MRMLaunchError", "MRMOpenError",
            "MRMOpenForAppendError", "MRMReadCategoryInfoError", "MRMSetHeaderError", "MRMUnsupportedSchemaError",
            "MRMValidateDataError", "MRMWriteDatasetError", "MindRecordException", "ParamMissError",
            "ParamTypeError", "ParamValueError", "PathNotExistsError", "UnknownError")),
        *(f"mindspore.profiler.common.exceptions.exceptions.{name}" for name in (
            "JobIdMismatchException", "ProfilerAnalyserNotExistException", "ProfilerColumnNotExistException",
            "ProfilerColumnNotSupportSortException", "ProfilerDeviceIdException",
            "ProfilerDeviceIdMismatchException", "ProfilerDirNotFoundException", "ProfilerException",
            "ProfilerFileNotFoundException", "ProfilerFilterConditionException",
            "ProfilerGroupConditionException", "ProfilerIOException", "ProfilerOpTypeException",
            "ProfilerParamTypeErrorException", "ProfilerParamValueErrorException", "ProfilerPathErrorException",
            "ProfilerPipelineOpNotExistException", "ProfilerRawFileException", "ProfilerSortConditionException",
            "StepNumNotSupportedException")),
        "mindspore.train.serialization._CheckpointProtobufSizeError",
    })
    error_patterns = {
        "shape_mismatch": (r"shapes of tensors must match except in given concat axis",
                           # view(dtype) across a last dimension it does not divide; hsplit of 1-D;
                           # .H of other than a matrix
                           r"last dimension must be divisible by \d+",
                           r"split expect .x. is a Tensor with at least \d+ dimension",
                           r"For tensor\.H, only 2-D Tensor is supported",
                           # .mH / adjoint() of a tensor with fewer dimensions than the axes they swap
                           r"The 'axis' must be in the range of \[-\d+, \d+\), but got -?\d+"),
        "not_contiguous_view": (r"strides\[-1\] must be 1 to view",
                                r"storage offset must be divisible by \d+",
                                r"scalar tensor \(shape: \(\)\) cannot be viewed"),
        "unsupported_dtype": (r"The Numpy bfloat16 data type is not supported",),
        # mindspore.grad's check of a tensor it saved (a backward() step read functionally)
        "modified_saved_tensor": (r"needed for gradient computation has been modified by an inplace operation",),
        # a keyword or an argument's Python type the operation does not take: mint.add(x, y,
        # out=z) ("Failed calling add with ... out=Tensor"), a complex Python scalar where a
        # tensor index value is read
        "type_error": (r"^TypeError: Failed calling \w+ with",
                       r"Unsupported Python object type received",
                       # from_dlpack given an object with __dlpack__ where it takes a capsule only
                       r"from_dlpack received an invalid capsule"),
        # x[1:] = x[:-1]: the bounds-checking library's memcpy_s refuses the overlap with
        # EOVERLAP_AND_RESET (54 | 128 = 182), after zeroing the destination
        "overlapping_write": (r"The memcpy_s error, errorno\(182\)",),
        # recorded by the corpus and none of the kinds: an operation the CPU build has no
        # kernel for at all (every dtype), a kernel that fails to initialise, a slice
        # assignment with a negative step
        "other": (r"The kernel \w+ unregistered", r"KernelMod Init Failed", r"indices out of range",
                  # issue 18: the CPU build's other refusals of in-place methods (random fills, put_,
                  # fill_diagonal_): no kernel made, no dispatch branch, no CPU implementation
                  r"Create kernelmod for op \w+ failed", r"There is no branch to go function \w+",
                  r"should not come here for \w+ method", r"is not supported on this device",
                  r"^RuntimeError: Not implement exception",
                  # Tensor.narrow given a negative start
                  r"The input value must be in range of \[\d+, \d+\), but got -\d+",
                  # a sparse tensor's accessor (indices(), crow_indices()) on a dense Tensor
                  r"^AttributeError: 'Tensor' object has no attribute '(indices|indptr|values)'"),
    }

    def load(self) -> None:
        _ms()

    def error_message(self, exc: BaseException) -> str:
        text = _CPP_STACK.sub("", super().error_message(exc))
        return _ADDRESS.sub("0x…", text).strip()

    def global_states(self) -> list[GlobalState]:
        ms = _ms()
        return super().global_states() + [
            # PyNative (eager) mode is where the cases run; a case could switch to graph mode
            GlobalState("mindspore.mode", lambda: ms.get_context("mode"), lambda v: ms.set_context(mode=v)),
            GlobalState("mindspore.seed", ms.get_seed, ms.set_seed),
            GlobalState("mindspore.random", ms.get_rng_state, ms.set_rng_state, always_restore=True),
        ]

    def seed(self, seed: int) -> None:
        super().seed(seed)
        _ms().manual_seed(seed)

    def gradient(self, fn: Any, args: list[Any], wrt: Sequence[int], cotangent: Any = None) -> list[Any]:
        """mindspore.grad of ``fn`` with respect to the arguments at ``wrt`` (mindspore.vjp
        with a cotangent), the others held at their values."""
        ms = _ms()
        loss, leaves = of_leaves(fn, args, wrt)
        if cotangent is None:
            grads = ms.grad(loss, grad_position=tuple(range(len(leaves))))(*leaves)
        else:
            _, vjp = ms.vjp(loss, *leaves)
            grads = vjp(cotangent)
        return list(grads) if isinstance(grads, (tuple, list)) else [grads]

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        # mindspore.tensor copies the array (the usual way a tensor is made)
        return _ms().tensor(array, dtype=_dtype(spec.dtype))

    def operations(self) -> dict[str, Operation]:
        ms = _ms
        F = lambda: _ms().mint.nn.functional  # noqa: E731
        ops: dict[str, Operation] = {"method:" + m: passthrough(m) for m in METHODS}
        # issue 18, in place: elementwise methods, aliases, clamp_min_ / clamp_max_ as clamp_ with one bound
        ops.update({"method:" + m: passthrough(m) for m in INPLACE_ELEMENTWISE})
        ops.update({"method:" + t: passthrough(m) for t, m in INPLACE_ELEMENTWISE_ALIASES.items()})
        ops["method:clamp_min_"] = lambda x, min: x.clamp_(min=min)
        ops["method:clamp_max_"] = lambda x, max: x.clamp_(max=max)
        ops.update({"attr:" + a: attribute(a) for a in ATTRIBUTES})
        ops.update({
            "method:view": _view,
            "method:to": _to,
            # MindSpore's own: the host array of a tensor, assignment into a tensor / Parameter
            "method:asnumpy": passthrough("asnumpy"),
            "method:assign_value": passthrough("assign_value"),
            "method:set_data": passthrough("set_data"),
            "fn:Parameter": lambda data, **kw: ms().Parameter(data, **kw),
            "method:astype": lambda x, dtype, **kw: x.astype(_dtype(dtype), **kw),
            "method:expand": lambda x, *s: x.expand(*s),
            "method:broadcast_to": lambda x, *s: x.broadcast_to(_shape(s)),
            "method:unfold": absent("MindSpore's Tensor.unfold is im2col (mindspore.ops.unfold over 4-D input), not "
                                    "torch's sliding windows along one dimension"),
            "method:unflatten": absent("MindSpore tensors have no unflatten(); the counterpart is reshape()"),
            "method:detach": lambda x: ms().ops.stop_gradient(x),
            "method:cpu": absent("MindSpore tensors have no cpu(); the counterpart is to('cpu') / move_to('CPU')"),
            "method:scale": absent("MindSpore tensors have no scale(); the counterpart is mul()"),
            "method:relu_": absent("MindSpore tensors have no relu_() method; the counterpart is "
                                   "mindspore.mint.nn.functional.relu_(x)"),
            "attr:real": lambda x: x.real(),   # methods in MindSpore, as in Paddle
            "attr:imag": lambda x: x.imag(),
            "fn:add": lambda x, y, **kw: ms().mint.add(x, y, **kw),
            "fn:mul": lambda x, y, **kw: ms().mint.mul(x, y, **kw),
            "fn:exp": lambda x, **kw: ms().mint.exp(x, **kw),
            "fn:abs": lambda x, **kw: ms().mint.abs(x, **kw),
            "fn:sigmoid": lambda x, **kw: ms().mint.sigmoid(x, **kw),
            "fn:sqrt": lambda x, **kw: ms().mint.sqrt(x, **kw),
            "fn:clamp": lambda x, min=None, max=None, **kw: ms().mint.clamp(x, min, max, **kw),
            "fn:where": lambda c, *xy, **kw: ms().mint.where(c, *xy, **kw),
            "fn:cat": lambda xs, dim=0, **kw: ms().mint.cat(xs, dim, **kw),
            "fn:stack": lambda xs, dim=0, **kw: ms().mint.stack(xs, dim, **kw),
            "fn:zeros": lambda *s, dtype=None, **kw: ms().mint.zeros(_shape(s), dtype=_dtype_or_none(dtype), **kw),
            "fn:ones": lambda *s, dtype=None, **kw: ms().mint.ones(_shape(s), dtype=_dtype_or_none(dtype), **kw),
            "fn:empty": lambda *s, dtype=None, **kw: ms().mint.empty(_shape(s), dtype=_dtype_or_none(dtype), **kw),
            "fn:tensor": lambda a, dtype=None: ms().tensor(a, dtype=None if dtype is None else _dtype(dtype)),
            "fn:from_numpy": lambda a: ms().from_numpy(a),
            # as written: MindSpore's from_dlpack takes a DLPack capsule, not an array
            "fn:from_dlpack": lambda a: ms().from_dlpack(a),
            "fn:view_as_real": lambda x: ms().ops.view_as_real(x),
            "fn:view_as_complex": absent("MindSpore has no view_as_complex (mindspore.ops.Complex(real, imag) "
                                         "builds a new tensor)"),
            "fn:take_along_dim": absent("MindSpore has no take_along_dim; the counterpart is "
                                        "mindspore.ops.gather_elements(x, dim, index)"),
            "fn:as_tensor": absent("MindSpore has no as_tensor; the counterparts are mindspore.tensor (copies) "
                                   "and mindspore.from_numpy (shares)"),
            "fn:abs_": absent("MindSpore has no abs_ (neither mindspore.ops nor mindspore.mint)"),
            # activations and layers: mindspore.mint, MindSpore's PyTorch-like API
            "fn:relu": lambda x, **kw: F().relu(x, **kw),
            "fn:relu_": lambda x: F().relu_(x),
            "fn:elu": lambda x, alpha=1.0, **kw: F().elu(x, alpha, **kw),
            "fn:elu_": lambda x, alpha=1.0: F().elu_(x, alpha),
            "fn:leaky_relu": lambda x, negative_slope=0.01, **kw: F().leaky_relu(x, negative_slope, **kw),
            "fn:leaky_relu_": absent("mindspore.mint.nn.functional has no leaky_relu_"),
            "fn:hardtanh": lambda x, min_val=-1.0, max_val=1.0, **kw: F().hardtanh(x, min_val, max_val, **kw),
            "fn:hardtanh_": lambda x, min_val=-1.0, max_val=1.0: F().hardtanh_(x, min_val, max_val),
            "fn:dropout": lambda x, p=0.5, training=True, **kw: F().dropout(x, p, training, **kw),
            "fn:ReLU": lambda **kw: ms().mint.nn.ReLU(**kw),
            "fn:ELU": lambda alpha=1.0, **kw: ms().mint.nn.ELU(alpha, **kw),
            "fn:Hardtanh": lambda min_val=-1.0, max_val=1.0, **kw: ms().mint.nn.Hardtanh(min_val, max_val, **kw),
            "fn:Dropout": lambda p=0.5, **kw: ms().mint.nn.Dropout(p, **kw),
            # mindspore.nn.LeakyReLU, whose slope is its alpha (no mint layer of that name)
            "fn:LeakyReLU": lambda negative_slope=0.01, **kw: ms().nn.LeakyReLU(negative_slope, **kw),
            # a Cell's eval() / train(mode) are its set_train(False) / set_train(mode)
            "method:eval": lambda cell: _cell(cell).set_train(False),
            "method:train": lambda cell, mode=True: _cell(cell).set_train(mode),
            "call": _call_cell,
        })
        no_autograd = absent(_NO_TENSOR_AUTOGRAD)
        for key in ("method:backward", "method:detach_", "attr:grad", "attr:is_leaf", "attr:requires_grad",
                    "setattr:requires_grad", "setattr:data", "block:enable_grad", "block:inference_mode",
                    "attr:stop_gradient", "setattr:stop_gradient"):
            ops[key] = no_autograd
        # torch.autograd.grad / paddle.grad as a step (issue 37): read as mindspore.grad of the steps
        # before it, as backward() is (conformance/run/gradients.py); a tensor has no graph to call
        ops["fn:autograd_grad"] = no_autograd
        # no_grad: MindSpore's own context that stops mindspore.grad recording what runs inside it
        # (mindspore._no_grad, mindspore/graph/api.py: exported without a documented page), so a
        # backward() step read as mindspore.grad of the steps before it differentiates nothing of
        # the block (measured on 2.10.0: the gradient of x * x + (x * 2 under it) is 2x); in an
        # eager step outside any gradient it changes nothing
        ops["block:no_grad"] = lambda: ms()._no_grad()
        for name in ("abs_", "neg_", "sqrt_", "t_", "transpose_", "resize_", "unsqueeze_", "squeeze_", "scale_"):
            ops["method:" + name] = absent(f"MindSpore tensors have no {name}() method")
        from conformance import registry  # adapter classes only; imports no framework

        for key in registry.dlpack_conversions():
            ops[key] = absent(_NO_DLPACK_PROTOCOL)
        ops.update(_np_view_operations())  # issue 18, NumPy's documented views (views-np-paddle)
        ops.update(_tensor_view_operations())
        ops.update(NUMPY_CONVERSIONS)
        # issue 18, the structural in-place methods (INPLACE_STRUCTURAL) and those it lacks
        ops.update({"method:" + m: passthrough(m) for m in INPLACE_STRUCTURAL})
        ops["method:set_"] = passthrough("set_", _set_bound)  # bounded by the source's storage (adapters/extent.py)
        for name in ("index_reduce_", "scatter_reduce_", "tril_", "triu_", "cauchy_", "geometric_", "log_normal_",
                     "resize_as_", "cumsum_", "cumprod_", "renorm_", "addbmm_", "baddbmm_", "addmv_", "addr_",
                     "addcdiv_", "addcmul_", "conj_physical_", "put_along_axis_", "reshape_", "flatten_", "cast_"):
            ops["method:" + name] = absent(f"MindSpore tensors have no {name}() method")
        ops.update(_issue38_operations())
        return ops


def _set_bound(x: Any, *args: Any, **kwargs: Any) -> None:
    """The bound of Tensor.set_ (MindSpore 2.10 has torch's signatures), called as written:
    set_(source, storage_offset, size, stride) starts ``storage_offset`` elements after the
    source's own storage offset (measured: set_(s[2:], 1, (2,), (1,)) starts at element 3),
    strides contiguous when None, inside the source's storage; MindSpore grows the
    storage to fit a view past its end (measured: set_(s, 0, [64], [1]) of 4 floats leaves a
    256-byte storage), with memory nobody wrote. x's element size is its dtype's (``itemsize``
    of a dtype view reports the viewed tensor's, measured: 4 for the int8 view of float32)."""
    ms = _ms()
    given = dict(zip(("source", "storage_offset", "size", "stride"), args))
    given.update(kwargs)
    source, size, stride = given.get("source"), given.get("size"), given.get("stride")
    if isinstance(x, ms.Tensor) and isinstance(source, ms.Tensor) and size is not None:
        if stride is None and isinstance(size, (list, tuple)):
            stride = contiguous_strides(size)
        offset = integer("set_", given.get("storage_offset", 0), "offset")
        start = int(source.storage_offset()) + offset
        itemsize = DTYPE_SIZES[MindsporeProbes().dtype_name(x)]
        check("set_", size, stride, start, int(source.untyped_storage().nbytes()) // itemsize,
              GROWS_STORAGE.format(framework="MindSpore"),
              "" if start == offset else f" (the source's storage offset {start - offset} + {offset})")


def _np_view_operations() -> dict[str, Operation]:
    """Issue 18 (views-np-paddle): MindSpore's counterparts of NumPy's documented views:
    mindspore.ops' fliplr, flipud, rot90, atleast_nd, and mint.diag (torch's signature)."""
    ms = _ms

    def atleast(name: str) -> Operation:
        def call(*xs: Any) -> Any:
            out = getattr(ms().ops, name)(xs[0] if len(xs) == 1 else list(xs))
            return tuple(out) if isinstance(out, list) else out

        return call

    return {
        # Tensor.flip takes a tuple of dims only: torch's x.flip(0) passes an int
        "method:flip": lambda x, dims: x.flip(tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)),
        "method:fliplr": lambda x: ms().ops.fliplr(x),
        "method:flipud": lambda x: ms().ops.flipud(x),
        "method:rot90": lambda x, k=1, dims=(0, 1): ms().ops.rot90(x, k, tuple(dims)),
        "method:rollaxis": absent("MindSpore has no rollaxis(); the counterpart is movedim(axis, start)"),
        "fn:broadcast_arrays": absent("MindSpore has no broadcast_arrays / broadcast_tensors; the counterpart is "
                                      "broadcast_to() of each tensor"),
        "fn:atleast_1d": atleast("atleast_1d"),
        "fn:atleast_2d": atleast("atleast_2d"),
        "fn:atleast_3d": atleast("atleast_3d"),
        "fn:diag": lambda x, diagonal=0, **kw: ms().mint.diag(x, diagonal, **kw),
        "fn:meshgrid": lambda *xs, indexing="ij", **kw: tuple(ms().ops.meshgrid(*xs, indexing=indexing, **kw)),
        "fn:einsum": lambda equation, *xs: ms().mint.einsum(equation, *xs),
    }


def _issue38_operations() -> dict[str, Operation]:
    """Issue 38, operations people ask about: MindSpore's own (each entry says what it calls)."""
    ms = _ms
    return {
        # Tensor.repeat(*repeats) tiles, as torch's (MindSpore's docs: "Copy the elements in
        # each dimension"); Tensor.repeat_interleave repeats elements
        "method:repeat": passthrough("repeat"),
        "method:masked_fill": passthrough("masked_fill"),
        # mindspore.mint.tril(input, diagonal=0), torch's signature
        "fn:tril": lambda *args, **kwargs: ms().mint.tril(*args, **kwargs),
        "fn:triu": lambda *args, **kwargs: ms().mint.triu(*args, **kwargs),
        # mindspore.ops.slice_scatter(input, src, axis=0, start=None, end=None, step=1): torch's
        # dim is its axis (mint has none)
        "fn:slice_scatter": lambda x, src, dim=0, *args, **kwargs: ms().ops.slice_scatter(
            x, src, dim, *args, **kwargs),
        # mindspore.mint.arange(start, end, step, dtype=<the MindSpore dtype of the name>)
        "fn:arange": lambda *args, dtype=None, **kwargs: ms().mint.arange(
            *args, dtype=_dtype_or_none(dtype), **kwargs),
    }
