"""The crash ledger: the crashes that came from an earlier item (conformance.run.sandbox),
named at the end of the run, and the blame put on the item they came from."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.escaping import for_terminal
from conformance.report.results import ERROR, record_of, short


class CrashLedger:
    """The crashes that came from an earlier item (conformance.run.sandbox: the crashed item
    ran to an outcome alone): each is named at the end of the run, and the run fails even
    though every item has its own outcome, since a case crashed the framework."""

    def __init__(self) -> None:
        self.crashes: list[tuple[str, dict[str, Any]]] = []  # (node id of the item that crashed, its crash)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = record_of(report)
        if record is not None and record.get("crash") and report.nodeid not in dict(self.crashes):
            self.crashes.append((report.nodeid, record["crash"]))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.crashes and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.crashes:
            return
        terminalreporter.section("crashes that came from an earlier item", sep="=", red=True)
        for nodeid, crash in self.crashes:
            terminalreporter.write_line(for_terminal(f"{nodeid}: {crash['text']}", multiline=False))


def blame_crashes(records: Any) -> None:
    """Mark the item a crash came from (CrashLedger): its record becomes an ``error`` whose
    reason names the item that crashed after it, whatever its own expectations gave."""
    records = list(records)
    by_item = {(r["case"], r["framework"]): r for r in records}
    for record in records:
        culprit = (record.get("crash") or {}).get("culprit")
        if culprit and tuple(culprit) in by_item:
            blamed = by_item[tuple(culprit)]
            blamed["outcome"] = ERROR
            crash = record["crash"]["reason"].split(";")[0]
            blamed["reason"] = short(f"left the framework process in a state in which {record['case']}"
                                     f"[{record['framework']}], run after it, crashed ({crash}); run alone in a fresh "
                                     "process that item runs to its outcome, and run after this item it crashes again")
