"""PaddlePaddle adapter. Paddle 3 has most of PyTorch's method names; where an argument
convention differs (``transpose(perm)``, ``axis=``, list shapes) the table translates the
arguments, and always calls Paddle's own operation of that meaning."""

from __future__ import annotations

import functools
import os
import re
from typing import Any, Callable

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
    attributes_state,
    dtype_named,
    is_device_name,
    passthrough,
)
from conformance.adapters.extent import (
    DTYPE_SIZES,
    READS_OUTSIDE,
    bounded,
    check,
    contiguous_strides,
    integer,
    integers,
    window,
)

METHODS = (
    "add_", "sub_", "mul_", "div_", "exp_", "zero_", "fill_", "normal_", "uniform_", "clamp_",
    "sigmoid_", "abs_", "neg_", "sqrt_", "copy_", "detach_", "requires_grad_", "t_", "scale_",
    "unsqueeze_", "squeeze_", "masked_fill_",
    "t", "clone", "contiguous", "detach", "numpy", "cpu", "masked_select", "item", "tolist",
    "ravel", "conj", "take", "nonzero",
)
ATTRIBUTES = ("T", "mT", "shape", "grad", "data", "is_leaf", "stop_gradient")
# issue 18, the in-place surface: the structural in-place methods Paddle 3.3.1 has under
# torch's name that take torch's spelling as written (index_add_ and scatter_ read torch's
# argument order through Paddle's own compatibility decorators; the rest have torch's
# parameter order; measured against torch's results by cases/inplace/*)
# (set_ is _set_ below: Paddle counts its offset in bytes)
INPLACE_STRUCTURAL = (
    "index_add_", "index_put_", "scatter_", "scatter_add_", "masked_scatter_", "tril_", "triu_",
    "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "random_",
    "cumsum_", "cumprod_", "renorm_", "addmm_", "baddbmm_", "put_along_axis_",
)
# torch's scatter_reduce_ reductions under Paddle's put_along_axis_ names
_PUT_ALONG_AXIS_REDUCE = {"sum": "add", "prod": "mul", "mean": "mean", "amax": "amax", "amin": "amin"}

# in place, elementwise (issue 18, the in-place surface): Paddle's own methods of the same
# name, passed through ...
INPLACE_ELEMENTWISE = (
    "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_", "digamma_", "erfinv_",
    "floor_", "frac_", "i0_", "lgamma_", "log_", "log10_", "log1p_", "log2_", "logit_", "nan_to_num_",
    "reciprocal_", "round_", "rsqrt_", "sin_", "sinc_", "sinh_", "square_", "tan_", "tanh_", "trunc_",
    "subtract_", "multiply_", "divide_", "floor_divide_", "remainder_", "pow_", "hypot_", "copysign_", "ldexp_",
    "lerp_", "gcd_", "lcm_", "clip_", "polygamma_",
    "not_equal_", "less_", "less_equal_", "greater_equal_",
    "logical_and_", "logical_or_", "logical_xor_", "logical_not_",
    "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_", "bitwise_left_shift_", "bitwise_right_shift_",
    # Paddle's own other names of the same functions (torch's table: absent, naming torch's)
    "gammaln_", "mod_", "floor_mod_", "bitwise_invert_",
)
# ... and torch's names that Paddle spells otherwise: documented aliases of the same meaning
# (torch.absolute is abs, Paddle's equal_ is the in-place ==, gammainc is igamma, ...)
INPLACE_ELEMENTWISE_ALIASES = {
    "absolute_": "abs_", "arccos_": "acos_", "arccosh_": "acosh_", "arcsin_": "asin_", "arcsinh_": "asinh_",
    "arctan_": "atan_", "arctanh_": "atanh_", "negative_": "neg_", "fix_": "trunc_", "true_divide_": "divide_",
    "eq_": "equal_", "ne_": "not_equal_", "lt_": "less_than_", "le_": "less_equal_", "gt_": "greater_than_",
    "ge_": "greater_equal_", "greater_": "greater_than_",
    "igamma_": "gammainc_", "igammac_": "gammaincc_", "mvlgamma_": "multigammaln_",
}


def _not_simulated() -> bool:
    return False


# Whether Paddle's SOT is simulating the call (paddle.jit.to_static, the paddle_static mode):
# Paddle's own in_sot_simulation_mode once Paddle is imported. SOT answers a call of that
# function object with True (paddle/jit/sot/.../variables/callable.py); run natively it returns
# False. The storage checks are skipped there, called first in their condition: SOT's tensors
# are symbolic, with no allocation to measure, and the engine runs every case eagerly first, on
# the same inputs, where each request was checked (an item that asked for memory outside its
# storage is refused before anything compiles). It is this module's global, called directly:
# measured on 3.3.1, a first form that reached Paddle's function through module attributes
# (getattr(paddle.base.dygraph.base, ...)) made SOT stop translating there, and
# memory.resize_.shrink_keeps_storage and views.view.dtype_larger_offset_not_divisible recorded
# eager Paddle's outcome in paddle_static (tests/security/test_storage_bounds.py runs them).
_in_sot_simulation: Callable[[], bool] = _not_simulated


@functools.cache
def _paddle() -> Any:
    # Paddle prints a ccache notice on import and reads flags from the environment; keep
    # the import quiet and deterministic. Cached: every operation in the table calls this.
    global _in_sot_simulation
    os.environ.setdefault("GLOG_minloglevel", "2")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import paddle
    _in_sot_simulation = getattr(paddle.base.dygraph.base, "in_sot_simulation_mode", _not_simulated)
    return paddle


def _shape(args: tuple) -> list:
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)


def _swap_perm(x: Any, d0: int, d1: int) -> list:
    perm = list(range(len(x.shape)))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm


