"""A re-run reuses the stored outcome of every item whose inputs did not change, and computes
the others (issue 33, "only what changed"; conformance/run/store.py): the same results and
reports as a run that computes everything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CASES = """\
cases:
  - id: views.reuse.slice
    title: "a slice is a view"
    given: {x: [1.0, 2.0, 3.0]}
    steps:
      - y = x[0:2]
    expect: {shares_memory: {y & x: true}}
  - id: views.reuse.clone
    title: "clone copies"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.clone()
    expect: {shares_memory: {y & x: false}}
"""


def _records(path: Path) -> dict[tuple[str, str], dict]:
    data = json.loads(path.read_text())
    return {(r["case"], r["framework"]): r for r in data["results"]}


def _comparable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in ("duration_s", "reused")}


def test_unchanged_items_are_reused_and_a_changed_case_is_computed(pytester: pytest.Pytester, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    case_file = pytester.path / "cases" / "views" / "reuse.yaml"
    case_file.write_text(CASES)
    args = ["-p", "no:cacheprovider", "--conformance-reuse", "--conformance-results"]

    first = pytester.runpytest_subprocess(*args, "first.json")
    first.assert_outcomes(passed=4)
    fresh = _records(pytester.path / "first.json")
    assert not any(r.get("reused") for r in fresh.values())

    again = pytester.runpytest_subprocess(*args, "again.json")
    again.assert_outcomes(passed=4)
    reused = _records(pytester.path / "again.json")
    assert all(r.get("reused") for r in reused.values())
    assert {k: _comparable(r) for k, r in reused.items()} == {k: _comparable(r) for k, r in fresh.items()}
    assert json.loads((pytester.path / "again.json").read_text())["run"]["reused"] == 4

    case_file.write_text(CASES.replace("x.clone()", "x.clone() "))  # the same case, rewritten: still reused
    pytester.runpytest_subprocess(*args, "same.json").assert_outcomes(passed=4)
    assert all(r.get("reused") for r in _records(pytester.path / "same.json").values())

    case_file.write_text(CASES.replace("[1.0, 2.0]}", "[1.0, 2.5]}"))  # the clone case's input changed
    pytester.runpytest_subprocess(*args, "edited.json").assert_outcomes(passed=4)
    edited = _records(pytester.path / "edited.json")
    assert {k for k, r in edited.items() if r.get("reused")} == {("views.reuse.slice", "numpy"),
                                                                 ("views.reuse.slice", "torch")}

    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--conformance-results", "plain.json")
    plain.assert_outcomes(passed=4)
    assert not any(r.get("reused") for r in _records(pytester.path / "plain.json").values())


def test_a_refreshing_run_computes_every_item_and_stores_them_for_the_next(pytester: pytest.Pytester, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """conformance run --fresh: every item computed, even with its outcome stored, and what
    it computes stored, so that the run after it reuses them."""
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "reuse.yaml").write_text(CASES)
    base = ["-p", "no:cacheprovider", "--conformance-results"]
    for name in ("refresh.json", "again.json"):
        pytester.runpytest_subprocess(*base, name, "--conformance-refresh").assert_outcomes(passed=2)
        assert not any(r.get("reused") for r in _records(pytester.path / name).values())
    pytester.runpytest_subprocess(*base, "reuse.json", "--conformance-reuse").assert_outcomes(passed=2)
    assert all(r.get("reused") for r in _records(pytester.path / "reuse.json").values())


def test_reuse_and_refresh_together_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nconformance_paths = cases\n")
    (pytester.path / "cases").mkdir()
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--conformance-reuse", "--conformance-refresh")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--conformance-reuse and --conformance-refresh: give one*"])
