"""The crash ledger: the crashes that came from an earlier item (conformance.run.sandbox),
named at the end of the run, and the blame put on the item they came from."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from conformance.escaping import for_terminal
from conformance.report.results import ERROR, record_of, short
from conformance.resultsmodel import Crash, Record


class CrashLedger:
    """The crashes that came from an earlier item (conformance.run.sandbox: the crashed item
    ran to an outcome alone): each is named at the end of the run, and the run fails even
    though every item has its own outcome, since a case crashed the framework."""

    def __init__(self) -> None:
        self.crashes: list[tuple[str, Crash]] = []  # (node id of the item that crashed, its crash)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        sent = record_of(report)
        if sent is not None and sent.record.crash is not None and report.nodeid not in dict(self.crashes):
            self.crashes.append((report.nodeid, sent.record.crash))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.crashes and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.crashes:
            return
        terminalreporter.section("crashes that came from an earlier item", sep="=", red=True)
        for nodeid, crash in self.crashes:
            terminalreporter.write_line(for_terminal(f"{nodeid}: {crash.text}", multiline=False))


def blame_crashes(records: dict[str, Record]) -> dict[str, Record]:
    """Mark the item a crash came from (CrashLedger): its record becomes an ``error`` whose
    reason names the item that crashed after it, whatever its own expectations gave."""
    out = dict(records)
    nodeids: dict[tuple[str | None, ...], str] = {record.item: nodeid for nodeid, record in records.items()}
    for record in records.values():
        if record.crash is not None and record.crash.culprit and tuple(record.crash.culprit) in nodeids:
            blamed = nodeids[tuple(record.crash.culprit)]
            crash = record.crash.reason.split(";")[0]
            out[blamed] = dataclasses.replace(out[blamed], outcome=ERROR, reason=short(
                f"left the framework process in a state in which {record.case}[{record.framework}], run after it, "
                f"crashed ({crash}); run alone in a fresh process that item runs to its outcome, and run after this "
                "item it crashes again"))
    return out