def _split(x: Any, size: Any, dim: int = 0) -> list:
    """torch.split semantics (pieces of ``size``, or a list of piece sizes) with Paddle's
    section list (an int there means a number of equal pieces, not their size)."""
    if isinstance(size, (list, tuple)):
        return x.split(list(size), axis=dim)
    n = x.shape[dim]
    sections = [size] * (n // size) + ([n % size] if n % size else [])
    return x.split(sections, axis=dim)


@bounded
def _view(x: Any, *args: Any) -> Any:
    """view(*shape) or view(dtype): Paddle's Tensor.view takes a shape list or a dtype. A dtype
    view is bounded by the tensor's allocation first (_check_dtype_view)."""
    if len(args) == 1 and isinstance(args[0], str):
        name = dtype_named(args[0])
        if not _in_sot_simulation() and isinstance(x, _paddle().Tensor):
            _check_dtype_view(x, str(name))
        return x.view(name)
    return x.view(_shape(args))


def _check_dtype_view(x: Any, name: str) -> None:
    """Paddle 3.3.1's view(dtype) to a smaller dtype scales the tensor's byte offset by the
    size ratio, as if it counted elements (measured: the int8 view of x[1:] of a 3x6 float32
    tensor starts at byte 96 of its 96-byte allocation, not 24, and reads past its end; to a
    larger dtype it divides the offset, which stays inside). Its layout is computed as Paddle
    makes it (the last dimension and the other strides scaled by the ratio, the offset too) and
    bounded by the allocation; where Paddle refuses the view itself (a last stride other than
    1, a 0-d tensor), it is left to refuse."""
    old, new = int(x.element_size()), DTYPE_SIZES[name]
    strides = [int(s) for s in x.get_strides()]
    if new >= old or not strides or strides[-1] != 1:
        return
    ratio = old // new
    offset = int(x._offset())
    size = [int(d) for d in x.shape]
    start, storage = window(offset * ratio, int(x._holder_size()), new)
    check("view", size[:-1] + [size[-1] * ratio], [s * ratio for s in strides[:-1]] + [1], start, storage,
          note=f" (Paddle views {str(x.dtype).removeprefix('paddle.')} as {name} by scaling the byte offset {offset} "
               f"by {ratio})")


def _holder_elements(x: Any) -> int:
    """The elements of x's dtype in the allocation its memory is in (Paddle's holder): where
    as_strided and set_ count their offsets from."""
    return int(x._holder_size()) // int(x.element_size())


# Paddle's as_strided and set_ count offsets from the allocation's start, not the tensor's
_FROM_ALLOCATION = " (counted from the start of the allocation, as Paddle does)"


@bounded
def _as_strided(x: Any, size: Any, stride: Any, storage_offset: Any = None) -> Any:
    """torch's as_strided(size, stride, storage_offset) as Paddle's as_strided(shape, stride,
    offset), whose offset counts bytes where torch's counts elements (its docs give no unit;
    measured: views.as_strided.offset), from the allocation's start. Paddle checks none of it
    (measured on 3.3.1: as_strided([10], [1]) of 6 floats reads 4 floats of the heap): the elements
    it would reach are bounded by the allocation first."""
    if not _in_sot_simulation() and isinstance(x, _paddle().Tensor):
        check("as_strided", size, stride, 0 if storage_offset is None else storage_offset, _holder_elements(x),
              note=_FROM_ALLOCATION)
    return x.as_strided(list(size), list(stride), 0 if storage_offset is None else storage_offset * x.element_size())


@bounded
def _resize_(x: Any, *s: Any) -> Any:
    """Paddle's resize_(shape) is set_(x, shape) (python/paddle/tensor/manipulation.py): x keeps
    its allocation and becomes a contiguous tensor of ``shape`` from its start, so a larger
    shape reads past the allocation (measured on 3.3.1: resize_([64]) of 6 floats, then numpy()
    or as_strided, read the heap). Bounded by the allocation first; a shape it holds (a shrink,
    or a regrowth after one) is Paddle's to make."""
    if not _in_sot_simulation() and isinstance(x, _paddle().Tensor):
        shape = integers("resize_", _shape(s), "size")
        check("resize_", shape, contiguous_strides(shape), 0, _holder_elements(x),
              f"{READS_OUTSIDE}: Paddle's resize_ keeps the tensor's allocation", _FROM_ALLOCATION)
    return x.resize_(_shape(s))


def _to(x: Any, target: str) -> Any:
    """Paddle's own Tensor.to, given what the case wrote: a device name, or a dtype name as
    the string a Paddle user writes (``x.to('float32')``, the form of Paddle's documented
    example). Not astype: Paddle's to compares that string with the tensor's DataType, which
    is never equal, so ``x.to('float32')`` of a float32 tensor casts into a new tensor, while
    ``x.astype('float32')`` (and ``x.to(paddle.float32)``, which a case cannot write) returns
    x itself."""
    if is_device_name(target):
        return x.to(target)
    return x.to(dtype_named(target))


_GENERATED_NAME = re.compile(r"generated_tensor_\d+")


def _refuse_sparse(obj: Any) -> None:
    """A sparse tensor (to_sparse_coo / to_sparse_csr) has no dense memory to probe: Paddle
    3.3.1's data_ptr() / numpy() of one crash the process (SIGSEGV in
    phi::DenseTensor::set_meta), so the probe refuses it first, as torch's numpy() does
    ("can't convert Sparse layout tensor to numpy"); its to_dense() and values() are dense."""
    if obj.is_sparse():
        raise TypeError("a sparse Paddle tensor has no dense memory or values to probe; observe its "
                        "to_dense() or values()")


class PaddleProbes(TensorProbes):
    """The probes for Paddle tensors (NumPy arrays: ArrayProbes')."""

    def _is_tensor(self, obj: Any) -> bool:
        return isinstance(obj, _paddle().Tensor)

    def tensor_to_numpy(self, obj: Any) -> Any:
        _refuse_sparse(obj)
        t = obj.detach()
        if t.dtype == _paddle().bfloat16:
            t = t.astype("float32")
        return super().to_numpy(t.numpy())

    def tensor_dtype_name(self, obj: Any) -> str:
        return str(obj.dtype).removeprefix("paddle.")

    def tensor_layout(self, obj: Any) -> Layout:
        _refuse_sparse(obj)
        size = obj.element_size()
        # data_ptr() already includes the view's byte offset; get_strides() is in elements
        ptr = obj.data_ptr()
        return Layout(ptr, tuple(obj.shape), tuple(s * size for s in obj.get_strides()), size, None)

    def tensor_strides_of(self, obj: Any) -> tuple[int, ...] | None:
        _refuse_sparse(obj)
        # get_strides() (the same list as the strides property) is in elements: [3, 1] for a
        # float32 2x3 tensor, [1, 3] for its transpose (measured on Paddle 3.3.1)
        return tuple(int(s) for s in obj.get_strides())

    def same_allocation(self, a: Any, b: Any) -> bool:
        if self._is_tensor(a) and self._is_tensor(b):
            # Paddle's bookkeeping knows when two tensors hold one buffer, even without a
            # common element (x[::2], x[1::2]); a tensor imported through DLPack holds the same
            # memory under a holder of its own, which it does not count: the memory decides too
            return bool(a._is_shared_buffer_with(b)) or super().same_allocation(a, b)
        return super().same_allocation(a, b)

    def tensor_grad(self, obj: Any) -> Any:
        return obj.grad

    def tensor_requires_grad(self, obj: Any) -> bool | None:
        return not obj.stop_gradient

    def tensor_is_leaf(self, obj: Any) -> bool | None:
        return bool(obj.is_leaf)

    def tensor_version_of(self, obj: Any) -> int | None:
        return int(obj.inplace_version)

    def tensor_probe_fill(self, obj: Any, value: Any) -> None:
        _refuse_sparse(obj)
        with _paddle().no_grad():
            obj.fill_(value)

    def tensor_probe_restore(self, obj: Any, snapshot: Any) -> None:
        paddle = _paddle()
        source = paddle.to_tensor(snapshot, dtype=obj.dtype)
        with paddle.no_grad():
            # not obj.copy_(source): Paddle 3.0 segfaults in copy_ into any view (a slice, a
            # transpose); assign writes through a view right on every release from 3.0
            paddle.assign(source, output=obj)


# Paddle's warn-once flags: module globals set after the first warning, so that in one
# process only the first item to get there would see it. paddle.tensor.creation._warned_in_tensor
# (python/paddle/tensor/creation.py, lines 77 and 1054-1061 in 3.3.1): paddle.to_tensor
# (and as_tensor) of a Tensor advises clone().detach() once per process. It is the only
# such flag in Paddle's Python package that guards a Python warning; the other once-only
# messages go to logging, not to warnings, from code no operation of this adapter reaches:
# the lru_cache'd warning_once of paddle.autograd.backward_utils and _warning_once of
# paddle.base.executor (static graph), _raise_cuda_env_unset_warning(_for_sp) of
# paddle.distributed.fleet (model-parallel training).


class PaddleAdapter(PaddleProbes, Adapter):
    name = "paddle"
    module = "paddle"
    distribution = "paddlepaddle"
    install_hint = "pip install 'conformance[paddle]'"
    title = "PaddlePaddle"
    exception_types = frozenset({  # every exception class it defines (base.Adapter.exception_types)
        "paddle.base.libpaddle.EOFException", "paddle.base.libpaddle.EnforceNotMet", "paddle.cuda.CudaError",
        "paddle.distributed.fleet.utils.fs.ExecuteError", "paddle.distributed.fleet.utils.fs.FSFileExistsError",
        "paddle.distributed.fleet.utils.fs.FSFileNotExistsError",
        "paddle.distributed.fleet.utils.fs.FSShellCmdAborted", "paddle.distributed.fleet.utils.fs.FSTimeOut",
        "paddle.jit.dy2static.error.Dy2StKeyError", "paddle.jit.dy2static.utils.Dygraph2StaticException",
        "paddle.reader.decorator.ComposeNotAligned", "paddle.utils.layers_utils.NotSupportedTensorArgumentError",
    })
    report_rank = 20
    storage_bounds = ("as_strided, set_, resize_ (set_(x, shape)) and view(dtype) are checked against the "
                      "allocation (_holder_size()) before Paddle is called, which checks none of them; Paddle has "
                      "no as_strided_ or resize_as_ (not applicable)")

    @classmethod
    def release_requirements(cls, version: str) -> list[str]:
        # import paddle imports setuptools (paddle/utils/cpp_extension/cpp_extension.py),
        # which its wheels do not require: a bare environment fails with "No module named
        # 'setuptools'" (seen with 3.0.0 to 3.3.1)
        return [f"paddlepaddle=={version}", "setuptools"]

    # issue 18: the reductions the structural in-place methods take by name (scatter_'s reduce=,
    # scatter_reduce_'s and index_reduce_'s reduce)
    case_strings = frozenset({"sum", "prod", "mean", "amax", "amin", "add", "multiply"})
    autograd = True
    device_kinds = ("cpu", "cuda")
    dlpack_export = dlpack_import = True
    error_patterns = {
        # "Leaf Var" from the _ ops, "Leaf Tensor" from __setitem__
        "inplace_on_leaf": (r"Leaf (Var|Tensor) .* that doesn't stop gradient can't use inplace strategy",),
        "modified_saved_tensor": (r"inplace_version", r"modified by an? inplace operation",
                                  r"has been modified by inplace"),
        "overlapping_write": (r"more than one element of the written-to tensor",),
        "dtype_cast": (r"can't be cast to the desired output type", r"cannot be cast",
                       r"The type of data we are trying to retrieve .* does not match",
                       # no promotion between an integer and a floating tensor (x += t, x + t)
                       r"Type promotion only support calculations between floating-point numbers",
                       # cat of tensors of different dtypes
                       r"The data_type of input tensor in list isn't consistent",
                       # copy_ from a tensor of another dtype
                       r"has different data type with Tensor .*, Tensor Copy cannot be performed"),
        "unsupported_dtype": (r"The kernel with key \(.*\) of kernel .\w+. is not registered",),
        "shape_mismatch": (r"shape .* is invalid", r"broadcast", r"ShapeError", r"should be equal to",
                           r"dimension of input\[\d+\] and input\[\d+\] is expected to be equal",
                           r"The shape of tensor assigned value must match the shape of target shape",
                           # chunk into pieces that are not all the same size
                           r"size along the split dimension must be evenly divisible",
                           # view(dtype) across a last dimension it does not divide; vsplit of 1-D
                           r"input\.shape\[\d+\]\(\d+\) must be multiple of",
                           r"The input tensor's dimension must be greater than \d+",
                           # copy_ of a source of another shape (a 0-d one): Paddle does not broadcast it
                           r"Input shape\([\d, ]*\) must be equal with out shape"),
        "no_grad_fn": (r"stop_gradient=True", r"does not require grad"),
        "graph_freed": (r"You calculate backward twice for the same subgraph without setting "
                        r"retain_graph=True",),
        "read_only": (r"read-only", r"not writable", r"non-writable"),
        "requires_grad_conversion": (r"Can't get __dlpack__ from Tensor that requires gradients",),
        "not_contiguous_view": (r"can not be viewed, please call reshape",
                                r"strides\[-1\] must be 1 to view",
                                # view(dtype) to a larger dtype of an unaligned or transposed tensor
                                r"input\.strides\[\d+\]\(\d+\) must be multiple of",
                                r"strides\[\d+\] must be 1 to view",
                                # view_as_complex of a last dimension that is not contiguous
                                r"Expected the stride of last dimension of"),
        # recorded by the corpus and none of the kinds: reading a tensor that resize_ grew without
        # reallocating (issue 18, inplace.resize_.grow_then_read)
        "other": (r"Tensor's dimension is out of bound",
                  # jax.dlpack.from_dlpack of a Paddle CPU tensor: the device Paddle's
                  # __dlpack_device__ names is one JAX's client cannot look up (its id is None)
                  r"device_from_local_hardware_id\(\): incompatible function arguments",
                  # a sparse tensor's accessor (indices(), values(), crows(), coalesce()) of a dense
                  # tensor, eager and in paddle.jit's static graph
                  r"this method is only effective for Sparse(Coo|Csr)Tensor",
                  r"The kernel of \(\w+\) for input (tensors|Value) is unimplemented",
                  r"Only support paddle::dialect::SparseCooTensorType",
                  # paddle.grad of an input the outputs do not depend on, without allow_unused=True
                  # (issue 37, the functional form of backward())
                  r"input does not appear in the backward graph"),
        # a Python number where the operation wants a Tensor (x.add_(1) reads 1's .shape)
        # ... and a Tensor where a Python number is wanted (pow_ of a tensor exponent)
        "type_error": (r"^AttributeError: '(int|float|bool|complex)' object has no attribute",
                       r"^TypeError: y must be scalar type, but received"),
    }

    def error_message(self, exc: BaseException) -> str:
        # Paddle names unnamed tensors from a per-process counter ("generated_tensor_189"),
        # which depends on how many tensors the process made before this case
        return _GENERATED_NAME.sub("generated_tensor_N", super().error_message(exc))

    def load(self) -> None:
        paddle = _paddle()
        paddle.set_device("cpu")

    def device_unavailable(self, device: str) -> str | None:
        if device == "cuda" and not _paddle().device.is_compiled_with_cuda():
            return "no CUDA device: this paddle build has no CUDA"
        return None

    def global_states(self) -> list[GlobalState]:
        paddle = _paddle()
        from paddle.base import core
        from paddle.tensor.to_string import DEFAULT_PRINT_OPTIONS

        flags = core.globals()  # every gflag, public or not (FLAGS_check_nan_inf, ...)

        def set_flags(saved: dict[str, Any]) -> None:
            for key, value in saved.items():
                if flags[key] != value:
                    flags[key] = value

        def set_dynamic_mode(dynamic: bool) -> None:
            (paddle.disable_static if dynamic else paddle.enable_static)()

        return super().global_states() + [
            GlobalState("paddle.grad_enabled", paddle.is_grad_enabled, paddle.set_grad_enabled),
            GlobalState("paddle.default_dtype", paddle.get_default_dtype, paddle.set_default_dtype),
            GlobalState("paddle.dynamic_mode", paddle.in_dynamic_mode, set_dynamic_mode),
            GlobalState("paddle.device", paddle.get_device, paddle.set_device),
            GlobalState("paddle.flags", lambda: {key: flags[key] for key in flags.keys()}, set_flags),
            attributes_state("paddle.printoptions", DEFAULT_PRINT_OPTIONS),
            GlobalState("paddle.random", paddle.get_rng_state, paddle.set_rng_state, always_restore=True),
            _warned_flags_state(),
        ]

    def seed(self, seed: int) -> None:
        super().seed(seed)
        _paddle().seed(seed)

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        t = _paddle().to_tensor(array, dtype=spec.dtype, place="gpu" if device == "cuda" else "cpu")
        t.stop_gradient = not spec.requires_grad
        return t

    def operations(self) -> dict[str, Operation]:
        paddle = _paddle
        ops: dict[str, Operation] = {"method:" + m: passthrough(m) for m in METHODS}
        ops.update(_inplace_elementwise())  # issue 18, in place
        ops.update({"attr:" + a: attribute(a) for a in ATTRIBUTES})
        ops.update({
            "method:view": _view,
            "method:reshape": lambda x, *s, **kw: x.reshape(_shape(s), **kw),
            "method:transpose": lambda x, d0, d1: x.transpose(_swap_perm(x, d0, d1)),
            "method:transpose_": lambda x, d0, d1: x.transpose_(_swap_perm(x, d0, d1)),
            "method:permute": lambda x, *d: x.permute(_shape(d)),
            "method:flatten": lambda x, start_dim=0, end_dim=-1: x.flatten(start_dim, end_dim),
            "method:squeeze": lambda x, dim=None: x.squeeze(dim),
            "method:unsqueeze": lambda x, dim: x.unsqueeze(dim),
            "method:expand": lambda x, *s: x.expand(_shape(s)),
            "method:diagonal": lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2),
            "method:split": _split,
            "method:chunk": lambda x, n, dim=0: x.chunk(n, axis=dim),
            "method:tensor_split": lambda x, sections, dim=0: x.tensor_split(sections, axis=dim),
            "method:unbind": lambda x, dim=0: x.unbind(axis=dim),
            "method:movedim": lambda x, source, destination: x.moveaxis(source, destination),
            "method:unflatten": lambda x, dim, sizes: x.unflatten(dim, list(sizes)),
            "method:narrow": lambda x, dim, start, length: x.narrow(dim, start, length),
            "method:unfold": lambda x, dim, size, step: x.unfold(dim, size, step),
            "method:broadcast_to": lambda x, *s: x.broadcast_to(_shape(s)),
            "fn:view_as_real": lambda x: paddle().view_as_real(x),
            "fn:view_as_complex": lambda x: paddle().view_as_complex(x),
            # paddle.take_along_dim (an alias of take_along_axis) with what the case wrote: without
            # dim it refuses the call (TypeError: its axis is required), which is recorded
            "fn:take_along_dim": lambda x, index, *args, **kwargs: paddle().take_along_dim(x, index, *args, **kwargs),
            "method:flip": lambda x, dims: x.flip(list(dims) if isinstance(dims, (list, tuple)) else [dims]),
            "method:to": _to,
            "method:astype": lambda x, dtype, **kw: x.astype(dtype_named(dtype), **kw),
            "method:sum": lambda x, dim=None: x.sum(axis=dim),
            "method:index_select": lambda x, dim, index: x.index_select(index, axis=dim),
            # Paddle's own gather, in torch's argument order, which it documents as its PyTorch-
            # compatible form (a non-broadcasting take_along_axis)
            "method:gather": lambda x, dim, index: x.gather(dim, index),
            "method:backward": lambda x, gradient=None, retain_graph=False: x.backward(gradient, retain_graph),
            "method:relu_": absent("paddle.Tensor has no relu_() method; the counterpart is "
                                   "paddle.nn.functional.relu_(x)"),
            "method:resize_": _resize_,  # bounded by the allocation (adapters/extent.py)
            # paddle.Tensor.real / .imag are methods (paddle.real(x)), not properties
            "attr:real": lambda x: x.real(),
            "attr:imag": lambda x: x.imag(),
            # Paddle 3's own requires_grad property (not stop_gradient; its setter refuses a non-bool)
            "attr:requires_grad": attribute("requires_grad"),
            "setattr:requires_grad": attribute_setter("requires_grad"),
            "setattr:stop_gradient": attribute_setter("stop_gradient"),
            "setattr:data": attribute_setter("data"),
            "block:no_grad": lambda: paddle().no_grad(),
            "block:enable_grad": lambda: paddle().enable_grad(),
            "block:inference_mode": absent("Paddle has no inference mode: paddle.no_grad() stops gradient "
                                           "recording, and its tensors carry no inference flag"),
            # the functional form of backward() (issue 37): paddle.autograd.grad (paddle.grad, the
            # same function) of (outputs, inputs), which returns the gradients and leaves .grad
            # alone; every argument and keyword (grad_outputs, retain_graph, create_graph,
            # allow_unused, ...) reaches Paddle as written, so Paddle's own refusal is the step's error
            "fn:autograd_grad": lambda *args, **kwargs: paddle().autograd.grad(*args, **kwargs),
            "fn:add": lambda x, y, out=None: paddle().add(x, y, out=out),
            "fn:mul": lambda x, y, out=None: paddle().mul(x, y, out=out),
            "fn:exp": lambda x, out=None: paddle().exp(x, out=out),
            "fn:abs": lambda x, out=None: paddle().abs(x, out=out),
            "fn:abs_": lambda x: paddle().abs_(x),
            "method:scale": lambda x, scale=1.0, bias=0.0: x.scale(scale, bias),
            "fn:sigmoid": lambda x, out=None: paddle().sigmoid(x, out=out),
            "fn:clamp": lambda x, min=None, max=None, out=None: paddle().clamp(x, min, max, out=out),
            "fn:sqrt": lambda x, out=None: paddle().sqrt(x, out=out),
            "fn:from_numpy": lambda a: paddle().from_numpy(a),
            "fn:as_tensor": lambda a, dtype=None: paddle().as_tensor(a, dtype=dtype_named(dtype)),
            "fn:from_dlpack": lambda a: paddle().from_dlpack(a),
            "fn:tensor": lambda a, dtype=None: paddle().tensor(a, dtype=dtype_named(dtype)),
            "fn:where": lambda c, *xy, **kw: paddle().where(c, *xy, **kw),
            "fn:cat": lambda xs, dim=0, **kw: paddle().cat(xs, dim, **kw),
            "fn:stack": lambda xs, dim=0, **kw: paddle().stack(xs, axis=dim, **kw),
            # without a dtype, Paddle's default (paddle.get_default_dtype(), float32 unless changed)
            "fn:zeros": lambda *s, dtype=None, **kw: paddle().zeros(_shape(s), dtype=dtype_named(dtype), **kw),
            "fn:ones": lambda *s, dtype=None, **kw: paddle().ones(_shape(s), dtype=dtype_named(dtype), **kw),
            "fn:empty": lambda *s, dtype=None, **kw: paddle().empty(_shape(s), dtype=dtype_named(dtype), **kw),
        })
        ops.update(_np_view_operations())  # issue 18, NumPy's documented views (views-np-paddle)
        ops.update(_tensor_view_operations())
        ops.update(NUMPY_CONVERSIONS)
        ops.update(_activation_operations())
        ops.update(_structural_inplace_operations())
        ops.update(_issue38_operations())
        return ops


