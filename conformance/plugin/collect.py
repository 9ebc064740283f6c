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

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import pytest

from conformance import registry
from conformance.load import folders as casefolder
from conformance.load.cache import CaseCache, load_through, make_cache
from conformance.load.reader import LoadResult, Vocabulary, duplicate_id
from conformance.model import Case, CaseFormatError, Location
from conformance.outcomes import ERROR, FAIL, Outcome
from conformance.plugin.selection import Markers
from conformance.report.failure import render_failure
from conformance.report.results import SKIPPED, case_info, outcome_record, unrun_record
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


CASE_SUFFIXES = casefolder.CASE_SUFFIXES
# the corpus installed with the package (conformance.cases), collected wherever it is
CASES_PACKAGE_DIR = Path(__file__).resolve().parent.parent / "cases"
roots_key = pytest.StashKey["CaseRoots"]()
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


@dataclass
class CaseIndex:
    """Session-wide: the vocabulary, the cache of loaded files, and where each case id was
    first seen."""

    vocabulary: Vocabulary
    cache: CaseCache | None = None
    first_seen: dict[str, Location] = field(default_factory=dict)
    # the frameworks each case gets an item for: ini conformance_frameworks, else every one
    # registered (the vocabulary's: what a case file may name)
    frameworks: list[str] = field(default_factory=list)

    @property
    def item_frameworks(self) -> list[str]:
        return self.frameworks or list(self.vocabulary.frameworks)

    def load(self, path: Path, display: str) -> LoadResult:
        return load_through(self.cache, path, display, self.vocabulary)


def make_index(config: pytest.Config | None = None) -> CaseIndex:
    """The session's index. With ``config``, the case cache must lie outside its checkout
    (rootdir, case folders, the folders named on the command line; casecache adds the
    current folder's git work tree), and a refused cache folder is one PytestConfigWarning
    (a line on stderr where pytest would not show it), said by the controller of an xdist
    run only."""
    vocabulary = registry.vocabulary()
    if config is None:
        return CaseIndex(vocabulary, make_cache(vocabulary))
    return CaseIndex(vocabulary, make_cache(vocabulary, checkouts(config), config_warning(config)),
                     frameworks=configured_frameworks(config))


def checkouts(config: pytest.Config) -> list[Path]:
    """The folders no cache of this run may be inside (a pull request could put files
    there): rootdir, the case folders, the folders named on the command line (the caches
    add the current folder's git work tree)."""
    invoked = Path(str(config.invocation_params.dir))
    named = [invoked / arg.split("::", 1)[0] for arg in config.args]
    return [Path(str(config.rootpath)), CASES_PACKAGE_DIR,
            *(Path(p) for p in config.getini("conformance_paths")),
            *(p if p.is_dir() else p.parent for p in named)]


def config_warning(config: pytest.Config) -> Callable[[str], None]:
    """How a cache refused for this run is said: one PytestConfigWarning (a line on stderr
    where pytest would not show it), by the controller of an xdist run only."""

    def warn(message: str) -> None:
        if hasattr(config, "workerinput"):  # the controller says it
            return
        shown = not any(config.pluginmanager.is_blocked(p) for p in ("warnings", "terminal"))
        try:
            if shown:
                config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)
                return
        except pytest.PytestConfigWarning:  # -W error: still only a warning
            pass
        print(f"conformance: {message}", file=sys.stderr)

    return warn


def configured_frameworks(config: pytest.Config) -> list[str]:
    """ini ``conformance_frameworks``: the frameworks a project runs its cases on (an empty
    list: every registered one). ``--frameworks`` then selects among them."""
    names = [n.strip() for n in ",".join(config.getini("conformance_frameworks")).split(",") if n.strip()]
    unknown = [n for n in names if n not in registry.framework_names()]
    if unknown:
        raise pytest.UsageError(f"ini conformance_frameworks: unknown framework(s) {', '.join(unknown)}; "
                                f"known: {', '.join(registry.framework_names())}")
    return names


index_key = pytest.StashKey[CaseIndex]()


@dataclass(frozen=True)
class NamedFolder:
    """A folder named on the command line outside every configured case root, and what it
    holds."""

    path: Path
    contents: casefolder.Contents
    forced: bool = False  # --case-folders: a case folder whatever it holds

    @property
    def is_case_folder(self) -> bool:
        """A case root: it holds case files and no Python (or --case-folders says so)."""
        return self.forced or (self.contents.case_file is not None and self.contents.python is None)


class CaseRoots:
    """The case roots of a run: the ``conformance_paths`` folders, the packaged corpus, and
    the folders named on the command line that hold case files and no Python (pytest's
    convention: a folder named on the command line is collected). Every folder under a root
    is a case folder; a folder or file named on the command line is in one when it is under
    a root."""

    def __init__(self, roots: list[Path], named: Sequence[NamedFolder] = ()) -> None:
        self.configured = [Path(os.path.abspath(root)) for root in roots]
        self.named = list(named)
        self.roots = self.configured + [folder.path for folder in self.named if folder.is_case_folder]
        self._real: list[Path] | None = None

    def holds(self, path: Path) -> bool:
        """Whether ``path`` is a root or under one, as written."""
        path = Path(os.path.abspath(path))
        return any(path == root or root in path.parents for root in self.roots)

    def inside(self, path: Path) -> bool:
        """Whether ``path`` is an entry somewhere under a root (not a root itself), as
        written or once the links of its folder are resolved (a folder reached through a
        link made outside the case folders is still that case folder)."""
        path = Path(os.path.abspath(path))
        if any(root in path.parents for root in self.roots):
            return True
        if self._real is None:
            self._real = [Path(os.path.realpath(root)) for root in self.roots]
        try:
            folder = Path(os.path.realpath(path.parent))
        except (OSError, RuntimeError):
            return False
        return any(folder == root or root in folder.parents for root in self._real)


