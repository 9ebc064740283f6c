"""From a results document to what the report shows: the matrix, divergences, agreement
scores, the operation classification and the claim verdicts.

Pure data in, data out (no rendering, no pytest, no framework): the Markdown and HTML
renderers and ``conformance diff`` share it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping

from conformance import kinds, registry
from conformance.ir import GRADIENT_KEYS
from conformance.kinds.relations import CLASS_WORDS, COPY, DISJOINT_VIEW, DISTINCT_OBJECT, SAME_OBJECT, VIEW
from conformance.layouts import LAYOUTS
from conformance.outcomes import (
    ERROR,
    FAIL,
    KNOWN_DIVERGENCE,
    NOT_APPLICABLE,
    OUTCOMES,
    PASS,
    REFUSED,
    SKIPPED,
    UNCHECKED,
)
from conformance.resultsmodel import Behaviour, CaseInfo, Environment, ErrorSeen, Production, Record, ResultsDocument

# outcomes with an observed behaviour (a refusal is one: the mutation raised, at its step)
RAN = (PASS, KNOWN_DIVERGENCE, REFUSED, FAIL)
VERIFIED = (PASS, KNOWN_DIVERGENCE)  # ... that the case's expectations confirmed
# The split of the Paddle design note (seed 004): view / inplace / normal. Its "inplace" is
# "the same variable": the result is the input object (which also covers ops that return
# their input unchanged, like contiguous() of a contiguous tensor).
OPERATION_KIND = {SAME_OBJECT: "same object", VIEW: "view", DISJOINT_VIEW: "view", COPY: "copy",
                  DISTINCT_OBJECT: "new object"}
OUTCOME_WORDS = {PASS: "pass", KNOWN_DIVERGENCE: "known divergence", REFUSED: "refused (immutable)",
                 UNCHECKED: "nothing compared (unobservable)", FAIL: "FAIL", ERROR: "ERROR",
                 NOT_APPLICABLE: "not applicable", SKIPPED: "skipped"}
CLAIM_VERDICTS = ("holds", "does not hold", "unsettled", "related only", "refused", "not applicable", "not run")


@dataclass
class Cell:
    """One case on one framework."""

    framework: str
    outcome: str
    reason: str
    kind: str  # colour class: a CLASS_WORDS key, "error", "none", or the outcome for unrun items
    words: str  # the observed behaviour in words
    record: Record


@dataclass
class Row:
    case_id: str
    info: CaseInfo
    cells: dict[str, Cell]
    agrees: bool | None  # None: fewer than two frameworks ran it
    why: dict[str, str] = field(default_factory=dict)  # framework -> why it differs
    # compiled mode -> its cell: not a column of the matrix (Report.modes), a column of an
    # operation's page
    modes: dict[str, Cell] = field(default_factory=dict)

    @property
    def family(self) -> str:
        return self.info.family

    @property
    def failing(self) -> bool:
        return any(c.outcome in (FAIL, ERROR) for c in self.cells.values())


@dataclass
class Score:
    cases: int = 0
    agreeing: int = 0
    comparable: int = 0

    @property
    def percent(self) -> float | None:
        return None if not self.comparable else 100.0 * self.agreeing / self.comparable

    def text(self) -> str:
        p = self.percent
        if p is None:
            return "n/a (no case ran on two frameworks)"
        return f"{p:.1f}% ({self.agreeing} of {self.comparable})"

    def short(self) -> str:
        """For a cell of the pairs matrix: "87% of 250", "—" when no case ran on both."""
        p = self.percent
        return "—" if p is None else f"{p:.0f}% of {self.comparable}"


@dataclass
class OperationRow:
    operation: str
    # framework or compiled mode -> operation kind -> case ids
    kinds: dict[str, dict[str, list[str]]]
    # the input's layout (conformance.layouts; "not recorded" in a file written before it
    # was) -> framework or compiled mode -> operation kind -> case ids
    layouts: dict[str, dict[str, dict[str, list[str]]]] = field(default_factory=dict)


@dataclass
class ClaimRow:
    claim: str
    text: str
    verdicts: dict[str, str]  # framework -> one of CLAIM_VERDICTS
    cases: list[str]  # the cases that name the claim
    evidence: dict[str, dict[str, list[str]]]  # framework -> stance -> case ids


@dataclass
class DocumentedRow:
    """A framework's documentation saying one thing where the case measured another."""

    framework: str
    case_id: str
    says: str
    source: str
    contradicts: str
    measured: list[tuple[str, Any]]  # (what, observed) of the contradicting kind, from the record
    outcome: str  # the case's outcome there: pass / known divergence confirm the measurement


