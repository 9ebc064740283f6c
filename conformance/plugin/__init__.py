"""The pytest plugin (entry point ``pytest11: conformance``). Hooks only, each a line into
the module that does the work: ``collect`` (the case nodes and items), ``roots`` (where the
cases are, the session's index), ``frameworks`` (what ``--frameworks``, ``--modes`` and
``--shard`` select), ``decided`` (the items whose outcome is known at collection),
``recorder`` (the results file), ``crashes`` (crashes that came from an
earlier item), ``coverage`` (whether the run is a full run of the corpus), ``selection``
(pytest's own -k, -m, markers), ``configfile`` and ``guard`` (what a project's configuration
may do), ``progress`` and ``handover``; the engine (:mod:`conformance.run.engine`) runs each
item.

Importing this module imports no framework.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any, Generator

import pytest

from conformance.escaping import for_terminal
from conformance.plugin import configfile, decided, guard, selection
from conformance.plugin.collect import (
    CaseDir,
    CaseErrorItem,
    CaseFile,
    CaseItem,
    Collected,
    RefusedFile,
    collected_key,
    markers_key,
    refused_conftest_items,
    sandbox_key,
    store_key,
    store_reads_key,
)
from conformance.plugin.coverage import Coverage, coverage_key
from conformance.plugin.crashes import CrashLedger
from conformance.plugin.frameworks import case_framework, check_selection, select_frameworks, select_shard
from conformance.plugin.recorder import ResultsRecorder, results_key
from conformance.plugin.roots import (
    case_roots,
    checkouts,
    config_warning,
    index_key,
    is_case_file,
    make_index,
    refused_entry,
    unclaimed_folders,
)
from conformance.report.results import carried
from conformance.run.caches import CompilerCaches, open_caches
from conformance.run.sandbox import DEFAULT_TIMEOUT_S, Sandbox
from conformance.run.store import open_store

caches_key = pytest.StashKey[CompilerCaches]()
environ_key = pytest.StashKey[dict[str, "str | None"]]()  # an in-process run's variables before it set them
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
    decided.configure(config)
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
    keyword = selection.deselect_by_keyword(items, config, case_framework)
    try:
        result = yield
    finally:
        if keyword is not None:
            config.option.keyword = keyword
    # after every selection: what is known without running it leaves pytest's run (plugin.decided)
    decided.decide(config, items)
    return result


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    decided.configure_node(node)  # pytest-xdist's controller, for each worker


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
