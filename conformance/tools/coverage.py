"""How much of each framework's own reference the corpus covers (``conformance coverage``).

A **reference list** (``conformance/data/coverage/*.yaml``) is data with its source: the ops
a framework's documentation calls views (PyTorch's "Tensor Views" page, NumPy's docstrings,
Paddle's API pages), or its public in-place methods found by introspection
(``python -m conformance.tools.inplace_surface``). Nothing is scraped at run time: a list
changes by a commit that says where it came from.

An entry of a list is **covered** on the list's framework when

1. one of its vocabulary keys is in that framework's operation table and not ``absent``;
2. at least one case uses such a key and applies there (every key of the case is in the
   table, no ``not_applicable`` override; with ``--results``, the case's record on that
   framework is not *not applicable* either); and
3. those cases, together, assert what the list's set asks of a covering case: a view op
   some aliasing relation (:data:`REQUIRED`), an in-place method the returned object's
   identity, memory shared with a view taken before the call, and the version counter
   (each where the framework can observe it) — or one of them expects the operation's own
   step to raise there with an error kind that says the framework lacks the operation
   (:data:`LACKS_OPERATION`: there is no result to check). Any other expected error (a leaf
   that requires grad, a shape or dtype the call refuses, ``other``) is a refusal of those
   arguments, not of the operation, and covers nothing.

Entries marked ``no_counterpart`` (an in-place method no other framework has) are listed,
with the reason, outside the percentage. Nothing here imports a framework.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from conformance.ir import operations_of, operator_keys
from conformance.model import Case
from conformance.resultsmodel import ResultsDocument
from conformance.run import gradients
from conformance.source import CaseFormatError, CaseFormatErrors, Location, split
from conformance.yamlvalues import fields
from conformance.yamlvalues.yamlsrc import YList, parse

LISTS_FOLDER = Path(__file__).resolve().parent.parent / "data" / "coverage"
SETS = ("views", "inplace")
LIST_KEYS = ("framework", "set", "title", "source", "version", "target", "operations")
ENTRY_KEYS = ("name", "keys", "note", "source", "counterparts", "no_counterpart")
KEY_PATTERN = re.compile(r"^(method|fn|attr|setattr|block|op):[A-Za-z_][A-Za-z0-9_]*$|^call$|^index:(basic|advanced)$")

# What the cases covering an entry must assert, together, per set: each inner tuple is one
# requirement, met by any of its kinds. A kind the framework cannot observe is not required.
REQUIRED: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "views": (("shares_memory", "same_storage", "same_object", "recorded_view"),),
    "inplace": (("same_object",), ("shares_memory", "same_storage"), ("version_change",)),
}
SHOWN_CASES = 3

# The error kinds (conformance.model.ERROR_KINDS) that say the framework lacks the operation
# itself, so that a case expecting one at the operation's step stands for the result it cannot
# have: no implementation for the tensor's dtype (no kernel registered), or arrays that cannot
# change at all. Every other kind is a refusal of what the case passed (``inplace_on_leaf``,
# ``shape_mismatch``, ...) or says nothing of why (``other``).
LACKS_OPERATION = frozenset({"unsupported_dtype", "immutable"})


@dataclass(frozen=True)
class Entry:
    name: str
    keys: tuple[str, ...]
    location: Location
    note: str | None = None
    source: str | None = None
    counterparts: Mapping[str, str] = field(default_factory=dict)
    no_counterpart: str | None = None


@dataclass(frozen=True)
class ReferenceList:
    path: str
    framework: str
    set: str
    title: str
    source: str
    version: str
    entries: tuple[Entry, ...]
    target: int | None = None  # the percentage the corpus must reach (--check), if any

    @property
    def slug(self) -> str:
        return Path(self.path).stem


@dataclass(frozen=True)
class EntryCoverage:
    entry: Entry
    in_vocabulary: bool
    why_not: str | None  # the table's reason, where the key is absent or missing
    cases: tuple[Case, ...]  # the cases that use a key and apply on the list's framework
    missing: tuple[str, ...]  # requirements no covering case asserts ("version_change")
    also_on: tuple[str, ...]  # the other frameworks where some of those cases apply
    raises: bool = False  # a case expects its own step to raise, of a kind saying the framework lacks it

    @property
    def counted(self) -> bool:
        return self.entry.no_counterpart is None

    @property
    def covered(self) -> bool:
        return self.in_vocabulary and bool(self.cases) and not self.missing

    def gap(self) -> str:
        """Why the entry is not covered, in words ('' when it is)."""
        if not self.in_vocabulary:
            return f"not in the vocabulary ({self.why_not})"
        if not self.cases:
            return "no case applies"
        if self.missing:
            return "no case asserts " + ", ".join(self.missing)
        return ""


@dataclass(frozen=True)
class ListCoverage:
    reference: ReferenceList
    entries: tuple[EntryCoverage, ...]

    @property
    def counted(self) -> list[EntryCoverage]:
        return [e for e in self.entries if e.counted]

    @property
    def covered(self) -> int:
        return sum(e.covered for e in self.counted)

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / len(self.counted) if self.counted else 100.0

    @property
    def meets_target(self) -> bool:
        return self.reference.target is None or self.percent >= self.reference.target


# -- reading the lists ---------------------------------------------------------------------


def read_list(path: Path, display: str | None = None) -> ReferenceList:
    """One reference list; every mistake of the file raised together (CaseFormatErrors)."""
    shown = display or str(path)
    data = parse(path.read_text(encoding="utf-8"), shown)
    top = fields.mapping(data, Location(shown, 1, 1), "a reference list")
    errors: list[CaseFormatError] = []
    unknown = fields.unknown_keys(top, LIST_KEYS, "a reference list", errors)
    values: dict[str, Any] = {}
    for key in ("framework", "set", "title", "source", "version"):
        if key not in top:
            if not unknown:
                errors.append(CaseFormatError(top.location, f"a reference list needs '{key}'",
                                              f"add '{key}:' (see conformance/data/coverage/README.md)"))
            continue
        try:
            values[key] = fields.string(top, key, f"'{key}'")
        except CaseFormatError as exc:
            errors += split(exc)
    if values.get("set") not in (None, *SETS):
        errors.append(CaseFormatError(top.where("set"), f"unknown set {values['set']!r}",
                                      f"use one of {', '.join(SETS)}"))
    if "source" in values and not fields.LINK.match(values["source"]) and \
            not values["source"].startswith("introspection"):
        errors.append(CaseFormatError(top.where("source"), "'source' must be a link (http:// or https://) or "
                                      "say 'introspection of ...'", "pin the link to the release the list is from"))
    target = top.get("target")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int) or not 0 < target <= 100):
        errors.append(CaseFormatError(top.where("target"), f"'target' must be a percentage 1-100, got {target!r}"))
        target = None
    entries: list[Entry] = []
    raw = top.get("operations")
    if raw is None:
        if not unknown:
            errors.append(CaseFormatError(top.location, "a reference list needs 'operations'",
                                          "add 'operations:' with one entry per operation"))
    elif not isinstance(raw, YList) or not raw:
        errors.append(CaseFormatError(top.where("operations"), "'operations' must be a non-empty list"))
    else:
        seen: dict[str, Location] = {}
        for index, item in enumerate(raw):
            try:
                entry = _entry(item, raw.where(index))
            except CaseFormatError as exc:
                errors += split(exc)
                continue
            if entry.name in seen:
                errors.append(CaseFormatError(entry.location, f"{entry.name!r} is listed twice",
                                              f"the first is at line {seen[entry.name].line}"))
            seen.setdefault(entry.name, entry.location)
            entries.append(entry)
    if errors:
        raise CaseFormatErrors(errors)
    return ReferenceList(path=shown, framework=values["framework"], set=values["set"], title=values["title"],
                         source=values["source"], version=values["version"], entries=tuple(entries), target=target)


def _entry(raw: Any, loc: Location) -> Entry:
    m = fields.mapping(raw, loc, "an operation entry")
    errors: list[CaseFormatError] = []
    fields.unknown_keys(m, ENTRY_KEYS, "an operation entry", errors)
    name = ""
    try:
        name = fields.string(m, "name", "'name'") if "name" in m else ""
    except CaseFormatError as exc:
        errors += split(exc)
    if "name" not in m:
        errors.append(CaseFormatError(m.location, "an operation entry needs 'name'", "the framework's own name"))
    keys: tuple[str, ...] = ()
    try:
        keys = fields.strings(m, "keys", "'keys'")
        for index, key in enumerate(keys):
            if not KEY_PATTERN.match(key):
                where = m["keys"].where(index) if isinstance(m["keys"], YList) else m.where("keys")
                errors.append(CaseFormatError(where, f"{key!r} is not a vocabulary key",
                                              "keys look like method:view_as, fn:atleast_2d, attr:mH, op:getitem"))
    except CaseFormatError as exc:
        errors += split(exc)
    optional: dict[str, str | None] = {}
    for key in ("note", "source", "no_counterpart"):
        try:
            optional[key] = fields.string(m, key, f"'{key}'") if key in m else None
        except CaseFormatError as exc:
            errors += split(exc)
    if optional.get("source") and not fields.LINK.match(str(optional["source"])):
        errors.append(CaseFormatError(m.where("source"), "an entry's 'source' must be a link"))
    counterparts: dict[str, str] = {}
    if "counterparts" in m:
        try:
            c = fields.mapping(m["counterparts"], m.where("counterparts"), "'counterparts'")
            for fw, other in c.items():
                if not isinstance(other, str) or not other.strip():
                    errors.append(CaseFormatError(c.where(fw), f"the counterpart in {fw} must be a name"))
                else:
                    counterparts[str(fw)] = other
        except CaseFormatError as exc:
            errors += split(exc)
    if counterparts and optional.get("no_counterpart"):
        errors.append(CaseFormatError(m.where("no_counterpart"), "an entry with counterparts cannot say "
                                      "no_counterpart", "keep the one that is true"))
    if not keys and not optional.get("no_counterpart") and "keys" in m:
        errors.append(CaseFormatError(m.where("keys"), f"{name!r} has no vocabulary key",
                                      "name the key(s) that call it, or say no_counterpart: <why>"))
    if errors:
        raise CaseFormatErrors(errors)
    return Entry(name=name, keys=keys, location=loc, note=optional["note"], source=optional["source"],
                 counterparts=counterparts, no_counterpart=optional["no_counterpart"])


def read_lists(folder: Path = LISTS_FOLDER) -> list[ReferenceList]:
    """Every list of a folder, in name order; the errors of every bad file raised together.
    The packaged lists are shown by their path in the source tree."""
    lists: list[ReferenceList] = []
    errors: list[CaseFormatError] = []
    for path in sorted(folder.glob("*.yaml")):
        shown = f"conformance/data/coverage/{path.name}" if folder == LISTS_FOLDER else str(path)
        try:
            lists.append(read_list(path, shown))
        except CaseFormatError as exc:
            errors += split(exc)
    if errors:
        raise CaseFormatErrors(errors)
    return lists


# -- measuring -----------------------------------------------------------------------------


def corpus_cases(paths: Iterable[str | Path]) -> tuple[list[Case], list[str]]:
    """The cases under ``paths`` and, rendered, each problem that keeps the corpus from
    loading (an entry a case folder may not hold, an error of a case file): the coverage of
    a corpus that does not load is not measured (``conformance coverage``, ``conformance
    regen``)."""
    from conformance import registry
    from conformance.load.folders import scan
    from conformance.load.reader import load_file
    from conformance.tools.lint import refused_finding

    vocabulary = registry.vocabulary()
    files, refused = scan(paths)
    problems = [refused_finding(path, why).render() for path, why in refused]
    cases: list[Case] = []
    for path in files:
        result = load_file(path, vocabulary)
        cases += result.cases
        problems += [error.render() for _, error in result.errors]
    return cases, problems


def keys_used(case: Case) -> set[str]:
    """Every key a case's steps use: the operation table's, Python's operators (``op:getitem``)
    and the kind of each indexing (``index:basic``)."""
    return case.operations() | {key for step in case.steps for key in operator_keys(step)}


def _lacks(adapter: Any, key: str) -> str | None:
    # an indexing kind is the table's x[i] (op:getitem), read as the case wrote it
    return adapter.lacks("op:getitem" if key.startswith("index:") else key)


def applies(case: Case, framework: str, adapter: Any, not_run: frozenset[tuple[str, str]] = frozenset()) -> bool:
    """Whether the case runs on the framework: every key in its table, no override saying
    not applicable, and (from a results file) not recorded as not applicable."""
    override = case.overrides.get(framework)
    if override is not None and override.not_applicable is not None:
        return False
    if (case.id, framework) in not_run:
        return False
    return gradients.lacking(case, adapter) is None  # backward() read functionally where it is (run/gradients.py)


def measure(reference: ReferenceList, cases: Sequence[Case], adapters: Mapping[str, Any],
            not_run: frozenset[tuple[str, str]] = frozenset()) -> ListCoverage:
    fw = reference.framework
    adapter = adapters[fw]
    unobservable = frozenset(getattr(adapter, "unobservable", frozenset()))
    requirements = [r for r in REQUIRED[reference.set] if not set(r) <= unobservable]
    used = [(case, keys_used(case)) for case in cases]  # once per list, not once per entry
    out = []
    for entry in reference.entries:
        usable = [k for k in entry.keys if _lacks(adapter, k) is None]
        why_not = None if usable else (_lacks(adapter, entry.keys[0]) if entry.keys else "no key")
        using = [c for c, keys in used if keys & set(entry.keys)]
        mine = tuple(c for c in using if usable and applies(c, fw, adapter, not_run))
        asserted = set().union(*(c.expect_for(fw).checks for c in mine)) if mine else set()
        raises = any(_raises_at(c, fw, set(entry.keys)) for c in mine)
        missing = () if raises else tuple(" or ".join(r) for r in requirements if mine and not asserted & set(r))
        also = tuple(other for other, a in adapters.items()
                     if other != fw and any(applies(c, other, a, not_run) for c in using))
        out.append(EntryCoverage(entry, bool(usable), why_not, mine, missing, also, raises))
    return ListCoverage(reference, tuple(out))


def _raises_at(case: Case, framework: str, keys: set[str]) -> bool:
    """Whether the case expects, on the framework, an error at a step that calls one of the
    keys, of a kind that says the framework lacks the operation (:data:`LACKS_OPERATION`), so
    that there is no result whose identity or memory a case could assert. A refusal of
    another kind (a leaf that requires grad, MindSpore's missing CPU kernels, which its
    adapter classifies as ``other``) does not count."""
    error = case.expect_for(framework).checks.get("error")
    if getattr(error, "kind", None) not in LACKS_OPERATION:
        return False
    at = getattr(error, "at", None)
    flat = case.flat_steps()
    return isinstance(at, int) and 0 < at <= len(flat) and bool((operations_of(flat[at - 1])
                                                                 | operator_keys(flat[at - 1])) & keys)


def not_run_from_results(results: ResultsDocument) -> frozenset[tuple[str, str]]:
    """(case id, framework) of every record a results file has as not applicable."""
    return frozenset((r.case, r.framework) for r in results.results
                     if r.outcome == "not_applicable" and r.case is not None and r.framework is not None)


# -- the page ------------------------------------------------------------------------------

HEADER = """# Coverage of the frameworks' own references

