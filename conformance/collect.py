"""pytest collection nodes for case files: one item per (case, framework).

A file that cannot be loaded, or a case in it that is invalid, becomes an item that fails
with the precise message, instead of a collection error: pytest stops the whole run on
collection errors, and one bad file must not hide the results of the others.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from conformance import registry
from conformance.casecache import CaseCache, load_through, make_cache
from conformance.engine import ERROR, FAIL, Outcome, not_applicable, run
from conformance.loader import LoadResult, Vocabulary
from conformance.model import Case, CaseFormatError, Location
from conformance.preload import Preloader, possible, worth_it
from conformance.render import render_failure
from conformance.results import SKIPPED, case_info, outcome_record, unrun_record
from conformance.sandbox import CrashNote, FrameworkUnavailable, Sandbox, SandboxError

outcome_key = pytest.StashKey[Outcome]()
lost_key = pytest.StashKey[SandboxError]()
crash_key = pytest.StashKey[CrashNote]()
# the pytest process's framework children; None when cases run in process (--in-process)
sandbox_key = pytest.StashKey["Sandbox | None"]()


CASE_SUFFIXES = (".yaml", ".yml")
# the corpus installed with the package (conformance.cases), collected wherever it is
CASES_PACKAGE_DIR = Path(__file__).resolve().parent / "cases"


@dataclass
class CaseIndex:
    """Session-wide: the vocabulary, the cache of loaded files, the helper loading files
    during collection, and where each case id was first seen."""

    vocabulary: Vocabulary
    cache: CaseCache | None = None
    preloader: Preloader | None = None
    first_seen: dict[str, Location] = field(default_factory=dict)

    def load(self, path: Path, display: str) -> LoadResult:
        if self.preloader is not None:
            result = self.preloader.take(path)
            if result is not None:
                return result
        return load_through(self.cache, path, display, self.vocabulary)


def make_index() -> CaseIndex:
    vocabulary = registry.vocabulary()
    return CaseIndex(vocabulary, make_cache(vocabulary))


index_key = pytest.StashKey[CaseIndex]()


def is_case_file(path: Path, session: pytest.Session) -> bool:
    """A YAML file named on the command line, or under a ``conformance_paths`` folder."""
    if path.suffix not in CASE_SUFFIXES:
        return False
    roots = [Path(p) for p in session.config.getini("conformance_paths")] + [CASES_PACKAGE_DIR]
    return session.isinitpath(path) or any(path.is_relative_to(r) for r in roots)


def start_preloader(session: pytest.Session) -> None:
    """Start a helper loading the case files this collection will read, when it pays
    (conformance.preload.possible and worth_it)."""
    worker = getattr(session.config, "workerinput", None)  # set on xdist workers
    if not possible(collecting_processes=int(worker.get("workercount", 1)) if worker else 1):
        return
    index = session.config.stash[index_key]
    root = Path(str(session.config.rootpath))
    sizes: dict[tuple[str, str], int] = {}
    for path in case_files(session):
        try:
            sizes[(str(path), _display_path(path, root))] = path.stat().st_size
        except OSError:  # gone since the listing: pytest's own load will say so
            continue
    # sizes first: a corpus too small for a helper even uncached (the usual case) is not
    # read here only to be read again when pytest loads it
    if not worth_it(sum(sizes.values())):
        return
    files = [file for file in sizes if index.cache is None or not index.cache.holds(*file)]
    if files and worth_it(sum(sizes[file] for file in files)):
        index.preloader = Preloader(files, index.vocabulary, index.cache)
        index.preloader.start()


def stop_preloader(session: pytest.Session) -> None:
    index = session.config.stash[index_key]
    if index.preloader is not None:
        index.preloader.close()
        index.preloader = None


def case_files(session: pytest.Session) -> list[Path]:
    """The case files of the command line's paths, in the order pytest collects them (each
    folder's entries sorted by name, as pytest's Dir collector does). Only a guess made
    before pytest walks the folders: a file pytest skips costs the helper some work, a
    file missed here is loaded by the pytest process; neither changes a result."""
    config = session.config
    skip = config.getini("norecursedirs")
    found: list[Path] = []

    def walk(folder: Path) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):  # a link is left to pytest (it could loop)
                # pytest skips these, and a virtualenv (which has a pyvenv.cfg) unless asked
                if not any(fnmatch.fnmatch(entry.name, pattern) for pattern in skip) and \
                        not (path / "pyvenv.cfg").is_file():
                    walk(path)
            elif entry.is_file() and is_case_file(path, session):
                found.append(path)

    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        if path.is_dir():
            walk(path)
        elif path.is_file() and is_case_file(path, session):
            found.append(path)
    return found


class CaseFailed(Exception):
    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        super().__init__(outcome.reason)


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        index = self.config.stash[index_key]
        display = _display_path(self.path, Path(str(self.config.rootpath)))
        result = index.load(self.path, display)
        for case_id, error in result.errors:
            yield CaseErrorItem.from_parent(self, name=f"{case_id or '<file>'}[load]", error=error)
        for case in result.cases:
            first = index.first_seen.setdefault(case.id, case.location)
            if first is not case.location:
                error = CaseFormatError(case.location, f"duplicate case id {case.id!r} (first defined at {first})",
                                        "give each case a unique id")
                yield CaseErrorItem.from_parent(self, name=f"{case.id}[duplicate]", error=error)
                continue
            for framework in index.vocabulary.frameworks:
                yield CaseItem.from_parent(self, name=f"{case.id}[{framework}]", case=case, framework=framework)


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, framework: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.framework = framework
        self.keywords[framework] = True
        for tag in case.tags:
            self.keywords[tag] = True

    def runtest(self) -> None:
        adapter = registry.get_adapter(self.framework)
        missing = adapter.unavailable()
        if missing:
            pytest.skip(missing)
        sandbox = self.config.stash[sandbox_key]
        if sandbox is None:  # --in-process
            outcome = run(self.case, adapter)
        else:
            outcome = not_applicable(self.case, adapter) or self._run_in_sandbox(sandbox)
        self.stash[outcome_key] = outcome
        if outcome.verdict in (FAIL, ERROR):
            raise CaseFailed(outcome)
        if outcome.verdict != "pass":
            pytest.skip(outcome.reason)

    def _run_in_sandbox(self, sandbox: Sandbox) -> Outcome:
        try:
            outcome = sandbox.run(self.case, self.framework)
        except FrameworkUnavailable as exc:
            pytest.skip(str(exc))
        except SandboxError as exc:
            self.stash[lost_key] = exc
            raise
        finally:
            output = sandbox.new_output()
            if output:
                self.add_report_section("call", f"{self.framework} output", output)
        if sandbox.last_crash is not None:  # the crash at this item came from an earlier one
            self.stash[crash_key] = sandbox.last_crash
            self.add_report_section("call", "crash", sandbox.last_crash.text())
        return outcome

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            return render_failure(self.case, excinfo.value.outcome)
        if isinstance(excinfo.value, SandboxError):
            lost = excinfo.value
            text = f"{self.case.id}[{self.framework}] ({self.case.location}): {lost.reason}"
            return text + ("\n" + lost.details if lost.details else "")
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.location.line - 1, f"{self.case.id}[{self.framework}]"

    def record(self, report: pytest.TestReport) -> dict[str, Any]:
        """This item's results record, for the report that decides it."""
        outcome = self.stash.get(outcome_key, None)
        lost = self.stash.get(lost_key, None)
        if outcome is not None:
            data = outcome_record(self.case, outcome)
        elif lost is not None:  # the framework process crashed or hung, or the adapter raised
            data = unrun_record(self.case.id, self.framework, ERROR, lost.reason)
        else:  # skipped before the engine ran (framework missing), or the adapter raised
            data = unrun_record(self.case.id, self.framework, SKIPPED if report.skipped else ERROR,
                                report_reason(report))
        crash = self.stash.get(crash_key, None)
        if crash is not None:
            data["crash"] = crash_record(crash)
        data["case_info"] = case_info(self.case)
        data["framework_env"] = self._framework_env()
        return data

    def _framework_env(self) -> dict[str, Any]:
        adapter = registry.get_adapter(self.framework)
        sandbox = self.config.stash[sandbox_key]
        if sandbox is not None and self.framework in sandbox.environments:
            return dict(sandbox.environments[self.framework])
        return {"version": adapter.version(), "devices": adapter.devices() if adapter.loaded else None}


class CaseErrorItem(pytest.Item):
    """A case file or case that could not be loaded: fails with the loader's message."""

    def __init__(self, *, error: CaseFormatError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFormatError):
            return excinfo.value.render()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.error.location.line - 1, f"invalid case: {self.error.message}"

    def record(self, report: pytest.TestReport) -> dict[str, Any]:
        data = unrun_record(self.name.rsplit("[", 1)[0], None, ERROR, self.error.render())
        data["file"], data["line"] = str(self.error.location.file), self.error.location.line
        return data


def crash_record(note: CrashNote) -> dict[str, Any]:
    """The ``crash`` entry of the record of an item whose crash came from an earlier item."""
    return {"reason": note.reason, "culprit": None if note.culprit is None else list(note.culprit),
            "tried": [list(item) for item in note.tried], "text": note.text()}


def report_reason(report: pytest.TestReport) -> str:
    """One line for a report without an engine outcome: the skip reason, or the last line
    of the failure (pytest-xdist's 'worker crashed' message for a crash)."""
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return report.longreprtext.strip().splitlines()[-1] if report.longreprtext.strip() else report.outcome


def _display_path(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)

