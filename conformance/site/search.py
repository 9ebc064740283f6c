"""The prebuilt search index: one entry per case, operation, claim, family, framework and
release, ``[kind, name, title, path, words, api, reasons]``, searched in the page by
``search.js``: every word typed must occur in the entry; an exact name or API spelling ranks
first, then the name, the API spellings (every framework's own spelling of an operation,
:mod:`conformance.spellings`, and what a compiled mode is: ``torch.compile``), the title, the
words, and last the reasons (the overrides' and the records' reasons, as the set of their
words, to keep the index small). Written as a script that sets ``window.SEARCH_INDEX``,
because a page opened from disk may not fetch a file beside it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from conformance import spellings
from conformance.report.analysis import Report, operation_label
from conformance.site import urls

if TYPE_CHECKING:  # pages imports this module
    from conformance.report.changelog import Changelog
    from conformance.resultsmodel import ResultsDocument
    from conformance.site.pages import OpGroup

_WORD = re.compile(r"[\w.+:/'-]+")
# words too common in the reasons to find anything by
_COMMON = frozenset("the and for not its but with from that this are was has have is it in of on to as at by an or be "
                    "a no so which where when than then they their there what while into only also".split())


def _word_set(texts: list[str]) -> str:
    """The distinct words of ``texts``, lower-cased, in order of first use: what a search for
    words needs of a reason, at a fraction of its length."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text.lower()):
            word = word.strip(".:/'-")
            if len(word) > 2 and word not in _COMMON:
                seen.setdefault(word, None)
    return " ".join(seen)


def search_index(report: Report, ops: dict[str, OpGroup], results: ResultsDocument | None = None,
                 log: Changelog | None = None) -> list[list[Any]]:
    reasons: dict[str, list[tuple[str, str]]] = defaultdict(list)
    if results is not None:
        for record in results.results:
            if record.case is not None and record.reason:
                reasons[record.case].append((record.framework or "", record.reason))
    versions = {} if results is None else {fw: info.version for fw, info in results.environment.frameworks.items()}
    entries: list[list[Any]] = []
    for row in report.rows:
        info = row.info
        words = " ".join([*info.tags, *(operation_label(k) for k in info.operations), *info.claims])
        texts = [o.reason for o in info.overrides.values()] + [r for _, r in sorted(reasons.get(row.case_id, []))]
        texts += [v.reason + " " + v.versions for vs in (info.versioned or {}).values() for v in vs]
        entries.append(["case", row.case_id, info.title, urls.case(row.case_id), words, "", _word_set(texts)])
    for name, group in ops.items():
        cases = sum(len(ids) for ids in group.cases.values())
        api = "; ".join(w for k in group.keys if (w := spellings.search_words(k)))
        entries.append(["operation", name, ", ".join(group.labels) + f" ({cases} case uses)", urls.op(name),
                        " ".join(group.keys), api, ""])
    for claim in report.claims:
        entries.append(["claim", claim.claim, claim.text, urls.claim(claim.claim), "", "", ""])
    for family, score in report.families.items():
        entries.append(["family", family, f"{score.cases} cases; agreement {score.text()}", urls.family(family),
                        "", "", ""])
    for fw in report.frameworks + report.modes:
        compiles = report.compiles.get(fw)
        version = versions.get(fw)
        title = f"compiled mode of {compiles}: {spellings.COMPILERS.get(fw, '')}" if compiles else "framework"
        if version:
            title += f", version {version}"
        entries.append(["framework", fw, title, urls.framework(fw),
                        " ".join(filter(None, [compiles, version and f"{fw} {version}"])),
                        spellings.COMPILERS.get(fw, ""), ""])
    if log is not None:
        for fw, columns in log.frameworks.items():
            for col in columns:
                state = f"did not run: {col.error}" if col.error else f"{col.items} items"
                entries.append(["release", f"{fw} {col.version}", f"{fw} {col.version}, results of the release "
                                f"({state})", urls.changelog(fw), col.file, "", ""])
    return entries


def operation_words(report: Report) -> str:
    """What every operation entry matches besides its own words: the compiled modes (each
    operation runs in each), with what they are (``torch.compile``); sent once, not per entry."""
    return " ".join(f"{mode} {spellings.COMPILERS[mode]}" for mode in report.modes if mode in spellings.COMPILERS)