def _inplace_elementwise() -> dict[str, Operation]:
    """The elementwise in-place methods (issue 18): same names passed through, torch's other
    spellings calling Paddle's method of that meaning with the case's arguments, and
    clamp_min_ / clamp_max_ as Paddle's clamp_ with one bound."""
    ops: dict[str, Operation] = {"method:" + m: passthrough(m) for m in INPLACE_ELEMENTWISE}
    ops.update({"method:" + torch_name: passthrough(name) for torch_name, name in INPLACE_ELEMENTWISE_ALIASES.items()})
    ops["method:clamp_min_"] = lambda x, min: x.clamp_(min=min)
    ops["method:clamp_max_"] = lambda x, max: x.clamp_(max=max)
    return ops


def _structural_inplace_operations() -> dict[str, Operation]:
    """Issue 18, the structural in-place methods: Paddle's own of the same name (as written,
    or with torch's argument order translated), Paddle's own in-place methods torch has under
    no name, and those Paddle lacks, with the counterpart."""
    ops: dict[str, Operation] = {"method:" + m: passthrough(m) for m in INPLACE_STRUCTURAL}
    ops.update({
        # Paddle's index_fill_(index, axis, value): torch's order (dim, index, value) is refused
        # ("ValueError: index must be Tensor")
        "method:index_fill_": lambda x, dim, index, value: x.index_fill_(index, dim, value),
        # Paddle's fill_diagonal_(value, offset=0, wrap=False): torch's second positional
        # argument is wrap, which Paddle would read as the offset
        "method:fill_diagonal_": lambda x, fill_value, wrap=False: x.fill_diagonal_(fill_value, wrap=wrap),
        # Paddle has no scatter_reduce_; its in-place counterpart is put_along_axis_ with a
        # reduction (torch's sum / prod under Paddle's names add / mul), not broadcasting
        "method:scatter_reduce_": lambda x, dim, index, src, reduce, include_self=True: x.put_along_axis_(
            index, src, dim, reduce=_PUT_ALONG_AXIS_REDUCE.get(reduce, reduce), include_self=include_self,
            broadcast=False),
        # Paddle's own in-place shape and dtype changes (torch has none of these names)
        "method:reshape_": lambda x, *s: x.reshape_(_shape(s)),
        "method:flatten_": lambda x, start_dim=0, end_dim=-1: x.flatten_(start_dim, end_dim),
        "method:cast_": lambda x, dtype: x.cast_(dtype_named(dtype)),
        "method:index_copy_": absent("Paddle has no index_copy_(); the counterparts are index_put_() and "
                                     "item assignment x[index] = src"),
        "method:index_reduce_": absent("Paddle has no index_reduce_(); the counterpart is put_along_axis_() "
                                       "with a reduction"),
        "method:put_": absent("Paddle has no put_() (no writes at indices into the flattened tensor); the "
                              "counterparts are index_put_() and scatter_() on a flattened view"),
        "method:resize_as_": absent("Paddle has no resize_as_(); the counterpart is resize_(other.shape)"),
        "method:addbmm_": absent("Paddle has no addbmm_() (nor addbmm); the counterpart is "
                                 "x.add_(paddle.bmm(b1, b2).sum(0))"),
        "method:addmv_": absent("Paddle has no addmv_() (nor addmv); the counterpart is x.add_(paddle.mv(m, v))"),
        "method:addr_": absent("Paddle has no addr_() (nor addr); the counterpart is x.add_(paddle.outer(a, b))"),
        "method:addcdiv_": absent("Paddle has no addcdiv_() (nor addcdiv); the counterpart is "
                                  "x.add_(value * t1 / t2)"),
        "method:addcmul_": absent("Paddle has no addcmul_() (nor addcmul); the counterpart is "
                                  "x.add_(value * t1 * t2)"),
        "method:conj_physical_": absent("Paddle has no conj_physical_(); the counterpart is paddle.conj(x), "
                                        "a new tensor"),
    })
    return ops
