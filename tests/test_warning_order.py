"""A warning expectation does not depend on which cases ran before it in the same process.

Frameworks warn some things once per process, and every such mechanism would otherwise let
one item decide what a later item sees:

- torch: ``TORCH_WARN_ONCE`` keeps "already warned" in a C++ static of its call site
  (``x.T`` of a 3-D tensor, ``torch.from_numpy`` of a read-only array); the torch adapter
  runs items with ``torch.set_warn_always(True)`` ("torch.warn_always");
- Paddle: ``paddle.tensor.creation._warned_in_tensor`` (``paddle.to_tensor`` of a Tensor);
  reset to False for every item ("paddle.warned_flags");
- Python: the warning registries (``__warningregistry__`` of each module, the once
  registry) and the filters; reset and restored around every item by the base adapter
  ("python.warnings").

What is tested, for every corpus case with a warning expectation on each framework it
applies to:
- its result (verdict and the warnings of the expected step) is the one it has run first in
  a fresh process, with none of these resets (one subprocess per framework, a fork per case);
- run twice in a row, after every other warning case (the warning cases in order, then in
  reverse order), and after the whole corpus, in one
  process (in-process engine runs on the real adapters), it is the same;
- through pytest in the sandbox, two orders of the same warning cases give the same records;
- controls: with a mechanism's reset taken out of the adapter's state list, the order
  dependence comes back (for pytest: in process, with all three taken out).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import re
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import pytest
from corpus_cases import corpus

from conformance import registry
from conformance.model import Case, ResultKey
from conformance.run.engine import FAIL, PASS, Outcome, not_applicable, run
from conformance.tools import contract_cases

pytestmark = pytest.mark.slow(reason="a subprocess per framework for the fresh-process baseline, "
                                     "the warning cases on every framework and mode")

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FRAMEWORKS = list(registry.BUILTIN)
WARNING_STATES = {"python.warnings", "torch.warn_always", "paddle.warned_flags"}


def installed(framework: str) -> bool:
    return registry.get_adapter(framework).unavailable() is None


def warning_items() -> list[tuple[Case, str]]:
    """(case, framework) for every corpus case whose expectation for that framework has a
    warning, where the case applies (decided without importing the framework); of the cases
    generated from torch's declared contracts (cases/contracts/, one per operator and layout),
    the first per framework, file and warning: they repeat one warning's call site per operator
    (torch's resize of an out= tensor, paddle.jit's "In static graph mode, <op>_() is the same
    as <op>()"), 290 items that would take this file's fresh-process baseline past its time."""
    items, generated = [], set()
    for case in corpus():
        for fw in FRAMEWORKS:
            warning = case.expect_for(fw, registry.lineage(fw)).checks.get("warning")
            if warning is None or not_applicable(case, registry.get_adapter(fw)) is not None:
                continue
            if case.location.file in GENERATED:
                said = (fw, case.location.file, _call_site(warning.match, case.id))
                if said in generated:
                    continue
                generated.add(said)
            items.append((case, fw))
    return items


GENERATED = set(contract_cases.FILES.values())


def _call_site(match: str, case_id: str) -> str:
    """A generated case's expected warning with its operator's name taken out (the id's
    fourth part: contracts.torch.<kind>.<operator>.<layout>), and the words after its
    fourth (matches are prefixes of different lengths)."""
    operator = case_id.split(".")[3]
    return " ".join(match.replace(re.escape(operator), "<op>").replace(operator, "<op>").split()[:4])


ITEMS = [(case.id, fw) for case, fw in warning_items()]


def result(outcome: Outcome) -> tuple[str, Any]:
    """What a warning expectation decides on: the verdict, and the warnings the expected
    step recorded."""
    return outcome.verdict, outcome.observed.get(ResultKey("warning"))


def case_by_id(case_id: str) -> Case:
    return next(c for c in corpus() if c.id == case_id)


# ---- the fresh-process baseline

def fresh_results(framework: str) -> dict[str, list]:
    """In this process (a new one): import the framework, then run each warning case of
    the framework in a fork of it, so that each is the first case its process runs. The
    adapter's resets are taken out: this is what a fresh process does, not what the suite
    makes of it.

    Not for a compiled mode: its item runs the case eagerly before compiling it, so even
    the first item of a process has a warning given once a process (torch's
    TORCH_WARN_ONCE, x.T of a 3-D tensor) already used up when the compiled call runs;
    without the resets the compiled run would never see it. A mode's baseline is its first
    item in a fresh process with the adapter's resets, which is what the suite runs."""
    adapter = registry.get_adapter(framework)
    adapter.setup()
    if not registry.compiles(framework):
        states = [replace(state, reset=None) for state in adapter.global_states()]
        adapter.global_states = lambda: states
    results = {}
    for case, fw in warning_items():
        if fw != framework:
            continue
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read)
            try:
                os.write(write, json.dumps(result(run(case, adapter))).encode())
            finally:
                os._exit(0)
        os.close(write)
        data = b""
        while chunk := os.read(read, 1 << 16):
            data += chunk
        os.close(read)
        os.waitpid(pid, 0)
        results[case.id] = json.loads(data)
    return results


