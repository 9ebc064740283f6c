"""Crashes, hangs and interruptions: the sandbox turns each into that item's error and the
run goes on; the results list every item exactly once; an interrupted run leaves the
previous results file and no framework process behind.

The failing operations are the test-only ``faulty`` adapter's (tests/probe_adapters/faulty.py),
registered through the real entry point group in subprocess runs only. One test uses a
real framework crash: ``torch.from_dlpack`` of a NumPy array with a negative stride aborts
the process in torch 2.13 (a C++ check that throws through a noexcept frame).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from entry_points import TESTS, register, subprocess_env

from conformance import registry
from conformance.load.reader import load_text
from conformance.run.engine import run
from conformance.run.sandbox import Sandbox, signal_description

OK_CASE = """\
  - id: sandbox.{name}
    title: "an ordinary case"
    given: {{x: [1.0, 2.0]}}
    steps:
      - y = x.clone()
    expect: {{shares_memory: {{y & x: false}}, values: {{y: [1.0, 2.0]}}}}
"""
FAULT_CASE = """\
  - id: sandbox.{name}
    title: "a framework that {name}s"
    given: {{x: [1.0, 2.0]}}
    steps:
      - y = {name}(x)
    expect: {{values: {{y: [1.0, 2.0]}}}}
"""
FAULTS = ["segfault", "abort", "exit", "hang", "unreadable"]
# ok cases around and between the faults: each fault must cost its own item only
CASES = "cases:\n" + "".join(
    [OK_CASE.format(name="first")]
    + [FAULT_CASE.format(name=f) + OK_CASE.format(name=f"after_{f}") for f in FAULTS])
ITEMS = (1 + 2 * len(FAULTS)) * 2  # cases x (faulty, numpy)
NUMPY_ABSENT = "numpy has no counterpart"


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder with the faulty cases, and the environment that registers ``faulty``."""
    site = tmp_path / "site"
    register(site, "probe-adapters", {"faulty": "probe_adapters.faulty:FaultyAdapter"})
    (tmp_path / "faults.yaml").write_text(CASES)
    return tmp_path, subprocess_env(site, TESTS)


def pytest_args(*extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "faults.yaml", "--frameworks", "faulty,numpy",
            "--conformance-results", "r.json", *extra]


