"""array-api-strict adapter: the Python Array API standard's reference implementation
(https://data-apis.org/array-api-strict/). Its ``Array`` wraps a NumPy array and allows only
what the standard specifies: no methods besides the dunders, ``to_device``, ``T``/``mT``;
the operations are functions of the namespace (``reshape(x, shape, copy=)``,
``permute_dims``, ``expand_dims``, ``concat``, ``astype(x, dtype, copy=)`` ...), so every
neutral method maps onto the standard's function of that meaning. No autograd, no version
counters, no ``_`` in-place methods (the standard's in-place forms are the in-place
operators and ``__setitem__``), no ``out=``.

Memory sharing is measured on the NumPy array each ``Array`` keeps privately
(``Array._array``): the probes read it for the memory layout (its data pointer, strides and
the NumPy base it views), which the standard does not expose. Writes of the behaviour probe
go through the public ``__setitem__``. The framework is imported on first use only.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from conformance.adapters.base import (
    NUMPY_CONVERSIONS,
    Adapter,
    GlobalState,
    Layout,
    NotApplicable,
    Operation,
    TensorProbes,
    absent,
    attribute,
    dtype_named,
    is_device_name,
)

_NO_AUTOGRAD = "array-api-strict has no autograd (the Array API standard specifies none)"
_NO_LAYERS = "array-api-strict has no neural-network layers (the Array API standard specifies none)"
_NO_INPLACE_METHOD = ("the Array API standard has no in-place '_' methods; its in-place forms are the in-place "
                      "operators (x += y) and item assignment (x[...] = v)")
# issue 18, the structural in-place methods (the standard has no '_' methods)
_STRUCTURAL_INPLACE = (
    "index_add_ index_copy_ index_fill_ index_put_ index_reduce_ scatter_ scatter_add_ scatter_reduce_ "
    "masked_scatter_ put_ fill_diagonal_ tril_ triu_ bernoulli_ cauchy_ exponential_ geometric_ log_normal_ "
    "random_ resize_as_ set_ cumsum_ cumprod_ renorm_ addmm_ addbmm_ baddbmm_ addmv_ addr_ addcdiv_ addcmul_ "
    "conj_physical_ put_along_axis_ reshape_ flatten_ cast_").split()
_NO_LAYOUT = "the Array API standard exposes no memory layout: it has no contiguous() / strides"
# the dtypes of the standard (array-api-strict has no float16 / bfloat16)
_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float32", "float64", "complex64", "complex128")
# fake devices array-api-strict defines for testing device handling (_devices.py)
_FAKE_DEVICES = ("device1", "device2", "no_float64", "no_x64")


def _xp() -> Any:
    import array_api_strict

    return array_api_strict


def _dtype(name: Any) -> Any:
    """The standard's dtype object a case names (xp.float32), through the suite's names only."""
    name = dtype_named(name)
    if name not in _DTYPES:
        raise NotApplicable(f"the Array API standard has no {name} dtype")
    return getattr(_xp(), name)


def _device(name: Any) -> Any:
    """A case's device name as a Device of array-api-strict: 'cpu' is its CPU_DEVICE, its
    fake devices by name; anything else ('cuda') reaches it as written, and it refuses it."""
    if name == "cpu":
        return _xp().Device("CPU_DEVICE")
    if name in _FAKE_DEVICES:
        return _xp().Device(name)
    return name


def _shape(args: tuple) -> tuple:
    """torch's varargs shape or one sequence, as the tuple the standard requires
    (array_api_strict.reshape refuses a list: "`shape` must be a tuple of ints")."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)


def _view(x: Any, *args: Any) -> Any:
    """view(*shape): a reshape that must not copy, the standard's reshape(x, shape, copy=False).
    view(dtype) reinterprets bytes, which the standard cannot express."""
    if len(args) == 1 and isinstance(args[0], str):
        raise NotApplicable("the Array API standard has no dtype reinterpretation (view(dtype)); astype() converts "
                            "values")
    return _xp().reshape(x, _shape(args), copy=False)


