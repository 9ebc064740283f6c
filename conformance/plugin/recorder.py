"""The results recorder: one record per case item, gathered on the controller (under
pytest-xdist, from the workers' reports), kept in the run's journal as each item finishes,
and written as the results file at the end of a run, or the partial results of a partial one.
"""

from __future__ import annotations

import dataclasses
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conformance import registry
from conformance.claims import claims
from conformance.escaping import for_terminal
from conformance.plugin.collect import report_reason
from conformance.plugin.coverage import (
    WORKEROUTPUT_KEY,
    corpus_fields,
    corpus_roots,
    coverage_key,
    partial_reasons,
    run_date,
    suite_commit,
)
from conformance.plugin.crashes import blame_crashes
from conformance.plugin.decided import decided_key, summary_line
from conformance.plugin.decided import from_worker as decided_by_worker
from conformance.report.journal import Journal, journal_path
from conformance.report.outputs import OutputError, Staged, acquire, check_file, error_text, lock_path, release
from conformance.report.outputs import commit as commit_outputs
from conformance.report.results import (
    ERROR,
    ItemReport,
    record_of,
    results_document,
    results_text,
    stage_texts,
    unrun_record,
)
from conformance.resultsmodel import CaseInfo, Commit, Installation, Record, Run
from conformance.run.sandbox import child_python

results_key = pytest.StashKey["ResultsRecorder"]()


