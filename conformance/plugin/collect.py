"""pytest collection nodes for case files: one item per (case, framework).

A file that cannot be loaded, or a case in it that is invalid, becomes an item that fails
with the precise message, instead of a collection error: pytest stops the whole run on
collection errors, and one bad file must not hide the results of the others.

A case folder (a ``conformance_paths`` folder, the packaged corpus, and every folder under
them) is collected by :class:`CaseDir`, never by pytest's own directory collectors: it
follows no link and hands pytest's other plugins only its regular ``*.yaml`` files, so no
Python (a ``test_*.py``, an ``__init__.py``, a doctest file) is ever collected from it.
Each entry a case folder may not hold (:mod:`conformance.load.folders`) becomes one failing
``<name>[refused]`` item, in a :class:`RefusedFile` of its own.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import pytest

from conformance import registry
from conformance.load import folders as casefolder
from conformance.load.reader import duplicate_id
from conformance.model import Case, CaseFormatError, Location
from conformance.outcomes import ERROR, FAIL, Outcome
from conformance.plugin.roots import (
    index_key,
)
from conformance.plugin.selection import Markers
from conformance.report.failure import render_failure
from conformance.report.results import SKIPPED, ItemReport, case_info, installation, outcome_record, unrun_record
from conformance.resultsmodel import Crash, Installation
from conformance.run.engine import not_applicable, run
from conformance.run.sandbox import CrashNote, FrameworkUnavailable, Sandbox, SandboxError, child_python
from conformance.run.store import OutcomeStore
from conformance.source import CaseFormatErrors

outcome_key = pytest.StashKey[Outcome]()
# the framework environment stored with an outcome taken from an earlier run (run.store)
reused_key = pytest.StashKey[dict[str, Any]]()
# this run's store of outcomes, when it reuses them (--conformance-reuse)
store_key = pytest.StashKey[Optional[OutcomeStore]]()
# whether this run takes outcomes from that store (--conformance-reuse) or only puts its own
# there (--conformance-refresh)
store_reads_key = pytest.StashKey[bool]()
lost_key = pytest.StashKey[SandboxError]()
crash_key = pytest.StashKey[CrashNote]()
# the pytest process's framework children; None when cases run in process (--in-process)
sandbox_key = pytest.StashKey["Sandbox | None"]()


# this session's markers (plugin.selection) and what its case files made
markers_key = pytest.StashKey[Markers]()
collected_key = pytest.StashKey["Collected"]()


@dataclass
class Collected:
    """What this session's case files made: the files (absolute paths) and the number of
    items (before pytest's selection by node id or --lf, and before deselection)."""

    files: set[str] = field(default_factory=set)
    made: int = 0
    by_frameworks: int = 0  # case items deselected by --frameworks
    by_shard: int = 0  # case items left to the other shards (--shard)


class CaseDir(pytest.Directory):
    """A case folder. Like pytest's ``Dir``, but it follows no link and lets pytest's
    plugins see only its regular ``*.yaml`` files and real folders: every other entry
    becomes a :class:`RefusedFile`, never a Python module, a package or a doctest file."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        ihook, session = self.ihook, self.session
        for entry in casefolder.entries(self.path):
            path = Path(entry.path)
            try:
                why = casefolder.entry_refusal(entry)
            except OSError:  # its type could not be read: refused, never opened
                why = casefolder.refusal(path)
            if why is not None:
                yield RefusedFile.from_parent(self, path=path, why=why)
            elif entry.is_dir(follow_symlinks=False):
                if not session.isinitpath(path, with_parents=True) and \
                        ihook.pytest_ignore_collect(collection_path=path, config=self.config):
                    continue  # norecursedirs, --ignore, a virtualenv: as pytest's Dir does
                folder = ihook.pytest_collect_directory(path=path, parent=self)
                if folder is not None:
                    yield folder
            else:
                if not session.isinitpath(path) and \
                        ihook.pytest_ignore_collect(collection_path=path, config=self.config):
                    continue
                yield from ihook.pytest_collect_file(file_path=path, parent=self)


class RefusedFile(pytest.File):
    """An entry a case folder may not hold: one failing ``<name>[refused]`` item (CF010)."""

    def __init__(self, *, why: casefolder.Refusal, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.why = why

    def collect(self) -> Iterator[pytest.Item]:
        display = _display_path(self.path, Path(str(self.config.rootpath)))
        error = CaseFormatError(Location(display, 1, 1), self.why.message, self.why.hint, code=casefolder.CODE)
        collected = self.config.stash.get(collected_key, None)
        if collected is not None and not isinstance(self.parent, pytest.Session):  # not refused_conftest_items'
            collected.made += 1
        yield CaseErrorItem.from_parent(self, error=error, marks=self.config.stash[markers_key].for_error(),
                                        **_names(self, self.path.name, "refused"))


def refused_conftest_items(session: pytest.Session, paths: list[Path], items: list[pytest.Item]) -> list[pytest.Item]:
    """Items for the conftest.py files the conftest guard refused that no collected item
    shows yet (one named on the command line was collected by its CaseDir; one in a folder
    above the named paths was not)."""
    shown = {item.path for item in items if isinstance(item, CaseErrorItem) and item.name.endswith("[refused]")}
    new: list[pytest.Item] = []
    for path in paths:
        if path not in shown:
            why = casefolder.refusal(path) or casefolder.Refusal(  # gone since pytest looked
                f"a conftest.py: {casefolder.RULE}", "remove it")
            new += RefusedFile.from_parent(session, path=path, why=why).collect()
    return new


class CaseFailed(Exception):
    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        super().__init__(outcome.reason)


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        index = self.config.stash[index_key]
        markers = self.config.stash[markers_key]
        display = _display_path(self.path, Path(str(self.config.rootpath)))
        result = index.load(self.path, display)
        collected = self.config.stash.get(collected_key, None)
        if collected is not None:
            collected.files.add(os.path.abspath(self.path))
        made = 0
        by_case: dict[str | None, list[CaseFormatError]] = {}  # one item per case, with all its errors
        for case_id, error in result.errors:
            by_case.setdefault(case_id, []).append(error)
        for case_id, errors in by_case.items():
            made += 1
            yield CaseErrorItem.from_parent(self, error=errors[0] if len(errors) == 1 else CaseFormatErrors(errors),
                                            marks=markers.for_error(case_id),
                                            **_names(self, case_id or "<file>", "load"))
        for case in result.cases:
            duplicate = duplicate_id(index.first_seen, case)
            if duplicate is not None:
                made += 1
                yield CaseErrorItem.from_parent(self, error=duplicate, marks=markers.for_error(case.id),
                                                **_names(self, case.id, "duplicate"))
                continue
            case_id = _child_id(self, case.id)
            for framework in index.item_frameworks:
                made += 1
                yield CaseItem.from_parent(self, case=case, framework=framework, name=f"{case.id}[{framework}]",
                                           originalname=case.id, marks=markers.for_case(case, framework),
                                           **_with_params(case_id, framework))
        if collected is not None:
            collected.made += made


def _names(parent: pytest.Collector, base: str, param: str) -> dict[str, Any]:
    """The name of an item ``base[param]``, its ``originalname`` ``base`` and, on a pytest
    with structured node ids (9.x), its node id with ``param`` as the parametrization: as
    a parametrized test function has it, so that an id pytest reads back (``--lf``,
    ``--ff``, ``--sw``: it splits ``[...]`` off as parameters) is this item's."""
    return {"name": f"{base}[{param}]", "originalname": base, **_with_params(_child_id(parent, base), param)}


def _child_id(parent: pytest.Collector, base: str) -> Any:
    parent_id = getattr(parent, "id", None)  # pytest 9's NodeId; earlier node ids are strings
    return parent_id.child(base) if parent_id is not None and hasattr(parent_id, "with_params") else None


def _with_params(child_id: Any, param: str) -> dict[str, Any]:
    return {} if child_id is None else {"nodeid": child_id.with_params(param)}


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, framework: str, originalname: str, marks: Sequence[pytest.Mark] = (),
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.framework = framework
        #: the case id, without the ``[framework]`` of the name (as pytest's Function has it)
        self.originalname = originalname
        self.keywords[framework] = True
        for tag in case.tags:
            self.keywords[tag] = True
        # conformance, the framework, the family, the claims (plugin.selection); -k and -m
        # read them from own_markers, and only the claims are not keywords already
        self.own_markers.extend(marks)
        self.keywords[case.family] = True
        for mark in marks:
            if mark.name.startswith("claim_"):
                self.keywords[mark.name] = mark

    def runtest(self) -> None:
        adapter = registry.get_adapter(self.framework)
        sandbox = self.config.stash[sandbox_key]
        # in another environment's child only the child knows what is installed, and which
        # release (which a versioned override's applicability depends on)
        here = sandbox is None or child_python() is None
        missing = adapter.unavailable() if here else None
        if missing:
            pytest.skip(missing)
        if sandbox is None:  # --in-process
            outcome = run(self.case, adapter)
        else:
            outcome = (not_applicable(self.case, adapter) if here else None) or self._reused() \
                or self._run_in_sandbox(sandbox)
        self.stash[outcome_key] = outcome
        if outcome.verdict in (FAIL, ERROR):
            raise CaseFailed(outcome)
        if outcome.verdict != "pass":
            pytest.skip(outcome.reason)

    def decide(self, written_before: float) -> bool:
        """Whether this item's outcome is known without running it (plugin.decided): not
        applicable, or stored before ``written_before`` by an earlier run with the same inputs
        (:meth:`_reused`), and not a failure (a failing item runs, to fail as it would have).
        The outcome is then in the item's stash, for :meth:`record`."""
        outcome = not_applicable(self.case, registry.get_adapter(self.framework)) \
            or self._reused(written_before, failures=False)
        if outcome is None:
            return False
        self.stash[outcome_key] = outcome
        return True

    def _reused(self, written_before: float | None = None, failures: bool = True) -> Outcome | None:
        """The item's outcome from an earlier run with the same inputs (run.store), if this
        run reuses them and one is stored (before ``written_before``, when given; not a
        failure, unless ``failures``)."""
        store = self.config.stash.get(store_key, None)
        reads = self.config.stash.get(store_reads_key, False)
        found = store.get(self.case, self.framework, written_before) if store is not None and reads else None
        if found is None or (not failures and found[0].verdict in (FAIL, ERROR)):
            return None
        self.stash[reused_key] = found[1]
        return found[0]

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
        else:
            store = self.config.stash.get(store_key, None)
            if store is not None:
                store.put(self.case, self.framework, outcome, sandbox.environments.get(self.framework, {}))
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
        # Not the bare name: pytest shows a domain that ends the node id with its dots as
        # '::' (a test method's 'Class.method'), which made -v print node ids that select
        # nothing (cases/x.yaml::views::view::contiguous[numpy]).
        return self.path, self.case.location.line - 1, f"case {self.case.id}[{self.framework}]"

    def record(self, report: pytest.TestReport | None) -> ItemReport:
        """This item's results record, for the report that decides it (None: decided before
        the run, :meth:`decide`)."""
        outcome = self.stash.get(outcome_key, None)
        lost = self.stash.get(lost_key, None)
        if outcome is not None:
            record = outcome_record(self.case, outcome, self.nodeid)
        elif lost is not None:  # the framework process crashed or hung, or the adapter raised
            record = unrun_record(self.case.id, self.framework, ERROR, lost.reason, self.nodeid)
        else:  # skipped before the engine ran (framework missing), or the adapter raised
            assert report is not None, "an item decided before the run has its outcome"
            record = unrun_record(self.case.id, self.framework, SKIPPED if report.skipped else ERROR,
                                  report_reason(report), self.nodeid)
        crash = self.stash.get(crash_key, None)
        record = dataclasses.replace(record, crash=None if crash is None else crash_record(crash),
                                     reused=True if reused_key in self.stash else None)
        return ItemReport(record, case_info(self.case), self._framework_env())

    def _framework_env(self) -> Installation:
        adapter = registry.get_adapter(self.framework)
        sandbox = self.config.stash[sandbox_key]
        if sandbox is not None and self.framework in sandbox.environments:
            return installation(sandbox.environments[self.framework])
        stored = self.stash.get(reused_key, None)
        if stored:  # as the earlier run's process found it
            return installation(stored)
        if sandbox is not None and child_python() is not None:
            return Installation(version=None, devices=None)  # only the child (which did not start) knows
        return Installation(version=adapter.version(),
                            devices=tuple(adapter.devices()) if adapter.loaded else None)


class CaseErrorItem(pytest.Item):
    """A case file or case that could not be loaded: fails with the loader's message (every
    error of the case, a :class:`CaseFormatErrors`, one after the other)."""

    def __init__(self, *, error: CaseFormatError, originalname: str | None = None,
                 marks: Sequence[pytest.Mark] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.originalname = originalname or self.name.rsplit("[", 1)[0]
        for mark in marks:
            self.own_markers.append(mark)
            self.keywords[mark.name] = mark

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFormatError):
            return excinfo.value.render()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        more = len(self.error.errors) - 1 if isinstance(self.error, CaseFormatErrors) else 0
        return self.path, self.error.location.line - 1, f"invalid case: {self.error.message}" + (
            f" (and {more} more error{'s' if more > 1 else ''})" if more else "")

    def record(self, report: pytest.TestReport) -> ItemReport:
        record = unrun_record(self.name.rsplit("[", 1)[0], None, ERROR, self.error.render(), self.nodeid)
        return ItemReport(dataclasses.replace(record, file=str(self.error.location.file),
                                              line=self.error.location.line))


def crash_record(note: CrashNote) -> Crash:
    """The ``crash`` entry of the record of an item whose crash came from an earlier item."""
    return Crash(reason=note.reason, culprit=None if note.culprit is None else tuple(note.culprit),
                 tried=tuple(tuple(item) for item in note.tried), text=note.text())


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

