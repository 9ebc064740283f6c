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
from conformance.loader import Vocabulary

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
    """One adapter instance per process (the framework is imported by its setup())."""
    return _load(adapter_specs()[name])()


def known_operations() -> set[str]:
    keys: set[str] = set()
    for name in adapter_specs():
        keys |= set(get_adapter(name).ops)
    return keys


def vocabulary() -> Vocabulary:
    """The names case files may use: registered frameworks, their operations, the claims."""
    return Vocabulary(frameworks=framework_names(), operations=known_operations(), claims=claims.claim_ids())
