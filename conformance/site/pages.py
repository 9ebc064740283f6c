"""What each page of the site shows, as data: one :class:`Page` per file, with the template
that draws it and the values it draws. Built from the report's analysis
(:func:`conformance.report.analysis.build`) and, for the changelog, the release results
(:func:`conformance.report.changelog.build`); nothing here renders HTML.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from conformance import declared, registry, spellings
from conformance.model import Case
from conformance.outcomes import NOT_APPLICABLE, SKIPPED
from conformance.releases import release_key
from conformance.report import analysis, changelog
from conformance.report.analysis import OUTCOME_WORDS, RAN, Report, Row, operation_label
from conformance.report.changelog import Changelog
from conformance.resultsmodel import NOT_INSTALLED, CaseInfo, Record, ResultsDocument
from conformance.site import repro, urls
from conformance.site.chart import agreement_chart
from conformance.site.search import operation_words, search_index

# the short mark of a behaviour in a family's table (with its words in a title)
KIND_MARKS = {"same_object": "S", "view": "V", "disjoint_view": "V", "copy": "C", "distinct_object": "N",
              "error": "E", "none": "·", "not_applicable": "–", "skipped": "–", "unchecked": "–"}
VERDICT_MARKS = {"holds": "✓", "does not hold": "✗", "unsettled": "?", "related only": "~", "refused": "⊘",
                 "not applicable": "–", "not run": "–"}
NEWEST = 8  # divergences and findings on the home page


@dataclass
class Page:
    path: str  # root-relative, e.g. ops/reshape.html
    template: str
    title: str
    values: dict[str, Any] = field(default_factory=dict)
    section: str = ""  # the navigation entry it is under


@dataclass
class Stamp:
    """What every page says about the results it shows."""

    date: str | None
    commit: str | None
    modified: bool
    corpus: str | None
    versions: list[tuple[str, str]]  # (framework, version) of each that ran
    partial: list[str]


@dataclass
class Site:
    pages: list[Page]
    stamp: Stamp
    sections: list[tuple[str, str]]  # navigation: (label, path)
    files: dict[str, str]  # files other than pages (search-index.js)
    report: Report


def stamp(results: ResultsDocument, report: Report) -> Stamp:
    run, commit = results.run, results.run.commit
    ran = [fw for fw in report.frameworks + report.modes if sum(report.counts.get(fw, Counter()).values())]
    versions = [(fw, (results.environment.frameworks.get(fw) or NOT_INSTALLED).version or "not installed")
                for fw in ran]
    return Stamp(date=run.date, commit=commit.sha if commit else None, modified=bool(commit and commit.modified),
                 corpus=run.corpus, versions=versions, partial=list(run.partial or []))


def source_link(template: str | None, info: CaseInfo, commit: str | None) -> str | None:
    """The address of a case's file and line, from ``--source-url`` (``{commit}``, ``{path}``,
    ``{line}``); None when there is no template or it needs a commit the results lack."""
    if not template or not info.file or info.file.startswith("/"):
        return None
    if "{commit}" in template and not commit:
        return None
    text = template.replace("{commit}", commit or "").replace("{path}", info.file)
    return text.replace("{line}", str(info.line))


def build(results: ResultsDocument, log: Changelog | None = None, source_url: str | None = None,
          cases: Mapping[str, Case] | None = None) -> Site:
    """The site's pages; ``cases``: the loaded cases (this checkout's case files), whose
    pages get a repro snippet per framework (:mod:`conformance.site.repro`)."""
    report = analysis.build(results)
    the_stamp = stamp(results, report)
    records: dict[str, dict[str, Record]] = defaultdict(dict)
    for record in results.results:
        if record.framework is not None and record.case is not None and record.case in results.cases:
            records[record.case][record.framework] = record
    rows = {row.case_id: row for row in report.rows}
    groups = {row.case_id: analysis.behaviour_groups(row, report.frameworks) for row in report.rows}
    ops = _operation_groups(report, results.cases)
    sections = [("Home", "index.html"), ("Operations", "ops/index.html"), ("Cases", "cases/index.html"),
                ("Claims", "claims/index.html"), ("Frameworks", "frameworks/index.html"),
                ("Divergences", "divergences.html")]
    if report.modes:
        sections.append(("Compiled", "compiled.html"))
    if log is not None and log.frameworks:
        sections.append(("Changelog", "changelog/index.html"))
    sections.append(("Search", "search.html"))
    pages = [_home(report, groups, log, ops)]
    history = release_history(log)
    pages += _op_pages(report, ops, rows, history)
    pages += _case_pages(report, results, records, rows, groups, source_url, the_stamp, ops, cases or {}, history)
    pages += _family_pages(report)
    pages += _claim_pages(report)
    pages += _framework_pages(report, rows, groups)
    pages.append(_divergences(report, groups))
    pages.append(_findings(report))
    pages.append(_discovered(report))
    if report.modes:
        pages.append(_compiled(report))
    if log is not None and log.frameworks:
        pages += _changelog_pages(log, set(rows))
    pages.append(Page("search.html", "search.html", "Search", {}, "Search"))
    index = search_index(report, ops, results, log)
    script = ("window.SEARCH_INDEX=" + json.dumps(index, ensure_ascii=True, separators=(",", ":")) + ";\n"
              "window.SEARCH_OPERATION_WORDS=" + json.dumps(operation_words(report), ensure_ascii=True) + ";\n")
    return Site(pages, the_stamp, sections, {"search-index.js": script.replace("</", "<\\/")}, report)


# ---- operations


@dataclass
class OpGroup:
    """The operations one page is about: the table keys of one name."""

    name: str
    keys: list[str]  # method:reshape, fn:reshape
    rows: dict[str, analysis.OperationRow]  # key -> classification (keys no case classified are absent)
    cases: dict[str, list[str]]  # key -> the cases whose steps use it

    @property
    def labels(self) -> list[str]:
        return [operation_label(k) for k in self.keys]


def _operation_groups(report: Report, cases: Mapping[str, CaseInfo]) -> dict[str, OpGroup]:
    using: dict[str, list[str]] = defaultdict(list)
    for case_id, info in sorted(cases.items()):
        for key in info.operations:
            using[key].append(case_id)
    classified = {op.operation: op for op in report.operations}
    groups: dict[str, OpGroup] = {}
    for key in sorted(set(using) | set(classified)):
        name = urls.operation_name(key)
        group = groups.setdefault(name, OpGroup(name, [], {}, {}))
        group.keys.append(key)
        if key in classified:
            group.rows[key] = classified[key]
        group.cases[key] = using.get(key, [])
    return dict(sorted(groups.items()))


def _op_cell(op: analysis.OperationRow | None, fw: str) -> list[tuple[str, int]]:
    if op is None:
        return []
    return [(kind, len(ids)) for kind, ids in op.kinds.get(fw, {}).items()]


# what a framework declares of an operator, in the words of an operation page
DECLARED_WORDS = {"view": "its result is a view of", "inplace": "it writes into and returns",
                  "out": "called with out=, it writes into and returns"}
# where Paddle declares it (conformance.declared.PaddleDeclaration.source), in those words
PADDLE_WHERE = {"operator YAML": "in its operator YAML", "stride kernel": "with a CPU stride kernel"}


def declared_contracts(contracts: declared.Contracts,
                       paddle: tuple[str, Sequence[declared.PaddleDeclaration]] = ("", ())
                       ) -> dict[str, list[dict[str, Any]]]:
    """vocabulary key -> what torch's operator schemas declare of the operators it reaches
    (conformance/data/contracts/torch.yaml, docs/contracts.md): the words, the argument, the
    schemas; then what Paddle declares (``paddle``: its version and declarations, the maps of
    its operator YAML and its CPU stride kernels)."""
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for contract in contracts.operators:
        for key in contract.keys:
            for aliased in dict.fromkeys(o.aliased for o in contract.overloads):
                by_key[key].append({
                    "framework": contracts.framework, "version": contracts.version, "kind": contract.kind,
                    "where": "in its operator schema", "words": DECLARED_WORDS[contract.kind],
                    "argument": aliased, "schemas": [o.schema for o in contract.overloads if o.aliased == aliased]})
    version, declarations = paddle
    for declaration in declarations:
        stride = declaration.source == "stride kernel"
        keys = declared.paddle_keys(declaration.spellings)
        # paddle.Tensor.real is a method where torch's is an attribute: the page of attr:real
        for key in keys + tuple("attr:" + k.split(":", 1)[1] for k in keys if stride and k.startswith("method:")):
            by_key[key].append({
                "framework": "paddle", "version": version, "kind": declaration.kind,
                "where": PADDLE_WHERE[declaration.source], "words": DECLARED_WORDS[declaration.kind],
                # the kernel's DenseTensor argument; the YAML map's left side, (x -> out)
                "argument": "input" if stride else ", ".join(dict.fromkeys(
                    m.strip("()").split("->")[0].strip() for m in declaration.detail)),
                "schemas": ([f"paddle/phi/kernels/stride: {declaration.name}"] if stride
                            else [f"op {declaration.name}, {declaration.kind}: {m}" for m in declaration.detail])})
    return dict(by_key)


def _spelling_table(fw: str) -> Mapping[str, spellings.Spelling] | None:
    """``fw``'s spellings; None for a name of the results file no adapter is registered
    under (a results file is data from anywhere: its names pick nothing to load)."""
    if fw not in registry.adapter_specs():
        return None
    return spellings.table(fw)


def _spelled(tables: Mapping[str, Mapping[str, spellings.Spelling] | None], fw: str, key: str) -> dict[str, Any]:
    """How ``fw`` spells the operation ``key`` (its calls, ``paddle.Tensor.reshape``); ``absent``:
    why it has none (its adapter's ``absent`` reason); ``untabled``: the suite's table for it has
    no such entry (the framework may have one that no case has needed). Nothing for a
    framework this checkout has no adapter for."""
    table = tables[fw]
    if table is None:
        return {"calls": [], "absent": None, "untabled": False}
    spelling = table.get(key)
    if spelling is None:
        return {"calls": [], "absent": None, "untabled": True}
    return {"calls": list(spelling.calls), "absent": spelling.absent, "untabled": False}


def _op_pages(report: Report, ops: dict[str, OpGroup], rows: dict[str, Row],
              history: Mapping[str, list[dict[str, Any]]]) -> list[Page]:
    pages = []
    declarations = declared_contracts(declared.packaged(), declared.paddle_packaged())
    columns = report.frameworks + report.modes  # the compiled modes are columns of an operation's page
    tables = {fw: _spelling_table(fw) for fw in columns}
    index_rows: list[dict[str, Any]] = []
    for name, group in ops.items():
        index_rows.append({"name": name, "path": urls.op(name), "labels": group.labels,
                           "cells": {fw: _summary_kinds([_op_cell(group.rows.get(k), fw) for k in group.keys])
                                     for fw in report.frameworks},
                           "cases": len({c for ids in group.cases.values() for c in ids})})
        variants = []
        for key in group.keys:
            op = group.rows.get(key)
            per_fw = []
            for fw in columns:
                kinds: list[dict[str, Any]] = []
                for kind, ids in (op.kinds.get(fw, {}).items() if op else []):
                    kinds.append({"kind": kind, "cases": [_production_evidence(rows[c], fw, key) for c in ids]})
                per_fw.append({"framework": fw, "compiles": report.compiles.get(fw),
                               "anchor": urls.anchor(f"{key}-{fw}"), "kinds": kinds,
                               "counts": [(k["kind"], len(k["cases"])) for k in kinds],
                               "total": sum(len(k["cases"]) for k in kinds),
                               "spelled": _spelled(tables, fw, key),
                               "documented": _documented_of(rows, sorted(set(group.cases.get(key, [])) | {
                                   c for k in kinds for c in (e["id"] for e in k["cases"])}), fw)})
            alike: dict[str, list[str]] = {}
            for fw in report.frameworks:
                words = " or ".join(kind for kind, _ in sorted(_op_cell(op, fw), key=lambda kn: (-kn[1], kn[0])))
                if words:
                    alike.setdefault(words, []).append(fw)
            layouts = [{"layout": layout,
                        "cells": [{"kinds": [(kind, len(ids)) for kind, ids in by_fw.get(fw, {}).items()],
                                   "anchor": urls.anchor(f"{key}-{fw}")} for fw in columns]}
                       for layout, by_fw in (op.layouts.items() if op else [])]
            variants.append({"key": key, "label": operation_label(key), "anchor": urls.anchor(key),
                             "declared": declarations.get(key, []),
                             "alike": sorted(alike.items(), key=lambda wf: (-len(wf[1]), wf[0])),
                             "frameworks": per_fw, "classified": op is not None, "layouts": layouts,
                             "cases": [{"id": c, "path": urls.case(c), "title": rows[c].info.title
                                        if c in rows else ""} for c in group.cases.get(key, [])]})
        grid = [{"framework": fw, "compiles": report.compiles.get(fw),
                 "cells": [{"kinds": _op_cell(group.rows.get(k), fw), "anchor": urls.anchor(f"{k}-{fw}"),
                            **_spelled(tables, fw, k)} for k in group.keys]}
                for fw in columns]
        case_ids = sorted({c for ids in group.cases.values() for c in ids})
        pages.append(Page(urls.op(name), "op.html", f"{name}: view, copy or same object?",
                          {"group": group, "variants": variants, "grid": grid, "columns": columns,
                           "releases": _op_release_changes(case_ids, history)}, "Operations"))
    letters: dict[str, str] = {}  # first letter -> the first operation's anchor
    for name in ops:
        letters.setdefault(name[:1].upper(), urls.anchor(name))
    pages.insert(0, Page("ops/index.html", "ops.html", "Operations", {"rows": index_rows, "letters": letters},
                         "Operations"))
    return pages


def _documented_of(rows: Mapping[str, Row], case_ids: Sequence[str], fw: str) -> list[dict[str, Any]]:
    """What ``fw``'s documentation says where a case that uses the operation measured otherwise
    (the cases' ``documentation``; a compiled mode has its framework's)."""
    framework = registry.compiles(fw) or fw
    out = []
    for case_id in case_ids:
        row = rows.get(case_id)
        doc = (row.info.documentation or {}).get(framework) if row is not None else None
        if doc is not None:
            out.append({"id": case_id, "says": doc.says, "source": doc.source})
    return out


def _op_release_changes(case_ids: list[str], history: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The release changes of the cases that use an operation, one entry per framework, step
    and group (``paddle since 3.2.2: API appeared``) with its cases, each linked to its
    changelog entry; frameworks in the changelog's order, then the releases' order."""
    entries: dict[tuple[str, str, str, str], list[tuple[str, str]]] = {}
    order: dict[str, int] = {}
    for case_id in case_ids:
        for h in history.get(case_id, []):
            order.setdefault(h["framework"], len(order))
            for c in h["changes"]:
                entries.setdefault((h["framework"], c["old"], c["new"], c["group"]), []).append((case_id, c["path"]))
    keys = sorted(entries, key=lambda k: (order[k[0]], k[0], release_key(k[2]), changelog.GROUPS.index(k[3])))
    return [{"framework": fw, "edge": f"until {old}" if group == changelog.REMOVED else f"since {new}",
             "group": group, "cases": entries[(fw, old, new, group)]} for fw, old, new, group in keys]


def _summary_kinds(cells: list[list[tuple[str, int]]]) -> list[tuple[str, int]]:
    total: Counter = Counter()
    for cell in cells:
        for kind, n in cell:
            total[kind] += n
    return sorted(total.items(), key=lambda kn: (-kn[1], kn[0]))


def _production_evidence(row: Row, fw: str, key: str) -> dict[str, Any]:
    """A case behind an operation's cell: what the probe and the expectations observed about
    each step of the case that uses the operation."""
    cell = row.cells.get(fw) or row.modes[fw]
    behaviour = cell.record.behaviour
    seen = []
    for prod in row.info.productions:
        if prod.operation != key:
            continue
        names = {prod.result, prod.input}
        pair = next((p for p in behaviour.pairs if {p.a, p.b} == names), None)
        at_step = next((p.class_ for p in behaviour.productions or ()
                        if (p.step, p.result, p.input) == (prod.step, prod.result, prod.input)), None)
        seen.append({"step": prod.step, "result": prod.result, "input": prod.input, "layout": prod.layout,
                     "kind": analysis.production_kind(behaviour, prod),
                     "relations": pair.relations if pair else {}, "at_step": at_step})
    return {"id": row.case_id, "path": urls.case(row.case_id) + "#" + urls.anchor(fw),
            "title": row.info.title, "outcome": cell.outcome, "steps": seen}


# ---- cases


def _case_pages(report: Report, results: ResultsDocument, records: dict[str, dict[str, Record]],
                rows: dict[str, Row], groups: dict[str, list[list[str]]], source_url: str | None,
                the_stamp: Stamp, ops: dict[str, OpGroup], cases: Mapping[str, Case],
                history: Mapping[str, list[dict[str, Any]]]) -> list[Page]:
    pages = []
    order = report.frameworks + report.modes
    claims = results.claims
    for row in report.rows:
        info = row.info
        by_fw = records.get(row.case_id, {})
        # the frameworks whose arrays are immutable run the case's functional_steps (in this
        # checkout's case file) instead of its steps: their records show those, apart
        case = cases.get(row.case_id)
        functional_run = [fw for fw in order if case is not None and case.functional_steps
                          and repro.runs_functional_steps(fw) and (r := by_fw.get(fw)) and r.steps]
        steps = next((r.steps for fw in order if fw not in functional_run and (r := by_fw.get(fw)) and r.steps), ())
        functional = by_fw[functional_run[0]].steps if functional_run else ()
        observations = []
        for fw in order:
            record = by_fw.get(fw)
            if record is None:
                continue
            kind, words = analysis.describe(record.behaviour) if record.outcome in RAN else (
                record.outcome, OUTCOME_WORDS.get(record.outcome, record.outcome))
            override = info.overrides.get(fw)
            observations.append({
                "framework": fw, "anchor": urls.anchor(fw), "outcome": record.outcome,
                "outcome_words": OUTCOME_WORDS.get(record.outcome, record.outcome), "kind": kind,
                "words": words, "reason": record.reason, "override": "" if override is None else override.reason,
                "observed": sorted(record.observed.items()),
                "mismatches": record.mismatches, "error": record.behaviour.error,
                "warnings": record.behaviour.warnings,
                "unobservable": record.unobservable,
                "documentation": (info.documentation or {}).get(fw),
                "mode": fw in report.compiles, "compiles": report.compiles.get(fw),
            })
        op_links = sorted({urls.operation_name(k) for k in info.operations} & set(ops))
        pages.append(Page(urls.case(row.case_id), "case.html", row.case_id, {
            "row": row, "info": info, "steps": steps, "expect": sorted((info.expect or {}).items()),
            "functional_steps": functional, "functional_frameworks": functional_run,
            "calls": case.calls if case is not None else 1,  # (read from the checkout's case file)
            "has_expect": info.expect is not None, "observations": observations,
            "group_words": _group_words(row, groups[row.case_id]),
            "source": source_link(source_url, info, the_stamp.commit),
            "claims": [(c, stance, claims.get(c, "")) for c, stance in sorted(info.claims.items())],
            "ops": [(name, ", ".join(label for k, label in zip(ops[name].keys, ops[name].labels)
                                     if k in info.operations)) for name in op_links],
            "repro": _repro(cases.get(row.case_id), info, by_fw),
            "releases": history.get(row.case_id, []),
        }, "Cases"))
    families = [{"name": f, "path": urls.family(f), "score": s} for f, s in report.families.items()]
    pages.insert(0, Page("cases/index.html", "cases.html", "Cases", {"families": families}, "Cases"))
    return pages


def release_history(log: Changelog | None) -> dict[str, list[dict[str, Any]]]:
    """Per case, per framework (or compiled mode) that has release results of it: its
    outcome on each release, consecutive releases with the same outcome and no change
    between them joined (``segments``), and each change between two releases with its group
    (:func:`conformance.report.changelog.classify`), "since NEW" (or "until OLD" for an API
    removed) and the anchor of its entry on the changelog page. An item skipped or absent on
    every release (an interop item, whose second framework a release's environment lacks)
    has none."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if log is None:
        return out
    for fw, cols in log.frameworks.items():
        per_col = [{(r.case, r.framework): r for r in col.document.results
                    if r.case is not None and r.framework is not None and changelog.of(r, fw)} for col in cols]
        steps = log.steps[fw]
        per_step = [{(c.case, c.framework): c for c in step.changes} for step in steps]
        for case_id, name in sorted(set().union(*per_col)):
            recs = [m.get((case_id, name)) for m in per_col]
            if all(r is None or r.outcome == SKIPPED for r in recs):
                continue
            segments: list[dict[str, str]] = []
            for i, (col, r) in enumerate(zip(cols, recs)):
                outcome = "error" if col.error else ("skipped" if r is None else r.outcome)
                words = "did not run" if col.error else ("not in its results" if r is None else
                                                         OUTCOME_WORDS.get(r.outcome, r.outcome))
                if segments and segments[-1]["words"] == words and (case_id, name) not in per_step[i - 1]:
                    segments[-1]["last"] = col.version
                else:
                    segments.append({"first": col.version, "last": col.version, "words": words, "outcome": outcome,
                                     "behaviour": analysis.describe(r.behaviour)[1] if r and r.outcome in RAN else ""})
            changes = []
            for step, by_item in zip(steps, per_step):
                c = by_item.get((case_id, name))
                if c is None:
                    continue
                group = changelog.classify(c)
                details = "; ".join(c.details) or "the outcome"
                changes.append({
                    "edge": f"until {step.old.version}" if group == changelog.REMOVED else f"since {step.new.version}",
                    "group": group, "old": step.old.version, "new": step.new.version,
                    "outcomes": f"{OUTCOME_WORDS.get(c.old_outcome, c.old_outcome)} → "
                                f"{OUTCOME_WORDS.get(c.new_outcome, c.new_outcome)}",
                    "details": details if len(details) <= 240 else details[:237] + "...",
                    "path": urls.changelog(fw) + "#" + urls.change(fw, step.old.version, step.new.version, case_id,
                                                                   name)})
            out[case_id].append({"framework": name, "anchor": urls.anchor(name), "segments": segments,
                                 "changes": changes})
    return out


def _repro(case: Case | None, info: CaseInfo, by_fw: Mapping[str, Record]) -> list[repro.Snippet]:
    """The snippets of the frameworks that have a record of the case, less those where the
    case is not applicable and the snippet cannot run as is (the framework has no counterpart
    of a step: such a snippet reproduces nothing, and the page already says why the case does
    not apply; on the full corpus they were 3,256 of 7,929 snippets, about 4 MB of the site);
    none where the checkout's case is not the one the results recorded (another title or
    other operations: the case file changed since the run)."""
    if case is None or case.title != info.title or sorted(case.operations()) != sorted(info.operations):
        return []
    snippets = (repro.snippet(case, fw) for fw in repro.FRAMEWORKS if fw in by_fw)
    return [s for s in snippets if s.runnable or by_fw[s.framework].outcome != NOT_APPLICABLE]


def _family_pages(report: Report) -> list[Page]:
    pages = []
    for family, score in report.families.items():
        groups: dict[str, list[Row]] = defaultdict(list)
        for r in report.rows:
            if r.family == family:  # by the id's second part: views.reshape.*, views.expand.*
                groups[r.case_id.split(".")[1] if r.case_id.count(".") >= 2 else ""].append(r)
        pages.append(Page(urls.family(family), "family.html", f"{family} cases",
                          {"family": family, "score": score, "groups": dict(sorted(groups.items())),
                           "total": sum(len(g) for g in groups.values())}, "Cases"))
    return pages


# ---- claims


def _claim_pages(report: Report) -> list[Page]:
    pages = [Page("claims/index.html", "claims.html", "Claims", {}, "Claims")]
    rows = {row.case_id: row for row in report.rows}
    for claim in report.claims:
        cases = []
        for case_id in claim.cases:
            row = rows[case_id]
            stance = row.info.claims.get(claim.claim, "")
            per_fw = {fw: (row.info.overrides[fw].claims.get(claim.claim) if fw in row.info.overrides else None)
                      for fw in report.frameworks}
            cases.append({"row": row, "stance": stance, "restated": {k: v for k, v in per_fw.items() if v}})
        pages.append(Page(urls.claim(claim.claim), "claim.html", f"Claim {claim.claim}",
                          {"claim": claim, "cases": cases}, "Claims"))
    return pages


# ---- frameworks


def _framework_pages(report: Report, rows: dict[str, Row], groups: dict[str, list[list[str]]]) -> list[Page]:
    pages = [Page("frameworks/index.html", "frameworks.html", "Frameworks", {}, "Frameworks")]
    for fw in report.frameworks:
        alone = []
        for row in report.divergences:
            g = groups[row.case_id]
            if len(g) == 2 and g[1] == [fw] and len(g[0]) >= 2:
                alone.append({"row": row, "others": g[0]})
        diverges = [row for row in report.rows if fw in row.cells and row.cells[fw].outcome == "known_divergence"]
        failing = [row for row in report.rows if fw in row.cells and row.cells[fw].outcome in ("fail", "error")]
        others = [(o, analysis.pair_score(report, fw, o)) for o in report.frameworks if o != fw]
        families = []
        for family in report.families:
            counts = Counter(row.cells[fw].outcome for row in report.rows if row.family == family and fw in row.cells)
            families.append((family, counts))
        pages.append(Page(urls.framework(fw), "framework.html", fw, {
            "framework": fw, "alone": alone, "diverges": diverges, "failing": failing, "others": others,
            "families": families, "documented": [d for d in report.documented if d.framework == fw],
            "modes": [m for m in report.modes if report.compiles[m] == fw],
            "claims": [(c, c.verdicts.get(fw, "not run")) for c in report.claims],
            "mode": None, "compiled": []}, "Frameworks"))
    for mode in report.modes:
        pages.append(Page(urls.framework(mode), "framework.html", mode, {
            "framework": mode, "mode": report.compiles[mode], "score": report.mode_scores.get(mode),
            "compiled": [c for c in report.compiled if c.mode == mode], "alone": [], "diverges": [], "failing": [],
            "others": [], "families": [], "documented": [], "modes": [], "claims": []}, "Frameworks"))
    return pages


# ---- lists


def _divergences(report: Report, groups: dict[str, list[list[str]]]) -> Page:
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in report.divergences:
        by_family[row.family].append({"row": row, "groups": _group_words(row, groups[row.case_id])})
    return Page("divergences.html", "divergences.html", "Divergences",
                {"families": dict(sorted(by_family.items())), "total": len(report.divergences)}, "Divergences")


def _group_words(row: Row, groups: list[list[str]]) -> list[tuple[list[str], str, str]]:
    """Each group of frameworks that behave alike, with its behaviour in words and colour."""
    return [(g, row.cells[g[0]].words, row.cells[g[0]].kind) for g in groups]


def _findings(report: Report) -> Page:
    return Page("findings.html", "findings.html", "Documentation disagrees", {"documented": report.documented},
                "Divergences")


def _discovered(report: Report) -> Page:
    return Page("discovered.html", "discovered.html", "Found by conformance discover", {"rows": report.findings},
                "Divergences")


def _compiled(report: Report) -> Page:
    return Page("compiled.html", "compiled.html", "Compiled modes", {}, "Compiled")


def _changelog_pages(log: Changelog, known_cases: set[str]) -> list[Page]:
    changed = {fw: sum(len(s.changes) for s in steps) for fw, steps in log.steps.items()}
    totals = {fw: changelog.group_totals(steps) for fw, steps in log.steps.items()}
    pages = [Page("changelog/index.html", "changelog_index.html", "Behaviour changelog",
                  {"log": log, "changed": changed, "totals": totals, "groups": changelog.GROUPS,
                   "group_words": changelog.GROUP_WORDS}, "Changelog")]
    for fw, cols in log.frameworks.items():
        pages.append(Page(urls.changelog(fw), "changelog.html", f"{fw}: behaviour changes between releases",
                          {"log": log, "framework": fw, "columns": cols, "steps": log.steps[fw],
                           "known_cases": known_cases, "group_words": changelog.GROUP_WORDS}, "Changelog"))
    return pages


# ---- home


def _home(report: Report, groups: dict[str, list[list[str]]], log: Changelog | None,
          ops: dict[str, OpGroup]) -> Page:
    # the divergences that split the frameworks most: the most groups, then the largest minority
    split = sorted(report.divergences, key=lambda r: (-len(groups[r.case_id]),
                                                      -sum(len(g) for g in groups[r.case_id][1:]), r.case_id))
    newest = []
    if log is not None:
        for fw, steps in log.steps.items():
            changed = [s for s in steps if s.changes]
            if changed:
                newest.append((fw, changed[-1]))
    return Page("index.html", "home.html", "Cross-framework view, copy and in-place behaviour", {
        "chart": agreement_chart(report), "split": [{"row": r, "groups": _group_words(r, groups[r.case_id])}
                                                   for r in split[:NEWEST]],
        "documented": report.documented[:NEWEST], "documented_total": len(report.documented), "newest": newest,
        "discovered": report.findings[:NEWEST], "discovered_total": len(report.findings),
        "operations": len(ops), "claims": report.claims, "divergences": len(report.divergences)}, "Home")
