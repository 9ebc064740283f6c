"""Which frameworks and which shard a run selects: ``--frameworks``, ``--modes`` and
``--shard``, checked when the run is configured and applied to the collected items."""

from __future__ import annotations

import pytest

from conformance import registry
from conformance.plugin import selection
from conformance.plugin.collect import CaseErrorItem, CaseItem, collected_key
from conformance.plugin.roots import index_key


def case_framework(item: pytest.Item) -> tuple[bool, str | None]:
    """(whether the item is a case item, its framework if it has one), for -k's selection."""
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
    problem = registry.unknown_frameworks(names)
    if problem:
        raise pytest.UsageError(f"--frameworks: {problem}")
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