# Tensor Views page (issue 18, views-torch): Paddle's counterparts of the ops torch's page lists
def _tensor_view_operations() -> dict[str, Operation]:
    ops: dict[str, Operation] = {"method:" + m: passthrough(m) for m in (
        "view_as", "expand_as", "swapaxes", "swapdims", "hsplit", "vsplit", "dsplit", "to_dense", "indices",
        "values", "coalesce")}
    return ops | {
        "method:reshape_as": absent("paddle.Tensor has no reshape_as(); the counterpart is reshape(other.shape)"),
        # torch's storage_offset counts elements, Paddle's offset bytes, as set_'s does (_set_);
        # bounded by the allocation (adapters/extent.py)
        "method:as_strided": _as_strided,
        "method:as_strided_": absent("Paddle has no as_strided_(); the counterpart is as_strided()"),
        "method:swapaxes_": absent("Paddle has no swapaxes_(); the counterpart is transpose_(perm)"),
        "method:swapdims_": absent("Paddle has no swapdims_(); the counterpart is transpose_(perm)"),
        "method:select": _select,
        "attr:H": absent("paddle.Tensor has no .H; the counterpart is x.conj().T"),
        "attr:mH": absent("paddle.Tensor has no .mH; the counterpart is x.conj().mT"),
        "method:adjoint": absent("paddle.Tensor has no adjoint(); the counterpart is x.conj().mT"),
        "method:split_with_sizes": lambda x, sizes, dim=0: x.split_with_sizes(list(sizes), dim),
        # torch's to_sparse() (COO, every dimension sparse) is Paddle's to_sparse_coo(ndim)
        "method:to_sparse": lambda x: x.to_sparse_coo(len(x.shape)),
        # test_view_ops.py facts (lists): a CSR tensor's index tensors are Paddle's crows() / cols()
        "method:to_sparse_csr": passthrough("to_sparse_csr"),
        "method:crow_indices": lambda x: x.crows(),
        "method:col_indices": lambda x: x.cols(),
        # real and imag are methods of paddle.Tensor (attr:real calls x.real()): assigning x.real
        # binds a Python attribute of the object, as written
        "setattr:real": attribute_setter("real"),
        "setattr:imag": attribute_setter("imag"),
    }