def _reshape(x: Any, *args: Any, **kwargs: Any) -> Any:
    return _xp().reshape(x, _shape(args), **kwargs)


def _transpose(x: Any, d0: int, d1: int) -> Any:
    """torch's transpose(d0, d1) swaps two dimensions: the standard's permute_dims with that
    permutation."""
    axes = list(range(x.ndim))
    axes[d0], axes[d1] = axes[d1], axes[d0]
    return _xp().permute_dims(x, tuple(axes))


def _flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    """torch's flatten(start, end): the standard has no flatten; its counterpart is reshape()
    to the shape with those dimensions merged (a view where the strides allow, as NumPy)."""
    shape = list(x.shape)
    n = len(shape)
    if n == 0:
        return _xp().reshape(x, (1,))
    start, end = start_dim % n, end_dim % n
    merged = shape[:start] + [math.prod(shape[start:end + 1])] + shape[end + 1:]
    return _xp().reshape(x, tuple(merged))


def _squeeze(x: Any, dim: Any = None, **keywords: Any) -> Any:
    """torch's squeeze(): without dim, every dimension of size 1; the standard's squeeze
    requires the axes, so they are named (array_api_strict refuses axis=None). The
    standard's own ``axis=`` is passed as written."""
    if "axis" in keywords:
        return _xp().squeeze(x, **keywords)
    if dim is None:
        dim = tuple(i for i, n in enumerate(x.shape) if n == 1)
    return _xp().squeeze(x, axis=dim, **keywords)


def _expand(x: Any, *args: Any) -> Any:
    """torch's expand(*sizes), -1 keeping a dimension: the standard's broadcast_to."""
    shape = _shape(args)
    lead = len(shape) - x.ndim
    sizes = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    return _xp().broadcast_to(x, sizes)


