"""A case's ``functional_steps`` (issue 37): the same program without in-place writes, which
the frameworks whose arrays are immutable (an adapter's ``immutable``: JAX, TensorFlow and
their modes) run instead of ``steps`` (docs/case-format.md#functional-steps)."""

from __future__ import annotations

import textwrap

import pytest
from fake_adapter import FakeAdapter
from ready_adapter import ready_adapter

from conformance import registry
from conformance.adapters.base import Immutability
from conformance.load.reader import Vocabulary, load_text
from conformance.model import Case
from conformance.run.engine import FAIL, NOT_APPLICABLE, PASS, run
from conformance.site import repro
from conformance.tools import lint

FRAMEWORKS = ("fake", "frozen")

CASE = """\
cases:
  - id: t.functional
    title: a write through a view, and its functional counterpart
    given: {x: [1.0, 2.0, 3.0], two: [2.0, 2.0]}
    steps:
      - v = x[0:2]
      - v.add_(two)
    functional_steps:
      - v = x[0:2] + two
      - x = cat([v, x[2:]])
    expect:
      values: {x: [3.0, 4.0, 3.0], v: [3.0, 4.0]}
"""


class FrozenAdapter(FakeAdapter):
    """The fake with immutable arrays, as JAX's and TensorFlow's: it has no add_, and cat."""

    name = "frozen"
    immutable = Immutability(raises=(r"^TypeError: frozen",))

    def operations(self) -> dict:
        import numpy as np

        ops = {k: v for k, v in super().operations().items() if k != "method:add_"}
        ops["fn:cat"] = lambda tensors, dim=0: np.concatenate(tensors, axis=dim)
        return ops


class ThawedAdapter(FakeAdapter):
    """The fake with cat, and its arrays mutable."""

    def operations(self) -> dict:
        import numpy as np

        return {**super().operations(), "fn:cat": lambda tensors, dim=0: np.concatenate(tensors, axis=dim)}


def loaded(text: str) -> Case:
    result = load_text(text, "t.yaml", Vocabulary(frameworks=FRAMEWORKS))
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


def test_they_are_read_numbered_and_kept_apart_from_the_steps() -> None:
    case = loaded(CASE)
    assert [s.text for s in case.steps] == ["v = x[0:2]", "v.add_(two)"]
    assert [(s.number, s.text) for s in case.functional_steps] == [(1, "v = x[0:2] + two"),
                                                                    (2, "x = cat([v, x[2:]])")]
    assert case.program_for(False) is case
    functional = case.program_for(True)
    assert [s.text for s in functional.steps] == ["v = x[0:2] + two", "x = cat([v, x[2:]])"]
    assert functional.expect == case.expect


def test_a_framework_whose_arrays_are_immutable_runs_them_and_the_others_run_the_steps() -> None:
    case = loaded(CASE)
    frozen = run(case, FrozenAdapter())
    assert frozen.verdict == PASS, frozen.reason
    assert [r.text for r in frozen.steps] == ["v = x[0:2] + two", "x = cat([v, x[2:]])"]
    mutable = run(case, ThawedAdapter())
    assert mutable.verdict == PASS, mutable.reason
    assert [r.text for r in mutable.steps] == ["v = x[0:2]", "v.add_(two)"]


def test_without_them_an_immutable_framework_still_lacks_the_write() -> None:
    text = CASE.replace("    functional_steps:\n      - v = x[0:2] + two\n      - x = cat([v, x[2:]])\n", "")
    assert run(loaded(text), FrozenAdapter()).verdict == NOT_APPLICABLE


def test_their_expectations_are_checked_as_the_steps_are() -> None:
    wrong = CASE.replace("- x = cat([v, x[2:]])", "- x = cat([x[0:2], x[2:]])")
    outcome = run(loaded(wrong), FrozenAdapter())
    assert outcome.verdict == FAIL
    assert [(m.what, m.observed) for m in outcome.mismatches] == [("values of x", "[1.0, 2.0, 3.0]")]


def test_their_mistakes_are_reported_at_their_line_with_the_key_named() -> None:
    bad = textwrap.dedent("""\
        cases:
          - id: t.bad
            title: bad functional steps
            given: {x: [1.0]}
            steps:
              - y = x.add_(1)
            functional_steps:
              - y = x +
              - z = w * 2
            expect:
              values: {x: [2.0]}
          - id: t.empty
            title: empty functional steps
            given: {x: [1.0]}
            steps: ['y = x.add_(1)']
            functional_steps: []
            expect:
              values: {x: [2.0]}
        """)
    result = load_text(bad, "t.yaml", Vocabulary(frameworks=FRAMEWORKS))
    assert not result.cases
    rendered = [error.render() for _, error in result.errors]
    assert any("t.yaml:8:" in r and "y = x +" in r for r in rendered), rendered
    assert any("t.yaml:9:" in r and "'w' is not defined" in r for r in rendered), rendered
    assert any("t.yaml:16:" in r and "'functional_steps' must be a non-empty list" in r for r in rendered), rendered


