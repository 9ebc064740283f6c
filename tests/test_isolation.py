"""Isolation of global state: a case that changes a piece of process-wide framework state
(grad mode, anomaly detection, default dtype and device, print options, NumPy errstate,
RNGs, Paddle's static mode and flags, ...) does not change the outcome of the next case run
by the same process.

For every state of tests/probe_adapters/stateful.py, on the real framework:
- the probe case (``state_is_default``) passes on a fresh adapter;
- it still passes right after a case that changed the state, run by the same adapter;
- control: with the adapter's isolation switched off, the same sequence fails, so the probe
  does see the state and the first two checks could fail.
Then the same sequence through pytest, in one process, in the sandbox and in process.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from entry_points import TESTS, register, subprocess_env
from probe_adapters.stateful import NumpyStateAdapter, PaddleStateAdapter, TorchStateAdapter

from conformance import registry
from conformance.load.reader import Vocabulary, load_text
from conformance.model import Case
from conformance.run.engine import FAIL, PASS, run

ADAPTERS = {"numpy_state": NumpyStateAdapter, "torch_state": TorchStateAdapter, "paddle_state": PaddleStateAdapter}
MODULES = {"numpy_state": "numpy", "torch_state": "torch", "paddle_state": "paddle"}
STATES = [(framework, name) for framework, cls in ADAPTERS.items() for name in cls.state_names()]


def cases_text(states: list[tuple[str, str]]) -> str:
    """For each (framework, state): a case that changes the state, then a case that checks
    it is as it was; both not applicable to the other frameworks. The input is a NumPy
    array: a Paddle tensor read in static mode segfaults Paddle (the sandbox reports that
    as the item's error; here it would only hide what is tested)."""
    blocks = []
    for i, (framework, name) in enumerate(states):
        others = "".join(f"\n      {other}: {{not_applicable: 'a state of {framework}'}}"
                         for other in ADAPTERS if other != framework)
        for kind, step, expect in (("pollute", f"pollute({name!r})", "{values: {x: [1.0]}}"),
                                   ("probe", f"y = state_is_default({name!r})", "{values: {y: [true]}}")):
            blocks.append(f"""\
  - id: isolation.{i}.{kind}
    title: "{kind}: {name}"
    given: {{x: {{data: [1.0], type: ndarray}}}}
    steps:
      - {step}
    expect: {expect}
    frameworks:{others}
""")
    return "cases:\n" + "".join(blocks)


def load_pair(framework: str, name: str) -> tuple[Case, Case]:
    adapter = ADAPTERS[framework]()
    vocabulary = Vocabulary(frameworks=[*registry.framework_names(), *ADAPTERS], operations=set(adapter.ops),
                            strings=adapter.case_strings)
    result = load_text(cases_text([(framework, name)]), "isolation.yaml", vocabulary)
    assert not result.errors, result.errors[0][1].render()
    pollute, probe = result.cases
    return pollute, probe


@contextlib.contextmanager
def no_isolation(adapter: Any) -> Iterator[None]:
    """The control: an adapter whose isolation does nothing (no save, no seed, no restore)."""
    original = adapter.isolation
    adapter.isolation = lambda seed: contextlib.nullcontext()
    try:
        yield
    finally:
        adapter.isolation = original


@pytest.mark.parametrize("framework, name", STATES, ids=[f"{f}-{n}" for f, n in STATES])
def test_a_case_that_changes_global_state_does_not_change_the_next(framework: str, name: str) -> None:
    pytest.importorskip(MODULES[framework])
    pollute, probe = load_pair(framework, name)
    adapter = ADAPTERS[framework]()

    alone = run(probe, adapter)
    assert alone.verdict == PASS, alone.mismatches
    polluted = run(pollute, adapter)
    assert polluted.verdict == PASS, polluted.mismatches
    after = run(probe, adapter)
    assert after.verdict == PASS, f"{name} leaked from one case into the next: {after.mismatches}"
    assert after.observed == alone.observed

    # control, inside a real isolation so that the pollution is cleaned up afterwards
    bare = ADAPTERS[framework]()
    bare.setup()
    with adapter.isolation(0), no_isolation(bare):
        run(pollute, bare)
        leaked = run(probe, bare)
    assert leaked.verdict == FAIL, f"the probe does not see {name}: this test could not fail"


def test_every_state_the_tests_change_is_one_the_adapter_saves() -> None:
    """The probe adapters' states are named after the adapters' GlobalState entries, so a
    state dropped from an adapter's list fails here, not silently."""
    for framework, cls in ADAPTERS.items():
        pytest.importorskip(MODULES[framework])
        adapter = cls()
        adapter.setup()
        saved = {state.name for state in adapter.global_states()}
        assert set(cls.state_names()) <= saved, set(cls.state_names()) - saved


@pytest.mark.parametrize("mode", ["sandbox", "in-process"])
def test_through_pytest_in_one_process(tmp_path: Path, mode: str) -> None:
    """Every pollute/probe pair of every framework in one file, one pytest process without
    xdist: the items run in file order in one worker (one sandbox child, or pytest itself)."""
    frameworks = [f for f in ADAPTERS if _installed(MODULES[f])]
    states = [(f, name) for f, name in STATES if f in frameworks]
    site = tmp_path / "site"
    register(site, "probe-adapters", {f: f"probe_adapters.stateful:{cls.__name__}" for f, cls in ADAPTERS.items()})
    (tmp_path / "isolation.yaml").write_text(cases_text(states))
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "isolation.yaml",
            "--frameworks", ",".join(frameworks), "--conformance-results", "r.json"]
    if mode == "in-process":
        args.append("--in-process")
    proc = subprocess.run(args, cwd=tmp_path, env=subprocess_env(site, TESTS), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    records = json.loads((tmp_path / "r.json").read_text())["results"]
    assert len(records) == 2 * len(states) * len(frameworks)
    outcomes = {(r["case"], r["framework"]): r["outcome"] for r in records}
    for i, (framework, name) in enumerate(states):
        for other in frameworks:
            expected = "pass" if other == framework else "not_applicable"
            assert outcomes[(f"isolation.{i}.probe", other)] == expected, (other, name)
            assert outcomes[(f"isolation.{i}.pollute", other)] == expected, (other, name)


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