@dataclass
class CompiledRow:
    """A case whose run in a compiled mode differs from the eager run of the framework the
    mode compiles: what differs, and the reason the case gives (the mode's override)."""

    mode: str
    framework: str  # the eager framework the mode compiles
    case_id: str
    info: CaseInfo
    differences: list[str]
    outcome: str  # the mode's outcome
    why: str


@dataclass
class Report:
    environment: Environment
    frameworks: list[str]
    rows: list[Row]
    invalid: list[Record]  # records of case files / cases that could not be loaded
    families: dict[str, Score]
    overall: Score
    operations: list[OperationRow]
    claims: list[ClaimRow]
    counts: dict[str, Counter]  # framework -> outcome -> n
    total_results: int
    # (a, b), a before b in the columns' order -> the cases both ran and how many of them they
    # behave the same in (the matrix of which two frameworks agree most)
    pairs: dict[tuple[str, str], Score] = field(default_factory=dict)
    documented: list[DocumentedRow] = field(default_factory=list)
    # compiled modes (issue 19): their results are not columns of the matrix; each is
    # compared with the eager framework it compiles
    modes: list[str] = field(default_factory=list)
    compiles: dict[str, str] = field(default_factory=dict)  # mode -> the framework it compiles
    compiled: list[CompiledRow] = field(default_factory=list)
    mode_scores: dict[str, Score] = field(default_factory=dict)  # mode -> cases both ran, the same in
    # framework or mode -> outcome -> n, over the cases that take or expect a gradient (issue 37)
    gradients: dict[str, Counter] = field(default_factory=dict)

    @property
    def divergences(self) -> list[Row]:
        return [r for r in self.rows if r.agrees is False]

    @property
    def findings(self) -> list[Row]:
        """The cases conformance discover found (tagged ``discovered``; docs/discover.md)."""
        return [r for r in self.rows if "discovered" in r.info.tags]


def build(results: ResultsDocument) -> Report:
    cases = results.cases
    everything = registry.report_order(list(results.environment.frameworks))
    parents = {fw: parent for fw in everything for parent in [registry.compiles(fw)] if parent}
    frameworks = [fw for fw in everything if fw not in parents]
    by_case: dict[str, dict[str, Record]] = defaultdict(dict)
    compiled_by_case: dict[str, dict[str, Record]] = defaultdict(dict)
    invalid = []
    counts: dict[str, Counter] = {fw: Counter() for fw in everything}
    gradient_counts: dict[str, Counter] = {fw: Counter() for fw in everything}
    for record in results.results:
        fw = record.framework
        if fw is None or record.case is None or record.case not in cases:
            invalid.append(record)
            continue
        (compiled_by_case if fw in parents else by_case)[record.case][fw] = record
        counts.setdefault(fw, Counter())[record.outcome] += 1
        if differentiates(cases[record.case]):
            gradient_counts.setdefault(fw, Counter())[record.outcome] += 1
    rows = []
    pairs = {(a, b): Score() for i, a in enumerate(frameworks) for b in frameworks[i + 1:]}
    for case_id, records in by_case.items():
        for (a, b), score in pairs.items():
            if a in records and b in records:
                agrees = _agrees({a: records[a], b: records[b]})
                if agrees is not None:
                    score.comparable += 1
                    score.agreeing += agrees
        info = cases[case_id]
        cells = {fw: _cell(fw, rec) for fw, rec in records.items()}
        modes = {mode: _cell(mode, rec) for mode, rec in compiled_by_case.get(case_id, {}).items()}
        rows.append(Row(case_id, info, cells, _agrees(records), _why(info, cells), modes))
    rows.sort(key=lambda r: (r.family, r.info.file, r.info.line, r.case_id))
    families: dict[str, Score] = {}
    overall = Score()
    for row in rows:
        score = families.setdefault(row.family, Score())
        score.cases += 1
        if row.agrees is not None:
            for s in (score, overall):
                s.comparable += 1
                s.agreeing += row.agrees
    return Report(
        environment=results.environment, frameworks=frameworks, rows=rows, invalid=invalid,
        families=dict(sorted(families.items())), overall=overall,
        operations=_operations(rows, everything), claims=_claims(results.claims, rows, frameworks),
        counts=counts, total_results=len(results.results), pairs=pairs,
        documented=_documented(rows, frameworks),
        modes=list(parents), compiles=parents, **_compiled(parents, by_case, compiled_by_case, cases),
        gradients=gradient_counts,
    )


