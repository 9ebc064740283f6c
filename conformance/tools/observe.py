"""``conformance observe``: run a case's steps on each framework, observe everything the
expectations can say about them, and print it as YAML ready to paste under ``expect``, with
per-framework overrides where the frameworks differ (``--write`` puts it into the case file
instead: :mod:`conformance.tools.casewrite`).

It asks the engine to check a probe expectation that names every relation and property of
the case's names; the engine records what it observed whatever was expected, and that
record is what is printed. Nothing here is compared. The case runs in the sandbox's child
process, with its timeout, like a pytest item: a case that crashes or hangs a framework
costs that framework's observation, never the command.

What is observed: every property of every name, and the relations (shares_memory,
same_storage, same_object) between pairs of names: every pair when the case has at most
:data:`MAX_PAIR_NAMES` names, else the pairs its steps relate (:func:`related_pairs`). Which of
those are written is each kind's ``worth_writing`` (for the relations: a pair where one holds
somewhere, or a result and its source), and a kind ``implied_by`` another (same_storage) only
where it says more. The error and the first warning come from the step records.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

from conformance import kinds
from conformance.ir import names_bound, productions
from conformance.kinds.base import shown
from conformance.kinds.errors import message_pattern
from conformance.model import Case, Expect, ResultKey
from conformance.outcomes import ERROR, NOT_APPLICABLE, REFUSED, SKIPPED
from conformance.run.engine import run
from conformance.run.sandbox import FrameworkUnavailable, Sandbox, SandboxError

MAX_PAIR_NAMES = 8  # above this, relations are observed only for the pairs the steps relate
ERROR_KEY = ResultKey("error")
WARNING_KEY = ResultKey("warning")


@dataclass
class Observation:
    framework: str
    version: str | None
    # ran / not_applicable / skipped / refused (an immutable framework refused a mutation of
    # the steps: its item's verdict, so no override) / error (a crash, a timeout, a limit)
    status: str = "ran"
    reason: str = ""
    observed: dict[ResultKey, Any] = field(default_factory=dict)  # values.y -> value, shares_memory.y.x -> bool
    error: dict[str, Any] | None = None  # {at, kind, type, message}
    warning: dict[str, Any] | None = None  # the first step that warned: {at, message ('Category: message')}
    unobservable: frozenset[str] = frozenset()  # properties the framework has no notion of


def names_of(case: Case) -> list[str]:
    names = [g.name for g in case.given]
    for step in case.flat_steps():
        names += [n for n in names_bound(step) if n not in names]
    return names


def made_pairs(case: Case) -> set[tuple[str, str]]:
    """(result, source) for each step that binds names to what an operation (or ``x[...]``)
    made of a source, its first name argument: ``y = x.view(4)`` gives (y, x), ``a, b =
    x.split(2)`` gives (a, x) and (b, x). Only names that keep their binding to the end of
    the case (``conformance.ir.productions``), so that a relation observed at the end
    describes what that step did."""
    return {(result, source) for _, _, result, source in productions(case.steps)}


def related_pairs(case: Case, names: list[str]) -> list[tuple[str, str]]:
    """The pairs of names the steps relate, (later, earlier): a result and what it was made
    from, however many steps apart (a view of a view and its base), and two results made from
    the same name (the halves of a split, two slices of one input)."""
    # over every name the steps bind, in step order, so that two names related through one
    # left out of ``names`` (a compiled function's intermediate) stay related
    ancestors: dict[str, set[str]] = defaultdict(set)
    for _, _, result, source in productions(case.steps):
        ancestors[result] |= {source} | ancestors[source]
    written = out_pairs(case)
    return [(a, b) for i, a in enumerate(names) for b in names[:i]
            if b in ancestors[a] or a in ancestors[b] or ancestors[a] & ancestors[b]
            or (a, b) in written or (b, a) in written]


def out_pairs(case: Case) -> set[tuple[str, str]]:
    """(result, out tensor) for each step ``r = f(..., out=o)`` (``r, r1 = f(..., out=(o,
    o1))``): what an out= variant returns and what it was asked to write, which its source
    (the first argument) does not relate."""
    from conformance.ir import NameTarget, Op, Ref, Seq

    found = set()
    for step in case.flat_steps():
        value = getattr(step, "value", None)
        if step.kind != "assign" or not isinstance(value, Op):
            continue
        outs = [e for name, e in value.kwargs if name == "out"]
        named = [o for e in outs for o in ((e,) if isinstance(e, Ref) else e.items if isinstance(e, Seq) else ())
                 if isinstance(o, Ref)]
        results = [t.name for t in step.targets if isinstance(t, NameTarget)]
        found |= {(r, o.name) for r in results for o in named}
    return found


def probe_expect(case: Case, only: Collection[str] | None = None, names_only: Collection[str] | None = None) -> Expect:
    """An expectation of everything each kind (of ``only``, when given) observes by default
    about the case's names (of ``names_only``, when given) (the expected values are
    placeholders: only what the engine observes is used)."""
    names = [n for n in names_of(case) if names_only is None or n in names_only]
    if len(names) <= MAX_PAIR_NAMES:
        pairs = [(a, b) for i, a in enumerate(names) for b in names[:i]]
    else:
        pairs = related_pairs(case, names)
    autograd = any(g.requires_grad for g in case.given)
    checks = {}
    for kind in kinds.KINDS:
        if only is not None and kind.name not in only:
            continue
        entries = kind.probe(names, pairs, autograd)
        if entries is not None:
            checks[kind.name] = entries
    return Expect(checks=checks)


def observe(case: Case, adapter: Any, sandbox: Sandbox | None = None,
            only: Collection[str] | None = None, names_only: Collection[str] | None = None) -> Observation:
    """What the case's steps do on the adapter's framework: in ``sandbox``'s child process,
    or in this process when there is none (tests of the splitting and rendering). ``only``:
    the kinds to observe (conformance discover's oracles read values, shares_memory and
    grad), by default every kind; ``names_only``: the names to observe, by default all."""
    obs = Observation(adapter.name, adapter.version(), unobservable=frozenset(adapter.unobservable))
    override = case.overrides.get(adapter.name)
    if override is not None and override.not_applicable:
        obs.status, obs.reason = NOT_APPLICABLE, override.not_applicable
        return obs
    missing = adapter.unavailable()
    if missing:
        obs.status, obs.reason = SKIPPED, missing
        return obs
    probe = replace(case, expect=probe_expect(case, only, names_only), overrides={})
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
    if outcome.verdict in (NOT_APPLICABLE, SKIPPED, REFUSED):
        reason = outcome.reason.removeprefix("not applicable: ").removeprefix("refused: ")
        obs.status, obs.reason = outcome.verdict, reason
        return obs
    obs.observed = dict(outcome.observed)
    for step in outcome.steps:
        if step.error is not None:
            obs.error = {"at": step.number, "kind": step.error.kind, "type": step.error.type,
                         "message": step.error.message}
        # a case expects one warning: the first one, of the first step that warns
        said = [w for w in step.warnings if not w.startswith("... and ")]
        if said and obs.warning is None:
            obs.warning = {"at": step.number, "message": said[0]}
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
    ``observed`` (values.y). A value becomes shared when most eager frameworks that
    observed it agree; the others get an override. A compiled mode votes for nothing: it
    gets an override only where it differs from what its lineage expects (the shared value,
    then the overrides of the framework it compiles and of the modes it derives from:
    registry.lineage), since those apply to it first. The error and the warning come from
    the steps, under ``ResultKey("error")`` and ``ResultKey("warning")``."""
    from conformance import registry

    done = [o for o in observations if o.status == "ran"]
    modes = [o for o in done if o.framework in registry.framework_names() and registry.compiles(o.framework)]
    shared, per_fw = _split_eager(case, [o for o in done if o not in modes])
    for mode in modes:
        expected = dict(shared)
        for name in registry.lineage(mode.framework):
            expected.update(per_fw.get(name, {}))
        per_fw[mode.framework] = _differing(case, mode, expected)
    return shared, {fw: exp for fw, exp in per_fw.items() if exp}


