"""The results of a full run of this checkout's corpus, for the tests that check something over
every item the corpus records (tests/test_error_kinds.py, tests/test_determinism.py): they
read the records a run wrote instead of running the corpus again (issue 33: in CI no part of
the corpus runs twice).

``CONFORMANCE_CORPUS_RESULTS=FILE`` names that file. ``.ci/run`` sets it to the results of the
README's test command and runs these tests after that command; locally, ``conformance run
--fresh`` (or ``pytest cases --conformance-results FILE``) writes one. Without it they skip,
saying so. A file that is not a full run of this checkout's corpus at this commit fails them:
what they check would be of other cases or other code.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from conformance.plugin.coverage import corpus_revision, suite_commit
from conformance.report.results import load_results
from conformance.resultsmodel import ResultsDocument

ROOT = Path(__file__).resolve().parent.parent
ENV = "CONFORMANCE_CORPUS_RESULTS"
HOW = (f"{ENV}=FILE, the results of a full run of this checkout's corpus (.ci/run sets it after the README's "
       "test command; locally `conformance run --fresh` writes reports/results.json)")


def head_commit() -> str | None:
    """The commit this checkout is at; None outside a git checkout."""
    commit = suite_commit([ROOT / "cases"])
    return None if commit is None else commit["sha"]


def problems_of(data: ResultsDocument) -> list[str]:
    """Why ``data`` is not a full run of this checkout's corpus at this commit."""
    run = data.run
    problems = []
    if run.partial:
        problems.append(f"it is a partial run ({'; '.join(run.partial)})")
    files = sorted(str(p) for p in (ROOT / "cases").rglob("*.yaml"))
    if run.corpus != corpus_revision(files, [ROOT / "cases"]):
        problems.append(f"it is of another revision of the corpus ({run.corpus}): a case file changed since")
    head = head_commit()
    sha = None if run.commit is None else run.commit.sha
    if head is not None and sha != head:
        problems.append(f"it was run at commit {sha}, this checkout is at {head}")
    return problems


@functools.cache
def _read(path: str) -> ResultsDocument:
    data = load_results(Path(path))
    problems = problems_of(data)
    if problems:
        raise ValueError(f"{path} is no full run of this checkout's corpus: " + "; ".join(problems))
    return data


def corpus_results() -> ResultsDocument:
    """The results document ``CONFORMANCE_CORPUS_RESULTS`` names, checked; skips the calling
    test without it, fails it with a file that is not what it needs."""
    path = os.environ.get(ENV)
    if not path:
        pytest.skip(f"reads the corpus run's results: {HOW}")
    try:
        return _read(path)
    except Exception as exc:
        pytest.fail(f"{ENV}: {exc}", pytrace=False)
