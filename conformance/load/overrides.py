"""A case's ``claims`` and its per-framework overrides (``frameworks:``): what each
override changes, why, and its stance on the case's claims."""

from __future__ import annotations

import re
from typing import Collection

from conformance.kinds.base import ParseContext
from conformance.load import fields
from conformance.load.expect import read_expect, replaced_whole
from conformance.load.yamlsrc import YMap
from conformance.model import CLAIM_STANCES, ExpectOverride, FrameworkOverride
from conformance.source import CaseFormatError

OVERRIDE_KEYS = ("reason", "expect", "not_applicable", "claims")
CLAIM_PATTERN = re.compile(r"^S\d-\d\d$")


def read_overrides(m: YMap, ctx: ParseContext, case_claims: dict[str, str]) -> dict[str, FrameworkOverride]:
    """``frameworks: {fw: {reason, expect | not_applicable, claims}}``; ``ctx.frameworks``
    are the frameworks an override may name."""
    if "frameworks" not in m:
        return {}
    fws = fields.mapping(m["frameworks"], m.where("frameworks"), "'frameworks'")
    out = {}
    for fw, raw in fws.items():
        floc = fws.where(fw)
        if fw not in ctx.frameworks:
            raise CaseFormatError(floc, f"unknown framework {fw!r}",
                                  fields.did_you_mean(fw, ctx.frameworks) or f"known: {', '.join(ctx.frameworks)}",
                                  code="CF005")
        o = fields.mapping(raw, floc, f"'frameworks.{fw}'")
        fields.keys(o, OVERRIDE_KEYS, f"'frameworks.{fw}'")
        not_applicable = fields.string(o, "not_applicable", "'not_applicable'") if "not_applicable" in o else None
        if "reason" not in o and not_applicable is None:
            raise CaseFormatError(floc, f"the override for {fw!r} has no 'reason'",
                                  "say why this framework differs (and cite docs or an issue)", code="CF008")
        reason = fields.string(o, "reason", "'reason'") if "reason" in o else str(not_applicable)
        expect = None
        if "expect" in o:
            if not_applicable is not None:
                raise CaseFormatError(o.where("expect"), "an override cannot both expect and be not_applicable")
            e = fields.mapping(o["expect"], o.where("expect"), f"'frameworks.{fw}.expect'")
            expect = ExpectOverride(read_expect(e, o.where("expect"), ctx, f"'frameworks.{fw}.expect'", partial=True),
                                    replaces=replaced_whole(e))
        elif not_applicable is None:
            raise CaseFormatError(floc, f"the override for {fw!r} changes nothing",
                                  "add 'expect:' with what differs, or 'not_applicable: <why>'")
        claims = read_claims(o, f"'frameworks.{fw}.claims'", None, allowed=case_claims)
        if not_applicable is not None and claims:
            raise CaseFormatError(o.where("claims"), "a not_applicable override cannot take a stance on claims",
                                  "remove 'claims:' (the case does not run on this framework)")
        undecided = [c for c, stance in case_claims.items() if stance != "related" and c not in claims]
        if expect is not None and undecided:
            raise CaseFormatError(floc, f"the override for {fw!r} changes what is expected, so it must say whether "
                                        f"{', '.join(undecided)} hold(s) on {fw}",
                                  f"add claims: {{{undecided[0]}: holds}} or {{{undecided[0]}: does_not_hold}} "
                                  "to the override")
        out[fw] = FrameworkOverride(framework=fw, reason=reason, expect=expect,
                                    not_applicable=not_applicable, location=floc, claims=claims)
    return out


def read_claims(m: YMap, what: str, known: Collection[str] | None,
                allowed: Collection[str] | None = None) -> dict[str, str]:
    """``claims: {S3-07: does_not_hold}``: claim ID -> stance. ``known``: the claim IDs that
    exist (None: any of the right form); ``allowed``: for an override, its case's claims."""
    if "claims" not in m:
        return {}
    example = "claims: {S3-02: holds} (stances: " + ", ".join(CLAIM_STANCES) + ")"
    if isinstance(m["claims"], list):
        raise CaseFormatError(m.where("claims"), f"{what} must map each claim ID to a stance, not list the IDs",
                              f"write {example}")
    c = fields.mapping(m["claims"], m.where("claims"), what)
    out = {}
    for claim, stance in c.items():
        loc = c.where(claim)
        claim = str(claim)
        ids = allowed if allowed is not None else known
        if not CLAIM_PATTERN.match(claim) or (ids is not None and claim not in ids):
            if allowed is not None:
                hint = f"an override can only restate the case's own claims: {', '.join(sorted(allowed)) or 'none'}"
            else:
                hint = fields.did_you_mean(claim, known or ()) or "claims are IDs such as S3-07 from seed-claims"
            raise CaseFormatError(loc, f"unknown claim {claim!r}", hint, code="CF007")
        if stance not in CLAIM_STANCES:
            raise CaseFormatError(loc, f"claim {claim}: unknown stance {stance!r}",
                                  fields.did_you_mean(str(stance), CLAIM_STANCES) or
                                  f"use one of {', '.join(CLAIM_STANCES)}")
        out[claim] = stance
    return out