def _select(x: Any, dim: int, index: int) -> Any:
    """torch's select(dim, index): Paddle has no select(); the counterpart is basic indexing,
    x[:, index, ...] with index at position dim."""
    return x[(slice(None),) * (dim % len(x.shape)) + (index, Ellipsis)]


def _warned_flags() -> list[tuple[Any, str]]:
    """(module, name of its flag) for each of Paddle's warn-once flags that this release has
    (3.0 and 3.1 have no ``_warned_in_tensor``)."""
    from paddle.tensor import creation

    return [(creation, name) for name in ("_warned_in_tensor",) if hasattr(creation, name)]


def _warned_flags_state() -> GlobalState:
    """Paddle's warn-once flags: False, as in a fresh process, when each item starts."""
    flags = _warned_flags()

    def get() -> tuple[bool, ...]:
        return tuple(getattr(module, name) for module, name in flags)

    def set_flags(values: tuple[bool, ...]) -> None:
        for (module, name), value in zip(flags, values):
            setattr(module, name, value)

    return GlobalState("paddle.warned_flags", get, set_flags, reset=lambda: set_flags((False,) * len(flags)))


def _layer(layer: Any, what: str = "switched between train and eval mode") -> Any:
    """The layer itself; anything else is refused (a tensor has no eval() / train())."""
    if not isinstance(layer, _paddle().nn.Layer):
        raise TypeError(f"only layers can be {what}, not {type(layer).__name__}")
    return layer