@pytest.fixture(scope="module")
def fresh() -> dict[tuple[str, str], tuple[str, Any]]:
    baseline = {}
    for fw in FRAMEWORKS:
        if not installed(fw) or not any(f == fw for _, f in ITEMS):
            continue
        proc = subprocess.run([sys.executable, __file__, fw], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        for case_id, (verdict, warned) in json.loads(proc.stdout.splitlines()[-1]).items():
            baseline[(case_id, fw)] = (verdict, warned)
    return baseline


def adapter_for(framework: str) -> Any:
    if not installed(framework):
        pytest.skip(f"{framework} is not installed")
    return registry.get_adapter(framework)


def test_the_corpus_has_the_warning_cases_this_file_is_about(fresh: dict) -> None:
    known = {("views.transpose.t_attribute_three_d", "torch"), ("inplace.readonly.from_numpy_add_", "torch"),
             ("interop.tensor.of_tensor_warns", "torch"), ("interop.tensor.of_tensor_warns", "paddle")}
    assert known <= set(ITEMS)
    # in a fresh process each of them passes: the expectations describe a fresh process
    assert {item: fresh[item][0] for item in known if item in fresh} == {item: PASS for item in known if item in fresh}


# ---- order independence, in one process

@pytest.mark.parametrize("case_id, framework", ITEMS, ids=[f"{c}[{f}]" for c, f in ITEMS])
def test_run_twice_in_a_row(fresh: dict, case_id: str, framework: str) -> None:
    adapter = adapter_for(framework)
    case = case_by_id(case_id)
    first, second = result(run(case, adapter)), result(run(case, adapter))
    assert first == fresh[(case_id, framework)]
    assert second == fresh[(case_id, framework)]


@functools.cache
def in_both_orders() -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], Any]]:
    """Every warning item in one process, in the corpus's order and then in the reverse
    order: each item has every other one before it in one of the two passes (a warning given
    once a process, used up by any other item, shows), at the cost of two runs of each
    instead of one per pair."""
    items = [(case_id, fw) for case_id, fw in ITEMS if installed(fw)]
    forward = {(c, fw): result(run(case_by_id(c), registry.get_adapter(fw))) for c, fw in items}
    backward = {(c, fw): result(run(case_by_id(c), registry.get_adapter(fw))) for c, fw in reversed(items)}
    return forward, backward


@pytest.mark.parametrize("case_id, framework", ITEMS, ids=[f"{c}[{f}]" for c, f in ITEMS])
def test_run_after_every_other_warning_case(fresh: dict, case_id: str, framework: str) -> None:
    adapter_for(framework)
    forward, backward = in_both_orders()
    assert forward[(case_id, framework)] == fresh[(case_id, framework)], "after the warning cases before it"
    assert backward[(case_id, framework)] == fresh[(case_id, framework)], "after the warning cases after it"


def test_run_after_the_whole_corpus(fresh: dict) -> None:
    """Every case on every framework first (interop.as_tensor.of_tensor reaches Paddle's
    once-only warning before interop.tensor.of_tensor_warns, in file order), then each
    warning case. The eager frameworks: a compiled mode's item runs its framework's eager
    steps first, and the whole corpus compiled would take minutes per mode."""
    frameworks = [fw for fw in registry.eager_names() if fw in FRAMEWORKS and installed(fw)]
    for case in corpus():
        for fw in frameworks:
            run(case, registry.get_adapter(fw))
    after = {(c, fw): result(run(case_by_id(c), registry.get_adapter(fw))) for c, fw in ITEMS if fw in frameworks}
    assert after == {item: fresh[item] for item in after}


# ---- controls: each reset taken out, the order dependence is back

