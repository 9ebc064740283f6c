"""``conformance merge A.json B.json ... --out ALL.json``: one results file from the results
of shards (``--shard K/N``), of frameworks run apart, and of machines.

Files are joined only when they are of the same corpus revision (``run.corpus``, a digest
of the case files) and no item is in two of them: either would make one report out of
observations that do not belong together. A framework must have one release across the
files (two releases of one framework are two columns of the changelog, not one of the
report: ``conformance changelog``). Every problem is said at once, naming the files.

The merged file is a full run when together the files hold every item the corpus makes
(``run.corpus_items``, which each full-corpus collection records), whatever each one's own
selection was; otherwise its ``run.partial`` says how many items are missing, and from
which frameworks.
"""

from __future__ import annotations

import dataclasses

from conformance.report.results import RESULTS_FORMAT_VERSION
from conformance.resultsmodel import CaseInfo, Commit, Installation, MergedFile, ResultsDocument, Run


class MergeError(Exception):
    """The files cannot be merged: every reason, one per line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def merge(documents: list[tuple[str, ResultsDocument]]) -> ResultsDocument:
    """``[(file name, results document)]`` -> the merged document. Raises MergeError."""
    if not documents:
        raise MergeError(["no results files to merge"])
    problems: list[str] = []
    revisions = {name: doc.run.corpus for name, doc in documents}
    if None in revisions.values():
        unknown = [name for name, rev in revisions.items() if rev is None]
        problems.append(f"{', '.join(unknown)}: no corpus revision (written before results files recorded it); "
                        "run the suite again to regenerate")
    known = {rev for rev in revisions.values() if rev is not None}
    if len(known) > 1:
        problems.append("the files are of different corpus revisions, so their items are not the same cases: "
                        + "; ".join(f"{name}: {rev}" for name, rev in revisions.items())
                        + " (run every shard or framework on one checkout)")
    owner: dict[str, int] = {}
    duplicates: dict[tuple[int, int], list[str]] = {}
    for index, (_, doc) in enumerate(documents):
        for record in doc.results:
            first = owner.setdefault(record.nodeid, index)
            if first != index:
                duplicates.setdefault((first, index), []).append(record.nodeid)
    for (first, second), ids in duplicates.items():
        shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        both = f"both {documents[first][0]} and {documents[second][0]}" if documents[first][0] != \
            documents[second][0] else f"{documents[first][0]}, given twice"
        problems.append(f"{len(ids)} item(s) in {both}: {shown} (merge disjoint runs: the shards of one command, "
                        "or runs of different frameworks)")
    frameworks: dict[str, Installation] = {}
    release_of: dict[str, tuple[str, str]] = {}  # framework -> (version, the file that ran it)
    for name, doc in documents:
        ran = {r.framework for r in doc.results if r.outcome != "skipped"}
        for fw, env in doc.environment.frameworks.items():
            frameworks.setdefault(fw, env)
            if fw not in ran or env.version is None:
                continue
            seen = release_of.setdefault(fw, (env.version, name))
            if seen[0] != env.version:
                problems.append(f"{fw} {seen[0]} in {seen[1]} but {env.version} in {name}: one report has one "
                                "release of a framework (compare releases with conformance changelog)")
            frameworks[fw] = env
    if problems:
        raise MergeError(problems)
    records = tuple(sorted((r for _, doc in documents for r in doc.results), key=lambda r: r.nodeid))
    cases: dict[str, CaseInfo] = {}
    claims: dict[str, str] = {}
    for _, doc in documents:
        cases.update(doc.cases)
        claims.update(doc.claims)
    lead = documents[0][1]
    dates = sorted({d.run.date for _, d in documents if d.run.date})
    commits = [d.run.commit for _, d in documents if d.run.commit is not None]
    commit = None
    if len(commits) == len(documents) and len({c.sha for c in commits}) == 1:  # else no one commit is the source
        commit = Commit(sha=commits[0].sha, modified=any(c.modified for c in commits))
    totals = {d.run.corpus_items for _, d in documents} - {None}
    corpus_items, partial = None, None
    if len(totals) == 1:
        corpus_items = total = totals.pop()
        if total is not None and len(records) < total:
            by_framework: dict[str, int] = {}
            for r in records:  # a case file that could not be loaded has no framework
                fw = r.framework if r.framework is not None else "(no framework)"
                by_framework[fw] = by_framework.get(fw, 0) + 1
            merged = ", ".join(f"{k} {v}" for k, v in sorted(by_framework.items()))
            partial = (f"{total - len(records)} of the corpus's {total} items are in none of the merged files "
                       f"(items per framework merged: {merged})",)
    else:
        partial = ("the merged files do not say how many items the whole corpus makes (none collected all "
                   "of its case files), so the merge cannot be known to be complete",)
    run = Run(
        items=len(records),
        exit_status=next((d.run.exit_status for _, d in documents if d.run.exit_status), 0),
        corpus=next(iter(known)),
        merged_from=tuple(_source(name, doc) for name, doc in documents),
        date=dates[-1] if dates else None,  # the results are as of the last of the runs
        commit=commit,
        corpus_items=corpus_items,
        partial=partial,
    )
    return ResultsDocument(
        format=RESULTS_FORMAT_VERSION,
        environment=dataclasses.replace(lead.environment, frameworks=dict(sorted(frameworks.items()))),
        run=run,
        claims=dict(sorted(claims.items())),
        cases=dict(sorted(cases.items())),
        results=records,
    )


def _source(name: str, doc: ResultsDocument) -> MergedFile:
    return MergedFile(file=name, items=len(doc.results), shard=tuple(doc.run.shard) if doc.run.shard else None,
                      platform=doc.environment.platform, python=doc.environment.python)
