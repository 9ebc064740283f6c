"""A case's ``claims`` and its per-framework overrides (``frameworks:``): what each
override changes, why, and its stance on the case's claims."""

from __future__ import annotations

import re
from typing import Collection

from conformance import rules
from conformance.kinds.base import ParseContext
from conformance.load.expect import read_expect, replaced_whole
from conformance.model import CLAIM_STANCES, Documented, Expect, ExpectOverride, FrameworkOverride
from conformance.releases import EXAMPLES, specifier_problem
from conformance.source import CaseFormatError, Location, raise_all, split
from conformance.yamlvalues import fields
from conformance.yamlvalues.yamlsrc import YList, YMap

OVERRIDE_KEYS = ("reason", "expect", "not_applicable", "claims", "versions")
DOCUMENTED_KEYS = ("says", "source", "contradicts")
CLAIM_PATTERN = re.compile(r"^S\d-\d\d$")


def read_overrides(m: YMap, ctx: ParseContext, case_claims: dict[str, str] | None,
                   errors: list[CaseFormatError]) -> tuple[dict[str, FrameworkOverride],
                                                           dict[str, tuple[FrameworkOverride, ...]]]:
    """``frameworks: {fw: {reason, expect | not_applicable, claims, versions}}``; a
    framework's value may also be a list of such overrides, each but one with ``versions``
    (the releases it holds for). ``ctx.frameworks`` are the frameworks an override may name.
    Each override is read on its own, its mistakes added to ``errors``. ``case_claims``
    None: the case's claims could not be read, and an override's stances are not checked
    against them. Returns (the unversioned override of each framework, the versioned ones
    of each framework in the order written)."""
    if "frameworks" not in m:
        return {}, {}
    fws = fields.mapping(m["frameworks"], m.where("frameworks"), "'frameworks'")
    out: dict[str, FrameworkOverride] = {}
    versioned: dict[str, tuple[FrameworkOverride, ...]] = {}
    for fw, raw in fws.items():
        floc = fws.where(fw)
        if fw not in ctx.frameworks:
            errors.append(_unknown_framework(fw, floc, ctx))
            continue
        entries = [(raw, floc, f"'frameworks.{fw}'")]
        if isinstance(raw, YList):
            if not raw:
                errors.append(CaseFormatError(floc, f"'frameworks.{fw}' is an empty list",
                                              "write one override (a mapping), or a list of them each with 'versions'"))
                continue
            entries = [(item, raw.where(i), f"'frameworks.{fw}[{i}]'") for i, item in enumerate(raw)]
        read: list[FrameworkOverride] = []
        for item, where, what in entries:
            try:
                read.append(_override(fw, item, where, ctx, case_claims, what))
            except CaseFormatError as exc:
                errors += split(exc)
        unversioned = [o for o in read if not o.versions]
        if len(unversioned) > 1:
            assert unversioned[1].location is not None
            errors.append(CaseFormatError(unversioned[1].location, f"a second override for {fw!r} without 'versions'",
                                          "give every override of the list but one 'versions:' (the releases it "
                                          f"holds for, e.g. {EXAMPLES})", code=rules.UNVERSIONED_TWICE.code))
        if unversioned:
            out[fw] = unversioned[0]
        if len(unversioned) < len(read):
            versioned[fw] = tuple(o for o in read if o.versions)
    return out, versioned


def _unknown_framework(fw: str, loc: Location, ctx: ParseContext) -> CaseFormatError:
    """A framework key (of ``frameworks:`` or ``documentation:``) that is not registered."""
    known = f"the frameworks are {', '.join(ctx.frameworks)} (conformance frameworks)"
    guess = fields.did_you_mean(fw, ctx.frameworks)
    return CaseFormatError(loc, f"unknown framework {fw!r}", f"{guess}; {known}" if guess else known,
                           code=rules.UNKNOWN_FRAMEWORK.code)