# the steps that take a gradient: backward() and the functional form (conformance/run/gradients.py)
GRADIENT_OPERATIONS = GRADIENT_KEYS


def differentiates(info: CaseInfo) -> bool:
    """Whether a case takes a gradient (a backward() or autograd_grad step) or expects one
    (``grad``): the cases whose reach on each framework the summary's gradient table counts."""
    return bool(GRADIENT_OPERATIONS & set(info.operations)) or any(
        key.startswith("grad.") for key in (info.expect or {}))


def gradient_reach(report: Report) -> list[tuple[str, int, int, int]]:
    """(framework or mode, cases that take or expect a gradient, of them the ones that ran,
    the ones not applicable), in the summary's order; a framework none of whose results is
    such a case is left out."""
    out = []
    for fw in report.frameworks + report.modes:
        counts = report.gradients.get(fw, Counter())
        total = sum(counts.values())
        if total:
            out.append((fw, total, sum(counts[o] for o in RAN), counts[NOT_APPLICABLE]))
    return out


def _compiled(parents: dict[str, str], eager: dict[str, dict[str, Record]],
              compiled: dict[str, dict[str, Record]], cases: Mapping[str, CaseInfo]) -> dict[str, Any]:
    """Each compiled mode against the framework it compiles: the cases where they differ."""
    rows, scores = [], {mode: Score() for mode in parents}
    for case_id in sorted(compiled):
        for mode, record in compiled[case_id].items():
            base = eager.get(case_id, {}).get(parents[mode])
            if base is None:
                continue
            differences = compiled_differences(base, record)
            if base.outcome in RAN and record.outcome in RAN:
                scores[mode].cases += 1
                scores[mode].comparable += 1
                scores[mode].agreeing += not differences
            if differences:
                override = cases[case_id].overrides.get(mode)
                why = (override.reason if override is not None else "") or record.reason
                rows.append(CompiledRow(mode, parents[mode], case_id, cases[case_id], differences, record.outcome,
                                        why))
    rows.sort(key=lambda r: (registry.report_order(list(parents)).index(r.mode), r.case_id))
    return {"compiled": rows, "mode_scores": scores}


