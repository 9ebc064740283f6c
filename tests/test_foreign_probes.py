"""A tensor of another framework than the run's (a result of ``fn:<name>_from_dlpack``) is
observed through its own framework's adapter (issue 16: ``values``, ``shares_memory`` failed
with "y is a Tensor, not a tensor"), its methods are its framework's, and asking which
framework owns an object never imports one (conformance/run/probes.py, registry.owner)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from ready_adapter import ready_adapter

from conformance import registry
from conformance.load.reader import load_text
from conformance.model import Case, ResultKey
from conformance.run.engine import PASS, run


def adapter(framework: str) -> object:
    return ready_adapter(framework, setup=False)


def case(steps: list[str], expect: str, given: str = "{x: [1.0, 2.0, 3.0]}") -> Case:
    steps_yaml = "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: t.foreign
    title: test
    given: {given}
    steps:
{steps_yaml}
    expect: {expect}
""")
    result = load_text(text, "t.yaml", registry.vocabulary())
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


@pytest.mark.parametrize("framework", ["numpy", "paddle"])
def test_a_torch_result_is_observed_in_another_frameworks_run(framework: str) -> None:
    adapter("torch")
    c = case(["y = torch_from_dlpack(x)", "y[2] = 30.0"],
             "{values: {y: [1.0, 2.0, 30.0], x: [1.0, 2.0, 30.0]}, shares_memory: {y & x: true}, "
             "same_storage: {y & x: true}, dtype: {y: float32}, shape: {y: [3]}}")
    outcome = run(c, adapter(framework))
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.observed[ResultKey("values", ("y",))] == [1.0, 2.0, 30.0]
    assert outcome.observed[ResultKey("shares_memory", ("y", "x"))] is True


def test_a_paddle_result_in_torchs_run_has_its_own_version_counter_and_gradient() -> None:
    adapter("paddle")
    c = case(["p = paddle_from_dlpack(x)", "x[0] = 10.0", "p.requires_grad_()", "z = p * p", "z.sum().backward()"],
             "{version_change: {x: 1, p: 0}, requires_grad: {p: true}, grad: {p: [20.0, 4.0, 6.0]}}")
    outcome = run(c, adapter("torch"))
    assert outcome.verdict == PASS, outcome.mismatches


def test_the_memory_probe_writes_through_the_foreign_tensor() -> None:
    """The behaviour half of shares_memory writes through one of the pair with its owner's
    probes and restores it: a torch tensor and a Paddle tensor over one buffer overlap by
    both probes, and a copy by neither."""
    adapter("torch")
    adapter("paddle")
    c = case(["y = torch_from_dlpack(x)", "p = paddle_from_dlpack(x)", "q = p.clone()"],
             "{shares_memory: {y & p: true, y & q: false}, values: {x: [1.0, 2.0, 3.0]}}")
    for framework in ("numpy", "torch", "paddle"):
        outcome = run(c, adapter(framework))
        assert outcome.verdict == PASS, (framework, outcome.mismatches)


def test_a_method_of_a_foreign_tensor_is_its_frameworks() -> None:
    """p.split(1) of a Paddle tensor in torch's run is Paddle's table's split (pieces of one
    element, torch's meaning, which the Paddle adapter translates), not Paddle's split(1)
    reached through torch's passthrough (one piece)."""
    adapter("paddle")
    c = case(["p = paddle_from_dlpack(x)", "a, b, c = p.split(1)"], "{values: {a: [1.0], c: [3.0]}}")
    outcome = run(c, adapter("torch"))
    assert outcome.verdict == PASS, outcome.mismatches


def test_paddles_same_storage_sees_memory_shared_through_dlpack() -> None:
    """Paddle's _is_shared_buffer_with does not count a tensor imported through DLPack as the
    same buffer; the adapter's probe also compares the memory."""
    adapter("paddle")
    c = case(["p = paddle_from_dlpack(x)", "a = x[0:1]", "b = x[2:3]"],
             "{same_storage: {p & x: true, a & b: true}, shares_memory: {p & x: true, a & b: false}}")
    outcome = run(c, adapter("paddle"))
    assert outcome.verdict == PASS, outcome.mismatches


def test_asking_for_an_owner_imports_no_framework() -> None:
    code = textwrap.dedent("""\
        import sys, numpy
        from conformance import registry
        assert registry.owner(object()) is None and registry.owner([1.0]) is None
        assert registry.owner(numpy.zeros(2)).name == "numpy"
        print(sorted(m for m in ("torch", "paddle") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
