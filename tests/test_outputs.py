"""Where a run writes (conformance/report/outputs.py, the plugin's results file, `conformance run`
and `conformance report`): two runs at once are refused, not interleaved; a location that
cannot be written fails before anything runs; a write that fails at the end says so in one
line and leaves the previous files; output files follow the umask; `conformance run`
summarises its own results.

The slow first run of the concurrency tests waits on a gate: a test-only framework (written
into a temporary site folder and registered through the real entry point group, in
subprocesses only) whose operation blocks until the test creates a file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pwd
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from entry_points import TESTS, register, subprocess_env
from results_factory import sample
from test_plugin import GOOD, WRONG

from conformance.report import outputs, results
from conformance.tools.cli import main

GATE_ADAPTER = '''
"""A test-only framework: NumPy's adapter and an operation that waits for a file."""
import os
import time

from conformance.adapters.numpy_adapter import NumpyAdapter


def _wait_open(x):
    with open(os.environ["GATE_STARTED"], "w") as f:
        f.write(str(os.getpid()))
    deadline = time.monotonic() + 120
    while not os.path.exists(os.environ["GATE_OPEN"]):
        if time.monotonic() > deadline:
            raise RuntimeError("the test never opened the gate")
        time.sleep(0.02)
    return x


class GateAdapter(NumpyAdapter):
    overrides_from = None  # a probe: no framework's case overrides apply to it
    name = "gate"

    def operations(self):
        return {**super().operations(), "fn:wait_open": _wait_open}