def _call_layer(layer: Any, *args: Any, **kwargs: Any) -> Any:
    return _layer(layer, "called")(*args, **kwargs)


def _activation_operations() -> dict[str, Operation]:
    """Activations and layers: Paddle's own functions and layers of the same names. Their
    parameters are torch's under other names (min_val/max_val are Paddle's min/max), which
    the entries translate; any other keyword the case writes is passed as written. Paddle's
    activation functions and layers have no ``inplace`` parameter (the in-place forms are
    the separate functions NAME_), except dropout and Dropout: ``relu(x, inplace=True)`` and
    ``ReLU(inplace=True)`` reach Paddle, which refuses them (TypeError: unexpected keyword
    argument 'inplace'), and that refusal is the step's recorded error."""
    paddle = _paddle
    return {
        "fn:relu": lambda x, **kwargs: paddle().nn.functional.relu(x, **kwargs),
        "fn:relu_": lambda x: paddle().nn.functional.relu_(x),
        "fn:ReLU": lambda **kwargs: paddle().nn.ReLU(**kwargs),
        "fn:leaky_relu": lambda x, negative_slope=0.01, **kwargs: paddle().nn.functional.leaky_relu(
            x, negative_slope, **kwargs),
        "fn:leaky_relu_": lambda x, negative_slope=0.01: paddle().nn.functional.leaky_relu_(x, negative_slope),
        "fn:elu": lambda x, alpha=1.0, **kwargs: paddle().nn.functional.elu(x, alpha, **kwargs),
        "fn:elu_": lambda x, alpha=1.0: paddle().nn.functional.elu_(x, alpha),
        "fn:hardtanh": lambda x, min_val=-1.0, max_val=1.0, **kwargs: paddle().nn.functional.hardtanh(
            x, min_val, max_val, **kwargs),
        "fn:hardtanh_": lambda x, min_val=-1.0, max_val=1.0: paddle().nn.functional.hardtanh_(x, min_val, max_val),
        "fn:dropout": lambda x, p=0.5, training=True, inplace=False: paddle().nn.functional.dropout(
            x, p, training=training, inplace=inplace),
        "fn:LeakyReLU": lambda negative_slope=0.01, **kwargs: paddle().nn.LeakyReLU(negative_slope, **kwargs),
        "fn:ELU": lambda alpha=1.0, **kwargs: paddle().nn.ELU(alpha, **kwargs),
        "fn:Hardtanh": lambda min_val=-1.0, max_val=1.0, **kwargs: paddle().nn.Hardtanh(min_val, max_val, **kwargs),
        "fn:Dropout": lambda p=0.5, inplace=False: paddle().nn.Dropout(p, inplace=inplace),
        "method:eval": lambda layer: _layer(layer).eval(),
        "method:train": lambda layer, mode=True: _layer(layer).train(mode),
        "call": _call_layer,
    }


