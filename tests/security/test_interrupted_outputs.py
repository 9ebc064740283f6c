"""A run that is stopped, or whose disk fills, keeps what it did and never leaves a folder of
mixed outputs (issue 32: conformance/report/outputs.py, conformance/report/journal.py, the
plugin's results writer, ``conformance run``).

- SIGTERM (and SIGINT) at each named point of the end of ``conformance run``, and during an
  item: one line, status 130, no traceback, and results.json, behaviour.md and behaviour.html
  all the previous files (same inodes) or all new ones, no temporary file, no lock; before
  the files move, the journal keeps the records and turns back into the results.
- A full disk, simulated in a subprocess (a file-size limit, ``RLIMIT_FSIZE``, and an
  ``ENOSPC`` raised where a file is written): the previous files stay, the journal keeps the
  records of the items that finished, and the line says where and how to turn it into
  results; a run that did not finish never replaces a full run's results.

The points are reached in a subprocess that replaces a function of the suite with one that
writes a file and waits (:data:`PAUSER`), so that the test can send the signal there.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_outputs import Checkout, fill_at

from conformance.report import journal as journal_module
from conformance.report import outputs
from conformance.report.results import unrun_record

NAMES = ("results.json", "behaviour.md", "behaviour.html")
JOURNAL = "results.json.journal"

# Runs `conformance ARGS` (or `pytest ARGS` when the first is "pytest") with the point named
# in PAUSE_POINT made to wait: it writes PAUSE_REACHED, then waits for PAUSE_GO.
PAUSER = r'''
import errno, os, sys, time
from pathlib import Path

point = os.environ.get("PAUSE_POINT", "")
reached, go = Path(os.environ.get("PAUSE_REACHED", "reached")), Path(os.environ.get("PAUSE_GO", "go"))


def pause():
    reached.write_text(point)
    while not go.exists():
        time.sleep(0.01)


from conformance.report import outputs
from conformance.tools import cli
from conformance.tools.commands import run as run_command

real_stage, real_commit, real_replace, real_summary = outputs.stage, outputs.commit, os.replace, run_command._summary


def names(files):
    return {Path(p).name for p in files}


def stage(files, **options):
    if point == "staging the results" and "results.json" in names(files):
        pause()
    if point == "staging the reports" and "behaviour.md" in names(files):
        pause()
    if point == "no room for the reports" and "behaviour.md" in names(files):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    if point == "no room for the results" and "results.json" in names(files):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real_stage(files, **options)


def commit(*staged, **options):
    if point == "before the moves":
        pause()
    return real_commit(*staged, **options)


def replace(source, target):
    real_replace(source, target)
    if point == "between two moves" and Path(target).name == "results.json":
        pause()


def summary(data):
    if point == "after the moves":
        pause()
    return real_summary(data)


outputs.stage, outputs.commit, os.replace, run_command._summary = stage, commit, replace, summary
if sys.argv[1:2] == ["pytest"]:
    import pytest
    sys.exit(int(pytest.main(sys.argv[2:])))
sys.exit(cli.main(sys.argv[1:]))
'''

BEFORE_THE_MOVES = ["staging the results", "staging the reports", "before the moves"]
AFTER_THE_MOVES = ["between two moves", "after the moves"]


def paused_command(checkout: Checkout, how: str, *extra: str) -> list[str]:
    """``checkout.command`` run through :data:`PAUSER`."""
    command = checkout.command(how, *extra)
    if how.startswith("conformance"):
        return [sys.executable, "-c", PAUSER, *command[3:]]  # after: python -m conformance
    return [sys.executable, "-c", PAUSER, "pytest", *command[3:]]  # after: python -m pytest


def run_paused(checkout: Checkout, point: str, how: str, *extra: str, sig: int | None = signal.SIGTERM,
               **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run with ``point`` made to wait; once it is reached, send ``sig`` and let it go on."""
    reached, go = checkout.root / "pause.reached", checkout.root / "pause.go"
    reached.unlink(missing_ok=True)
    go.unlink(missing_ok=True)
    env = dict(checkout.env, PAUSE_POINT=point, PAUSE_REACHED=str(reached), PAUSE_GO=str(go))
    proc = subprocess.Popen(paused_command(checkout, how, *extra), cwd=checkout.root, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    try:
        deadline = time.monotonic() + 120
        while sig is not None and not reached.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                out, err = proc.communicate()
                pytest.fail(f"{point!r} was never reached:\n{out}\n{err}")
            time.sleep(0.02)
        if sig is not None:
            proc.send_signal(sig)
            time.sleep(0.3)  # where signals are held back, they wait for what follows
            go.touch()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    return {name: (os.lstat(folder / name).st_ino, (folder / name).read_bytes()) for name in NAMES}


def leftovers(*folders: Path) -> list[str]:
    """Temporary files, files put aside while moving, and lock files."""
    return sorted(str(p) for folder in folders if folder.is_dir() for p in folder.iterdir()
                  if p.name.startswith(".") or p.name.endswith((".tmp", ".old", ".lock")))


def assert_all_old_or_all_new(folder: Path, before: dict[str, tuple[int, bytes]], new: bool) -> None:
    after = {name: os.lstat(folder / name).st_ino for name in NAMES}
    if new:
        assert all(after[name] != before[name][0] for name in NAMES), "some outputs were not replaced"
        json.loads((folder / "results.json").read_text())
    else:
        assert snapshot(folder) == before, "some outputs were replaced"


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    """The gate checkout of tests/test_outputs.py, with the previous outputs of a run on
    NumPy (a partial run: reports/partial/)."""
    checkout = Checkout(tmp_path)
    first = checkout.run("conformance run", "--frameworks", "numpy")
    assert first.returncode == pytest.ExitCode.TESTS_FAILED, first.stdout + first.stderr
    return checkout


def partial(checkout: Checkout) -> Path:
    return checkout.root / "reports" / "partial"


def recover(checkout: Checkout, journal: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance.report.journal", str(journal), *extra],
                          cwd=checkout.root, env=checkout.env, capture_output=True, text=True, timeout=120)


# ---- a signal at each point of conformance run


@pytest.mark.parametrize("point", BEFORE_THE_MOVES + AFTER_THE_MOVES)
def test_sigterm_at_each_point_leaves_all_old_or_all_new_outputs_and_one_line(checkout: Checkout,
                                                                              point: str) -> None:
    folder = partial(checkout)
    before = snapshot(folder)
    proc = run_paused(checkout, point, "conformance run", "--frameworks", "numpy")
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    stopped = [line for line in proc.stderr.splitlines() if line.startswith("conformance: stopped")]
    assert len(stopped) == 1 and proc.stderr.endswith(stopped[0] + "\n"), proc.stderr
    assert leftovers(folder, folder.parent) == []
    if point in AFTER_THE_MOVES:
        assert_all_old_or_all_new(folder, before, new=True)
        assert stopped[0] == ("conformance: stopped by SIGTERM after writing reports/partial/results.json, "
                              "reports/partial/behaviour.md, reports/partial/behaviour.html")
        assert not (folder / JOURNAL).exists()  # gone in the same step
        return
    assert_all_old_or_all_new(folder, before, new=False)
    journal = folder / JOURNAL
    assert stopped[0] == (f"conformance: stopped by SIGTERM; no results file or report was replaced; the records of "
                          f"the 4 items that finished are kept in reports/partial/{JOURNAL}: `python -m "
                          f"conformance.report.journal reports/partial/{JOURNAL}` writes them to "
                          "reports/partial/results.json")
    # the journal has every record and the end of the run: the very results the run would have written
    back = recover(checkout, Path("reports/partial") / JOURNAL)
    assert back.returncode == 0, back.stdout + back.stderr
    assert not journal.exists()
    data = json.loads((folder / "results.json").read_text())
    assert data["run"]["items"] == 4 == len(data["results"])
    assert data["run"]["partial"][0].startswith("only numpy (--frameworks")  # as the run decided, not "did not finish"
    assert set(data["cases"]) == {r["case"] for r in data["results"]}


def test_sigint_while_the_reports_are_written_is_the_same(checkout: Checkout) -> None:
    folder = partial(checkout)
    before = snapshot(folder)
    proc = run_paused(checkout, "staging the reports", "conformance run", "--frameworks", "numpy", sig=signal.SIGINT)
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("conformance: stopped by SIGINT; no results file or report was "
                                                   "replaced; the records of the 4 items")
    assert_all_old_or_all_new(folder, before, new=False)
    assert leftovers(folder, folder.parent) == []


def test_sigterm_during_an_item_keeps_the_outputs_and_the_records_so_far(checkout: Checkout) -> None:
    folder = partial(checkout)
    before = snapshot(folder)
    proc = checkout.start("conformance run", "--frameworks", "gate,numpy")
    try:
        deadline = time.monotonic() + 120
        while not checkout.started.exists():  # inside the gate's item
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=120)
    finally:
        checkout.gate.touch()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    assert "Traceback" not in output
    assert sum(line.startswith("conformance: stopped by SIGTERM; no results file or report was replaced")
               for line in output.splitlines()) == 1, output
    assert_all_old_or_all_new(folder, before, new=False)
    assert leftovers(folder, folder.parent) == []
    journal = folder / JOURNAL
    if journal.exists():  # the items that finished before the gate's
        back = recover(checkout, journal, "--out", "recovered.json")
        assert back.returncode == 0, back.stderr
        data = json.loads((checkout.root / "recovered.json").read_text())
        assert data["run"]["exit_status"] == 2 and "the run did not finish" in data["run"]["partial"][0]
        assert all(r["case"] != "gate.wait.open" or r["framework"] != "gate" for r in data["results"])


