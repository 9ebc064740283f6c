"""Partial runs keep the committed reports (conformance.plugin.coverage, README "Partial
runs"): a run that is not a full run of the corpus (a path subset, --frameworks, -k, -m,
--deselect, node ids, --lf, -x stopping early) says why in its results file (``run.partial``)
and writes them to --conformance-partial-results when given; `conformance run` writes its
results and reports to reports/partial/ and leaves reports/ as it was. A full run (every
file, item and framework) writes reports/ and nothing else."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from test_plugin import GOOD, WRONG

pytest_plugins = ["pytester"]

PREVIOUS = "the committed report\n"

pytestmark = pytest.mark.usefixtures("own_outcome_store")


@pytest.fixture
def corpus(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "good.yaml").write_text(GOOD)
    (pytester.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    return pytester


def run_pytest(corpus: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict | None]:
    """A pytest run writing full.json, or part.json when it is partial; the document
    written (None: neither)."""
    result = corpus.runpytest_subprocess("--conformance-results", "full.json", "--conformance-partial-results",
                                         "part.json", *args)
    full, part = corpus.path / "full.json", corpus.path / "part.json"
    assert not (full.exists() and part.exists())
    written = full if full.exists() else part if part.exists() else None
    return result, (dict(json.loads(written.read_text()), written=written.name) if written else None)


def test_a_full_run_writes_the_results_file_and_says_nothing_of_a_partial_run(corpus: pytest.Pytester) -> None:
    result, data = run_pytest(corpus)
    result.assert_outcomes(passed=6, failed=3)
    assert data is not None and data["written"] == "full.json"
    run = dict(data["run"])
    assert len(run.pop("corpus")) == 16  # the corpus revision, for conformance merge
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", run.pop("date"))  # the day the run ended (the site shows it)
    assert run == {"items": 9, "exit_status": 1, "corpus_items": 9}  # no "partial"
    assert "not a full run" not in result.stdout.str()


@pytest.mark.parametrize("args, reason", [
    (["--frameworks", "numpy"], "only numpy (--frameworks; not torch, paddle)"),
    (["-k", "reshape"], "6 case items deselected (-k, -m, --deselect, --lf)"),
    (["-m", "numpy"], "6 case items deselected (-k, -m, --deselect, --lf)"),
    (["--deselect", "cases/views/good.yaml::copies.clone.fresh[torch]"],
     "1 case items deselected (-k, -m, --deselect, --lf)"),
    (["cases/views/good.yaml"], ("1 of the corpus's case files not collected (a path subset, --ignore, --lf): "
                                 "cases/views/wrong.yaml")),
    (["--ignore", "cases/views/good.yaml"], ("1 of the corpus's case files not collected (a path subset, --ignore, "
                                             "--lf): cases/views/good.yaml")),
    (["cases/views/good.yaml::copies.clone.fresh"], "3 case items left out at collection (node ids, --lf)"),
    (["--frameworks", "numpy", "-x"], "2 of 3 selected case items did not run (-x, --maxfail)"),
])
def test_a_partial_run_says_why_and_writes_the_partial_results(corpus: pytest.Pytester, args: list[str],
                                                               reason: str) -> None:
    if "-x" in args:  # wrong.yaml first, so that -x stops before the last item
        (corpus.path / "cases" / "views" / "wrong.yaml").rename(corpus.path / "cases" / "views" / "a_wrong.yaml")
    result, data = run_pytest(corpus, *args)
    assert data is not None and data["written"] == "part.json", result.stdout.str()
    assert reason in data["run"]["partial"]
    result.stdout.fnmatch_lines([f"conformance: not a full run of the corpus (*{reason}*): results "
                                 f"written to part.json"])


def test_a_case_file_outside_the_corpus_makes_the_run_partial(corpus: pytest.Pytester) -> None:
    (corpus.path / "more").mkdir()
    (corpus.path / "more" / "extra.yaml").write_text(WRONG.replace("copies.clone.claimed_view", "more.clone.extra"))
    _, data = run_pytest(corpus, "--frameworks", "numpy", "cases", "more/extra.yaml")
    assert data is not None and data["written"] == "part.json"
    assert "1 case files from outside the corpus (cases): more/extra.yaml" in data["run"]["partial"]


def test_last_failed_makes_the_run_partial(corpus: pytest.Pytester) -> None:
    run_pytest(corpus, "--frameworks", "numpy")
    (corpus.path / "part.json").unlink()
    result, data = run_pytest(corpus, "--frameworks", "numpy", "--lf")
    result.assert_outcomes(failed=1)
    assert data is not None and data["written"] == "part.json"
    assert "1 of the corpus's case files not collected (a path subset, --ignore, --lf): cases/views/good.yaml" \
        in data["run"]["partial"]


def test_xdist_workers_report_what_they_collected(corpus: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    _, data = run_pytest(corpus, "-n", "2", "--frameworks", "numpy", "-k", "not reshape")
    assert data is not None and data["written"] == "part.json"
    assert data["run"]["partial"] == ["only numpy (--frameworks; not torch, paddle)",
                                      "1 case items deselected (-k, -m, --deselect, --lf)"]
    (corpus.path / "part.json").unlink()
    _, data = run_pytest(corpus, "-n", "2")
    assert data is not None and data["written"] == "full.json" and "partial" not in data["run"]


def test_without_a_partial_path_a_partial_run_still_writes_the_named_file(corpus: pytest.Pytester) -> None:
    corpus.runpytest("--frameworks", "numpy", "--conformance-results", "out.json")
    data = json.loads((corpus.path / "out.json").read_text())
    assert data["run"]["partial"] == ["only numpy (--frameworks; not torch, paddle)"]


# ---- conformance run


@pytest.fixture
def checkout(corpus: pytest.Pytester) -> pytest.Pytester:
    """The corpus with committed reports that a partial run must leave as they are."""
    reports = corpus.path / "reports"
    reports.mkdir()
    for name in ("behaviour.md", "behaviour.html", "results.json"):
        (reports / name).write_text(PREVIOUS)
    return corpus


def conformance(checkout: pytest.Pytester, *args: str) -> pytest.RunResult:
    return checkout.run(sys.executable, "-m", "conformance", *args)


def unchanged(folder: Path) -> bool:
    return all((folder / name).read_text() == PREVIOUS for name in ("behaviour.md", "behaviour.html", "results.json"))


@pytest.mark.parametrize("args, reason", [
    (["--frameworks", "numpy"], "only numpy (--frameworks; not torch, paddle)"),
    (["-k", "numpy"], "6 case items deselected (-k, -m, --deselect, --lf)"),
    (["-m", "numpy and views"], "8 case items deselected (-k, -m, --deselect, --lf)"),
    (["cases/views/good.yaml", "--frameworks", "numpy"], "1 of the corpus's case files not collected"),
    (["-x", "--frameworks", "numpy"], "2 of 3 selected case items did not run (-x, --maxfail)"),
])
def test_conformance_run_of_a_subset_writes_reports_partial(checkout: pytest.Pytester, args: list[str],
                                                            reason: str) -> None:
    if "-x" in args:
        (checkout.path / "cases" / "views" / "wrong.yaml").rename(checkout.path / "cases" / "views" / "a_wrong.yaml")
    result = conformance(checkout, "run", "--plain", *args)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str() + result.stderr.str()
    partial = checkout.path / "reports" / "partial"
    data = json.loads((partial / "results.json").read_text())
    assert any(r.startswith(reason) for r in data["run"]["partial"]), data["run"]
    assert (partial / "behaviour.md").exists() and (partial / "behaviour.html").exists()
    assert unchanged(checkout.path / "reports")
    result.stdout.fnmatch_lines([
        f"conformance: not a full run of the corpus (*{reason}*)",
        "conformance: wrote reports?partial?results.json, reports?partial?behaviour.md, reports?partial?behaviour.html",
        "conformance: the reports in reports were left as they were: only a full run of the corpus *",
    ])


def test_conformance_run_of_a_subset_writes_where_results_and_reports_say(checkout: pytest.Pytester) -> None:
    result = conformance(checkout, "run", "--plain", "--frameworks", "numpy", "--results", "out/r.json",
                         "--reports", "out")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert json.loads((checkout.path / "out" / "r.json").read_text())["run"]["partial"]
    assert (checkout.path / "out" / "behaviour.md").exists()
    assert unchanged(checkout.path / "reports") and not (checkout.path / "reports" / "partial").exists()


def test_conformance_run_of_the_corpus_writes_reports(checkout: pytest.Pytester) -> None:
    result = conformance(checkout, "run", "--plain")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # wrong.yaml
    reports = checkout.path / "reports"
    assert "partial" not in json.loads((reports / "results.json").read_text())["run"]
    assert "`copies.clone.claimed_view`" in (reports / "behaviour.md").read_text()
    assert not (reports / "partial").exists()  # the lock of the partial folder is gone, and the folder
    assert "not a full run" not in result.stdout.str()


def test_conformance_report_of_partial_results_writes_reports_partial(checkout: pytest.Pytester) -> None:
    conformance(checkout, "run", "--plain", "--frameworks", "numpy")
    partial = checkout.path / "reports" / "partial"
    (partial / "behaviour.md").unlink()
    result = conformance(checkout, "report", "reports/partial/results.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines([("conformance report: reports/partial/results.json is from a partial run (only numpy*"
                                  "its reports go to reports/partial (--out names another folder)")])
    assert (partial / "behaviour.md").exists() and unchanged(checkout.path / "reports")
    # --out asks for it
    assert conformance(checkout, "report", "reports/partial/results.json", "--out", "reports").ret == 0
    assert "`copies.clone.claimed_view`" in (checkout.path / "reports" / "behaviour.md").read_text()