def _np_view_operations() -> dict[str, Operation]:
    """Issue 18 (views-np-paddle): the counterparts of NumPy's documented views. Paddle has
    no fliplr / flipud / rollaxis; broadcast_tensors takes a list."""
    paddle = _paddle
    return {
        "method:fliplr": absent("Paddle has no fliplr(); the counterpart is flip(x, axis=[1])"),
        "method:flipud": absent("Paddle has no flipud(); the counterpart is flip(x, axis=[0])"),
        "method:rot90": lambda x, k=1, dims=(0, 1): paddle().rot90(x, k, list(dims)),
        "method:rollaxis": absent("Paddle has no rollaxis(); the counterpart is moveaxis(x, axis, start)"),
        "fn:broadcast_arrays": lambda *xs: tuple(paddle().broadcast_tensors(list(xs))),
        "fn:atleast_1d": lambda *xs: paddle().atleast_1d(*xs),
        "fn:atleast_2d": lambda *xs: paddle().atleast_2d(*xs),
        "fn:atleast_3d": lambda *xs: paddle().atleast_3d(*xs),
        "fn:diag": lambda x, diagonal=0, **kw: paddle().diag(x, offset=diagonal, **kw),
        # documented: "the x will share the same data with source Tensor"
        "method:set_": _set_,
        # paddle.meshgrid takes no indexing: its grids are torch's 'ij'; another value is passed as written
        "fn:meshgrid": lambda *xs, indexing="ij", **kw: tuple(
            paddle().meshgrid(*xs, **kw) if indexing == "ij" else paddle().meshgrid(*xs, indexing=indexing, **kw)),
        "fn:einsum": lambda equation, *xs: paddle().einsum(equation, *xs),
        "method:getfield": absent("Paddle has no getfield(); the counterpart is view(dtype) and a slice of the "
                                  "reinterpreted last dimension"),
    }


