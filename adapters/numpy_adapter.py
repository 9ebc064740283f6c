"""NumPy adapter. NumPy has no autograd and no ``_`` in-place methods: those operations
are not applicable here, and the counterparts (``out=``, ``+=``, item assignment) are."""

from __future__ import annotations

from typing import Any

from conformance.adapters.base import (
    NUMPY_CONVERSIONS,
    Adapter,
    NotApplicable,
    Operation,
    absent,
    attribute,
    attribute_setter,
    dtype_named,
    is_device_name,
    numpy_style_views,
    passthrough,
    split_cuts,
)
from conformance.adapters.extent import bounded, check, integers

_NO_AUTOGRAD = "NumPy has no autograd"
_NO_LAYERS = "NumPy has no neural-network layers (torch.nn.Module / paddle.nn.Layer)"
_NO_INPLACE_METHOD = ("NumPy arrays have no in-place '_' methods; the counterparts are the out= "
                      "form, augmented assignment and item assignment")


def _np() -> Any:
    import numpy

    return numpy


def _shape(args: tuple) -> tuple:
    """Accept both x.view(2, 3) and x.view((2, 3)) like torch."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)


def _split(x: Any, size: Any, dim: int = 0) -> tuple:
    """torch.split semantics (pieces of ``size``, or a list of piece sizes) with np.split."""
    return tuple(_np().split(x, split_cuts(size, x.shape[dim], "np.split", "NumPy"), axis=dim))


def _view(x: Any, *args: Any) -> Any:
    """view(*shape): a reshape that refuses to copy; view(dtype): ndarray.view(dtype)."""
    if len(args) == 1 and isinstance(args[0], str):
        return x.view(dtype_named(args[0]))
    return x.reshape(_shape(args), copy=False)


def _unfold(x: Any, dim: int, size: int, step: int) -> Any:
    """torch's unfold(dim, size, step): windows of ``size`` every ``step`` along ``dim``, as a
    new last dimension. NumPy's counterpart is sliding_window_view (a view that is read-only
    unless writeable=True is asked for) taken every ``step`` windows."""
    windows = _np().lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    index = [slice(None)] * x.ndim
    index[dim] = slice(None, None, step)
    return windows[tuple(index)]


def _to(x: Any, target: str) -> Any:
    """NumPy has no to(): to(device) is ndarray.to_device (the array API's, NumPy 2: "a no-op
    that returns the same array" for 'cpu', refused for any other device), to(dtype) is
    astype(dtype), the conversion a NumPy user writes (it copies by default)."""
    if is_device_name(target):
        return x.to_device(target)
    return x.astype(dtype_named(target))


def _t(x: Any) -> Any:
    """torch's t(): the transpose of a tensor of at most 2 dimensions. NumPy's counterpart is
    ``.T``, which also reverses every axis of a tensor of more (where torch refuses)."""
    if x.ndim > 2:
        raise NotApplicable("NumPy has no t(); its counterpart .T reverses all axes of an array of more than 2 "
                            "dimensions, where torch's t() takes at most 2")
    return x.T


def _view_as_real(x: Any) -> Any:
    """torch.view_as_real: the (re, im) pairs as a trailing dimension of 2, same memory.
    NumPy spells it as a dtype view of a unit trailing axis."""
    return x[..., None].view(x.real.dtype)


def _view_as_complex(x: Any) -> Any:
    """torch.view_as_complex: a trailing dimension of 2 read as complex, same memory."""
    if x.shape[-1:] != (2,):
        # the dtype view would read another number of pairs: no NumPy call of that meaning
        raise NotApplicable(f"NumPy has no view_as_complex; its counterpart, a complex dtype view, expresses a "
                            f"last dimension of size 2 only, not shape {list(x.shape)}")
    return x.view(_np().result_type(x.dtype, _np().complex64))[..., 0]


class NumpyAdapter(Adapter):
    name = "numpy"
    module = "numpy"
    distribution = "numpy"
    install_hint = "pip install numpy"
    title = "NumPy"
    exception_types = frozenset({  # every exception class it defines (base.Adapter.exception_types)
        "numpy._core._exceptions.UFuncTypeError", "numpy._core._exceptions._ArrayMemoryError",
        "numpy._core._exceptions._UFuncBinaryResolutionError", "numpy._core._exceptions._UFuncCastingError",
        "numpy._core._exceptions._UFuncInputCastingError", "numpy._core._exceptions._UFuncNoLoopError",
        "numpy._core._exceptions._UFuncOutputCastingError", "numpy._core.numerictypes._PreprocessDTypeError",
        "numpy.exceptions.AxisError", "numpy.exceptions.DTypePromotionError", "numpy.exceptions.TooHardError",
        "numpy.lib._iotools.ConverterError", "numpy.lib._iotools.ConverterLockError", "numpy.linalg.LinAlgError",
    })
    report_rank = 30
    storage_bounds = ("as_strided is checked against the memory the array's ultimate base owns (byte_bounds) "
                      "before NumPy is called, which checks nothing; NumPy arrays have no set_, resize_ or "
                      "resize_as_ method (not applicable)")
    dlpack_export = dlpack_import = True
    # no error_patterns of its own: NumPy's messages are classified the same in every framework's
    # run (base.NUMPY_ERRORS, in COMMON_ERRORS, which every adapter applies)
    unobservable = frozenset({"version_change", "grad", "requires_grad", "is_leaf"})
    # meshgrid's indexing names and einsum equations the cases write (issue 18, NumPy's documented views)
    case_strings = frozenset({"ij", "xy", "ii->i", "ij->ji"})

    def load(self) -> None:
        _np()


    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        return array  # NumPy's own tensor type is the array

    def make_input(self, spec: Any, device: str) -> Any:
        if spec.requires_grad:
            raise NotApplicable(f"{_NO_AUTOGRAD} (input {spec.name!r} requires grad)")
        return super().make_input(spec, device)

    def device_unavailable(self, device: str) -> str | None:
        return None if device == "cpu" else "NumPy runs on the CPU only"

    def operations(self) -> dict[str, Operation]:
        np = _np
        ops: dict[str, Operation] = {
            # views and reshapes
            "method:view": _view,
            "method:reshape": lambda x, *s, **kw: x.reshape(_shape(s), **kw),
            "method:transpose": lambda x, d0, d1: np().swapaxes(x, d0, d1),
            "method:permute": lambda x, *d: x.transpose(_shape(d)),
            "method:t": _t,
            # NumPy's own flatten(order='C'): the dimensions of a partial flatten reach it as
            # written and it refuses them (TypeError), which is recorded
            "method:flatten": lambda x, *args, **kwargs: x.flatten(*args, **kwargs),
            "method:ravel": lambda x, *a, **kw: x.ravel(*a, **kw),
            "method:squeeze": lambda x, dim=None, **kw: np().squeeze(x, **{"axis": dim, **kw}),
            "method:unsqueeze": lambda x, dim: np().expand_dims(x, dim),
            "method:expand": lambda x, *s: np().broadcast_to(x, _shape(s)),
            "method:diagonal": lambda x, offset=0, dim1=0, dim2=1, **kw: x.diagonal(
                offset, **{"axis1": dim1, "axis2": dim2, **kw}),
            "method:split": _split,
            "method:chunk": lambda x, n, dim=0: tuple(np().array_split(x, n, axis=dim)),
            "method:tensor_split": lambda x, sections, dim=0: tuple(np().array_split(x, sections, axis=dim)),
            "method:unbind": lambda x, dim=0: np().unstack(x, axis=dim),
            "method:movedim": lambda x, source, destination: np().moveaxis(x, source, destination),
            "method:unfold": _unfold,
            "method:broadcast_to": lambda x, *s, **kw: np().broadcast_to(x, *([_shape(s)] if s else []), **kw),
            "method:unflatten": absent("NumPy has no unflatten(); the counterpart is reshape()"),
            "method:narrow": absent("NumPy has no narrow(); the counterpart is basic slicing, "
                                    "x[:, start:start + length]"),
            "method:conj": lambda x: x.conj(),
            "fn:view_as_real": _view_as_real,
            "fn:view_as_complex": _view_as_complex,
            # torch's flip takes an int or a list of dims; NumPy's axis an int or a tuple
            "method:flip": lambda x, dims=None, **kw: np().flip(
                x, **{"axis": tuple(dims) if isinstance(dims, (list, tuple)) else dims, **kw}),
            # copies and conversions
            "method:clone": lambda x: x.copy(),
            "method:contiguous": lambda x: np().ascontiguousarray(x),
            "method:to": _to,
            "method:astype": lambda x, dtype, **kw: x.astype(dtype_named(dtype), **kw),  # copy=, casting=
            "method:sum": lambda x, dim=None, **kw: x.sum(**{"axis": dim, **kw}),
            "method:index_select": lambda x, dim, index: np().take(x, index, axis=dim),
            "method:masked_select": lambda x, mask: x[mask],
            "method:gather": lambda x, dim, index: np().take_along_axis(x, index, axis=dim),
            "method:take": lambda x, *args, **kwargs: np().take(x, *args, **kwargs),  # axis= too
            "fn:take_along_dim": lambda x, index, dim=None, **kw: np().take_along_axis(x, index, axis=dim, **kw),
            # torch's x.nonzero() is an (n, ndim) array of indices: NumPy's argwhere
            "method:nonzero": lambda x: np().argwhere(x),
            "method:item": lambda x: x.item(),
            "method:tolist": lambda x: x.tolist(),
            "method:copy": lambda x, *a, **kw: x.copy(*a, **kw),
            "attr:T": attribute("T"),
            "attr:mT": attribute("mT"),
            "attr:real": attribute("real"),
            "attr:imag": attribute("imag"),
            "attr:shape": attribute("shape"),
            # functions
            "fn:add": lambda x, y, out=None, **kw: np().add(x, y, out=out, **kw),
            "fn:mul": lambda x, y, out=None: np().multiply(x, y, out=out),
            "fn:exp": lambda x, out=None, **kw: np().exp(x, out=out, **kw),
            "fn:abs": lambda x, out=None, **kw: np().abs(x, out=out, **kw),
            "fn:abs_": absent("NumPy has no abs_(); the counterpart is abs(x, out=x)"),
            "method:scale": absent("NumPy arrays have no scale(); the counterpart is multiply()"),
            "fn:tensor": lambda a, dtype=None: np().array(a, dtype=dtype_named(dtype)),
            "fn:where": lambda c, *xy, **kw: np().where(c, *xy, **kw),  # where(c) too: its nonzero() form
            "fn:cat": lambda xs, dim=0, **kw: np().concatenate(xs, axis=dim, **kw),
            "fn:stack": lambda xs, dim=0, **kw: np().stack(xs, axis=dim, **kw),
            # without a dtype, NumPy's default: float64 (torch and Paddle make float32)
            "fn:zeros": lambda *s, dtype=None, **kw: np().zeros(_shape(s), dtype=dtype_named(dtype), **kw),
            "fn:ones": lambda *s, dtype=None, **kw: np().ones(_shape(s), dtype=dtype_named(dtype), **kw),
            "fn:empty": lambda *s, dtype=None, **kw: np().empty(_shape(s), dtype=dtype_named(dtype), **kw),
            "fn:from_numpy": absent("the input already is a NumPy array"),
            "fn:as_tensor": absent("the input already is a NumPy array"),
            "fn:from_dlpack": lambda a, **kw: np().from_dlpack(a, **kw),
            "fn:sqrt": lambda x, out=None, **kw: np().sqrt(x, out=out, **kw),
            "fn:clamp": lambda x, min=None, max=None, out=None: np().clip(x, min, max, out=out),
            "fn:sigmoid": absent("NumPy has no sigmoid; the counterparts are 1 / (1 + np.exp(-x)) "
                                 "and scipy.special.expit"),
        }
        ops.update(_np_view_operations())  # issue 18, NumPy's documented views (views-np-paddle)
        ops.update(_np_no_copy_operations())
        ops.update(_tensor_view_operations())
        ops.update(NUMPY_CONVERSIONS)
        ops.update(_missing_operations())
        ops.update(_structural_inplace_operations())
        ops.update(_issue38_operations())
        return ops


# Tensor Views page (issue 18, views-torch): NumPy's counterparts of the ops torch's page lists
_NO_SPARSE = ("NumPy has no sparse arrays (the counterparts are scipy.sparse's matrices and arrays, a separate "
              "library)")


def _select(x: Any, dim: int, index: int) -> Any:
    """torch's select(dim, index): NumPy has no select(); the counterpart is basic indexing,
    x[:, index, ...] with index at position dim. The trailing Ellipsis keeps a 0-d result a
    view (x[1, ...]), where x[1] of a 1-D array would be a NumPy scalar, a copy."""
    return x[(slice(None),) * (dim % x.ndim) + (index, Ellipsis)]


@bounded
def _as_strided(x: Any, size: Any, stride: Any, storage_offset: Any = None) -> Any:
    """torch's as_strided(size, stride) with strides in elements: NumPy's
    np.lib.stride_tricks.as_strided takes them in bytes, from the array's first element, and
    checks nothing (measured: as_strided([64], [1]) of two floats reads 62 floats of the heap). The
    elements it would reach are bounded first by the memory x's ultimate base owns (x may
    itself be a view into a larger base, from any element of it)."""
    if storage_offset is not None:
        raise NotApplicable("NumPy's as_strided has no storage offset (it starts at the array's first element); "
                            "the counterpart is as_strided of a sliced array")
    np = _np()
    itemsize = x.itemsize  # what has none (a list) is refused here, as before
    # as_strided makes an array of anything else first (np.array(x, copy=None)): a NumPy
    # scalar (x[0] of a 1-D array) becomes a 0-d array of its own, which bounds the view
    array = x if isinstance(x, np.ndarray) else np.asarray(x)
    before, after = _elements_around(array)
    check("as_strided", size, stride, before, before + after,
          note=" (where the array starts in its base's memory)" if before else "")
    size, stride = integers("as_strided", size, "size"), integers("as_strided", stride, "stride")
    return np.lib.stride_tricks.as_strided(array, tuple(size), tuple(s * itemsize for s in stride))


def _elements_around(x: Any) -> tuple[int, int]:
    """(whole elements of x's dtype before x's first element, and from it on) in the memory
    of x's ultimate base: the last ndarray of the .base chain, through the DummyArray that
    np.lib.stride_tricks.as_strided puts between its result and its input; that array's own
    bytes (np.lib.array_utils.byte_bounds) are memory it owns or was given (a framework's
    tensor, a DLPack capsule)."""
    np = _np()
    # NumPy 2 keeps DummyArray and byte_bounds in these modules; NumPy 1 in stride_tricks and np
    dummy = getattr(getattr(np.lib, "_stride_tricks_impl", np.lib.stride_tricks), "DummyArray", None)
    byte_bounds = getattr(np.lib, "array_utils", np).byte_bounds
    root = x
    while True:
        base = root.base
        if isinstance(base, np.ndarray):
            root = base
        elif dummy is not None and type(base) is dummy and isinstance(base.base, np.ndarray):
            root = base.base
        else:
            break
    low, high = byte_bounds(root)
    start = x.__array_interface__["data"][0]
    return (start - low) // x.itemsize, (high - start) // x.itemsize


def _conj_transpose(x: Any) -> Any:
    """torch's x.H (the conjugate transpose of a matrix): NumPy arrays have no .H (np.matrix
    has); the counterpart is x.conj().T"""
    return x.conj().T


def _tensor_view_operations() -> dict[str, Operation]:
    np = _np
    return {
        "method:view_as": lambda x, other: _view(x, *other.shape),
        "method:reshape_as": lambda x, other: x.reshape(other.shape),
        "method:expand_as": lambda x, other: np().broadcast_to(x, other.shape),
        "method:as_strided": _as_strided,  # bounded by its base's memory (adapters/extent.py)
        "method:swapaxes": lambda x, *axes, **kw: np().swapaxes(x, *axes, **kw),
        "method:swapdims": lambda x, d0, d1: np().swapaxes(x, d0, d1),
        "method:select": _select,
        "attr:H": _conj_transpose,
        "attr:mH": lambda x: x.conj().mT,
        "method:adjoint": lambda x: x.conj().mT,
        "method:hsplit": lambda x, *a, **kw: tuple(np().hsplit(x, *a, **kw)),
        "method:vsplit": lambda x, *a, **kw: tuple(np().vsplit(x, *a, **kw)),
        "method:dsplit": lambda x, *a, **kw: tuple(np().dsplit(x, *a, **kw)),
        "method:split_with_sizes": lambda x, sizes, dim=0: _split(x, list(sizes), dim),
        "method:to_sparse": absent(_NO_SPARSE),
        "method:to_dense": absent(_NO_SPARSE),
        "method:indices": absent(_NO_SPARSE),
        "method:values": absent(_NO_SPARSE),
        "method:coalesce": absent(_NO_SPARSE),
        "method:to_sparse_csr": absent(_NO_SPARSE),
        "method:crow_indices": absent(_NO_SPARSE),
        "method:col_indices": absent(_NO_SPARSE),
        # "a.real = 9" in numpy.real's docs: assigning the real or imaginary part writes the array
        "setattr:real": attribute_setter("real"),
        "setattr:imag": attribute_setter("imag"),
        "method:as_strided_": absent(_NO_INPLACE_METHOD),
        "method:swapaxes_": absent(_NO_INPLACE_METHOD),
        "method:swapdims_": absent(_NO_INPLACE_METHOD),
    }


def _missing_operations() -> dict[str, Operation]:
    """What NumPy has no counterpart for: activations and layers, the in-place '_' methods
    and autograd; each entry says what the counterpart is, where there is one."""
    no_inplace = absent(_NO_INPLACE_METHOD)
    no_grad = absent(_NO_AUTOGRAD)
    ops: dict[str, Operation] = {
        # activations: NumPy has neither the functions nor the layers
        "fn:leaky_relu": absent("NumPy has no leaky_relu; the counterpart is "
                                "np.where(x > 0, x, negative_slope * x)"),
        "fn:leaky_relu_": absent("NumPy has no leaky_relu_; the counterpart is "
                                 "np.multiply(x, negative_slope, out=x, where=x < 0)"),
        "fn:elu": absent("NumPy has no elu; the counterpart is "
                         "np.where(x > 0, x, alpha * np.expm1(x))"),
        "fn:elu_": absent("NumPy has no elu_; the counterpart is "
                          "np.copyto(x, alpha * np.expm1(x), where=x < 0)"),
        "fn:hardtanh": absent("NumPy has no hardtanh; the counterpart is "
                              "np.clip(x, min_val, max_val) (clamp)"),
        "fn:hardtanh_": absent("NumPy has no hardtanh_; the counterpart is "
                               "np.clip(x, min_val, max_val, out=x) (clamp(x, ..., out=x))"),
        "fn:dropout": absent("NumPy has no dropout (no random masking with rescaling in its API)"),
        "fn:relu": absent("NumPy has no relu; the counterpart is np.maximum(x, 0)"),
        "fn:relu_": absent("NumPy has no relu_; the counterpart is np.maximum(x, 0, out=x)"),
        "fn:ReLU": absent(_NO_LAYERS),
        "fn:LeakyReLU": absent(_NO_LAYERS),
        "fn:ELU": absent(_NO_LAYERS),
        "fn:Hardtanh": absent(_NO_LAYERS),
        "fn:Dropout": absent(_NO_LAYERS),
        "method:eval": absent(_NO_LAYERS),
        "method:train": absent(_NO_LAYERS),
        "call": absent(_NO_LAYERS),
    }
    for name in ("add_", "sub_", "mul_", "div_", "exp_", "zero_", "fill_", "normal_",
                 "uniform_", "clamp_", "relu_", "sigmoid_", "abs_", "neg_", "sqrt_", "copy_",
                 "scale_", "t_", "transpose_", "resize_", "unsqueeze_", "squeeze_",
                 "masked_fill_"):
        ops["method:" + name] = no_inplace
    for key in ("method:detach", "method:detach_", "method:requires_grad_", "method:backward",
                "fn:autograd_grad", "method:numpy", "method:cpu", "attr:grad", "attr:data", "attr:is_leaf",
                "attr:requires_grad", "setattr:requires_grad", "setattr:data",
                "block:no_grad", "block:enable_grad", "block:inference_mode"):
        ops[key] = no_grad if "numpy" not in key and "cpu" not in key else absent(
            "a NumPy array has no .numpy() / .cpu(); it already is a host array")
    return ops


# issue 18, the structural in-place methods: NumPy has no '_' methods; the in-place counterpart
# a NumPy user writes (most return None, not the array)
_STRUCTURAL_INPLACE_COUNTERPARTS = {
    "index_add_": "np.add.at(x, index, src)", "index_copy_": "x[index] = src",
    "index_fill_": "x[index] = value", "index_put_": "x[indices] = values (np.add.at to accumulate)",
    "index_reduce_": "np.multiply.at / np.maximum.at / np.minimum.at(x, index, src)",
    "scatter_": "np.put_along_axis(x, index, src, axis)", "scatter_add_": "np.add.at(x, indices, src)",
    "scatter_reduce_": "np.<ufunc>.at(x, indices, src)", "masked_scatter_": "np.place(x, mask, src)",
    "put_": "np.put(x, index, src)", "fill_diagonal_": "np.fill_diagonal(x, value, wrap)",
    "tril_": "x[...] = np.tril(x, k)", "triu_": "x[...] = np.triu(x, k)",
    "bernoulli_": "x[...] = rng.binomial(1, p, x.shape)", "cauchy_": "x[...] = rng.standard_cauchy(x.shape)",
    "exponential_": "x[...] = rng.exponential(1 / lambd, x.shape)", "geometric_": "x[...] = rng.geometric(p, x.shape)",
    "log_normal_": "x[...] = rng.lognormal(mean, std, x.shape)", "random_": "x[...] = rng.integers(low, high, x.shape)",
    "resize_as_": "x.resize(other.shape)", "set_": "none (an ndarray cannot adopt another's buffer)",
    "cumsum_": "np.cumsum(x, axis, out=x)", "cumprod_": "np.cumprod(x, axis, out=x)",
    "renorm_": "none (x *= a per-slice factor)", "addmm_": "x *= beta; x += alpha * (m1 @ m2)",
    "addbmm_": "x += (b1 @ b2).sum(0)", "baddbmm_": "x += b1 @ b2", "addmv_": "x += m @ v",
    "addr_": "x += np.outer(a, b)", "addcdiv_": "x += value * t1 / t2", "addcmul_": "x += value * t1 * t2",
    "conj_physical_": "np.conjugate(x, out=x)", "put_along_axis_": "np.put_along_axis(x, indices, values, axis)",
    "reshape_": "assigning x.shape", "flatten_": "assigning x.shape = (-1,)",
    "cast_": "none (astype() makes a new array)",
}


def _structural_inplace_operations() -> dict[str, Operation]:
    return {"method:" + name: absent(f"NumPy arrays have no {name}() method; the in-place counterpart is {cp}")
            for name, cp in _STRUCTURAL_INPLACE_COUNTERPARTS.items()}


def _recfunctions() -> Any:
    import numpy.lib.recfunctions

    return numpy.lib.recfunctions


def _np_no_copy_operations() -> dict[str, Operation]:
    """NumPy's documented no-copy contracts that no other framework's vocabulary had (lists):
    frombuffer ("a view into the original object"), permute_dims, byteswap(inplace=True),
    asmatrix ("does not make a copy if the input is already a matrix or an ndarray"), the
    structured/unstructured conversions of numpy.lib.recfunctions ("a view is returned if
    possible"), and assigning .shape, which never copies ("Incompatible shape for in-place
    modification" where a copy would be needed)."""
    np = _np
    return {
        "fn:frombuffer": lambda buffer, dtype=None, **kw: np().frombuffer(
            buffer, **({} if dtype is None else {"dtype": dtype_named(dtype)}), **kw),
        "fn:permute_dims": lambda x, *a, **kw: np().permute_dims(x, *a, **kw),
        "method:byteswap": passthrough("byteswap"),
        "fn:asmatrix": lambda data, *a, **kw: np().asmatrix(data, *a, **kw),
        "fn:structured_to_unstructured": lambda arr, *a, copy=False, **kw: (
            _recfunctions().structured_to_unstructured(arr, *a, copy=copy, **kw)),
        "fn:unstructured_to_structured": lambda arr, *a, copy=False, **kw: (
            _recfunctions().unstructured_to_structured(arr, *a, copy=copy, **kw)),
        "setattr:shape": attribute_setter("shape"),
    }


def _np_view_operations() -> dict[str, Operation]:
    """Issue 18 (views-np-paddle): NumPy's documented views of the flip, rot90, rollaxis,
    broadcast_arrays, atleast_nd and diag family, in torch's argument conventions."""
    return {
        **numpy_style_views(_np),
        # "A field is a view of the array data with a given data-type" (offset in bytes)
        "method:getfield": lambda x, dtype, offset=0: x.getfield(dtype_named(dtype), offset),
        "method:set_": absent("NumPy arrays cannot be re-pointed at another array's memory; the counterpart is "
                              "a new view of it, source.view()"),
    }


def _repeat(x: Any, *repeats: Any) -> Any:
    """torch's repeat(*sizes) tiles: np.tile(x, reps). NumPy's own ndarray.repeat(n) repeats
    each element (torch's repeat_interleave), another meaning at the same arguments."""
    return _np().tile(x, _shape(repeats))


def _issue38_operations() -> dict[str, Operation]:
    """Issue 38, operations people ask about."""
    np = _np
    return {
        "method:repeat": _repeat,
        # np.where never writes x: a new array, as torch's out-of-place masked_fill
        "method:masked_fill": lambda x, mask, value: np().where(mask, value, x),
        # torch's diagonal= is NumPy's k
        "fn:tril": lambda m, diagonal=0, **kwargs: np().tril(m, diagonal, **kwargs),
        "fn:triu": lambda m, diagonal=0, **kwargs: np().triu(m, diagonal, **kwargs),
        "fn:slice_scatter": absent("NumPy has no slice_scatter; the counterpart is y = x.copy() then "
                                   "y[(slice(None),) * dim + (slice(start, end, step),)] = src"),
        "fn:arange": lambda *args, **kwargs: np().arange(*args, **kwargs),
    }
