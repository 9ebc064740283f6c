"""The pytest plugin (entry point ``pytest11: conformance``). Hooks only; the work is in
:mod:`conformance.collect`, :mod:`conformance.engine` and :mod:`conformance.results`.

Importing this module imports no framework.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generator

import pytest

from conformance import registry
from conformance.collect import CaseErrorItem, CaseFile, CaseItem, index_key, make_index
from conformance.results import RECORD_KEY, RESULTS_FORMAT_VERSION, environment, write_atomically

results_key = pytest.StashKey["ResultsRecorder"]()
CASES_PACKAGE_DIR = Path(__file__).resolve().parent / "cases"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "conformance: cross-framework case suite")
    group.addoption("--frameworks", metavar="NAMES", default=None,
                    help="comma-separated frameworks to run (default: all known, e.g. torch,numpy)")
    group.addoption("--conformance-results", metavar="PATH", default=None,
                    help="write the results JSON (one record per case item) to PATH")
    parser.addini("conformance_paths", type="paths", default=[],
                  help="directories whose *.yaml files are conformance cases")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[index_key] = make_index()
    config.addinivalue_line("markers", "conformance: a conformance case item")
    path = config.getoption("conformance_results")
    if path and not hasattr(config, "workerinput"):  # xdist workers report to the controller
        recorder = ResultsRecorder(Path(path))
        config.stash[results_key] = recorder
        config.pluginmanager.register(recorder, "conformance-results")


def pytest_unconfigure(config: pytest.Config) -> None:
    recorder = config.stash.get(results_key, None)
    if recorder is not None:
        del config.stash[results_key]
        config.pluginmanager.unregister(recorder)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    roots = [Path(p) for p in parent.config.getini("conformance_paths")] + [CASES_PACKAGE_DIR]
    if parent.session.isinitpath(file_path) or any(file_path.is_relative_to(r) for r in roots):
        return CaseFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.getoption("frameworks")
    if not wanted:
        return
    names = [n.strip() for n in wanted.split(",") if n.strip()]
    unknown = [n for n in names if n not in registry.framework_names()]
    if unknown:
        raise pytest.UsageError(f"--frameworks: unknown framework(s) {', '.join(unknown)}; "
                                f"known: {', '.join(registry.framework_names())}")
    keep, drop = [], []
    for item in items:
        (drop if isinstance(item, CaseItem) and item.framework not in names else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, Any]:
    report = yield
    # Attach the outcome to the report that decides the item, so that it reaches the
    # xdist controller with the report.
    if isinstance(item, (CaseItem, CaseErrorItem)) and (call.when == "call" or report.outcome != "passed"):
        record = item.record()
        if record is not None:
            report.user_properties.append((RECORD_KEY, record))
    return report


class ResultsRecorder:
    """Collects one record per item on the controller and writes the file at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == RECORD_KEY:
                self.records[report.nodeid] = dict(value, nodeid=report.nodeid)
        if report.nodeid not in self.records and report.outcome != "passed" and report.when != "teardown":
            # an item without an engine outcome (framework missing, crash in an adapter)
            reason = str(report.longrepr)[-2000:] if report.longrepr else ""
            self.records[report.nodeid] = {"nodeid": report.nodeid, "verdict": (
                "skipped" if report.skipped else "error"), "reason": reason}

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        versions = {name: registry.get_adapter(name).version() for name in registry.framework_names()}
        write_atomically(self.path, {
            "format": RESULTS_FORMAT_VERSION,
            "environment": environment(versions),
            "results": [self.records[k] for k in sorted(self.records)],
        })