def _override(fw: str, raw: object, floc: Location, ctx: ParseContext,
              case_claims: dict[str, str] | None, what: str) -> FrameworkOverride:
    """One framework's override; its independent parts (reason, expect, claims, versions)
    each read on its own, every mistake raised at the end."""
    o = fields.mapping(raw, floc, what)
    errors: list[CaseFormatError] = []
    unknown = fields.unknown_keys(o, OVERRIDE_KEYS, what, errors)  # (then no key is reported missing)
    not_applicable = reason = None
    try:
        not_applicable = fields.string(o, "not_applicable", "'not_applicable'") if "not_applicable" in o else None
    except CaseFormatError as exc:
        errors += split(exc)
    try:
        reason = fields.string(o, "reason", "'reason'") if "reason" in o else None
    except CaseFormatError as exc:
        errors += split(exc)
    # (an invalid reason or not_applicable is its own error, not a missing one)
    if not unknown and "reason" not in o and "not_applicable" not in o:
        errors.append(CaseFormatError(floc, f"the override for {fw!r} has no 'reason'",
                                      "say why this framework differs (and cite docs or an issue)",
                                      code=rules.MISSING_REASON.code))
    expect = None
    if "expect" in o:
        if "not_applicable" in o:
            errors.append(CaseFormatError(o.where("expect"), "an override cannot both expect and be not_applicable"))
        else:
            try:
                e = fields.mapping(o["expect"], o.where("expect"), f"'frameworks.{fw}.expect'")
                expect = ExpectOverride(read_expect(e, o.where("expect"), ctx, f"'frameworks.{fw}.expect'",
                                                    partial=True, drops=True), replaces=replaced_whole(e))
            except CaseFormatError as exc:
                errors += split(exc)
    elif "not_applicable" not in o and "claims" not in o and not unknown:
        errors.append(CaseFormatError(floc, f"the override for {fw!r} changes nothing",
                                      "add 'expect:' with what differs, 'claims:' with the stances that differ "
                                      "(a framework that runs the case's functional_steps), or "
                                      "'not_applicable: <why>'"))
    claims = read_claims(o, f"'frameworks.{fw}.claims'", None, errors,
                         allowed=fields.OpenNames() if case_claims is None else case_claims)
    if "not_applicable" in o and o.get("claims"):
        errors.append(CaseFormatError(o.where("claims"), "a not_applicable override cannot take a stance on claims",
                                      "remove 'claims:' (the case does not run on this framework)"))
    # the stances written, whether or not each is valid (one in error is its own error)
    written = o["claims"] if isinstance(o.get("claims"), YMap) else {}
    if case_claims is not None and "expect" in o and "not_applicable" not in o and not unknown and \
            ("claims" not in o or isinstance(o["claims"], YMap)):
        undecided = [c for c, stance in case_claims.items() if stance != "related" and c not in written]
        if undecided:
            errors.append(CaseFormatError(floc, f"the override for {fw!r} changes what is expected, so it must say "
                                                f"whether {', '.join(undecided)} hold(s) on {fw}",
                                          f"add claims: {{{undecided[0]}: holds}} or "
                                          f"{{{undecided[0]}: does_not_hold}} to the override"))
    versions = _versions(o, what, errors) if "versions" in o else ""
    if errors:
        raise_all(errors)
    return FrameworkOverride(framework=fw, reason=reason if reason is not None else str(not_applicable),
                             expect=expect, not_applicable=not_applicable, location=floc, claims=claims,
                             versions=versions)


def _versions(o: YMap, what: str, errors: list[CaseFormatError]) -> str:
    """``versions: ">=2.0"``: the releases of the framework the override holds for."""
    where = o.where("versions")
    value = o["versions"]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        errors.append(CaseFormatError(where, f"{what}: versions is the number {value!r}, not a version specifier",
                                      f'write a quoted specifier such as ">={value}" or "<{value}"',
                                      code=rules.BAD_VERSIONS.code))
        return ""
    if not isinstance(value, str):
        errors.append(CaseFormatError(where, f"{what}: versions must be a string", f"write e.g. {EXAMPLES}",
                                      code=rules.BAD_VERSIONS.code))
        return ""
    problem = specifier_problem(value)
    if problem is not None:
        bare = value.strip()[:1].isdigit()
        hint = f'a bare version is no specifier: write "=={value.strip()}", ">={value.strip()}" or ' \
               f'"<{value.strip()}"' if bare else f"write a PEP 440 specifier set such as {EXAMPLES}"
        errors.append(CaseFormatError(where, f"{what}: versions {value!r} {problem}", hint,
                                      code=rules.BAD_VERSIONS.code))
        return ""
    return value.strip()


