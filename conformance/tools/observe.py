"""``conformance observe``: run a case's steps on each framework, observe everything the
expectations can say about them, and print it as YAML ready to paste under ``expect``, with
per-framework overrides where the frameworks differ.

It asks the engine to check a probe expectation that names every relation and property of
the case's names; the engine records what it observed whatever was expected, and that
record is what is printed. Nothing here is compared. The case runs in the sandbox's child
process, with its timeout, like a pytest item: a case that crashes or hangs a framework
costs that framework's observation, never the command.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from conformance import kinds
from conformance.ir import names_bound, productions
from conformance.kinds.base import shown
from conformance.model import Case, Expect, ResultKey
from conformance.outcomes import ERROR, NOT_APPLICABLE, SKIPPED
from conformance.run.engine import run
from conformance.run.sandbox import FrameworkUnavailable, Sandbox, SandboxError

MAX_PAIR_NAMES = 8  # above this, relations are observed only for the pairs steps produce
ERROR_KEY = ResultKey("error")


@dataclass
class Observation:
    framework: str
    version: str | None
    status: str = "ran"  # ran / not_applicable / skipped / error (a crash, a timeout, a limit)
    reason: str = ""
    observed: dict[ResultKey, Any] = field(default_factory=dict)  # values.y -> value, shares_memory.y.x -> bool
    error: dict[str, Any] | None = None  # {at, kind, type, message}
    unobservable: frozenset[str] = frozenset()  # properties the framework has no notion of


def names_of(case: Case) -> list[str]:
    names = [g.name for g in case.given]
    for step in case.flat_steps():
        names += [n for n in names_bound(step) if n not in names]
    return names


def probe_expect(case: Case) -> Expect:
    """An expectation of everything each kind observes by default about the case's names
    (the expected values are placeholders: only what the engine observes is used)."""
    names = names_of(case)
    made = [(result, source) for _, _, result, source in productions(case.steps)]
    if len(names) <= MAX_PAIR_NAMES:
        pairs = [(a, b) for i, a in enumerate(names) for b in names[:i]]
    else:
        pairs = made
    autograd = any(g.requires_grad for g in case.given)
    checks = {}
    for kind in kinds.KINDS:
        entries = kind.probe(names, pairs, autograd)
        if entries is not None:
            checks[kind.name] = entries
    return Expect(checks=checks)


def observe(case: Case, adapter: Any, sandbox: Sandbox | None = None) -> Observation:
    """What the case's steps do on the adapter's framework: in ``sandbox``'s child process,
    or in this process when there is none (tests of the splitting and rendering)."""
    obs = Observation(adapter.name, adapter.version(), unobservable=frozenset(adapter.unobservable))
    override = case.overrides.get(adapter.name)
    if override is not None and override.not_applicable:
        obs.status, obs.reason = NOT_APPLICABLE, override.not_applicable
        return obs
    missing = adapter.unavailable()
    if missing:
        obs.status, obs.reason = SKIPPED, missing
        return obs
    probe = replace(case, expect=probe_expect(case), overrides={})
    if sandbox is None:
        outcome = run(probe, adapter)
    else:
        try:
            outcome = sandbox.run(probe, adapter.name)
        except FrameworkUnavailable as exc:
            obs.status, obs.reason = SKIPPED, str(exc)
            return obs
        except SandboxError as exc:
            obs.status, obs.reason = ERROR, exc.reason
            return obs
        obs.version = sandbox.environments.get(adapter.name, {}).get("version", obs.version)
    if outcome.verdict == ERROR:
        obs.status, obs.reason = ERROR, outcome.reason
        return obs
    if outcome.verdict in (NOT_APPLICABLE, SKIPPED):
        obs.status, obs.reason = outcome.verdict, outcome.reason.removeprefix("not applicable: ")
        return obs
    obs.observed = dict(outcome.observed)
    for step in outcome.steps:
        if step.error is not None:
            obs.error = {"at": step.number, "kind": step.error.kind, "type": step.error.type,
                         "message": step.error.message}
    return obs


# ---- choosing what to print


def _key(value: Any) -> str:
    return json.dumps(shown(value), sort_keys=True)


def interesting(key: ResultKey, values: dict[str, Any], case: Case, made: set[tuple[str, str]]) -> bool:
    """Whether an observed key is worth an expectation line (its kind says); ``made``: the
    (result, input) pairs the case's steps produce."""
    return kinds.get(key.kind).worth_writing(key, values, case, made)