def test_an_input_only_the_functional_steps_use_is_not_unused() -> None:
    text = CASE.replace("given: {x: [1.0, 2.0, 3.0], two: [2.0, 2.0]}",
                        "given: {x: [1.0, 2.0, 3.0], two: [2.0, 2.0], only: [1.0]}")
    text = text.replace("- x = cat([v, x[2:]])", "- x = cat([v, x[2:] * only])")
    findings = list(lint.check_unused_inputs(loaded(text)))
    assert findings == []
    text = text.replace("- x = cat([v, x[2:] * only])", "- x = cat([v, x[2:]])")
    assert [f.message for f in lint.check_unused_inputs(loaded(text))] == ["input 'only' is never used"]


def test_the_repro_list_of_immutable_frameworks_is_the_adapters() -> None:
    declared = {name for name in registry.BUILTIN
                if not registry.lineage(name) and registry.get_adapter(name).immutable is not None}
    assert declared == set(repro.IMMUTABLE_ARRAYS)
    # a compiled mode runs what the framework it compiles runs
    for name in registry.BUILTIN:
        assert repro.runs_functional_steps(name) == (registry.get_adapter(name).immutable is not None), name


def test_the_repro_snippet_spells_the_steps_the_framework_runs() -> None:
    case = loaded(CASE)
    assert "x = jnp.concatenate" in repro.snippet(case, "jax").text or "cat(" in repro.snippet(case, "jax").text
    assert "v.add_(two)" in repro.snippet(case, "torch").text
    assert "add_" not in repro.snippet(case, "jax").text


@pytest.mark.parametrize("framework", ["jax", "tensorflow"])
def test_jax_and_tensorflow_give_the_gradient_of_the_functional_program(framework: str) -> None:
    ready_adapter(framework)
    text = textwrap.dedent("""\
        cases:
          - id: t.grad
            title: the gradient through a write of a view of a non-leaf
            given:
              a: {data: [1.0, 1.0, 1.0], requires_grad: true}
              two: {data: [2.0, 2.0]}
            steps:
              - x = a * 1
              - v = x[0:2]
              - v.mul_(two)
              - x.sum().backward()
            functional_steps:
              - x = a * 1
              - v = x[0:2] * two
              - x = cat([v, x[2:]])
              - x.sum().backward()
            expect:
              values: {x: [2.0, 2.0, 1.0]}
              grad: {a: [2.0, 2.0, 1.0]}
        """)
    result = load_text(text, "t.yaml", registry.vocabulary())
    assert not result.errors, result.errors[0][1].render()
    outcome = run(result.cases[0], registry.get_adapter(framework))
    assert outcome.verdict == PASS, outcome.reason


def test_an_override_of_claims_alone_gives_their_stance_where_the_functional_steps_run() -> None:
    """A framework that runs a case's functional_steps may pass it without any expectation of
    its own, where the case's claims are about the in-place write it does not make: an
    override of claims alone says so; one with neither claims nor an expectation is refused,
    and one that restates the case's stances is a lint finding."""
    text = textwrap.dedent("""\
        cases:
          - id: t.claims_only
            title: claims alone
            claims: {S0-02: holds}
            given: {x: [1.0, 2.0]}
            steps: ['x.add_(1.0)']
            functional_steps: ['x = x + 1.0']
            expect: {values: {x: [2.0, 3.0]}}
            frameworks:
              jax:
                reason: "its functional_steps rebind x: no in-place write for the claim to be about"
                claims: {S0-02: related}
        """)
    result = load_text(text, "t.yaml", registry.vocabulary())
    assert not result.errors, result.errors[0][1].render()
    case = result.cases[0]
    assert case.claims_for("jax") == {"S0-02": "related"} and case.claims_for("torch") == {"S0-02": "holds"}
    assert case.expect_for("jax") == case.expect
    assert list(lint.check_identical_overrides(case)) == []
    same = load_text(text.replace("{S0-02: related}", "{S0-02: holds}"), "t.yaml", registry.vocabulary())
    assert [f.message for f in lint.check_identical_overrides(same.cases[0])] == [
        "the override for 'jax' states exactly the claims the case already states"]
    nothing = load_text(text.replace("        claims: {S0-02: related}\n", ""), "t.yaml",
                        registry.vocabulary())
    assert [e.message for _, e in nothing.errors] == ["the override for 'jax' changes nothing"]
