"""Which frameworks exist: the built-in ones plus any registered by other packages
through the ``conformance.adapters`` entry point group (``name = "module:Class"``), and
what each one is (its :class:`Framework`: title, report order, capabilities), read from
its adapter's class attributes.

A framework is one adapter module plus one registration: everything else the suite knows
of it (the pytest items, the results, the reports' columns and their order, the case
schema's framework keys, the DLPack operations into it) comes from here. Listing adapters
and their operation tables imports no framework.
"""

from __future__ import annotations

import builtins
import copy
import difflib
import importlib
import importlib.util
import json
import sys
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Collection, Mapping

from conformance import claims

if TYPE_CHECKING:
    from conformance.contract import FrameworkAdapter

# the one registration of a built-in framework
BUILTIN = {
    "numpy": "conformance.adapters.numpy_adapter:NumpyAdapter",
    "torch": "conformance.adapters.torch_adapter:TorchAdapter",
    "paddle": "conformance.adapters.paddle_adapter:PaddleAdapter",
    "jax": "conformance.adapters.jax_adapter:JaxAdapter",
    "tensorflow": "conformance.adapters.tensorflow_adapter:TensorflowAdapter",
    "mindspore": "conformance.adapters.mindspore_adapter:MindsporeAdapter",
    "array_api_strict": "conformance.adapters.array_api_strict_adapter:ArrayApiStrictAdapter",
    # compiled modes (issue 19): a framework's cases run as one compiled function each
    "torch_compile": "conformance.adapters.torch_compile_adapter:TorchCompileAdapter",
    "torch_inductor": "conformance.adapters.torch_inductor_adapter:TorchInductorAdapter",
    "jax_jit": "conformance.adapters.jax_jit_adapter:JaxJitAdapter",
    "tensorflow_function": "conformance.adapters.tensorflow_function_adapter:TensorflowFunctionAdapter",
    "tensorflow_xla": "conformance.adapters.tensorflow_xla_adapter:TensorflowXlaAdapter",
    "paddle_static": "conformance.adapters.paddle_static_adapter:PaddleStaticAdapter",
}
ENTRY_POINT_GROUP = "conformance.adapters"
CASE_SCHEMA_FILE = Path(__file__).resolve().parent / "data" / "case.schema.json"
# where a framework that is not registered here (a results file from elsewhere) goes in the
# reports: with the adapters that set no rank, by name
DEFAULT_REPORT_RANK = 1000