def _diagonal(x: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """torch's diagonal(offset, dim1, dim2): the standard's linalg.diagonal, which takes the
    diagonals of the last two axes only."""
    if {dim1 % x.ndim, dim2 % x.ndim} != {x.ndim - 2, x.ndim - 1} or dim1 % x.ndim > dim2 % x.ndim:
        raise NotApplicable("the standard's linalg.diagonal() takes the last two axes only, in order; "
                            f"diagonal over dims ({dim1}, {dim2}) has no counterpart")
    return _xp().linalg.diagonal(x, offset=offset)


def _flip(x: Any, dims: Any = None, **keywords: Any) -> Any:
    return _xp().flip(x, **{"axis": tuple(dims) if isinstance(dims, (list, tuple)) else dims, **keywords})


def _to(x: Any, target: str) -> Any:
    """to(device) is the standard's to_device(); to(dtype) its astype() (which copies by default)."""
    if is_device_name(target):
        return x.to_device(_device(target))
    return _xp().astype(x, _dtype(target))


def _astype(x: Any, dtype: Any, **kwargs: Any) -> Any:
    return _xp().astype(x, _dtype(dtype), **kwargs)


def _take(x: Any, index: Any, **kwargs: Any) -> Any:
    """torch's take(): indices into the flattened tensor. The standard's take() of a 1-D array;
    for more dimensions it needs an axis, so the counterpart flattens first (reshape). A case
    that gives the axis (NumPy's take(x, index, axis=)) calls the standard's take as written."""
    xp = _xp()
    if kwargs:
        return xp.take(x, index, **kwargs)
    return xp.take(x if x.ndim == 1 else xp.reshape(x, (-1,)), index, axis=0)


def _take_along_dim(x: Any, index: Any, dim: Any = None, **kw: Any) -> Any:
    xp = _xp()
    if dim is None:  # torch flattens both, as NumPy's axis=None
        return xp.take_along_axis(xp.reshape(x, (-1,)), xp.reshape(index, (-1,)), axis=0, **kw)
    return xp.take_along_axis(x, index, axis=dim, **kw)


def _nonzero(x: Any) -> Any:
    """torch's x.nonzero() is an (n, ndim) array of indices; the standard's nonzero() a tuple of
    ndim index arrays, which stack() makes the same array."""
    xp = _xp()
    return xp.stack(xp.nonzero(x), axis=1)


def _item(x: Any) -> Any:
    """torch's item(): the standard converts a 0-D array with the Python builtins
    (bool/int/float/complex(x)), each refusing an array of more dimensions."""
    xp = _xp()
    if xp.isdtype(x.dtype, "bool"):
        return bool(x)
    if xp.isdtype(x.dtype, "integral"):
        return int(x)
    if xp.isdtype(x.dtype, "real floating"):
        return float(x)
    return complex(x)


def _zeros(fn: str) -> Operation:
    def make(*shape: Any, dtype: Any = None, **kw: Any) -> Any:
        return getattr(_xp(), fn)(_shape(shape), dtype=None if dtype is None else _dtype(dtype), **kw)

    return make


def _xp_asarray(obj: Any, dtype: Any = None, copy: Any = None, device: Any = None) -> Any:
    """The standard's asarray(obj, dtype=, device=, copy=): copy=True always copies, False never
    (or raises), None copies only when it must."""
    return _xp().asarray(obj, dtype=None if dtype is None else _dtype(dtype), copy=copy,
                         device=None if device is None else _device(device))


class ArrayApiStrictProbes(TensorProbes):
    """The probes for array_api_strict.Array (NumPy arrays: ArrayProbes'). An Array keeps its
    data as a private NumPy array (``Array._array``); the memory layout is read from it, since
    the standard exposes none. Identity is the Array object's."""

    def _is_tensor(self, obj: Any) -> bool:
        # asked for any object; an Array exists only once the framework was imported. The
        # class is not exported by the namespace (the standard names no array type)
        module = sys.modules.get("array_api_strict._array_object")
        return module is not None and isinstance(obj, module.Array)

    def _numpy(self, obj: Any) -> Any:
        return obj._array if self._is_tensor(obj) else obj  # the private NumPy array (layout only)

    def tensor_to_numpy(self, obj: Any) -> Any:
        import numpy as np

        # a copy of the values, whatever the Array's device (np.asarray refuses the fake ones)
        return np.array(obj._array, copy=True)

    def tensor_dtype_name(self, obj: Any) -> str:
        return str(obj.dtype).removeprefix("array_api_strict.")

    def shape_of(self, obj: Any) -> tuple[int, ...]:
        return tuple(int(d) for d in obj.shape)

    def layout(self, obj: Any) -> Layout:
        return super().layout(self._numpy(obj))

    def strides_of(self, obj: Any) -> tuple[int, ...] | None:
        # the standard exposes no strides: these are the private NumPy array's, the layout the
        # memory probes read too
        return super().strides_of(self._numpy(obj))

    def overlaps(self, a: Any, b: Any) -> bool:
        return super().overlaps(self._numpy(a), self._numpy(b))

    def tensor_probe_fill(self, obj: Any, value: Any) -> None:
        obj[...] = value  # the standard's __setitem__ (refused where NumPy's memory is read-only)

    def tensor_probe_restore(self, obj: Any, snapshot: Any) -> None:
        obj[...] = _xp().asarray(snapshot, device=obj.device)


class ArrayApiStrictAdapter(ArrayApiStrictProbes, Adapter):
    name = "array_api_strict"
    module = "array_api_strict"
    distribution = "array-api-strict"
    install_hint = "pip install 'conformance[arrayapi]'"
    title = "array-api-strict"
    report_rank = 70
    storage_bounds = ("the Array API standard exposes no strides or storage: as_strided, as_strided_, set_, "
                      "resize_ and resize_as_ are not applicable")
    # array-api-strict defines no exception class of its own: it raises Python's builtins
    # (TypeError, IndexError, ValueError, ...) and lets NumPy's through
    exception_types: frozenset[str] = frozenset()
    dlpack_export = dlpack_import = True
    unobservable = frozenset({"version_change", "grad", "requires_grad", "is_leaf"})
    case_strings = frozenset(_FAKE_DEVICES)
    error_patterns = {
        # the standard's type promotion: no promotion between kinds, Python scalars only of the
        # array's kind, in-place operators and __setitem__ never change the left side's dtype
        # each a message the corpus records (docs/case-format.md, "Error kinds"): a message never
        # met is classified on purpose when a case first meets it (tests/test_error_kinds.py)
        "dtype_cast": (r"scalars can only be promoted with", r"cannot be type promoted together",
                       r"^TypeError: Cannot perform __i\w+__ with dtypes",
                       r"The Array API standard stipulates that casting \S+ to \S+ should not be permitted"),
        "unsupported_dtype": (r"^TypeError: Only [\w -]+ dtypes are allowed in",),
        # x.T (the counterpart of .H) of other than a matrix
        "shape_mismatch": (r"^ValueError: x\.T requires x to have 2 dimensions",
                           r"must be at least 2-dimensional for matrix_transpose"),
        # indices the standard does not specify, which array-api-strict refuses (NumPy would take them)
        "type_error": (r"^IndexError: .*but the multi-axes index only specifies \d+ dimensions",
                       r"^IndexError: Single-axes index .* but only integers, slices",
                       r"^IndexError: Fancy indexing __setitem__ is not supported",
                       # reshape(x, [3, 2]): the standard's shape is a tuple (tests/test_array_api_strict_adapter.py)
                       r"^TypeError: .shape. must be a tuple of ints"),
        "other": (r"^ValueError: Arrays from two different devices",
                  r"^RuntimeError: Can't convert array on the .* device to a NumPy array"),
    }

    def load(self) -> None:
        _xp()

    def device_unavailable(self, device: str) -> str | None:
        return None if device == "cpu" else "array-api-strict runs on the CPU only (its other devices are fakes)"

    def global_states(self) -> list[GlobalState]:
        xp = _xp()
        return super().global_states() + [
            # its flags (api_version, boolean_indexing, data_dependent_shapes,
            # enabled_extensions): process-wide, read by every call
            GlobalState("array_api_strict.flags", xp.get_array_api_strict_flags,
                        lambda flags: xp.set_array_api_strict_flags(**flags)),
        ]

    def make_input(self, spec: Any, device: str) -> Any:
        if spec.requires_grad:
            raise NotApplicable(f"{_NO_AUTOGRAD} (input {spec.name!r} requires grad)")
        if spec.kind != "ndarray" and spec.dtype not in _DTYPES:
            raise NotApplicable(f"the Array API standard has no {spec.dtype} dtype (input {spec.name!r})")
        return super().make_input(spec, device)

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        # a copy: asarray() of a NumPy array would wrap that very array
        return _xp().asarray(array, dtype=_dtype(spec.dtype), copy=True)

    def operations(self) -> dict[str, Operation]:
        xp = _xp
        ops: dict[str, Operation] = {
            # views and reshapes: the standard's functions
            "method:view": _view,
            "method:reshape": _reshape,
            "method:transpose": _transpose,
            "method:permute": lambda x, *d: xp().permute_dims(x, _shape(d)),
            # torch's t() of a 2-D tensor is the standard's .T, which refuses any other ndim
            "method:t": lambda x: x.T,
            "method:flatten": _flatten,
            "method:ravel": lambda x: xp().reshape(x, (-1,)),
            "method:squeeze": _squeeze,
            "method:unsqueeze": lambda x, dim: xp().expand_dims(x, axis=dim),
            "method:expand": _expand,
            "method:broadcast_to": lambda x, *s, **kw: xp().broadcast_to(x, *([_shape(s)] if s else []), **kw),
            "method:diagonal": _diagonal,
            "method:unbind": lambda x, dim=0: xp().unstack(x, axis=dim),
            "method:movedim": lambda x, source, destination: xp().moveaxis(x, source, destination),
            "method:flip": _flip,
            "method:conj": lambda x: xp().conj(x),
            "method:split": absent("the Array API standard has no split(); the counterparts are slicing and "
                                   "unstack()"),
            "method:chunk": absent("the Array API standard has no chunk(); the counterpart is slicing"),
            "method:tensor_split": absent("the Array API standard has no tensor_split(); the counterpart is slicing"),
            "method:unflatten": absent("the Array API standard has no unflatten(); the counterpart is reshape()"),
            "method:narrow": absent("the Array API standard has no narrow(); the counterpart is basic slicing, "
                                    "x[:, start:start + length]"),
            "method:unfold": absent("the Array API standard has no unfold() / sliding windows"),
            "fn:view_as_real": absent("the Array API standard has no view_as_real(); real() and imag() are "
                                      "separate arrays"),
            "fn:view_as_complex": absent("the Array API standard has no view_as_complex() (no dtype views)"),
            # copies and conversions
            "method:clone": lambda x: xp().asarray(x, copy=True),
            "method:copy": lambda x: xp().asarray(x, copy=True),
            "method:contiguous": absent(_NO_LAYOUT),
            "method:to": _to,
            "method:to_device": lambda x, device, **kw: x.to_device(_device(device), **kw),
            "method:astype": _astype,
            "method:sum": lambda x, dim=None, **kw: xp().sum(x, **{"axis": dim, **kw}),
            "method:index_select": lambda x, dim, index: xp().take(x, index, axis=dim),
            "method:masked_select": lambda x, mask: x[mask],
            "method:gather": lambda x, dim, index: xp().take_along_axis(x, index, axis=dim),
            "method:take": _take,
            "fn:take_along_dim": _take_along_dim,
            "method:nonzero": _nonzero,
            "method:item": _item,
            "method:tolist": absent("the Array API standard has no tolist()"),
            "attr:T": attribute("T"),
            "attr:mT": attribute("mT"),
            "attr:shape": attribute("shape"),
            # the standard's real() / imag() are functions, not attributes
            "attr:real": lambda x: xp().real(x),
            "attr:imag": lambda x: xp().imag(x),
            # functions: no out= in the standard; one a case passes reaches the function,
            # which refuses it
            "fn:add": lambda x, y, **kw: xp().add(x, y, **kw),
            "fn:mul": lambda x, y, **kw: xp().multiply(x, y, **kw),
            "fn:exp": lambda x, **kw: xp().exp(x, **kw),
            "fn:abs": lambda x, **kw: xp().abs(x, **kw),
            "fn:sqrt": lambda x, **kw: xp().sqrt(x, **kw),
            "fn:clamp": lambda x, min=None, max=None, **kw: xp().clip(x, min=min, max=max, **kw),
            "fn:where": lambda c, *xy, **kw: xp().where(c, *xy, **kw),
            "fn:cat": lambda xs, dim=0, **kw: xp().concat(xs, axis=dim, **kw),
            "fn:stack": lambda xs, dim=0, **kw: xp().stack(xs, axis=dim, **kw),
            "fn:zeros": _zeros("zeros"),
            "fn:ones": _zeros("ones"),
            "fn:empty": _zeros("empty"),
            # torch.tensor() always copies: asarray(copy=True); as_tensor() shares when it
            # can: asarray(copy=None); from_numpy() always shares: asarray(copy=False)
            "fn:tensor": lambda a, dtype=None: _xp_asarray(a, dtype, copy=True),
            "fn:as_tensor": lambda a, dtype=None: _xp_asarray(a, dtype),
            "fn:from_numpy": lambda a: _xp_asarray(a, copy=False),
            "fn:from_dlpack": lambda a, **kw: xp().from_dlpack(a, **kw),
            # the standard's functions under their own names (xp is the usual name of an
            # array API namespace), for what the neutral keys cannot say (copy=, device=)
            "fn:xp_asarray": _xp_asarray,
            "fn:xp_reshape": lambda x, shape, **kw: xp().reshape(x, shape, **kw),
            "fn:permute_dims": lambda x, axes: xp().permute_dims(x, axes),
            "fn:xp_astype": _astype,
            "fn:xp_from_dlpack": lambda a, **kw: xp().from_dlpack(a, **kw),
            # array_api_strict.Device(name): 'cpu' is its CPU_DEVICE, other names as written
            "fn:xp_device": lambda name: xp().Device("CPU_DEVICE" if name == "cpu" else name),
            "fn:abs_": absent(_NO_INPLACE_METHOD),
            "method:scale": absent("the Array API standard has no scale(); the counterpart is multiply()"),
            "fn:sigmoid": absent("the Array API standard has no sigmoid; the counterpart is 1 / (1 + exp(-x))"),
        }
        ops.update(_np_view_operations())  # issue 18, NumPy's documented views (views-np-paddle)
        ops.update(_tensor_view_operations())
        ops.update(NUMPY_CONVERSIONS)
        ops.update(_missing_operations())
        # issue 18, the structural in-place methods: the standard has none
        ops.update({"method:" + name: absent(_NO_INPLACE_METHOD) for name in _STRUCTURAL_INPLACE})
        ops.update(_issue38_operations())
        return ops


# Tensor Views page (issue 18, views-torch): the Array API standard's counterparts of the ops
# torch's page lists
def _tensor_view_operations() -> dict[str, Operation]:
    xp = _xp
    no_sparse = absent("the Array API standard has no sparse arrays")
    return {
        "method:view_as": lambda x, other: _view(x, *other.shape),
        "method:reshape_as": lambda x, other: _reshape(x, *other.shape),
        "method:expand_as": lambda x, other: _expand(x, *other.shape),
        "method:as_strided": absent(_NO_LAYOUT),
        "method:as_strided_": absent(_NO_INPLACE_METHOD),
        "method:swapaxes": _transpose,
        "method:swapdims": _transpose,
        "method:swapaxes_": absent(_NO_INPLACE_METHOD),
        "method:swapdims_": absent(_NO_INPLACE_METHOD),
        "method:select": _select,
        "attr:H": lambda x: xp().conj(x).T,
        "attr:mH": lambda x: xp().matrix_transpose(xp().conj(x)),
        "method:adjoint": lambda x: xp().matrix_transpose(xp().conj(x)),
        "method:hsplit": absent("the Array API standard has no hsplit(); the counterpart is slicing"),
        "method:vsplit": absent("the Array API standard has no vsplit(); the counterpart is slicing"),
        "method:dsplit": absent("the Array API standard has no dsplit(); the counterpart is slicing"),
        "method:split_with_sizes": absent("the Array API standard has no split_with_sizes(); the counterpart is "
                                          "slicing"),
        "method:to_sparse": no_sparse,
        "method:to_dense": no_sparse,
        "method:indices": no_sparse,
        "method:values": no_sparse,
        "method:coalesce": no_sparse,
        "method:to_sparse_csr": no_sparse,
        "method:crow_indices": no_sparse,
        "method:col_indices": no_sparse,
        **{f"setattr:{part}": absent(f"the Array API standard's arrays have no {part} attribute: {part}(x) is a "
                                     f"function returning a new array, and no part of a complex array can be "
                                     f"assigned; the counterpart is x[...] = <a complex array of the new parts>")
           for part in ("real", "imag")},
    }


def _select(x: Any, dim: int, index: int) -> Any:
    """torch's select(dim, index): the Array API standard has no select(); the counterpart is basic indexing,
    x[:, index, ...] with index at position dim."""
    return x[(slice(None),) * (dim % len(x.shape)) + (index, Ellipsis)]


def _missing_operations() -> dict[str, Operation]:
    """What the standard has no counterpart for: activations and layers, the in-place '_'
    methods and autograd."""
    no_inplace = absent(_NO_INPLACE_METHOD)
    no_grad = absent(_NO_AUTOGRAD)
    ops: dict[str, Operation] = {
        "fn:leaky_relu": absent("the Array API standard has no leaky_relu; the counterpart is "
                                "where(x > 0, x, negative_slope * x)"),
        "fn:leaky_relu_": absent("the Array API standard has no leaky_relu_ (no in-place functions)"),
        "fn:elu": absent("the Array API standard has no elu; the counterpart is where(x > 0, x, alpha * expm1(x))"),
        "fn:elu_": absent("the Array API standard has no elu_ (no in-place functions)"),
        "fn:hardtanh": absent("the Array API standard has no hardtanh; the counterpart is clip(x, min, max)"),
        "fn:hardtanh_": absent("the Array API standard has no hardtanh_ (no in-place functions)"),
        "fn:dropout": absent("the Array API standard has no dropout (and no random numbers)"),
        "fn:relu": absent("the Array API standard has no relu; the counterpart is maximum(x, 0)"),
        "fn:relu_": absent("the Array API standard has no relu_ (no in-place functions)"),
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
                "fn:autograd_grad", "attr:grad", "attr:data", "attr:is_leaf", "attr:requires_grad",
                "setattr:requires_grad", "setattr:data", "block:no_grad", "block:enable_grad", "block:inference_mode"):
        ops[key] = no_grad
    ops["method:numpy"] = absent("the Array API standard has no numpy(); the counterparts are np.asarray(x) "
                                 "(the buffer protocol) and np.from_dlpack(x)")
    ops["method:cpu"] = absent("the Array API standard has no cpu(); the counterpart is "
                               "to_device(CPU_DEVICE)")
    return ops


def _np_view_operations() -> dict[str, Operation]:
    """Issue 18 (views-np-paddle): of NumPy's documented views the standard has flip and
    broadcast_arrays only."""
    xp = _xp
    return {
        "method:fliplr": absent("the Array API standard has no fliplr(); the counterpart is flip(x, axis=1)"),
        "method:flipud": absent("the Array API standard has no flipud(); the counterpart is flip(x, axis=0)"),
        "method:rot90": absent("the Array API standard has no rot90(); the counterparts are flip() and "
                               "permute_dims()"),
        "method:rollaxis": absent("the Array API standard has no rollaxis(); the counterpart is moveaxis()"),
        "fn:broadcast_arrays": lambda *xs: tuple(xp().broadcast_arrays(*xs)),
        "fn:atleast_1d": absent("the Array API standard has no atleast_1d(); the counterpart is reshape()"),
        "fn:atleast_2d": absent("the Array API standard has no atleast_2d(); the counterpart is reshape()"),
        "fn:atleast_3d": absent("the Array API standard has no atleast_3d(); the counterpart is reshape()"),
        "fn:diag": absent("the Array API standard has no diag(); linalg.diagonal() extracts a diagonal, and "
                          "nothing builds a diagonal matrix"),
        "fn:meshgrid": lambda *xs, indexing="ij", **kw: tuple(xp().meshgrid(*xs, indexing=indexing, **kw)),
        "fn:einsum": absent("the Array API standard has no einsum(); the counterparts are tensordot(), matmul() and "
                            "linalg.diagonal()"),
    }


def _arange(*args: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """The standard's arange(start, stop, step, dtype=xp.<name>)."""
    return _xp().arange(*args, dtype=None if dtype is None else _dtype(dtype), **kwargs)


def _issue38_operations() -> dict[str, Operation]:
    """Issue 38, operations people ask about, as the standard spells them."""
    xp = _xp
    return {
        # torch's repeat tiles: the standard's tile(x, reps); its repeat() repeats elements
        "method:repeat": lambda x, *repeats: xp().tile(x, _shape(repeats)),
        # where(mask, value, x): a new array
        "method:masked_fill": lambda x, mask, value: xp().where(mask, value, x),
        # tril(x, k=): torch's diagonal is its k
        "fn:tril": lambda x, diagonal=0, **kwargs: xp().tril(x, k=diagonal, **kwargs),
        "fn:triu": lambda x, diagonal=0, **kwargs: xp().triu(x, k=diagonal, **kwargs),
        "fn:slice_scatter": absent("the Array API standard has no slice_scatter; the counterpart is a copy "
                                   "(asarray(x, copy=True)) then slice assignment y[...] = src"),
        "fn:arange": _arange,
    }
