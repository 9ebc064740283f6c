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
from conformance.run.engine import NOT_APPLICABLE, PASS, run
from conformance.run.gradients import lacking

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


def test_the_functional_frameworks_lack_it_because_backward_is_their_functional_gradient() -> None:
    for framework in ("jax", "tensorflow", "mindspore", "jax_jit", "tensorflow_function", "tensorflow_xla"):
        why = registry.get_adapter(framework).lacks(KEY)
        assert why is not None and "backward() step already is the functional gradient" in why, framework
    for framework in ("numpy", "array_api_strict"):
        assert "no autograd" in (registry.get_adapter(framework).lacks(KEY) or ""), framework
    for framework in ("torch", "paddle", "torch_compile", "torch_inductor", "paddle_static"):
        assert registry.get_adapter(framework).lacks(KEY) is None, framework


CASE = textwrap.dedent("""\
    cases:
      - id: t.functional_form
        title: test
        given:
          x: {data: [1.0, 2.0], requires_grad: true}
        steps:
          - gx, = autograd_grad((x * x).sum(), [x])
        expect: {values: {gx: [2.0, 4.0]}, grad: {x: null}}
    """)


def test_a_case_is_not_applicable_on_jax_and_runs_on_torch() -> None:
    result = load_text(CASE, "t.yaml", vocabulary())
    assert not result.errors
    case = result.cases[0]
    # the gradient machinery reads only backward() steps functionally: this one is the table's
    jax = registry.get_adapter("jax")
    assert "backward() step already is the functional gradient" in (lacking(case, jax) or "")
    if not jax.unavailable():
        jax.setup()
        outcome = run(case, jax)
        assert outcome.verdict == NOT_APPLICABLE and "functional gradient" in outcome.reason
    outcome = run(case, adapter("torch"))
    assert outcome.verdict == PASS, outcome.mismatches
