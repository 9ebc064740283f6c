"""Which adapters exist: the built-in three plus any registered by other packages
through the ``conformance.adapters`` entry point group (``name = "module:Class"``).

Listing adapters and their operation tables imports no framework.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

from conformance import claims
from conformance.load.reader import Vocabulary

BUILTIN = {
    "numpy": "conformance.adapters.numpy_adapter:NumpyAdapter",
    "torch": "conformance.adapters.torch_adapter:TorchAdapter",
    "paddle": "conformance.adapters.paddle_adapter:PaddleAdapter",
}
ENTRY_POINT_GROUP = "conformance.adapters"


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


@lru_cache(maxsize=None)
def get_adapter(name: str) -> Any:
    """One adapter instance per process (the framework is imported by its setup()).

    A third-party adapter that cannot be loaded, or whose ``name`` is not the name it is
    registered under, becomes a :class:`BrokenAdapter`: its items skip with the reason,
    and the other frameworks still run."""
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
    return adapter


class BrokenAdapter:
    """Stands in for an adapter that could not be loaded: no operations, never available."""

    loaded = False
    unobservable: frozenset[str] = frozenset()

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        self.ops: dict[str, Any] = {}

    def unavailable(self) -> str:
        return self.reason

    def version(self) -> None:
        return None

    def devices(self) -> list[str]:
        return []


def known_operations() -> set[str]:
    keys: set[str] = set()
    for name in adapter_specs():
        keys |= set(get_adapter(name).ops)
    return keys


def vocabulary() -> Vocabulary:
    """The names case files may use: registered frameworks, their operations, the strings
    their operations take, the claims."""
    strings: set[str] = set()
    for name in adapter_specs():
        strings |= getattr(get_adapter(name), "case_strings", frozenset())
    return Vocabulary(frameworks=framework_names(), operations=known_operations(), claims=claims.claim_ids(),
                      strings=frozenset(strings))
