"""No innocent item is blamed for a crash (issue 32: two external kills of the framework
process a few seconds apart blamed an item that had done nothing, 2 of 2 runs).

An item whose child died after other items ran is run again alone, and the items before it
are tried to find the one that left the process broken (docs/security.md, "A crash is
blamed on the item that caused it"). A kill from outside is no such crash, and one kill
landing during a try must not name the item tried. The rule is tested on the attribution
logic with scripted children (each signal exactly where a real one could land), and end to
end with real kills of a real child.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Callable

import pytest

from conformance import registry
from conformance.load.reader import load_text
from conformance.run.sandbox import CULPRIT_CONFIRMATIONS, FrameworkProcess, Sandbox, SandboxError

CASES = "cases:\n" + "".join(f"""\
  - id: blame.item_{i}
    title: "an ordinary case"
    given: {{x: [1.0, 2.0]}}
    steps:
      - y = x + 1.0
    expect: {{values: {{y: [2.0, 3.0]}}}}
""" for i in range(40))


def _cases() -> list[Any]:
    result = load_text(CASES, "blame.yaml", registry.vocabulary())
    assert not result.errors
    return result.cases


def _crash(sig: signal.Signals) -> SandboxError:
    return SandboxError(f"the framework process crashed with signal {sig.name}", crashed=True,
                        signal_number=int(sig))


class Scripted(FrameworkProcess):
    """A child whose every item runs to an outcome, except where ``fate(case_id, run_number)``
    names the signal that ends it then."""

    def __init__(self, fate: Callable[[str, int], signal.Signals | None]) -> None:
        super().__init__(timeout=10)
        self.fate = fate
        self.runs: list[str] = []

    def _run(self, case: Any, framework: str) -> Any:
        self.runs.append(case.id)
        sig = self.fate(case.id, len(self.runs))
        if sig is not None:
            self._history = []
            raise _crash(sig)
        self._history.append((case, framework))
        return "outcome"

    def close(self) -> None:
        self._history = []


def _run_all(child: Scripted, cases: list[Any]) -> dict[str, Any]:
    notes = {}
    for case in cases:
        try:
            child.run(case, "numpy")
        except SandboxError:
            notes[case.id] = "error"
            continue
        if child.last_crash is not None:
            notes[case.id] = child.last_crash
    return notes


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_kill_from_outside_blames_no_earlier_item(sig: signal.Signals) -> None:
    cases = _cases()[:4]
    # the third item's child is killed; nothing else happens
    child = Scripted(lambda case_id, n: sig if n == 3 else None)
    notes = _run_all(child, cases)
    note = notes["blame.item_2"]
    assert note.culprit is None and note.external and note.tried == []
    assert "comes from outside the process" in note.text() and "no earlier item is blamed" in note.text()
    assert child.runs == ["blame.item_0", "blame.item_1", "blame.item_2", "blame.item_2", "blame.item_3"]


def test_two_kills_a_few_seconds_apart_blame_no_one() -> None:
    """The reproduction: a kill ends an item's child, and a second one lands while an earlier
    item is being tried as the culprit; the second looks like the crash coming back."""
    cases = _cases()[:4]
    child = Scripted(lambda case_id, n: signal.SIGKILL if n in (3, 6) else None)
    notes = _run_all(child, cases)
    assert all(getattr(note, "culprit", None) is None for note in notes.values()), notes


def test_an_item_killed_from_outside_twice_has_no_outcome_and_is_not_called_a_crash_of_its_own() -> None:
    cases = _cases()[:3]
    child = Scripted(lambda case_id, n: signal.SIGKILL if n in (2, 3) else None)
    notes = _run_all(child, cases)
    assert notes == {"blame.item_1": "error"}
    child = Scripted(lambda case_id, n: signal.SIGKILL if n in (2, 3) else None)
    child.run(cases[0], "numpy")
    with pytest.raises(SandboxError, match="ended again by a signal from outside the process"):
        child.run(cases[1], "numpy")


def test_a_framework_crash_that_comes_back_once_in_the_tries_is_not_enough() -> None:
    """A real crash signal (SIGSEGV) at the third item, and the same signal once more during
    the first try of the item before it, by chance: one coming back is not a culprit."""
    cases = _cases()[:4]
    child = Scripted(lambda case_id, n: signal.SIGSEGV if n in (3, 6) else None)
    notes = _run_all(child, cases)
    note = notes["blame.item_2"]
    assert note.culprit is None and not note.external
    assert note.tried == [("blame.item_1", "numpy"), ("blame.item_0", "numpy")]
    assert "each 2 times" in note.text()


def test_a_crash_that_comes_back_after_an_item_each_time_names_it() -> None:
    """item_1 really leaves the process broken: item_2 aborts whenever it runs right after it."""
    cases = _cases()[:4]

    def fate(case_id: str, n: int) -> signal.Signals | None:
        after = child.runs[-2] if len(child.runs) > 1 else None
        return signal.SIGABRT if case_id == "blame.item_2" and after == "blame.item_1" else None

    child = Scripted(fate)
    notes = _run_all(child, cases)
    note = notes["blame.item_2"]
    assert note.culprit == ("blame.item_1", "numpy")
    assert child.runs.count("blame.item_1") == 1 + CULPRIT_CONFIRMATIONS


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the child through /proc")
def test_real_kills_of_a_real_child_blame_no_item() -> None:
    """Two SIGKILLs from outside, a second apart, while a real child runs real items."""
    cases = _cases()
    box = Sandbox(timeout=60)
    kills: list[int] = []
    done = threading.Event()

    def killer() -> None:
        time.sleep(2.0)  # the child has started and run items
        for _ in range(2):
            for pid in _children_of(os.getpid()):
                os.kill(pid, signal.SIGKILL)
                kills.append(pid)
            time.sleep(1.0)
        done.set()

    notes = []
    try:
        box.run(cases[0], "numpy")  # the child's start, before the killer looks for it
        thread = threading.Thread(target=killer)
        thread.start()
        i = 1
        while not done.is_set() or i < 12:
            try:
                box.run(cases[i % len(cases)], "numpy")
            except SandboxError as lost:  # killed twice in a row: no outcome, and not called its own crash
                assert "ended again by a signal from outside" in lost.reason, lost.reason
            if box.last_crash is not None:
                notes.append(box.last_crash)
            i += 1
            time.sleep(0.05)
        thread.join()
    finally:
        box.close()
    assert kills, "the test killed nothing"
    assert all(note.culprit is None for note in notes), [n.text() for n in notes]
