"""What every adapter provides, and the parts they share.

An adapter knows one framework: how to make the case's inputs, an operation table (neutral
key -> callable) and probes of memory, identity, versions and gradients. It knows nothing
about tests, pytest or reports. The framework is imported on first use (:meth:`setup`),
never when this module or the adapter's module is imported.

NumPy arrays appear in every framework's cases (interop), so the NumPy handling of the
probes lives here and framework adapters call it for arrays.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import math
import operator
import re
import sys
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Mapping, Sequence

from conformance.model import DEVICE_NAME, DTYPES, Generated

Operation = Callable[..., Any]

# Sentinel pairs the behavioural probe writes; two different values so that a write is
# seen even where an element already held one of them.
_SENTINELS = {"b": (True, False), "u": (7, 3), "i": (7, -3), "f": (7.25, -3.5), "c": (7.25, -3.5)}



@functools.lru_cache(maxsize=None)
def installed_version(distribution: str) -> str | None:
    """A distribution's version from its metadata, read once per process (a read costs about
    1 ms, and conformance discover asks for it for every program)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None

class NotApplicable(Exception):
    """Raised by an operation that the framework has no counterpart for at these arguments."""


@dataclass(frozen=True)
class Layout:
    """Byte-level description of where a tensor's elements live."""

    data_ptr: int  # address of element [0, 0, ...]
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in bytes
    itemsize: int
    alloc: tuple[int, int] | None  # [start, end) of the whole allocation, when known

    def element_bounds(self) -> tuple[int, int]:
        if 0 in self.shape:
            return (self.data_ptr, self.data_ptr)
        low = self.data_ptr + sum(min(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        high = self.data_ptr + sum(max(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        return (low, high + self.itemsize)

    def allocation(self) -> tuple[int, int]:
        return self.alloc if self.alloc is not None else self.element_bounds()

    def byte_addresses(self) -> Any:
        """Every byte address an element covers (for exact overlap of small tensors)."""
        import numpy as np

        addr = np.array([self.data_ptr], dtype=np.int64)
        for n, s in zip(self.shape, self.strides):
            addr = (addr[:, None] + np.arange(n, dtype=np.int64)[None, :] * s).reshape(-1)
        return np.unique((addr[:, None] + np.arange(self.itemsize, dtype=np.int64)[None, :]).reshape(-1))


EXACT_OVERLAP_LIMIT = 1 << 20  # elements; above this the metadata probe compares byte ranges


def layouts_overlap(a: Layout, b: Layout) -> bool:
    """Exact: do the two tensors have at least one byte of an element in common?"""
    import numpy as np

    (alo, ahi), (blo, bhi) = a.element_bounds(), b.element_bounds()
    if ahi <= blo or bhi <= alo or alo == ahi or blo == bhi:
        return False
    if (_dense(a) and _dense(b)) or _numel(a) > EXACT_OVERLAP_LIMIT or _numel(b) > EXACT_OVERLAP_LIMIT:
        # two dense tensors cover every byte between their bounds, so intersecting bounds
        # mean a shared byte (comparing the byte sets of 10^5 elements took a quarter second)
        return True
    return bool(np.intersect1d(a.byte_addresses(), b.byte_addresses(), assume_unique=True).size)


def _dense(layout: Layout) -> bool:
    """Whether the elements cover every byte from the lowest to the highest (contiguous in
    some order of the dimensions, flipped or not): no gaps between them."""
    expected = layout.itemsize
    for stride, n in sorted((abs(s), n) for n, s in zip(layout.shape, layout.strides) if n > 1):
        if stride != expected:
            return False
        expected *= n
    return True


def _numel(layout: Layout) -> int:
    n = 1
    for d in layout.shape:
        n *= d
    return n


def allocations_intersect(a: Layout, b: Layout) -> bool:
    (alo, ahi), (blo, bhi) = a.allocation(), b.allocation()
    return alo < bhi and blo < ahi


def passthrough(name: str, bound: Callable[..., None] | None = None) -> Operation:
    """A method operation that calls the framework's method of the same name, with the case's
    arguments as written. ``bound``, given the same arguments first, refuses a call that would
    address memory outside the storage it addresses (adapters/extent.py); the entry is then
    marked ``bounds_storage``."""

    def call(receiver: Any, *args: Any, **kwargs: Any) -> Any:
        if bound is not None:
            bound(receiver, *args, **kwargs)
        return getattr(receiver, name)(*args, **kwargs)

    call.__name__ = name
    if bound is not None:
        call.bounds_storage = True  # type: ignore[attr-defined]
    else:  # exactly ``receiver.name(...)``: a compiled mode's function writes it so (run/function.py)
        call.python_syntax = ("method", name)  # type: ignore[attr-defined]
    return call


def attribute(name: str) -> Operation:
    """An attribute read, ``obj.name``, as written (``python_syntax``: conformance.run.function)."""

    def get(obj: Any) -> Any:
        return getattr(obj, name)

    get.__name__ = name
    get.python_syntax = ("attr", name)  # type: ignore[attr-defined]
    return get


def attribute_setter(name: str) -> Operation:
    """An attribute assignment, ``obj.name = value``, as written (``python_syntax``)."""

    def set_(obj: Any, value: Any) -> None:
        setattr(obj, name, value)

    set_.__name__ = "set_" + name
    set_.python_syntax = ("setattr", name)  # type: ignore[attr-defined]
    return set_


def of_leaves(fn: Callable[..., Any], args: Sequence[Any], wrt: Sequence[int]
              ) -> tuple[Callable[..., Any], list[Any]]:
    """``fn`` as a function of the arguments at ``wrt`` only, the others held at their values
    in ``args``, and those arguments: what a functional gradient (jax.grad, mindspore.grad)
    differentiates, position by position (Adapter.gradient)."""
    def of(*leaves: Any) -> Any:
        full = list(args)
        for i, leaf in zip(wrt, leaves):
            full[i] = leaf
        return fn(*full)

    return of, [args[i] for i in wrt]


def absent(reason: str) -> Operation:
    """An entry for an operation this framework does not have: the item is not applicable."""

    def call(*args: Any, **kwargs: Any) -> Any:
        raise NotApplicable(reason)

    call.not_applicable = reason  # type: ignore[attr-defined]
    return call


def refusal(message: str) -> Operation:
    """An entry that refuses a mutation by itself (:class:`MutationRefused`): what an
    immutable framework's adapter puts where its framework would not refuse on its own."""

    def call(*args: Any, **kwargs: Any) -> Any:
        raise MutationRefused(message)

    call.refuses = message  # type: ignore[attr-defined]
    return call


def dtype_named(name: Any, default: str | None = None) -> str | None:
    """A dtype a case names, which must be one of the suite's dtypes (model.DTYPES): the one
    way a case string reaches a framework's dtype parser. Anything else is refused here, so
    that no case string is looked up on a framework module (``getattr(torch, name)``
    imports submodules) or parsed by NumPy (``'V2000000000'`` asks for gigabytes per
    element). The loader refuses such strings first; this holds for cases made in code."""
    if name is None:
        return default
    if not isinstance(name, str) or name not in DTYPES:
        raise TypeError(f"{name!r} is not a dtype of the suite; the dtypes are {', '.join(DTYPES)}")
    return name


def numpy_style_views(xp: Callable[[], Any]) -> dict[str, Operation]:
    """The entries of NumPy's documented views (issue 18) for a namespace that spells them
    as NumPy does (numpy, jax.numpy, tf.experimental.numpy), in torch's argument
    conventions. ``xp`` returns the namespace when an entry is called: nothing is imported
    here. An adapter overrides what its namespace lacks or spells otherwise."""
    return {
        "method:fliplr": lambda x, *a, **kw: xp().fliplr(x, *a, **kw),
        "method:flipud": lambda x, *a, **kw: xp().flipud(x, *a, **kw),
        "method:rot90": lambda x, k=1, dims=(0, 1), **kw: xp().rot90(x, k, **{"axes": tuple(dims), **kw}),
        "method:rollaxis": lambda x, *a, **kw: xp().rollaxis(x, *a, **kw),
        "fn:broadcast_arrays": lambda *xs, **kw: tuple(xp().broadcast_arrays(*xs, **kw)),
        "fn:atleast_1d": lambda *xs: xp().atleast_1d(*xs),
        "fn:atleast_2d": lambda *xs: xp().atleast_2d(*xs),
        "fn:atleast_3d": lambda *xs: xp().atleast_3d(*xs),
        "fn:diag": lambda x, diagonal=0, **kw: xp().diag(x, diagonal, **kw),
        # torch's indexing default ('ij'), not NumPy's ('xy'); other keywords (copy=) as written
        "fn:meshgrid": lambda *xs, indexing="ij", **kw: tuple(xp().meshgrid(*xs, indexing=indexing, **kw)),
        "fn:einsum": lambda equation, *xs, **kw: xp().einsum(equation, *xs, **kw),
    }


def split_cuts(size: Any, n: int, function: str, framework: str) -> list[int]:
    """The indices at which NumPy-style ``split`` (np.split, jnp.split: it cuts at indices)
    cuts a dimension of size ``n`` into torch.split's pieces: pieces of ``size``, or a list
    of piece sizes. A list that does not add up to ``n`` is not applicable (the reason names
    ``function`` and ``framework``): torch refuses it, and the cuts it would make give
    another partition, so there is no call of that meaning."""
    if isinstance(size, (list, tuple)):
        if sum(size) != n:
            raise NotApplicable(f"{function} cuts at indices: split sizes {list(size)} that do not sum to the "
                                f"dimension's size {n} have no {framework} counterpart")
        return [sum(size[:k]) for k in range(1, len(size))]
    return list(range(size, n, size))


def is_device_name(value: Any) -> bool:
    """'cpu', 'cuda' or 'cuda:N': the device strings a case may pass (to('cpu'))."""
    return isinstance(value, str) and DEVICE_NAME.fullmatch(value) is not None


def _np_asarray(obj: Any, dtype: Any = None, copy: Any = None, **keywords: Any) -> Any:
    import numpy

    return numpy.asarray(obj, dtype=dtype_named(dtype), copy=copy, **keywords)


def _np_array(obj: Any, dtype: Any = None, copy: Any = True, **keywords: Any) -> Any:
    import numpy

    return numpy.array(obj, dtype=dtype_named(dtype), copy=copy, **keywords)


# np.asarray(t) / np.array(t) of whatever tensor a case holds: the same NumPy call in
# every framework's cases (it is NumPy's conversion protocol that is under test).
NUMPY_CONVERSIONS: Mapping[str, Operation] = {"fn:asarray": _np_asarray, "fn:array": _np_array}


# Python's operators, as operations of the table like any other: a step's ``x + y`` is
# ``op:add``, ``-x`` ``op:neg``, ``x > 0`` ``op:gt``, ``x[i]`` ``op:getitem``, ``x[i] = v``
# ``op:setitem`` and ``x += y`` ``op:iadd`` (on an item: op:getitem, op:iadd, op:setitem). Every
# adapter's table starts from these, Python's own semantics (the operator module, so the
# framework's dunder methods decide); an adapter overrides an entry to map it otherwise (an
# immutable framework's refusal, a counterpart, absent()). The names after "op:" are the
# operator module's, which the step parser (conformance.load.steps) produces.
BINARY_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor")
INPLACE_OPERATORS = tuple("i" + name.rstrip("_") for name in BINARY_OPERATORS)  # iadd, ..., iand, ior, ixor
PYTHON_OPERATORS: Mapping[str, Operation] = {
    "op:" + name: getattr(operator, name)
    for name in (*BINARY_OPERATORS, "neg", "pos", "invert", "gt", "lt", "ge", "le", "eq", "ne", "getitem",
                 "setitem", *INPLACE_OPERATORS)
}
# how each reads in a step, for messages and the operations table
OPERATOR_SYMBOLS: Mapping[str, str] = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**", "matmul": "@",
    "and_": "&", "or_": "|", "xor": "^", "neg": "-", "pos": "+", "invert": "~", "gt": ">", "lt": "<", "ge": ">=",
    "le": "<=", "eq": "==", "ne": "!=", "getitem": "x[...]", "setitem": "x[...] = v",
    **{f"i{name.rstrip('_')}": f"{symbol}=" for name, symbol in (
        ("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"), ("mod", "%"), ("pow", "**"),
        ("matmul", "@"), ("and_", "&"), ("or_", "|"), ("xor", "^"))},
}


class MutationRefused(Exception):
    """The refusal an adapter raises itself for a mutation its framework cannot do (its
    arrays are immutable). The engine records it as the step's error of kind ``immutable``,
    as it records the framework's own refusal that :attr:`Adapter.immutable` declares."""


@dataclass(frozen=True)
class Immutability:
    """How a framework whose arrays cannot be changed (JAX, TensorFlow) refuses a mutation:
    an adapter's one declaration of it (:attr:`Adapter.immutable`).

    ``raises``: regexes searched over ``"ExceptionType: message"``, as ``error_patterns``,
    that recognise the framework's own refusal wherever a step meets it (JAX:
    ``r"^TypeError: .*JAX arrays are immutable"``). ``refuse``: the adapter refuses by itself
    instead, before the framework is asked: every item assignment (``op:setitem``) and
    attribute assignment (``setattr:NAME``) of its table raises :class:`MutationRefused`
    with this message. Either way the engine records the step's error with kind
    ``immutable``: that is the framework's observed behaviour, and no case needs an
    override for it. Augmented assignment keeps Python's semantics (``x += y`` binds ``x +
    y`` to ``x`` for a type without in-place operators); on an item it ends in the refused
    ``op:setitem``."""

    raises: tuple[str, ...] = ()
    refuse: str | None = None


@dataclass(frozen=True)
class GlobalState:
    """One piece of process-wide framework state a case can change, and how to read and
    write it back."""

    name: str
    get: Callable[[], Any]
    set: Callable[[Any], object]  # what a setter returns (np.seterr: the old state) is not used
    # restored whether or not it changed: state that cannot be compared cheaply (RNGs)
    always_restore: bool = False
    # for state that changes by itself as cases run, so that restoring what the previous
    # item left is not enough (warn-once flags, warning registries): puts it as every item
    # must start, the value a fresh process has. Called after the state was saved; the saved
    # value is written back after the item as for any other state.
    reset: Callable[[], None] | None = None


def attributes_state(name: str, holder: Any) -> GlobalState:
    """State kept as the instance attributes of one object (torch's and Paddle's print
    options: their set_printoptions writes attributes over class defaults), so that its
    __dict__ is the whole state."""

    def restore(saved: dict[str, Any]) -> None:
        vars(holder).clear()
        vars(holder).update(saved)

    return GlobalState(name, lambda: dict(vars(holder)), restore)


def forget_shown_warnings() -> None:
    """Empty every warning registry, as in a fresh process: each module's
    ``__warningregistry__`` (what the "default" and "module" actions already showed) and the
    once registry. CPython clears a registry when it next consults it if the filters changed
    since it was filled; entering and leaving ``catch_warnings`` count as changes. One step,
    whatever the number of modules, and registries outside ``sys.modules`` (code run with
    its own globals) included."""
    with warnings.catch_warnings():
        pass


def python_warnings_state() -> GlobalState:
    """Python's warning machinery, which every framework warns through. The filters (and the
    default action) are saved and written back: a library may add a filter while it runs
    (Paddle's static-graph type promotion warns, then adds an "ignore" filter for that
    warning: paddle/base/layers/math_op_patch.py). The registries are reset, so a warning
    shown once per location or once per process is shown again in every item."""

    # the module's documented state: filters (a list) and defaultaction, which the stubs omit
    module: Any = warnings

    def get() -> tuple[Any, list[Any], str]:
        return module.filters, list(module.filters), module.defaultaction

    def restore(saved: tuple[Any, list[Any], str]) -> None:
        filters, content, default = saved
        filters[:] = content
        module.filters = filters
        module.defaultaction = default
        forget_shown_warnings()  # as warnings.filterwarnings() does after changing the list

    return GlobalState("python.warnings", get, restore, reset=forget_shown_warnings)


class ArrayProbes:
    """The probes of memory, identity, versions and gradients, for NumPy arrays: NumPy arrays
    appear in every framework's cases (interop), so every adapter has these. A framework with
    tensors of its own answers for them through :class:`TensorProbes`."""

    def is_array(self, obj: Any) -> bool:
        import numpy as np

        return isinstance(obj, np.ndarray)

    def to_numpy(self, obj: Any) -> Any:
        """A NumPy copy of the values (detached, on the host)."""
        import numpy as np

        return np.array(obj, copy=True)

    def dtype_name(self, obj: Any) -> str:
        return str(obj.dtype)

    def shape_of(self, obj: Any) -> tuple[int, ...]:
        return tuple(int(d) for d in obj.shape)

    def strides_of(self, obj: Any) -> tuple[int, ...] | None:
        """The element strides the framework exposes (the ``strides`` kind), in elements, not
        bytes; None where it exposes none for ``obj``. NumPy: ``strides`` over ``itemsize``
        (None for a byte stride that is no whole number of elements: a view made with
        as_strided or of a structured dtype's field)."""
        size = int(obj.itemsize)
        strides = tuple(int(s) for s in obj.strides)
        if size == 0 or any(s % size for s in strides):
            return None
        return tuple(s // size for s in strides)

    def layout(self, obj: Any) -> Layout:
        import numpy as np

        root = obj
        while isinstance(root.base, np.ndarray):
            root = root.base
        ptr = obj.__array_interface__["data"][0]
        root_layout = Layout(root.__array_interface__["data"][0], root.shape, root.strides,
                             root.itemsize, None)
        return Layout(ptr, obj.shape, obj.strides, obj.itemsize, root_layout.element_bounds())

    def same_allocation(self, a: Any, b: Any) -> bool:
        return allocations_intersect(self.layout(a), self.layout(b))

    def recorded_base(self, obj: Any) -> Any:
        """The array the framework itself records as owning ``obj``'s memory when it records
        obj as a view, else None (the ``recorded_view`` kind). NumPy: the last array of the
        ``.base`` chain. A framework without such a record raises NotImplementedError, saying so."""
        import numpy as np

        if not isinstance(obj, np.ndarray):
            raise NotImplementedError(f"{type(obj).__module__.partition('.')[0]} records no views "
                                      "(no public base of a view)")
        root = _recorded_owner(obj)
        if root is None:
            return None
        while (owner := _recorded_owner(root)) is not None:
            root = owner
        return root

    def overlaps(self, a: Any, b: Any) -> bool:
        import numpy as np

        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return bool(np.shares_memory(a, b))
        return layouts_overlap(self.layout(a), self.layout(b))

    def grad(self, obj: Any) -> Any:
        return None

    def requires_grad(self, obj: Any) -> bool | None:
        return None

    def is_leaf(self, obj: Any) -> bool | None:
        return None

    def version_of(self, obj: Any) -> int | None:
        return None

    def probe_fill(self, obj: Any, value: Any) -> None:
        """Write ``value`` into every element, bypassing autograd. May raise (read-only)."""
        obj[...] = value

    def probe_restore(self, obj: Any, snapshot: Any) -> None:
        obj[...] = snapshot

    def sentinels(self, obj: Any) -> tuple[Any, Any]:
        import numpy as np

        return _SENTINELS[np.dtype(self.to_numpy(obj).dtype).kind]


class TensorProbes(ArrayProbes):
    """The probes of a framework that has tensors of its own, beside NumPy arrays. The dispatch
    is here, once: each probe asks :meth:`_is_tensor` and answers with the framework's
    ``tensor_<probe>`` for its own tensors, with NumPy's (:class:`ArrayProbes`) for anything
    else. A framework's probes class defines ``_is_tensor`` and the ``tensor_*`` probes where
    its tensors answer otherwise than NumPy's would (each defaults to NumPy's: no gradient,
    no version counter, ``np.array(obj)``), but ``tensor_strides_of``, which defaults to None
    (no strides) unless the framework exposes them)."""

    def _is_tensor(self, obj: Any) -> bool:
        raise NotImplementedError

    def is_array(self, obj: Any) -> bool:
        return self._is_tensor(obj) or super().is_array(obj)

    def to_numpy(self, obj: Any) -> Any:
        return self.tensor_to_numpy(obj) if self._is_tensor(obj) else super().to_numpy(obj)

    def dtype_name(self, obj: Any) -> str:
        return self.tensor_dtype_name(obj) if self._is_tensor(obj) else super().dtype_name(obj)

    def shape_of(self, obj: Any) -> tuple[int, ...]:
        return self.tensor_shape_of(obj) if self._is_tensor(obj) else super().shape_of(obj)

    def strides_of(self, obj: Any) -> tuple[int, ...] | None:
        return self.tensor_strides_of(obj) if self._is_tensor(obj) else super().strides_of(obj)

    def layout(self, obj: Any) -> Layout:
        return self.tensor_layout(obj) if self._is_tensor(obj) else super().layout(obj)

    def recorded_base(self, obj: Any) -> Any:
        return self.tensor_recorded_base(obj) if self._is_tensor(obj) else super().recorded_base(obj)

    def grad(self, obj: Any) -> Any:
        return self.tensor_grad(obj) if self._is_tensor(obj) else super().grad(obj)

    def requires_grad(self, obj: Any) -> bool | None:
        return self.tensor_requires_grad(obj) if self._is_tensor(obj) else super().requires_grad(obj)

    def is_leaf(self, obj: Any) -> bool | None:
        return self.tensor_is_leaf(obj) if self._is_tensor(obj) else super().is_leaf(obj)

    def version_of(self, obj: Any) -> int | None:
        return self.tensor_version_of(obj) if self._is_tensor(obj) else super().version_of(obj)

    def probe_fill(self, obj: Any, value: Any) -> None:
        if self._is_tensor(obj):
            self.tensor_probe_fill(obj, value)
        else:
            super().probe_fill(obj, value)

    def probe_restore(self, obj: Any, snapshot: Any) -> None:
        if self._is_tensor(obj):
            self.tensor_probe_restore(obj, snapshot)
        else:
            super().probe_restore(obj, snapshot)

    def sentinels(self, obj: Any) -> tuple[Any, Any]:
        return self.tensor_sentinels(obj) if self._is_tensor(obj) else super().sentinels(obj)

    def tensor_to_numpy(self, obj: Any) -> Any:
        return super().to_numpy(obj)

    def tensor_dtype_name(self, obj: Any) -> str:
        return super().dtype_name(obj)

    def tensor_shape_of(self, obj: Any) -> tuple[int, ...]:
        return super().shape_of(obj)

    def tensor_strides_of(self, obj: Any) -> tuple[int, ...] | None:
        # not NumPy's: a framework's tensors expose strides only where it says so (torch's
        # stride(), Paddle's get_strides()); JAX and TensorFlow arrays have none
        return None

    def tensor_layout(self, obj: Any) -> Layout:
        return super().layout(obj)

    def tensor_recorded_base(self, obj: Any) -> Any:
        return super().recorded_base(obj)

    def tensor_grad(self, obj: Any) -> Any:
        return super().grad(obj)

    def tensor_requires_grad(self, obj: Any) -> bool | None:
        return super().requires_grad(obj)

    def tensor_is_leaf(self, obj: Any) -> bool | None:
        return super().is_leaf(obj)

    def tensor_version_of(self, obj: Any) -> int | None:
        return super().version_of(obj)

    def tensor_probe_fill(self, obj: Any, value: Any) -> None:
        super().probe_fill(obj, value)

    def tensor_probe_restore(self, obj: Any, snapshot: Any) -> None:
        super().probe_restore(obj, snapshot)

    def tensor_sentinels(self, obj: Any) -> tuple[Any, Any]:
        return super().sentinels(obj)


class Adapter(ArrayProbes):
    """Base class. Subclasses set the class attributes and implement the framework parts
    (the framework's import, its operation table, its global state, its probes)."""

    name: ClassVar[str]
    module: ClassVar[str]  # importable name, checked with find_spec (no import)
    distribution: ClassVar[str]  # installed distribution, for its version without importing
    install_hint: ClassVar[str]
    # what the framework is called in words ("PyTorch"); the name when not set
    title: ClassVar[str | None] = None
    # where its column goes in the reports: lower first, equal ranks (every adapter that
    # sets none) by name
    report_rank: ClassVar[int] = 1000
    # capabilities, declared here and read by the registry (conformance.registry.Framework):
    # whether the framework has autograd on its tensors (backward(), .grad, requires_grad: a
    # functional one, jax.grad or tf.GradientTape, is not that); the case devices it can run on at all (whether
    # this installation can is device_unavailable()'s business); DLPack: whether its tensors
    # can be handed to another framework's from_dlpack (export; the registry then puts
    # fn:<other>_from_dlpack in this table), and whether its table's fn:from_dlpack takes
    # another framework's (import; the registry then makes fn:<name>_from_dlpack for every
    # exporter's table)
    autograd: ClassVar[bool] = False
    # a framework without autograd on its tensors whose gradients are functional: its
    # gradient in words ("jax.grad / jax.vjp"), and gradient() computes one. A case's
    # backward() step is then read as the gradient of the steps before it, as a function of
    # the inputs that require grad (conformance/run/gradients.py; docs/case-format.md)
    functional_gradient: ClassVar[str | None] = None
    device_kinds: ClassVar[tuple[str, ...]] = ("cpu",)
    dlpack_export: ClassVar[bool] = False
    dlpack_import: ClassVar[bool] = False
    # True: its items run in a sandbox child of their own, not the one the frameworks share:
    # it cannot be imported into a process in every order (conformance.run.sandbox)
    own_process: ClassVar[bool] = False
    # True: each of its items runs in a process of its own, forked from a sandbox child that
    # has imported the framework, set this adapter up and run warm(), and nothing else (a fork
    # server: every item starts from that state, without the import's cost): a framework that
    # keeps process-wide state no call can clear, which changes what an item does depending
    # on the items before it (conformance.run.sandbox)
    process_per_item: ClassVar[bool] = False
    # frameworks imported (where installed) before this one, in one process: another
    # framework that crashes a process importing it after this one (TensorFlow: Paddle);
    # setup() imports them first, so that the order never depends on which items ran before
    imports_first: ClassVar[tuple[str, ...]] = ()
    # A compiled mode (issue 19): the name of the registered framework whose cases this
    # adapter runs with each case's steps as one compiled function (its table, probes and
    # errors are that framework's; its overrides apply first, then this mode's own); None for
    # an eager framework. The adapter's compile(fn) returns the compiled function
    compiles: ClassVar[str | None] = None
    # A framework whose adapter derives from another registered framework's (not a compiled
    # mode): the framework whose case overrides apply to its items first, then its own
    # (``"numpy"``: a case's numpy override holds for it too), or None: only its own. It must
    # say which, in its class: the registry refuses a derived adapter that leaves it unsaid,
    # since an override silently not applying fails items the parent passes
    overrides_from: ClassVar[str | None] = None
    # None: the framework's arrays can be changed. A framework whose arrays are immutable
    # declares here, once, how it refuses a mutation (Immutability); the engine records the
    # refusal as the step's error of kind "immutable"
    immutable: ClassVar[Immutability | None] = None
    # expectation properties this framework has no notion of (e.g. NumPy: version
    # counters); the engine records them as "not observable" instead of comparing
    unobservable: ClassVar[frozenset[str]] = frozenset()
    # neutral error kind -> regexes over "ExceptionType: message"
    error_patterns: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    # strings this adapter's operations take as arguments, besides dtype and device names
    # (model.DTYPES, model.DEVICE_NAME): the loader refuses any other string in a step
    case_strings: ClassVar[frozenset[str]] = frozenset()
    # how its table bounds the memory an operation addresses by a case's numbers (sizes,
    # strides, an offset) or adopts with another tensor's storage (adapters/extent.py,
    # extent.ADDRESSING): one line, which tests/security/test_storage_bounds.py requires of
    # every built-in adapter (a compiled mode inherits the framework's, with its table)
    storage_bounds: ClassVar[str | None] = None
    # the exception classes the framework defines, by qualified name ("module.Class", as the
    # engine records the type of what a step raised): these (written whole or by their class
    # name) and Python's builtin exceptions are the names an expectation's error.<name>.type
    # may give; the loader refuses any other (CF013). None: not declared, not checked.
    # tests/test_exception_types.py keeps the built-in adapters' lists equal to what their
    # framework defines once imported (warnings aside)
    exception_types: ClassVar[frozenset[str] | None] = None

    @classmethod
    def lineage(cls) -> tuple[str, ...]:
        """The frameworks whose case overrides apply before this adapter's own, in that order:
        for a compiled mode, the framework it compiles, then each compiled mode its class
        derives from (torch_inductor: torch, torch_compile); for a framework derived from
        another, the one it names in :attr:`overrides_from`; () for any other."""
        if not cls.compiles:
            return (cls.overrides_from,) if cls.overrides_from else ()
        modes = [c.__dict__["name"] for c in cls.__mro__[1:]
                 if getattr(c, "compiles", None) == cls.compiles and "name" in c.__dict__]
        return (cls.compiles, *reversed(modes))

    def gradient(self, fn: Any, args: list[Any], wrt: Sequence[int], cotangent: Any = None) -> list[Any]:
        """The gradient of ``fn`` (a function of ``args`` returning the loss) at ``args``, with
        respect to ``args[i]`` for each ``i`` in ``wrt``, in that order: with ``cotangent`` (a
        tensor of the loss's shape), the vector-Jacobian product of it. None for an argument the
        framework says the loss does not depend on. Only adapters that declare
        :attr:`functional_gradient` are asked (conformance/run/gradients.py)."""
        raise NotImplementedError(f"{self.name} declares no functional gradient")

    def compile(self, fn: Any) -> Any:
        """A compiled mode's compiled ``fn`` (the case's steps as one function of its given
        tensors), with the compiler's state reset first, so that no item reuses another's
        compiled code. Only adapters that declare :attr:`compiles` are asked."""
        raise NotImplementedError(f"{self.name} is no compiled mode")

    def __init__(self) -> None:
        self.ops: dict[str, Operation] = self.operation_table()
        self._ready = False
        self._devices: list[str] | None = None
        self._states: list[GlobalState] | None = None

    # ---- lifecycle

    def unavailable(self) -> str | None:
        """None if the framework can be imported, else why not (without importing it)."""
        if importlib.util.find_spec(self.module) is None:
            return f"{self.name} is not installed ({self.install_hint})"
        return None

    def warm(self) -> None:
        """Bring a fork server (:attr:`process_per_item`) to the state every item's process
        starts from, after :meth:`setup`: the work every item would otherwise repeat first
        (a compiler's lazy imports and first compile), leaving nothing an item could observe.
        Nothing by default."""

    def setup(self) -> None:
        """Import the framework (once), after its :attr:`imports_first`."""
        if not self._ready:
            for module in self.imports_first:
                if module not in sys.modules and importlib.util.find_spec(module) is not None:
                    importlib.import_module(module)
            self.load()
            self._ready = True

    def load(self) -> None:
        raise NotImplementedError

    @property
    def loaded(self) -> bool:
        """Whether :meth:`setup` imported the framework in this process."""
        return self._ready

    @classmethod
    def release_requirements(cls, version: str) -> list[str]:
        """What to install for this release of the framework in an environment of its own
        (``conformance matrix``): its distribution at that version."""
        return [f"{cls.distribution}=={version}"]

    def version(self) -> str | None:
        """The installed version, read from package metadata (imports nothing)."""
        return installed_version(self.distribution)

    def device_unavailable(self, device: str) -> str | None:
        return None if device == "cpu" else f"{self.name}: device {device!r} is not supported"

    def devices(self) -> list[str]:
        """The case devices this installation can run, out of :attr:`device_kinds` (call
        after :meth:`setup`); asked once per process, since every results record carries them."""
        if self._devices is None:
            self._devices = [d for d in self.device_kinds if self.device_unavailable(d) is None]
        return self._devices

    @contextlib.contextmanager
    def isolation(self, seed: int) -> Iterator[None]:
        """Save the process-wide state a case may change (:meth:`global_states`), put the
        states that have a ``reset`` as a fresh process has them, seed the RNGs for this
        case, and put back whatever the case changed, even when it raised: one case never
        changes the outcome of the next one run by the same process."""
        import numpy as np

        if self._states is None:
            self._states = self.global_states()
        saved = [(state, state.get()) for state in self._states]
        try:
            for state in self._states:
                if state.reset is not None:
                    state.reset()
            self.seed(seed)
            # every case starts with NumPy's floating-point errors as warnings, which the
            # engine records, whatever the process had
            with np.errstate(all="warn"):
                yield
        finally:
            for state, value in saved:
                if state.always_restore or state.get() != value:
                    state.set(value)

    def global_states(self) -> list[GlobalState]:
        """The process-wide state of this adapter's framework that :meth:`isolation` saves
        and restores (and resets, where it has a fresh-process value). Subclasses add theirs
        to Python's warnings and NumPy's, which every adapter uses."""
        import numpy as np

        return [
            python_warnings_state(),
            GlobalState("numpy.errstate", np.geterr, lambda v: np.seterr(**v)),
            GlobalState("numpy.errcall", np.geterrcall, np.seterrcall),
            GlobalState("numpy.printoptions", np.get_printoptions, lambda v: np.set_printoptions(**v)),
            GlobalState("numpy.random", np.random.get_state, np.random.set_state, always_restore=True),
        ]

    def seed(self, seed: int) -> None:
        """Seed every global RNG the case may draw from (random operations are then the
        same in every run of the case)."""
        import numpy as np

        np.random.seed(seed)

    # ---- operations

    def operations(self) -> dict[str, Operation]:
        raise NotImplementedError

    def operation_table(self) -> dict[str, Operation]:
        """The whole table (``self.ops``): Python's operators (PYTHON_OPERATORS), DLPack into
        every framework that imports it when this one exports (built by the registry from
        each adapter's declaration, importing nothing), then :meth:`operations`, whose
        entries win; for an immutable framework that refuses by itself, its refusals."""
        ops: dict[str, Operation] = dict(PYTHON_OPERATORS)
        if self.dlpack_export:
            from conformance import registry  # lists adapter classes; imports no framework

            ops.update(registry.dlpack_conversions())
        ops.update(self.operations())
        refuse = self.immutable.refuse if self.immutable is not None else None
        if refuse is not None:
            for key, op in ops.items():
                if (key == "op:setitem" or key.startswith("setattr:")) and not hasattr(op, "not_applicable"):
                    ops[key] = refusal(refuse)
        return ops

    @property
    def mutable(self) -> bool:
        return self.immutable is None

    def refused_mutation(self, exc: BaseException) -> bool:
        """Whether an exception a step raised is the framework refusing a mutation (its
        arrays are immutable), as :attr:`immutable` declares, or the adapter's own refusal."""
        if isinstance(exc, MutationRefused):
            return True
        if self.immutable is None or not self.immutable.raises:
            return False
        text = f"{type(exc).__name__}: {exc}"
        return any(re.search(p, text) for p in self.immutable.raises)

    def lacks(self, key: str) -> str | None:
        """Why this adapter cannot run an operation key, or None if it can."""
        op = self.ops.get(key)
        if op is None:
            return f"{self.name} has no counterpart for {key}"
        return getattr(op, "not_applicable", None)

    def make_input(self, spec: Any, device: str) -> Any:
        """Create a given input. NumPy inputs are shared; framework tensors are not."""
        array = numpy_input(spec)
        if spec.kind == "ndarray":
            return array
        return self.tensor_from_numpy(array, spec, device)

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        raise NotImplementedError

    # ---- errors

    def error_message(self, exc: BaseException) -> str:
        """The exception's message as recorded. Adapters replace the parts that differ from
        one process to the next (generated names, addresses), so that two runs of a case
        record the same message."""
        return str(exc).strip()

    def out_of_memory(self, exc: BaseException) -> bool:
        """Whether an exception is the framework failing to allocate memory (the sandbox
        caps what its process may use): the case is refused then, its item an error, rather
        than the failure recorded as the framework's behaviour."""
        return isinstance(exc, MemoryError)

    def error_kinds(self) -> Mapping[str, tuple[str, ...]]:
        """The error taxonomy as this adapter applies it: its own ``error_patterns``, then the
        messages of Python and NumPy that every framework's run can meet (COMMON_ERRORS)."""
        return merge_errors(self.error_patterns, COMMON_ERRORS)

    def classify_error(self, exc: BaseException) -> str:
        """The neutral kind of an exception a step raised: the first kind of
        :meth:`error_kinds` one of whose regexes ``re.search``es ``"ExceptionType: message"``,
        else ``other``."""
        return classify_text(f"{type(exc).__name__}: {exc}", self.error_kinds())


def classify_text(text: str, kinds: Mapping[str, tuple[str, ...]]) -> str:
    """The first kind one of whose regexes matches ``text`` ("ExceptionType: message"), else
    ``other``."""
    for kind, patterns in kinds.items():
        if any(re.search(p, text) for p in patterns):
            return kind
    return "other"


def numpy_input(spec: Any) -> Any:
    """The given values as a fresh NumPy array of the spec's dtype."""
    import numpy as np

    dtype = spec.dtype if spec.dtype != "bfloat16" else "float32"
    if isinstance(spec.values, Generated):  # fill: / arange: (the loader checked the values fit)
        if spec.values.rule == "fill":
            array = np.full(math.prod(spec.shape), spec.values.fill, dtype=dtype)
        else:
            array = np.arange(math.prod(spec.shape)).astype(dtype)
    else:
        array = np.array(spec.values, dtype=dtype)
    if spec.imag is not None:
        # np.asarray: of 0-d arrays the sum is a NumPy scalar (np.complex64), read-only and no
        # array, which a 0-d complex input must not become
        array = np.asarray(array + 1j * np.array(spec.imag, dtype=dtype)).astype(spec.dtype)
    array = array.reshape(spec.shape)
    if spec.align:
        array = aligned_copy(array, spec.align)
    if not spec.writeable:
        array.flags.writeable = False
    return array


def aligned_copy(array: Any, align: int) -> Any:
    """A copy of ``array`` whose buffer starts on a multiple of ``align`` bytes: a view of a
    byte buffer ``align`` bytes longer, from its first such address (so its ``.base`` is that
    buffer, not None)."""
    import numpy as np

    raw = np.empty(array.nbytes + align, dtype=np.uint8)
    start = -raw.ctypes.data % align
    out = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


# ---- the error taxonomy (docs/case-format.md, "Error kinds"): each kind of model.ERROR_KINDS
# and the messages that map to it, by where the message comes from. Python's and NumPy's
# messages are met in every framework's run (NumPy arrays and np.* calls are in every
# framework's cases), so every adapter classifies them the same way (COMMON_ERRORS, after its
# own error_patterns); tests/test_error_kinds.py keeps the documentation equal to these
# tables and checks every error a run of the corpus records against them.

# A call refused for its arguments by Python's own binding of them to the signature (an
# unexpected keyword: Paddle's relu(x, inplace=True); a missing or extra argument)
SIGNATURE_ERRORS: tuple[str, ...] = (
    r"^TypeError: .*got an unexpected keyword argument",
    r"^TypeError: .*missing \d+ required (positional|keyword-only) arguments?",
    r"^TypeError: .*takes (from \d+ to |at most )?\d+ positional arguments? but \d+ (were|was) given",
)

PYTHON_ERRORS: Mapping[str, tuple[str, ...]] = {
    "type_error": SIGNATURE_ERRORS + (
        # item assignment into a value that is not an array (NumPy's x[0, 1] is a scalar)
        r"^TypeError: '[\w.]+' object does not support item assignment",
        # a unary operator (+x, -x, ~x) of a type that does not define it (TensorFlow's +x)
        r"^TypeError: bad operand type for unary \S+:",
    ),
}

NUMPY_ERRORS: Mapping[str, tuple[str, ...]] = {
    # (NumPy refusing to export a read-only array through a DLPack 0.x capsule, which has no
    # read-only flag: what jnp.from_dlpack and TensorFlow's from_dlpack ask for)
    "read_only": (r"read-only", r"not writeable", r"non-writable", r"Cannot export readonly array"),
    "dtype_cast": (r"Cannot cast ufunc .* output", r"can't be cast", r"casting rule"),
    "shape_mismatch": (r"cannot reshape", r"could not be broadcast", r"operands could not",
                       r"could not broadcast input array from shape",
                       r"shape mismatch", r"non-broadcastable",
                       r"input array dimensions except for the concatenation axis must match",
                       # concatenate / stack into an out= array of another shape: never resized
                       r"Output array has wrong dimensionality",
                       r"cannot select an axis to squeeze out which has size not equal to one",
                       # view(dtype) to a larger dtype across a last axis it does not divide;
                       # vsplit / dsplit of an array with too few dimensions
                       r"When changing to a larger dtype, its size must be a divisor",
                       r"only works on arrays of \d+ or more dimensions",
                       # matrix_transpose (.mT, the counterpart of .mH / adjoint()) of a 0-d or 1-D array
                       r"matrix transpose with ndim < 2 is undefined",
                       # broadcast_to (the counterpart of expand) given torch's -1 ("keep this size")
                       r"all elements of broadcast shape must be non-negative"),
    "not_contiguous_view": (r"Incompatible shape for in-place modification", r"copy=False",
                            r"without copying", r"Unable to avoid copy",
                            r"Unable to avoid creating a copy",
                            r"dtype of a different size, the last axis must be contiguous",
                            r"Changing the dtype of a 0d array is only supported if the itemsize is unchanged"),
    # ndarray.flatten(order='C') given torch's dimensions: the order it reads is refused
    "type_error": (r"^TypeError: order must be str, not \w+",),
}


def merge_errors(*tables: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Error tables joined kind by kind (the first table's kinds first, ``other`` last)."""
    merged: dict[str, tuple[str, ...]] = {}
    for table in tables:
        for kind, patterns in table.items():
            merged[kind] = merged.get(kind, ()) + tuple(patterns)
    if "other" in merged:
        merged["other"] = merged.pop("other")
    return merged


# what every adapter tries after its own error_patterns
COMMON_ERRORS: Mapping[str, tuple[str, ...]] = merge_errors(PYTHON_ERRORS, NUMPY_ERRORS)


if TYPE_CHECKING:  # mypy: the base class (and so, overriding it compatibly, every adapter) is the contract
    from conformance.contract import FrameworkAdapter

    def _contract(adapter: Adapter) -> FrameworkAdapter:
        return adapter


def _recorded_owner(array: Any) -> Any:
    """The array NumPy records as the owner of ``array``'s memory (its ``.base``), else None.
    np.lib.stride_tricks.as_strided records an object of its own between its result and the
    input (a DummyArray: the input's ``__array_interface__`` and the input as ``.base``),
    which is followed: the result is a view of the input (issue 38)."""
    import numpy as np

    base = array.base
    if isinstance(base, np.ndarray):
        return base
    inner = getattr(base, "base", None)
    if base is not None and hasattr(base, "__array_interface__") and isinstance(inner, np.ndarray):
        return inner
    return None