def _differing(case: Case, mode: Observation, expected: dict[ResultKey, Any]) -> dict[ResultKey, Any]:
    """What a compiled mode observed otherwise than ``expected`` (its lineage's expectation):
    its own value, or null where it observed nothing of an expectation it could have. An
    observation the lineage expects is compared even where the mode's value alone would not
    be worth a line (a contiguous [2, 1] where the eager strides are [1, 3], a dtype equal to
    the input's where the eager one is not)."""
    own: dict[ResultKey, Any] = {}
    mine = chosen(case, [mode])
    keys = mine + [k for k in expected if k.names and k in mode.observed and k not in mine]
    for key in keys:
        if key not in expected or _as_compiled(key, mode.observed[key]) != _as_compiled(key, expected[key]):
            own[key] = mode.observed[key]
    for key in expected:
        if key in (ERROR_KEY, WARNING_KEY) or key in mode.observed or key.kind in mode.unobservable:
            continue
        own[key] = None  # a step raised before it could be observed
    checks: tuple[tuple[ResultKey, dict[str, Any] | None, Any, Any], ...] = (
        (ERROR_KEY, mode.error, _error_signature,
         lambda e: {"at": e["at"], "kind": e["kind"], mode.framework: e}),
        (WARNING_KEY, mode.warning, _warning_signature, lambda w: w))
    for key, seen, signature, value in checks:
        wanted = expected.get(key)
        if json.dumps(seen and signature(seen)) != json.dumps(wanted and signature(wanted)):
            own[key] = seen and value(seen)
    return own


