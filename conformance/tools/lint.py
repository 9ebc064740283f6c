"""``conformance lint``: every rule a case file can break (conformance.rules), each a small
named check, reported as ``path:line:col: CODE message`` with the fix on the next line.

The loader enforces the format and most rules as it reads (it raises a
:class:`CaseFormatError` carrying the rule's code); the checks here need the whole case
(unused inputs, overrides that change nothing) or the whole corpus (duplicate ids across
files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from conformance import kinds, registry, rules
from conformance.escaping import for_terminal
from conformance.ir import names_read
from conformance.load import folders as casefolder
from conformance.load.reader import Vocabulary, duplicate_id, load_file
from conformance.model import Case, CaseFormatError, Expect, FrameworkOverride, Location


@dataclass(frozen=True)
class Finding:
    code: str
    location: Location
    message: str
    hint: str | None = None

    def render(self) -> str:
        """``path:line:col: CODE message`` and the fix on the next line, ready to print:
        case text it quotes goes through :func:`~conformance.escaping.for_terminal`."""
        loc = self.location
        text = f"{loc.file}:{loc.line}:{loc.column}: {self.code} {self.message}"
        return for_terminal(text) + (f"\n  fix: {for_terminal(self.hint)}" if self.hint else "")


def case_files(paths: Iterable[str | Path]) -> list[Path]:
    """The case files under ``paths`` (folders walked through real sub-folders, links never
    followed), without the refused entries (:func:`lint_paths` reports those)."""
    return casefolder.scan(paths)[0]


def refused_finding(path: Path, why: casefolder.Refusal) -> Finding:
    return Finding(casefolder.CODE, Location(str(path), 1, 1), why.message, why.hint)


def lint_paths(paths: Iterable[str | Path], vocabulary: Vocabulary) -> list[Finding]:
    """Every finding in the case files under ``paths``, in file and line order, with one
    CF010 finding for each refused entry."""
    files, refused = casefolder.scan(paths)
    findings: list[Finding] = [refused_finding(path, why) for path, why in refused]
    first_seen: dict[str, Location] = {}
    for path in files:
        result = load_file(path, vocabulary, display_path=str(path))
        findings += [from_error(err) for _, err in result.errors]
        for case in result.cases:
            duplicate = duplicate_id(first_seen, case)
            if duplicate is not None:
                findings.append(from_error(duplicate))
            for check in CASE_CHECKS:
                findings += check(case)
    return sorted(findings, key=lambda f: (f.location.file, f.location.line, f.location.column, f.code))


def from_error(err: CaseFormatError) -> Finding:
    return Finding(err.code, err.location, err.message, err.hint)


# ---- checks on one loaded case


def check_unused_inputs(case: Case) -> Iterator[Finding]:
    functional = [s for step in case.functional_steps for s in step.flat()]
    used = {ref.name for step in [*case.flat_steps(), *functional] if step.kind != "block" for ref in names_read(step)}
    used |= {ref.name for spec in case.given if spec.made_by is not None for ref in names_read(spec.made_by)}
    for expect in [case.expect] + [o.expect.expect for o in case.all_overrides() if o.expect]:
        used |= _names_in(expect)
    for spec in case.given:
        if spec.name not in used:
            yield Finding(rules.UNUSED_INPUT.code, spec.location or case.location, f"input {spec.name!r} is never used",
                          f"use {spec.name!r} in a step or an expectation, or remove it from 'given'")


def check_identical_overrides(case: Case) -> Iterator[Finding]:
    for override in _every_override(case):
        fw = override.framework
        # a compiled mode's override applies over those of its lineage (registry.lineage)
        lineage = registry.lineage(fw)
        if override.expect is None:
            # an override of claims alone: it changes nothing when it restates the stances
            # that already hold on the framework
            in_force = case.claims_for(lineage[-1], lineage[:-1]) if lineage else dict(case.claims)
            if override.not_applicable is None and override.claims and all(
                    in_force.get(c) == stance for c, stance in override.claims.items()):
                yield Finding(rules.OVERRIDE_IDENTICAL.code, override.location or case.location,
                              f"the override for {fw!r} states exactly the claims the case already states",
                              f"remove the override, or give the stances that differ on {fw}")
            continue
        before = case.expect_for(lineage[-1], lineage[:-1]) if lineage else case.expect
        # a versioned override replaces the framework's unversioned one on its releases: it
        # changes nothing only when it expects what that one (or the shared) does
        unversioned = case.overrides.get(fw) if override.versions else None
        if unversioned is not None and unversioned.expect is not None:
            before = before.merged(unversioned.expect)
        if _comparable(before.merged(override.expect)) == _comparable(before):
            yield Finding(rules.OVERRIDE_IDENTICAL.code, override.location or case.location,
                          f"the override for {fw!r} expects exactly what the case already expects",
                          f"remove the override (the shared expectation already holds on {fw}), or change "
                          "what it expects")


def _every_override(case: Case) -> list[FrameworkOverride]:
    """The case's overrides, versioned or not, by framework."""
    return sorted(case.all_overrides(), key=lambda o: o.framework)


TODO = re.compile(r"\bTODO\b")


def check_todo_reasons(case: Case) -> Iterator[Finding]:
    """`conformance observe` gives each override it writes a TODO reason; it must become the
    real one before the case is committed (CI lints the corpus)."""
    for override in _every_override(case):
        fw = override.framework
        if TODO.search(override.reason):
            yield Finding(rules.TODO_REASON.code, override.location or case.location,
                          f"the override for {fw!r} still has a TODO reason: {override.reason[:80]!r}",
                          f"say why {fw} differs, citing its documentation or an upstream issue "
                          "(CONTRIBUTING.md, 'Citing documentation')")


CASE_CHECKS: tuple[Callable[[Case], Iterable[Finding]], ...] = (check_unused_inputs, check_identical_overrides,
                                                               check_todo_reasons)


def _names_in(expect: Expect) -> set[str]:
    return {n for kind, value in expect.checks.items() for n in kinds.get(kind).names_in(value)}


def _comparable(expect: Expect) -> dict[str, object]:
    """An expectation without the positions it was written at (and without kinds that
    expect nothing: an empty mapping)."""
    return {kind: kinds.get(kind).comparable(value) for kind, value in expect.checks.items() if value}
