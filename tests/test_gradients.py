"""A backward() step read functionally (issue 37, conformance/run/gradients.py): on the fake
adapter whose gradients are functional, eager and compiled."""

from __future__ import annotations

import textwrap

from fake_adapter import FakeAdapter, FunctionalAdapter, FunctionalCompiled

from conformance.load.reader import Vocabulary, load_text
from conformance.model import Case, ResultKey
from conformance.run import gradients
from conformance.run.engine import ERROR, FAIL, NOT_APPLICABLE, PASS, UNCHECKED, run

FRAMEWORKS = ("fake", "functional", "functional_compiled")
GIVEN = "{x: {data: [1.0, 2.0], requires_grad: true}, k: [3.0, 4.0]}"


def case(steps: list[str], expect: str, given: str = GIVEN) -> Case:
    steps_yaml = "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: t.grad
    title: test
    given: {given}
    steps:
{steps_yaml}
    expect: {expect}
""")
    result = load_text(text, "t.yaml", Vocabulary(frameworks=FRAMEWORKS))
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


def test_backward_is_the_gradient_of_the_steps_before_it_with_respect_to_the_leaves() -> None:
    c = case(["y = x * x", "z = y * k", "z.sum().backward()"], "{grad: {x: [6.0, 16.0]}, values: {z: [3.0, 16.0]}}")
    adapter = FunctionalAdapter()
    outcome = run(c, adapter)
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.observed[ResultKey("grad", ("x",))] == [6.0, 16.0]
    assert [s.status for s in outcome.steps] == ["ok", "ok", "ok"] and adapter.asked == 1


def test_a_second_backward_adds_to_the_first_as_grad_accumulates() -> None:
    c = case(["y = x * x", "y.sum().backward()", "(y * k).sum().backward()"], "{grad: {x: [8.0, 20.0]}}")
    assert run(c, FunctionalAdapter()).verdict == PASS


def test_retain_graph_is_accepted_and_means_nothing() -> None:
    c = case(["y = x * k", "y.sum().backward(retain_graph=True)"], "{grad: {x: [3.0, 4.0]}}")
    assert run(c, FunctionalAdapter()).verdict == PASS


def test_a_wrong_gradient_fails_with_the_observed_one() -> None:
    c = case(["y = x * x", "y.sum().backward()"], "{grad: {x: [1.0, 1.0]}}")
    outcome = run(c, FunctionalAdapter())
    assert outcome.verdict == FAIL and outcome.mismatches[0].what == "grad of x"
    assert outcome.mismatches[0].observed == "[2.0, 4.0]"


def test_no_backward_no_gradient() -> None:
    assert run(case(["y = x * k"], "{grad: {x: null}}"), FunctionalAdapter()).verdict == PASS


def test_a_non_leaf_grad_is_not_observable_never_a_pass() -> None:
    c = case(["y = x * k", "y.sum().backward()"], "{grad: {y: null}}")
    outcome = run(c, FunctionalAdapter())
    assert outcome.verdict == UNCHECKED, outcome
    assert "grad of y" in outcome.unobservable[0] and "functional" in outcome.unobservable[0]
    # nor is an input the steps rebound: the name no longer holds the leaf
    c = case(["x = x * k", "x.sum().backward()"], "{grad: {x: [3.0, 4.0]}}")
    assert run(c, FunctionalAdapter()).verdict == UNCHECKED
    # the same object under another name is the leaf
    c = case(["x0 = x", "y = x * k", "y.sum().backward()"], "{grad: {x0: [3.0, 4.0]}}")
    assert run(c, FunctionalAdapter()).verdict == PASS


def test_requires_grad_and_is_leaf_stay_unobservable() -> None:
    c = case(["y = x * k", "y.sum().backward()"], "{requires_grad: {x: true}, is_leaf: {x: true}, "
                                                  "grad: {x: [3.0, 4.0]}}")
    outcome = run(c, FunctionalAdapter())
    assert outcome.verdict == PASS and len(outcome.unobservable) == 2


def test_the_gradient_is_computed_on_fresh_inputs_the_run_is_not_replayed_on_its_own() -> None:
    # x.add_(k) ran once in the eager steps; the gradient's function runs it again on its own inputs
    c = case(["x.add_(k)", "y = x * x", "y.sum().backward()"], "{values: {x: [4.0, 6.0]}, grad: {x: [8.0, 12.0]}}")
    assert run(c, FunctionalAdapter()).verdict == PASS


def test_the_gradient_s_error_is_the_backward_step_s() -> None:
    c = case(["y = x * k", "y.backward()"], "{error: {at: 2, kind: other, functional: {type: TypeError, "
                                            "match: 'scalar-output'}}, grad: {x: null}}")
    outcome = run(c, FunctionalAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.steps[1].status == "error"


def test_a_backward_with_no_functional_reading_is_not_applicable_saying_why() -> None:
    for steps, words in ((["y = x * k", "z = y.sum().backward()"], "step of its own"),
                         (["y = x * k", "y.sum().backward(create_graph=True)"], "create_graph"),
                         (["y = x * k", "y.sum().backward(inputs=[x])"], "inputs")):
        outcome = run(case(steps, "{grad: {x: null}}"), FunctionalAdapter())
        assert outcome.verdict == NOT_APPLICABLE and words in outcome.reason, outcome.reason


def test_a_framework_without_any_gradient_still_lacks_backward() -> None:
    class NoGradients(FakeAdapter):
        name = "fake"

        def operations(self) -> dict:
            return {**super().operations(), "method:sum": lambda x: x.sum(),
                    "method:backward": FunctionalAdapter().ops["method:backward"]}

    assert not gradients.functional(NoGradients())
    outcome = run(case(["y = x * k", "y.sum().backward()"], "{grad: {x: null}}"), NoGradients())
    assert outcome.verdict == NOT_APPLICABLE and "no backward()" in outcome.reason


def test_the_loss_function_is_the_steps_before_the_backward_as_a_user_writes_them() -> None:
    c = case(["y = x * k", "y.sum().backward()", "z = y * 2", "(z * x).sum().backward()"], "{grad: {x: null}}")
    ops = FunctionalAdapter().ops
    assert gradients.loss_function(c, 3, ops).source() == (
        "def case(x, k):\n    y = x * k\n    z = y * 2\n    loss = _sum(z * x)\n    return (loss,)")


def test_a_compiled_mode_compiles_the_gradient_function() -> None:
    c = case(["y = x * x", "z = y * k", "z.sum().backward()"], "{grad: {x: [6.0, 16.0]}, values: {z: [3.0, 16.0]}}")
    adapter = FunctionalCompiled()
    outcome = run(c, adapter)
    assert outcome.verdict == PASS, outcome.mismatches
    assert adapter.asked == 2  # the eager run's, and the compiled gradient's
    assert adapter.compiled == 2  # the case's function (without the backward step), its gradient


def test_a_compiled_gradient_that_raises_fails_at_the_backward_step() -> None:
    c = case(["y = x * k", "y.backward()"], "{error: {at: 2, kind: other, functional_compiled: {type: TypeError, "
                                            "match: 'scalar-output'}}}")
    outcome = run(c, FunctionalCompiled())
    assert outcome.verdict == PASS, outcome.mismatches
    assert [s.status for s in outcome.steps] == ["ok", "error"]


def test_an_unexpected_gradient_error_is_an_error_of_its_step() -> None:
    outcome = run(case(["y = x * k", "y.backward()"], "{grad: {x: null}}"), FunctionalAdapter())
    assert outcome.verdict == FAIL and outcome.mismatches[0].what == "step 2 raised"
    assert ERROR != outcome.verdict


def test_a_step_that_returns_the_leaf_itself_binds_no_leaf() -> None:
    # JAX's detach() is stop_gradient, which returns a concrete array itself: d is a, but what
    # the case asks of d is the gradient of what the step made
    class ReturnsItself(FunctionalAdapter):
        def operations(self) -> dict:
            return {**super().operations(), "method:detach": lambda x: x}

    c = case(["d = x.detach()", "y = x * k", "y.sum().backward()"], "{grad: {x: [3.0, 4.0], d: null}}")
    outcome = run(c, ReturnsItself())
    assert outcome.verdict == PASS and "grad of d" in outcome.unobservable[0]


def test_grad_read_as_a_step_is_the_leaf_s_gradient_so_far() -> None:
    c = case(["y = x * k", "g0 = x.grad", "y.sum().backward()", "g = x.grad", "y.sum().backward()", "g2 = x.grad"],
             "{values: {g: [3.0, 4.0], g2: [6.0, 8.0]}, same_object: {g & g2: false}}")
    outcome = run(c, FunctionalAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    # of a non-leaf: not applicable, saying why; inside a compiled function: not applicable
    outcome = run(case(["y = x * k", "y.sum().backward()", "g = y.grad"], "{grad: {x: [3.0, 4.0]}}"),
                  FunctionalAdapter())
    assert outcome.verdict == NOT_APPLICABLE and "non-leaf" in outcome.reason
    outcome = run(case(["y = x * k", "y.sum().backward()", "g = x.grad"], "{grad: {x: [3.0, 4.0]}}"),
                  FunctionalCompiled())
    assert outcome.verdict == NOT_APPLICABLE and "compiled" in outcome.reason


def test_a_step_computing_with_a_grad_read_has_no_functional_reading() -> None:
    outcome = run(case(["y = x * k", "y.sum().backward()", "g = x.grad", "z = g * 2"], "{grad: {x: [3.0, 4.0]}}"),
                  FunctionalAdapter())
    assert outcome.verdict == NOT_APPLICABLE and "computes with a .grad" in outcome.reason


def test_the_gradient_s_function_draws_the_random_numbers_the_steps_drew() -> None:
    given = "{x: {data: [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], requires_grad: true}, k: [2.0, 2.0, 2.0, 2.0, " \
            "2.0, 2.0, 2.0, 2.0]}"
    outcome = run(case(["m = x.masked_at_random()", "(m * k).sum().backward()"], "{values: {m: [0.0]}}", given=given),
                  FunctionalAdapter())
    mask = [v != 0 for v in outcome.observed[ResultKey("values", ("m",))]]
    assert any(mask) and not all(mask)  # the case's seed draws a mixed mask
    c = case(["m = x.masked_at_random()", "(m * k).sum().backward()"],
             "{grad: {x: " + str([2.0 if m else 0.0 for m in mask]) + "}}", given=given)
    assert run(c, FunctionalAdapter()).verdict == PASS


def test_the_earlier_steps_warnings_are_not_the_backward_step_s() -> None:
    outcome = run(case(["y = x.warn()", "(y * k).sum().backward()"], "{warning: {at: 1, match: 'deprecated'}}"),
                  FunctionalAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.steps[0].warnings and outcome.steps[1].warnings == []
