"""The compiled runner (conformance/run/compiled.py) on the fake adapter: a compiled mode is
the fake adapter with a ``compile`` of its own, so these rules are checked without a real
compiler: the same program for every mode, what the caller sees of its inputs, the step
that raised, and which expectations a mode uses (its lineage)."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
from fake_adapter import FakeAdapter

from conformance.load.reader import Vocabulary, load_text
from conformance.model import Case, ResultKey
from conformance.run.engine import FAIL, PASS, run

FRAMEWORKS = ("fake", "faithful", "copying", "other")


class FaithfulCompiled(FakeAdapter):
    """A compiler that runs the function as written, and keeps every program it was given."""
    name = "faithful"
    compiles = "fake"

    def __init__(self) -> None:
        super().__init__()
        self.results: list[Any] = []

    def compile(self, fn: Any) -> Any:
        def call(*args: Any) -> Any:
            out = fn(*args)
            self.results.append(out)
            return out
        return call


class CopyingCompiled(FakeAdapter):
    """A compiler whose function works on copies of its inputs: a write to an input is lost
    for the caller (as in Paddle's static programs)."""
    name = "copying"
    compiles = "fake"

    def compile(self, fn: Any) -> Any:
        return lambda *args: fn(*[np.array(a, copy=True) for a in args])


def case(steps: list[str], expect: str, extra: str = "", given: str = "{x: [1.0, 2.0], k: [1.0, 1.0]}") -> Case:
    steps_yaml = "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: t.compiled
    title: test
    given: {given}
    steps:
{steps_yaml}
    expect: {expect}
{extra}""")
    result = load_text(text, "t.yaml", Vocabulary(frameworks=FRAMEWORKS))
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


def test_a_faithful_compiler_passes_the_eager_expectations() -> None:
    c = case(["y = x.add_(k)"], "{values: {x: [2.0, 3.0]}, same_object: {y & x: true}, version_change: {x: 1}}")
    assert run(c, FakeAdapter()).verdict == PASS
    outcome = run(c, FaithfulCompiled())
    assert outcome.verdict == PASS, outcome.mismatches
    assert [r.status for r in outcome.steps] == ["ok"]


def test_a_write_the_compiled_function_loses_fails_the_shared_expectation() -> None:
    c = case(["y = x.add_(k)"], "{values: {x: [2.0, 3.0]}, version_change: {x: 1}}")
    outcome = run(c, CopyingCompiled())
    assert outcome.verdict == FAIL
    assert {m.what for m in outcome.mismatches} == {"values of x", "version_change of x"}
    assert outcome.observed[ResultKey("values", ("x",))] == [1.0, 2.0]  # the caller's input


def test_a_mode_uses_its_framework_override_then_its_own() -> None:
    # the override for 'fake' holds for every mode compiling fake; a mode's own override wins
    extra = """\
    frameworks:
      fake:
        reason: fake writes through add_ (measured)
        expect:
          values: {x: [2.0, 3.0]}
      copying:
        reason: the copying compiler works on copies of its inputs (measured)
        expect:
          values: {x: [1.0, 2.0]}
"""
    c = case(["y = x.add_(k)"], "{values: {x: [9.0, 9.0]}}", extra)
    assert run(c, FakeAdapter()).verdict == PASS
    assert run(c, FaithfulCompiled()).verdict == PASS
    copying = run(c, CopyingCompiled())
    assert copying.verdict == PASS, copying.mismatches
    assert copying.override_reason == "the copying compiler works on copies of its inputs (measured)"


def test_the_function_returns_what_the_program_leaves_whatever_the_expectations_mention() -> None:
    # y is mentioned only by another framework's override, z by no expectation: the function
    # returns both (no later step reads them), as a user's function returns its results,
    # so that what an expectation or an override says never changes what is compiled
    extra = """\
    frameworks:
      other:
        reason: test
        expect:
          values: {y: [2.0, 3.0]}
"""
    c = case(["y = x.add_(k)", "z = x.clone()"], "{values: {x: [2.0, 3.0]}}", extra)
    adapter = FaithfulCompiled()
    outcome = run(c, adapter)
    assert outcome.verdict == PASS
    assert len(adapter.results) == 1 and outcome.observed_apart == []
    y, z = adapter.results[0]
    assert y.tolist() == [2.0, 3.0] and z.tolist() == [2.0, 3.0]


def test_an_intermediate_an_expectation_mentions_is_observed_apart() -> None:
    # y is read by a later step: the function returns w only; y comes from a second compile
    # of the function that returns it as well, on fresh inputs, and its relation to x is that
    # call's; the outcome says which names were observed so
    c = case(["y = x.add_(k)", "w = y.clone()"],
             "{values: {y: [2.0, 3.0], w: [2.0, 3.0], x: [2.0, 3.0]}, same_object: {y & x: true}}")
    adapter = FaithfulCompiled()
    outcome = run(c, adapter)
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.observed_apart == ["y"]
    first, second = adapter.results
    assert len(first) == 1 and len(second) == 2  # (w,), then (w, y)
    # a compiler that loses the write shows it in both calls' x
    copying = run(c, CopyingCompiled())
    assert {m.what for m in copying.mismatches} >= {"values of x", "same_object(y, x)"}


def test_the_step_that_raised_is_the_first_prefix_that_raises_the_same() -> None:
    c = case(["y = x.add_(k)", "z = y.leafy_()", "w = x.clone()"],
             "{error: {at: 2, kind: inplace_on_leaf, faithful: {type: RuntimeError, match: leaf}}, "
             "values: {x: [2.0, 3.0]}}")
    outcome = run(c, FaithfulCompiled())
    assert outcome.verdict == PASS, outcome.mismatches
    assert [r.status for r in outcome.steps] == ["ok", "error", "not_run"]
    # the state the expectations see is the steps before it, compiled alone on fresh inputs
    assert outcome.observed[ResultKey("values", ("x",))] == [2.0, 3.0]


def test_an_unexpected_error_in_the_compiled_function_fails_at_its_step() -> None:
    c = case(["y = x.add_(k)", "z = y.leafy_()"], "{values: {x: [2.0, 3.0]}}")
    outcome = run(c, FaithfulCompiled())
    assert outcome.verdict == FAIL
    assert [m.what for m in outcome.mismatches][0] == "step 2 raised"


# ---- a program called more than once (calls:, docs/case-format.md, "Calling the program again")


class OnceCompiled(FakeAdapter):
    """A compiler whose function runs once and then only returns what it returned the first
    time (a cache keyed on nothing): its second call writes nothing."""
    name = "other"
    compiles = "fake"

    def compile(self, fn: Any) -> Any:
        first: list[Any] = []

        def call(*args: Any) -> Any:
            if not first:
                first.append(fn(*args))
            return first[0]
        return call


def test_a_program_called_twice_writes_twice_eager_and_compiled_with_one_compile() -> None:
    c = case(["y = x.add_(k)"], "{values: {x: [3.0, 4.0], y: [3.0, 4.0]}, version_change: {x: 2}}",
             "    calls: 2\n")
    assert c.calls == 2 and len(c.steps) == 1
    eager = run(c, FakeAdapter())
    assert eager.verdict == PASS, eager.mismatches
    assert [(s.number, s.status) for s in eager.steps] == [(1, "ok"), (2, "ok")]
    adapter = FaithfulCompiled()
    compiled = run(c, adapter)
    assert compiled.verdict == PASS, compiled.mismatches
    assert len(adapter.results) == 2  # the one compiled function, called twice
    # a compiler whose second call does nothing is caught
    stale = run(c, OnceCompiled())
    assert stale.verdict == FAIL and {m.what for m in stale.mismatches} == {"values of x", "values of y"}


def test_each_call_starts_from_the_callers_inputs_not_a_name_the_last_call_rebound() -> None:
    # x = x + k rebinds the function's own name: the caller's x is the same on each call, so
    # the second call computes what the first did; x.add_ writes the caller's x itself
    c = case(["x = x + k", "y = x * 1.0"], "{values: {x: [2.0, 3.0], y: [2.0, 3.0]}}", "    calls: 3\n")
    for adapter in (FakeAdapter(), FaithfulCompiled()):
        outcome = run(c, adapter)
        assert outcome.verdict == PASS, (adapter.name, outcome.mismatches)
        assert len(outcome.steps) == 6


class SpendingAdapter(FakeAdapter):
    """The fake adapter with ``x.spend_()``: marks x, and raises (as a leaf write does) where x
    is marked already, so a program calling it fails on its second call only."""

    def __init__(self) -> None:
        super().__init__()
        self.spent: list[np.ndarray] = []  # (kept alive: an id is never reused for another array)

    def operations(self) -> dict[str, Any]:
        def spend_(x: np.ndarray) -> np.ndarray:
            if any(a is x for a in self.spent):
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            self.spent.append(x)
            return x
        return {**super().operations(), "method:spend_": spend_}


class SpendingCompiled(SpendingAdapter):
    name = "faithful"
    compiles = "fake"

    def compile(self, fn: Any) -> Any:
        return fn


def test_an_error_of_the_second_call_is_at_its_own_step_number() -> None:
    # the second call's spend_ raises: step 4, after the first call's two steps; the state the
    # expectations see is the first call's and the second's add_ (x written twice)
    c = case(["x.add_(k)", "x.spend_()"], "{error: {at: 4, kind: inplace_on_leaf}, values: {x: [3.0, 4.0]}}",
             "    calls: 2\n")
    assert [s.number for s in c.called().flat_steps()] == [1, 2, 3, 4]
    for adapter in (SpendingAdapter(), SpendingCompiled()):
        outcome = run(c, adapter)
        assert outcome.verdict == PASS, (adapter.name, outcome.mismatches, [s.error for s in outcome.steps])
        assert [s.status for s in outcome.steps] == ["ok", "ok", "ok", "error"]
