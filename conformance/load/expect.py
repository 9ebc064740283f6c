"""A case's ``expect`` (and an override's): each key read by its assertion kind
(:mod:`conformance.kinds`) into an :class:`~conformance.model.Expect`."""

from __future__ import annotations

from typing import Any

from conformance import kinds, rules
from conformance.kinds.base import ParseContext
from conformance.model import Expect, ResultKey
from conformance.source import CaseFormatError, Location, raise_all, split
from conformance.yamlvalues import fields
from conformance.yamlvalues.yamlsrc import YMap


def read_expect(raw: Any, loc: Location, ctx: ParseContext, what: str, partial: bool = False,
                drops: bool = False) -> Expect:
    """The kinds about names are read in the order written; those about the case as a
    whole (error, warning: they refer to steps) after them, in the kinds' order. Each key,
    and each entry of a key, is read on its own: every mistake is raised, together
    (:class:`~conformance.source.CaseFormatErrors`), once all are read. ``drops``: an
    override's expect, whose entries written null drop the shared ones (model.Dropped)."""
    m = fields.mapping(raw, loc, what)
    if drops:
        ctx = ctx._replace(drops=True)  # an override's entry written null drops the shared one
    by_name = kinds.BY_NAME
    errors: list[CaseFormatError] = []
    fields.unknown_keys(m, by_name, what, errors)
    if not m and not partial:
        raise CaseFormatError(loc, f"{what} is empty", "state at least one thing that must hold: run "
                              "`conformance observe <case id>` and paste the expectations it prints",
                              code=rules.EMPTY_EXPECT.code)
    checks: dict[str, Any] = {}
    locations: dict[ResultKey, Location] = {}
    whole = set()
    for key, value in m.items():
        kind = by_name.get(key)
        if kind is None:  # an unknown key: reported above
            continue
        if kind.arity == 0:
            locations[ResultKey(key)] = m.where(key)
            whole.add(key)
            continue
        try:
            checks[key] = kind.parse(value, m.where(key), ctx, locations)
        except CaseFormatError as exc:
            errors += split(exc)
    if whole:
        for kind in kinds.KINDS:
            if kind.name in whole:
                try:
                    value = kind.parse(m[kind.name], m.where(kind.name), ctx, locations)
                except CaseFormatError as exc:
                    errors += split(exc)
                    continue
                if value is not None:
                    checks[kind.name] = value
    if errors:
        raise_all(errors)
    return Expect(checks=checks, locations=locations)


def replaced_whole(m: YMap) -> tuple[str, ...]:
    """The keys of an override's ``expect`` that replace the shared expectation whole (the
    kinds about the case as a whole), rather than entry by entry."""
    return tuple(key for key in m if kinds.get(key).arity == 0)