def compiled_differences(eager: Record, compiled: Record) -> list[str]:
    """What a compiled run shows that the eager run does not, each as 'what: eager → compiled':
    whether it ran, the error, each pair's aliasing class, the values the two observed alike
    (a version counter as changed or not: a compiled function applies an input's mutations as
    its own copies) and the warnings."""
    ran = eager.outcome in RAN, compiled.outcome in RAN
    if not all(ran):
        if ran[0] and compiled.outcome in (NOT_APPLICABLE, SKIPPED, ERROR):
            return [f"compiled: {OUTCOME_WORDS.get(compiled.outcome, compiled.outcome)}: {compiled.reason}"]
        return []
    out = []
    before, after = eager.behaviour, compiled.behaviour
    errors = [error_words(b.error) if b.error else "no error" for b in (before, after)]
    if _where(before.error) != _where(after.error):
        out.append(f"error: {errors[0]} → {errors[1]}")
    classes = [{(p.a, p.b): p.class_ for p in b.pairs} for b in (before, after)]
    for pair in sorted(set(classes[0]) & set(classes[1])):
        if classes[0][pair] != classes[1][pair]:
            out.append(f"{pair[0]}↔{pair[1]}: {CLASS_WORDS.get(classes[0][pair], classes[0][pair])} → "
                       f"{CLASS_WORDS.get(classes[1][pair], classes[1][pair])}")
    observed = [r.observed for r in (eager, compiled)]
    apart = set(compiled.observed_apart or ())
    for key in sorted(set(observed[0]) & set(observed[1])):
        a, b = observed[0][key], observed[1][key]
        if key.startswith("version_change."):
            same = (a is None) == (b is None) and (a is None or (a > 0) == (b > 0))
        else:
            same = not kinds.compared(key) or normalised(a) == normalised(b)
        if not same:
            # an intermediate the function does not return, seen in the second compile that
            # returns it as well (conformance/run/compiled.py): said, so it is read apart
            where = " (observed apart)" if apart & set(key.split(".")[1:]) else ""
            out.append(f"{key}: {_short(a)} → {_short(b)}{where}")
    warned = [bool(b.warnings) for b in (before, after)]
    if warned[0] != warned[1]:
        out.append("warning: " + ("warns → no warning" if warned[0] else "no warning → warns"))
    return out


def _where(error: ErrorSeen | None) -> tuple[int, str] | None:
    """Where an error was raised and its kind: what tells two runs' errors apart."""
    return None if error is None else (error.at, error.kind)


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def pair_score(report: Report, a: str, b: str) -> Score:
    """The agreement of two frameworks, whichever order they are named in."""
    return report.pairs.get((a, b)) or report.pairs.get((b, a)) or Score()


def framework_title(report: Report, fw: str) -> str:
    installed = report.environment.frameworks.get(fw)
    version = None if installed is None else installed.version
    return f"{fw} {version}" if version else f"{fw} (not installed)"


def python_version(environment: Environment) -> str:
    """major.minor only: the patch release does not change framework behaviour, and the
    committed report must not go stale because CI's patch release differs."""
    return ".".join(environment.python.split(".")[:2])


# ---- cells


def _cell(framework: str, record: Record) -> Cell:
    outcome = record.outcome
    if outcome not in RAN:
        return Cell(framework, outcome, record.reason, outcome, OUTCOME_WORDS.get(outcome, outcome), record)
    kind, words = describe(record.behaviour)
    return Cell(framework, outcome, record.reason, kind, words, record)


def error_words(error: ErrorSeen) -> str:
    """A step's error in words: ``raises TypeError (type_error) at step 2``."""
    return f"raises {error.type.rsplit('.', 1)[-1]} ({error.kind}) at step {error.at}"


def describe(behaviour: Behaviour) -> tuple[str, str]:
    """(colour class, words) for an observed behaviour."""
    parts = [f"{p.a}↔{p.b}: {CLASS_WORDS.get(p.class_, p.class_)}" for p in behaviour.pairs]
    kind = behaviour.pairs[0].class_ if behaviour.pairs else "none"
    error = behaviour.error
    if error:
        parts.append(error_words(error))
        kind = "error"
    if behaviour.warnings:
        parts.append(f"warns at step {behaviour.warnings[0].at}")
    return kind, "; ".join(parts) if parts else "completes (no aliasing checked)"


# ---- agreement


def signature(record: Record, keys: set[str]) -> tuple:
    """What a framework did, reduced to what can be compared across frameworks: aliasing
    classes, the error kind and step, and the observed values on the given keys."""
    pairs = tuple((p.a, p.b, p.class_) for p in record.behaviour.pairs)
    error = _where(record.behaviour.error)
    observed = record.observed
    values = tuple((k, normalised(observed[k])) for k in sorted(keys) if k in observed)
    return pairs, error, values


