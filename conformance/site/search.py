"""The prebuilt search index: one entry per case, operation, claim, family and framework,
``[kind, name, title, path, words]``, searched in the page by ``search.js`` (every word
typed must occur in the entry; the name matching first). Written as a script that sets
``window.SEARCH_INDEX``, because a page opened from disk may not fetch a file beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from conformance.report.analysis import Report, operation_label
from conformance.site import urls

if TYPE_CHECKING:  # pages imports this module
    from conformance.site.pages import OpGroup


def search_index(report: Report, ops: dict[str, OpGroup]) -> list[list[Any]]:
    entries: list[list[Any]] = []
    for row in report.rows:
        info = row.info
        words = " ".join([*info.tags, *(operation_label(k) for k in info.operations), *info.claims])
        entries.append(["case", row.case_id, info.title, urls.case(row.case_id), words])
    for name, group in ops.items():
        cases = sum(len(ids) for ids in group.cases.values())
        entries.append(["operation", name, ", ".join(group.labels) + f" ({cases} case uses)", urls.op(name),
                        " ".join(group.keys)])
    for claim in report.claims:
        entries.append(["claim", claim.claim, claim.text, urls.claim(claim.claim), ""])
    for family, score in report.families.items():
        entries.append(["family", family, f"{score.cases} cases; agreement {score.text()}", urls.family(family), ""])
    for fw in report.frameworks + report.modes:
        compiles = report.compiles.get(fw)
        entries.append(["framework", fw, f"compiled mode of {compiles}" if compiles else "framework",
                        urls.framework(fw), compiles or ""])
    return entries
