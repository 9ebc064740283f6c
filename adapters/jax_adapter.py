"""JAX adapter (issue 17). JAX arrays are immutable: item assignment raises (``TypeError:
JAX arrays are immutable ...``), which the adapter declares once (``immutable``), and there
are no ``_`` in-place methods (``absent``, naming the functional form). The functional
updates users write, ``x.at[i].set(v)`` / ``.add`` / ``.mul`` ..., are operations of the
table (``attr:at``, ``op:getitem``, ``method:set``); buffer donation is
``fn:jit_donate_add`` (``jax.jit(add, donate_argnums=0)``).

Memory is measured from buffer pointers (``unsafe_buffer_pointer()``: JAX arrays are dense,
row-major); the behaviour probe cannot write a JAX array (it raises, as item assignment
does), so it writes through the other tensor of a pair where that one is writable (a torch
tensor made by DLPack from a JAX array), else the pointers decide alone.

JAX runs with its defaults: ``jax_enable_x64`` off, so 64-bit dtypes are canonicalised to
32-bit ones (an input of ``float64`` is JAX's ``float32``, as ``jnp.asarray`` of a float64
NumPy array is). jax is imported on first use only."""

from __future__ import annotations

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
    attribute,
    attribute_setter,
    dtype_named,
    is_device_name,
    numpy_style_views,
    of_leaves,
    passthrough,
    split_cuts,
)

_IMMUTABLE = ("JAX arrays are immutable: there are no in-place '_' methods; the functional counterpart "
              "is {counterpart}")
_NO_TAPE = ("JAX has no tape-based autograd on arrays (no requires_grad, .grad, backward() or grad modes); "
            "gradients are functional: jax.grad / jax.vjp of a function")
_NO_LAYERS = ("JAX has no layer objects (torch.nn.Module / paddle.nn.Layer); its activations are functions "
              "in jax.nn (Flax / Equinox provide layers)")

# in-place method -> the functional form a JAX user writes instead
_INPLACE_COUNTERPARTS = {
    "add_": "x + y (or x.at[idx].add(y))", "sub_": "x - y (or x.at[idx].subtract(y))",
    "mul_": "x * y (or x.at[idx].multiply(y))", "div_": "x / y (or x.at[idx].divide(y))",
    "exp_": "jnp.exp(x)", "zero_": "jnp.zeros_like(x) (or x.at[idx].set(0))",
    "fill_": "jnp.full_like(x, v) (or x.at[idx].set(v))",
    "normal_": "jax.random.normal(key, x.shape)", "uniform_": "jax.random.uniform(key, x.shape)",
    "clamp_": "jnp.clip(x, min, max)", "relu_": "jax.nn.relu(x)", "sigmoid_": "jax.nn.sigmoid(x)",
    "abs_": "jnp.abs(x)", "neg_": "-x", "sqrt_": "jnp.sqrt(x)", "copy_": "x.at[...].set(src) (a new array)",
    "scale_": "x * factor", "t_": "x.T", "transpose_": "jnp.swapaxes(x, d0, d1)",
    "resize_": "jnp.resize(x, shape)", "unsqueeze_": "jnp.expand_dims(x, dim)",
    "squeeze_": "jnp.squeeze(x, dim)", "masked_fill_": "jnp.where(mask, value, x)",
    "detach_": "jax.lax.stop_gradient(x)", "requires_grad_": "jax.grad of a function",
}


def _jax() -> Any:
    import jax

    return jax


def _jnp() -> Any:
    import jax.numpy

    return jax.numpy