def _agrees(records: dict[str, Record]) -> bool | None:
    ran = [r for r in records.values() if r.outcome in RAN]
    if len(ran) < 2:
        return None
    common = _common_keys(ran)
    return len({signature(r, common) for r in ran}) == 1


def _common_keys(ran: list[Record]) -> set[str]:
    return {key for key in set.intersection(*(set(r.observed) for r in ran)) if kinds.compared(key)}


def behaviour_groups(row: Row, frameworks: list[str]) -> list[list[str]]:
    """The frameworks that ran a case, grouped by behaving the same (the comparison of the
    agreement score), the largest group first; in each, the frameworks in ``frameworks``'
    order. One group: they agree; a group of one beside a single other group: that
    framework is the odd one out."""
    ran = {fw: cell.record for fw, cell in row.cells.items() if cell.outcome in RAN}
    if len(ran) < 2:
        return [list(ran)] if ran else []
    common = _common_keys(list(ran.values()))
    order = {fw: i for i, fw in enumerate(frameworks)}
    groups: dict[tuple, list[str]] = {}
    for fw in sorted(ran, key=lambda f: (order.get(f, len(order)), f)):
        groups.setdefault(signature(ran[fw], common), []).append(fw)
    return sorted(groups.values(), key=lambda g: (-len(g), order.get(g[0], len(order)), g[0]))


def normalised(value: Any) -> Any:
    """Hashable, with floats rounded so float32 and float64 renderings of a value compare equal."""
    if isinstance(value, list):
        return tuple(normalised(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, normalised(v)) for k, v in value.items()))
    if isinstance(value, float):
        return float(f"{value:.5g}")
    return value


def _why(info: CaseInfo, cells: dict[str, Cell]) -> dict[str, str]:
    why = {}
    for fw, cell in cells.items():
        if cell.outcome == KNOWN_DIVERGENCE:
            override = info.overrides.get(fw)
            why[fw] = cell.reason if override is None else override.reason
        elif cell.outcome in (FAIL, ERROR, UNCHECKED) and cell.reason:
            why[fw] = cell.reason
    return why


def _documented(rows: list[Row], frameworks: list[str]) -> list[DocumentedRow]:
    out = []
    for row in rows:
        for fw, doc in (row.info.documentation or {}).items():
            cell = row.cells.get(fw)
            if cell is None:
                continue
            observed = cell.record.observed
            prefix = doc.contradicts + "."
            if doc.contradicts == "error":  # whether a step raised: the behaviour says, expected or not
                error = cell.record.behaviour.error
                measured: list[tuple[str, Any]] = [("", "no error" if error is None else error_words(error))]
            else:
                measured = [(key.removeprefix(prefix), value) for key, value in sorted(observed.items())
                            if key == doc.contradicts or key.startswith(prefix)]
            out.append(DocumentedRow(fw, row.case_id, doc.says, doc.source, doc.contradicts, measured,
                                     cell.outcome))
    order = {fw: i for i, fw in enumerate(frameworks)}
    return sorted(out, key=lambda d: (order.get(d.framework, len(order)), d.case_id))


# ---- operations


# a production's layout in a results file written before it was recorded
LAYOUT_NOT_RECORDED = "not recorded"


