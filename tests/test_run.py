"""`conformance run`: one command that runs the cases and writes the results JSON and both
reports; its progress display; and what it does when there is nothing to run."""

from __future__ import annotations

import io
import json
import sys

import pytest

from conformance.plugin.progress import ProgressDisplay
from test_plugin import GOOD, WRONG


@pytest.fixture
def checkout(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "good.yaml").write_text(GOOD)
    (pytester.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    return pytester


def test_run_writes_results_and_both_reports(checkout: pytest.Pytester) -> None:
    result = checkout.run(sys.executable, "-m", "conformance", "run", "--frameworks", "numpy")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # WRONG fails, and says so
    result.stdout.fnmatch_lines(["*numpy    2 pass, 1 fail*",
                                 "conformance: wrote reports?results.json, reports?behaviour.md, reports?behaviour.html"])
    data = json.loads((checkout.path / "reports" / "results.json").read_text())
    assert data["run"]["items"] == 3 == len(data["results"])
    md = (checkout.path / "reports" / "behaviour.md").read_text()
    assert "`copies.clone.claimed_view`" in md and "[cases/views/wrong.yaml:2](../cases/views/wrong.yaml#L2)" in md
    assert (checkout.path / "reports" / "behaviour.html").read_text().startswith("<!DOCTYPE html>")


def test_run_twice_gives_byte_identical_reports(checkout: pytest.Pytester) -> None:
    reports = checkout.path / "reports"
    checkout.run(sys.executable, "-m", "conformance", "run", "--frameworks", "numpy")
    first = {p.name: p.read_bytes() for p in reports.glob("behaviour.*")}
    checkout.run(sys.executable, "-m", "conformance", "run", "--frameworks", "numpy")
    assert {p.name: p.read_bytes() for p in reports.glob("behaviour.*")} == first


def test_run_with_no_cases_fails_and_writes_no_report(checkout: pytest.Pytester) -> None:
    (checkout.path / "empty").mkdir()
    result = checkout.run(sys.executable, "-m", "conformance", "run", "empty")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stderr.fnmatch_lines(["conformance: no case collected from empty: *"])
    assert not (checkout.path / "reports" / "behaviour.md").exists()


def test_run_with_a_missing_path_keeps_previous_results(checkout: pytest.Pytester) -> None:
    (checkout.path / "reports").mkdir()
    (checkout.path / "reports" / "results.json").write_text("previous")
    result = checkout.run(sys.executable, "-m", "conformance", "run", "no-such-folder")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the run did not complete (pytest exit status 4)*"])
    assert (checkout.path / "reports" / "results.json").read_text() == "previous"


def test_progress_display_counts_items_and_lists_failures(checkout: pytest.Pytester) -> None:
    stream = io.StringIO()
    checkout.makeini("[pytest]\nconformance_paths = cases\n")
    checkout.runpytest("--frameworks", "numpy", "-p", "no:terminal", "--conformance-results", "r.json",
                       plugins=[ProgressDisplay(stream)])
    text = stream.getvalue()
    assert "\r[3/3] 1 fail 2 pass · copies.clone.claimed_view[numpy]" in text
    assert "FAILED cases/views/wrong.yaml::copies.clone.claimed_view[numpy]\n" \
           "    values of x: expected [9.0, 2.0], observed [1.0, 2.0]\n" in text