def _shape(args: tuple) -> tuple:
    """Accept both x.reshape(2, 3) and x.reshape((2, 3)) like torch."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)


def _dtype(name: Any) -> Any:
    """The dtype a case names (one of the suite's), as the string jnp takes."""
    return dtype_named(name)


def _device(name: str) -> Any:
    """A case's device string as the jax.Device a JAX user passes ('cpu' -> jax.devices('cpu')[0]);
    JAX's device_put / to_device take no strings."""
    kind, _, index = name.partition(":")
    platform = "gpu" if kind == "cuda" else kind
    # no such backend in this installation: JAX's own RuntimeError, recorded as the step's
    return _jax().devices(platform)[int(index) if index else 0]


def _view(x: Any, *args: Any) -> Any:
    """view(dtype): JAX's own Array.view(dtype) (NumPy's meaning: the bits reinterpreted);
    view(*shape): the counterpart of a reshape that must not copy, jnp.reshape(copy=False)
    (JAX's view takes a dtype only, as NumPy's)."""
    if len(args) == 1 and isinstance(args[0], str):
        return x.view(_dtype(args[0]))
    return _jnp().reshape(x, _shape(args), copy=False)


def _to(x: Any, target: str) -> Any:
    """JAX has no to(): to(device) is Array.to_device (the array API's, a jax.Device),
    to(dtype) is astype(dtype)."""
    if is_device_name(target):
        return x.to_device(_device(target))
    return x.astype(_dtype(target))


def _t(x: Any) -> Any:
    if x.ndim > 2:
        raise NotApplicable("JAX has no t(); its counterpart .T reverses all axes of an array of more than 2 "
                            "dimensions, where torch's t() takes at most 2")
    return x.T


def _split(x: Any, size: Any, dim: int = 0) -> tuple:
    """torch.split semantics (pieces of ``size``, or a list of sizes) with jnp.split."""
    return tuple(_jnp().split(x, split_cuts(size, x.shape[dim], "jnp.split", "JAX"), axis=dim))


def _view_as_real(x: Any) -> Any:
    """torch.view_as_real: JAX's counterpart is the dtype view of a unit trailing axis, as
    NumPy's (Array.view(real dtype))."""
    return x[..., None].view(x.real.dtype)


def _view_as_complex(x: Any) -> Any:
    if x.shape[-1:] != (2,):
        raise NotApplicable(f"JAX has no view_as_complex; its counterpart, a complex dtype view, expresses a "
                            f"last dimension of size 2 only, not shape {list(x.shape)}")
    return x.view(_jnp().result_type(x.dtype, _jnp().complex64))[..., 0]


def _index(index: Any) -> Any:
    """An index as JAX takes it: a Python list of integers or booleans (advanced indexing,
    x[[0, 2]]) as the jnp array of that list, which is what JAX's refusal of a list asks for
    ("use `arr[array(seq)]` instead of `arr[seq]`", jax-ml/jax#4564): the same index passed
    the way JAX takes it. Tuples are walked (x[0, [1, 2]]); anything else is left as is."""
    if isinstance(index, list):
        return _jnp().array(index)
    if isinstance(index, tuple):
        return tuple(_index(i) for i in index)
    return index


def _getitem(x: Any, index: Any) -> Any:
    return x[_index(index)] if _jax_array(x) else x[index]


def _setitem(x: Any, index: Any, value: Any) -> None:
    if _jax_array(x):
        x[_index(index)] = value  # JAX refuses: its arrays are immutable
    else:
        x[index] = value


def _jax_array(obj: Any) -> bool:
    """Whether obj is a JAX array or one of its .at[] helpers (without importing jax for
    anything else: the operators also see NumPy arrays and Python values)."""
    module = type(obj).__module__
    return ((module.startswith(("jax", "jaxlib")) and hasattr(obj, "shape"))
            or type(obj).__name__ == "_IndexUpdateHelper")


def _jit_donate_add(x: Any, y: Any) -> Any:
    """``jax.jit(lambda a, b: a + b, donate_argnums=0)(x, y)``: x's buffer is donated to the
    computation (JAX may reuse it for the result; x is deleted where it does)."""
    return _donating_add()(x, y)


_DONATING_ADD: Any = None


def _donating_add() -> Any:
    global _DONATING_ADD
    if _DONATING_ADD is None:
        _DONATING_ADD = _jax().jit(lambda a, b: a + b, donate_argnums=0)
    return _DONATING_ADD


class JaxProbes(TensorProbes):
    """The probes for JAX arrays (NumPy arrays: ArrayProbes')."""

    def _is_tensor(self, obj: Any) -> bool:
        return isinstance(obj, _jax().Array)

    def tensor_to_numpy(self, obj: Any) -> Any:
        import numpy as np

        # JAX keeps the host copy of an array once it was read (np.asarray caches it), so an
        # array sharing memory with another framework's tensor (jnp.from_dlpack of torch's)
        # read again after a write through that tensor gave the old values: the buffer as it
        # is now is read through DLPack, where the array is on the CPU (issue 38)
        if obj.dtype.name != "bfloat16" and {d.platform for d in obj.devices()} == {"cpu"}:
            try:
                return np.array(np.from_dlpack(obj), copy=True)
            except (BufferError, TypeError, RuntimeError):
                pass  # (a layout DLPack cannot export: the cached copy is all there is)
        array = np.array(obj, copy=True)
        if array.dtype.name == "bfloat16":
            array = array.astype(np.float32)
        return array

    def tensor_dtype_name(self, obj: Any) -> str:
        return str(obj.dtype)

    def tensor_layout(self, obj: Any) -> Layout:
        """JAX arrays on the CPU are one dense row-major buffer each: the buffer's pointer
        (unsafe_buffer_pointer) and C-order strides. The buffer is the allocation."""
        shape = tuple(int(d) for d in obj.shape)
        itemsize = int(obj.dtype.itemsize)
        strides, step = [], itemsize
        for n in reversed(shape):
            strides.append(step)
            step *= n
        return Layout(int(obj.unsafe_buffer_pointer()), shape, tuple(reversed(strides)), itemsize, None)

    def tensor_probe_fill(self, obj: Any, value: Any) -> None:
        """A JAX array cannot be written: item assignment raises JAX's own TypeError (JAX
        arrays are immutable), which makes the behaviour probe write through the other tensor
        of the pair, or leaves the metadata probe to decide."""
        obj[...] = value  # raises

    def tensor_probe_restore(self, obj: Any, snapshot: Any) -> None:
        obj[...] = snapshot  # raises, as probe_fill: nothing was written


# the methods of jax's _IndexUpdateRef (x.at[idx]): each returns a new array
_AT_METHODS = ("set", "get", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "apply")

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


class JaxAdapter(JaxProbes, Adapter):
    name = "jax"
    module = "jax"
    distribution = "jax"
    install_hint = "pip install 'conformance[jax]'"
    title = "JAX"
    report_rank = 40
    storage_bounds = ("JAX arrays have no strides or storage a case can address: as_strided, as_strided_, set_, "
                      "resize_ and resize_as_ are not applicable")
    exception_types = frozenset({  # every exception class it defines (base.Adapter.exception_types)
        "jax._src.api_util.InternalFloatingPointError", "jax._src.compilation_cache.CacheVerificationError",
        "jax._src.core.ShardingTypeError", "jax._src.dtypes.InvalidInputException",
        "jax._src.error_check.JaxValueError", "jax._src.export.shape_poly.InconclusiveDimensionOperation",
        "jax._src.export.shape_poly.UnexpectedDimVar", "jax._src.interpreters.ad.CustomVJPException",
        "jax._src.interpreters.batching.SpecMatchError", "jax._src.lax.lax.ReshapeExplicitError",
        "jax._src.linear_util.StoreException", "jax._src.named_sharding.DuplicateSpecError",
        "jax._src.shard_map._RepError", "jax._src.shard_map._SpecError", "jax._src.sharding.IndivisibleError",
        "jax._src.sharding_impls.NonUniformShardingError",
        "jax._src.source_info_util.JaxStackTraceBeforeTransformation",
        "jax._src.stages.DeviceAssignmentMismatchError", "jax._src.state.types.TransformedRefAvalError",
        "jax._src.traceback_util.UnfilteredStackTrace", "jax.dtypes.TypePromotionError",
        "jax.errors.ConcretizationTypeError", "jax.errors.InconclusiveDimensionOperation",
        "jax.errors.JAXIndexError", "jax.errors.JAXTypeError", "jax.errors.JaxRuntimeError",
        "jax.errors.JaxprTypeError", "jax.errors.KeyReuseError", "jax.errors.NonConcreteBooleanIndexError",
        "jax.errors.SimplifiedTraceback", "jax.errors.TracerArrayConversionError",
        "jax.errors.TracerBoolConversionError", "jax.errors.TracerIntegerConversionError",
        "jax.errors.UnexpectedTracerError",
    })
    # the capability is autograd on arrays (backward(), .grad): JAX's is functional (jax.grad,
    # jax.vjp), so the corpus's gradient steps are absent here
    autograd = False
    dlpack_export = dlpack_import = True
    # JAX's own refusals of a mutation: item assignment, and an out= argument (jnp's ufuncs
    # raise NotImplementedError for it; its other functions have no out parameter)
    immutable = Immutability(raises=(
        r"^TypeError: JAX arrays are immutable",
        r"^NotImplementedError: out argument of <jnp\.ufunc",
        r"^TypeError: .*got an unexpected keyword argument 'out'",
        # x.real = v, x.imag = v: the array's properties have no setter
        r"^AttributeError: property .*of '(ArrayImpl|\w*Tracer)' object has no setter",
    ))
    # a backward() step is read as jax.grad (jax.vjp with backward(g)) of the steps before it,
    # as a function of the inputs that require grad (conformance/run/gradients.py): a leaf's
    # gradient is observable; requires_grad, is_leaf and version counters are no notion of JAX's
    functional_gradient = "jax.grad / jax.vjp"
    # strides: a jax.Array exposes none (no strides attribute or method; its buffer is XLA's,
    # laid out as XLA chooses), so a layout a case states is not observable on JAX
    unobservable = frozenset({"version_change", "requires_grad", "is_leaf", "strides"})
    error_patterns = {
        # each a message the corpus records (docs/case-format.md, "Error kinds"): a message never
        # met is classified on purpose when a case first meets it (tests/test_error_kinds.py)
        "shape_mismatch": (r"Cannot concatenate arrays with shapes that differ",
                           r"cannot select an axis to squeeze out which has size not equal to one",
                           # .mT (the counterpart of .mH / adjoint()) of a 0-d or 1-D array
                           r"must be at least two-dimensional for matrix_transpose",
                           # broadcast_to (the counterpart of expand) given torch's -1 ("keep this size")
                           # (jax 0.9.2 and earlier: "Incompatible shapes for broadcasting")
                           r"Incompatible (types|shapes) for broadcasting"),
        # Array.view(dtype) of a 0-d array to another element size
        "not_contiguous_view": (r"view\(\) of a 0d array is only supported if the itemsize is unchanged",),
        "type_error": (r"could not be resolved to positional-only arguments",  # jax.nn's custom_jvp functions
                       # Array.flatten(order) given torch's dimensions: the order it reads is refused
                       r"^ValueError: Unexpected value for 'order' argument",
                       # jnp.stack / concatenate declare out= only to refuse it
                       r"The 'out' argument to jnp\.\w+ is not supported"),
        "other": (r"^RuntimeError: Array has been deleted",
                  # reshape(0, -1) of an empty array: the -1 is computed by dividing by 0
                  r"^ZeroDivisionError: integer modulo by zero",
                  r"INVALID_ARGUMENT: Buffer has been deleted or donated",
                  # a method of a concrete array that jax.grad's tracer lacks (x.clone() in the
                  # function a backward() step is read as: conformance/run/gradients.py)
                  r"^AttributeError: LinearizeTracer has no attribute",
                  # jax.grad of a non-scalar loss (a backward() step without a gradient, read
                  # as jax.grad: torch refuses it too, "grad can be implicitly created only for
                  # scalar outputs")
                  r"^TypeError: Gradient only defined for scalar-output functions"),
    }

    @classmethod
    def release_requirements(cls, version: str) -> list[str]:
        return [f"jax[cpu]=={version}"]  # jaxlib, at the same version, comes with the extra

    def load(self) -> None:
        # the modules the table calls into, imported here once, so that what the framework
        # has defined (exception_types) does not depend on which operation ran first
        import jax.dlpack  # noqa: F401
        import jax.nn  # noqa: F401
        import jax.numpy  # noqa: F401

    def error_message(self, exc: BaseException) -> str:
        return _ADDRESS.sub("0x...", super().error_message(exc))

    def global_states(self) -> list[GlobalState]:
        jax = _jax()
        flags = ("jax_enable_x64", "jax_default_matmul_precision", "jax_numpy_dtype_promotion",
                 "jax_numpy_rank_promotion", "jax_debug_nans", "jax_debug_infs", "jax_disable_jit",
                 "jax_default_device", "jax_transfer_guard")

        def get() -> dict[str, Any]:
            return {flag: getattr(jax.config, flag) for flag in flags}

        def restore(saved: dict[str, Any]) -> None:
            for flag, value in saved.items():
                if getattr(jax.config, flag) != value:
                    jax.config.update(flag, value)

        # JAX has no global RNG (its random functions take explicit keys): nothing to seed.
        # Its caches of compiled executables are not emptied per item (recompiling every
        # operation of every item doubles JAX's run): the one case whose outcome depends on
        # them empties them itself (fn:clear_caches, memory.jax.donate.use_after_donation_raises)
        return super().global_states() + [GlobalState("jax.config", get, restore)]

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        # jnp.array copies; a 64-bit dtype becomes JAX's 32-bit one while jax_enable_x64 is
        # off (its default), as for any JAX user converting such data (JAX warns, here unseen)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return _jnp().array(array, dtype=spec.dtype)

    def gradient(self, fn: Any, args: list[Any], wrt: Sequence[int], cotangent: Any = None) -> list[Any]:
        """jax.grad of ``fn`` with respect to the arguments at ``wrt`` (jax.vjp with a
        cotangent), the others held at their values."""
        jax = _jax()
        loss, leaves = of_leaves(fn, args, wrt)
        if cotangent is None:
            return list(jax.grad(loss, argnums=tuple(range(len(leaves))))(*leaves))
        _, vjp = jax.vjp(loss, *leaves)
        return list(vjp(cotangent))

    def operations(self) -> dict[str, Operation]:
        jnp, jax = _jnp, _jax
        ops: dict[str, Operation] = {
            # Python's indexing operators, with a list index as the jnp array JAX asks for
            "op:getitem": _getitem,
            "op:setitem": _setitem,
            # views and reshapes: JAX's own methods where it has them (NumPy's names)
            "method:view": _view,
            "method:reshape": lambda x, *s, **kw: x.reshape(_shape(s), **kw),
            "method:transpose": lambda x, d0, d1: jnp().swapaxes(x, d0, d1),
            "method:permute": lambda x, *d: x.transpose(_shape(d)),
            "method:t": _t,
            "method:flatten": passthrough("flatten"),  # NumPy's flatten(order): dimensions reach it as written
            "method:ravel": passthrough("ravel"),
            "method:squeeze": lambda x, dim=None, **kw: x.squeeze(**{"axis": dim, **kw}),
            "method:unsqueeze": lambda x, dim: jnp().expand_dims(x, dim),
            "method:expand": lambda x, *s: jnp().broadcast_to(x, _shape(s)),
            "method:broadcast_to": lambda x, *s, **kw: jnp().broadcast_to(x, *([_shape(s)] if s else []), **kw),
            "method:diagonal": lambda x, offset=0, dim1=0, dim2=1, **kw: x.diagonal(
                offset, **{"axis1": dim1, "axis2": dim2, **kw}),
            "method:split": _split,
            "method:chunk": lambda x, n, dim=0: tuple(jnp().array_split(x, n, axis=dim)),
            "method:tensor_split": lambda x, sections, dim=0: tuple(jnp().array_split(x, sections, axis=dim)),
            "method:unbind": lambda x, dim=0: tuple(jnp().unstack(x, axis=dim)),
            "method:movedim": lambda x, source, destination: jnp().moveaxis(x, source, destination),
            "method:unfold": absent("JAX has no unfold() and no sliding_window_view; windows are built with "
                                    "indexing or jax.lax.conv_general_dilated_patches"),
            "method:unflatten": absent("JAX has no unflatten(); the counterpart is reshape()"),
            "method:narrow": absent("JAX has no narrow(); the counterpart is basic slicing, "
                                    "x[:, start:start + length], or jax.lax.dynamic_slice"),
            "method:conj": passthrough("conj"),
            "fn:view_as_real": _view_as_real,
            "fn:view_as_complex": _view_as_complex,
            "method:flip": lambda x, dims=None, **kw: jnp().flip(
                x, **{"axis": tuple(dims) if isinstance(dims, (list, tuple)) else dims, **kw}),
            # copies and conversions
            "method:clone": passthrough("clone"),
            "method:copy": passthrough("copy"),
            "method:contiguous": absent("JAX has no contiguous(): its arrays have no strides (always dense); "
                                        "no counterpart"),
            "method:to": _to,
            "method:astype": lambda x, dtype, **kw: x.astype(_dtype(dtype), **kw),
            "method:numpy": absent("JAX arrays have no numpy() method; the counterparts are np.asarray(x) "
                                   "(asarray) and jax.device_get(x)"),
            "method:cpu": absent("JAX arrays have no cpu(); the counterpart is jax.device_put(x, "
                                 "jax.devices('cpu')[0]) or x.to_device(...) (to('cpu'))"),
            "method:sum": lambda x, dim=None, **kw: x.sum(**{"axis": dim, **kw}),
            "method:index_select": lambda x, dim, index: jnp().take(x, index, axis=dim),
            "method:masked_select": lambda x, mask: x[mask],
            "method:gather": lambda x, dim, index: jnp().take_along_axis(x, index, axis=dim),
            "method:take": passthrough("take"),
            "fn:take_along_dim": lambda x, index, dim=None, **kw: jnp().take_along_axis(x, index, axis=dim, **kw),
            "method:nonzero": lambda x: jnp().argwhere(x),
            "method:item": passthrough("item"),
            "method:tolist": passthrough("tolist"),
            "attr:T": attribute("T"),
            "attr:mT": attribute("mT"),
            "attr:real": attribute("real"),
            "attr:imag": attribute("imag"),
            "attr:shape": attribute("shape"),
            # the functional updates: y = x.at[idx].set(v) is attr:at, op:getitem, method:set
            "attr:at": attribute("at"),
            # the update methods of x.at[idx] (and, where an array has a method of that name,
            # the array's: x.min(), x.max())
            **{"method:" + m: passthrough(m) for m in _AT_METHODS},
            # functions: jnp's own, out= passed as written (JAX refuses it: recorded as the
            # refusal of a mutation, `immutable`)
            "fn:add": lambda x, y, **kw: jnp().add(x, y, **kw),
            "fn:mul": lambda x, y, **kw: jnp().multiply(x, y, **kw),
            "fn:exp": lambda x, **kw: jnp().exp(x, **kw),
            "fn:abs": lambda x, **kw: jnp().abs(x, **kw),
            "fn:sqrt": lambda x, **kw: jnp().sqrt(x, **kw),
            "fn:clamp": lambda x, min=None, max=None, **kw: jnp().clip(x, min, max, **kw),
            "fn:sigmoid": lambda x, **kw: jax().nn.sigmoid(x, **kw),
            "fn:relu": lambda x, **kw: jax().nn.relu(x, **kw),
            "fn:leaky_relu": lambda x, negative_slope=0.01, **kw: jax().nn.leaky_relu(x, negative_slope, **kw),
            "fn:elu": lambda x, alpha=1.0, **kw: jax().nn.elu(x, alpha, **kw),
            "fn:hardtanh": _hardtanh,
            "fn:where": lambda c, *xy, **kw: jnp().where(c, *xy, **kw),
            "fn:cat": lambda xs, dim=0, **kw: jnp().concat(xs, axis=dim, **kw),
            "fn:stack": lambda xs, dim=0, **kw: jnp().stack(xs, axis=dim, **kw),
            "fn:tensor": lambda a, dtype=None: jnp().array(a, dtype=_dtype(dtype)),
            # without a dtype, JAX's default: float32 (jnp.empty is zeros: JAX has no
            # uninitialised memory)
            "fn:zeros": lambda *s, dtype=None, **kw: jnp().zeros(_shape(s), dtype=_dtype(dtype), **kw),
            "fn:ones": lambda *s, dtype=None, **kw: jnp().ones(_shape(s), dtype=_dtype(dtype), **kw),
            "fn:empty": lambda *s, dtype=None, **kw: jnp().empty(_shape(s), dtype=_dtype(dtype), **kw),
            # from NumPy: JAX has no from_numpy / as_tensor; jnp.asarray is the conversion a
            # JAX user writes (it copies, on the CPU too)
            "fn:from_numpy": lambda a: jnp().asarray(a),
            "fn:as_tensor": lambda a, dtype=None: jnp().asarray(a, dtype=_dtype(dtype)),
            "fn:from_dlpack": lambda a, **kw: jnp().from_dlpack(a, **kw),
            # JAX's own conversions and placement
            "fn:jnp_asarray": lambda a, dtype=None, copy=None: jnp().asarray(a, dtype=_dtype(dtype), copy=copy),
            "fn:jnp_array": lambda a, dtype=None, copy=True: jnp().array(a, dtype=_dtype(dtype), copy=copy),
            "fn:device_put": lambda a, device=None: jax().device_put(a, None if device is None else _device(device)),
            "fn:stop_gradient": lambda x: jax().lax.stop_gradient(x),
            "fn:jit_donate_add": _jit_donate_add,
            # jax.clear_caches(): which executables are cached decides the dispatch path, and
            # with it what some steps raise (a donated array's use: RuntimeError or ValueError)
            "fn:clear_caches": lambda: jax().clear_caches(),
            "method:is_deleted": passthrough("is_deleted"),
            "method:to_device": lambda x, device: x.to_device(_device(device)),
            # autograd: detach is stop_gradient (the one tape-free counterpart)
            "method:detach": lambda x: jax().lax.stop_gradient(x),
        }
        ops.update(_np_view_operations())  # issue 18, NumPy's documented views (views-np-paddle)
        ops.update(_tensor_view_operations())
        ops.update(NUMPY_CONVERSIONS)
        ops.update(_missing_operations())
        ops.update(_structural_inplace_operations())
        ops.update(_issue38_operations())
        return ops


def _hardtanh(x: Any, min_val: float = -1.0, max_val: float = 1.0, **kw: Any) -> Any:
    """torch's hardtanh(x, min_val, max_val): jax.nn.hard_tanh has the fixed bounds -1, 1;
    other bounds have no jax.nn counterpart."""
    if (min_val, max_val) != (-1.0, 1.0):
        raise NotApplicable(f"jax.nn.hard_tanh clips to [-1, 1] only; bounds ({min_val}, {max_val}) are "
                            "jnp.clip(x, min, max) (clamp)")
    return _jax().nn.hard_tanh(x, **kw)


# Tensor Views page (issue 18, views-torch): JAX's counterparts of the ops torch's page lists
def _tensor_view_operations() -> dict[str, Operation]:
    jnp = _jnp
    immutable = absent("JAX arrays are immutable: there are no in-place '_' methods; the functional counterpart "
                       "is jnp.swapaxes(x, d0, d1)")
    return {
        "method:view_as": lambda x, other: _view(x, *other.shape),
        "method:reshape_as": lambda x, other: x.reshape(other.shape),
        "method:expand_as": lambda x, other: jnp().broadcast_to(x, other.shape),
        "method:as_strided": absent("JAX arrays have no strides: there is no as_strided; the counterparts are "
                                    "indexing and jax.lax.slice"),
        "method:as_strided_": absent("JAX arrays are immutable and have no strides: there is no as_strided_"),
        "method:swapaxes": lambda x, *axes, **kw: jnp().swapaxes(x, *axes, **kw),
        "method:swapdims": lambda x, d0, d1: jnp().swapaxes(x, d0, d1),
        "method:swapaxes_": immutable,
        "method:swapdims_": immutable,
        "method:select": _select,
        "attr:H": lambda x: x.conj().T,
        "attr:mH": lambda x: x.conj().mT,
        "method:adjoint": lambda x: x.conj().mT,
        "method:hsplit": lambda x, *a, **kw: tuple(jnp().hsplit(x, *a, **kw)),
        "method:vsplit": lambda x, *a, **kw: tuple(jnp().vsplit(x, *a, **kw)),
        "method:dsplit": lambda x, *a, **kw: tuple(jnp().dsplit(x, *a, **kw)),
        "method:split_with_sizes": lambda x, sizes, dim=0: _split(x, list(sizes), dim),
        **dict.fromkeys(("method:to_sparse", "method:to_dense", "method:indices", "method:values", "method:coalesce"),
                        absent("JAX arrays have no to_sparse(); JAX's sparse arrays are the experimental "
                               "jax.experimental.sparse.BCOO (BCOO.fromdense(x), its .indices and .data), "
                               "which this adapter does not map")),
        **dict.fromkeys(("method:to_sparse_csr", "method:crow_indices", "method:col_indices"),
                        absent("JAX arrays have no to_sparse_csr(); JAX's CSR arrays are the experimental "
                               "jax.experimental.sparse.BCSR (BCSR.fromdense(x), its .indptr and .indices), "
                               "which this adapter does not map")),
        # test_view_ops.py facts (lists): x.real = v as written; a JAX array's real is a property
        # without a setter, and the AttributeError is JAX's refusal of a mutation (Immutability)
        "setattr:real": attribute_setter("real"),
        "setattr:imag": attribute_setter("imag"),
        # NumPy's no-copy contracts (lists), in jax.numpy's spelling
        "fn:frombuffer": lambda buffer, dtype=None, **kw: jnp().frombuffer(
            buffer, **({} if dtype is None else {"dtype": _dtype(dtype)}), **kw),
        "fn:permute_dims": lambda x, axes: jnp().permute_dims(x, axes),
    }


def _select(x: Any, dim: int, index: int) -> Any:
    """torch's select(dim, index): JAX has no select(); the counterpart is basic indexing,
    x[:, index, ...] with index at position dim."""
    return x[(slice(None),) * (dim % len(x.shape)) + (index, Ellipsis)]


def _missing_operations() -> dict[str, Operation]:
    """What JAX has no counterpart for: the in-place '_' methods and functions (its arrays are
    immutable), the tape-based autograd of the corpus, layers."""
    ops: dict[str, Operation] = {}
    for name, counterpart in _INPLACE_COUNTERPARTS.items():
        ops["method:" + name] = absent(_IMMUTABLE.format(counterpart=counterpart))
    for name, counterpart in (("abs_", "jnp.abs(x)"), ("relu_", "jax.nn.relu(x)"),
                              ("leaky_relu_", "jax.nn.leaky_relu(x)"), ("elu_", "jax.nn.elu(x)"),
                              ("hardtanh_", "jax.nn.hard_tanh(x) / jnp.clip(x, min, max)")):
        ops["fn:" + name] = absent(_IMMUTABLE.format(counterpart=counterpart).replace("methods", "functions"))
    no_tape = absent(_NO_TAPE)
    for key in ("method:backward", "attr:grad", "attr:is_leaf", "attr:requires_grad",
                "setattr:requires_grad", "block:no_grad", "block:enable_grad",
                "block:inference_mode"):
        ops[key] = no_tape
    ops["method:detach_"] = absent(_IMMUTABLE.format(counterpart="jax.lax.stop_gradient(x)"))
    # torch.autograd.grad / paddle.grad as a step (issue 37): read as jax.grad of the steps before
    # it, as backward() is (conformance/run/gradients.py); an array has no graph to call
    ops["fn:autograd_grad"] = no_tape
    for key in ("attr:data", "setattr:data"):
        ops[key] = absent("JAX arrays have no .data (no autograd tape to bypass); the array itself is its data")
    for key in ("fn:ReLU", "fn:LeakyReLU", "fn:ELU", "fn:Hardtanh", "fn:Dropout", "method:eval",
                "method:train", "call"):
        ops[key] = absent(_NO_LAYERS)
    ops["fn:dropout"] = absent("JAX has no dropout function (jax.nn has none; Flax's nnx.Dropout / "
                               "jax.random.bernoulli with an explicit key)")
    ops["method:scale"] = absent("JAX arrays have no scale(); the counterpart is x * factor")
    return ops


# issue 18, the structural in-place methods: the functional form a JAX user writes instead
_STRUCTURAL_INPLACE_COUNTERPARTS = {
    "index_add_": "x.at[index].add(src)", "index_copy_": "x.at[index].set(src)",
    "index_fill_": "x.at[index].set(value)", "index_put_": "x.at[indices].set(values) (.add to accumulate)",
    "index_reduce_": "x.at[index].multiply / .max / .min(src)", "scatter_": "x.at[indices].set(src)",
    "scatter_add_": "x.at[indices].add(src)", "scatter_reduce_": "x.at[indices].add / .multiply / .max / .min(src)",
    "masked_scatter_": "x.at[mask].set(src[:mask.sum()]) (outside jit)", "put_": "x.ravel().at[index].set(src)",
    "fill_diagonal_": "jnp.fill_diagonal(x, value, inplace=False)", "tril_": "jnp.tril(x, k)",
    "triu_": "jnp.triu(x, k)", "bernoulli_": "jax.random.bernoulli(key, p, x.shape)",
    "cauchy_": "jax.random.cauchy(key, x.shape)", "exponential_": "jax.random.exponential(key, x.shape)",
    "geometric_": "jax.random.geometric(key, p, x.shape)", "log_normal_": "jax.random.lognormal(key, sigma, x.shape)",
    "random_": "jax.random.randint(key, x.shape, low, high)", "resize_as_": "jnp.resize(x, other.shape)",
    "set_": "the other array itself", "cumsum_": "jnp.cumsum(x, axis)", "cumprod_": "jnp.cumprod(x, axis)",
    "renorm_": "x * per-slice factors", "addmm_": "beta * x + alpha * (m1 @ m2)", "addbmm_": "x + (b1 @ b2).sum(0)",
    "baddbmm_": "x + b1 @ b2", "addmv_": "x + m @ v", "addr_": "x + jnp.outer(a, b)",
    "addcdiv_": "x + value * t1 / t2", "addcmul_": "x + value * t1 * t2", "conj_physical_": "jnp.conj(x)",
    "put_along_axis_": "jnp.put_along_axis(x, indices, values, axis, inplace=False)",
    "reshape_": "jnp.reshape(x, shape)", "flatten_": "jnp.ravel(x)", "cast_": "x.astype(dtype)",
}


def _structural_inplace_operations() -> dict[str, Operation]:
    return {"method:" + name: absent(_IMMUTABLE.format(counterpart=cp))
            for name, cp in _STRUCTURAL_INPLACE_COUNTERPARTS.items()}
def _np_view_operations() -> dict[str, Operation]:
    """Issue 18 (views-np-paddle): jax.numpy's counterparts of NumPy's documented views
    (new immutable arrays: JAX has no views)."""
    return numpy_style_views(_jnp)


def _issue38_operations() -> dict[str, Operation]:
    """Issue 38, operations people ask about, as jax.numpy spells them (each entry says what it
    calls)."""
    jnp = _jnp
    return {
        # torch's repeat tiles: jnp.tile(x, reps); JAX's own Array.repeat is np.repeat (each
        # element repeated, torch's repeat_interleave), another meaning at the same arguments
        "method:repeat": lambda x, *repeats: jnp().tile(x, _shape(repeats)),
        # jnp.where(mask, value, x): a new array (JAX arrays are immutable)
        "method:masked_fill": lambda x, mask, value: jnp().where(mask, value, x),
        # jnp.tril(m, k): torch's diagonal= is its k
        "fn:tril": lambda m, diagonal=0, **kwargs: jnp().tril(m, diagonal, **kwargs),
        "fn:triu": lambda m, diagonal=0, **kwargs: jnp().triu(m, diagonal, **kwargs),
        "fn:slice_scatter": absent("JAX has no slice_scatter; the counterpart is "
                                   "x.at[(slice(None),) * dim + (slice(start, end, step),)].set(src), a new array"),
        # jnp.arange(start, stop, step, dtype=<the dtype name as jnp takes it>)
        "fn:arange": lambda *args, dtype=None, **kwargs: jnp().arange(
            *args, dtype=None if dtype is None else _dtype(dtype), **kwargs),
    }
