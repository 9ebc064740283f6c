"""The functional form of backward() as a step (issue 37): ``g, = autograd_grad(loss, [x])``,
the table entry ``fn:autograd_grad``, which is torch.autograd.grad on torch and paddle.grad
(paddle.autograd.grad) on Paddle, every argument and keyword as written; JAX, TensorFlow and
MindSpore lack it, their backward() step being their functional gradient already
(docs/case-format.md#gradients). The cases are cases/autograd/functional_form.yaml."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from ready_adapter import ready_adapter

from conformance import registry
from conformance.load.reader import load_text
from conformance.registry import vocabulary
from conformance.run.engine import PASS, run
from conformance.run.gradients import functional, lacking

KEY = "fn:autograd_grad"


adapter = ready_adapter


def torch_leaf(values: list[float]) -> Any:
    import torch

    return torch.tensor(values, requires_grad=True)


def paddle_leaf(values: list[float]) -> Any:
    import paddle

    t = paddle.to_tensor(values, dtype="float32")
    t.stop_gradient = False
    return t


LEAF = {"torch": torch_leaf, "paddle": paddle_leaf}


def raised(call: Any) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        call()
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("framework", ["torch", "paddle"])
def test_it_returns_the_gradients_and_leaves_grad_alone(framework: str) -> None:
    a = adapter(framework)
    x = LEAF[framework]([1.0, 2.0])
    (gx,) = a.ops[KEY]((x * x).sum(), [x])
    assert a.to_numpy(gx).tolist() == [2.0, 4.0]
    assert x.grad is None


def test_torch_gets_every_keyword_and_refuses_what_it_lacks_itself() -> None:
    import torch

    a = adapter("torch")
    x, u = torch_leaf([1.0, 2.0]), torch_leaf([5.0, 6.0])
    # torch's own keywords reach it: materialize_grads gives the unused input zeros, not None
    gx, gu = a.ops[KEY]((x * x).sum(), [x, u], allow_unused=True, materialize_grads=True)
    assert gu.tolist() == [0.0, 0.0]
    # Paddle's no_grad_vars is no keyword of torch's: torch's own refusal, word for word
    entry = raised(lambda: a.ops[KEY]((x * x).sum(), [x], no_grad_vars=[u]))
    direct = raised(lambda: torch.autograd.grad((x * x).sum(), [x], no_grad_vars=[u]))
    assert entry == direct and entry[0] == "TypeError" and "no_grad_vars" in entry[1]


def test_paddle_gets_every_keyword_and_refuses_what_it_lacks_itself() -> None:
    import paddle

    a = adapter("paddle")
    x, u = paddle_leaf([1.0, 2.0]), paddle_leaf([5.0, 6.0])
    # Paddle's own keywords reach it: allow_unused gives the unused input None
    gx, gu = a.ops[KEY]((x * x).sum(), [x, u], allow_unused=True)
    assert a.to_numpy(gx).tolist() == [2.0, 4.0] and gu is None
    # torch's materialize_grads is no keyword of Paddle's: Paddle's own refusal, word for word
    entry = raised(lambda: a.ops[KEY]((x * x).sum(), [x], materialize_grads=True))
    direct = raised(lambda: paddle.grad((x * x).sum(), [x], materialize_grads=True))
    assert entry == direct and entry[0] == "TypeError" and "materialize_grads" in entry[1]


def test_the_functional_frameworks_have_no_table_entry_and_read_the_step_as_their_gradient() -> None:
    for framework in ("jax", "tensorflow", "mindspore", "jax_jit", "tensorflow_function", "tensorflow_xla"):
        assert registry.get_adapter(framework).lacks(KEY) is not None, framework
        assert functional(registry.get_adapter(framework)), framework
    for framework in ("numpy", "array_api_strict"):
        assert "no autograd" in (registry.get_adapter(framework).lacks(KEY) or ""), framework
    for framework in ("torch", "paddle", "torch_compile", "torch_inductor", "paddle_static"):
        assert registry.get_adapter(framework).lacks(KEY) is None, framework


def loaded(steps: str, given: str = "{x: {data: [1.0, 2.0], requires_grad: true}}",
           expect: str = "{values: {gx: [2.0, 4.0]}, grad: {x: null}}") -> Any:
    text = textwrap.dedent(f"""\
        cases:
          - id: t.functional_form
            title: test
            given: {given}
            steps: {steps}
            expect: {expect}
        """)
    result = load_text(text, "t.yaml", vocabulary())
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


CASE = "['gx, = autograd_grad((x * x).sum(), [x])']"


@pytest.mark.parametrize("framework", ["torch", "jax", "tensorflow", "mindspore", "jax_jit", "tensorflow_function"])
def test_the_gradient_is_returned_and_grad_left_alone_on_every_framework(framework: str) -> None:
    a = adapter(framework)
    assert lacking(loaded(CASE), a) is None
    outcome = run(loaded(CASE), a)
    assert outcome.verdict == PASS, (outcome.reason, outcome.mismatches)


def test_a_form_without_a_functional_reading_is_not_applicable_where_gradients_are_functional() -> None:
    jax = registry.get_adapter("jax")
    two = "{x: {data: [1.0, 2.0], requires_grad: true}, k: [1.0, 1.0]}"
    for steps, said in [
        ("['gx, = autograd_grad((x * x).sum(), [x], create_graph=True)']", "create_graph=...) has no functional"),
        ("['gx, = autograd_grad((x * x).sum(), [x * 1])']", "a list of the given tensors"),
        ("['y = x * 2', 'gy, = autograd_grad(y.sum(), [y])']", "'y' is not an input that requires grad"),
        ("['gk, = autograd_grad((x * k).sum(), [k])']", "'k' is not an input that requires grad"),
        ("['gx, = autograd_grad((x * x).sum(), [x])', 'z = gx * 2']", "computes with the gradients autograd_grad"),
        ("['z = autograd_grad((x * x).sum(), [x])[0]']", "only as a top-level step of its own"),
    ]:
        case = loaded(steps, two, "{grad: {x: null}}")
        assert said in (lacking(case, jax) or ""), steps
        assert lacking(case, registry.get_adapter("torch")) is None, steps
