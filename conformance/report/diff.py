"""``conformance diff OLD.json NEW.json``: what changed between two runs.

Per (case, framework): a change of outcome (new failures, new passes, anything else) and a
change of observed behaviour (aliasing classes, the error raised, observed values); cases
added and removed. Durations and the environment's timings never count as changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance import kinds
from conformance.escaping import for_markdown, markdown_code
from conformance.kinds.relations import CLASS_WORDS
from conformance.outcomes import ERROR, FAIL, KNOWN_DIVERGENCE, PASS
from conformance.report.analysis import describe, normalised, signature
from conformance.resultsmodel import NOT_INSTALLED, Environment, ErrorSeen, Record, ResultsDocument

GOOD = (PASS, KNOWN_DIVERGENCE)
BAD = (FAIL, ERROR)
CHANGE_TITLES = {"new failure": "new failures", "new pass": "new passes", "outcome changed": "outcome changed",
                 "behaviour changed": "behaviour changed"}


@dataclass
class Change:
    case: str
    framework: str
    old_outcome: str
    new_outcome: str
    old_behaviour: str
    new_behaviour: str
    details: list[str] = field(default_factory=list)  # what differs in the observations

    @property
    def kind(self) -> str:
        if self.new_outcome in BAD and self.old_outcome not in BAD:
            return "new failure"
        if self.new_outcome in GOOD and self.old_outcome in BAD:
            return "new pass"
        if self.old_outcome != self.new_outcome:
            return "outcome changed"
        return "behaviour changed"


@dataclass
class Diff:
    old_env: Environment
    new_env: Environment
    added: list[str]
    removed: list[str]
    changes: list[Change]
    added_items: list[tuple[str, str]]  # (case, framework) run only in the new results
    removed_items: list[tuple[str, str]]

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changes or self.added_items or self.removed_items)


def _items(results: ResultsDocument) -> dict[tuple[str, str], Record]:
    return {(str(r.case), str(r.framework)): r for r in results.results}


def compare(old: ResultsDocument, new: ResultsDocument) -> Diff:
    old_items, new_items = _items(old), _items(new)
    old_cases, new_cases = set(old.cases), set(new.cases)
    changes = []
    for key in sorted(old_items.keys() & new_items.keys()):
        a, b = old_items[key], new_items[key]
        details = _observation_changes(a, b)
        if a.outcome == b.outcome and not details:
            continue
        if not details:  # the outcome changed and no compared observation did: say what did
            details = _message_change(a, b)
        changes.append(Change(key[0], key[1], a.outcome, b.outcome, _words(a), _words(b), details))
    only = lambda x, y: sorted(k for k in x.keys() - y.keys() if k[0] in (old_cases & new_cases))  # noqa: E731
    return Diff(old.environment, new.environment, sorted(new_cases - old_cases), sorted(old_cases - new_cases),
                changes, only(new_items, old_items), only(old_items, new_items))


def _words(record: Record) -> str:
    if record.outcome in GOOD:
        return describe(record.behaviour)[1]
    if record.outcome == FAIL:
        return f"{describe(record.behaviour)[1]} (fail: {record.reason})"
    return f"{record.outcome}: {record.reason}"


def _observation_changes(a: Record, b: Record) -> list[str]:
    # the error's message and the warnings' texts are not compared: they carry addresses
    # and wording; the error kind and step are (through the signature): the kinds not compared
    keys = {key for key in set(a.observed) | set(b.observed) if kinds.compared(key)}
    if signature(a, keys) == signature(b, keys):
        return []
    out = []
    pa = {(p.a, p.b): p.class_ for p in a.behaviour.pairs}
    pb = {(p.a, p.b): p.class_ for p in b.behaviour.pairs}
    for pair in sorted(pa.keys() | pb.keys()):
        if pa.get(pair) != pb.get(pair):
            out.append(f"{pair[0]}↔{pair[1]}: {_cls(pa.get(pair))} → {_cls(pb.get(pair))}")
    ea, eb = a.behaviour.error, b.behaviour.error
    if (ea and (ea.at, ea.kind)) != (eb and (eb.at, eb.kind)):
        out.append(f"error: {_err(ea)} → {_err(eb)}")
    oa, ob = a.observed, b.observed
    for key in sorted(keys):
        if kinds.aliasing(key):  # shown as the pair's class, above
            continue
        if (key in oa, normalised(oa.get(key))) != (key in ob, normalised(ob.get(key))):
            out.append(f"{key}: {_short(oa.get(key, 'not observed'))} → {_short(ob.get(key, 'not observed'))}")
    return out


def _message_change(a: Record, b: Record) -> list[str]:
    """The error message's change, where only the wording differs (an expectation that
    matches the message then decides the outcome)."""
    ea, eb = a.behaviour.error, b.behaviour.error
    ma, mb = (None if e is None else e.message for e in (ea, eb))
    if ma != mb:
        return [f"error message: {_short(ma or 'none')} → {_short(mb or 'none')}"]
    return []


def _cls(value: str | None) -> str:
    return "not observed" if value is None else CLASS_WORDS.get(value, value)


def _err(e: ErrorSeen | None) -> str:
    return "none" if not e else f"{e.kind} at step {e.at} ({e.type})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def render_text(diff: Diff) -> str:
    lines = [_versions_line(diff)]
    if diff.empty:
        lines.append("no changes")
        return "\n".join(lines) + "\n"
    for title, ids in (("cases added", diff.added), ("cases removed", diff.removed)):
        if ids:
            lines.append(f"{title} ({len(ids)}):")
            lines += [f"  {i}" for i in ids]
    for title, items in (("items added", diff.added_items), ("items removed", diff.removed_items)):
        if items:
            lines.append(f"{title} ({len(items)}):")
            lines += [f"  {c}[{fw}]" for c, fw in items]
    for kind, title in CHANGE_TITLES.items():
        group = [c for c in diff.changes if c.kind == kind]
        if not group:
            continue
        lines.append(f"{title} ({len(group)}):")
        for c in group:
            lines.append(f"  {c.case}[{c.framework}]: {c.old_outcome} → {c.new_outcome}")
            lines.append(f"    was: {c.old_behaviour}")
            lines.append(f"    now: {c.new_behaviour}")
            lines += [f"    {d}" for d in c.details]
    return "\n".join(lines) + "\n"


def render_markdown(diff: Diff) -> str:
    lines = ["# Behaviour changes", "", _md(_versions_line(diff)), ""]
    if diff.empty:
        lines.append("No changes.")
        return "\n".join(lines) + "\n"
    for title, ids in (("Cases added", diff.added), ("Cases removed", diff.removed)):
        if ids:
            lines += [f"## {title} ({len(ids)})", ""] + [f"- {markdown_code(i, in_table=False)}" for i in ids] + [""]
    for title, items in (("Items added", diff.added_items), ("Items removed", diff.removed_items)):
        if items:
            lines += [f"## {title} ({len(items)})", ""] + [f"- {markdown_code(f'{c}[{fw}]', in_table=False)}"
                                                          for c, fw in items] + [""]
    if diff.changes:
        lines += [f"## Changes ({len(diff.changes)})", "", "| case | framework | change | was | now | details |",
                  "|---|---|---|---|---|---|"]
        for c in diff.changes:
            lines.append(f"| {markdown_code(c.case)} | {_md(c.framework)} | {c.kind}: {_md(c.old_outcome)} → "
                         f"{_md(c.new_outcome)} | "
                         f"{_md(c.old_behaviour)} | {_md(c.new_behaviour)} | {_md('; '.join(c.details))} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def _versions_line(diff: Diff) -> str:
    parts = []
    old_fw, new_fw = diff.old_env.frameworks, diff.new_env.frameworks
    for fw in sorted(set(old_fw) | set(new_fw)):
        a, b = (old_fw.get(fw) or NOT_INSTALLED).version, (new_fw.get(fw) or NOT_INSTALLED).version
        parts.append(f"{fw} {a} → {b}" if a != b else f"{fw} {a}")
    return "frameworks: " + ", ".join(parts)


def _md(text: str) -> str:
    return for_markdown(" ".join(str(text).split()))
