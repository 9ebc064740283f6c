"""Two runs of the whole corpus record the same behaviour: one serial, one with two xdist
workers (so the items meet different process histories: other cases before them, other
tensor counters, another sandbox child). Everything but the durations must be equal:
outcomes, reasons, observations, error messages, the steps, the case information.

What makes it so: every case's RNGs are seeded from its id (engine.case_seed), global state
is restored after each item (tests/test_isolation.py), and adapters normalise what differs
from one process to the next in error messages (Paddle's generated tensor names). A
compiled mode resets its compiler's state before each item (Adapter.compile), which the
second parametrization proves on the cases about compiled semantics.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from entry_points import subprocess_env

ROOT = Path(__file__).resolve().parent.parent


def corpus_run(tmp_path: Path, name: str, *args: str) -> dict[str, Any]:
    path = tmp_path / name
    paths = [a for a in args if a.startswith("cases")] or ["cases"]
    options = [a for a in args if not a.startswith("cases")]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *paths,
                           "--conformance-results", str(path), "--conformance-partial-results", str(path),
                           *options],
                          cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(path.read_text())


def without_durations(data: dict[str, Any]) -> dict[str, Any]:
    records = {r["nodeid"]: {k: v for k, v in r.items() if k != "duration_s"} for r in data["results"]}
    # the date the run ended: two runs either side of midnight differ in it
    run = {k: v for k, v in data["run"].items() if k != "date"}
    return {"results": records, "cases": data["cases"], "environment": data["environment"], "run": run}


@pytest.mark.slow(reason="two runs of the corpus (eager) or of the compiled modes' subset, serial and -n 2")
@pytest.mark.parametrize("selection", [
    ["--modes", "eager"],
    # the compiled modes (issue 19), each item a compiled function after the reset of its
    # compiler's state: on the cases about compiled semantics and the in-place ones most of
    # their differences are in (the whole corpus compiled takes minutes per mode)
    ["--modes", "compiled", "cases/compiled", "cases/inplace/views_and_bases.yaml",
     "cases/inplace/promotion_readonly.yaml", "cases/autograd/versions.yaml"],
], ids=["eager", "compiled"])
def test_two_runs_of_the_corpus_record_the_same_behaviour(tmp_path: Path, selection: list[str]) -> None:
    pytest.importorskip("xdist")
    serial = without_durations(corpus_run(tmp_path, "serial.json", *selection))
    parallel = without_durations(corpus_run(tmp_path, "parallel.json", "-n", "2", *selection))
    assert serial["results"].keys() == parallel["results"].keys()
    differing = [nodeid for nodeid, record in serial["results"].items() if parallel["results"][nodeid] != record]
    assert not differing, (f"{len(differing)} items differ, e.g. {differing[0]}:\n"
                           f"{serial['results'][differing[0]]}\n{parallel['results'][differing[0]]}")
    assert serial == parallel