def _load(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


@lru_cache(maxsize=None)
def adapter_specs() -> dict[str, str]:
    """Framework name -> "module:Class", built-ins first (they cannot be replaced)."""
    specs = dict(BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        specs.setdefault(ep.name, ep.value)
    return specs


def framework_names() -> list[str]:
    return list(adapter_specs())


# what people call the frameworks and modes, for the did-you-mean of an unknown name
_CALLED = {"pytorch": "torch", "tf": "tensorflow", "np": "numpy", "ms": "mindspore", "paddlepaddle": "paddle",
           "array-api-strict": "array_api_strict", "torch.compile": "torch_compile", "inductor": "torch_inductor",
           "jax.jit": "jax_jit", "jit": "jax_jit", "tf.function": "tensorflow_function", "xla": "tensorflow_xla",
           "to_static": "paddle_static", "paddle.jit.to_static": "paddle_static"}


def unknown_frameworks(names: list[str]) -> str | None:
    """What is wrong with a list of framework names (None: every one is registered):
    ``unknown framework(s) pytorch (did you mean 'torch'?); known: ...``."""
    known = framework_names()
    unknown = [n for n in names if n not in known]
    if not unknown:
        return None
    said = []
    for name in unknown:
        guess = _CALLED.get(name.lower())
        if guess is None or guess not in known:
            close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
            guess = close[0] if close else None
        said.append(f"{name} (did you mean {guess!r}?)" if guess else name)
    return f"unknown framework(s) {', '.join(said)}; known: {', '.join(known)}"


def eager_names() -> list[str]:
    """The registered frameworks that are no compiled mode."""
    return [name for name in framework_names() if not compiles(name)]


def compiles(name: str) -> str | None:
    """The framework a compiled mode runs compiled; None for a framework that is no compiled
    mode, or cannot be loaded."""
    cls = adapter_class(name)
    return None if cls is None else cls.compiles


@lru_cache(maxsize=None)
def adapter_class(name: str) -> Any:
    """The adapter class registered under ``name`` (its module imported, no framework), or
    None when it cannot be loaded or calls itself by another name."""
    try:
        cls = _load(adapter_specs()[name])
    except Exception:
        return None
    return cls if getattr(cls, "name", None) == name else None


@dataclass(frozen=True)
class Framework:
    """One registered framework, as its adapter's class declares it."""

    name: str
    title: str  # in words: "PyTorch"
    spec: str  # "module:Class"
    builtin: bool
    report_rank: int
    autograd: bool
    mutable: bool
    devices: tuple[str, ...]  # the case devices it can run on at all
    dlpack_export: bool
    dlpack_import: bool
    loads: bool  # False: the adapter could not be loaded (its items skip, saying why)
    compiles: str | None = None  # a compiled mode: the framework whose cases it runs compiled
    # without autograd on its tensors, its functional gradient in words ("jax.grad / jax.vjp"):
    # a case's backward() step is read as one (conformance/run/gradients.py)
    functional_gradient: str | None = None


def framework(name: str) -> Framework:
    cls = adapter_class(name)
    spec = adapter_specs()[name]
    if cls is None:
        return Framework(name, name, spec, name in BUILTIN, DEFAULT_REPORT_RANK, False, True, (), False, False, False)
    return Framework(name, cls.title or name, spec, name in BUILTIN, cls.report_rank, cls.autograd,
                     cls.immutable is None, tuple(cls.device_kinds), cls.dlpack_export, cls.dlpack_import, True,
                     getattr(cls, "compiles", None), getattr(cls, "functional_gradient", None))


def lineage(name: str) -> tuple[str, ...]:
    """The frameworks whose overrides apply to ``name``'s items before its own, in the order
    they apply: for a compiled mode, the framework it compiles, then each compiled mode its
    adapter class derives from (torch_inductor: torch, torch_compile); for a framework derived
    from another, the one its ``overrides_from`` names; () for any other, or one that cannot
    be loaded. Whether a framework is a compiled mode is :func:`compiles`."""
    cls = adapter_class(name)
    return () if cls is None else cls.lineage()


def frameworks() -> list[Framework]:
    """Every registered framework, in registration order (built-ins first)."""
    return [framework(name) for name in framework_names()]


def report_order(names: Any) -> list[str]:
    """Framework names in the order of the reports' columns: by each adapter's
    ``report_rank``, then by name; a name not registered here with the unranked ones."""
    def rank(name: str) -> tuple[int, str]:
        cls = adapter_class(name) if name in adapter_specs() else None
        return (cls.report_rank if cls is not None else DEFAULT_REPORT_RANK, name)

    return sorted(names, key=rank)


def _require(module: str) -> None:
    from conformance.adapters.base import NotApplicable

    if importlib.util.find_spec(module) is None:
        raise NotApplicable(f"{module} is not installed, so nothing can be imported into it")


def _into(name: str, module: str) -> Callable[[Any], Any]:
    def from_dlpack(obj: Any) -> Any:
        from conformance.adapters.base import NotApplicable

        _require(module)
        adapter = get_adapter(name)
        adapter.setup()  # the framework's import, after what it declares must come first (imports_first)
        into = adapter.ops.get("fn:from_dlpack")
        if into is None:
            raise NotApplicable(f"{name} declares DLPack import but has no fn:from_dlpack")
        return into(obj)

    from_dlpack.__name__ = f"{name}_from_dlpack"
    return from_dlpack


@lru_cache(maxsize=None)
def dlpack_conversions() -> dict[str, Callable[[Any], Any]]:
    """``fn:<name>_from_dlpack`` for every registered framework whose adapter declares
    ``dlpack_import``: that framework's own ``fn:from_dlpack`` of whatever the case holds,
    the same call in every framework's cases, so that one case covers every pair (a torch
    tensor into Paddle in the torch run, a Paddle tensor into torch in the Paddle run, ...).
    Every adapter that declares ``dlpack_export`` gets them in its table. Building them
    imports adapter modules only; calling one imports its framework (and is *not
    applicable* where that is not installed). A result of another framework is observed
    through its own adapter's probes (:func:`owner`), like any tensor of the case."""
    conversions = {}
    for name in framework_names():
        cls = adapter_class(name)
        if cls is not None and cls.dlpack_import:
            conversions[f"fn:{name}_from_dlpack"] = _into(name, cls.module)
    return conversions


# type -> the name of the framework whose adapter's probes take objects of that type, or None
_OWNERS: dict[type, str | None] = {}


def owner(obj: Any) -> Any:
    """The adapter of the registered framework whose tensor ``obj`` is, or None (a Python
    value, a layer, an object of no registered framework). Only frameworks already imported
    in this process are asked, so that asking never imports one: an object of a framework's
    type exists only once the framework was imported. The first adapter, in registration
    order, whose ``is_array`` takes it owns it (NumPy's adapter for a NumPy array); the
    answer is kept per type. The engine probes a tensor of another framework than the run's
    (a result of ``fn:<name>_from_dlpack``) through its owner's probes, and calls its
    methods through its owner's table."""
    tp = type(obj)
    if tp in _OWNERS:
        name = _OWNERS[tp]
    else:
        name = next((n for n in framework_names() if _imported(n) and get_adapter(n).is_array(obj)), None)
        _OWNERS[tp] = name
    return None if name is None else get_adapter(name)


def _imported(name: str) -> bool:
    cls = adapter_class(name)
    return cls is not None and cls.module in sys.modules


@lru_cache(maxsize=None)
def get_adapter(name: str) -> FrameworkAdapter:
    """One adapter instance per process (the framework is imported by its setup()).

    A third-party adapter that cannot be loaded, whose ``name`` is not the name it is
    registered under, or that derives from another framework's adapter without saying
    whether that one's overrides apply (:func:`overrides_unsaid`), becomes a
    :class:`BrokenAdapter`: its items skip with the reason, and the other frameworks still
    run."""
    spec = adapter_specs()[name]
    try:
        adapter = _load(spec)()
    except Exception as exc:
        if name in BUILTIN:
            raise
        return BrokenAdapter(name, f"adapter {name!r} ({spec}) could not be loaded: {type(exc).__name__}: {exc}")
    if adapter.name != name:
        return BrokenAdapter(name, f"adapter registered as {name!r} ({spec}) calls itself {adapter.name!r}; "
                                   "the entry point name and the class's 'name' must be the same")
    unsaid = overrides_unsaid(name, type(adapter))
    if unsaid is not None:
        if name in BUILTIN:
            raise TypeError(unsaid)
        return BrokenAdapter(name, unsaid)
    return adapter


def overrides_unsaid(name: str, cls: type) -> str | None:
    """Why an adapter class that derives from another registered framework's adapter, and is
    no compiled mode, may not run: it does not say, in ``overrides_from``, whether that
    framework's case overrides apply to its items; None when it says, or derives from none."""
    if getattr(cls, "compiles", None):
        return None
    for other in adapter_specs():
        parent = adapter_class(other) if other != name else None
        if not (isinstance(parent, type) and parent is not cls and issubclass(cls, parent)):
            continue
        said = any("overrides_from" in c.__dict__ for c in cls.__mro__[:cls.__mro__.index(parent)])
        if not said:
            return (f"adapter {name!r} ({adapter_specs()[name]}) derives from the adapter of {other!r} and does not "
                    f"say whether {other}'s case overrides apply to its items: set overrides_from = {other!r} in "
                    "its class (they apply first, then its own) or overrides_from = None (only its own)")
    return None


class BrokenAdapter:
    """Stands in for an adapter that could not be loaded: no operations, never available.
    It answers the whole adapter contract (conformance.contract.FrameworkAdapter) without a
    framework; what only a loaded framework can answer raises, with the reason (nothing asks:
    every item of an unavailable framework is skipped before it runs)."""

    loaded = False
    compiles: str | None = None
    unobservable: frozenset[str] = frozenset()
    mutable = True
    autograd = False
    functional_gradient: str | None = None
    immutable: object | None = None

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        self.ops: dict[str, Any] = {}

    def _broken(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.name}: {self.reason}")

    def unavailable(self) -> str:
        return self.reason

    def version(self) -> None:
        return None

    def devices(self) -> list[str]:
        return []

    def lineage(self) -> tuple[str, ...]:
        return ()

    def lacks(self, key: str) -> str | None:
        return self.reason

    def device_unavailable(self, device: str) -> str | None:
        return self.reason

    def isolation(self, seed: int) -> AbstractContextManager[None]:
        return nullcontext()

    def is_array(self, obj: Any) -> bool:
        return False  # it owns no object (registry.owner asks each imported framework's adapter)

    def setup(self) -> None:
        self._broken()

    def warm(self) -> None:
        self._broken()

    # what only a loaded framework answers
    make_input = compile = gradient = refused_mutation = error_message = out_of_memory = classify_error = _broken
    to_numpy = dtype_name = shape_of = strides_of = same_allocation = recorded_base = overlaps = _broken
    grad = requires_grad = is_leaf = version_of = probe_fill = probe_restore = sentinels = _broken


def known_operations() -> set[str]:
    keys: set[str] = set()
    for name in adapter_specs():
        keys |= set(get_adapter(name).ops)
    return keys


@dataclass(frozen=True)
class Vocabulary:
    """What names a case file may use, which the loader checks it against.
    ``frameworks``: by default the registered ones. ``operations=None`` skips the operation
    check. ``strings``: the strings a step may pass besides dtype and device names (those
    some adapter's operations take, e.g. a test adapter's state names)."""

    frameworks: Collection[str] = field(default_factory=lambda: tuple(framework_names()))
    operations: Collection[str] | None = None
    claims: Collection[str] | None = None
    strings: Collection[str] = ()
    # framework -> the exception type names an expectation may give it (exception_names()
    # of its adapter's exception_types); a framework not in it, or None, is not checked
    exception_types: Mapping[str, Collection[str]] | None = None


BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, BaseException))


