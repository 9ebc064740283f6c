"""From results files to the site's files: load and check the input, build the pages
(:mod:`conformance.site.pages`), render them (:mod:`conformance.site.render`)."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.report.merge import MergeError, merge
from conformance.report.results import ResultsFileError, load_results
from conformance.resultsmodel import ResultsDocument

PLACEHOLDERS = ("{commit}", "{path}", "{line}")


class SiteError(Exception):
    """Input the site cannot be built from: every reason, one per line."""


def load_inputs(results: list[Path], releases: list[Path], allow_partial: bool = False
                ) -> tuple[ResultsDocument, list[tuple[str, ResultsDocument]]]:
    """The results document to show (several files merged) and the release documents."""
    problems: list[str] = []
    documents = _load_each(results, "give the results file of a run: conformance run writes reports/results.json",
                           problems, "conformance run")
    release_docs = _load_each(releases, "--releases takes the files of conformance matrix, releases/*/*.json",
                              problems, "conformance matrix")
    if problems:
        raise SiteError("\n".join(problems))
    if len(documents) == 1:
        document = documents[0][1]
    else:
        try:
            document = merge(documents)
        except MergeError as exc:
            raise SiteError("\n".join(f"cannot merge the results files: {p}" for p in exc.problems)) from None
    partial = document.run.partial
    if partial and not allow_partial:
        names = ", ".join(name for name, _ in documents)
        raise SiteError(f"{names}: the results of a partial run ({'; '.join(partial)}); the site is the reference "
                        "of the whole corpus: build it from a full run (conformance run, or conformance merge of "
                        "every shard), or pass --partial to build it anyway (every page then says the run was "
                        "partial)")
    return document, release_docs


def _load_each(paths: list[Path], hint: str, problems: list[str], remake: str) -> list[tuple[str, ResultsDocument]]:
    """Each file's results document; a file that is not one adds its problems (one line
    each), the last with ``hint``."""
    documents = []
    for path in paths:
        try:
            documents.append((str(path), load_results(path, remake=remake)))
        except ResultsFileError as exc:
            problems += exc.problems[:-1] + [f"{exc.problems[-1]} ({hint})"]
    return documents


def check_source_url(template: str | None) -> None:
    if template is None:
        return
    unknown = sorted(set(re.findall(r"\{[^}]*\}", template)) - set(PLACEHOLDERS))
    if unknown or "{path}" not in template:
        what = f"unknown placeholder(s) {', '.join(unknown)}" if unknown else "no {path} placeholder"
        raise SiteError(f"--source-url {template!r}: {what}; write an address with {{path}} and optionally "
                        "{commit} and {line}, e.g. https://github.com/ORG/REPO/blob/{commit}/{path}#L{line}")
    if not template.startswith(("https://", "http://")):
        raise SiteError(f"--source-url {template!r}: not an http(s) address; the site is read away from the "
                        "checkout, so a case's file is linked where it is published")


def build_site(results: list[Path], releases: list[Path], source_url: str | None = None,
               allow_partial: bool = False) -> tuple[dict[str, str], str]:
    """(root-relative path -> text of every file, a one-line summary)."""
    check_source_url(source_url)
    document, release_docs = load_inputs(results, releases, allow_partial)
    files = render_site(document, release_docs, source_url)
    pages = sum(1 for name in files if name.endswith(".html"))
    size = sum(len(text.encode("utf-8")) for text in files.values())
    return files, f"{pages} pages, {size / 1e6:.1f} MB"


def render_site(document: ResultsDocument, release_docs: list[tuple[str, ResultsDocument]] | None = None,
                source_url: str | None = None) -> dict[str, str]:
    """Root-relative path -> text, for a results document already loaded."""
    from conformance.report import changelog
    from conformance.site import pages, render, repro

    log = changelog.build(release_docs) if release_docs else None
    cases = repro.load_cases(info.file for info in document.cases.values())
    return render.render(pages.build(document, log, source_url, cases))
