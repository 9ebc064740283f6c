"""Two runs of the corpus record the same behaviour: the corpus run whose results this test
reads (tests/corpus_results.py; in CI the README's test command, with every core, the
tool's own tests running in the same workers), and a serial run of the eager corpus, or of
the compiled modes' subset, that this test makes. The items meet different process
histories: other cases and tests before them, other tensor counters, other sandbox
children. Everything but the durations must be equal: outcomes, reasons, observations,
error messages, the steps, the case information.

What makes it so: every case's RNGs are seeded from its id (engine.case_seed), global state
is restored after each item (tests/test_isolation.py), and adapters normalise what differs
from one process to the next in error messages (Paddle's generated tensor names). A
compiled mode resets its compiler's state before each item (Adapter.compile), which the
second parametrization proves on the cases about compiled semantics.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_results import corpus_results
from entry_points import subprocess_env

from conformance.report.results import load_results
from conformance.resultsmodel import Record, ResultsDocument

ROOT = Path(__file__).resolve().parent.parent


def corpus_run(tmp_path: Path, name: str, *args: str) -> ResultsDocument:
    path = tmp_path / name
    paths = [a for a in args if a.startswith("cases")] or ["cases"]
    options = [a for a in args if not a.startswith("cases")]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *paths,
                           "--conformance-results", str(path), "--conformance-partial-results", str(path),
                           *options],
                          cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return load_results(path)


def comparable(record: Record) -> Record:
    """A record without what differs between two runs of the same behaviour: its duration,
    and whether it was reused from the store of outcomes."""
    return dataclasses.replace(record, duration_s=None, reused=None)


@pytest.mark.slow(reason="a serial run of the corpus (eager) or of the compiled modes' subset")
@pytest.mark.parametrize("selection", [
    ["--modes", "eager"],
    # the compiled modes (issue 19), each item a compiled function after the reset of its
    # compiler's state: on the cases about compiled semantics and the in-place ones most of
    # their differences are in (the whole corpus compiled takes minutes per mode)
    ["--modes", "compiled", "cases/compiled", "cases/inplace/views_and_bases.yaml",
     "cases/inplace/promotion_readonly.yaml", "cases/autograd/versions.yaml"],
], ids=["eager", "compiled"])
def test_two_runs_of_the_corpus_record_the_same_behaviour(tmp_path: Path, selection: list[str]) -> None:
    recorded = corpus_results()
    serial = corpus_run(tmp_path, "serial.json", *selection)
    by_nodeid = {r.nodeid: comparable(r) for r in recorded.results}
    records = {r.nodeid: comparable(r) for r in serial.results}
    assert len(records) > 500 and set(records) <= set(by_nodeid)
    differing = [nodeid for nodeid, record in records.items() if by_nodeid[nodeid] != record]
    assert not differing, (f"{len(differing)} items differ, e.g. {differing[0]}:\n"
                           f"{by_nodeid[differing[0]]}\n{records[differing[0]]}")
    assert {case: recorded.cases[case] for case in serial.cases} == serial.cases
    # each framework's version, and the devices of those this run set up (a framework it
    # lists without running any of its items says devices: null)
    frameworks = serial.environment.frameworks
    for name, found in frameworks.items():
        expected = recorded.environment.frameworks[name]
        assert found.version == expected.version, name
        assert found.devices in (None, expected.devices), name
    assert sum(found.devices is not None for found in frameworks.values()) >= 5
    assert (dataclasses.replace(recorded.environment, frameworks={})
            == dataclasses.replace(serial.environment, frameworks={}))
