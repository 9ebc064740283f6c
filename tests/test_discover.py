"""conformance discover: the reference model, the oracles, the generator and the loop.

The model and oracles are checked on programs whose right answer is known by hand, and
against NumPy itself (every program NumPy runs must be one the model explains); the loop
runs for real on NumPy in this process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from conformance import registry
from conformance.discover.generate import programs
from conformance.discover.model import COPY, REBIND, VIEW, explanations, predict
from conformance.discover.oracles import Crash, CrossMode, DocumentedViews, Finding, ModelConsistency, Observed, known
from conformance.discover.programs import Program, Step, shape_after
from conformance.discover.run import (
    Found,
    case_of,
    discover,
    distinct,
    finding_case_text,
    findings_page,
    observed_of,
    run_program,
    without_step,
)
from conformance.load.reader import load_text
from conformance.tools.observe import Observation

ROOT = Path(__file__).resolve().parent.parent

# Paddle 3.3.1's narrow of a view with a storage offset: v2 reads x[0], not x[1]
NARROW_TWICE = Program((2,), (Step("narrow", "x", (0, 1, 1), "v1"), Step("narrow", "v1", (0, 0, 1), "v2"),
                              Step("setitem", "v2", ((0,), 100.0))))


def test_the_model_follows_a_chain_of_views_to_the_base_element_each_write_reaches() -> None:
    program = Program((2, 3), (Step("t", "x", (), "v1"), Step("slice", "v1", (1, 3, 1), "v2"),
                               Step("setitem", "v2", ((0, 1), 100.0))))
    all_views = predict(program, {})
    assert all_views.values["x"].tolist() == [[1.0, 2.0, 3.0], [4.0, 100.0, 6.0]]
    assert all_views.overlaps[("v2", "x")] and all_views.overlaps[("v2", "v1")]
    copied = predict(program, {0: COPY})  # v1 = x.t() a copy: the write stays in v1's memory
    assert copied.values["x"].tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert copied.values["v1"].tolist() == [[1.0, 4.0], [2.0, 100.0], [3.0, 6.0]]
    assert not copied.overlaps[("v2", "x")] and copied.overlaps[("v2", "v1")]


def test_interleaved_slices_share_a_storage_but_no_element() -> None:
    program = Program((4,), (Step("slice", "x", (0, 4, 2), "v1"), Step("slice", "x", (1, 4, 2), "v2"),
                             Step("fill_", "v1", (100.0,))))
    prediction = predict(program, {})
    assert not prediction.overlaps[("v2", "v1")] and prediction.values["x"].tolist() == [100.0, 2.0, 100.0, 4.0]


def test_an_augmented_assignment_may_rebind_instead_of_writing() -> None:
    program = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("iadd", "v1", (100.0,))))
    in_place, rebound = predict(program, {}), predict(program, {1: REBIND})
    assert in_place.values["x"].tolist() == [101.0, 2.0] and in_place.overlaps[("v1", "x")]
    assert rebound.values["x"].tolist() == [1.0, 2.0] and not rebound.overlaps[("v1", "x")]


def _observed(framework: str, values: dict, compiles: str | None = None, status: str = "ran") -> Observed:
    return Observed(framework, status, values=values, compiles=compiles)


PADDLE_NARROW = {"values.x": [100.0, 2.0], "values.v1": [2.0], "values.v2": [100.0],
                 "shares_memory.v1.x": True, "shares_memory.v2.x": True, "shares_memory.v2.v1": False}
RIGHT_NARROW = {"values.x": [1.0, 100.0], "values.v1": [100.0], "values.v2": [100.0],
                "shares_memory.v1.x": True, "shares_memory.v2.x": True, "shares_memory.v2.v1": True}


def test_the_model_oracle_finds_a_write_in_the_wrong_place_and_accepts_the_right_one() -> None:
    wrong = ModelConsistency().check(NARROW_TWICE, _observed("paddle", PADDLE_NARROW), {})
    assert wrong is not None and wrong.oracle == "model"
    assert any("values of x" in d for d in wrong.details)
    assert ModelConsistency().check(NARROW_TWICE, _observed("torch", RIGHT_NARROW), {}) is None
    assert explanations(NARROW_TWICE, RIGHT_NARROW)[0] == [{0: VIEW, 1: VIEW}]


def test_a_copy_where_the_documentation_says_view_is_a_documentation_finding() -> None:
    program = Program((2, 2), (Step("t", "x", (), "v1"), Step("setitem", "v1", ((0, 1), 100.0))))
    as_copy = {"values.x": [[1.0, 2.0], [3.0, 4.0]], "values.v1": [[1.0, 100.0], [2.0, 4.0]],
               "shares_memory.v1.x": False}
    torch = DocumentedViews().check(program, _observed("torch", as_copy), {})  # t() is on torch's view list
    assert torch is not None and "documented as a view (t)" in torch.summary
    assert DocumentedViews().check(program, _observed("jax", as_copy), {}) is None  # JAX documents no views
    assert ModelConsistency().check(program, _observed("torch", as_copy), {}) is None  # a copy is consistent


def test_crashes_and_compiled_values_that_differ_from_eager_are_findings() -> None:
    lost = Observed("paddle", "error", reason="the framework process crashed with signal SIGSEGV")
    assert Crash().check(NARROW_TWICE, lost, {}).summary.endswith("SIGSEGV")  # type: ignore[union-attr]
    eager = _observed("torch", RIGHT_NARROW)
    compiled = _observed("torch_compile", dict(RIGHT_NARROW, **{"values.x": [1.0, 2.0]}), compiles="torch")
    finding = CrossMode().check(NARROW_TWICE, compiled, {"torch": eager, "torch_compile": compiled})
    assert finding is not None and finding.details == ("values.x: eager [1.0, 100.0], compiled [1.0, 2.0]",)
    refused = Observed("torch", "ran", error={"at": 2, "kind": "other"})
    assert ModelConsistency().check(NARROW_TWICE, refused, {}) is None  # refusing is not a finding


def test_a_finding_is_known_when_a_smaller_set_of_operations_showed_it_on_that_framework() -> None:
    narrow = Finding("model", "paddle", NARROW_TWICE, "s")
    with_slice = Finding("documented-view", "paddle", Program((3,), (Step("slice", "x", (1, 3, 1), "v1"),
                                                                      *NARROW_TWICE.steps[1:])), "s")
    assert known(with_slice, {narrow.signature()}) and not known(narrow, {with_slice.signature()})
    assert not known(Finding("model", "torch", NARROW_TWICE, "s"), {narrow.signature()})
    assert not known(Finding("crash", "paddle", NARROW_TWICE, "s"), {narrow.signature()})
    found = [Found(with_slice, [], 1.0), Found(narrow, [], 2.0)]
    assert [f.finding for f in distinct(found)] == [narrow]


def test_removing_a_step_removes_the_steps_that_read_what_it_bound() -> None:
    assert without_step(NARROW_TWICE, 0) is None  # v1 and v2 go, and the write into v2: nothing writes
    program = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("fill_", "x", (100.0,)),
                             Step("narrow", "v1", (0, 0, 1), "v2")))
    assert without_step(program, 0) == Program((2,), (Step("fill_", "x", (100.0,)),))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_every_generated_program_is_a_case_the_loader_accepts(program: Program) -> None:
    case = case_of(program)
    assert [s.text for s in case.flat_steps()] == [s.text() for s in program.steps]
    assert set(shape_after(program)) == set(program.names())


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_the_model_explains_whatever_numpy_does_with_a_generated_program(program: Program) -> None:
    (observation,) = run_program(program, ["numpy"], None)
    observed = observed_of(observation)
    if observed.status == "ran" and observed.error is None:
        assert explanations(program, observed.values)[0], program.describe()


def test_a_discover_run_on_numpy_counts_its_programs_and_finds_nothing(tmp_path: Path) -> None:
    result = discover(["numpy"], max_programs=40, seed=3)
    assert result.programs == 40 and result.found == []
    page = findings_page(result)
    assert "40 programs" in page and "No finding." in page and "| slice | view" in page


def test_a_finding_is_written_as_a_case_with_each_framework_observations_and_a_reason() -> None:
    # torch's real observations, and Paddle's as Paddle 3.3.1 gives them (its narrow bug)
    numpy_obs, torch_obs = run_program(NARROW_TWICE, ["numpy", "torch"], None)
    paddle_obs = Observation("paddle", "3.3.1", observed={
        key: PADDLE_NARROW.get(str(key), value) for key, value in torch_obs.observed.items()})
    finding = ModelConsistency().check(NARROW_TWICE, observed_of(paddle_obs), {})
    assert finding is not None
    text = finding_case_text(Found(finding, [numpy_obs, torch_obs, paddle_obs], 1.0), 1, 7)
    loaded = load_text(text, "findings.yaml", registry.vocabulary())
    assert loaded.errors == [] and loaded.cases[0].id == "discovered.model.paddle.n1"
    assert "conformance discover --seed 7, oracle model" in text and "TODO" not in text
    assert "values: {v1: [2.0], x: [100.0, 2.0]}" in text  # Paddle's override holds what it did


def test_the_command_needs_a_budget_and_writes_its_page(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "conformance", "discover", "--frameworks", "numpy", "--out", str(tmp_path)]
    refused = subprocess.run(run, capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode == 2 and "give a budget: --seconds N or --programs N" in refused.stderr
    done = subprocess.run([*run, "--programs", "15"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "15 programs" in done.stdout
    summary = json.loads((tmp_path / "findings.json").read_text())
    assert summary["programs"] == 15 and summary["findings"] == []


@pytest.mark.parametrize("step", ["x.fill_(100.0)", "v1 = x.t()"])
def test_a_program_is_read_by_the_loader_whose_allowlist_refuses_anything_else(step: str) -> None:
    # every step a program renders is one the allowlisted step grammar reads: the loader,
    # not the generator, decides what can run (an unknown operation is refused there)
    text = Program((2, 2)).case_text("discovered.t", "t", ("expect: {}",)).replace("    steps:\n", "    steps:\n"
                                                                                  f"      - {step}\n"
                                                                                  "      - v9 = x.__class__()\n")
    result = load_text(text, "<gen>", registry.vocabulary(), draft=True)
    assert result.errors and "__class__" in str(result.errors[0][1])