def _error_signature(error: dict[str, Any]) -> list[Any]:
    """What tells two observed errors apart: the step and the kind."""
    return [error["at"], error["kind"]]


def _warning_signature(warning: dict[str, Any]) -> list[Any]:
    """What tells two observed warnings apart: the step and the start of the message."""
    return [warning["at"], message_pattern(warning["message"])]


def _as_compiled(key: ResultKey, value: Any) -> str:
    """A value as a compiled mode's item compares it: a version counter's change as whether
    it changed (a compiled function applies an input's mutations as its own copies: aot_eager
    raises the counter by 2, inductor by 1; conformance/run/compiled.py, counts_versions)."""
    if key.kind == "version_change" and isinstance(value, int) and not isinstance(value, bool):
        return _key(value > 0)
    return _key(value)


def _split_eager(case: Case, ran: list[Observation]) -> tuple[dict[ResultKey, Any],
                                                             dict[str, dict[ResultKey, Any]]]:
    """The shared expectation and the eager frameworks' overrides (every framework's entry,
    empty where it agrees). A key most of the frameworks that can observe it did observe is
    shared (the majority's value); a framework where a step raised before it could be
    observed gets null for it (not expected there), as a compiled mode does: one framework
    that raises at its first step does not take every entry out of the shared expectation.
    A key only a minority observed is written per framework."""
    shared: dict[ResultKey, Any] = {}
    per_fw: dict[str, dict[ResultKey, Any]] = {o.framework: {} for o in ran}
    for key in chosen(case, ran):
        values = {o.framework: o.observed[key] for o in ran if key in o.observed}
        able = [o.framework for o in ran if key.kind not in o.unobservable]
        if 2 * len(values) <= len(able):  # observed by half of them or fewer: per framework
            for fw, value in values.items():
                per_fw[fw][key] = value
            continue
        counts = Counter(_key(v) for v in values.values())
        majority = counts.most_common(1)[0][0]
        shared[key] = next(v for v in values.values() if _key(v) == majority)
        for fw, value in values.items():
            if _key(value) != majority:
                per_fw[fw][key] = value
        for fw in able:
            if fw not in values:  # a step raised before it could be observed
                per_fw[fw][key] = None
    _split_whole(ERROR_KEY, {o.framework: o.error for o in ran}, shared, per_fw,
                 signature=_error_signature,
                 shared_value=lambda e, by_fw: {"at": e["at"], "kind": e["kind"], **by_fw},
                 own_value=lambda fw, e: {"at": e["at"], "kind": e["kind"], fw: e})
    _split_whole(WARNING_KEY, {o.framework: o.warning for o in ran}, shared, per_fw,
                 signature=_warning_signature,
                 shared_value=lambda w, by_fw: w, own_value=lambda fw, w: w)
    return shared, per_fw


def chosen(case: Case, ran: list[Observation]) -> list[ResultKey]:
    """The observed keys worth an expectation line, in order: each kind's ``worth_writing``;
    a kind ``implied_by`` another only where the two differ on some framework, and then
    with the other kind's entry for the same names."""
    keys = sorted({k for o in ran for k in o.observed if kinds.get(k.kind).arity})
    made = made_pairs(case)
    out: set[ResultKey] = set()
    for key in keys:
        kind = kinds.get(key.kind)
        values = {o.framework: o.observed[key] for o in ran if key in o.observed}
        if not interesting(key, values, case, made):
            continue
        if kind.implied_by is not None:
            implied = ResultKey(kind.implied_by, key.names)
            if all(implied in o.observed and o.observed[implied] == o.observed[key] for o in ran if key in o.observed):
                continue
            out.add(implied)
        out.add(key)
    return [k for k in keys if k in out]