Generated by `conformance coverage` from the reference lists in
[`conformance/data/coverage/`](../conformance/data/coverage/) and the corpus; do not edit by
hand. Each list is a framework's own account of its view operations or its in-place methods,
kept as data with its source. An operation is **covered** when its vocabulary key is in
that framework's table, at least one case using the key applies there, and those cases
assert what the list asks: for a view op, an aliasing relation (`shares_memory`,
`same_storage`, `same_object` or `recorded_view`); for an in-place method, the identity of
what it returns (`same_object`), the memory (a view taken before the call sees the result:
`shares_memory`) and the version counter (`version_change`), where the framework can
observe each; where a case expects the operation's own step to raise on that framework with
an error kind saying the framework lacks the operation (`unsupported_dtype`, `immutable`:
*raises:*), there is no result to check; an expected error of any other kind (a leaf that
requires grad, `other`) covers nothing. *Also run on*
names the other frameworks where a case of the operation applies. In-place methods no
other framework has are listed with the reason, outside the percentage.
"""


def measure_all(lists: Sequence[ReferenceList], cases: Sequence[Case],
                not_run: frozenset[tuple[str, str]] = frozenset()) -> list[ListCoverage]:
    """Each list measured on the registered frameworks' tables (no framework is imported);
    a list of a framework that is not registered is left out."""
    from conformance import registry

    names = registry.eager_names()  # a compiled mode runs its framework's cases, not a list of its own
    adapters = {name: registry.get_adapter(name) for name in names}
    return [measure(ref, cases, adapters, not_run) for ref in lists if ref.framework in adapters]


def framework_titles() -> dict[str, str]:
    from conformance import registry

    return {name: registry.framework(name).title for name in registry.framework_names()}


def render_markdown(coverages: Sequence[ListCoverage], titles: Mapping[str, str]) -> str:
    lines = [HEADER, "## Summary", "",
             "| list | framework | operations | covered | % | target |", "|---|---|---:|---:|---:|---:|"]
    for cov in coverages:
        ref = cov.reference
        target = f"{ref.target} %" if ref.target is not None else "–"
        lines.append(f"| [{_cell(ref.title)}](#{ref.slug}) | {titles.get(ref.framework, ref.framework)} "
                     f"{ref.version} | {len(cov.counted)} | {cov.covered} | {cov.percent:.0f} % | {target} |")
    for cov in coverages:
        lines += ["", *_list_section(cov, titles)]
    return "\n".join(lines) + "\n"


def _list_section(cov: ListCoverage, titles: Mapping[str, str]) -> list[str]:
    ref = cov.reference
    fw_title = titles.get(ref.framework, ref.framework)
    lines = [f'<a id="{ref.slug}"></a>', f"## {_cell(ref.title)}", "",
             f"{fw_title} {ref.version}; source: {_link(ref.source)}; the list: `{ref.path}`. "
             f"{cov.covered} of {len(cov.counted)} covered ({cov.percent:.0f} %).", ""]
    inplace = ref.set == "inplace"
    head = "| operation | key | cases on " + ref.framework + " | also run on |"
    if inplace:
        head = "| operation | counterparts | key | cases on " + ref.framework + " | also run on |"
    lines += [head, "|---" * head.count(" | ") + "|---|"]
    without = []
    for e in cov.entries:
        if not e.counted:
            without.append(e)
            continue
        name = f"`{_cell(e.entry.name)}`" + (f" ([doc]({e.entry.source}))" if e.entry.source else "")
        keys = ", ".join(f"`{k}`" for k in e.entry.keys) or "–"
        if e.covered:
            shown = ", ".join(f"`{c.id}`" for c in e.cases[:SHOWN_CASES])
            more = len(e.cases) - SHOWN_CASES
            cases = ("raises: " if e.raises else "") + shown + (f" and {more} more" if more > 0 else "")
        else:
            cases = f"**not covered**: {_cell(e.gap())}"
        row = [name]
        if inplace:
            row.append(", ".join(f"{fw}: `{n}`" for fw, n in sorted(e.entry.counterparts.items())) or "–")
        row += [keys, cases, ", ".join(e.also_on) or "–"]
        lines.append("| " + " | ".join(row) + " |")
    if without:
        lines += ["", f"Without a counterpart in another framework ({len(without)}):", ""]
        lines += [f"- `{e.entry.name}`: {_cell(e.entry.no_counterpart or '')}" for e in without]
    return lines


def summary_lines(coverages: Iterable[ListCoverage]) -> list[str]:
    out = []
    for cov in coverages:
        ref = cov.reference
        verdict = "" if ref.target is None else (" (target met)" if cov.meets_target else
                                                 f" BELOW the target of {ref.target} %")
        out.append(f"{ref.slug}: {cov.covered}/{len(cov.counted)} covered ({cov.percent:.1f} %){verdict}")
        if ref.target is not None and not cov.meets_target:
            out += [f"  {e.entry.name}: {e.gap()}" for e in cov.counted if not e.covered]
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _link(url: str) -> str:
    return f"<{url}>" if fields.LINK.match(url) else url
