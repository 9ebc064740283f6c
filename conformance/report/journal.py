"""The journal of a run: its records, written as its items finish, so that a run whose
results file cannot be written at the end (a full disk) or that never gets there (killed,
interrupted, a crash of the pytest process) keeps what it did.

Where: beside the file the results of a partial run go to (``reports/partial/results.json.journal``
for ``conformance run``), else beside the results file (``<results>.journal``). Only the
process that writes the results file writes it (under pytest-xdist, the controller). When the
results file is moved into place the journal is removed in the same step
(:func:`conformance.report.outputs.commit`); otherwise it stays, and one line says where and
the command that turns it into a results file::

    python -m conformance.report.journal reports/partial/results.json.journal

Format: JSON Lines (UTF-8, one JSON object per line, appended and handed to the system as
each item finishes, fsync'd at most once a second and at the end):

- the first line, the header: ``{"journal": 1, "results_format": 2, "results": "...",
  "partial_results": "..." | null, "frameworks": [...], "pid": ..., "started": "..."}``
  (the two paths relative to the journal's folder);
- one line per finished item: ``{"item": NODE-ID, "record": {...}}``, with ``"case_info"``
  the first time its case is met and ``"framework_env"`` when what its framework's process
  said about itself changed. A later line for the same node id replaces the earlier one
  (an item whose record changed at the end: a crash it is blamed for);
- the last line, once every item has run: ``{"end": {"target": "...", "run": {...},
  "frameworks": {...}, "claims": {...}}}``: what the results file holds besides the records,
  and where it goes.

A journal with its end line gives the very results file the run would have written. One
without (the run stopped) gives a partial run's: its records, and ``run.partial`` saying the
run did not finish; it is written to the partial results file, or, for a run that had none,
never over an existing file (``--out`` names another). A last line cut short (the disk
filled, the process died while writing it) is left out; any other line that is not a journal
line refuses the journal.
"""

from __future__ import annotations

import argparse
import datetime
import errno
import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from conformance.claims import claims as current_claims
from conformance.escaping import for_terminal
from conformance.report.outputs import create_replacing, error_text
from conformance.report.results import (
    RESULTS_FORMAT_VERSION,
    ResultsFileError,
    load_results,
    results_json,
    results_problems,
    write_atomically,
)
from conformance.resultsmodel import CaseInfo, Installation, Record, ResultsDocument, Run, document_from_json, to_json

JOURNAL_FORMAT = 1
SUFFIX = ".journal"
PREVIOUS = ".previous"  # the journal of an earlier run that did not finish, kept by the next run
COMMAND = "python -m conformance.report.journal"
SYNC_EVERY_S = 1.0
MAX_LINE_BYTES = 64 * 2**20
INTERRUPTED_STATUS = 2  # pytest's exit status of an interrupted run


def journal_path(results: Path) -> Path:
    """``reports/partial/results.json`` -> ``reports/partial/results.json.journal``."""
    results = Path(results)
    return results.with_name(results.name + SUFFIX)