def _split_whole(key: ResultKey, observed: dict[str, dict[str, Any] | None], shared: dict[ResultKey, Any],
                 per_fw: dict[str, dict[ResultKey, Any]], signature: Any, shared_value: Any, own_value: Any) -> None:
    """An observation about the case as a whole (the error, the warning; None: none), which
    an override replaces whole: the majority's (by ``signature``) is shared, with each of
    those frameworks' details; each other framework gets its own, or null."""
    def sign(value: dict[str, Any] | None) -> str:
        return json.dumps(value and signature(value))

    counts = Counter(sign(v) for v in observed.values())
    if not counts:
        return
    # the most frequent; on a tie, none (a step raising or warning is what an override says)
    common = max(counts, key=lambda s: (counts[s], s == sign(None)))
    agreeing = {fw: v for fw, v in observed.items() if sign(v) == common}
    first = next(iter(agreeing.values()))
    if first is not None:
        shared[key] = shared_value(first, agreeing)
    for fw, value in observed.items():
        if fw not in agreeing:
            per_fw[fw][key] = value and own_value(fw, value)


# ---- YAML


CASE_INDENT = "    "  # where 'expect:' sits in a case file: paste the output over 'expect: {}'


def todo_reason(framework: str, before: str | None = None) -> str:
    """The placeholder reason of an override observe writes, which lint refuses (CF012)
    until the contributor says why the framework differs; ``before``: the reason the
    override had (``--write --force``), kept in it to reuse."""
    text = f"TODO: why {framework} differs; cite its documentation or an upstream issue"
    return text + (f" (the reason before: {before})" if before else "")


def expect_lines(case: Case, shared: dict[ResultKey, Any], overrides: dict[str, dict[ResultKey, Any]],
                 reasons: dict[str, str] | None = None) -> list[str]:
    """``expect:`` and, where frameworks differ, ``frameworks:`` with each override (a TODO
    reason, and the case's claims to decide), as YAML lines at the case's indentation less
    :data:`CASE_INDENT`. ``reasons``: framework -> the reason its override had before."""
    lines = ["expect:"]
    lines += ["  " + line for line in _expect_lines(shared)] or ["  {}  # nothing observed"]
    if overrides:
        lines.append("frameworks:")
        for fw, exp in sorted(overrides.items()):
            lines.append(f"  {fw}:")
            lines.append(f"    reason: {json.dumps(todo_reason(fw, (reasons or {}).get(fw)))}")
            lines.append("    expect:")
            lines += ["      " + line for line in _expect_lines(exp)]
            stated = {c: s for c, s in case.claims.items() if s != "related"}
            if stated:
                lines.append("    claims: {" + ", ".join(f"{c}: {s}" for c, s in stated.items())
                             + "}  # TODO: does each claim hold on " + fw + "?")
    return lines


def render(case: Case, observations: list[Observation]) -> str:
    shared, overrides = split(case, observations)
    ran = ", ".join(f"{o.framework} {o.version}" for o in observations if o.status == "ran") or "no framework"
    lines = [f"# conformance observe {case.id}  ({case.location})",
             f"# observed on {ran}.",
             "# Review before pasting: this is what the frameworks did, not necessarily what they",
             "# should do. Delete lines that do not matter to the case. (--write puts it in the file.)"]
    for o in observations:
        if o.status != "ran":
            lines.append(f"# {o.framework}: {o.status.replace('_', ' ')}: {o.reason}")
    lines += expect_lines(case, shared, overrides)
    return "\n".join(CASE_INDENT + line for line in lines) + "\n"


def _expect_lines(exp: dict[ResultKey, Any]) -> list[str]:
    """Each kind's lines, in the order of the kinds' ``observe_order``."""
    groups: dict[str, list[tuple[ResultKey, Any]]] = {}
    for key, value in exp.items():
        groups.setdefault(key.kind, []).append((key, value))
    written = sorted((kind for kind in map(kinds.get, groups) if kind.observe_order is not None),
                     key=lambda kind: kind.observe_order or 0)
    return [line for kind in written for line in kind.yaml_lines(groups[kind.name])]
