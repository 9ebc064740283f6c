"""The progress display of ``conformance run`` on a terminal: one line, rewritten in place,
with items done / total, the outcomes so far and the item running; then every failure with
its reason and the command that reruns it. Replaces pytest's terminal reporter for that
run only (``-p no:terminal``); works with pytest-xdist (the controller counts the workers'
collections).
"""

from __future__ import annotations

import shutil
from collections import Counter
from typing import Any, TextIO

import pytest

from conformance.escaping import for_terminal
from conformance.report.results import RECORD_KEY


class ProgressDisplay:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.total: int | None = None
        self.done = 0
        self.outcomes: Counter[str] = Counter()
        self.problems: list[tuple[str, str]] = []  # (nodeid, text)
        self.seen: set[str] = set()

    # ---- totals

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        self.draw("collected")

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.total = len(ids)  # every worker collects the same items

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.problems.append((report.nodeid or "<collection>", report.longreprtext))

    # ---- items

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid in self.seen or not (report.when == "call" or report.outcome != "passed"):
            return
        self.seen.add(report.nodeid)
        self.done += 1
        outcome = next((v["outcome"] for k, v in report.user_properties if k == RECORD_KEY), report.outcome)
        self.outcomes[outcome] += 1
        if report.failed:
            reason = next((v.get("reason", "") for k, v in report.user_properties if k == RECORD_KEY), "")
            self.problems.append((report.nodeid, reason or report.longreprtext))
        self.draw(report.nodeid.rsplit("::", 1)[-1])

    def draw(self, current: str) -> None:
        total = self.total or 0
        counts = " ".join(f"{n} {o}" for o, n in sorted(self.outcomes.items()))
        line = for_terminal(f"[{self.done:>{len(str(total))}}/{total}] {counts} · {current}", multiline=False)
        width = shutil.get_terminal_size((100, 20)).columns - 1
        self.stream.write("\r" + line[:width].ljust(width))
        self.stream.flush()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.stream.write("\n")
        for nodeid, text in self.problems:  # case text and framework messages
            lines = text.strip().split("\n") or [""]
            self.stream.write(f"FAILED {for_terminal(nodeid, multiline=False)}\n"
                              f"    {for_terminal(lines[0][:500], multiline=False)}\n")
        if self.problems:
            self.stream.write("details: pytest '<nodeid>' shows the full failure\n")
        self.stream.flush()