class Journal:
    """The journal a run writes (module docstring). A write that fails (a full disk) stops
    the journal, never the run: :attr:`error` says why, :attr:`items` how many items it kept."""

    def __init__(self, path: Path, results: Path, partial_results: Path | None, frameworks: list[str]) -> None:
        self.path = Path(path)
        self.results = Path(results)
        self.partial_results = partial_results
        self.frameworks = list(frameworks)
        self.fd: int | None = None
        self.error: str | None = None  # why it stopped, if it did
        self.notice: str | None = None  # what became of an earlier run's journal
        self.ended = False
        self._kept: dict[str, int] = {}  # node id -> hash of the record text last written
        self._cases: set[str] = set()
        self._envs: dict[str, int] = {}
        self._synced = time.monotonic()

    @property
    def items(self) -> int:
        """The items whose records the journal holds."""
        return len(self._kept)

    def open(self) -> None:
        """Start the journal, replacing whatever is at its name (a link is replaced, never
        followed); the journal of an earlier run that did not finish is kept as
        ``<journal>.previous`` first (:attr:`notice` says so)."""
        self.notice = _keep_previous(self.path)
        try:
            self.fd = create_replacing(self.path)
        except OSError as exc:
            self._stop(exc)
            return
        folder = self.path.parent
        self._line({"journal": JOURNAL_FORMAT, "results_format": RESULTS_FORMAT_VERSION,
                    "results": os.path.relpath(self.results, folder),
                    "partial_results": None if self.partial_results is None
                    else os.path.relpath(self.partial_results, folder),
                    "frameworks": self.frameworks, "pid": os.getpid(),
                    "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})

    def add(self, nodeid: str, record: Record, cases: Mapping[str, CaseInfo],
            envs: Mapping[str, Installation]) -> None:
        """The record of a finished item (again when it changed since)."""
        if self.fd is None:
            return
        text = json.dumps(to_json(record), sort_keys=True)
        if self._kept.get(nodeid) == hash(text):
            return
        extra = ""
        case, framework = record.case, record.framework
        if case is not None and case in cases and case not in self._cases:
            extra += ', "case_info": ' + json.dumps(to_json(cases[case]), sort_keys=True)
        env = envs.get(framework) if framework is not None else None
        env_text = ""
        if framework is not None and env is not None:
            env_text = json.dumps(to_json(env), sort_keys=True)
            if self._envs.get(framework) != hash(env_text):
                extra += ', "framework_env": ' + env_text
        if not self._write(f'{{"item": {json.dumps(nodeid)}, "record": {text}{extra}}}\n'):
            return
        self._kept[nodeid] = hash(text)
        if case is not None and case in cases:
            self._cases.add(case)
        if framework is not None and env is not None:
            self._envs[framework] = hash(env_text)
        if time.monotonic() - self._synced >= SYNC_EVERY_S:
            self.sync()

    def end(self, target: Path, run: Run, frameworks: Mapping[str, Installation], claims: Mapping[str, str]) -> None:
        """The last line: what the results file holds besides the records, and where it
        goes. Then the journal is fsync'd."""
        if self.fd is None:
            return
        if self._line({"end": {"target": os.path.relpath(target, self.path.parent), "run": to_json(run),
                               "frameworks": to_json(frameworks), "claims": dict(claims)}}):
            self.ended = True
        self.sync()

    def sync(self) -> None:
        if self.fd is None:
            return
        try:
            os.fsync(self.fd)
        except OSError as exc:
            self._stop(exc)
        self._synced = time.monotonic()

    def close(self) -> None:
        """Stop writing (the file stays). One that holds no record is removed: there is
        nothing in it to keep."""
        if self.fd is not None:
            self.sync()
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None
        if not self._kept and not self.ended and self.error is None:
            self.remove()

    def remove(self) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def exists(self) -> bool:
        return os.path.isfile(self.path) and not os.path.islink(self.path)

    def kept_line(self, total: int, into: Path | None = None) -> str | None:
        """One line: where the records of the ``total`` items that finished are, and how to
        turn them into a results file (``into``: where that writes them; None: a partial
        run's results). None when no item finished."""
        text = self.kept_text(total, into)
        return None if text is None else for_terminal(f"conformance: {text}", multiline=False)

    def kept_text(self, total: int, into: Path | None = None) -> str | None:
        """:meth:`kept_line` without its ``conformance:``, to end another line."""
        if total == 0 and self.items == 0:
            return None
        if not self.exists():
            why = f" ({self.error})" if self.error else ""
            return f"no journal of the run could be kept{why}: the {_records(total)} that finished {_are(total)} lost"
        held = f"the {_records(self.items)} that finished {_are(self.items)} kept in {self.path}"
        if self.error is not None and self.items < total:
            held = (f"the records of {self.items} of the {total} items that finished are kept in {self.path} (it "
                    f"could not be written further: {self.error})")
        where = f"writes them to {into}" if into is not None else "writes them as the results of a partial run"
        return f"{held}: `{COMMAND} {self.path}` {where}"

    # ----

    def _line(self, data: dict[str, Any]) -> bool:
        return self._write(json.dumps(data, sort_keys=True) + "\n")

    def _write(self, text: str) -> bool:
        if self.fd is None:
            return False
        view = memoryview(text.encode("utf-8", "surrogatepass"))
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            self._stop(exc)
            return False
        return True

    def _stop(self, exc: OSError) -> None:
        self.error = error_text(exc)
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None


def _records(items: int) -> str:
    return "record of the 1 item" if items == 1 else f"records of the {items} items"


def _are(items: int) -> str:
    return "is" if items == 1 else "are"


def _keep_previous(path: Path) -> str | None:
    """An earlier run's journal at ``path`` (a regular file: a link or anything else is
    simply replaced) moves to ``<path>.previous``; the line that says so, or None."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return None
    previous = path.with_name(path.name + PREVIOUS)
    replaced = " (replacing the one kept there before)" if os.path.lexists(previous) else ""
    try:
        os.replace(path, previous)
    except OSError as exc:
        return for_terminal(f"conformance: the journal of an earlier run that did not finish, {path}, could not be "
                            f"kept ({error_text(exc)}): this run's journal replaces it", multiline=False)
    return for_terminal(f"conformance: {path} held the journal of an earlier run that did not finish: kept as "
                        f"{previous}{replaced}; `{COMMAND} {previous}` turns it into results, or delete it",
                        multiline=False)


# ---- reading a journal back: a results document


class JournalError(Exception):
    """A journal that cannot be turned into results: one message per problem."""

    def __init__(self, problems: str | list[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class Recovered:
    """What a journal holds, as the results document it gives."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.header: dict[str, Any] = {}
        self.records: dict[str, dict[str, Any]] = {}
        self.cases: dict[str, dict[str, Any]] = {}
        self.envs: dict[str, dict[str, Any]] = {}
        self.end: dict[str, Any] | None = None
        self.cut = False  # the last line was cut short
        self.modified = datetime.datetime.now(datetime.timezone.utc)

    @property
    def complete(self) -> bool:
        return self.end is not None

    def document(self) -> dict[str, Any]:
        """The results document as JSON, to be checked (:func:`recover`) before it is read:
        the journal is a file anyone may have written."""
        if self.end is not None:
            return results_json(self.records.values(), self.cases, self.end["frameworks"], self.end["claims"],
                                self.end["run"])
        frameworks = {name: {"version": None, "devices": None, **self.envs.get(name, {})}
                      for name in self.header.get("frameworks") or sorted(self.envs)}
        run = {"items": len(self.records), "exit_status": INTERRUPTED_STATUS,
               "partial": [f"the run did not finish: the records of the {len(self.records)} items that finished "
                           f"before it stopped, recovered from its journal {self.path.name}"],
               "date": self.modified.date().isoformat()}
        return results_json(self.records.values(), self.cases, frameworks, current_claims(), run)

    def target(self) -> tuple[Path, bool]:
        """Where its results go, and whether they may replace a file there."""
        folder = self.path.parent
        if self.end is not None:
            return folder / self.end["target"], True
        partial = self.header.get("partial_results")
        if partial is not None:
            return folder / partial, True  # a partial run's file: replaced by another partial run's
        return folder / self.header["results"], False


def read_journal(path: Path) -> Recovered:
    """Read a journal (a regular file, never through a link). Raises :class:`JournalError`."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal: {error_text(exc)}") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise JournalError(f"{path}: not a regular file (a journal is read only as one: give the file itself)")
    found = Recovered(path)
    found.modified = datetime.datetime.fromtimestamp(info.st_mtime, datetime.timezone.utc)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        with os.fdopen(os.open(path, flags), "rb") as fh:
            lines = []
            while True:
                line = fh.readline(MAX_LINE_BYTES + 1)
                if not line:
                    break
                lines.append(line)
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal: {error_text(exc)}") from None
    for number, line in enumerate(lines, 1):
        last = number == len(lines)
        try:
            if len(line) > MAX_LINE_BYTES:
                raise ValueError(f"longer than {MAX_LINE_BYTES:,} bytes")
            data = json.loads(line.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            _take(found, data, number)
        except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
            if last and not line.endswith(b"\n"):
                found.cut = True  # written in part when the run stopped: left out
                continue
            raise JournalError(f"{path}:{number}: not a line of a conformance journal ({exc}); it cannot be turned "
                               "into results") from None
    if not found.header:
        raise JournalError(f"{path}: no journal header (it is empty, or not a journal conformance wrote)")
    return found


def _take(found: Recovered, data: dict[str, Any], number: int) -> None:
    if number == 1:
        if data.get("journal") != JOURNAL_FORMAT or data.get("results_format") != RESULTS_FORMAT_VERSION:
            raise ValueError(f"journal format {data.get('journal')!r} of results format "
                             f"{data.get('results_format')!r}; this tool reads journal format {JOURNAL_FORMAT} of "
                             f"results format {RESULTS_FORMAT_VERSION}")
        if not isinstance(data.get("results"), str):
            raise ValueError("the header names no results file")
        found.header = data
    elif found.end is not None:
        raise ValueError("a line after the end line")
    elif "item" in data:
        nodeid, record = data["item"], data["record"]
        if not isinstance(nodeid, str) or not isinstance(record, dict):
            raise ValueError("an item line without a node id and a record")
        found.records[nodeid] = dict(record, nodeid=nodeid)
        if isinstance(data.get("case_info"), dict) and isinstance(record.get("case"), str):
            found.cases.setdefault(record["case"], data["case_info"])
        if isinstance(data.get("framework_env"), dict) and isinstance(record.get("framework"), str):
            found.envs[record["framework"]] = data["framework_env"]
    elif "end" in data:
        end = data["end"]
        if not (isinstance(end, dict) and isinstance(end.get("target"), str) and isinstance(end.get("run"), dict)
                and isinstance(end.get("frameworks"), dict) and isinstance(end.get("claims"), dict)):
            raise ValueError("an end line without target, run, frameworks and claims")
        found.end = end
    else:
        raise ValueError("neither an item nor the end")


def recover(journal: Path, out: Path | None = None) -> tuple[Path, ResultsDocument, Recovered]:
    """Write the results a journal holds (to ``out``, else where the run would have written
    them: :meth:`Recovered.target`), then remove the journal. Raises :class:`JournalError`
    (nothing written) or ``OSError`` (the write failed; the journal stays)."""
    found = read_journal(journal)
    data = found.document()
    shown, total = results_problems(data)
    if total:
        raise JournalError([f"{journal}: its results would not be a valid results file: {p.text()}" for p in shown])
    document = document_from_json(data)
    target, may_replace = found.target()
    if out is not None:
        target, may_replace = Path(out), True
    if not may_replace and os.path.lexists(target):
        raise JournalError(f"{journal}: the run did not finish and had no file for partial results, so its records "
                           f"never replace {target}; name a new file with --out")
    if may_replace and out is None and not found.complete:
        _refuse_over_a_full_run(journal, target)
    write_atomically(target, document)
    try:
        os.unlink(journal)
    except OSError:
        pass
    return target, document, found


def _refuse_over_a_full_run(journal: Path, target: Path) -> None:
    """The records of a run that did not finish never replace a full run's results."""
    if not os.path.lexists(target):
        return
    try:
        existing = load_results(target)
    except ResultsFileError:
        return  # not a results file this tool reads: nothing of a full run to keep
    if not existing.run.partial:
        raise JournalError(f"{journal}: the run did not finish, and {target} holds the results of a full run, "
                           "which a partial run's never replace; name another file with --out")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description="Write the results a run's journal holds (the records "
                                     "of the items that finished) as a results file, then remove the journal.")
    parser.add_argument("journal", help="the journal, e.g. reports/partial/results.json.journal")
    parser.add_argument("--out", help="the results file to write (default: where the run would have written it)")
    args = parser.parse_args(argv)
    try:
        target, document, found = recover(Path(args.journal), Path(args.out) if args.out else None)
    except JournalError as exc:
        for line in exc.problems:
            print(for_terminal(f"conformance: {line}", multiline=False), file=sys.stderr)
        return 2
    except OSError as exc:
        code = 3 if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT) else 2
        print(for_terminal(f"conformance: could not write the results of {args.journal}: {error_text(exc)}; the "
                           "journal is kept", multiline=False), file=sys.stderr)
        return code
    partial = document.run.partial
    state = f"partial: {'; '.join(partial)}" if partial else "a full run of the corpus"
    cut = "; its last line, cut short when the run stopped, left out" if found.cut else ""
    print(for_terminal(f"conformance: wrote {target} ({document.run.items} items; {state}) from {args.journal}, "
                       f"which is removed{cut}; then: conformance report {target}", multiline=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
