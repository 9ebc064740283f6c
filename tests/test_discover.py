"""conformance discover: the reference model, the oracles, the generator and the loop.

The model and oracles are checked on programs whose right answer is known by hand, and
against NumPy itself (every program NumPy runs must be one the model explains); the loop
runs for real on NumPy in this process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings

from conformance import registry
from conformance.discover.derived import DOMAIN, derived_writes, takes_out, ufunc_of
from conformance.discover.generate import programs
from conformance.discover.model import COPY, REBIND, VIEW, explanations, finite_difference_gradient, predict
from conformance.discover.oracles import (
    Crash,
    CrossMode,
    DocumentedViews,
    Finding,
    Gradient,
    Metamorphic,
    ModelConsistency,
    Observed,
    Refusal,
    known,
    twin_steps,
)
from conformance.discover.programs import (
    SPELLINGS,
    VIEW_OPS,
    WRITE_OPS,
    WRITES_BY_NAME,
    Program,
    Step,
    all_writes,
    clone_twin,
    out_of_place_twin,
    shape_after,
    spelling_twin,
)
from conformance.discover.run import (
    ROUND,
    Discovery,
    Found,
    case_of,
    discover,
    discover_in_parallel,
    distinct,
    finding_case_text,
    findings_page,
    merged,
    observed_of,
    register_derived,
    room,
    run_program,
    simpler,
    without_step,
    write,
)
from conformance.discover.triage import KNOWN, PaddleStaleGradientAfterAliasedWrite, triaged
from conformance.load.reader import load_text
from conformance.tools.observe import Observation, observe

ROOT = Path(__file__).resolve().parent.parent
# the writes derived from the tables' in-place entries, drawn by every strategy below as a run
# draws them (conformance.discover.derived)
DERIVED = register_derived()
PADDLE_STALE = next(r for r in KNOWN if isinstance(r, PaddleStaleGradientAfterAliasedWrite))

# Paddle 3.3.1's narrow of a view with a storage offset: v2 reads x[0], not x[1] (x = [2, 3])
NARROW_TWICE = Program((2,), (Step("narrow", "x", (0, 1, 1), "v1"), Step("narrow", "v1", (0, 0, 1), "v2"),
                              Step("setitem", "v2", ((0,), 100.0))))


def test_the_model_follows_a_chain_of_views_to_the_base_element_each_write_reaches() -> None:
    program = Program((2, 3), (Step("t", "x", (), "v1"), Step("slice", "v1", (1, 3, 1), "v2"),
                               Step("setitem", "v2", ((0, 1), 100.0))))
    all_views = predict(program, {})
    assert all_views.values["x"].tolist() == [[2.0, 3.0, 4.0], [5.0, 100.0, 7.0]]
    assert all_views.overlaps[("v2", "x")] and all_views.overlaps[("v2", "v1")]
    copied = predict(program, {0: COPY})  # v1 = x.t() a copy: the write stays in v1's memory
    assert copied.values["x"].tolist() == [[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]
    assert copied.values["v1"].tolist() == [[2.0, 5.0], [3.0, 100.0], [4.0, 7.0]]
    assert not copied.overlaps[("v2", "x")] and copied.overlaps[("v2", "v1")]


def test_interleaved_slices_share_a_storage_but_no_element() -> None:
    program = Program((4,), (Step("slice", "x", (0, 4, 2), "v1"), Step("slice", "x", (1, 4, 2), "v2"),
                             Step("fill_", "v1", (100.0,))))
    prediction = predict(program, {})
    assert not prediction.overlaps[("v2", "v1")] and prediction.values["x"].tolist() == [100.0, 3.0, 100.0, 5.0]


def test_an_augmented_assignment_may_rebind_instead_of_writing() -> None:
    program = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("iadd", "v1", (100.0,))))
    in_place, rebound = predict(program, {}), predict(program, {1: REBIND})
    assert in_place.values["x"].tolist() == [102.0, 3.0] and in_place.overlaps[("v1", "x")]
    assert rebound.values["x"].tolist() == [2.0, 3.0] and not rebound.overlaps[("v1", "x")]


def _observed(framework: str, values: dict, compiles: str | None = None, status: str = "ran") -> Observed:
    return Observed(framework, status, values=values, compiles=compiles)


PADDLE_NARROW = {"values.x": [100.0, 3.0], "values.v1": [3.0], "values.v2": [100.0],
                 "shares_memory.v1.x": True, "shares_memory.v2.x": True, "shares_memory.v2.v1": False}
RIGHT_NARROW = {"values.x": [2.0, 100.0], "values.v1": [100.0], "values.v2": [100.0],
                "shares_memory.v1.x": True, "shares_memory.v2.x": True, "shares_memory.v2.v1": True}


def test_the_model_oracle_finds_a_write_in_the_wrong_place_and_accepts_the_right_one() -> None:
    wrong = ModelConsistency().check(NARROW_TWICE, _observed("paddle", PADDLE_NARROW), {})
    assert wrong is not None and wrong.oracle == "model"
    assert any("values of x" in d for d in wrong.details)
    assert ModelConsistency().check(NARROW_TWICE, _observed("torch", RIGHT_NARROW), {}) is None
    assert explanations(NARROW_TWICE, RIGHT_NARROW)[0] == [{0: VIEW, 1: VIEW}]


def test_a_copy_where_the_documentation_says_view_is_a_documentation_finding() -> None:
    program = Program((2, 2), (Step("t", "x", (), "v1"), Step("setitem", "v1", ((0, 1), 100.0))))
    as_copy = {"values.x": [[2.0, 3.0], [4.0, 5.0]], "values.v1": [[2.0, 100.0], [3.0, 5.0]],
               "shares_memory.v1.x": False}
    torch = DocumentedViews().check(program, _observed("torch", as_copy), {})  # t() is on torch's view list
    assert torch is not None and "documented as a view (t)" in torch.summary
    assert DocumentedViews().check(program, _observed("jax", as_copy), {}) is None  # JAX documents no views
    assert ModelConsistency().check(program, _observed("torch", as_copy), {}) is None  # a copy is consistent


def test_crashes_and_compiled_values_that_differ_from_eager_are_findings() -> None:
    lost = Observed("paddle", "error", reason="the framework process crashed with signal SIGSEGV")
    assert Crash().check(NARROW_TWICE, lost, {}).summary.endswith("SIGSEGV")  # type: ignore[union-attr]
    eager = _observed("torch", RIGHT_NARROW)
    compiled = _observed("torch_compile", dict(RIGHT_NARROW, **{"values.x": [2.0, 3.0]}), compiles="torch")
    finding = CrossMode().check(NARROW_TWICE, compiled, {"torch": eager, "torch_compile": compiled})
    assert finding is not None and finding.details == ("values.x: eager [2.0, 100.0], compiled [2.0, 3.0]",)
    refused = Observed("torch", "ran", error={"at": 2, "kind": "other"})
    assert ModelConsistency().check(NARROW_TWICE, refused, {}) is None  # refusing is not a finding


def test_a_product_of_two_overlapping_names_reads_the_operand_whole_before_writing() -> None:
    program = Program((3,), (Step("slice", "x", (0, 2, 1), "v1"), Step("slice", "x", (1, 3, 1), "v2"),
                             Step("mul_t", "v1", ("v2",))))
    assert predict(program, {}).values["x"].tolist() == [6.0, 12.0, 4.0]  # 2 * 3, 3 * 4: v2 read before


# Paddle 3.3.1: a write through a view of a non-leaf leaves the base's gradient stale
# (PaddlePaddle/Paddle#68520): x0.grad[0] is 2 * 100, as if x[0] had not been overwritten
OVERWRITE = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("setitem", "v1", ((0,), 100.0))), grad=True)
OVERWRITTEN = {"values.x": [100.0, 3.0], "values.v1": [100.0], "shares_memory.v1.x": True}


def test_the_finite_difference_gradient_is_the_derivative_of_the_programs_loss() -> None:
    # loss = sum(x * x) + 2 * sum(v1 * v1) with x = [100, x0[1]], v1 = [100]: x0[0] does not count (x0 = [2, 3])
    assert finite_difference_gradient(OVERWRITE, {}).tolist() == [0.0, 6.0]
    # v1 a copy: the write stays in v1; loss = x0[0]**2 + x0[1]**2 + 2 * 100**2
    assert finite_difference_gradient(OVERWRITE, {0: COPY}).tolist() == [4.0, 6.0]
    squared = Program((2,), (Step("mul_t", "x", ("x",)),), grad=True)  # loss = sum(x0 ** 4)
    assert finite_difference_gradient(squared, {}).tolist() == [32.0, 108.0]


def test_a_gradient_that_is_not_the_derivative_of_the_values_is_a_gradient_finding() -> None:
    stale = Gradient().check(OVERWRITE, _observed("paddle", dict(OVERWRITTEN, **{"grad.x0": [200.0, 6.0]})), {})
    assert stale is not None and stale.oracle == "gradient"
    assert stale.details == ("grad of x0: finite differences [0.0, 6.0], framework [200.0, 6.0]",)
    assert Gradient().check(OVERWRITE, _observed("torch", dict(OVERWRITTEN, **{"grad.x0": [0.0, 6.0]})), {}) is None
    missing = Gradient().check(OVERWRITE, _observed("paddle", dict(OVERWRITTEN, **{"grad.x0": None})), {})
    assert missing is not None and "(no gradient)" in missing.summary
    # rounding is not a finding; a program without a gradient is not the oracle's
    near = dict(OVERWRITTEN, **{"grad.x0": [1e-12, 6.0 + 1e-12]})
    assert Gradient().check(OVERWRITE, _observed("torch", near), {}) is None
    assert Gradient().check(Program((2,), OVERWRITE.steps), _observed("torch", OVERWRITTEN), {}) is None


def test_only_writes_into_unaliased_tensors_are_rewritten_out_of_place() -> None:
    program = Program((2,), (Step("add_", "x", (100.0,)), Step("slice", "x", (0, 1, 1), "v1"),
                             Step("mul_", "v1", (2.0,)), Step("clone", "x", (), "v2"), Step("mul_t", "v2", ("v2",))))
    assert out_of_place_twin(program) == (Step("add", "x", (100.0,)), *program.steps[1:4],
                                          Step("mul_new", "v2", ("v2",)))
    for decisions in ({}, {1: COPY}):  # whichever slice is: the same values
        twin = Program(program.shape, out_of_place_twin(program))
        assert predict(program, decisions).values.keys() == predict(twin, decisions).values.keys()
        assert all((predict(program, decisions).values[n] == predict(twin, decisions).values[n]).all()
                   for n in program.names())
    only_aliased = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("add_", "v1", (100.0,))))
    assert out_of_place_twin(only_aliased) == ()


def test_views_after_the_last_write_are_cloned_in_the_clone_twin() -> None:
    program = Program((2, 2), (Step("slice", "x", (0, 1, 1), "v1"), Step("fill_", "v1", (100.0,)),
                               Step("t", "x", (), "v2")))
    assert clone_twin(program) == (*program.steps, Step("clone", "v2", (), "v2"))
    assert clone_twin(Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("fill_", "v1", (100.0,))))) == ()


def test_a_twin_that_holds_other_values_or_is_refused_alone_is_a_metamorphic_finding() -> None:
    base = Program((2,), (Step("add_", "x", (100.0,)), Step("slice", "x", (0, 1, 1), "v1")), grad=True)
    program = Program(base.shape, base.steps, True, out_of_place_twin(base), "out-of-place")
    same = {"values.x": [101.0, 102.0], "values.v1": [101.0], "grad.x0": [606.0, 204.0],
            "values.x_m": [101.0, 102.0], "values.v1_m": [101.0], "grad.x0_m": [606.0, 204.0]}
    assert Metamorphic().check(program, _observed("torch", same), {}) is None
    differ = Metamorphic().check(program, _observed("torch", dict(same, **{"grad.x0_m": [202.0, 204.0]})), {})
    assert differ is not None and differ.details == ("grad.x0: program [606.0, 204.0], twin [202.0, 204.0]",)
    # steps: x = x0 * 1.0, add_, slice, loss, backward | x_m = ..., add, slice, loss_m, backward
    assert twin_steps(program) == {6, 7, 8, 9, 10}
    assert program.statements()[3:6] == [program.loss_text(), "loss.backward(retain_graph=True)", "x_m = x0_m * 1.0"]
    refused = Observed("torch", "ran", values={}, error={"at": 10, "type": "RuntimeError", "message": "m"})
    assert "twin was refused" in Metamorphic().check(program, refused, {}).summary  # type: ignore[union-attr]
    refused_first = Observed("torch", "ran", values={}, error={"at": 5, "type": "RuntimeError", "message": "m"})
    assert Metamorphic().check(program, refused_first, {}) is None  # the program itself was refused


def test_reducing_tries_the_program_without_its_twin_and_without_its_gradient() -> None:
    base = Program((2,), (Step("add_", "x", (100.0,)), Step("slice", "x", (0, 1, 1), "v1")), grad=True)
    program = Program(base.shape, base.steps, True, out_of_place_twin(base), "out-of-place")
    smaller = simpler(program)
    assert smaller[0] == base and smaller[1] == Program(base.shape, base.steps, False, out_of_place_twin(base),
                                                        "out-of-place")
    assert all(p.twin == out_of_place_twin(Program(p.shape, p.steps)) for p in smaller[1:])


def test_a_property_the_framework_refuses_to_read_is_observed_as_missing_not_a_crash() -> None:
    # torch: v1 = x.unbind(0)[0], then x written: reading v1's is_leaf raises "Output 0 of
    # Unbind is a view and its base ... has been modified inplace"; the loss step raises it too
    program = Program((1, 1, 1), (Step("unbind", "x", (0, 0), "v1"), Step("setitem", "x", ((0, 0, 0), 100.0))),
                      grad=True)
    observation = observe(case_of(program), registry.get_adapter("torch"))  # every kind, is_leaf too
    assert observation.status == "ran" and observation.error is not None
    assert "Unbind is a view" in observation.error["message"]
    assert "is_leaf.v1" not in {str(k) for k in observation.observed} and "is_leaf.x" in {
        str(k) for k in observation.observed}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(grad=True))
def test_torch_gradients_of_generated_programs_pass_the_gradient_and_twin_oracles(program: Program) -> None:
    # torch rebases a base's grad_fn after a write through a view (CopySlices): on the real
    # framework, the oracles that need no expectation find nothing
    (observation,) = run_program(program, ["torch"], None)
    observed = observed_of(observation)
    for oracle in (ModelConsistency(), Gradient(), Metamorphic()):
        assert oracle.check(program, observed, {"torch": observed}) is None, program.describe()


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
    assert [s.text for s in case.flat_steps()] == program.statements()
    assert set(shape_after(program)) == set(program.names())
    twin = program.twin_program()
    if twin is not None:  # the twin's names are the program's: the oracle compares them by name
        assert set(twin.names()) == set(program.names())


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_the_model_explains_whatever_numpy_does_with_a_generated_program(program: Program) -> None:
    (observation,) = run_program(program, ["numpy"], None)
    observed = observed_of(observation)
    if observed.status == "ran" and observed.error is None:
        assert explanations(program, observed.values)[0], program.describe()


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(grad=False))
def test_the_model_explains_whatever_torch_does_with_a_generated_program(program: Program) -> None:
    """Every operation's semantics (programs.VIEW_OPS, WRITE_OPS) is torch's documented one:
    whatever torch eager holds after a program it runs, the model explains."""
    (observation,) = run_program(program, ["torch"], None)
    observed = observed_of(observation)
    if observed.status == "ran" and observed.error is None:
        assert explanations(program, observed.values)[0], program.describe()


def test_each_operation_is_an_entry_of_the_tables_and_a_run_draws_those_every_framework_has() -> None:
    known_keys = registry.known_operations() | {"index:basic", "index:advanced"}
    python = {"op:add", "op:sub", "op:mul", "op:truediv", "op:neg", "op:iadd", "op:isub", "op:imul", "op:itruediv",
              "op:setitem"}
    for op in (*VIEW_OPS, *WRITE_OPS):
        assert op.key in known_keys or op.key in python, op
    views, writes = room(["torch"])
    table = registry.get_adapter("torch").ops
    torch = registry.get_adapter("torch")
    derived = {op.name for op in all_writes() if op.derived and not op.out and op.key in table
               and getattr(table[op.key], "not_applicable", None) is None}
    derived |= {op.name for op in all_writes() if op.out and takes_out(torch, op.key)}
    assert "sin_" in derived and "mod_" not in derived  # mod_ is Paddle's spelling: torch's table says absent
    assert views == {op.name for op in VIEW_OPS} and writes == {op.name for op in WRITE_OPS} | derived
    numpy_views, numpy_writes = room(["numpy", "jax"])  # JAX is immutable: it narrows nothing
    assert "narrow" not in numpy_views and "detach" not in numpy_views and "permute" in numpy_views
    assert "add_" not in numpy_writes and {"iadd", "imul_t", "setitem_t", "setitem"} <= numpy_writes


def test_a_write_into_repeated_positions_that_reads_them_or_gives_two_values_is_judged_by_nothing() -> None:
    expanded = Program((2,), (Step("expand", "x", (3, 2), "v1"), Step("slice", "x", (0, 2, 1), "v2"),
                              Step("fill_", "v1", (100.0,))))
    assert not predict(expanded, {}).undefined  # every alias of a position gets the same value
    added = Program((2,), (Step("expand", "x", (3, 2), "v1"), Step("add_", "v1", (100.0,))))
    assert predict(added, {}).undefined  # is 100 added once per alias, or once?
    # v2's three elements are x[0]'s memory; adding x to it gives that position 4, 5 and 6
    conflicting = Program((3,), (Step("slice", "x", (0, 1, 1), "v1"), Step("expand", "v1", (3,), "v2"),
                                 Step("add_t", "v2", ("x",))))
    assert predict(conflicting, {}).undefined and predict(conflicting, {1: COPY}).undefined is False
    anything = {"values.x": [-1.0, 3.0, 4.0], "values.v2": [5.0, 6.0, 7.0]}
    assert ModelConsistency().check(conflicting, _observed("torch_compile", anything), {}) is None


def test_spellings_of_one_write_are_rewritten_into_each_other_and_compared_on_refusals_only() -> None:
    assert all(SPELLINGS[SPELLINGS[name]] == name and WRITES_BY_NAME[name].constant == WRITES_BY_NAME[
        SPELLINGS[name]].constant for name in SPELLINGS)
    program = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("add_", "v1", (100.0,)),
                             Step("imul_t", "x", ("x",))))
    assert spelling_twin(program) == (program.steps[0], Step("iadd", "v1", (100.0,)), Step("mul_t", "x", ("x",)))
    twin = Program(program.shape, program.steps, twin=spelling_twin(program), relation="spelling")
    values = {"values.x": [102.0, 3.0], "values.x_m": [2.0, 3.0]}  # Paddle's += rebinds in the twin
    assert Metamorphic().check(twin, _observed("paddle", values), {}) is None
    first_twin_step = min(twin_steps(twin))
    refused = Observed("paddle", "ran", values=values, error={"at": first_twin_step + 1, "kind": "other"})
    finding = Metamorphic().check(twin, refused, {})
    assert finding is not None and "spelling twin was refused" in finding.summary


EXPAND_WRITE = Program((2,), (Step("expand", "x", (3, 2), "v1"), Step("add_", "v1", (100.0,))))


def test_running_what_eager_refuses_as_unsafe_is_a_refusal_finding_for_its_compiled_mode() -> None:
    eager = Observed("torch", "ran", values={"values.x": [2.0, 3.0]},
                     error={"at": 2, "kind": "overlapping_write", "type": "RuntimeError", "message": "unsupported"})
    compiled = _observed("torch_compile", {"values.x": [202.0, 203.0]}, compiles="torch")
    everyone = {"torch": eager, "torch_compile": compiled}
    finding = Refusal().check(EXPAND_WRITE, compiled, everyone)
    assert finding is not None and finding.summary.startswith(
        "runs, a write whose result no documentation defines, what torch refuses as unsafe (overlapping_write")
    other_kind = Observed("torch", "ran", values={}, error={"at": 2, "kind": "shape_mismatch"})
    assert Refusal().check(EXPAND_WRITE, compiled, {"torch": other_kind, "torch_compile": compiled}) is None
    # the compiled mode refusing what eager runs is not judged
    assert Refusal().check(EXPAND_WRITE, eager, everyone) is None


def test_an_eager_framework_is_judged_on_a_refusal_only_in_the_same_memory_situation() -> None:
    refused = Observed("torch", "ran", values={"values.x": [2.0, 3.0], "values.v1": [[2.0, 3.0]] * 3,
                                               "shares_memory.v1.x": True},
                       error={"at": 2, "kind": "overlapping_write", "type": "RuntimeError", "message": "unsupported"})
    copied = _observed("paddle", {"values.x": [2.0, 3.0], "values.v1": [[102.0, 103.0]] * 3,
                                  "shares_memory.v1.x": False})
    assert Refusal().check(EXPAND_WRITE, copied, {"torch": refused, "paddle": copied}) is None  # its expand copies
    viewed = _observed("numpy", {"values.x": [102.0, 103.0], "values.v1": [[102.0, 103.0]] * 3,
                                 "shares_memory.v1.x": True})
    finding = Refusal().check(EXPAND_WRITE, viewed, {"torch": refused, "numpy": viewed})
    assert finding is not None and finding.oracle == "refusal" and finding.framework == "numpy"


def test_an_augmented_assignment_that_rebinds_is_not_the_write_another_framework_refused() -> None:
    program = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("imul_t", "v1", ("v1",))), grad=True)
    in_place = {"values.x": [4.0, 3.0], "values.v1": [4.0], "shares_memory.v1.x": True}
    torch = Observed("torch", "ran", values=in_place, error={"at": 5, "kind": "modified_saved_tensor",
                                                             "type": "RuntimeError", "message": "saved"})
    rebound = _observed("paddle", {"values.x": [2.0, 3.0], "values.v1": [4.0], "shares_memory.v1.x": False})
    assert Refusal().check(program, rebound, {"torch": torch, "paddle": rebound}) is None  # Paddle's *= rebinds
    written = _observed("mindspore", in_place)
    assert Refusal().check(program, written, {"torch": torch, "mindspore": written}) is not None


def test_writes_outside_autograds_bookkeeping_are_held_constant_in_the_gradient() -> None:
    # x = x0 * 1.0 = [2, 3]; a write that multiplies x by 3 leaves x = 3 * x0 in values either way
    detached = Program((2,), (Step("detach", "x", (), "v1"), Step("mul_", "v1", (3.0,))), grad=True)
    in_block = Program((2,), (Step("mul_", "x", (3.0,), no_grad=True),), grad=True)
    recorded = Program((2,), (Step("mul_", "x", (3.0,)),), grad=True)
    for program in (detached, in_block, recorded):
        assert predict(program, {}).values["x"].tolist() == [6.0, 9.0]
    # held constant, x = x0 + 2 * x0 with the second term a constant: d/dx0 sum(x * x) = 2 * x = [12, 18]
    # (v1, a detached name, is a constant in the loss); recorded: d/dx0 sum(9 * x0 ** 2) = [36, 54]
    assert finite_difference_gradient(detached, {}).tolist() == [12.0, 18.0]
    assert finite_difference_gradient(in_block, {}).tolist() == [12.0, 18.0]
    assert finite_difference_gradient(recorded, {}).tolist() == [36.0, 54.0]
    # d = x.data; d[:] = x: torch makes d part of the graph while x's history stays: not modelled
    copied_in = Program((2,), (Step("data", "x", (), "v1"), Step("setitem_t", "v1", ("x",))), grad=True)
    assert predict(copied_in, {}).gradient_unmodelled and not predict(in_block, {}).gradient_unmodelled
    torch_like = {"values.x": [2.0, 3.0], "values.v1": [2.0, 3.0], "shares_memory.v1.x": True, "grad.x0": [12.0, 18.0]}
    assert Gradient().check(copied_in, _observed("torch", torch_like), {}) is None


def test_a_write_under_no_grad_is_a_block_of_the_case_and_stays_in_place_in_the_out_of_place_twin() -> None:
    program = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("add_", "x", (100.0,), no_grad=True)),
                      grad=True)
    case = case_of(program)
    assert [s.text for s in case.flat_steps()] == program.statements()
    assert "      - no_grad:\n          - x.add_(100.0)" in program.case_text("c", "t")
    assert "with no_grad: x.add_(100.0)" in program.describe()
    alone = Program((2,), (Step("add_", "x", (100.0,), no_grad=True),), grad=True)
    assert out_of_place_twin(alone) == ()
    assert spelling_twin(alone) == (Step("iadd", "x", (100.0,), no_grad=True),)


def test_a_discover_run_on_numpy_counts_its_programs_and_finds_nothing(tmp_path: Path) -> None:
    result = discover(["numpy"], max_programs=40, seed=3)
    assert result.programs == 40 and result.found == []
    page = findings_page(result)
    assert "40 programs" in page and "No finding." in page and "| slice | view" in page
    refused = result.refused("numpy")
    assert 0 < result.explained["numpy"] == 40 - refused  # every program NumPy ran, the model explains
    assert f"| numpy | 40 | {refused} | {40 - refused} | 0 | 0 |" in page


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
    assert "values: {v1: [3.0], x: [100.0, 3.0]}" in text  # Paddle's override holds what it did


def test_a_new_finding_gets_an_upstream_draft_with_a_plain_python_reproduction(tmp_path: Path) -> None:
    numpy_obs, torch_obs = run_program(NARROW_TWICE, ["numpy", "torch"], None)
    paddle_obs = Observation("paddle", "3.3.1", observed={
        key: PADDLE_NARROW.get(str(key), value) for key, value in torch_obs.observed.items()})
    finding = ModelConsistency().check(NARROW_TWICE, observed_of(paddle_obs), {})
    assert finding is not None
    result = Discovery(["numpy", "torch", "paddle"], 7, programs=1, seconds=1.0,
                       found=[Found(finding, [numpy_obs, torch_obs, paddle_obs], 1.0)])
    write(result, tmp_path)
    draft = (tmp_path / "upstream.md").read_text()
    assert "## 1. [paddle 3.3.1] no composition of the operations' documented semantics" in draft
    assert "```python\n# discovered.model.paddle.n1 on paddle" in draft and "import paddle" in draft
    assert "- values of x: model [2.0, 3.0], observed [100.0, 3.0]" in draft
    assert "torch " in draft and "runs it" in draft and "Versions: paddle 3.3.1, Python 3." in draft
    known = Found(finding, [numpy_obs, torch_obs, paddle_obs], 1.0, known="paddle-narrow-offset")
    write(Discovery(["paddle"], 7, programs=1, seconds=1.0, found=[known]), tmp_path)
    assert not (tmp_path / "upstream.md").exists()  # a known bug has its report already


def test_the_command_needs_a_budget_and_writes_its_page(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "conformance", "discover", "--frameworks", "numpy", "--out", str(tmp_path)]
    refused = subprocess.run(run, capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode == 2 and "give a budget: --seconds N or --programs N" in refused.stderr
    done = subprocess.run([*run, "--programs", "15"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "15 programs" in done.stdout
    summary = json.loads((tmp_path / "findings.json").read_text())
    assert summary["programs"] == 15 and summary["findings"] == []
    assert summary["known"] == {} and summary["first_bug_seconds"] is None  # NumPy shows no known bug


@pytest.mark.parametrize("step", ["x.fill_(100.0)", "v1 = x.t()"])
def test_a_program_is_read_by_the_loader_whose_allowlist_refuses_anything_else(step: str) -> None:
    # every step a program renders is one the allowlisted step grammar reads: the loader,
    # not the generator, decides what can run (an unknown operation is refused there)
    text = Program((2, 2)).case_text("discovered.t", "t", ("expect: {}",)).replace("    steps:\n", "    steps:\n"
                                                                                  f"      - {step}\n"
                                                                                  "      - v9 = x.__class__()\n")
    result = load_text(text, "<gen>", registry.vocabulary(), draft=True)
    assert result.errors and "__class__" in str(result.errors[0][1])


def test_each_known_bug_matches_the_program_that_showed_it_and_not_a_program_without_its_shape() -> None:
    stale = Finding("gradient", "paddle", OVERWRITE, "s")  # a write through the view v1 of x
    assert triaged(stale) is PADDLE_STALE
    unaliased = Program((2,), (Step("fill_", "x", (100.0,)), Step("slice", "x", (0, 1, 1), "v1")), grad=True)
    assert triaged(Finding("gradient", "paddle", unaliased, "s")) is None  # the write came before any view
    assert triaged(Finding("gradient", "torch", OVERWRITE, "s")) is None  # another framework: a new bug
    offset = Finding("model", "paddle", NARROW_TWICE, "s")  # narrow of x.narrow(0, 1, 1)
    assert triaged(offset) is not None and triaged(offset).name == "paddle-narrow-offset"  # type: ignore[union-attr]
    at_start = Program((2,), (Step("narrow", "x", (0, 0, 1), "v1"), Step("narrow", "v1", (0, 0, 1), "v2"),
                              Step("setitem", "v2", ((0,), 100.0))))
    assert triaged(Finding("model", "paddle", at_start, "s")) is None
    transposed = Program((2, 2), (Step("transpose", "x", (0, 1), "v1"), Step("narrow", "v1", (0, 0, 1), "v2")),
                         grad=True)
    narrow_grad = triaged(Finding("gradient", "paddle", transposed, "s"))
    assert narrow_grad is not None and narrow_grad.name == "paddle-narrow-gradient"
    contiguous = Program((2, 2), (Step("narrow", "x", (0, 0, 1), "v1"),), grad=True)
    assert triaged(Finding("gradient", "paddle", contiguous, "s")) is None
    filled = Program((3,), (Step("expand", "x", (2, 3), "v1"), Step("fill_", "v1", (100.0,))))
    expand_write = triaged(Finding("model", "torch_compile", filled, "s"))
    assert expand_write is not None and expand_write.name == "torch-compile-expand-write"
    assert triaged(Finding("model", "torch", filled, "s")) is None  # eager: a new bug
    sliced = Program((3,), (Step("slice", "x", (0, 2, 1), "v1"), Step("fill_", "v1", (100.0,))))
    assert triaged(Finding("model", "torch_compile", sliced, "s")) is None  # no stride-0 view
    added = Program((3,), (Step("expand", "x", (2, 3), "v1"), Step("iadd", "v1", (100.0,))))
    assert triaged(Finding("refusal", "torch_compile", added, "s")) is expand_write  # eager refuses it
    rebound = Program((3,), (Step("expand", "x", (2, 3), "v1"), Step("add", "v1", (100.0,)),
                             Step("fill_", "v1", (100.0,))))
    assert triaged(Finding("model", "torch_compile", rebound, "s")) is None  # v1 = v1 + c is a new tensor
    added_in_place = Program((2,), (Step("add_", "x", (100.0,)),))
    not_written = triaged(Finding("model", "mindspore", added_in_place, "s"))
    assert not_written is not None and not_written.name == "mindspore-arithmetic-not-in-place"
    assert triaged(Finding("model", "mindspore", Program((2,), (Step("iadd", "x", (100.0,)),)), "s")) is None
    assert triaged(Finding("model", "paddle", added_in_place, "s")) is None

    def rule(oracle: str, framework: str, program: Program, *details: str) -> str | None:
        found = triaged(Finding(oracle, framework, program, "s", details))
        return None if found is None else found.name

    rebuffered = Program((2, 2), (Step("t", "x", (), "v1"), Step("contiguous", "v1", (), "v2"),
                                  Step("setitem", "v2", ((0, 0), 100.0))))
    assert rule("documented-view", "paddle", rebuffered) == "paddle-contiguous-rebuffers"
    already = Program((2, 2), (Step("slice", "x", (0, 1, 1), "v1"), Step("contiguous", "v1", (), "v2"),
                               Step("setitem", "v2", ((0, 0), 100.0))))
    assert rule("documented-view", "paddle", already) is None  # a contiguous view: contiguous() is itself
    viewed = Program((2, 2), (Step("t", "x", (), "v1"), Step("view", "v1", (4,), "v2"),
                              Step("setitem", "v2", ((0,), 1.0))))
    assert rule("documented-view", "mindspore", viewed) == "mindspore-view-copies"
    assert rule("documented-view", "mindspore", Program((4,), (Step("view", "x", (2, 2), "v1"),))) is None
    cloned = Program((2,), (Step("setitem", "x", ((0,), 100.0)), Step("slice", "x", (0, 1, 1), "v1")),
                     twin=(Step("setitem", "x", ((0,), 100.0)), Step("slice", "x", (0, 1, 1), "v1"),
                           Step("clone", "v1", (), "v1")), relation="clone")
    assert rule("metamorphic", "mindspore", cloned, "RuntimeError: The kernel Clone unregistered.") == (
        "mindspore-no-clone-kernel")
    assert rule("metamorphic", "mindspore", cloned, "RuntimeError: something else") is None
    gapped = Program((3,), (Step("unfold", "x", (0, 1, 2), "v1"), Step("setitem", "v1", ((0, 0), 100.0))))
    assert rule("model", "torch_compile", gapped) == "torch-compile-unfold-gaps"
    covering = Program((3,), (Step("unfold", "x", (0, 1, 1), "v1"), Step("setitem", "v1", ((0, 0), 100.0))))
    assert rule("model", "torch_compile", covering) is None  # every element in a window
    live_view = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("setitem", "x", ((0,), 100.0))), grad=True)
    assert rule("gradient", "mindspore", live_view) == "mindspore-stale-gradient"
    assert rule("gradient", "mindspore", Program((2,), (Step("setitem", "x", ((0,), 100.0)),), grad=True)) is None
    overlapping = Program((4,), (Step("as_strided", "x", ((1, 3), (0, 0)), "v1"),), grad=True)
    assert rule("gradient", "paddle", overlapping) == "paddle-overlapping-as-strided-gradient"
    apart = Program((4,), (Step("as_strided", "x", ((2,), (2,)), "v1"),), grad=True)
    assert rule("gradient", "paddle", apart) is None  # no element shares memory: a new bug
    assert rule("gradient", "torch", overlapping) is None
    written = Program((2,), (Step("as_strided", "x", ((1,), (0,)), "v1"), Step("setitem", "v1", ((0,), 100.0))),
                      grad=True)
    refused = "runs, to the values the documented semantics give and their gradient, what paddle refuses as unsafe "
    assert rule("refusal", "torch", written, ) is None  # (the summary names no refusal)
    assert triaged(Finding("refusal", "torch", written, refused + "(modified_saved_tensor, at step 5)")) is not None
    assert triaged(Finding("refusal", "torch", written, refused + "(overlapping_write, at step 2)")) is None
    unwritten = Program((2,), (Step("setitem", "x", ((0,), 100.0)), Step("as_strided", "x", ((1,), (0,)), "v1")),
                        grad=True)  # the write before the view: not the saved input's
    assert triaged(Finding("refusal", "torch", unwritten, refused + "(modified_saved_tensor, at step 5)")) is None
    for view, args in (("narrow", (0, 0, 1)), ("unfold", (0, 1, 1))):
        through = Program((2,), (Step(view, "x", args, "v1"), Step("fill_", "v1", (100.0,))), grad=True)
        assert triaged(Finding("refusal", "torch", through, refused + "(modified_saved_tensor, at step 5)")) is not None
    sliced = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("fill_", "v1", (100.0,))), grad=True)
    assert triaged(Finding("refusal", "torch", sliced, refused + "(modified_saved_tensor, at step 5)")) is None
    itself_set = Program((2,), (Step("setitem_t", "x", ("x",)),), grad=True)
    assert rule("refusal", "torch", itself_set) is None  # (the summary names no refusal)
    found = triaged(Finding("refusal", "torch", itself_set, refused + "(modified_saved_tensor, at step 4)"))
    assert found is not None and found.name == "paddle-setitem-of-itself"
    other_set = Program((2,), (Step("slice", "x", (0, 2, 1), "v1"), Step("setitem_t", "x", ("v1",))), grad=True)
    assert triaged(Finding("refusal", "torch", other_set, refused + "(modified_saved_tensor, at step 4)")) is None
    squared = Program((2,), (Step("imul_t", "x", ("x",)),), grad=True, twin=(Step("mul_t", "x", ("x",)),),
                      relation="spelling")
    saved = "RuntimeError: (PermissionDenied) Tensor '' used in gradient computation has been modified by an inplace"
    assert rule("metamorphic", "paddle", squared, saved + " operation.") == "paddle-augmented-assignment-rebinds"
    assert rule("metamorphic", "torch", squared, saved + " operation.") is None
    assert rule("metamorphic", "paddle", squared, "RuntimeError: something else") is None
    gapped_grad = Program((2, 1), (Step("unfold", "x", (0, 1, 2), "v1"), Step("add_", "v1", (100.0,))), grad=True)
    assert rule("gradient", "torch_compile", gapped_grad) == "torch-compile-unfold-gaps"
    assert rule("gradient", "torch", gapped_grad) is None
    strided_repeat = Program((3,), (Step("as_strided", "x", ((1, 3), (0, 0)), "v1"), Step("add_", "v1", (200.0,))))
    assert rule("refusal", "torch_compile", strided_repeat) == "torch-compile-expand-write"
    strided_apart = Program((3,), (Step("as_strided", "x", ((3,), (1,)), "v1"), Step("add_", "v1", (200.0,))))
    assert rule("refusal", "torch_compile", strided_apart) is None
    register_derived()
    transposed_out = Program((2, 2), (Step("t", "x", (), "v1"), Step("abs_out", "v1", ("v1",))))
    assert rule("model", "paddle", transposed_out) == "paddle-write-ignores-strides"
    sliced_out = Program((3,), (Step("slice", "x", (0, 2, 1), "v1"), Step("abs_out", "v1", ("v1",))))
    assert rule("model", "paddle", sliced_out) is None  # a contiguous view: a new bug
    overlapping_out = Program((2,), (Step("as_strided", "x", ((2,), (0,)), "v1"), Step("abs_out", "v1", ("v1",))))
    assert rule("documented-view", "paddle", overlapping_out) == "paddle-write-ignores-strides"
    rows = Program((2, 2), (Step("t", "x", (), "v1"), Step("setitem_rows", "v1", ((0,), 100.0))))
    assert rule("model", "paddle", rows) == "paddle-write-ignores-strides"
    assert rule("model", "torch", rows) is None
    logical = Program((3,), (Step("slice", "x", (0, 2, 1), "v1"), Step("logical_not_", "v1", ())))
    assert rule("model", "paddle", logical) == "paddle-logical-in-place-bool"
    assert rule("model", "paddle", Program((3,), (Step("sin_", "x", ()),))) is None
    itself = Program((1,), (Step("slice", "x", (0, 1, 1), "v1"), Step("hypot_", "v1", ("v1",))))
    assert rule("model", "paddle", itself) == "paddle-hypot-aliased-operand"
    apart = Program((2,), (Step("slice", "x", (0, 1, 1), "v1"), Step("clone", "v1", (), "v2"),
                           Step("hypot_", "v1", ("v2",))))
    assert rule("model", "paddle", apart) is None  # an operand of its own: a new bug
    assert rule("model", "torch", itself) is None
    spelled = Program((2,), (Step("iadd", "x", (100.0,)),), twin=(Step("add_", "x", (100.0,)),), relation="spelling")
    no_shape = "AttributeError: 'float' object has no attribute 'shape'"
    assert rule("metamorphic", "paddle", spelled, no_shape) == "paddle-scalar-operand"
    assert rule("metamorphic", "paddle", spelled, "RuntimeError: something else") is None
    named = Program((2,), (Step("iadd_t", "x", ("x",)),), twin=(Step("add_t", "x", ("x",)),), relation="spelling")
    assert rule("metamorphic", "paddle", named, no_shape) is None  # a tensor operand: not the scalar refusal


def test_every_known_bug_names_an_upstream_link_and_corpus_cases_that_exist() -> None:
    ids = {case_id for path in (ROOT / "cases").rglob("*.yaml")
           for case_id in re.findall(r"^  - id: (\S+)$", path.read_text(encoding="utf-8"), re.M)}
    # an upstream issue, or, for a behaviour against the documentation that the corpus records as a
    # documentation disagreement and no issue reports, the documentation page
    upstream = ("https://github.com/", "https://www.mindspore.cn/docs/", "https://docs.pytorch.org/",
                "https://www.paddlepaddle.org.cn/documentation/")
    for rule in KNOWN:
        assert rule.links and all(link.startswith(upstream) for link in rule.links), rule.name
        assert rule.cases and set(rule.cases) <= ids, rule.name


def test_a_known_bug_is_a_finding_once_with_its_status_then_only_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.discover.run as discover_run

    def crashing(program: Program, frameworks: list[str], sandbox: object) -> list[Observation]:
        return [Observation("paddle", "3.3.1", status="error", reason="timed out after 10 s")]

    monkeypatch.setattr(discover_run, "run_program", crashing)
    monkeypatch.setattr(discover_run, "triaged", lambda finding: PADDLE_STALE)  # every crash "is" the known bug
    result = discover(["paddle"], max_programs=30, seed=1)
    assert len(result.found) == 1 and result.found[0].known == PADDLE_STALE.name
    assert not result.found[0].flaky  # Hypothesis' replay of the program still shows it
    assert result.triaged[PADDLE_STALE.name] >= 2  # the first program and the ones after it
    assert result.found[0].status().startswith("known: https://github.com/PaddlePaddle/Paddle/pull/68520")
    page = findings_page(result)
    assert "## Known bugs" in page and f"| {PADDLE_STALE.summary} | {result.triaged[PADDLE_STALE.name]} |" in page
    assert result.known_by_framework["paddle"] == result.triaged[PADDLE_STALE.name]
    assert "| known: https://github.com/PaddlePaddle/Paddle/pull/68520; in the corpus: " in page
    kept, sampled = result.precision[PADDLE_STALE.name]
    assert sampled >= 1 and kept == sampled and f" | {kept} of {sampled} | " in page


def test_a_rule_that_absorbs_programs_of_another_shape_loses_precision_and_they_become_findings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.discover.run as discover_run

    def crashing(program: Program, frameworks: list[str], sandbox: object) -> list[Observation]:
        long = len(program.steps) >= 4  # the long programs crash, the others run and show nothing
        return [Observation("paddle", "3.3.1", status="error" if long else "ran", reason="timed out after 10 s")]

    monkeypatch.setattr(discover_run, "run_program", crashing)
    # a rule too wide: it matches programs of four steps or more, whose minimal form has one
    monkeypatch.setattr(discover_run, "triaged", lambda f: PADDLE_STALE if len(f.program.steps) >= 4 else None)
    monkeypatch.setattr(discover_run, "reduce_steps", lambda found, fws, sandbox: Found(
        Finding(found.finding.oracle, found.finding.framework, Program((1,), (Step("fill_", "x", (100.0,)),)),
                found.finding.summary), found.observations, found.seconds, runs=2))
    result = discover(["paddle"], max_programs=400, seed=1)  # Hypothesis' shrinking takes the first 60 or so
    kept, sampled = result.precision.get(PADDLE_STALE.name, (0, 0))
    assert sampled >= 1 and kept == 0
    assert any(f.known is None and len(f.finding.program.steps) == 1 for f in result.found)


def test_a_compiled_mode_is_observed_on_what_its_caller_holds_with_one_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import conformance.discover.run as discover_run
    from conformance.ir import results_of
    from conformance.model import ResultKey
    from conformance.run import compiled

    apart: list[list[str]] = []
    monkeypatch.setattr(compiled.CompiledRunner, "_observe_apart", lambda self: apart.append(self.apart))
    # v1 and v2 are intermediates (the write reads v2; v1 only feeds v2): x and what is returned
    torch_obs, compiled_obs = run_program(NARROW_TWICE, ["torch", "torch_compile"], None)
    case = case_of(NARROW_TWICE)
    assert discover_run.returned(case) == {"x"} | set(results_of(case.steps))
    named = {name for key in compiled_obs.observed for name in key.names}
    assert named <= discover_run.returned(case) and "v1" not in named
    assert {"v1", "v2"} <= {name for key in torch_obs.observed for name in key.names}  # control: eager sees all
    assert apart == []  # no second compile
    assert torch_obs.observed[ResultKey("values", ("x",))] == compiled_obs.observed[ResultKey("values", ("x",))]


def test_each_refusal_reason_shows_the_first_refused_program_and_its_error_escaped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.discover.run as discover_run

    def refusing(program: Program, frameworks: list[str], sandbox: object) -> list[Observation]:
        error = {"at": 1, "kind": "other", "type": "RuntimeError", "message": "The kernel | *Fill* unregistered."}
        return [Observation("mindspore", "2.10.0", error=error)]

    monkeypatch.setattr(discover_run, "run_program", refusing)
    result = discover(["mindspore"], max_programs=5, seed=2)
    assert result.refusals[("mindspore", "other")] == 5
    example = result.refusal_examples[("mindspore", "other")]
    assert example.startswith("RuntimeError: The kernel | *Fill* unregistered. (in: ")
    page = findings_page(result)
    assert "- mindspore, other: RuntimeError: The kernel \\| \\*Fill\\* unregistered. (in: " in page


def test_a_finding_met_at_the_end_of_the_budget_is_shrunk_and_reproduced(monkeypatch: pytest.MonkeyPatch) -> None:
    # the budget is spent by the very program that shows the bug: Hypothesis' replays of it
    # while it shrinks must still run it, or the finding would read "not reproduced"
    import conformance.discover.run as discover_run

    def crashing(program: Program, frameworks: list[str], sandbox: object) -> list[Observation]:
        return [Observation("paddle", "3.3.1", status="error", reason="timed out after 10 s")]

    monkeypatch.setattr(discover_run, "run_program", crashing)
    result = discover(["paddle"], max_programs=1, seed=1)
    assert len(result.found) == 1 and not result.found[0].flaky
    assert result.programs > 1  # the shrinking's runs are counted, past the budget


def test_runs_on_shards_of_a_seed_draw_between_them_the_programs_of_one_run() -> None:
    one = discover(["numpy"], max_programs=2 * ROUND, seed=3)
    two = discover_in_parallel(["numpy"], 2, max_programs=2 * ROUND, seed=3)
    assert one.found == [] and two.found == []  # nothing to shrink: the rounds are whole
    assert two.programs == one.programs == 2 * ROUND
    assert two.drawn == one.drawn and two.refusals == one.refusals and two.decisions == one.decisions


def test_the_runs_of_a_parallel_discovery_are_merged_without_repeating_a_finding() -> None:
    bug = Finding("crash", "paddle", Program((2,), (Step("fill_", "x", (100.0,)),)), "timed out")
    wider = Finding("crash", "paddle", Program((2,), (Step("fill_", "x", (100.0,)), Step("zero_", "x"))), "timed out")
    first = Discovery(["paddle"], 5, programs=10, seconds=4.0, first_bug=3.0, room=["fill_"],
                      found=[Found(bug, [], 3.0), Found(bug, [], 3.5, known=PADDLE_STALE.name)])
    second = Discovery(["paddle"], 5, programs=12, seconds=5.0, first_bug=2.0, room=["fill_"],
                       found=[Found(bug, [], 2.5), Found(wider, [], 2.8), Found(bug, [], 1.0, known=PADDLE_STALE.name)])
    first.refusals[("paddle", "crash")] += 2
    second.refusals[("paddle", "crash")] += 3
    first.refusal_examples[("paddle", "crash")] = "the first run's"
    second.refusal_examples[("paddle", "crash")] = "the second run's"
    first.precision[PADDLE_STALE.name], second.precision[PADDLE_STALE.name] = (1, 2), (3, 3)
    first.drawn["fill_"], second.drawn["fill_"] = 4, 6
    first.explained["paddle"], second.explained["paddle"] = 3, 4
    merged_result = merged([first, second])
    assert merged_result.programs == 22 and merged_result.seconds == 5.0 and merged_result.first_bug == 2.0
    # one finding per kind, the earliest; the wider program is one the smaller one stands for
    assert [(f.seconds, f.known) for f in merged_result.found] == [(1.0, PADDLE_STALE.name), (2.5, None)]
    assert merged_result.refusals[("paddle", "crash")] == 5
    assert merged_result.refusal_examples[("paddle", "crash")] == "the first run's"
    assert merged_result.precision[PADDLE_STALE.name] == (4, 5) and merged_result.drawn["fill_"] == 10
    assert merged_result.explained["paddle"] == 7


@pytest.mark.parametrize("jobs", ["0", "-1", "two", "65"])
def test_the_command_refuses_a_number_of_jobs_it_cannot_run(jobs: str) -> None:
    refused = subprocess.run([sys.executable, "-m", "conformance", "discover", "--frameworks", "numpy",
                              "--programs", "5", "--jobs", jobs], capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode == 2
    assert "is not a number of runs from 1 to 64; give the number of cores to use, e.g. --jobs 2" in refused.stderr


def test_an_in_place_entry_is_derived_from_numpys_ufunc_of_its_name_or_not_at_all() -> None:
    made = {op.name: op for op in derived_writes(["method:sin_", "method:atan2_", "method:greater_", "method:add_",
                                                   "method:sigmoid_", "method:bitwise_and_", "method:ldexp_",
                                                   "method:round_", "fn:cos", "method:sin"])}
    # add_ is written in programs.py; sigmoid_ and round_ have no ufunc of their name; NumPy's
    # bitwise_and and ldexp take no float64 pair; method:sin is no in-place entry; fn:cos is
    # written through its out=
    assert set(made) == {"sin_", "atan2_", "greater_", "cos_out"}
    assert all(op.derived and not op.analytic for op in made.values())
    assert made["cos_out"].out and made["cos_out"].render("v1", ("v2",)) == "cos(v2, out=v1)"
    assert [op.render("v1", ("v2",)) for op in derived_writes(["fn:atan2", "fn:greater"])] == [
        "atan2(v1, v2, out=v1)"]  # a boolean result has no out= form here
    assert made["sin_"].render("v1", ()) == "v1.sin_()" and not made["sin_"].operand
    assert made["atan2_"].render("v1", ("x",)) == "v1.atan2_(x)" and made["atan2_"].operand
    values, other = np.array([2.0, 3.0]), np.array([3.0, 2.0])
    assert made["greater_"].apply(values, ("x",), other).tolist() == [0.0, 1.0]  # a boolean, written as 0.0 / 1.0
    assert ufunc_of("gcd") is None and ufunc_of("not_a_function") is None and ufunc_of("arctan2") is np.arctan2
    assert ufunc_of("matmul") is None  # a generalized ufunc: not elementwise


def test_an_out_form_is_drawn_where_the_tables_function_takes_out() -> None:
    torch, paddle, mindspore = (registry.get_adapter(fw) for fw in ("torch", "paddle", "mindspore"))
    assert takes_out(torch, "fn:sin") and takes_out(torch, "fn:atan2")  # declared by torch's schemas
    assert not takes_out(torch, "fn:conj")  # torch.conj has no out= variant
    assert takes_out(registry.get_adapter("torch_compile"), "fn:sin")  # the table it compiles
    assert takes_out(paddle, "fn:exp") and not takes_out(paddle, "fn:sin")  # its entry names out=; none
    assert not takes_out(mindspore, "fn:exp")  # an entry that passes keywords on names no out=
    assert {"sin_out", "atan2_out"} <= room(["torch"])[1] and "sin_out" not in room(["torch", "paddle"])[1]
    assert "exp_out" in room(["torch", "paddle", "numpy"])[1] and "exp_out" not in room(["mindspore"])[1]


def test_a_new_in_place_entry_of_a_table_is_drawn_without_a_line_of_the_generator(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # method:cbrt_ is in no table: torch has no Tensor.cbrt_. Give torch's table the entry
    # and the vocabulary its key, and a run on torch draws it, rendered, as the loader reads it
    import dataclasses

    import conformance.discover.run as discover_run

    vocabulary = registry.vocabulary()
    widened = dataclasses.replace(vocabulary, operations=set(vocabulary.operations or ()) | {"method:cbrt_"})
    monkeypatch.setattr(registry, "vocabulary", lambda: widened)
    monkeypatch.setitem(registry.get_adapter("torch").ops, "method:cbrt_", lambda x: x.pow_(1.0 / 3.0))
    monkeypatch.setattr(discover_run, "registry", registry)
    monkeypatch.delitem(WRITES_BY_NAME, "cbrt_", raising=False)
    try:
        _, writes = room(["torch"])
        assert "cbrt_" in writes and WRITES_BY_NAME["cbrt_"].derived
        assert "cbrt_" not in room(["torch", "paddle"])[1]  # Paddle's table has no such entry
        drawn = find(programs(grad=False), lambda p: any(s.op == "cbrt_" for s in p.steps))
        assert any(line.endswith(".cbrt_()") for line in drawn.statements())
        assert case_of(drawn).flat_steps()  # the loader reads it with the widened vocabulary
    finally:
        WRITES_BY_NAME.pop("cbrt_", None)


def test_every_derived_write_drawn_on_torch_gives_the_values_of_numpys_function() -> None:
    # each derived write once, on a view of an input of both signs, with and without an
    # operand that overlaps its target: torch eager holds what the model (NumPy's ufunc) says
    _, writes = room(["torch"])
    derived = sorted(name for name in writes if WRITES_BY_NAME[name].derived)
    assert len(derived) >= 50
    for name in derived:
        last = Step(name, "x", ()) if not WRITES_BY_NAME[name].operand else Step(name, "v1", ("v2",))
        program = Program((2, 3), (Step("slice", "x", (0, 1, 1), "v1"), Step("neg_", "v1", ()),
                                   Step("slice", "x", (1, 2, 1), "v2"), last))
        (observation,) = run_program(program, ["torch"], None)
        observed = observed_of(observation)
        assert observed.status == "ran" and observed.error is None, (name, observed.error)
        assert explanations(program, observed.values)[0], (name, observed.values)


def test_a_derived_write_reading_values_beyond_its_domain_is_judged_by_nothing() -> None:
    within = Program((2,), (Step("sin_", "x", ()),))
    beyond = Program((2,), (Step("mul_", "x", (DOMAIN,)), Step("sin_", "x", ())))
    assert not predict(within, {}).undefined and predict(beyond, {}).undefined
    # a NaN a derived write leaves (arctanh of 2) is zeroed by zero_, as every framework does
    nan_then_zero = Program((1,), (Step("arctanh_", "x", ()), Step("zero_", "x", ())))
    assert predict(nan_then_zero, {}).values["x"].tolist() == [0.0]
    # a wrong value a derived write shows is a kind of its own: it stands for no misplaced element
    misplaced = Finding("model", "paddle", NARROW_TWICE, "s")
    hypot = Finding("model", "paddle", Program((1,), (Step("slice", "x", (0, 1, 1), "v1"),
                                                     Step("hypot_", "v1", ("v1",)))), "s")
    assert "hypot_" in hypot.signature()[2] and not known(hypot, {misplaced.signature()})


def test_a_run_whose_parent_is_gone_stops_drawing() -> None:
    # a worker of --jobs asks whether the process that started it is still there
    checks = iter([False] * 5 + [True] * 10_000)
    result = discover(["numpy"], max_programs=1000, seed=3, stopped=lambda: next(checks))
    assert 0 < result.programs < 10