def read_claims(m: YMap, what: str, known: Collection[str] | None, errors: list[CaseFormatError],
                allowed: Collection[str] | None = None) -> dict[str, str]:
    """``claims: {S3-07: does_not_hold}``: claim ID -> stance, each entry on its own (its
    mistakes added to ``errors``, the others kept). ``known``: the claim IDs that exist
    (None: any of the right form); ``allowed``: for an override, its case's claims."""
    if "claims" not in m:
        return {}
    example = "claims: {S3-02: holds} (stances: " + ", ".join(CLAIM_STANCES) + ")"
    if isinstance(m["claims"], list):
        errors.append(CaseFormatError(m.where("claims"), f"{what} must map each claim ID to a stance, not list the "
                                      "IDs", f"write {example}"))
        return {}
    try:
        c = fields.mapping(m["claims"], m.where("claims"), what)
    except CaseFormatError as exc:
        errors.append(exc)
        return {}
    out = {}
    for claim, stance in c.items():
        loc = c.where(claim)
        claim = str(claim)
        ids = allowed if allowed is not None else known
        if not CLAIM_PATTERN.match(claim) or (ids is not None and claim not in ids):
            if allowed is not None:
                hint = f"an override can only restate the case's own claims: {', '.join(sorted(allowed)) or 'none'}"
            else:
                hint = fields.did_you_mean(claim, known or ()) or \
                    "claims are IDs such as S3-07 from conformance/data/claims.yaml"
            errors.append(CaseFormatError(loc, f"unknown claim {claim!r}", hint, code=rules.UNKNOWN_CLAIM.code))
        elif stance not in CLAIM_STANCES:
            errors.append(CaseFormatError(loc, f"claim {claim}: unknown stance {stance!r}",
                                          fields.did_you_mean(str(stance), CLAIM_STANCES) or
                                          f"use one of {', '.join(CLAIM_STANCES)}"))
        else:
            out[claim] = stance
    return out



def read_documentation(m: YMap, ctx: ParseContext, expect: Expect | None, overrides: dict[str, FrameworkOverride],
                       errors: list[CaseFormatError]) -> dict[str, Documented]:
    """``documentation: {fw: {says, source, contradicts}}``: where the framework's own
    documentation says otherwise than the case measures. ``contradicts`` names the
    expectation kind that measures it, which the case must assert on that framework
    (not checked when the case's ``expect`` is missing or wrong: that is its own error)."""
    if "documentation" not in m:
        return {}
    try:
        docs = fields.mapping(m["documentation"], m.where("documentation"), "'documentation'")
    except CaseFormatError as exc:
        errors += split(exc)
        return {}
    out = {}
    for fw, raw in docs.items():
        where = docs.where(fw)
        what = f"'documentation.{fw}'"
        if fw not in ctx.frameworks:
            errors.append(_unknown_framework(fw, where, ctx))
            continue
        try:
            d = fields.mapping(raw, where, what)
        except CaseFormatError as exc:
            errors += split(exc)
            continue
        found: list[CaseFormatError] = []
        unknown = fields.unknown_keys(d, DOCUMENTED_KEYS, what, found)
        values: dict[str, str] = {}
        for key in DOCUMENTED_KEYS:
            if key not in d:
                if not unknown:
                    found.append(CaseFormatError(where, f"{what} has no {key!r}", _DOCUMENTED_HINTS[key]))
                continue
            try:
                values[key] = fields.string(d, key, f"'{key}'")
            except CaseFormatError as exc:
                found += split(exc)
        if "source" in values and not fields.LINK.match(values["source"]):
            found.append(CaseFormatError(d.where("source"), f"{what}'s source must be a link (http:// or https://)",
                                         "link the documentation page that says it"))
        kind = values.get("contradicts")
        if kind is not None and expect is not None:
            override = overrides.get(fw)
            if override is not None and override.not_applicable is not None:
                found.append(CaseFormatError(where, f"the case is not applicable on {fw}: it measures nothing there "
                                             "to contradict the documentation", f"remove {what}"))
            else:
                asserted = expect.merged(override.expect).checks if override and override.expect else expect.checks
                # whether a step raises is always measured: an error no expectation names fails the case
                if kind not in asserted and kind != "error":
                    hint = fields.did_you_mean(kind, list(asserted)) or \
                        f"name one the case asserts on {fw}: {', '.join(asserted) or 'none'}"
                    found.append(CaseFormatError(d.where("contradicts"), f"{what}: the case does not assert {kind!r} "
                                                 f"on {fw}", hint))
        if found:
            errors += found
            continue
        out[fw] = Documented(framework=fw, says=values["says"], source=values["source"],
                             contradicts=values["contradicts"], location=where)
    return out


_DOCUMENTED_HINTS = {
    "says": "quote what the documentation says: says: \"the output shares data with x\"",
    "source": "add source: <the link to that page>",
    "contradicts": "name the expectation that measures otherwise: contradicts: shares_memory",
}