class ResultsRecorder:
    """Collects one record per case item on the controller, keeps each in the run's journal
    as its item finishes (conformance.report.journal), and writes the file at the end."""

    def __init__(self, path: Path, partial_path: Path | None = None, frameworks: list[str] | None = None) -> None:
        self.path = path  # where the results of a full run of the corpus go
        # the frameworks of the run (ini conformance_frameworks), each in the results' environment
        self.frameworks = frameworks if frameworks is not None else registry.framework_names()
        self.partial_path = partial_path if partial_path is not None and partial_path != path else None
        self.records: dict[str, Record] = {}
        self.cases: dict[str, CaseInfo] = {}
        self.framework_env: dict[str, Installation] = {}  # what each framework's processes said
        self.coverage: dict[str, Any] | None = None  # an xdist worker's plugin.coverage summary
        self.partial: list[str] = []  # why the run is not a full run of the corpus (plugin.coverage)
        self.target = path  # the file this run writes, once it knows whether it is partial
        self.not_written: str | None = None  # why the file was left as it was
        self.written_text: str | None = None  # the file's text, once written (or staged: defer_commit)
        self.write_error: OSError | None = None  # why writing it failed at the end
        self.say_partial = True  # conformance run says it itself, with where the reports went
        # conformance run moves the file into place itself, with its reports, as one step
        # (plugin.handover): the file is only written beside its place (staged) here
        self.defer_commit = False
        self.staged: Staged | None = None
        self.journal: Journal | None = None
        self._sigterm: Any = None
        self._locks: list[Path] = []
        self.decided: int | None = None  # items decided before the run (plugin.decided), once known
        self.decided_line: str | None = None

    def claim_output(self) -> None:
        """Check that the results file (and the one for a partial run) can be written and
        lock them for this run (the controller only), or refuse the run (pytest's usage
        error, exit status 4); then start the run's journal beside the file."""
        for path in (self.path, self.partial_path):
            if path is None:
                continue
            what = f"the results file {path}"
            try:
                check_file(path, what)
                acquire(lock_path(path), what, "pytest --conformance-results")
            except OutputError as exc:
                self.release_output()
                raise pytest.UsageError(for_terminal(f"conformance: {exc}")) from None
            self._locks.append(lock_path(path))
        journal = journal_path(self.partial_path or self.path)  # under the lock of the file it is beside
        try:
            check_file(journal, f"the journal of the run {journal}")
        except OutputError as exc:
            self.release_output()
            raise pytest.UsageError(for_terminal(f"conformance: {exc}")) from None
        self.journal = Journal(journal, self.path, self.partial_path, self.frameworks)
        self.journal.open()

    def release_output(self) -> None:
        if self.journal is not None:
            self.journal.close()  # kept when it holds records no results file holds
        if self.staged is not None:  # written and never moved into place
            self.staged.discard()
            self.staged = None
        while self._locks:
            release(self._locks.pop())

    def interrupt_on_sigterm(self) -> None:
        """SIGTERM ends the run like Ctrl-C (pytest's interrupted exit, which keeps the
        previous results file) instead of killing the process mid-run."""
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            self._sigterm = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)

    def restore_sigterm(self) -> None:
        if self._sigterm is not None:
            signal.signal(signal.SIGTERM, self._sigterm)
            self._sigterm = None

    def _take(self, nodeid: str, sent: ItemReport) -> None:
        record = dataclasses.replace(sent.record, nodeid=nodeid)
        if sent.case_info is not None and record.case is not None:
            self.cases.setdefault(record.case, sent.case_info)
        env = sent.framework_env
        if env is not None and record.framework is not None:
            known = self.framework_env.get(record.framework, Installation(version=None, devices=None))
            self.framework_env[record.framework] = Installation(
                version=known.version if env.version is None else env.version,
                devices=known.devices if env.devices is None else env.devices)
        self.records[nodeid] = record

    def take_decided(self, records: dict[str, ItemReport]) -> None:
        """The records of the items decided before the run (plugin.decided), once."""
        if self.decided is not None:
            return
        self.decided = len(records)
        self.decided_line = summary_line(records)
        for nodeid, sent in records.items():
            if nodeid not in self.records:
                self._take(nodeid, sent)
                if self.journal is not None:
                    self.journal.add(nodeid, self.records[nodeid], self.cases, self.framework_env)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        sent = record_of(report)
        if sent is not None and report.nodeid not in self.records:
            self._take(report.nodeid, sent)
        if report.when == "call" and report.nodeid in self.records:
            self.records[report.nodeid] = dataclasses.replace(self.records[report.nodeid],
                                                              duration_s=round(report.duration, 6))
        if report.nodeid not in self.records and report.failed and is_case_nodeid(report.nodeid):
            # a case item that produced no record: its worker crashed (pytest-xdist reports
            # the crash as a failure of the item that was running)
            case_id, framework = split_case_nodeid(report.nodeid)
            self.records[report.nodeid] = unrun_record(case_id, framework, ERROR, report_reason(report),
                                                       report.nodeid)
        if self.journal is not None and report.nodeid in self.records:  # written again only when it changed
            self.journal.add(report.nodeid, self.records[report.nodeid], self.cases, self.framework_env)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # each xdist worker hands over what it collected (they all collect the same)
        summary = (getattr(node, "workeroutput", None) or {}).get(WORKEROUTPUT_KEY)
        if summary is not None and self.coverage is None:
            self.coverage = summary
        records = decided_by_worker(node)
        if records is not None:
            self.take_decided(records)

    def coverage_summary(self, session: pytest.Session) -> dict[str, Any] | None:
        """What the run took of the corpus (plugin.coverage), from the process that collected."""
        summary = self.coverage
        if summary is None:  # not an xdist run: this process collected
            own = session.config.stash.get(coverage_key, None)
            summary = own.summary if own is not None else None
        return summary

    def partial_reasons(self, session: pytest.Session) -> list[str]:
        """Why this run is not a full run of the corpus (plugin.coverage); empty if it is."""
        return partial_reasons(self.coverage_summary(session), len(self.records), self.frameworks)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        terminal = session.config.pluginmanager.get_plugin("terminalreporter") is not None
        if not terminal and self.journal is not None and self.journal.notice:
            print(self.journal.notice, file=sys.stderr)
        if exitstatus in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR):
            self.not_written = "the run did not start"
            return
        if self.decided is None:  # not an xdist run: this process decided (or nothing was)
            self.take_decided(session.config.stash.get(decided_key, {}))
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.decided:
            exitstatus = session.exitstatus = pytest.ExitCode.OK  # every item was decided before the run
        self.partial = self.partial_reasons(session) if exitstatus != pytest.ExitCode.INTERRUPTED else []
        if self.partial and self.partial_path is not None:
            self.target = self.partial_path
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            # a partial file would read as a complete run with fewer cases: the journal keeps them
            self.not_written = f"the run was interrupted after {len(self.records)} items"
            return
        frameworks = {}
        for name in self.frameworks:
            adapter = registry.get_adapter(name)
            # in another environment's child, only what the child said (plugin.collect)
            said = self.framework_env.get(name, Installation(version=None, devices=None))
            here = adapter.version() if child_python() is None else None
            frameworks[name] = Installation(version=said.version if said.version is not None else here,
                                            devices=said.devices)
        self.records = blame_crashes(self.records)
        status = int(exitstatus)
        if status == pytest.ExitCode.OK and any(r.crash is not None for r in self.records.values()):
            status = int(pytest.ExitCode.TESTS_FAILED)  # as CrashLedger makes the session's
        reused = sum(1 for r in self.records.values() if r.reused)
        revision = suite_commit(corpus_roots(session.config))
        run = Run(items=len(self.records), exit_status=status, reused=reused or None,
                  partial=tuple(self.partial) or None, date=run_date(),
                  commit=None if revision is None else Commit(**revision),
                  **corpus_fields(self.coverage_summary(session)))
        claimed = claims()
        try:
            if self.journal is not None:
                for nodeid, record in self.records.items():  # what changed at the end: a crash it is blamed for
                    self.journal.add(nodeid, record, self.cases, self.framework_env)
                self.journal.end(self.target, run, frameworks, claimed)
            text = results_text(results_document(self.records.values(), self.cases, frameworks, claimed, run))
            self.staged = stage_texts({self.target: text})
            self.written_text = text
            if not self.defer_commit:
                if self.journal is not None:
                    self.journal.close()
                # the file into place and the journal gone, as one step (outputs.commit)
                commit_outputs(self.staged, remove=[self.journal.path] if self.journal is not None else [])
                self.staged = None
        except OSError as exc:  # the disk filled during the run, the folder went away, ...
            self._unstage()
            self.write_error = exc
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            if not terminal:
                for line in (self.write_error_line(), self.journal_line()):
                    if line:
                        print(line, file=sys.stderr)
        except KeyboardInterrupt:  # SIGINT or SIGTERM while the file was being written, or held back until it was
            session.exitstatus = pytest.ExitCode.INTERRUPTED
            if self.staged is not None and self.staged.committed:
                self.staged = None  # in place, with the journal gone: the signal waited for that
            else:
                self._unstage()
                self.not_written = "the run was interrupted while its results file was being written"

    def _unstage(self) -> None:
        if self.staged is not None:
            self.staged.discard()
            self.staged = None
        self.written_text = None

    def write_error_line(self) -> str:
        assert self.write_error is not None
        kept = "the previous file is left as it was" if self.target.exists() else "no results file was written"
        return for_terminal(f"conformance: could not write the results file {self.target}: "
                            f"{error_text(self.write_error)}; {kept}", multiline=False)

    def journal_line(self) -> str | None:
        """Where the records of the items that finished are kept, and how to turn them into
        results (None: no item finished)."""
        if self.journal is None:
            return None
        return self.journal.kept_line(len(self.records), self.target if self.journal.ended else None)

    def partial_line(self) -> str | None:
        """One line saying that the run was partial and where its results went."""
        if not self.partial or self.written_text is None:
            return None
        return for_terminal(f"conformance: not a full run of the corpus ({'; '.join(self.partial)}): results "
                            f"written to {self.target}", multiline=False)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.decided_line:
            terminalreporter.write_line(for_terminal(self.decided_line, multiline=False))
        if self.journal is not None and self.journal.notice:
            terminalreporter.write_line(self.journal.notice, yellow=True)
        if self.write_error is not None:
            terminalreporter.write_line(self.write_error_line(), red=True)
            line = self.journal_line()
            if line:
                terminalreporter.write_line(line, red=True)
        if self.not_written:
            terminalreporter.write_line(for_terminal(f"conformance: {self.not_written}; results file {self.target} "
                                                     "left as it was"), yellow=True)
            line = self.journal_line()
            if line and self.say_partial:  # conformance run says it itself
                terminalreporter.write_line(line, yellow=True)
        line = self.partial_line()
        if line and self.say_partial:
            terminalreporter.write_line(line, yellow=True)


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def is_case_nodeid(nodeid: str) -> bool:
    path = nodeid.split("::", 1)[0]
    return path.endswith((".yaml", ".yml")) and "::" in nodeid


def split_case_nodeid(nodeid: str) -> tuple[str, str | None]:
    """``file.yaml::views.view.contiguous[torch]`` -> (case id, framework)."""
    name = nodeid.split("::", 1)[1]
    case_id, _, rest = name.partition("[")
    framework = rest.rstrip("]")
    return case_id, framework if framework in registry.framework_names() else None