def test_a_second_sigterm_while_the_first_is_handled_still_ends_with_one_line(checkout: Checkout) -> None:
    folder = partial(checkout)
    before = snapshot(folder)
    proc = checkout.start("conformance run", "--frameworks", "gate,numpy")
    try:
        deadline = time.monotonic() + 120
        while not checkout.started.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.1)  # pytest is ending the run: the second one stops the command at once
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=120)
    finally:
        checkout.gate.touch()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output
    assert "Traceback" not in output
    assert output.count("conformance: stopped by SIGTERM; no results file or report was replaced") == 1, output
    assert_all_old_or_all_new(folder, before, new=False)
    assert [p for p in leftovers(folder, folder.parent) if not p.endswith(".lock")] == []  # a lock may stay: no harm


@pytest.mark.parametrize("point, new", [("staging the results", False), ("between two moves", True)])
def test_plain_pytest_stopped_at_the_end_keeps_a_whole_results_file(checkout: Checkout, point: str,
                                                                   new: bool) -> None:
    reports = checkout.root / "reports"
    (reports / "results.json").write_text("previous\n")
    ino = os.lstat(reports / "results.json").st_ino
    proc = run_paused(checkout, point, "pytest", "--frameworks", "numpy")
    output = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "Traceback" not in output
    assert leftovers(reports) == []
    if new:
        assert os.lstat(reports / "results.json").st_ino != ino
        assert json.loads((reports / "results.json").read_text())["run"]["items"] == 4
        assert not (reports / JOURNAL).exists()
    else:
        assert (reports / "results.json").read_text() == "previous\n"
        assert ("conformance: the run was interrupted while its results file was being written; results file "
                "reports/results.json left as it was") in output
        assert f"are kept in reports/{JOURNAL}" in output