@contextlib.contextmanager
def without_states(adapter: Any, names: set[str]) -> Iterator[Any]:
    """The adapter, its state list without ``names`` (a new adapter instance: the shared
    one of the registry keeps its list)."""
    states = [state for state in adapter.global_states() if state.name not in names]
    adapter.global_states = lambda: states
    yield adapter


def changed_on_second_run(adapter: Any, framework: str, fresh: dict) -> list[str]:
    changed = []
    for case_id, fw in ITEMS:
        if fw == framework:
            case = case_by_id(case_id)
            run(case, adapter)
            if result(run(case, adapter)) != fresh[(case_id, fw)]:
                changed.append(case_id)
    return changed


def test_control_torch_warn_once_without_warn_always(fresh: dict) -> None:
    pytest.importorskip("torch")
    import torch

    from conformance.adapters.torch_adapter import TorchAdapter

    before = torch.is_warn_always_enabled()
    try:
        torch.set_warn_always(False)
        with without_states(TorchAdapter(), {"torch.warn_always"}) as adapter:
            changed = changed_on_second_run(adapter, "torch", fresh)
    finally:
        torch.set_warn_always(before)
    # the two TORCH_WARN_ONCE sites of the corpus: TensorShape.cpp (x.T), tensor_numpy.cpp
    assert {"views.transpose.t_attribute_three_d", "inplace.readonly.from_numpy_add_"} <= set(changed)
    verdicts = {c: fresh[(c, "torch")][0] for c in changed}
    assert set(verdicts.values()) == {PASS}, verdicts


