"""No ``conftest.py`` under a case folder is ever imported (docs/security.md).

pytest imports ``conftest.py`` files by itself, outside every collection hook: the initial
ones while it parses the command line (``Config._set_initial_conftests``, before
``pytest_configure``; only ``pytest_load_initial_conftests``, which entry-point plugins such
as this one get, runs earlier), then those of each folder as it collects the folder
(``runner.pytest_make_collect_report`` -> ``PytestPluginManager._loadconftestmodules``).
Both go through ``PytestPluginManager._importconftest``, the one place where pytest turns a
conftest path into a module. :func:`install` wraps that method, on this run's plugin
manager only, so that a ``conftest.py`` located under a case root (whatever it is or links
to) is never imported; pytest gets an empty module for it instead, and the refused path
is noted so that the run shows it as a failing ``conftest.py[refused]`` item
(``conformance.plugin.collect.refused_conftest_items``).

``_importconftest`` is private pytest API. If a pytest release removes it or stops calling
it from ``_loadconftestmodules``, :func:`install` cannot intercept anything and refuses the
run instead (a usage error naming the first ``conftest.py`` found under a case root),
rather than let pytest import it. ``tests/test_case_folders.py`` fails on such a release.
"""

from __future__ import annotations

import inspect
import os
import types
from pathlib import Path
from typing import Any, Iterator

import pytest

from conformance.plugin.roots import CaseRoots, case_roots

# the conftest.py paths refused in this run, in the order pytest asked for them (a dict
# used as an ordered set); present once the guard is installed
refused_key = pytest.StashKey[dict[Path, None]]()


def intercepts(manager_class: type) -> bool:
    """Whether this pytest imports every conftest through ``_importconftest(conftestpath,
    ...)`` called from ``_loadconftestmodules``: what :func:`install` relies on."""
    method = getattr(manager_class, "_importconftest", None)
    loader = getattr(manager_class, "_loadconftestmodules", None)
    if not callable(method) or not callable(loader):
        return False
    try:
        first = list(inspect.signature(method).parameters)[1]  # after self
    except (ValueError, TypeError, IndexError):
        return False
    code = getattr(loader, "__code__", None)
    return first == "conftestpath" and code is not None and "_importconftest" in code.co_names


def install(config: pytest.Config) -> None:
    """Keep pytest from importing any conftest.py under this run's case roots. Called from
    ``pytest_load_initial_conftests`` (before the initial conftests) and again, to no
    effect, from ``pytest_configure``."""
    if refused_key in config.stash:
        return
    refused: dict[Path, None] = {}
    config.stash[refused_key] = refused
    roots = case_roots(config)
    manager = config.pluginmanager
    if not intercepts(type(manager)):
        found = next(conftests_under(roots), None)
        if found is not None:
            raise pytest.UsageError(
                f"{found}: a conftest.py in a case folder; this pytest ({pytest.__version__}) no longer has the "
                "PytestPluginManager._importconftest that conformance uses to keep pytest from importing it, so the "
                "run is refused: remove the file (case folders hold only *.yaml case files)")
        return
    original = manager._importconftest

    # The one wrapper of private pytest API: the instance attribute shadows the method for
    # this plugin manager only (pytester's in-process runs each have their own).
    def guarded_importconftest(conftestpath: Any, *args: Any, **kwargs: Any) -> Any:
        path = Path(os.path.abspath(conftestpath))
        if roots.inside(path):
            refused.setdefault(path, None)
            # what pytest records for the folder: a module with no hooks, fixtures or options
            return types.ModuleType("conformance_refused_conftest")
        return original(conftestpath, *args, **kwargs)

    manager._importconftest = guarded_importconftest  # type: ignore[method-assign]


def refused(config: pytest.Config) -> list[Path]:
    """The conftest.py files the guard kept pytest from importing in this run."""
    found: dict[Path, None] = config.stash.get(refused_key, {})
    return list(found)


def conftests_under(roots: CaseRoots) -> Iterator[Path]:
    """Every entry named conftest.py under the roots (a file, a link, anything), through
    real folders only."""
    for root in roots.roots:
        for folder, folders, files in os.walk(root, followlinks=False):
            for name in sorted(folders + files):
                if name == "conftest.py":
                    yield Path(folder, name)