# ---- a full disk


def test_no_room_for_the_reports_replaces_nothing_and_keeps_the_records(checkout: Checkout) -> None:
    folder = partial(checkout)
    before = snapshot(folder)
    proc = run_paused(checkout, "no room for the reports", "conformance run", "--frameworks", "numpy", sig=None)
    assert proc.returncode == pytest.ExitCode.INTERNAL_ERROR, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[-2:] == [
        "conformance: could not write reports/partial/results.json and the reports in reports/partial: No space "
        "left on device (ENOSPC); nothing was replaced: the previous files are left as they were",
        f"conformance: the records of the 4 items that finished are kept in reports/partial/{JOURNAL}: `python -m "
        f"conformance.report.journal reports/partial/{JOURNAL}` writes them to reports/partial/results.json"]
    assert_all_old_or_all_new(folder, before, new=False)
    assert leftovers(folder, folder.parent) == []
    back = recover(checkout, Path("reports/partial") / JOURNAL)
    assert back.returncode == 0, back.stderr
    assert back.stdout.startswith("conformance: wrote reports/partial/results.json (4 items; partial: only numpy")
    assert json.loads((folder / "results.json").read_text())["run"]["items"] == 4


@pytest.mark.parametrize("how", ["conformance run", "pytest"])
def test_a_full_disk_at_the_end_keeps_the_records_in_the_journal(checkout: Checkout, how: str) -> None:
    folder = partial(checkout) if how.startswith("conformance") else checkout.root / "reports"
    (checkout.root / "reports" / "results.json").write_text("previous\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    proc = run_paused(checkout, "no room for the results", how, "--frameworks", "numpy", sig=None)
    output = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.INTERNAL_ERROR, output
    assert "Traceback" not in output
    journal = folder / JOURNAL
    shown = str(journal.relative_to(checkout.root))
    assert (f"conformance: could not write the results file {folder.relative_to(checkout.root)}/results.json: No "
            "space left on device (ENOSPC); the previous file is left as it was") in output, output
    assert (f"conformance: the records of the 4 items that finished are kept in {shown}: `python -m "
            f"conformance.report.journal {shown}` writes them to {folder.relative_to(checkout.root)}/results.json"
            in output), output
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p != journal} == before
    lines = journal.read_text().splitlines()
    assert json.loads(lines[0])["journal"] == 1 and "end" in json.loads(lines[-1])
    assert len({json.loads(line)["item"] for line in lines[1:-1]}) == 4
    back = recover(checkout, journal)
    assert back.returncode == 0, back.stderr
    assert json.loads((folder / "results.json").read_text())["run"]["items"] == 4


