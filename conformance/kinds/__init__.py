"""The assertion kinds, listed once: every key a case's ``expect`` may hold.

Each kind is one class (:mod:`conformance.kinds.base` says what a class gives); this
module lists one instance of each, in the order the format documents them, and is what
every stage asks: the loader (which keys exist, who parses each), the engine (who checks
each, in which order), the results file and the reports (which observations classify a
pair, which are compared), ``diff``, ``observe``, the lint rules and the JSON Schema's
``expect`` part (``conformance regen``, through ``conformance.tools.schema``).

To add a kind: write its class (in the family module it belongs to, or a new one), add one
instance to :data:`KINDS`, document it in docs/case-format.md and test it
(docs/architecture.md, "Adding an assertion kind").
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from conformance.kinds.base import Kind
from conformance.kinds.errors import ExpectedError, ExpectedWarning
from conformance.kinds.properties import Dtype, Grad, IsLeaf, RequiresGrad, Shape, Strides, Values, VersionChange
from conformance.kinds.relations import RecordedView, SameObject, SameStorage, SharesMemory
from conformance.model import Expect, ResultKey

KINDS: list[Kind] = [
    SharesMemory(),
    SameStorage(),
    SameObject(),
    RecordedView(),
    Values(),
    Dtype(),
    Shape(),
    Strides(),
    Grad(),
    RequiresGrad(),
    IsLeaf(),
    VersionChange(),
    ExpectedError(),
    ExpectedWarning(),
]

# name -> kind, in the order of KINDS (kept up to date by register and unregister)
BY_NAME: dict[str, Kind] = {}
_names: tuple[str, ...] = ()


def _index() -> None:
    global _names
    BY_NAME.clear()
    BY_NAME.update((k.name, k) for k in KINDS)
    _names = tuple(BY_NAME)


_index()


def register(kind: Kind) -> Kind:
    """Add a kind after the others (for a test's kind: :func:`unregister` it after)."""
    if kind.name in BY_NAME or not kind.name.isidentifier():
        raise ValueError(f"cannot register an assertion kind named {kind.name!r}")
    KINDS.append(kind)
    _index()
    return kind


def unregister(name: str) -> None:
    KINDS[:] = [k for k in KINDS if k.name != name]
    _index()


def names() -> tuple[str, ...]:
    """The keys ``expect`` may hold, in order."""
    return _names


def get(name: str) -> Kind:
    return BY_NAME[name]


def find(key: ResultKey | str) -> Kind | None:
    """The kind of a result key (typed, or as the results file writes it), None for a kind
    this version does not know (an older results file's)."""
    if isinstance(key, str):
        key = ResultKey.parse(key)
    return BY_NAME.get(key.kind)


def compared(key: ResultKey | str) -> bool:
    """Whether an observation takes part in comparing frameworks and runs (a kind this
    version does not know does)."""
    kind = find(key)
    return kind is None or kind.compared


def aliasing(key: ResultKey | str) -> bool:
    """Whether an observation is one of the relations that classify a pair."""
    kind = find(key)
    return kind is not None and kind.aliasing


def checks(expect: Expect) -> Iterator[tuple[Kind, Any]]:
    """(kind, what is expected of it) in the order they are checked: by phase, and within a
    phase as written; a kind checked always comes with None when the case does not write it."""
    present = [(BY_NAME[name], value) for name, value in expect.checks.items()]
    present += [(k, None) for k in KINDS if k.always_checked and k.name not in expect.checks]
    return iter(sorted(present, key=lambda pair: pair[0].phase))


def value_types() -> tuple[type, ...]:
    """The classes of what the kinds parse: what the case cache and the sandbox may rebuild
    besides the model's (conformance.model.CASE_TYPES)."""
    out: list[type] = []
    for kind in KINDS:
        out += [t for t in kind.value_types if t not in out]
    return tuple(out)


def schema(frameworks: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the JSON Schema of each ``expect`` key, the ``$defs`` they use): each kind's own
    fragment, the per-framework parts for ``frameworks``."""
    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for kind in KINDS:
        properties[kind.name], more = kind.schema(frameworks)
        for name, fragment in more.items():
            if defs.setdefault(name, fragment) != fragment:
                raise ValueError(f"two assertion kinds define $defs/{name} differently")
    return properties, defs
