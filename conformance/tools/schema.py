"""The case file JSON Schema's ``expect`` part, generated from the assertion kinds:
``$defs/expectation``'s ``properties`` (one per kind, in the kinds' order), its override
form and the ``$defs`` the kinds use (``pairs``, ``stepRef``, ``errorKind``, ``error``,
``errorDetail``, ``warning``), each kind's :meth:`~conformance.kinds.base.Kind.schema`.

``conformance regen`` writes the whole of ``conformance/data/case.schema.json`` (the rest
from ``registry.builtin_case_schema``); it is the file's only writer, and ``regen --check``
(CI) says when it is stale.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from conformance import kinds


def frameworks() -> list[str]:
    """The frameworks the schema names: the built-in ones."""
    from conformance import registry

    return list(registry.BUILTIN)


def generated_defs(schema: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The ``$defs`` entries the kinds make: ``expectation`` (the hand-written one with
    the kinds' properties), ``overrideExpectation`` (the same, each entry of an entry kind
    also null: an override drops the shared entry, model.Dropped) and each def a kind adds."""
    properties, defs = kinds.schema(names)
    expectation = dict(schema["$defs"]["expectation"])
    expectation["properties"] = properties
    override = dict(expectation)
    override["description"] = ("What differs on a framework (may be partial). An entry written null drops the "
                               "shared expectation's entry (not for grad, whose null means no gradient).")
    override["properties"] = {name: _droppable(name, fragment, defs) for name, fragment in properties.items()}
    return {"expectation": expectation, "overrideExpectation": override, **defs}


def _droppable(name: str, fragment: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A kind's schema with each entry also null, where null drops the entry."""
    kind = kinds.get(name)
    if kind.arity == 0 or getattr(kind, "null_is_value", False):
        return fragment
    ref = fragment.get("$ref", "")
    inner = dict(defs[ref.rsplit("/", 1)[-1]]) if ref.startswith("#/$defs/") else dict(fragment)
    inner["description"] = fragment.get("description", inner.get("description", ""))
    inner["additionalProperties"] = {"anyOf": [inner["additionalProperties"], {"type": "null"}]}
    return inner


def stale(text: str, names: Sequence[str] | None = None) -> list[str]:
    """The ``$defs`` entries of a schema's text that differ from the kinds'."""
    schema = json.loads(text)
    wanted = generated_defs(schema, frameworks() if names is None else names)
    return [name for name, value in wanted.items() if schema["$defs"].get(name) != value]