def test_a_journal_cut_short_by_a_full_disk_never_replaces_a_full_run(checkout: Checkout) -> None:
    reports = checkout.root / "reports"
    full = json.loads((partial(checkout) / "results.json").read_text())
    del full["run"]["partial"]  # a full run's results
    (reports / "results.json").write_text(json.dumps(full))
    proc = checkout.run("pytest", "--frameworks", "numpy", preexec_fn=fill_at(3000))  # a record or two, then EFBIG
    output = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.INTERNAL_ERROR, output
    assert "Traceback" not in output
    assert (f"of the 4 items that finished are kept in reports/{JOURNAL} (it could not be written further: File too "
            "large (EFBIG))") in output, output
    assert json.loads((reports / "results.json").read_text()) == full
    refused = recover(checkout, reports / JOURNAL)
    assert refused.returncode == 2
    assert "never replace" in refused.stderr and "--out" in refused.stderr, refused.stderr
    assert json.loads((reports / "results.json").read_text()) == full
    back = recover(checkout, reports / JOURNAL, "--out", "recovered.json")
    assert back.returncode == 0, back.stderr
    data = json.loads((checkout.root / "recovered.json").read_text())
    assert 0 < data["run"]["items"] < 4 and data["run"]["partial"][0].startswith("the run did not finish")


def test_a_killed_xdist_run_leaves_a_journal_of_the_controller_only(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    checkout = Checkout(tmp_path)
    proc = checkout.start("pytest", "--frameworks", "gate,numpy", "-n", "2")
    journal = checkout.root / "reports" / JOURNAL
    try:
        deadline = time.monotonic() + 120
        while not checkout.started.exists() or not journal.exists() or len(journal.read_text().splitlines()) < 3:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.05)
        proc.kill()  # SIGKILL: nothing of the process runs after it
        proc.communicate(timeout=60)
    finally:
        checkout.gate.touch()
        if proc.poll() is None:
            proc.kill()
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert lines[0]["pid"] == proc.pid  # the controller's
    items = [line["item"] for line in lines[1:]]
    assert len(items) == len(set(items)) >= 2  # each item once: the workers write none
    back = recover(checkout, journal)  # no results file yet: written where the run would have
    assert back.returncode == 0, back.stderr
    data = json.loads((checkout.root / "reports" / "results.json").read_text())
    assert data["run"]["items"] == len(items)