'''

GATE_CASE = """\
cases:
  - id: gate.wait.open
    title: "waits until the test opens the gate"
    given: {x: [1.0, 2.0]}
    steps:
      - y = wait_open(x)
    expect: {values: {y: [1.0, 2.0]}}
"""


class Checkout:
    """A folder with cases (two good, one wrong, one gate), a pytest.ini, and the
    environment that registers the ``gate`` framework."""

    def __init__(self, root: Path) -> None:
        self.root = root
        site = root / "site"
        register(site, "gate-probe", {"gate": "gate_probe:GateAdapter"})
        (site / "gate_probe.py").write_text(GATE_ADAPTER)
        (root / "cases" / "views").mkdir(parents=True)
        (root / "cases" / "views" / "good.yaml").write_text(GOOD)
        (root / "cases" / "views" / "wrong.yaml").write_text(WRONG)
        (root / "cases" / "gate").mkdir()
        (root / "cases" / "gate" / "wait.yaml").write_text(GATE_CASE)
        (root / "pytest.ini").write_text("[pytest]\nconformance_paths = cases\n")
        self.started, self.gate = root / "gate.started", root / "gate.open"
        self.env = dict(subprocess_env(site, TESTS), GATE_STARTED=str(self.started), GATE_OPEN=str(self.gate),
                        CONFORMANCE_CACHE_DIR="off")

    def command(self, how: str, *extra: str) -> list[str]:
        if how.startswith("conformance run"):
            return [sys.executable, "-m", "conformance", "run", "--plain", *how.split()[2:], *extra]
        return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "cases", "--conformance-results",
                "reports/results.json", *how.split()[1:], *extra]

    def run(self, how: str, *extra: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(how, *extra), cwd=self.root, env=self.env, capture_output=True, text=True,
                              timeout=300, **kwargs)

    def start(self, how: str, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.command(how, *extra), cwd=self.root, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    return Checkout(tmp_path)


# ---- two runs at once


@pytest.mark.parametrize("first, second", [
    ("conformance run", "conformance run"),
    ("conformance run", "pytest"),
    ("pytest", "conformance run"),
    ("pytest -n 2", "conformance run"),  # the controller holds the lock, the workers do not take it
])
def test_a_second_run_is_refused_at_once_and_the_first_keeps_its_results(checkout: Checkout, first: str,
                                                                          second: str) -> None:
    if "-n" in first:
        pytest.importorskip("xdist")
    proc = checkout.start(first, "--frameworks", "gate,numpy")
    try:
        deadline = time.monotonic() + 120
        while not checkout.started.exists():  # the first run is inside its slow item
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.05)
        started = time.monotonic()
        refused = checkout.run(second, "--frameworks", "numpy")
        took = time.monotonic() - started
        assert proc.poll() is None, "the first run ended before the second was refused"
        checkout.gate.touch()
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    lock = Path("reports") / "results.json.lock"
    expected_code = 2 if second.startswith("conformance") else pytest.ExitCode.USAGE_ERROR
    assert refused.returncode == expected_code, refused.stdout + refused.stderr
    holder = "conformance run" if first.startswith("conformance") else "pytest --conformance-results"
    assert (f"conformance: another run is writing the results file reports/results.json: its lock file {lock} "
            f"is held by pid {proc.pid} ({holder}); wait for it to finish, or write elsewhere") in refused.stderr
    assert "passed" not in refused.stdout and "collected" not in refused.stdout  # nothing ran
    assert took < 30
    # the first run completes with its own results, and says so
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, output  # wrong.yaml fails
    # two of the frameworks: `conformance run` writes a partial run to reports/partial/
    written = "reports/partial/results.json" if first.startswith("conformance") else "reports/results.json"
    data = json.loads((checkout.root / written).read_text())
    assert {(r["case"], r["framework"], r["outcome"]) for r in data["results"] if r["case"] == "gate.wait.open"} == {
        ("gate.wait.open", "gate", "pass"), ("gate.wait.open", "numpy", "not_applicable")}
    if first.startswith("conformance"):
        assert "  gate     3 pass, 1 fail" in output and "  numpy    2 pass, 1 fail, 1 not_applicable" in output, output
    assert not (checkout.root / lock).exists()  # released and removed at the end


def test_conformance_run_summarises_the_results_it_wrote_not_the_file(checkout: Checkout) -> None:
    # a writer that does not take the lock replaces the file right after this run wrote it
    other = json.dumps(sample())
    (checkout.root / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.hookimpl(trylast=True)\ndef pytest_sessionfinish(session):\n"
        f"    open('reports/partial/results.json', 'w').write({other!r})\n")
    proc = checkout.run("conformance run", "--frameworks", "numpy")  # partial: reports/partial/
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout + proc.stderr
    assert "  numpy    2 pass, 1 fail, 1 not_applicable" in proc.stdout
    assert "  torch    2 pass, 1 fail" not in proc.stdout  # the other document's figures
    md = (checkout.root / "reports" / "partial" / "behaviour.md").read_text()
    assert "`copies.clone.claimed_view`" in md and "views.expand.paddle_copies" not in md


def test_a_lock_is_counted_within_a_process_and_removed_when_released(tmp_path: Path) -> None:
    lock = tmp_path / "out" / "results.json.lock"
    outputs.acquire(lock, "the results", "test")
    outputs.acquire(lock, "the results", "test")  # the plugin inside `conformance run`: no waiting on itself
    assert lock.read_text() == f"{os.getpid()}\ntest\n"
    outputs.release(lock)
    assert lock.exists()
    outputs.release(lock)
    assert not lock.exists()


def hold_in_another_process(lock: Path) -> subprocess.Popen[str]:
    code = ("import sys; from conformance.report import outputs; outputs.acquire(sys.argv[1], 'the "
            "results', 'holder'); "
            "print('held', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_lock_held_by_another_process_is_refused_with_its_pid(tmp_path: Path) -> None:
    lock = tmp_path / "results.json.lock"
    holder = hold_in_another_process(lock)
    try:
        with pytest.raises(outputs.LockHeld) as refused:
            outputs.acquire(lock, "the results file r.json", "test")
        assert refused.value.pid == holder.pid and refused.value.lock == lock
        assert str(refused.value) == (f"another run is writing the results file r.json: its lock file {lock} is held "
                                      f"by pid {holder.pid} (holder); wait for it to finish, or write elsewhere")
    finally:
        holder.communicate("")
    outputs.acquire(lock, "the results", "test")  # free once its holder is gone
    outputs.release(lock)


def test_a_lock_file_left_by_a_killed_run_does_not_block(tmp_path: Path) -> None:
    lock = tmp_path / "results.json.lock"
    holder = hold_in_another_process(lock)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert lock.read_text() == f"{holder.pid}\nholder\n"  # left behind, with the dead pid
    outputs.acquire(lock, "the results", "test")
    assert lock.read_text() == f"{os.getpid()}\ntest\n"
    outputs.release(lock)
    assert not lock.exists()


# ---- locations that cannot be written: refused before anything runs


def test_a_results_folder_that_is_a_file_is_refused_before_the_run(checkout: Checkout) -> None:
    (checkout.root / "reports").write_text("not a folder")
    proc = checkout.run("conformance run", "--frameworks", "numpy")
    assert proc.returncode == 2
    assert proc.stderr == ("conformance: cannot write the results file reports/results.json: reports is not a "
                           "folder\n")
    assert proc.stdout == ""  # nothing ran
    proc = checkout.run("pytest", "--frameworks", "numpy")
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert ("ERROR: conformance: cannot write the results file reports/results.json: reports is not a folder"
            in proc.stderr)
    assert "collected" not in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


def test_a_results_path_that_is_a_folder_is_refused(checkout: Checkout) -> None:
    (checkout.root / "reports" / "results.json").mkdir(parents=True)
    proc = checkout.run("conformance run", "--frameworks", "numpy")
    assert (proc.returncode, proc.stderr) == (
        2, "conformance: cannot write the results file reports/results.json: reports/results.json is a folder\n")


def test_a_reports_folder_under_a_file_is_refused(checkout: Checkout) -> None:
    (checkout.root / "out").write_text("a file")
    proc = checkout.run("conformance run", "--frameworks", "numpy", "--reports", "out/reports")
    assert (proc.returncode, proc.stderr) == (2, "conformance: cannot write the reports in out/reports: out is not "
                                                 "a folder\n")
    assert not (checkout.root / "reports" / "results.json").exists()


@contextlib.contextmanager
def read_only(folder: Path, env: dict[str, str]) -> Iterator[tuple[list[str], str]]:
    """Make ``folder`` a folder the run cannot write into; yield the command prefix to run
    as, and the error the write gets. Not root: chmod 0o555. Root (whom chmod does not
    stop): the folder made immutable (chattr +i, EPERM), else the run as 'nobody' (EACCES)
    when 'nobody' can import the suite from this checkout (a private checkout folder stops
    it); else the test skips, saying why."""
    if os.geteuid() != 0:
        os.chmod(folder, 0o555)
        try:
            yield [], "Permission denied (EACCES)"
        finally:
            os.chmod(folder, 0o755)
        return
    chattr = shutil.which("chattr")
    if chattr and subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode == 0:
        try:
            yield [], "Operation not permitted (EPERM)"
        finally:
            subprocess.run([chattr, "-i", str(folder)], check=True)
        return
    setpriv = shutil.which("setpriv")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        nobody = None
    if setpriv is None or nobody is None:
        pytest.skip("running as root, with neither chattr nor setpriv and a 'nobody' user: no way to make a "
                    "folder that stops root's writes")
    prefix = [setpriv, f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    probe = subprocess.run(prefix + [sys.executable, "-c", "import conformance"], env=env, capture_output=True)
    if probe.returncode != 0:
        pytest.skip("running as root, chattr +i refused, and 'nobody' cannot import the suite from this checkout "
                    "(its folder is private)")
    os.chmod(folder, 0o555)
    try:
        yield prefix, "Permission denied (EACCES)"
    finally:
        os.chmod(folder, 0o755)


@pytest.fixture
def world_readable_checkout() -> Iterator[Checkout]:
    root = Path(tempfile.mkdtemp(prefix="conformance-readonly-"))  # not under pytest's 0700 folder
    try:
        os.chmod(root, 0o755)
        yield Checkout(root)
    finally:
        for path in [root, *root.rglob("*")]:
            if path.is_dir():
                os.chmod(path, 0o755)
        shutil.rmtree(root)


def test_a_read_only_reports_folder_is_refused_before_the_run(world_readable_checkout: Checkout) -> None:
    checkout = world_readable_checkout
    reports = checkout.root / "reports"
    reports.mkdir()
    (reports / "results.json").write_text("previous")
    for path in checkout.root.rglob("*"):
        if path.is_dir():
            os.chmod(path, 0o755)
    env = dict(checkout.env, HOME=str(checkout.root))
    with read_only(reports, env) as (prefix, error):
        for how, code, shown in [("conformance run", 2, "conformance: "), ("pytest", 4, "ERROR: conformance: ")]:
            proc = subprocess.run(prefix + checkout.command(how, "--frameworks", "numpy"), cwd=checkout.root,
                                  env=env, capture_output=True, text=True, timeout=300)
            assert proc.returncode == code, proc.stdout + proc.stderr
            assert (f"{shown}cannot write the results file reports/results.json: reports is not writable: "
                    f"{error}") in proc.stderr, proc.stderr
            assert "collected" not in proc.stdout and "Traceback" not in proc.stderr
    assert (reports / "results.json").read_text() == "previous"


def test_too_little_free_space_is_refused_before_the_run(checkout: Checkout, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    real = os.statvfs

    def nearly_full(path: Any) -> Any:
        stats = real(path)
        return os.statvfs_result((stats.f_bsize, 4096, stats.f_blocks, 100, 256, *tuple(stats)[5:]))

    monkeypatch.setattr(os, "statvfs", nearly_full)  # 256 blocks of 4 KiB free: 1 MB
    monkeypatch.chdir(checkout.root)
    monkeypatch.setattr(pytest, "main", lambda *a, **k: pytest.fail("the run started"))
    assert main(["run", "--frameworks", "numpy"]) == 2
    assert capsys.readouterr().err == ("conformance: cannot write the results file reports/results.json: less than "
                                       "500 MB free on the file system of . (1.0 MB)\n")
    with pytest.raises(outputs.OutputError, match="less than 500 MB free"):
        outputs.check_folder(checkout.root / "reports", "the reports")


def test_the_free_space_needed_covers_a_full_run() -> None:
    # the committed reports times ten stay under the free space a run needs: a full corpus run
    # writes results.json 30.7 MB, behaviour.html 7.1 MB, behaviour.md 3.5 MB (outputs.MIN_FREE_BYTES)
    committed = sum(p.stat().st_size for p in (Path(__file__).parent.parent / "reports").glob("behaviour.*"))
    assert committed * 10 < outputs.MIN_FREE_BYTES


# ---- a write that fails at the end


def fill_at(limit: int) -> Any:
    def preexec() -> None:  # files above `limit` bytes cannot be written (EFBIG), as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


@pytest.mark.parametrize("how", ["conformance run", "pytest"])
def test_a_write_that_fails_at_the_end_is_one_line_and_keeps_the_previous_file(checkout: Checkout, how: str) -> None:
    # one framework: `conformance run` writes a partial run to reports/partial/
    folder = "reports/partial" if how.startswith("conformance") else "reports"
    reports = checkout.root / folder
    reports.mkdir(parents=True)
    previous = {name: f"previous {name}\n" for name in ("results.json", "behaviour.md", "behaviour.html")}
    for name, text in previous.items():
        (reports / name).write_text(text)
    # every item runs (its child's log and the lock file are small); the results file
    # (about 20 kB for these cases) is larger than the limit
    proc = checkout.run(how, "--frameworks", "numpy", preexec_fn=fill_at(8192))
    output = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.INTERNAL_ERROR, output
    line = (f"conformance: could not write the results file {folder}/results.json: File too large (EFBIG); the "
            "previous file is left as it was")
    assert output.count(line) == 1, output
    assert "Traceback" not in output and "Errno" not in output
    if how == "pytest":
        assert "1 failed, 2 passed, 1 skipped" in output, output  # the run itself was reported
    # no temporary file, no lock left; the records that finished kept in the run's journal
    assert {p.name: p.read_text() for p in reports.iterdir() if p.name != "results.json.journal"} == previous
    assert (reports / "results.json.journal").is_file()


def test_a_full_disk_at_the_end_leaves_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "results.json"
    target.write_text("previous\n")
    full = os.open("/dev/full", os.O_WRONLY)

    def on_dev_full(path: Path) -> tuple[int, str]:
        return full, str(tmp_path / "never-created.tmp")  # writes to /dev/full fail with ENOSPC

    monkeypatch.setattr(results, "_temporary_file", on_dev_full)
    monkeypatch.setattr(os, "fchmod", lambda fd, mode: pytest.fail("chmod before the write succeeded"))
    with pytest.raises(OSError) as failed:
        results.write_atomically(target, {"format": 2, "results": ["x" * 100_000]})
    assert failed.value.errno == errno.ENOSPC
    assert outputs.error_text(failed.value) == "No space left on device (ENOSPC)"
    assert target.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_conformance_report_on_a_full_disk_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "r.json"
    doc.write_text(json.dumps(sample()))
    out = tmp_path / "reports"
    out.mkdir()
    (out / "behaviour.md").write_text("previous md\n")

    def on_dev_full(path: Path) -> tuple[int, str]:
        return os.open("/dev/full", os.O_WRONLY), str(tmp_path / "never-created.tmp")

    monkeypatch.setattr(results, "_temporary_file", on_dev_full)
    assert main(["report", str(doc), "--out", str(out)]) == 3
    assert capsys.readouterr().err == (f"conformance report: could not write the reports in {out}: No space left "
                                       "on device (ENOSPC); the previous reports are left as they were\n")
    assert sorted(p.name for p in out.iterdir()) == ["behaviour.md"]
    assert (out / "behaviour.md").read_text() == "previous md\n"


def test_a_pytest_run_that_cannot_write_its_results_exits_non_zero(pytester: pytest.Pytester,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "good.yaml").write_text(GOOD)
    (pytester.path / "r.json").write_text("previous")
    monkeypatch.setattr(results, "_temporary_file",
                        lambda path: (os.open("/dev/full", os.O_WRONLY), str(pytester.path / "never.tmp")))
    result = pytester.runpytest("--frameworks", "numpy", "--conformance-results", "r.json")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["conformance: could not write the results file r.json: No space left "
                                 "on device (ENOSPC); the previous file is left as it was", "*2 passed*"])
    assert (pytester.path / "r.json").read_text() == "previous"


# ---- modes follow the umask


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_output_files_follow_the_umask(checkout: Checkout, umask: int, mode: int) -> None:
    proc = checkout.run("conformance run", "--frameworks", "numpy", preexec_fn=lambda: os.umask(umask))
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout + proc.stderr
    reports = checkout.root / "reports" / "partial"  # one framework: a partial run
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in reports.iterdir()}
    assert modes == {"results.json": mode, "behaviour.md": mode, "behaviour.html": mode}
    assert stat.S_IMODE(reports.stat().st_mode) == stat.S_IMODE(reports.parent.stat().st_mode) == 0o777 & ~umask
    # and when they replace files of another mode
    proc = checkout.run("conformance run", "--frameworks", "numpy", preexec_fn=lambda: os.umask(umask))
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in reports.iterdir()} == modes


def test_the_umask_is_read_without_changing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(os, "umask", lambda mask: calls.append(mask) or 0o022)
    if Path("/proc/self/status").exists():
        assert outputs.current_umask() == outputs._umask_from_proc()
        assert calls == []
    assert outputs.file_mode() == 0o666 & ~outputs.current_umask()