def split(case: Case, observations: list[Observation]) -> tuple[dict[ResultKey, Any],
                                                                 dict[str, dict[ResultKey, Any]]]:
    """(shared expectation, framework -> its override's expectation), keyed like
    ``observed`` (values.y). A value becomes shared when most frameworks that observed
    it agree; the others get an override. The error comes from the steps, under
    ``ResultKey("error")``."""
    ran = [o for o in observations if o.status == "ran"]
    shared: dict[ResultKey, Any] = {}
    per_fw: dict[str, dict[ResultKey, Any]] = {o.framework: {} for o in ran}
    keys = sorted({k for o in ran for k in o.observed if kinds.get(k.kind).arity})
    made = {(r, s) for _, _, r, s in productions(case.steps)}
    for key in keys:
        values = {o.framework: o.observed[key] for o in ran if key in o.observed}
        if not interesting(key, values, case, made):
            continue
        able = [o for o in ran if key.kind not in o.unobservable]
        if len(values) < len(able):  # not observed everywhere (a step raised first): per framework
            for fw, value in values.items():
                per_fw[fw][key] = value
            continue
        counts = Counter(_key(v) for v in values.values())
        majority = counts.most_common(1)[0][0]
        shared[key] = next(v for v in values.values() if _key(v) == majority)
        for fw, value in values.items():
            if _key(value) != majority:
                per_fw[fw][key] = value
    errors = {o.framework: o.error for o in ran}
    signature = Counter(json.dumps(e and [e["at"], e["kind"]]) for e in errors.values())
    if signature:
        common = json.loads(signature.most_common(1)[0][0])
        if common is not None:
            shared[ERROR_KEY] = {"at": common[0], "kind": common[1],
                               **{fw: e for fw, e in errors.items() if e and [e["at"], e["kind"]] == common}}
        for fw, e in errors.items():
            if json.dumps(e and [e["at"], e["kind"]]) != json.dumps(common):
                per_fw[fw][ERROR_KEY] = e and {"at": e["at"], "kind": e["kind"], fw: e}
    return shared, {fw: exp for fw, exp in per_fw.items() if exp}


# ---- YAML


CASE_INDENT = "    "  # where 'expect:' sits in a case file: paste the output over 'expect: {}'


def render(case: Case, observations: list[Observation]) -> str:
    shared, overrides = split(case, observations)
    ran = ", ".join(f"{o.framework} {o.version}" for o in observations if o.status == "ran") or "no framework"
    lines = [f"# conformance observe {case.id}  ({case.location})",
             f"# observed on {ran}.",
             "# Review before pasting: this is what the frameworks did, not necessarily what they",
             "# should do. Delete lines that do not matter to the case."]
    for o in observations:
        if o.status != "ran":
            lines.append(f"# {o.framework}: {o.status.replace('_', ' ')}: {o.reason}")
    lines.append("expect:")
    lines += ["  " + line for line in _expect_lines(shared)] or ["  {}  # nothing observed"]
    if overrides:
        lines.append("frameworks:")
        for fw, exp in sorted(overrides.items()):
            lines.append(f"  {fw}:")
            lines.append(f'    reason: "TODO: why {fw} differs; cite its documentation or an upstream issue"')
            lines.append("    expect:")
            lines += ["      " + line for line in _expect_lines(exp)]
            stated = {c: s for c, s in case.claims.items() if s != "related"}
            if stated:
                lines.append("    claims: {" + ", ".join(f"{c}: {s}" for c, s in stated.items())
                             + "}  # TODO: does each claim hold on " + fw + "?")
    return "\n".join(CASE_INDENT + line for line in lines) + "\n"


def _expect_lines(exp: dict[ResultKey, Any]) -> list[str]:
    """Each kind's lines, in the order of the kinds' ``observe_order``."""
    groups: dict[str, list[tuple[ResultKey, Any]]] = {}
    for key, value in exp.items():
        groups.setdefault(key.kind, []).append((key, value))
    written = sorted((kind for kind in map(kinds.get, groups) if kind.observe_order is not None),
                     key=lambda kind: kind.observe_order or 0)
    return [line for kind in written for line in kind.yaml_lines(groups[kind.name])]
