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
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from conformance.outcomes import ERROR, NOT_APPLICABLE, SKIPPED
from conformance.run.engine import run
from conformance.model import Case, Expect
from conformance.run.sandbox import FrameworkUnavailable, Sandbox, SandboxError
from conformance.ir import names_bound, productions

REGEX_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")
MAX_PAIR_NAMES = 8  # above this, relations are observed only for the pairs steps produce


@dataclass
class Observation:
    framework: str
    version: str | None
    status: str = "ran"  # ran / not_applicable / skipped / error (a crash, a timeout, a limit)
    reason: str = ""
    observed: dict[str, Any] = field(default_factory=dict)  # "values.y" -> value, "shares_memory.y.x" -> bool
    error: dict[str, Any] | None = None  # {at, kind, type, message}
    unobservable: frozenset[str] = frozenset()  # properties the framework has no notion of


def names_of(case: Case) -> list[str]:
    names = [g.name for g in case.given]
    for step in case.flat_steps():
        names += [n for n in names_bound(step) if n not in names]
    return names


def probe_expect(case: Case) -> Expect:
    names = names_of(case)
    made = [(result, source) for _, _, result, source in productions(case.steps)]
    if len(names) <= MAX_PAIR_NAMES:
        pairs = [(a, b) for i, a in enumerate(names) for b in names[:i]]
    else:
        pairs = made
    # the expected values are placeholders: only what the engine observes is used ([] for
    # values, because the values check compares arrays and must not choke on None)
    placeholder = {"values": [], "grad": [], "dtype": None, "version_change": None, "requires_grad": None,
                   "is_leaf": None}
    props = ["values", "dtype", "version_change"]
    if any(g.requires_grad for g in case.given):
        props += ["requires_grad", "grad", "is_leaf"]
    properties = {p: {n: placeholder[p] for n in names} for p in props}
    return Expect(relations={"shares_memory": {p: True for p in pairs}, "same_object": {p: True for p in pairs}},
                  properties=properties)


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


def _shown(value: Any) -> Any:
    """Rounded to what the values check can tell apart (float32 noise removed); complex
    values in the case format's {real, imag} form."""
    if _has_complex(value):
        return {"real": _shown(_part(value, "real")), "imag": _shown(_part(value, "imag"))}
    if isinstance(value, list):
        return [_shown(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.6g}")
    return value


def _has_complex(value: Any) -> bool:
    return isinstance(value, complex) or (isinstance(value, list) and any(_has_complex(v) for v in value))


def _part(value: Any, part: str) -> Any:
    if isinstance(value, list):
        return [_part(v, part) for v in value]
    return float(getattr(complex(value), part))


def _key(value: Any) -> str:
    return json.dumps(_shown(value), sort_keys=True)


def interesting(key: str, values: dict[str, Any], case: Case, made: set[tuple[str, str]]) -> bool:
    """Whether an observed key is worth an expectation line; ``made``: the (result, input)
    pairs the case's steps produce."""
    kind, _, rest = key.partition(".")
    given = {g.name for g in case.given}
    if kind in ("values", "grad") and not all(_expressible(v) for v in values.values()):
        return False  # memory nobody wrote, or an array too large to record: nothing to paste
    if kind in ("shares_memory", "same_object"):
        a, _, b = rest.partition(".")
        return any(v is True for v in values.values()) or (a, b) in made
    if kind == "dtype":
        first = next(iter(case.given), None)
        return first is not None and any(v != first.dtype for v in values.values())
    if kind == "version_change":
        return rest in given and any(v not in (0, None) for v in values.values())
    if kind in ("requires_grad", "is_leaf"):
        return True
    if kind == "grad":
        return rest in given
    return kind == "values"


def _expressible(value: Any) -> bool:
    """Whether an observed value can be written as an expectation (the engine records a
    string for unspecified memory and a digest for a large array)."""
    if isinstance(value, list):
        return all(_expressible(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex))


def split(case: Case, observations: list[Observation]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(shared expectation, framework -> its override's expectation), keyed like
    ``observed`` ("values.y"). A value becomes shared when most frameworks that observed
    it agree; the others get an override."""
    ran = [o for o in observations if o.status == "ran"]
    shared: dict[str, Any] = {}
    per_fw: dict[str, dict[str, Any]] = {o.framework: {} for o in ran}
    keys = sorted({k for o in ran for k in o.observed if k not in ("error", "warning")})
    made = {(r, s) for _, _, r, s in productions(case.steps)}
    for key in keys:
        values = {o.framework: o.observed[key] for o in ran if key in o.observed}
        if not interesting(key, values, case, made):
            continue
        able = [o for o in ran if key.partition(".")[0] not in o.unobservable]
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
            shared["error"] = {"at": common[0], "kind": common[1],
                               **{fw: e for fw, e in errors.items() if e and [e["at"], e["kind"]] == common}}
        for fw, e in errors.items():
            if json.dumps(e and [e["at"], e["kind"]]) != json.dumps(common):
                per_fw[fw]["error"] = e and {"at": e["at"], "kind": e["kind"], fw: e}
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


def _expect_lines(exp: dict[str, Any]) -> list[str]:
    groups: dict[str, list[str]] = {}
    for key, value in exp.items():
        if key == "error":
            continue
        kind, _, rest = key.partition(".")
        name = rest.replace(".", " & ") if kind in ("shares_memory", "same_object") else rest
        groups.setdefault(kind, []).append(f"{name}: {json.dumps(_shown(value))}")
    order = ("shares_memory", "same_object", "values", "dtype", "version_change", "requires_grad", "is_leaf", "grad")
    lines = [f"{kind}: {{{', '.join(groups[kind])}}}" for kind in order if kind in groups]
    if "error" in exp:
        lines += _error_lines(exp["error"])
    return lines


def _error_lines(error: dict[str, Any] | None) -> list[str]:
    if error is None:
        return ["error: null"]
    out = ["error:", f"  at: {error['at']}", f"  kind: {error['kind']}"]
    for fw, e in error.items():
        if isinstance(e, dict):
            match = _match(e["message"])
            out.append(f"  {fw}: {{type: {e['type'].rsplit('.', 1)[-1]}, match: {json.dumps(match)}}}")
    return out


def _match(message: str) -> str:
    """A regex for the start of an error message: its first line, cut at a word, escaped."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    if len(first) > 60:
        first = first[:60].rsplit(" ", 1)[0]
    return REGEX_SPECIAL.sub(r"\\\1", first)