def run_pytest(project: tuple[Path, dict[str, str]], *extra: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    folder, env = project
    proc = subprocess.run(pytest_args(*extra), cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    return proc, json.loads((folder / "r.json").read_text())


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_crashes_and_a_hang_cost_one_item_each(project: tuple[Path, dict[str, str]], workers: list[str]) -> None:
    if workers:
        pytest.importorskip("xdist")
    started = time.monotonic()
    proc, data = run_pytest(project, "--case-timeout", "3", *workers)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output  # tests failed, the run completed
    assert time.monotonic() - started < 120, "the hang held the run"

    nodeids = [r["nodeid"] for r in data["results"]]
    assert len(nodeids) == len(set(nodeids)) == ITEMS == data["run"]["items"], output
    by_item = {(r["case"], r["framework"]): r for r in data["results"]}
    expected_reason = {
        "segfault": "crashed with signal SIGSEGV (Segmentation fault)",
        "abort": "crashed with signal SIGABRT (Aborted)",
        "exit": "crashed with exit status 3",
        "hang": "timed out after 3 s",
        "unreadable": "RuntimeError: this adapter cannot read what its own operation returned",
    }
    for fault, reason in expected_reason.items():
        record = by_item[(f"sandbox.{fault}", "faulty")]
        assert record["outcome"] == "error", record
        assert reason in record["reason"], record
        assert ("restarted for the next item" in record["reason"]) == (fault != "unreadable"), record
        assert by_item[(f"sandbox.after_{fault}", "faulty")]["outcome"] == "pass", f"the item after {fault}"
        assert by_item[(f"sandbox.{fault}", "numpy")]["outcome"] == "not_applicable"
        assert NUMPY_ABSENT in by_item[(f"sandbox.{fault}", "numpy")]["reason"]
    assert by_item[("sandbox.first", "faulty")]["outcome"] == "pass"
    # what the child said before it died is in the item's failure text: faulthandler's
    # Python stack for the segfault and for the hang (asked for before the kill)
    assert "Fatal Python error: Segmentation fault" in output and "in _segfault" in output, output
    assert "in _hang" in output, output
    assert "Traceback (most recent call last)" in output and "in to_numpy" in output, output
    assert data["environment"]["frameworks"]["faulty"]["devices"] == ["cpu"]


def test_a_fork_server_runs_each_item_in_a_process_of_its_own(tmp_path: Path) -> None:
    """process_per_item: each item runs in a process forked from one that imported the
    framework and ran warm() once; a crash or a hang costs that item only, a poisoned
    process is never reused (the next item passes with no crash to explain), and warm() runs
    once per fork server (again only after a hang killed it)."""
    site = tmp_path / "site"
    register(site, "probe-adapters", {"faulty_forked": "probe_adapters.faulty:ForkedFaultyAdapter"})
    faults = ["segfault", "abort", "exit", "hang", "poison"]
    (tmp_path / "faults.yaml").write_text("cases:\n" + "".join(
        [OK_CASE.format(name="first")] + [FAULT_CASE.format(name=f) + OK_CASE.format(name=f"after_{f}")
                                          for f in faults]))
    env = dict(subprocess_env(site, TESTS), FAULTY_WARM_FILE=str(tmp_path / "warm.txt"),
               FAULTY_PID_FILE=str(tmp_path / "hang.pid"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "faults.yaml", "--frameworks",
                           "faulty_forked", "--conformance-results", "r.json", "--case-timeout", "3"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    by_case = {r["case"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    for fault, reason in {"segfault": "crashed with signal SIGSEGV", "abort": "crashed with signal SIGABRT",
                          "exit": "crashed with exit status 3", "hang": "timed out after 3 s"}.items():
        assert by_case[f"sandbox.{fault}"]["outcome"] == "error", by_case[f"sandbox.{fault}"]
        assert reason in by_case[f"sandbox.{fault}"]["reason"], by_case[f"sandbox.{fault}"]
        assert by_case[f"sandbox.after_{fault}"]["outcome"] == "pass", output
    assert "in a process of its own, forked for this item" in by_case["sandbox.segfault"]["reason"]
    assert "Fatal Python error: Segmentation fault" in output and "in _segfault" in output, output
    assert "in _hang" in output, output  # the stack of the item's own process, asked for before the kill
    # poison passes and breaks its process for whatever runs next there: nothing does
    assert by_case["sandbox.poison"]["outcome"] == "pass"
    assert by_case["sandbox.after_poison"]["outcome"] == "pass" and "crash" not in by_case["sandbox.after_poison"]
    warm_pids = (tmp_path / "warm.txt").read_text().split()
    assert len(warm_pids) == 2, warm_pids  # the first fork server, and the one after the hang's kill
    assert int((tmp_path / "hang.pid").read_text()) not in map(int, warm_pids)  # the item ran in a fork


def test_a_fork_server_forks_only_when_the_frameworks_threads_are_asleep(tmp_path: Path) -> None:
    """warm() leaves a thread holding a lock while it works on, in C, for about a second
    (as Paddle's garbage collector frees the warm-up program's tensors on its own thread,
    under the allocator's lock): an item forked then would wait for that lock forever. The
    fork server waits for the thread to sleep, so every item gets the lock."""
    site = tmp_path / "site"
    register(site, "probe-adapters", {"faulty_forked": "probe_adapters.faulty:ForkedFaultyAdapter"})
    (tmp_path / "lock.yaml").write_text("cases:\n" + "".join(FAULT_CASE.format(name="allocate").replace(
        "sandbox.allocate", f"sandbox.allocate_{i}") for i in range(3)))
    env = dict(subprocess_env(site, TESTS), FAULTY_BUSY_AFTER_WARM="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "lock.yaml", "--frameworks",
                           "faulty_forked", "--conformance-results", "r.json", "--case-timeout", "20"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    assert [r["outcome"] for r in results] == ["pass"] * 3, proc.stdout + proc.stderr


def test_other_threads_asleep_sees_a_thread_at_work_in_c() -> None:
    """A thread working in C without the GIL is seen running until it ends; a thread waiting
    for work is asleep."""
    import hashlib
    import threading

    from conformance.run.sandbox import other_threads_asleep, wait_for_quiet_threads

    waiting = threading.Event()
    sleeper = threading.Thread(target=waiting.wait, daemon=True)
    sleeper.start()
    assert wait_for_quiet_threads(limit_s=5), "a thread waiting on an event is asleep"
    worker = threading.Thread(target=hashlib.pbkdf2_hmac, args=("sha256", b"work", b"in C", 20_000_000), daemon=True)
    worker.start()
    seen_at_work = False
    for _ in range(200):  # the worker waits for the GIL now and then; at work it runs
        if not other_threads_asleep():
            seen_at_work = True
            break
        time.sleep(0.001)
    assert seen_at_work
    assert not wait_for_quiet_threads(limit_s=0.05)  # it works on: the wait gives up
    worker.join()
    assert wait_for_quiet_threads(limit_s=5)
    waiting.set()
    sleeper.join()


@pytest.mark.parametrize("workers", [[], ["-n", "2", "--dist", "loadfile"]], ids=["serial", "xdist"])
def test_a_crash_left_by_an_earlier_item_is_blamed_on_that_item(project: tuple[Path, dict[str, str]],
                                                                 workers: list[str]) -> None:
    """``poison`` passes and breaks the process for the next item (as a write through a
    dangling alias damages the heap): the next item in that process crashes, runs to its
    own outcome alone, and the poisoning item is named and recorded as the error (under
    xdist the file's items stay on one worker, so that one item follows poison)."""
    if workers:
        pytest.importorskip("xdist")
    folder, env = project
    after = [OK_CASE.format(name=f"after_{i}") for i in range(3)]
    (folder / "faults.yaml").write_text("cases:\n" + OK_CASE.format(name="first") + FAULT_CASE.format(name="poison")
                                        + "".join(after))
    args = [a if a != "faulty,numpy" else "faulty" for a in pytest_args(*workers)]
    proc = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    data = json.loads((folder / "r.json").read_text())
    by_case = {r["case"]: r for r in data["results"]}
    assert proc.returncode == 1 and data["run"]["exit_status"] == 1, output
    assert [r["case"] for r in data["results"] if "crash" in r] == ["sandbox.after_0"], output
    victim = by_case["sandbox.after_0"]
    assert victim["outcome"] == "pass", victim  # its own outcome, from the run alone
    assert victim["crash"]["culprit"] == ["sandbox.poison", "faulty"], victim
    assert victim["crash"]["tried"] == [["sandbox.poison", "faulty"]], victim
    assert "SIGABRT" in victim["crash"]["reason"]
    blamed = by_case["sandbox.poison"]
    assert blamed["outcome"] == "error", blamed
    assert "sandbox.after_0[faulty], run after it, crashed" in blamed["reason"], blamed
    assert [by_case[c]["outcome"] for c in ("sandbox.first", "sandbox.after_1", "sandbox.after_2")] == ["pass"] * 3
    assert "crashes that came from an earlier item" in output, output
    assert "the crash comes from sandbox.poison[faulty]" in output, output


def test_a_crash_that_comes_back_alone_is_the_items_own(project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    (folder / "faults.yaml").write_text("cases:\n" + OK_CASE.format(name="first") + FAULT_CASE.format(name="abort"))
    proc = subprocess.run(pytest_args()[:-4] + ["--frameworks", "faulty", "--conformance-results", "r.json"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    record = {r["case"]: r for r in json.loads((folder / "r.json").read_text())["results"]}["sandbox.abort"]
    assert record["outcome"] == "error" and "crash" not in record, proc.stdout
    assert "run again alone in a fresh process it crashed again, so the crash is its own" in record["reason"]


def test_a_real_framework_abort_is_the_items_error(project: tuple[Path, dict[str, str]]) -> None:
    pytest.importorskip("torch")
    folder, env = project
    (folder / "faults.yaml").write_text("""\
cases:
  - id: sandbox.torch_from_dlpack_negative_stride
    title: "torch.from_dlpack of a reversed NumPy array (torch 2.13 aborts the process)"
    given: {a: {data: [1.0, 2.0, 3.0], type: ndarray}}
    steps:
      - b = a[::-1]
      - t = torch_from_dlpack(b)
    expect: {values: {a: [1.0, 2.0, 3.0]}}
""" + OK_CASE.format(name="after"))
    proc = subprocess.run(pytest_args()[:-4] + ["--frameworks", "numpy", "--conformance-results", "r.json"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    data = json.loads((folder / "r.json").read_text())
    outcomes = {r["case"]: r for r in data["results"]}
    crashed = outcomes["sandbox.torch_from_dlpack_negative_stride"]
    assert crashed["outcome"] == "error", crashed
    assert "SIGABRT" in crashed["reason"]
    assert "Storage size calculation overflowed" in proc.stdout  # torch's own last words
    assert outcomes["sandbox.after"]["outcome"] == "pass"


@pytest.mark.parametrize("how, workers", [(signal.SIGINT, []), (signal.SIGTERM, []), (signal.SIGTERM, ["-n", "2"])],
                         ids=["sigint", "sigterm", "sigterm-xdist"])
def test_an_interrupted_run_keeps_the_previous_results(project: tuple[Path, dict[str, str]], how: signal.Signals,
                                                       workers: list[str]) -> None:
    if workers:
        pytest.importorskip("xdist")
    folder, env = project
    previous = '{"previous": "results"}\n'
    (folder / "r.json").write_text(previous)
    pid_file = folder / "child.pid"
    env = dict(env, FAULTY_PID_FILE=str(pid_file))
    # the run starts as one a user starts: SIGINT and SIGTERM at their defaults and not blocked,
    # whatever the process running this test has (two whole runs of the suite under pytest-xdist
    # had this run never see the SIGINT: a worker's state, inherited through fork and exec)
    with _signals_deliverable():
        proc = subprocess.Popen(pytest_args("--case-timeout", "0", *workers), cwd=folder, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() or not pid_file.read_text():  # the child is in fn:hang
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.05)
        child = int(pid_file.read_text())
        proc.send_signal(how)
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # say where it waits: faulthandler's stacks (pytest's plugin)
            proc.send_signal(signal.SIGABRT)
            output, _ = proc.communicate(timeout=30)
            pytest.fail(f"the run did not end within 60 s of {how.name}:\n{output[-6000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert (folder / "r.json").read_text() == previous
    # the records of the items that finished are kept in the run's journal (docs/reliability.md)
    assert sorted(p.name for p in folder.iterdir()) == ["child.pid", "faults.yaml", "r.json", "r.json.journal", "site"]
    assert "left as it was" in output, output
    assert _gone(child), "the framework process outlived the run"


@contextlib.contextmanager
def _signals_deliverable() -> Iterator[None]:
    """While the run's process is started: SIGINT and SIGTERM neither ignored (an ignored
    signal stays ignored through exec, and Python then installs no KeyboardInterrupt for
    SIGINT) nor blocked in this thread (the mask is inherited too); put back afterwards."""
    ignored = [s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) == signal.SIG_IGN]
    for signum in ignored:
        signal.signal(signum, signal.SIG_DFL)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for signum in ignored:
            signal.signal(signum, signal.SIG_IGN)


def _gone(pid: int, wait_s: float = 10.0) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


# ---- the Sandbox class itself, with the built-in NumPy adapter

NUMPY_CASES = """\
cases:
  - id: sandbox.view
    title: "a view"
    given: {x: [1.0, 2.0, 3.0, 4.0]}
    steps:
      - y = x.reshape(2, 2)
      - y[0, 0] = 9.0
    expect: {shares_memory: {y & x: true}, values: {x: [9.0, 2.0, 3.0, 4.0]}}
  - id: sandbox.wrong
    title: "a wrong expectation"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.copy()
    expect: {shares_memory: {y & x: true}}
"""


def test_outcomes_from_the_child_equal_those_in_process() -> None:
    cases = load_text(NUMPY_CASES, "sandbox.yaml", registry.vocabulary()).cases
    sandbox = Sandbox(timeout=60)
    try:
        for case in cases:
            assert sandbox.run(case, "numpy") == run(case, registry.get_adapter("numpy"))
            # the second item of the same case is sent by name only
            assert sandbox.run(case, "numpy") == run(case, registry.get_adapter("numpy"))
    finally:
        sandbox.close()
    assert sandbox.starts == 1
    assert sandbox.environments["numpy"]["devices"] == ["cpu"]


def test_the_same_case_with_other_expectations_is_sent_again() -> None:
    from dataclasses import replace

    case = load_text(NUMPY_CASES, "sandbox.yaml", registry.vocabulary()).cases[0]
    less = replace(case, expect=replace(case.expect, checks={}))  # one id, nothing expected
    sandbox = Sandbox(timeout=60)
    try:
        full = sandbox.run(case, "numpy")
        assert full.observed  # control: the case's own expectations are observed
        assert sandbox.run(less, "numpy") == run(less, registry.get_adapter("numpy"))
        assert not sandbox.run(less, "numpy").observed  # not the first case's, kept in the child by its id
    finally:
        sandbox.close()


def test_a_framework_that_declares_its_own_process_gets_a_child_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Frameworks share one child, except one whose adapter declares ``own_process`` (MindSpore:
    it cannot be imported after Paddle), whose items run in a second child."""
    from conformance.adapters.numpy_adapter import NumpyAdapter

    case = load_text(NUMPY_CASES, "sandbox.yaml", registry.vocabulary()).cases[0]
    shared = Sandbox(timeout=60)
    try:
        shared.run(case, "numpy")
        shared.run(case, "numpy")
        assert shared.starts == 1 and set(shared._children) == {""}  # the shared child
    finally:
        shared.close()
    monkeypatch.setattr(NumpyAdapter, "own_process", True)
    apart = Sandbox(timeout=60)
    try:
        assert apart.run(case, "numpy") == run(case, registry.get_adapter("numpy"))
        apart.run(case, "numpy")
        assert apart.starts == 1 and set(apart._children) == {"numpy"}
        assert apart.environments["numpy"]["devices"] == ["cpu"]
    finally:
        apart.close()


@pytest.mark.parametrize("code, text", [(-11, "signal SIGSEGV (Segmentation fault)"), (-6, "signal SIGABRT (Aborted)"),
                                        (-9, "signal SIGKILL (Killed)"), (3, "exit status 3"), (-200, "signal 200")])
def test_signal_description(code: int, text: str) -> None:
    assert signal_description(code) == text


# ---- the parent trusts nothing the child sends beyond the outcome's classes

HOSTILE_CHILD = """
import os, pickle, sys
from multiprocessing.connection import Connection
from conformance import codec

class Payload:
    def __reduce__(self):
        return (os.system, ("touch " + {sentinel!r},))

conn = Connection(int(sys.argv[1]))
conn.send_bytes(codec.dumps(("ready",)))
while True:
    message = conn.recv_bytes()
    conn.send_bytes({reply})
"""


@pytest.mark.parametrize("reply", [
    "pickle.dumps(('outcome', Payload()))",  # what a pickled channel would have run
    "codec.dumps(('outcome', None)).replace(b'null', b'{{\"system\": [\"touch\"]}}')",  # a class outside the allowlist
    "codec.dumps(('outcome', {{'not': 'an outcome'}}))[:-3]",  # broken JSON
], ids=["pickle", "foreign-class", "garbage"])
def test_a_message_from_the_child_builds_only_outcome_classes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             reply: str) -> None:
    """A framework process that sends something other than an outcome (as one a case took
    over could) costs that item: SandboxError, and nothing it names is run or imported."""
    from conformance.run import sandbox as sandbox_module

    sentinel = tmp_path / "ran"
    child = tmp_path / "child.py"
    child.write_text(HOSTILE_CHILD.format(sentinel=str(sentinel), reply=reply.format(sentinel=str(sentinel))))
    monkeypatch.setattr(sandbox_module, "child_command", lambda: [sys.executable, str(child)])
    case = load_text(NUMPY_CASES, "sandbox.yaml", registry.vocabulary()).cases[0]
    box = Sandbox(timeout=30)
    try:
        with pytest.raises(sandbox_module.SandboxError, match="not an outcome"):
            box.run(case, "numpy")
    finally:
        box.close()
    assert not sentinel.exists()


def test_control_a_pickled_channel_would_run_the_payload(tmp_path: Path) -> None:
    import pickle

    sentinel = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> Any:
            return (os.system, (f"touch {sentinel}",))

    pickle.loads(pickle.dumps(Payload()))  # noqa: S301 - the control: what the sandbox no longer does
    assert sentinel.exists()