def exception_names(declared: Collection[str]) -> frozenset[str]:
    """The names an ``error.<fw>.type`` may give for a framework whose adapter declares
    ``declared`` (qualified names, ``module.Class``, as the engine records them): each as
    written and by its class name, and Python's builtin exceptions."""
    return frozenset(declared) | {name.rsplit(".", 1)[-1] for name in declared} | BUILTIN_EXCEPTIONS


def vocabulary() -> Vocabulary:
    """The names case files may use: registered frameworks, their operations, the strings
    their operations take, the claims, the exception types each framework may raise (for
    those whose adapter declares them)."""
    strings: set[str] = set()
    exceptions: dict[str, frozenset[str]] = {}
    for name in adapter_specs():
        adapter = get_adapter(name)
        strings |= getattr(adapter, "case_strings", frozenset())
        declared = getattr(adapter, "exception_types", None)
        if declared is not None:
            exceptions[name] = exception_names(declared)
    return Vocabulary(frameworks=framework_names(), operations=known_operations(), claims=claims.claim_ids(),
                      strings=frozenset(strings), exception_types=exceptions)


def case_schema() -> dict[str, Any]:
    """The JSON Schema of a case file for the registered frameworks (``conformance schema``).

    The shipped file (conformance/data/case.schema.json, for editors) keys three mappings by
    framework name, an override per framework, the documentation per framework and an
    error's detail per framework, and
    lists the built-in frameworks there, in :data:`BUILTIN`'s order (tests/test_case_schema.py
    checks it). Here each such mapping lists every registered framework instead, each with
    the built-ins' definition, so that a framework registered through the entry point is
    valid in a case file without touching the file."""
    return _schema_for(framework_names())