def case_roots(config: pytest.Config) -> CaseRoots:
    """This run's case roots (read once: the conftest guard asks before pytest_configure)."""
    roots = config.stash.get(roots_key, None)
    if roots is None:
        configured = CaseRoots([Path(p) for p in config.getini("conformance_paths")] + [CASES_PACKAGE_DIR])
        roots = CaseRoots(configured.configured, named_folders(config, configured))
        config.stash[roots_key] = roots
    return roots


def named_paths(config: pytest.Config) -> list[Path]:
    """The paths named on the command line (without their ``::`` parts), known before the
    initial conftests are imported; none with ``--pyargs``."""
    namespace = getattr(config, "known_args_namespace", None)
    params = getattr(config, "invocation_params", None)
    if namespace is None or params is None or getattr(namespace, "pyargs", False):
        return []
    invoked = Path(str(params.dir))
    return [invoked / str(arg).split("::", 1)[0] for arg in getattr(namespace, "file_or_dir", None) or []]


def named_folders(config: pytest.Config, configured: CaseRoots) -> list[NamedFolder]:
    """The folders named on the command line that may be case roots, with what each holds
    (breadth first, links not followed, ``norecursedirs`` left out, up to the first Python
    file). Not one under a configured root (it is in a case folder already), nor the
    folder of pytest's configuration file or a folder above it or above a configured root:
    that is the project that holds the case folders, not one."""
    namespace = getattr(config, "known_args_namespace", None)
    forced = bool(getattr(namespace, "case_folders", False))
    folders: list[NamedFolder] = []
    named = named_paths(config)
    if not named:
        return folders
    inipath = getattr(config, "inipath", None)
    project = Path(os.path.abspath(inipath)).parent if inipath else None
    patterns = [str(p) for p in config.getini("norecursedirs")]
    for path in named:
        path = Path(os.path.abspath(path))
        if configured.holds(path) or os.path.islink(path) or not path.is_dir():
            continue
        if project is not None and (path == project or path in project.parents):
            continue  # the folder of the configuration file, or above it: the project
        if any(path in root.parents for root in configured.roots):
            continue
        if any(folder.path == path for folder in folders):
            continue
        contents = casefolder.survey(path, lambda name: any(fnmatch.fnmatch(name, p) for p in patterns))
        folders.append(NamedFolder(path, contents, forced))
    return folders


def unclaimed_folders(config: pytest.Config, collected: Iterable[Path]) -> list[str]:
    """For each folder named on the command line that is no case root and from which
    nothing was collected, unless it is a folder of Python tests without YAML: why (one
    line each)."""
    lines: list[str] = []
    # a folder of Python tests with no YAML is pytest's business, not this plugin's
    candidates = [f for f in case_roots(config).named
                  if not f.is_case_folder and (f.contents.yaml_files or f.contents.python is None)]
    if not candidates:
        return lines
    paths = [Path(os.path.abspath(p)) for p in collected]
    for folder in candidates:
        contents = folder.contents
        if any(p == folder.path or folder.path in p.parents for p in paths):
            continue
        if contents.python is not None and contents.case_file is not None:
            why = (f"it holds Python files ({contents.python}) as well as case files, so it is no case folder "
                   "and pytest collects it as a folder of Python tests; to run its cases, name the case files or "
                   "the folders that hold only them, add it to conformance_paths (-o conformance_paths=FOLDER), "
                   "or pass --case-folders (its Python files are then refused, never imported)")
        elif contents.yaml_files:
            why = ("none of the *.yaml files read in it (the first 20) looks like a case file, with a top-level "
                   "'cases:' list, so it is no case folder")
        else:
            why = ("it holds no case file (*.yaml or *.yml; links are not followed, and folders pytest skips, "
                   "norecursedirs, are not looked into)")
        lines.append(f"nothing collected from {folder.path}: {why}")
    return lines


def is_case_file(path: Path, session: pytest.Session) -> bool:
    """A YAML file named on the command line, or under a ``conformance_paths`` folder."""
    if path.suffix not in CASE_SUFFIXES:
        return False
    return session.isinitpath(path) or case_roots(session.config).holds(path)


def refused_entry(path: Path, config: pytest.Config) -> casefolder.Refusal | None:
    """Why ``path`` is refused, when it is an entry under a case root that a case folder
    may not hold (``lstat`` only: never followed, never opened); None otherwise."""
    if not case_roots(config).inside(path):
        return None
    return casefolder.refusal(path)


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

    def _reused(self) -> Outcome | None:
        """The item's outcome from an earlier run with the same inputs (run.store), if this
        run reuses them and one is stored."""
        store = self.config.stash.get(store_key, None)
        reads = self.config.stash.get(store_reads_key, False)
        found = store.get(self.case, self.framework) if store is not None and reads else None
        if found is None:
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
        if reused_key in self.stash:
            data["reused"] = True
        data["case_info"] = case_info(self.case)
        data["framework_env"] = self._framework_env()
        return data

    def _framework_env(self) -> dict[str, Any]:
        adapter = registry.get_adapter(self.framework)
        sandbox = self.config.stash[sandbox_key]
        if sandbox is not None and self.framework in sandbox.environments:
            return dict(sandbox.environments[self.framework])
        stored = self.stash.get(reused_key, None)
        if stored:  # as the earlier run's process found it
            return {**stored}
        if sandbox is not None and child_python() is not None:
            return {"version": None, "devices": None}  # only the child (which did not start) knows
        return {"version": adapter.version(), "devices": adapter.devices() if adapter.loaded else None}


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