def _operations(rows: list[Row], columns: list[str]) -> list[OperationRow]:
    """Each operation's kinds per framework and compiled mode (``columns``, in that order),
    over all its cases and per layout of its input."""
    Kinds = dict[str, dict[str, list[str]]]
    table: dict[str, Kinds] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    by_layout: dict[str, dict[str, Kinds]] = defaultdict(lambda: defaultdict(lambda: defaultdict(
        lambda: defaultdict(list))))
    for row in rows:
        for prod in row.info.productions:
            for fw, cell in (*row.cells.items(), *row.modes.items()):
                if cell.outcome not in VERIFIED:
                    continue
                kind = production_kind(cell.record.behaviour, prod)
                if kind is not None:
                    table[prod.operation][fw][kind].append(row.case_id)
                    by_layout[prod.operation][prod.layout or LAYOUT_NOT_RECORDED][fw][kind].append(row.case_id)

    def ordered(kinds: Kinds) -> Kinds:
        return {fw: {k: sorted(set(v)) for k, v in sorted(kinds[fw].items())} for fw in columns if fw in kinds}

    def layout_order(layout: str) -> int:
        return LAYOUTS.index(layout) if layout in LAYOUTS else len(LAYOUTS)

    return [OperationRow(op, ordered(table[op]),
                         {layout: ordered(by_layout[op][layout]) for layout in sorted(by_layout[op], key=layout_order)})
            for op in sorted(table)]


_OVERLAP = (SAME_OBJECT, VIEW)  # classes whose two names share elements


def production_kind(behaviour: Behaviour, prod: Production) -> str | None:
    """What the step did to its result and input: the relation the case's expectations
    confirmed between them at the end, unless the memory probe saw them overlap otherwise
    right after the step (a later step moved a buffer: Paddle's contiguous() or a
    promoting add_ re-buffers its receiver in place), which is then what the step did."""
    error = behaviour.error
    if error and error.at <= prod.step:
        return f"raises ({error.kind})" if error.at == prod.step else None
    names = {prod.result, prod.input}
    final = next((p.class_ for p in behaviour.pairs if {p.a, p.b} == names), None)
    if final is None:
        return None
    at_step = next((p.class_ for p in behaviour.productions or ()
                    if (p.step, p.result, p.input) == (prod.step, prod.result, prod.input)), None)
    if at_step is not None and (at_step in _OVERLAP) != (final in _OVERLAP):
        return OPERATION_KIND[at_step]
    return OPERATION_KIND.get(final, final)


def operation_label(key: str) -> str:
    kind, _, name = key.partition(":")
    return {"method": f"x.{name}(…)", "fn": f"{name}(…)", "attr": f"x.{name}",
            "index": f"x[{name} index]"}.get(kind, key)


# ---- claims


def _claims(claims: Mapping[str, str], rows: list[Row], frameworks: list[str]) -> list[ClaimRow]:
    out = []
    for claim, text in claims.items():
        behind = [r for r in rows if claim in r.info.claims]
        verdicts: dict[str, str] = {}
        evidence: dict[str, dict[str, list[str]]] = {}
        for fw in frameworks:
            stances: dict[str, list[str]] = defaultdict(list)
            for row in behind:
                cell = row.cells.get(fw)
                if cell is None:
                    continue
                override = row.info.overrides.get(fw)
                stance = (override.claims if override is not None else {}).get(claim, row.info.claims[claim])
                if cell.outcome in VERIFIED:
                    stances[stance].append(row.case_id)
                elif cell.outcome in (FAIL, ERROR):
                    stances["unsettled"].append(row.case_id)
                else:
                    stances[cell.outcome].append(row.case_id)
            evidence[fw] = dict(sorted(stances.items()))
            verdicts[fw] = _verdict(stances)
        out.append(ClaimRow(claim, text, verdicts, [r.case_id for r in behind], evidence))
    return out


def _verdict(stances: dict[str, list[str]]) -> str:
    if stances.get("does_not_hold"):
        return "does not hold"
    if stances.get("unsettled"):
        return "unsettled"
    if stances.get("holds"):
        return "holds"
    if stances.get("related"):
        return "related only"
    if stances.get(REFUSED):  # every case behind it makes a mutation the framework refuses
        return "refused"
    # a framework that cannot observe what every case behind the claim checks (unchecked)
    if stances.get("not_applicable") or stances.get(UNCHECKED):
        return "not applicable"
    return "not run"


def outcome_counts(report: Report) -> list[tuple[str, list[int]]]:
    return [(fw, [report.counts.get(fw, Counter())[o] for o in OUTCOMES]) for fw in report.frameworks + report.modes]
