"""`conformance run`: one command that runs the cases and writes the results JSON and both
reports; its progress display; and what it does when there is nothing to run."""

from __future__ import annotations

import io
import json
import platform
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_plugin import GOOD, WRONG

import conformance
from conformance import registry
from conformance.plugin.progress import ProgressDisplay, duration, pytest_command, total_time

pytestmark = pytest.mark.usefixtures("own_outcome_store")


@pytest.fixture
def checkout(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "good.yaml").write_text(GOOD)
    (pytester.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    # the counts below are of three frameworks' items, whatever the registry holds
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    return pytester


def test_run_writes_results_and_both_reports(checkout: pytest.Pytester) -> None:
    # one framework: a partial run, written to reports/partial/ (tests/test_partial.py)
    result = checkout.run(sys.executable, "-m", "conformance", "run", "--frameworks", "numpy")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # WRONG fails, and says so
    result.stdout.fnmatch_lines(["*numpy    2 pass, 1 fail*",
                                 ("conformance: wrote reports?partial?results.json, reports?partial?behaviour.md, "
                                  "reports?partial?behaviour.html")])
    reports = checkout.path / "reports" / "partial"
    data = json.loads((reports / "results.json").read_text())
    assert data["run"]["items"] == 3 == len(data["results"])
    md = (reports / "behaviour.md").read_text()
    assert "`copies.clone.claimed_view`" in md and "[cases/views/wrong.yaml:2](../../cases/views/wrong.yaml#L2)" in md
    assert (reports / "behaviour.html").read_text().startswith("<!DOCTYPE html>")


def test_run_twice_gives_byte_identical_reports(checkout: pytest.Pytester) -> None:
    reports = checkout.path / "reports" / "partial"
    checkout.run(sys.executable, "-m", "conformance", "run", "--frameworks", "numpy")
    first = {p.name: p.read_bytes() for p in reports.glob("behaviour.*")}
    checkout.run(sys.executable, "-m", "conformance", "run", "--frameworks", "numpy")
    assert {p.name: p.read_bytes() for p in reports.glob("behaviour.*")} == first


def test_run_reuses_what_did_not_change_and_fresh_computes_every_item_and_stores_it(
        checkout: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    results = checkout.path / "reports" / "partial" / "results.json"

    def reused(*args: str) -> int:
        checkout.run(sys.executable, "-m", "conformance", "run", "--frameworks", "numpy", *args)
        data = json.loads(results.read_text())
        assert data["run"]["items"] == 3
        return int(data["run"].get("reused", 0))

    assert reused("--fresh") == 0
    assert reused() == 3  # what --fresh computed was stored
    assert reused("--fresh") == 0


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


class Clock:
    """A clock that moves on by ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def progress_run(checkout: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, colours: str,
                 *args: str) -> str:
    monkeypatch.setenv("PY_COLORS", colours)
    stream = io.StringIO()
    checkout.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    checkout.runpytest("--frameworks", "numpy", "-p", "no:terminal", "--conformance-results", "r.json", *args,
                       plugins=[ProgressDisplay(stream, clock=Clock(1.5))])
    return stream.getvalue()


def test_progress_display_counts_items_and_lists_failures(checkout: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    text = progress_run(checkout, monkeypatch, "0")
    # items done / total, outcomes, elapsed time and the time left, the item
    assert re.search(r"\r\[1/3\] 1 pass · 0:0\d, ETA 0:\d\d · views\.reshape\.contiguous\[numpy\] *\r", text), text
    assert re.search(r"\r\[3/3\] 1 fail 2 pass · 0:\d\d · copies\.clone\.claimed_view\[numpy\]", text), text
    assert "FAILED cases/views/wrong.yaml::copies.clone.claimed_view[numpy]\n" \
           "    values of x: expected [9.0, 2.0], observed [1.0, 2.0]\n" \
           "    rerun: " in text
    assert re.search(r"\n3 items in \d+\.\d\ds: 1 fail, 2 pass\n$", text), text  # the total time
    assert "\x1b[" not in text  # no colours: PY_COLORS=0, as for pytest


def test_progress_display_colours_the_outcomes(checkout: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    text = progress_run(checkout, monkeypatch, "1")
    assert "\x1b[31m1 fail\x1b[0m \x1b[32m2 pass\x1b[0m" in text
    assert "\x1b[31m\x1b[1mFAILED \x1b[0mcases/views/wrong.yaml::copies.clone.claimed_view[numpy]" in text
    assert re.search(r"\x1b\[31m\x1b\[1m3 items in [0-9.]+s: 1 fail, 2 pass\x1b\[0m", text), text


def test_progress_display_says_how_to_rerun_each_failure(checkout: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (checkout.path / "sub").mkdir()
    monkeypatch.chdir(checkout.path / "sub")  # node ids are relative to the rootdir, not to here
    text = progress_run(checkout, monkeypatch, "0", "--rootdir", str(checkout.path), str(checkout.path / "cases"))
    command = next(line.split("rerun: ", 1)[1] for line in text.splitlines() if "rerun: " in line)
    assert command.endswith(" '../cases/views/wrong.yaml::copies.clone.claimed_view[numpy]'"), command
    assert "<nodeid>" not in text
    # the command, run as printed from this folder, reruns that item and nothing else
    rerun = subprocess.run(shlex.split(command) + ["-p", "no:cacheprovider", "-q", "-o", "conformance_paths=../cases"],
                           cwd=checkout.path / "sub", capture_output=True, text=True, timeout=120, check=False)
    assert rerun.returncode == pytest.ExitCode.TESTS_FAILED, rerun.stdout + rerun.stderr
    assert re.search(r"^1 failed\b", rerun.stdout.splitlines()[-1]) and "passed" not in rerun.stdout, rerun.stdout


def test_the_rerun_command_is_this_environments_pytest(tmp_path: Path) -> None:
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "pytest").write_text("")
    assert pytest_command(tmp_path, str(venv / "python")) == ["venv/bin/pytest"]
    assert pytest_command(tmp_path / "elsewhere", str(venv / "python")) == [str(venv / "pytest")]
    (venv / "pytest").unlink()  # no script: python -m pytest
    assert pytest_command(tmp_path, str(venv / "python")) == ["venv/bin/python", "-m", "pytest"]


def test_progress_display_times() -> None:
    assert [duration(s) for s in (0, 7.4, 62, 3723)] == ["0:00", "0:07", "1:02", "1:02:03"]
    assert [total_time(s) for s in (0.414, 75.339)] == ["0.41s", "75.34s (1:15)"]


# ---- pytest's options pass through `conformance run`


def run_cli(checkout: pytest.Pytester, *args: str) -> pytest.RunResult:
    return checkout.run(sys.executable, "-m", "conformance", "run", "--plain", *args)


@pytest.mark.parametrize("args, outcomes", [
    (["-k", "reshape"], {"passed": 1, "deselected": 8}),
    (["-m", "copies"], {"passed": 1, "failed": 1, "deselected": 7}),
    (["--deselect", "cases/views/wrong.yaml::copies.clone.claimed_view[numpy]"], {"passed": 2, "deselected": 7}),
    (["-k", "clone", "cases/views/wrong.yaml"], {"failed": 1, "deselected": 2}),
    (["-x", "cases/views/wrong.yaml", "cases/views/good.yaml"], {"failed": 1, "deselected": 6}),
])
def test_pytest_options_with_separate_values_pass_through(checkout: pytest.Pytester, args: list[str],
                                                          outcomes: dict[str, int]) -> None:
    result = run_cli(checkout, "--frameworks", "numpy", *args)
    assert "expected one argument" not in result.stderr.str()
    result.assert_outcomes(**outcomes)


def test_dash_p_keeps_its_value(checkout: pytest.Pytester) -> None:
    result = run_cli(checkout, "-p", "no:cacheprovider", "--frameworks", "numpy")
    result.assert_outcomes(passed=2, failed=1)
    assert not (checkout.path / ".pytest_cache").exists()  # the plugin was switched off
    assert "no:cacheprovider" not in result.stdout.str() + result.stderr.str()  # not taken as a path


def test_dash_o_keeps_its_value(checkout: pytest.Pytester) -> None:
    result = run_cli(checkout, "-o", "conformance_case_timeout=soon", "--frameworks", "numpy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini conformance_case_timeout: 'soon' is not a number of seconds*"])


def test_version_names_the_package_and_each_framework_found() -> None:
    code = ("import sys\nfrom conformance.tools.cli import main\ntry:\n    main(['--version'])\n"
            "except SystemExit as exc:\n    print('exit', exc.code, sorted(m for m in ('torch', 'paddle') "
            "if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    lines = proc.stdout.splitlines()
    assert lines[0] == f"conformance {conformance.__version__} (Python {platform.python_version()}, " \
                       f"pytest {pytest.__version__})"
    expected = {name: registry.get_adapter(name).version() or "not installed" for name in registry.framework_names()}
    assert {line.split()[0]: line.split()[1] for line in lines[1:-1]} == expected
    assert lines[-1] == "exit 0 []"  # no framework imported to say so
