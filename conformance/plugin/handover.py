"""What the results plugin wrote in a ``conformance run``, handed to the command that
started pytest: the results text itself (or why it could not be written), where, and why
the run was partial, so that the command summarises and renders its own run, never
whatever the file holds by the time it reads it.

The plugin only writes the results file beside its place (:attr:`RunResults.staged`); the
command moves it into place together with the reports, as one step
(:func:`conformance.report.outputs.commit`), and removes the run's journal in the same step.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.plugin.recorder import results_key

if TYPE_CHECKING:
    from conformance.report.journal import Journal
    from conformance.report.outputs import Staged


class RunResults:
    """A plugin given to ``pytest.main`` by ``conformance run``."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.path: Path | None = None  # where the plugin wrote them
        self.partial: tuple[str, ...] = ()  # why the run is not a full run of the corpus
        self.write_error: OSError | None = None
        self.args: tuple[str, ...] = ()  # the paths named on the command line
        self.staged: Staged | None = None  # the results file, written beside its place, not yet in it
        self.journal: Journal | None = None  # the run's journal (conformance.report.journal)
        self.items = 0  # the records of the items that finished
        self.written: list[Path] = []  # what the command moves into place

    def pytest_configure(self, config: pytest.Config) -> None:
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            self.args = tuple(config.args)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        recorder = session.config.stash.get(results_key, None)
        if recorder is not None:  # the command's summary says it, with where the reports went
            recorder.say_partial = False
            recorder.defer_commit = True  # the command moves the file into place, with the reports
            self.journal = recorder.journal

    @pytest.hookimpl(trylast=True)  # after the results plugin wrote the file
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        recorder = session.config.stash.get(results_key, None)
        if recorder is not None:
            self.text, self.write_error = recorder.written_text, recorder.write_error
            self.path, self.partial = recorder.target, tuple(recorder.partial)
            self.staged, recorder.staged = recorder.staged, None  # this command's to move or discard now
            self.journal, self.items = recorder.journal, len(recorder.records)

    @property
    def committed(self) -> bool:
        """The results file and the reports are in place (a signal may come right after)."""
        return self.staged is not None and self.staged.committed

    def discard(self) -> None:
        """Remove the results file written beside its place, unless it was moved there."""
        if self.staged is not None and not self.staged.committed:
            self.staged.discard()
            self.staged = None

    def journal_files(self) -> list[Path]:
        """The journal, to be removed when the results file is in place."""
        return [self.journal.path] if self.journal is not None else []

    def journal_text(self) -> str | None:
        """Where the records of the items that finished are kept, and how to turn them into
        results (None: none finished), without ``conformance:``."""
        if self.journal is None:
            return None
        return self.journal.kept_text(max(self.items, self.journal.items), self.path if self.journal.ended else None)
