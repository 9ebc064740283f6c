"""The behaviour changelog: per framework and per consecutive pair of its releases, every
case whose behaviour changed, with the two observations side by side.

Made from the results files of ``conformance matrix`` (one per release, ``run.release``),
or any results files that each ran one framework's releases. Two records of the same item
differ when their outcome differs or their observations do (:func:`conformance.report.diff.compare`:
aliasing classes, the error raised, observed values, gradients; not error messages' or
warnings' wording, nor durations). Deterministic: the same files give the same bytes
(``conformance changelog --check`` in CI).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from html import escape

from conformance import registry
from conformance.escaping import for_markdown, markdown_code
from conformance.outcomes import NOT_APPLICABLE, UNCHECKED
from conformance.releases import release_key
from conformance.report.analysis import RAN
from conformance.report.diff import Change, compare
from conformance.resultsmodel import NOT_INSTALLED, Record, ResultsDocument

NAMES = ("changelog.md", "changelog.html")

# What a change between two consecutive releases is (:func:`classify`), in the order the
# changelog shows the groups
BEHAVIOUR = "behaviour changed"  # the item ran on both releases; its outcome or observations differ
APPEARED = "API appeared"  # not applicable on the older release, ran on the newer
REMOVED = "API removed"  # ran on the older release, not applicable on the newer
OTHER = "other outcome change"  # anything else: skipped, error on either side
GROUPS = (BEHAVIOUR, APPEARED, REMOVED, OTHER)
GROUP_WORDS = {
    BEHAVIOUR: "the item ran on both releases and what it does changed (its outcome or observations)",
    APPEARED: "not applicable on the older release, ran on the newer: mostly an API the release adds (the "
              "older release's reason says why it did not apply: a missing API, or a crash or behaviour the "
              "case marks not applicable)",
    REMOVED: "ran on the older release, not applicable on the newer",
    OTHER: "any other change of outcome: skipped or an error on one side",
}
_RAN = (*RAN, UNCHECKED)


def classify(change: Change) -> str:
    """Which group a change between two releases is in: :data:`BEHAVIOUR` when the item ran
    on both (an outcome of :data:`conformance.report.analysis.RAN`, or nothing compared),
    :data:`APPEARED` for not applicable → ran, :data:`REMOVED` for the reverse, else :data:`OTHER`."""
    old_ran, new_ran = change.old_outcome in _RAN, change.new_outcome in _RAN
    if old_ran and new_ran:
        return BEHAVIOUR
    if change.old_outcome == NOT_APPLICABLE and new_ran:
        return APPEARED
    if old_ran and change.new_outcome == NOT_APPLICABLE:
        return REMOVED
    return OTHER


class ChangelogError(Exception):
    pass


@dataclass
class ReleaseColumn:
    framework: str
    version: str
    file: str
    document: ResultsDocument
    error: str | None  # the release did not run: why

    @property
    def items(self) -> int:
        return sum(1 for r in self.document.results if of(r, self.framework))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.document.results:
            if of(r, self.framework):
                out[r.outcome] = out.get(r.outcome, 0) + 1
        return dict(sorted(out.items()))


@dataclass
class Step:
    old: ReleaseColumn
    new: ReleaseColumn
    changes: list[Change] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # items run only on the newer release
    removed: list[str] = field(default_factory=list)
    not_compared: str | None = None  # one of the two did not run

    def groups(self) -> dict[str, list[Change]]:
        """The changes by :func:`classify`, the groups that have any, in :data:`GROUPS` order."""
        out: dict[str, list[Change]] = {g: [] for g in GROUPS}
        for c in self.changes:
            out[classify(c)].append(c)
        return {g: cs for g, cs in out.items() if cs}

    def counts(self) -> dict[str, int]:
        return {g: len(cs) for g, cs in self.groups().items()}


@dataclass
class Changelog:
    corpus: list[str]  # the corpus revisions of the files
    frameworks: dict[str, list[ReleaseColumn]]
    steps: dict[str, list[Step]]
    titles: dict[str, str]  # case id -> title


def of(record: Record, framework: str) -> bool:
    """Whether a record is of the framework or of one of its compiled modes."""
    name = record.framework or ""
    return name == framework or (name in registry.framework_names() and registry.compiles(name) is not None
                                 and framework in registry.lineage(name))


def column(name: str, document: ResultsDocument) -> ReleaseColumn:
    """The release a results file is of: its ``run.release`` (conformance matrix), else the
    one eager framework its items ran on."""
    release = document.run.release
    if release is not None:
        return ReleaseColumn(release.framework, release.version, name, document, release.error)
    ran = sorted({r.framework for r in document.results if r.outcome != "skipped" and r.framework is not None})
    eager = sorted({fw for fw in ran if not (fw in registry.framework_names() and registry.compiles(fw))})
    if len(eager) != 1:
        raise ChangelogError(f"{name}: not the results of one framework's release (its items ran on "
                             f"{', '.join(ran) or 'nothing'}); give the files conformance matrix writes")
    version = (document.environment.frameworks.get(eager[0]) or NOT_INSTALLED).version
    if not version:
        raise ChangelogError(f"{name}: no version recorded for {eager[0]}")
    return ReleaseColumn(eager[0], version, name, document, None)


def build(documents: list[tuple[str, ResultsDocument]]) -> Changelog:
    columns = [column(name, doc) for name, doc in documents]
    frameworks: dict[str, list[ReleaseColumn]] = {}
    problems = []
    for col in columns:
        same = [c for c in frameworks.get(col.framework, []) if c.version == col.version]
        if same:
            problems.append(f"{col.framework} {col.version} is in both {same[0].file} and {col.file}")
        frameworks.setdefault(col.framework, []).append(col)
    if problems:
        raise ChangelogError("; ".join(problems))
    titles: dict[str, str] = {}
    for col in columns:
        titles.update({cid: info.title for cid, info in col.document.cases.items()})
    steps: dict[str, list[Step]] = {}
    for fw, cols in frameworks.items():
        cols.sort(key=lambda c: release_key(c.version))
        steps[fw] = [_step(a, b) for a, b in zip(cols, cols[1:])]
    order = registry.report_order(list(frameworks))
    corpus = sorted({str(c.document.run.corpus) for c in columns if c.error is None})
    return Changelog(corpus, {fw: frameworks[fw] for fw in order}, {fw: steps[fw] for fw in order}, titles)


def _only(document: ResultsDocument, framework: str) -> ResultsDocument:
    return dataclasses.replace(document, results=tuple(r for r in document.results if of(r, framework)))


def _step(old: ReleaseColumn, new: ReleaseColumn) -> Step:
    step = Step(old, new)
    if old.error or new.error:
        which = [f"{c.version}: {c.error}" for c in (old, new) if c.error]
        step.not_compared = "; ".join(which)
        return step
    diff = compare(_only(old.document, old.framework), _only(new.document, new.framework))
    step.changes = diff.changes
    step.added = [f"{c}[{fw}]" for c, fw in diff.added_items] + [f"{c} (new case)" for c in diff.added]
    step.removed = [f"{c}[{fw}]" for c, fw in diff.removed_items] + [f"{c} (case removed)" for c in diff.removed]
    return step


# ---- Markdown


def render_markdown(log: Changelog) -> str:
    lines = ["# Behaviour changelog", "",
             "Per framework and per step between consecutive releases: every case whose behaviour changed (outcome, "
             "aliasing, identity, error, warning kind, values, gradients), the older release's observation first. "
             "Made by `conformance changelog` from the results of `conformance matrix` (docs/releases.md); corpus "
             f"revision {_md(', '.join(log.corpus) or 'unknown')}.", ""]
    lines += ["Each step's changes are in groups: " + "; ".join(f"**{g}**: {GROUP_WORDS[g]}" for g in GROUPS) + ".",
              "", "| framework | releases | steps with changes | changed items | " + " | ".join(GROUPS) + " |",
              "|---|---|---|---|" + "---|" * len(GROUPS)]
    for fw, cols in log.frameworks.items():
        steps = log.steps[fw]
        changed = sum(1 for s in steps if s.changes)
        totals = group_totals(steps)
        lines.append(f"| {_md(fw)} | {_md(', '.join(c.version for c in cols))} | {changed} of {len(steps)} | "
                     f"{sum(len(s.changes) for s in steps)} | " + " | ".join(str(totals[g]) for g in GROUPS) + " |")
    lines.append("")
    for fw, cols in log.frameworks.items():
        lines += [f"## {_md(fw)}", "", "| release | items | outcomes |", "|---|---|---|"]
        for col in cols:
            outcomes = ", ".join(f"{n} {o}" for o, n in col.counts().items())
            lines.append(f"| {_md(col.version)} | {col.items} | "
                         f"{_md(outcomes) if not col.error else 'did not run: ' + _md(col.error[:300])} |")
        lines.append("")
        for step in log.steps[fw]:
            lines += [f"### {_md(fw)} {_md(step.old.version)} → {_md(step.new.version)}", ""]
            if step.not_compared:
                lines += [f"Not compared: {_md(step.not_compared[:500])}", ""]
                continue
            if not step.changes:
                lines.append("None of the corpus's behaviours changed.")
            else:
                lines.append(f"{len(step.changes)} item(s) changed: {counts_words(step)}.")
                for group, changes in step.groups().items():
                    lines += ["", f"#### {group} ({len(changes)})", "",
                              f"| case | change | {_md(step.old.version)} | {_md(step.new.version)} | what differs |",
                              "|---|---|---|---|---|"]
                    for c in changes:
                        lines.append(f"| {markdown_code(c.case + _mode(c.framework, fw))} "
                                     f"{_md(log.titles.get(c.case, ''))} | {_md(c.old_outcome)} → "
                                     f"{_md(c.new_outcome)} | {_md(c.old_behaviour)} | {_md(c.new_behaviour)} | "
                                     f"{_md('; '.join(c.details)) or 'the outcome'} |")
            for title, items in (("Items run only on the newer release", step.added),
                                 ("Items run only on the older release", step.removed)):
                if items:
                    lines += ["", f"{title}: " + ", ".join(markdown_code(i, in_table=False) for i in items)]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def group_totals(steps: list[Step]) -> dict[str, int]:
    """The number of changes of each group over the steps (every group, zero included)."""
    totals = dict.fromkeys(GROUPS, 0)
    for step in steps:
        for group, n in step.counts().items():
            totals[group] += n
    return totals


def counts_words(step: Step) -> str:
    """``5 behaviour changed, 9 API appeared``: the step's groups with their counts."""
    return ", ".join(f"{n} {group}" for group, n in step.counts().items())