def builtin_case_schema() -> dict[str, Any]:
    """The shipped schema file's content: each framework-keyed mapping lists the built-in
    frameworks, in :data:`BUILTIN`'s order (``conformance regen`` writes it)."""
    return _schema_for(list(BUILTIN))


# the case schema's mappings keyed by framework name, by JSON pointer, each with the keys it
# also has that name no framework. Found by place, not by listing the built-ins: once a
# framework is added to BUILTIN the file does not list it yet (tests/test_recipes.py).
FRAMEWORK_KEYED = {"/$defs/case/properties/frameworks": (), "/$defs/case/properties/documentation": (),
                   "/$defs/error": ("at", "kind")}


def _schema_for(names: list[str]) -> dict[str, Any]:
    """The shipped schema with each mapping keyed by framework name (:data:`FRAMEWORK_KEYED`)
    listing ``names`` instead, each with the definition its first framework has there."""
    schema = json.loads(CASE_SCHEMA_FILE.read_text(encoding="utf-8"))
    for pointer, fixed in FRAMEWORK_KEYED.items():
        node = schema
        for part in pointer.strip("/").split("/"):
            node = node[part]
        properties = node["properties"]
        definition = next(value for key, value in properties.items() if key not in fixed)
        node["properties"] = {**{key: properties[key] for key in fixed},
                              **{name: copy.deepcopy(definition) for name in names}}
    return schema
