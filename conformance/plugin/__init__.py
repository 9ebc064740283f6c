"""The pytest plugin (entry point ``pytest11: conformance``). Hooks only; the work is in
:mod:`conformance.plugin.collect`, :mod:`conformance.run.engine` and :mod:`conformance.report.results`.

Importing this module imports no framework.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Generator

import pytest

from conformance import registry
from conformance.claims import claims
from conformance.escaping import for_terminal
from conformance.plugin import configfile, guard, selection
from conformance.plugin.collect import (
    CaseDir,
    CaseErrorItem,
    CaseFile,
    CaseItem,
    Collected,
    RefusedFile,
    case_roots,
    checkouts,
    collected_key,
    config_warning,
    index_key,
    is_case_file,
    make_index,
    markers_key,
    refused_conftest_items,
    refused_entry,
    report_reason,
    sandbox_key,
    store_key,
    store_reads_key,
    unclaimed_folders,
)
from conformance.plugin.coverage import (
    WORKEROUTPUT_KEY,
    Coverage,
    corpus_fields,
    corpus_roots,
    partial_reasons,
    run_date,
    suite_commit,
)
from conformance.report.journal import Journal, journal_path
from conformance.report.outputs import OutputError, Staged, acquire, check_file, error_text, lock_path, release
from conformance.report.outputs import commit as commit_outputs
from conformance.report.results import (
    ERROR,
    carried,
    record_of,
    results_document,
    results_text,
    short,
    stage_texts,
    unrun_record,
)
from conformance.run.caches import CompilerCaches, open_caches
from conformance.run.sandbox import DEFAULT_TIMEOUT_S, Sandbox, child_python
from conformance.run.store import open_store

results_key = pytest.StashKey["ResultsRecorder"]()
caches_key = pytest.StashKey[CompilerCaches]()
environ_key = pytest.StashKey[dict[str, "str | None"]]()  # an in-process run's variables before it set them
coverage_key = pytest.StashKey[Coverage]()
gc_key = pytest.StashKey[bool]()  # collection paused the GC; whether it was enabled before
unclaimed_key = pytest.StashKey[list[str]]()  # why nothing was collected from a named folder


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "conformance: cross-framework case suite")
    group.addoption("--frameworks", metavar="NAMES", default=None,
                    help="comma-separated frameworks to run (default: all known, e.g. torch,numpy)")
    group.addoption("--modes", metavar="MODES", default=None,
                    help="comma-separated: eager (the frameworks as they run by default), compiled (every "
                         "compiled mode: torch_compile, jax_jit, ...), or both (default); with --frameworks, "
                         "the frameworks both select")
    group.addoption("--conformance-results", metavar="PATH", default=None,
                    help="write the results JSON (one record per case item) to PATH")
    group.addoption("--case-timeout", metavar="SECONDS", type=float, default=None,
                    help="per item: an item running longer is an error and its framework process "
                         f"is restarted (default: ini conformance_case_timeout, else {DEFAULT_TIMEOUT_S:g}; "
                         "0 = none)")
    group.addoption("--conformance-partial-results", metavar="PATH", default=None,
                    help="write the results JSON to PATH instead of --conformance-results when the run is not a "
                         "full run of the corpus (a subset of files, items or frameworks, or stopped early)")
    group.addoption("--in-process", action="store_true", default=False,
                    help="run cases inside the pytest process (for --pdb and profilers): no "
                         "protection against a framework crash or hang, no timeout")
    group.addoption("--shard", metavar="K/N", default=None, type=selection.shard_option,
                    help="run only the K-th of N shards of the selected items (1 <= K <= N): a stable partition "
                         "by node id, so the N shards of one command run every item once (conformance merge "
                         "joins their results files)")
    group.addoption("--conformance-reuse", action="store_true", default=False,
                    help="take the outcome of an item whose inputs (the case, the code that runs it, the frameworks' "
                         "versions) have not changed since an earlier run from that run's stored outcome, and store "
                         "the outcomes this run computes (conformance run does, unless --fresh)")
    group.addoption("--conformance-refresh", action="store_true", default=False,
                    help="compute every item, and store the outcomes for later runs that reuse them "
                         "(conformance run --fresh does)")
    group.addoption("--case-folders", action="store_true", default=False,
                    help="every folder named on the command line is a case folder, whatever it holds (its Python "
                         "files refused, never imported); default: a named folder is one when it holds *.yaml "
                         "files and no Python file")
    parser.addini("conformance_paths", type="paths", default=[],
                  help="directories whose *.yaml files are conformance cases")
    parser.addini("conformance_frameworks", type="linelist", default=[],
                  help="the frameworks cases get items for, comma- or line-separated (default: every registered "
                       "one; --frameworks selects among them)")
    parser.addini("conformance_case_timeout", default=str(DEFAULT_TIMEOUT_S),
                  help="per-item timeout in seconds (0 = none)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # the first hook a plugin gets once pytest has settled on its configuration file: one in a
    # case folder refuses the run before any conftest, path or case (conformance.plugin.configfile)
    problem = configfile.refusal(early_config.inipath)
    if problem is not None:
        raise pytest.UsageError(for_terminal(f"conformance: {problem}", multiline=False))
    # before pytest imports the initial conftests: none under a case root is (conformance.plugin.guard)
    guard.install(early_config)


def pytest_configure(config: pytest.Config) -> None:
    # already done, unless this plugin was registered late
    problem = configfile.refusal(config.inipath)
    if problem is not None:
        raise pytest.UsageError(for_terminal(f"conformance: {problem}", multiline=False))
    guard.install(config)
    config.stash[index_key] = make_index(config)
    check_selection(config)
    # the outcomes of earlier runs (run.store), where this run reuses them or refreshes them
    reuse, refresh = config.getoption("conformance_reuse"), config.getoption("conformance_refresh")
    if reuse and refresh:
        raise pytest.UsageError("--conformance-reuse and --conformance-refresh: give one (reuse the stored outcomes, "
                                "or compute every item and store what it gives)")
    config.stash[store_key] = open_store(config.stash[index_key].item_frameworks, checkouts(config),
                                         config_warning(config)) if reuse or refresh else None
    config.stash[store_reads_key] = reuse
    # the compilers' caches of the framework processes, outside every checkout (run.caches)
    caches = config.stash[caches_key] = open_caches(checkouts(config), config_warning(config))
    # the sandbox passes its socket to the child by file descriptor: POSIX only
    in_process = config.getoption("in_process") or os.name != "posix"
    if in_process:  # this process is the framework process: its environment, until the run ends
        config.stash[environ_key] = in_process_environment(caches)
    config.stash[sandbox_key] = None if in_process else Sandbox(case_timeout(config), caches=caches)
    markers = config.stash[markers_key] = selection.Markers(config)
    markers.register(selection.MARKER, "a conformance case item (every case on every framework)")
    roots = case_roots(config)
    if config.getini("conformance_paths") or any(folder.is_case_folder for folder in roots.named):
        markers.register_all(families(roots.roots))  # `pytest --markers` lists them
    config.stash[collected_key] = Collected()
    if not hasattr(config, "workerinput"):  # xdist workers report to the controller
        config.pluginmanager.register(CrashLedger(), "conformance-crashes")
    path = config.getoption("conformance_results")
    if path:  # what the run took of the corpus, for the results file (plugin.coverage)
        coverage = config.stash[coverage_key] = Coverage(config)
        config.pluginmanager.register(coverage, "conformance-coverage")
    if path and not hasattr(config, "workerinput"):  # xdist workers report to the controller
        partial = config.getoption("conformance_partial_results")
        recorder = ResultsRecorder(Path(path), Path(partial) if partial else None,
                                   config.stash[index_key].item_frameworks)
        recorder.claim_output()  # before anything runs: a location it cannot write, or another run's
        config.stash[results_key] = recorder
        config.pluginmanager.register(recorder, "conformance-results")
        recorder.interrupt_on_sigterm()


def in_process_environment(caches: CompilerCaches) -> dict[str, str | None]:
    """Point this process's compilers at the run's caches (an --in-process run is its own
    framework process), and return what to restore at the end of the run. Not TMPDIR: this
    process's own temporary files (pytest's, a browser's) stay where they were, and Python
    keeps the first temporary folder it found for the rest of the process."""
    wanted = {k: v for k, v in caches.environment().items() if k != "TMPDIR"}
    saved = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    return saved


def families(roots: list[Path]) -> list[str]:
    """The families the case roots suggest before anything is read: their sub-folders'
    names (``cases/views`` holds the ``views.*`` cases). Markers for the families the
    collected cases really have are registered as they are met."""
    names: set[str] = set()
    for root in roots:
        try:
            with os.scandir(root) as listing:
                names |= {e.name for e in listing if e.name.isidentifier() and e.is_dir(follow_symlinks=False)}
        except OSError:
            continue
    return sorted(names)


def case_timeout(config: pytest.Config) -> float:
    value = config.getoption("case_timeout")
    if value is None:
        text = config.getini("conformance_case_timeout")
        try:
            value = float(text)
        except ValueError:
            raise pytest.UsageError(f"ini conformance_case_timeout: {text!r} is not a number of seconds") from None
    if value < 0:
        raise pytest.UsageError(f"the case timeout must be 0 (none) or positive, not {value:g}")
    return value


def pytest_unconfigure(config: pytest.Config) -> None:
    sandbox = config.stash.get(sandbox_key, None)
    if sandbox is not None:
        sandbox.close()
    saved = config.stash.get(environ_key, None)
    if saved is not None:
        del config.stash[environ_key]
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    caches = config.stash.get(caches_key, None)
    if caches is not None:
        del config.stash[caches_key]
        caches.close()
    recorder = config.stash.get(results_key, None)
    if recorder is not None:
        del config.stash[results_key]
        recorder.restore_sigterm()
        config.pluginmanager.unregister(recorder)
        recorder.release_output()
    coverage = config.stash.get(coverage_key, None)
    if coverage is not None:
        del config.stash[coverage_key]
        config.pluginmanager.unregister(coverage)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, Any, Any]:
    # Collecting cases makes millions of small objects (YAML values, cases, items) that
    # live for the whole session; CPython's cyclic GC would traverse all of them again and
    # again, which made collecting 10,000 cases take 2.5 times as long. So the GC is paused
    # from the first case folder or case file on (pause_gc), and what was collected is
    # moved out of its sight (gc.freeze) when case items were made, so that the items'
    # runs do not traverse it either. A session that meets no case file (another project
    # in the same environment) keeps its GC as it was.
    try:
        return (yield)
    finally:
        config = session.config
        enabled = config.stash.get(gc_key, None)
        if enabled is not None:
            del config.stash[gc_key]
            collected = config.stash.get(collected_key, None)
            if collected is not None and collected.made:
                gc.freeze()
            if enabled:
                gc.enable()


def pause_gc(config: pytest.Config) -> None:
    """Pause the GC for the rest of the collection (pytest_collection resumes it)."""
    if gc_key not in config.stash:
        config.stash[gc_key] = gc.isenabled()
        gc.disable()


# Case folders: links are never followed and nothing but *.yaml files reaches pytest's
# other plugins (docs/security.md, "Case folders hold only case files").


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # before pytest's Dir (which follows links) and Package (which imports __init__.py)
    roots = case_roots(parent.config)
    if roots.holds(path) or roots.inside(path):
        pause_gc(parent.config)
        return CaseDir.from_parent(parent, path=path)
    return None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # pytest's own collectors, should one reach into a case folder, never see a refused
    # entry (CaseDir makes the refused items): never walk a link, never import a .py
    return True if refused_entry(collection_path, config) is not None else None


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Generator[None, Any, Any]:
    collected = yield
    why = refused_entry(file_path, parent.config)
    if why is not None:
        # A refused entry reaches this hook only when it is named on the command line
        # beyond --confcutdir (CaseDir never offers one): what pytest's other plugins
        # made of it (a Python module, a doctest file) is dropped before it is collected,
        # so nothing is imported or run.
        return [RefusedFile.from_parent(parent, path=file_path, why=why)]
    if is_case_file(file_path, parent.session):
        pause_gc(parent.config)
        # a case file is this plugin's alone: what other plugins made of it (a doctest file
        # under --doctest-glob=*.yaml, another YAML test plugin's items) is dropped, so no
        # text of a case file is ever run as code
        return [CaseFile.from_parent(parent, path=file_path)]
    return collected


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> Generator[None, Any, Any]:
    # a conftest.py the guard refused outside the collected folders still shows, and fails
    refused = guard.refused(config)
    if refused:
        items += refused_conftest_items(session, refused, items)
    config.stash[unclaimed_key] = unclaimed_folders(config, (item.path for item in items))
    select_frameworks(config, items)
    select_shard(config, items)
    # -k naming a framework: evaluated here (plugin.selection), and hidden from pytest's own
    # -k, which runs inside this wrapper, until it is done
    keyword = selection.deselect_by_keyword(items, config, _case_framework)
    try:
        return (yield)
    finally:
        if keyword is not None:
            config.option.keyword = keyword


def _case_framework(item: pytest.Item) -> tuple[bool, str | None]:
    if isinstance(item, CaseItem):
        return True, item.framework
    return isinstance(item, CaseErrorItem), None


MODES = ("eager", "compiled")


def selected_frameworks(config: pytest.Config) -> list[str] | None:
    """The frameworks --frameworks and --modes select (both: those both select); None when
    neither is given."""
    wanted, modes = config.getoption("frameworks"), config.getoption("modes")
    if not wanted and not modes:
        return None
    names = [n.strip() for n in wanted.split(",") if n.strip()] if wanted else registry.framework_names()
    unknown = [n for n in names if n not in registry.framework_names()]
    if unknown:
        raise pytest.UsageError(f"--frameworks: unknown framework(s) {', '.join(unknown)}; "
                                f"known: {', '.join(registry.framework_names())}")
    if modes:
        chosen = [m.strip() for m in modes.split(",") if m.strip()]
        bad = [m for m in chosen if m not in MODES]
        if bad:
            raise pytest.UsageError(f"--modes: unknown mode(s) {', '.join(bad)}; known: {', '.join(MODES)} "
                                    "(a single compiled mode is a framework: --frameworks torch_compile)")
        names = [n for n in names if ("compiled" if registry.compiles(n) else "eager") in chosen]
    return names


def check_selection(config: pytest.Config) -> None:
    """--frameworks and --modes name registered frameworks among the project's, or the run is
    a usage error: said in pytest_configure, by every process (under pytest-xdist the
    controller, which never collects, says it before any worker starts)."""
    names = selected_frameworks(config)
    if names is None:
        return
    project = config.stash[index_key].frameworks
    outside = [n for n in names if project and n not in project]
    if outside and config.getoption("frameworks"):  # they would select no item: the run would say only that
        raise pytest.UsageError(f"--frameworks: {', '.join(outside)} not among this project's frameworks "
                                f"(ini conformance_frameworks: {', '.join(project)}); add them there")


def select_frameworks(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--frameworks and --modes: deselect the case items of the other frameworks (checked in
    pytest_configure: check_selection)."""
    names = selected_frameworks(config)
    if names is None:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (drop if isinstance(item, CaseItem) and item.framework not in names else keep).append(item)
    if drop:
        collected = config.stash.get(collected_key, None)
        if collected is not None:
            collected.by_frameworks += len(drop)
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def select_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--shard K/N: deselect the items of the other shards (selection.in_shard)."""
    shard = config.getoption("shard")
    if shard is None:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (keep if selection.in_shard(item.nodeid, shard) else drop).append(item)
    if drop:
        collected = config.stash.get(collected_key, None)
        if collected is not None:
            collected.by_shard += sum(1 for item in drop if isinstance(item, (CaseItem, CaseErrorItem)))
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    # the controller of an xdist run collects nothing itself: it asks what a worker collected
    config = node.config
    if unclaimed_key not in config.stash:
        root = Path(str(config.rootpath))
        config.stash[unclaimed_key] = unclaimed_folders(config, (root / i.split("::", 1)[0] for i in ids))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    for line in config.stash.get(unclaimed_key, []):
        terminalreporter.write_line(for_terminal(f"conformance: {line}", multiline=False), yellow=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, Any]:
    report = yield
    # Attach the record to the report that decides the item, so that it reaches the
    # xdist controller with the report.
    if isinstance(item, (CaseItem, CaseErrorItem)) and (call.when == "call" or report.outcome != "passed"):
        report.user_properties.append(carried(item.record(report)))
    if isinstance(item, (CaseItem, CaseErrorItem)):
        terminal_safe(report)  # after the record, which keeps the text as it was
    return report


def terminal_safe(report: pytest.TestReport) -> None:
    """What pytest prints about a case item (the failure text, the skip reason, the
    framework's output) is case text and framework messages: through
    :func:`~conformance.escaping.for_terminal`, so that no line of it is a CI command or a
    terminal control sequence."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        report.longrepr = (longrepr[0], longrepr[1], for_terminal(str(longrepr[2])))
    elif longrepr is not None:
        report.longrepr = for_terminal(str(longrepr))
    report.sections = [(for_terminal(title), for_terminal(content)) for title, content in report.sections]


class ResultsRecorder:
    """Collects one record per case item on the controller, keeps each in the run's journal
    as its item finishes (conformance.report.journal), and writes the file at the end."""

    def __init__(self, path: Path, partial_path: Path | None = None, frameworks: list[str] | None = None) -> None:
        self.path = path  # where the results of a full run of the corpus go
        # the frameworks of the run (ini conformance_frameworks), each in the results' environment
        self.frameworks = frameworks if frameworks is not None else registry.framework_names()
        self.partial_path = partial_path if partial_path is not None and partial_path != path else None
        self.records: dict[str, dict[str, Any]] = {}
        self.cases: dict[str, dict[str, Any]] = {}
        self.framework_env: dict[str, dict[str, Any]] = {}
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

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        sent = record_of(report)
        if sent is not None and report.nodeid not in self.records:
            record = dict(sent, nodeid=report.nodeid)
            info, env = record.pop("case_info", None), record.pop("framework_env", None)
            if info is not None:
                self.cases.setdefault(record["case"], info)
            if env is not None:
                known = self.framework_env.setdefault(record["framework"], {})
                known.update({k: v for k, v in env.items() if v is not None})
            self.records[report.nodeid] = record
        if report.when == "call" and report.nodeid in self.records:
            self.records[report.nodeid]["duration_s"] = round(report.duration, 6)
        if report.nodeid not in self.records and report.failed and is_case_nodeid(report.nodeid):
            # a case item that produced no record: its worker crashed (pytest-xdist reports
            # the crash as a failure of the item that was running)
            case_id, framework = split_case_nodeid(report.nodeid)
            record = unrun_record(case_id, framework, ERROR, report_reason(report))
            self.records[report.nodeid] = dict(record, nodeid=report.nodeid)
        if self.journal is not None and report.nodeid in self.records:  # written again only when it changed
            self.journal.add(report.nodeid, self.records[report.nodeid], self.cases, self.framework_env)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # each xdist worker hands over what it collected (they all collect the same)
        summary = (getattr(node, "workeroutput", None) or {}).get(WORKEROUTPUT_KEY)
        if summary is not None and self.coverage is None:
            self.coverage = summary

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
            here = adapter.version() if child_python() is None else None
            frameworks[name] = {"version": here, "devices": None, **self.framework_env.get(name, {})}
        blame_crashes(self.records.values())
        status = int(exitstatus)
        if status == pytest.ExitCode.OK and any("crash" in r for r in self.records.values()):
            status = int(pytest.ExitCode.TESTS_FAILED)  # as CrashLedger makes the session's
        run: dict[str, Any] = {"items": len(self.records), "exit_status": status}
        reused = sum(1 for r in self.records.values() if r.get("reused"))
        if reused:
            run["reused"] = reused
        if self.partial:
            run["partial"] = list(self.partial)
        run.update(corpus_fields(self.coverage_summary(session)))
        run["date"] = run_date()
        revision = suite_commit(corpus_roots(session.config))
        if revision is not None:
            run["commit"] = revision
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