def _mode(name: str, framework: str) -> str:
    return "" if name == framework else f" [{name}]"


def _md(text: str) -> str:
    return for_markdown(" ".join(str(text).split()))


# ---- HTML

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:90rem;padding:0 1rem 3rem;color:#1b1b1b}
table{border-collapse:collapse;margin:.6rem 0;width:100%}
th,td{border:1px solid #d0d0d0;padding:.3rem .45rem;vertical-align:top;text-align:left;overflow-wrap:anywhere}
th{background:#f3f3f3}
h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
.none{color:#2e7d32}.err{color:#c62828}.title{color:#555;font-size:12px}
@media (prefers-color-scheme: dark){body{background:#161616;color:#e6e6e6}th{background:#262626}
th,td{border-color:#444}.title{color:#aaa}}
"""


def render_html(log: Changelog) -> str:
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<title>Behaviour changelog</title>', f"<style>{STYLE}</style></head><body>",
           "<h1>Behaviour changelog</h1>",
           "<p>Per framework and per step between consecutive releases: every case whose behaviour changed, the "
           "older release's observation first. Corpus revision "
           f"{escape(', '.join(log.corpus) or 'unknown')}.</p>",
           "<p>Each step's changes are in groups: " + "; ".join(f"<b>{escape(g)}</b>: {escape(GROUP_WORDS[g])}"
                                                                for g in GROUPS) + ".</p>",
           "<table><tr><th>framework</th><th>releases</th><th>steps with changes</th><th>changed items</th>"
           + "".join(f"<th>{escape(g)}</th>" for g in GROUPS) + "</tr>"]
    for fw, cols in log.frameworks.items():
        steps = log.steps[fw]
        totals = group_totals(steps)
        out.append(f'<tr><td><a href="#{_anchor(fw)}">{escape(fw)}</a></td>'
                   f"<td>{escape(', '.join(c.version for c in cols))}</td>"
                   f"<td>{sum(1 for s in steps if s.changes)} of {len(steps)}</td>"
                   f"<td>{sum(len(s.changes) for s in steps)}</td>"
                   + "".join(f"<td>{totals[g]}</td>" for g in GROUPS) + "</tr>")
    out.append("</table>")
    for fw, cols in log.frameworks.items():
        out.append(f'<h2 id="{_anchor(fw)}">{escape(fw)}</h2>')
        out.append("<table><tr><th>release</th><th>items</th><th>outcomes</th></tr>")
        for col in cols:
            outcomes = ", ".join(f"{n} {o}" for o, n in col.counts().items())
            cell = escape(outcomes) if not col.error else \
                f'<span class="err">did not run: {escape(col.error[:300])}</span>'
            out.append(f"<tr><td>{escape(col.version)}</td><td>{col.items}</td><td>{cell}</td></tr>")
        out.append("</table>")
        for step in log.steps[fw]:
            anchor = _anchor(f"{fw}-{step.old.version}-{step.new.version}")
            out.append(f'<h3 id="{anchor}">{escape(fw)} {escape(step.old.version)} → {escape(step.new.version)}</h3>')
            if step.not_compared:
                out.append(f'<p class="err">Not compared: {escape(step.not_compared[:500])}</p>')
                continue
            if not step.changes:
                out.append('<p class="none">None of the corpus\'s behaviours changed.</p>')
            else:
                out.append(f"<p>{len(step.changes)} item(s) changed: {escape(counts_words(step))}.</p>")
                for group, changes in step.groups().items():
                    out.append(f'<h4 id="{anchor}-{_anchor(group)}">{escape(group)} ({len(changes)})</h4>'
                               "<table><tr><th>case</th><th>change</th>"
                               f"<th>{escape(step.old.version)}</th><th>{escape(step.new.version)}</th>"
                               "<th>what differs</th></tr>")
                    for c in changes:
                        out.append(f"<tr><td><code>{escape(c.case + _mode(c.framework, fw))}</code>"
                                   f'<div class="title">{escape(log.titles.get(c.case, ""))}</div></td>'
                                   f"<td>{escape(c.old_outcome)} → {escape(c.new_outcome)}</td>"
                                   f"<td>{escape(c.old_behaviour)}</td><td>{escape(c.new_behaviour)}</td>"
                                   f"<td>{escape('; '.join(c.details)) or 'the outcome'}</td></tr>")
                    out.append("</table>")
            for title, items in (("Items run only on the newer release", step.added),
                                 ("Items run only on the older release", step.removed)):
                if items:
                    out.append(f"<p>{title}: " + ", ".join(f"<code>{escape(i)}</code>" for i in items) + "</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _anchor(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower())
