"""A case's ``expect`` (and an override's): each key read by its assertion kind
(:mod:`conformance.kinds`) into an :class:`~conformance.model.Expect`."""

from __future__ import annotations

from typing import Any

from conformance import kinds
from conformance.kinds.base import ParseContext
from conformance.load import fields
from conformance.load.yamlsrc import YMap
from conformance.model import Expect, ResultKey
from conformance.source import CaseFormatError, Location


def read_expect(raw: Any, loc: Location, ctx: ParseContext, what: str, partial: bool = False) -> Expect:
    """The kinds about names are read in the order written; those about the case as a
    whole (error, warning: they refer to steps) after them, in the kinds' order."""
    m = fields.mapping(raw, loc, what)
    by_name = kinds.BY_NAME
    fields.keys(m, by_name, what)
    if not m and not partial:
        raise CaseFormatError(loc, f"{what} is empty", "state at least one thing that must hold: run "
                              "`conformance observe <case id>` and paste the expectations it prints", code="CF009")
    checks: dict[str, Any] = {}
    locations: dict[ResultKey, Location] = {}
    whole = set()
    for key, value in m.items():
        kind = by_name[key]
        if kind.arity == 0:
            locations[ResultKey(key)] = m.where(key)
            whole.add(key)
            continue
        checks[key] = kind.parse(value, m.where(key), ctx, locations)
    if whole:
        for kind in kinds.KINDS:
            if kind.name in whole:
                value = kind.parse(m[kind.name], m.where(kind.name), ctx, locations)
                if value is not None:
                    checks[kind.name] = value
    return Expect(checks=checks, locations=locations)


def replaced_whole(m: YMap) -> tuple[str, ...]:
    """The keys of an override's ``expect`` that replace the shared expectation whole (the
    kinds about the case as a whole), rather than entry by entry."""
    return tuple(key for key in m if kinds.get(key).arity == 0)
