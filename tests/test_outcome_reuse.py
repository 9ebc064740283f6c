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
    # every outcome stored: decided before the run, none through pytest's run (plugin.decided)
    assert again.ret == pytest.ExitCode.OK
    again.assert_outcomes()
    again.stdout.fnmatch_lines(["conformance: 4 items decided before the run (0 not applicable, 4 as an earlier "
                                "run with the same inputs stored them)*"])
    reused = _records(pytester.path / "again.json")
    assert all(r.get("reused") for r in reused.values())
    assert {k: _comparable(r) for k, r in reused.items()} == {k: _comparable(r) for k, r in fresh.items()}
    assert json.loads((pytester.path / "again.json").read_text())["run"]["reused"] == 4

    case_file.write_text(CASES.replace("x.clone()", "x.clone() "))  # the same case, rewritten: still reused
    pytester.runpytest_subprocess(*args, "same.json").assert_outcomes()
    assert all(r.get("reused") for r in _records(pytester.path / "same.json").values())

    case_file.write_text(CASES.replace("[1.0, 2.0]}", "[1.0, 2.5]}"))  # the clone case's input changed
    pytester.runpytest_subprocess(*args, "edited.json").assert_outcomes(passed=2)  # the clone case's two items
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
    pytester.runpytest_subprocess(*base, "reuse.json", "--conformance-reuse").assert_outcomes()
    assert all(r.get("reused") for r in _records(pytester.path / "reuse.json").values())


def test_reuse_and_refresh_together_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nconformance_paths = cases\n")
    (pytester.path / "cases").mkdir()
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--conformance-reuse", "--conformance-refresh")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--conformance-reuse and --conformance-refresh: give one*"])


NOT_EVERYWHERE = """\
cases:
  - id: views.reuse.numpy_only
    title: "a case only NumPy's items run"
    given: {x: [1.0, 2.0, 3.0]}
    steps:
      - y = x[0:2]
    expect: {shares_memory: {y & x: true}}
    frameworks:
      torch:
        - not_applicable: "a case for this test's NumPy item only"
"""


def test_not_applicable_items_are_decided_at_collection_and_recorded_as_a_full_run_records_them(
        pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "reuse.yaml").write_text(NOT_EVERYWHERE)
    base = ["-p", "no:cacheprovider", "--conformance-results"]
    plain = pytester.runpytest_subprocess(*base, "plain.json")  # no store: every item through pytest
    plain.assert_outcomes(passed=1, skipped=1)
    refresh = pytester.runpytest_subprocess(*base, "refresh.json", "--conformance-refresh")
    refresh.assert_outcomes(passed=1)  # the torch item decided, never run
    refresh.stdout.fnmatch_lines(["conformance: 1 item decided before the run (1 not applicable)*"])
    for name in ("plain.json", "refresh.json"):
        data = json.loads((pytester.path / name).read_text())
        assert data["run"]["items"] == 2 and "partial" not in data["run"], data["run"]
    assert {k: _comparable(r) for k, r in _records(pytester.path / "refresh.json").items()} == \
        {k: _comparable(r) for k, r in _records(pytester.path / "plain.json").items()}
    assert _records(pytester.path / "refresh.json")[("views.reuse.numpy_only", "torch")]["outcome"] == "not_applicable"


def test_with_every_item_decided_the_run_succeeds_and_under_xdist_the_controller_records_them(
        pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing left for pytest to run is a run that passed (not pytest's 'no tests
    collected'), and pytest-xdist's workers hand their decided records to the controller."""
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "reuse.yaml").write_text(CASES)
    args = ["-p", "no:cacheprovider", "--conformance-reuse", "--conformance-results"]
    pytester.runpytest_subprocess(*args, "first.json").assert_outcomes(passed=4)
    serial = pytester.runpytest_subprocess(*args, "serial.json")
    workers = pytester.runpytest_subprocess(*args, "xdist.json", "-n", "2")
    for result, name in ((serial, "serial.json"), (workers, "xdist.json")):
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        data = json.loads((pytester.path / name).read_text())
        assert data["run"]["items"] == 4 and data["run"]["reused"] == 4 and "partial" not in data["run"]
    workers.stdout.fnmatch_lines(["conformance: 4 items decided before the run*"])
    assert {k: _comparable(r) for k, r in _records(pytester.path / "xdist.json").items()} == \
        {k: _comparable(r) for k, r in _records(pytester.path / "first.json").items()}


def test_a_stored_failure_is_not_decided_the_item_runs_and_fails(pytester: pytest.Pytester, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "reuse.yaml").write_text(CASES.replace("y & x: false", "y & x: true"))
    args = ["-p", "no:cacheprovider", "--conformance-reuse", "--conformance-results"]
    pytester.runpytest_subprocess(*args, "first.json").assert_outcomes(passed=1, failed=1)
    again = pytester.runpytest_subprocess(*args, "again.json")
    again.assert_outcomes(failed=1)  # the stored failure runs (from the store) and fails in pytest's report
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    again.stdout.fnmatch_lines(["conformance: 1 item decided before the run*", "*FAILED*views.reuse.clone*"])
    assert all(r.get("reused") for r in _records(pytester.path / "again.json").values())


def test_an_entry_written_after_the_run_started_is_not_taken_when_deciding(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pytest-xdist worker must decide the same items: the store is read as it was when
    the run started, whatever another run writes meanwhile."""
    import time

    from conformance import registry
    from conformance.load.reader import load_text
    from conformance.outcomes import Outcome
    from conformance.run.store import open_store

    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    case = load_text(CASES, "cases/views/reuse.yaml", registry.vocabulary()).cases[0]
    store = open_store(["numpy"])
    assert store is not None
    started = time.time() - 0.05
    store.put(case, "numpy", Outcome(case.id, "numpy", "pass", ""), {"version": "1"})
    assert store.get(case, "numpy", written_before=started) is None
    assert store.get(case, "numpy") is not None
    assert store.get(case, "numpy", written_before=time.time() + 1) is not None