def test_control_paddle_warned_flags_not_reset(fresh: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("paddle")
    from conformance.adapters.paddle_adapter import PaddleAdapter, _paddle

    _paddle()
    import paddle.tensor.creation

    monkeypatch.setattr(paddle.tensor.creation, "_warned_in_tensor", False)
    with without_states(PaddleAdapter(), {"paddle.warned_flags"}) as adapter:
        changed = changed_on_second_run(adapter, "paddle", fresh)
    assert changed == ["interop.tensor.of_tensor_warns"]


# ---- Python's registries and filters, at the isolation itself
#
# The engine records each step under its own catch_warnings with the "always" action, which
# already makes a step's recorded warnings blind to the registries and filters; the
# isolation's reset covers what runs outside the steps of an item (inputs, probes, and
# whatever they print into the item's output) and holds whatever the engine does. So these
# run items as the isolation sees them: code inside ``adapter.isolation()``.

def _warn_here() -> None:
    warnings.warn("a warning shown once per location by the 'default' action", UserWarning, stacklevel=1)


def shown_in_two_items(adapter: Any, first_item: Any = None) -> list[int]:
    """How many warnings each of two items showed, each calling _warn_here once, under
    the process filters of a fresh interpreter ("default": once per location)."""
    counts = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for number in range(2):
            before = len(caught)
            with adapter.isolation(0):
                if number == 0 and first_item is not None:
                    first_item()
                _warn_here()
            counts.append(len(caught) - before)
    return counts


def test_python_registries_are_reset_for_every_item() -> None:
    from conformance.adapters.numpy_adapter import NumpyAdapter

    assert shown_in_two_items(NumpyAdapter()) == [1, 1]
    with without_states(NumpyAdapter(), {"python.warnings"}) as control:
        assert shown_in_two_items(control) == [1, 0]


def test_python_filters_an_item_adds_are_taken_out() -> None:
    from conformance.adapters.numpy_adapter import NumpyAdapter

    def add_filter() -> None:  # as Paddle's static-graph type promotion does after warning
        warnings.filterwarnings("ignore", message="a warning shown once")

    assert shown_in_two_items(NumpyAdapter(), add_filter) == [0, 1]
    with without_states(NumpyAdapter(), {"python.warnings"}) as control:
        assert shown_in_two_items(control, add_filter) == [0, 0]


# ---- through pytest

def write_copies(folder: Path) -> list[tuple[str, str, str]]:
    """first.yaml: the warning cases; again.yaml: the same cases with ``_again`` ids. Returns
    (file, case id, framework) for every item of the first file and its copy, in pairs."""
    import yaml

    ids = list(dict.fromkeys(case_id for case_id, _ in ITEMS))
    sources: dict[str, dict] = {}
    for case_id in ids:
        path = ROOT / case_by_id(case_id).location.file
        for raw in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            if raw["id"] == case_id:
                sources[case_id] = raw
    again = []
    for case_id in ids:
        raw = copy.deepcopy(sources[case_id])
        raw["id"] = case_id + "_again"
        again.append(raw)
    (folder / "first.yaml").write_text(yaml.safe_dump({"cases": [sources[i] for i in ids]}, sort_keys=False))
    (folder / "again.yaml").write_text(yaml.safe_dump({"cases": again}, sort_keys=False))
    return [(file, case_id + suffix, fw) for case_id, fw in ITEMS
            for file, suffix in (("first.yaml", ""), ("again.yaml", "_again"))]


# in process, every adapter without its warning states: the control of the pytest test
DROP_CONFTEST = f"""\
from conformance.adapters.numpy_adapter import NumpyAdapter
from conformance.adapters.paddle_adapter import PaddleAdapter
from conformance.adapters.torch_adapter import TorchAdapter

for cls in (NumpyAdapter, TorchAdapter, PaddleAdapter):
    def global_states(self, _original=cls.global_states):
        return [s for s in _original(self) if s.name not in {sorted(WARNING_STATES)!r}]
    cls.global_states = global_states
"""


def pytest_in_order(folder: Path, nodeids: list[str], name: str, *options: str,
                    only: set[str] | None = None) -> dict[tuple[str, str], Any]:
    frameworks = sorted({fw for _, fw in ITEMS if installed(fw) and (only is None or fw in only)})
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
            "--frameworks", ",".join(frameworks), "--conformance-results", name, "-v", *options, *nodeids]
    proc = subprocess.run(args, cwd=folder, capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"})
    assert proc.returncode in (0, 1), proc.stdout[-4000:] + proc.stderr[-4000:]
    # -v lists the items as they run (each "::" there may stand for a dot of the case id)
    # (an item's line has its outcome: the warnings summary names items too)
    ran = [line.split(" ", 1)[0].replace("::", ".") for line in proc.stdout.splitlines()
           if line.startswith(("first.yaml::", "again.yaml::"))
           and line.partition(" ")[2].startswith(("PASSED", "FAILED", "SKIPPED", "ERROR"))]
    assert ran == [n.replace("::", ".") for n in nodeids if n.rsplit("[", 1)[1][:-1] in frameworks], \
        "pytest did not run the items in the order given"
    records = json.loads((folder / name).read_text())["results"]
    return {(r["case"], r["framework"]): {k: v for k, v in r.items() if k not in ("duration_s", "nodeid")}
            for r in records}


def two_orders(folder: Path, *options: str, only: set[str] | None = None) -> tuple[dict, dict]:
    pairs = write_copies(folder)
    forward = [f"{file}::{case_id}[{fw}]" for file, case_id, fw in pairs]  # each case, then its copy
    backward = forward[::-1]  # each copy, then its case, the cases in reverse order
    return (pytest_in_order(folder, forward, "forward.json", *options, only=only),
            pytest_in_order(folder, backward, "backward.json", *options, only=only))


def same_case(records: dict) -> dict:
    """The records of the copies under their case's id, case and copy side by side."""
    return {(case.removesuffix("_again"), fw, case.endswith("_again")):
            {**r, "case": case.removesuffix("_again"),  # a refused step's place names its file
             "reason": r["reason"] and r["reason"].replace("(again.yaml:", "(first.yaml:")}
            for (case, fw), r in records.items()}


def test_through_pytest_in_the_sandbox_two_orders_give_the_same_records(tmp_path: Path) -> None:
    forward, backward = two_orders(tmp_path)
    assert forward == backward
    # and a case gives the same record as its copy, whichever of the two ran first
    merged = same_case(forward)
    assert {k[:2]: v for k, v in merged.items() if not k[2]} == {k[:2]: v for k, v in merged.items() if k[2]}
    outcomes = {r["outcome"] for r in forward.values()}
    assert "fail" not in outcomes and "error" not in outcomes, outcomes


def test_control_through_pytest_without_the_warning_states(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(DROP_CONFTEST)
    # the eager frameworks whose warnings are given once a process (the compiled modes run
    # their framework's steps eagerly first: the same mechanisms, at several times the cost)
    forward, backward = two_orders(tmp_path, "--in-process", only={"numpy", "torch", "paddle"})
    differ = sorted(key for key in forward if forward[key] != backward[key])
    assert differ, "the two orders gave the same records with no warning state reset: the test could not fail"
    assert FAIL in {r["outcome"] for r in forward.values()} | {r["outcome"] for r in backward.values()}


if __name__ == "__main__":  # the fresh-process baseline: python test_warning_order.py FRAMEWORK
    print(json.dumps(fresh_results(sys.argv[1])))
