"""The progress display of ``conformance run`` on a terminal: one line, rewritten in place,
with items done / total, the outcomes so far (in colour where the terminal has it), the
time elapsed and an estimate of the time left, and the item running; then every failure
with its reason and the command that reruns it from the current folder, and the total
time. Replaces pytest's terminal reporter for that run only (``-p no:terminal``); writes
through pytest's terminal writer, which follows ``PY_COLORS``, ``NO_COLOR``,
``FORCE_COLOR`` and ``TERM=dumb`` as pytest does; works with pytest-xdist (the controller
counts the workers' collections).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import pytest

# pytest's own writer (colours, width), the one its terminal reporter writes with
from _pytest._io import TerminalWriter

from conformance.escaping import for_terminal
from conformance.plugin.recorder import results_key
from conformance.report.results import record_of

# the colour of each outcome in the counts (outcomes of conformance's records and pytest's)
COLOURS = {"pass": "green", "passed": "green", "fail": "red", "failed": "red", "error": "red",
           "skipped": "yellow", "not_applicable": "yellow"}
REDRAW_S = 0.1  # at most ten lines a second; the first and last item always drawn


def duration(seconds: float) -> str:
    """``0:07``, ``1:02:03``: minutes and seconds, with hours when there are any."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def total_time(seconds: float) -> str:
    """As pytest's summary has it: ``0.41s``, ``75.34s (0:01:15)``."""
    text = f"{seconds:.2f}s"
    return text if seconds < 60 else f"{text} ({duration(seconds)})"


def pytest_command(cwd: Path, executable: str = sys.executable) -> list[str]:
    """The command that starts this environment's pytest from ``cwd``: the ``pytest``
    script beside this Python (``.venv/bin/pytest`` when the virtualenv is under
    ``cwd``; ``pytest`` when that is the one on PATH), else ``python -m pytest``."""
    folder = Path(executable).parent
    script = folder / ("pytest.exe" if os.name == "nt" else "pytest")
    if script.is_file():
        found = shutil.which("pytest")
        if found and os.path.realpath(found) == os.path.realpath(script):
            return ["pytest"]
        return [_relative(script, cwd)]
    return [_relative(Path(executable), cwd), "-m", "pytest"]


def _relative(path: Path, cwd: Path) -> str:
    try:
        relative = path.relative_to(cwd)
    except ValueError:
        return str(path)
    return str(relative) if relative.parts and relative.parts[0] != ".." else str(path)


class ProgressDisplay:
    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.tw = TerminalWriter(file=stream)
        self.clock = clock
        self.start = clock()
        self.last_draw = float("-inf")
        self.total: int | None = None
        self.done = 0
        self.outcomes: Counter[str] = Counter()
        self.problems: list[tuple[str, str]] = []  # (nodeid, text)
        self.seen: set[str] = set()
        self.rootpath: Path | None = None
        self.cwd = Path.cwd()

    # ---- the run

    def pytest_configure(self, config: pytest.Config) -> None:
        self.rootpath = Path(str(config.rootpath))
        self.cwd = Path(str(config.invocation_params.dir))

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.start = self.clock()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        self.draw("collected", force=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.total = len(ids)  # every worker collects the same items

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.problems.append((report.nodeid or "<collection>", report.longreprtext))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid in self.seen or not (report.when == "call" or report.outcome != "passed"):
            return
        self.seen.add(report.nodeid)
        self.done += 1
        sent = record_of(report)
        self.outcomes[report.outcome if sent is None else sent.record.outcome] += 1
        if report.failed:
            reason = "" if sent is None else sent.record.reason
            self.problems.append((report.nodeid, reason or report.longreprtext))
        self.draw(report.nodeid.rsplit("::", 1)[-1], force=self.done == self.total)

    # ---- the line

    def counts(self) -> list[tuple[str, str | None]]:
        """The outcomes so far as (text, colour) pieces: ``2 pass``, ``1 fail``."""
        return [(f"{n} {o}", COLOURS.get(o)) for o, n in sorted(self.outcomes.items())]

    def times(self) -> str:
        elapsed = self.clock() - self.start
        text = duration(elapsed)
        if self.total and 0 < self.done < self.total:
            text += f", ETA {duration(elapsed / self.done * (self.total - self.done))}"
        return text

    def draw(self, current: str, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self.last_draw < REDRAW_S:
            return
        self.last_draw = now
        total = self.total or 0
        pieces: list[tuple[str, str | None]] = [(f"[{self.done:>{len(str(total))}}/{total}]", None)]
        for piece in self.counts():
            pieces += [(" ", None), piece]
        pieces.append((f" · {self.times()} · ", None))
        width = shutil.get_terminal_size((100, 20)).columns - 1
        used = sum(len(text) for text, _ in pieces)
        name = for_terminal(current, multiline=False)[:max(0, width - used)]
        line = "".join(self.tw.markup(text, **{colour: True}) if colour else text for text, colour in pieces)
        self.tw.write("\r" + line + name + " " * max(0, width - used - len(name)), flush=True)

    # ---- the end

    def rerun(self, nodeid: str) -> str:
        """The command that reruns ``nodeid`` from the current folder (node ids are
        relative to pytest's rootdir)."""
        path, sep, rest = nodeid.partition("::")
        if self.rootpath is not None and path:
            path = os.path.relpath(self.rootpath / path, self.cwd)
        return shlex.join([*pytest_command(self.cwd), path + sep + rest])

    @pytest.hookimpl(trylast=True)  # after the results recorder, which knows the items decided before the run
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        exitstatus = session.exitstatus  # as the recorder left it: every item decided is a run that passed
        tw = self.tw
        tw.line()
        for nodeid, text in self.problems:  # case text and framework messages
            lines = text.strip().split("\n") or [""]
            tw.write("FAILED ", red=True, bold=True)
            tw.line(for_terminal(nodeid, multiline=False))
            tw.line(f"    {for_terminal(lines[0][:500], multiline=False)}")
            if "::" in nodeid:
                tw.line(f"    rerun: {for_terminal(self.rerun(nodeid), multiline=False)}")
        elapsed = total_time(self.clock() - self.start)
        summary = ", ".join(text for text, _ in self.counts()) or "nothing ran"
        bad = self.problems or exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        tw.line(f"{self.done} items in {elapsed}: {summary}", red=bool(bad), green=not bad, bold=True)
        recorder = session.config.stash.get(results_key, None)
        if recorder is not None and recorder.decided_line:
            tw.line(for_terminal(recorder.decided_line, multiline=False))
        tw.flush()
