"""What the results plugin wrote in a ``conformance run``, handed to the command that
started pytest: the results text itself (or why it could not be written), where, and why
the run was partial, so that the command summarises and renders its own run, never
whatever the file holds by the time it reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.plugin import results_key


class RunResults:
    """A plugin given to ``pytest.main`` by ``conformance run``."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.path: Path | None = None  # where the plugin wrote them
        self.partial: tuple[str, ...] = ()  # why the run is not a full run of the corpus
        self.write_error: OSError | None = None
        self.args: tuple[str, ...] = ()  # the paths named on the command line

    def pytest_configure(self, config: pytest.Config) -> None:
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            self.args = tuple(config.args)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        recorder = session.config.stash.get(results_key, None)
        if recorder is not None:  # the command's summary says it, with where the reports went
            recorder.say_partial = False

    @pytest.hookimpl(trylast=True)  # after the results plugin wrote the file
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        recorder = session.config.stash.get(results_key, None)
        if recorder is not None:
            self.text, self.write_error = recorder.written_text, recorder.write_error
            self.path, self.partial = recorder.target, tuple(recorder.partial)