@bounded
def _set_(x: Any, source: Any = None, storage_offset: int = 0, size: Any = None, stride: Any = None) -> Any:
    """torch's set_(source, storage_offset, size, stride) as Paddle's set_(source, shape, stride,
    offset), whose offset counts bytes where torch's counts elements, from the start of the
    source's allocation (not from the source's own offset: set_(s[2:]) of 6 floats reads the
    first 4). Paddle checks none of it (measured on 3.3.1: set_(s, [64], [1]) of a 2-float
    source reads 62 floats of the heap; an int8 source of 4 bytes read as 4 floats reads 12): the
    view Paddle makes (the source's shape and strides when no size is given, contiguous strides
    when only a size is) is bounded by the source's allocation first."""
    if not _in_sot_simulation() and isinstance(x, _paddle().Tensor) and isinstance(source, _paddle().Tensor):
        shape = list(source.shape) if size is None else size
        strides = stride
        if stride is None:  # Paddle's defaults: the source's strides, or contiguous ones of the size
            strides = [int(s) for s in source.get_strides()] if size is None else contiguous_strides(
                integers("set_", size, "size"))
        # the byte offset Paddle is given (the source's elements), strides in x's elements
        # (measured: an int8 source read as float32 with offset 4 starts at its fifth byte)
        offset_bytes = integer("set_", storage_offset, "offset") * int(source.element_size())
        start, storage = window(offset_bytes, int(source._holder_size()), int(x.element_size()))
        check("set_", shape, strides, start, storage, note=_FROM_ALLOCATION)
    return x.set_(source, None if size is None else list(size), None if stride is None else list(stride),
                  storage_offset * (x if source is None else source).element_size())


def _slice_scatter(x: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1,
                   **kwargs: Any) -> Any:
    """torch.slice_scatter(input, src, dim, start, end, step) as Paddle's
    paddle.slice_scatter(x, value, axes, starts, ends, strides): one axis, as lists; torch's
    None start / end (the whole axis) are 0 and the axis's length. Other keywords (out=) go to
    Paddle as written."""
    return _paddle().slice_scatter(x, src, axes=[dim], starts=[0 if start is None else start],
                                   ends=[x.shape[dim] if end is None else end], strides=[step], **kwargs)


def _issue38_operations() -> dict[str, Operation]:
    """Issue 38, operations people ask about: Paddle's own of torch's name."""
    paddle = _paddle
    return {
        # Paddle's Tensor.repeat is torch's (tiles); its repeat_interleave repeats elements
        "method:repeat": passthrough("repeat"),
        "method:masked_fill": passthrough("masked_fill"),
        "fn:tril": lambda *args, **kwargs: paddle().tril(*args, **kwargs),
        "fn:triu": lambda *args, **kwargs: paddle().triu(*args, **kwargs),
        "fn:slice_scatter": _slice_scatter,
        "fn:arange": lambda *args, **kwargs: paddle().arange(*args, **kwargs),
        # issue 35: the in-place forms Paddle's operator YAML declares (conformance/data/contracts/
        # paddle.yaml) that only these spellings reach, arguments as written
        "fn:erf_": lambda *args, **kwargs: paddle().erf_(*args, **kwargs),
        "fn:expm1_": lambda *args, **kwargs: paddle().expm1_(*args, **kwargs),
        "fn:where_": lambda *args, **kwargs: paddle().where_(*args, **kwargs),
        "fn:softmax_": lambda *args, **kwargs: paddle().nn.functional.softmax_(*args, **kwargs),
        "fn:thresholded_relu_": lambda *args, **kwargs: paddle().nn.functional.thresholded_relu_(*args, **kwargs),
        "method:fill_diagonal_tensor_": passthrough("fill_diagonal_tensor_"),
        # Tensor.where_ (issue 35, Paddle's in-place list): its receiver is the condition, and it
        # writes and returns its first argument, x (paddle.where_(condition, x, y) as a method)
        "method:where_": passthrough("where_"),
        # issue 35: views only Paddle's CPU stride kernels declare (conformance/data/contracts/
        # paddle_strided.yaml) that only these spellings reach, arguments as written
        # issue 35: torch's retain_grad() is Paddle's Tensor.retain_grads() (docs/adapters.md, the audit)
        "method:retain_grad": lambda x: x.retain_grads(),
        "fn:slice": lambda *args, **kwargs: paddle().slice(*args, **kwargs),
        "fn:strided_slice": lambda *args, **kwargs: paddle().strided_slice(*args, **kwargs),
    }