# ---- the pieces, in this process


def test_a_failed_move_puts_back_the_files_already_moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NAMES:
        (tmp_path / name).write_text(f"old {name}")
    before = snapshot(tmp_path)
    staged = outputs.stage({tmp_path / name: f"new {name}" for name in NAMES})
    real = os.replace
    moved: list[Any] = []
    failed: list[Any] = []

    def second_fails(source: Any, target: Any) -> None:
        if len(moved) == 1 and not failed:
            failed.append(target)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(source, target)
        moved.append(target)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(OSError):
        outputs.commit(staged, remove=[tmp_path / "journal"])
    monkeypatch.undo()
    assert snapshot(tmp_path) == before  # the first file back, with its inode
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(NAMES)


def test_signals_wait_while_files_move(tmp_path: Path) -> None:
    came: list[str] = []

    def handler(signum: int, frame: Any) -> None:
        came.append("handled")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with outputs.signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            came.append("inside")
        time.sleep(0.05)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert came == ["inside", "handled"]


def test_a_journal_that_fills_the_disk_keeps_the_lines_before(tmp_path: Path) -> None:
    journal = journal_module.Journal(tmp_path / JOURNAL, tmp_path / "results.json", None, ["numpy"])
    journal.open()
    record = unrun_record("a.b.c", "numpy", "skipped", "not run", "f.yaml::a.b.c[numpy]")
    journal.add("f.yaml::a.b.c[numpy]", record, {}, {})
    assert journal.fd is not None
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, journal.fd)  # from here on every write is ENOSPC
    os.close(full)
    journal.add("f.yaml::a.b.d[numpy]", dataclasses.replace(record, case="a.b.d"), {}, {})
    assert (journal.error, journal.items, journal.fd) == ("No space left on device (ENOSPC)", 1, None)
    journal.close()
    assert journal.kept_text(2) == (f"the records of 1 of the 2 items that finished are kept in {tmp_path / JOURNAL} "
                                    "(it could not be written further: No space left on device (ENOSPC)): `python -m "
                                    f"conformance.report.journal {tmp_path / JOURNAL}` writes them as the results of "
                                    "a partial run")
    found = journal_module.read_journal(tmp_path / JOURNAL)
    assert list(found.records) == ["f.yaml::a.b.c[numpy]"] and not found.complete


def test_a_last_line_cut_short_is_left_out_and_any_other_bad_line_refuses(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL
    header = json.dumps({"journal": 1, "results_format": 2, "results": "results.json", "partial_results": None,
                         "frameworks": ["numpy"], "pid": 1, "started": "2025-01-01T00:00:00+00:00"})
    item = json.dumps({"item": "f.yaml::a[numpy]", "record": {"case": "a", "framework": "numpy"}})
    path.write_text(header + "\n" + item + "\n" + item[:20])
    found = journal_module.read_journal(path)
    assert found.cut and list(found.records) == ["f.yaml::a[numpy]"]
    path.write_text(header + "\n" + item[:20] + "\n" + item + "\n")
    with pytest.raises(journal_module.JournalError, match=":2: not a line of a conformance journal"):
        journal_module.read_journal(path)
    link = tmp_path / "link.journal"
    link.symlink_to(path)
    with pytest.raises(journal_module.JournalError, match="not a regular file"):
        journal_module.read_journal(link)


def test_an_earlier_runs_journal_is_kept_aside_with_a_line(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL
    path.write_text("the earlier run's records\n")
    journal = journal_module.Journal(path, tmp_path / "results.json", None, ["numpy"])
    journal.open()
    journal.close()  # nothing recorded: its own journal goes
    assert journal.notice == (f"conformance: {path} held the journal of an earlier run that did not finish: kept as "
                              f"{path}.previous; `python -m conformance.report.journal {path}.previous` turns it into "
                              "results, or delete it")
    assert (tmp_path / (JOURNAL + ".previous")).read_text() == "the earlier run's records\n"
    assert not path.exists()
