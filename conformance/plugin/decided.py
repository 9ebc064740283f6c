"""Items decided before the run (issue 33, "Only what changed"; docs/performance.md).

In a run that writes a results file and keeps outcomes (``conformance run``:
``--conformance-reuse`` or ``--conformance-refresh``), an item whose outcome is known once it
is collected does not go through pytest's run at all:

- an item **not applicable** to its framework (the case's override says so, or an operation
  has no counterpart: :func:`conformance.run.engine.not_applicable`, which imports no
  framework) — about 4,900 of the corpus's 11,100 items;
- with ``--conformance-reuse``, an item whose outcome an earlier run with the same inputs
  **stored** (:mod:`conformance.run.store`), unless that outcome is a failure: a failing item
  still runs, to fail in pytest's report as it would have.

Its record (the same one the item would have given, ``reused`` where it came from the store)
goes to the results with the others, and pytest runs only the items left: a re-run with
nothing to compute is pytest's start-up, the collection and the store's reads, not 11,000
passes of pytest's run protocol at about a millisecond each. The terminal says how many were
decided and why; the results file has every item, as before.

What is decided must be the same in every process that collects, since pytest-xdist runs
only when its workers collected the same items: not-applicable is a function of the case and
the adapter, and the store is read as it was when the run started (an entry written later,
by another run, is left for the item to find when it runs). Each xdist worker hands its
decided records to the controller with its collection's summary (``workeroutput``); the
controller takes those of the first worker that reports them.

Not done: in a run that runs cases in process (``--in-process``) or in another interpreter
(``CONFORMANCE_CHILD_PYTHON``: only the child knows what is installed there), and for an item
whose framework is missing (it is skipped as it runs, with the reason).
"""

from __future__ import annotations

import json
import time
from typing import Any, cast

import pytest

from conformance import registry
from conformance.plugin.collect import CaseItem, sandbox_key
from conformance.report.results import ItemReport
from conformance.resultsmodel import from_json, to_json
from conformance.run.sandbox import child_python

WORKEROUTPUT_KEY = "conformance_decided"
WORKERINPUT_KEY = "conformance_store_read_before"
# the store is read as it was a little before the run started: the file system's clock (an
# entry's modification time) runs up to a timer tick (1-10 ms) behind time.time()
CLOCK_MARGIN_S = 0.05


# the records of this process's items decided at collection, by node id
decided_key = pytest.StashKey[dict[str, ItemReport]]()
read_before_key = pytest.StashKey[float]()


def configure(config: pytest.Config) -> None:
    """At pytest_configure: when the store is read as of (the controller's time, under xdist)."""
    workerinput = getattr(config, "workerinput", None)
    given = workerinput.get(WORKERINPUT_KEY) if workerinput is not None else None
    config.stash[read_before_key] = given if isinstance(given, float) else time.time() - CLOCK_MARGIN_S


def configure_node(node: Any) -> None:
    """pytest-xdist's controller, for each worker it starts: the same time for all of them."""
    node.workerinput[WORKERINPUT_KEY] = node.config.stash[read_before_key]


def wanted(config: pytest.Config) -> bool:
    return bool(config.getoption("conformance_results")) and \
        bool(config.getoption("conformance_reuse") or config.getoption("conformance_refresh")) and \
        config.stash.get(sandbox_key, None) is not None and child_python() is None


def decide(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Take the items whose outcome is known out of ``items`` (after every selection), keeping
    their records (:data:`decided_key`); under xdist, into the worker's output for the controller."""
    decided = config.stash[decided_key] = {}
    if not wanted(config):
        return
    before = config.stash[read_before_key]
    missing: dict[str, str | None] = {}
    kept: list[pytest.Item] = []
    for item in items:
        if isinstance(item, CaseItem):
            framework = item.framework
            if framework not in missing:
                missing[framework] = registry.get_adapter(framework).unavailable()
            if not missing[framework] and item.decide(before):
                decided[item.nodeid] = item.record(None)
                continue
        kept.append(item)
    if decided:
        items[:] = kept
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        # as JSON text: execnet carries no int beyond 32 bits, and a record can hold one
        workeroutput[WORKEROUTPUT_KEY] = json.dumps({nodeid: to_json(item) for nodeid, item in decided.items()})


def from_worker(node: Any) -> dict[str, ItemReport] | None:
    """The records an xdist worker decided at collection (None: it said nothing)."""
    text = (getattr(node, "workeroutput", None) or {}).get(WORKEROUTPUT_KEY)
    if not isinstance(text, str):
        return None
    return {nodeid: cast(ItemReport, from_json(ItemReport, item)) for nodeid, item in json.loads(text).items()}


def summary_line(records: dict[str, ItemReport]) -> str | None:
    """What the terminal says of the decided items (None: there were none)."""
    values = list(records.values())
    if not values:
        return None
    reused = sum(1 for item in values if item.record.reused)
    parts = [f"{len(values) - reused} not applicable"]
    if reused:
        parts.append(f"{reused} as an earlier run with the same inputs stored them")
    items = f"{len(values)} item{'s' if len(values) != 1 else ''}"
    return f"conformance: {items} decided before the run ({', '.join(parts)}); their records are in the results file"
