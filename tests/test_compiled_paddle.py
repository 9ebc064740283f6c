"""The paddle_static mode (issue 19) against the real Paddle (skipped where it is not
installed): cases run as one function compiled by paddle.jit.to_static (SOT), with SOT's
state cleared between compiles; what the compiled function does to its inputs, as measured
on Paddle 3.3.1."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance import registry
from conformance.load.reader import Vocabulary, load_text
from conformance.model import Case
from conformance.run.engine import FAIL, PASS, run
from conformance.run.function import build

ROOT = Path(__file__).resolve().parent.parent
XT = "{x: [1.0, 2.0, 3.0, 4.0], t: [1.0, 1.0, 1.0, 1.0]}"


def test_importing_the_mode_imports_no_paddle() -> None:
    code = ("import sys; from conformance.adapters.paddle_static_adapter import PaddleStaticAdapter; "
            "PaddleStaticAdapter(); print('paddle' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.stdout.strip() == "False", result.stderr[-2000:]


def test_the_mode_is_registered_as_paddle_compiled() -> None:
    assert registry.lineage("paddle_static") == ("paddle",)
    assert "paddle_static" in registry.BUILTIN and "paddle_static" not in registry.eager_names()


@pytest.fixture(scope="module")
def adapter() -> object:
    pytest.importorskip("paddle")
    from conformance.adapters.paddle_static_adapter import PaddleStaticAdapter

    a = PaddleStaticAdapter()
    a.setup()
    return a


def case(steps: list[str], expect: str, given: str = "{x: [1.0, 2.0, 3.0, 4.0]}", extra: str = "") -> Case:
    steps_yaml = "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: t.case
    title: test
    given: {given}
    steps:
{steps_yaml}
    expect: {expect}
{extra}""")
    result = load_text(text, "t.yaml", Vocabulary())
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


def _translations() -> int:
    from paddle.jit.sot.opcode_translator.executor.executor_cache import OpcodeExecutorCache

    return len(OpcodeExecutorCache().cache)


def test_an_inplace_method_on_an_input_is_lost(adapter: object) -> None:
    # x.add_(t) inside the compiled function: the static program runs add_ as add, so the
    # caller's x keeps its values and its counter, and y is a new tensor holding the result
    # (eager: y is x, x written; inplace.add_.tensor_operand_returns_self)
    c = case(["y = x.add_(t)"], "{same_object: {y & x: false}, shares_memory: {y & x: false}, "
                                "values: {x: [1.0, 2.0, 3.0, 4.0], y: [2.0, 3.0, 4.0, 5.0]}, version_change: {x: 0}}",
             given=XT)
    outcome = run(c, adapter)
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.framework == "paddle_static"


def test_item_assignment_on_an_input_is_seen_but_not_counted(adapter: object) -> None:
    # x[m] = 0.0 compiled: x holds the new values, but its inplace_version does not move
    # (eager: +1), measured (inplace.setitem.boolean_mask)
    c = case(["m = x > 2.0", "x[m] = 0.0"], "{values: {x: [1.0, 2.0, 0.0, 0.0]}, version_change: {x: 0}}")
    outcome = run(c, adapter)
    assert outcome.verdict == PASS, outcome.mismatches


def test_a_slice_of_an_input_comes_back_as_new_memory(adapter: object) -> None:
    # eager, x[1:] is a view of x; the compiled function returns a copy: a write through it
    # does not reach x (views.slice.offset_and_step)
    c = case(["a = x[1:]", "a[0] = 20.0"], "{shares_memory: {a & x: false}, values: {x: [1.0, 2.0, 3.0, 4.0], "
                                            "a: [20.0, 3.0, 4.0]}}")
    outcome = run(c, adapter)
    assert outcome.verdict == PASS, outcome.mismatches


def test_an_inplace_write_to_a_viewed_input_is_refused(adapter: object) -> None:
    # eager writes through; to_static refuses an in-place op on a tensor that has a view
    c = case(["v = x[1:]", "y = x.add_(t)"], "{error: {at: 2, kind: other, paddle_static: {type: InnerError, "
                                               "match: \"add_'s output variable is a viewed Tensor\"}}}", given=XT)
    outcome = run(c, adapter)
    assert outcome.verdict == PASS, outcome.mismatches
    failed = [s for s in outcome.steps if s.status == "error"]
    assert [s.number for s in failed] == [2]
    # SOT's report, compacted: no traceback, no path of this checkout
    assert "File \"" not in failed[0].error.message and str(ROOT) not in failed[0].error.message


def test_backward_through_the_compiled_function_reaches_the_input(adapter: object) -> None:
    c = case(["y = (x * 3.0).sum()", "y.backward()"], "{grad: {x: [3.0, 3.0]}}",
             given="{x: {data: [1.0, 2.0], requires_grad: true}}")
    outcome = run(c, adapter)
    assert outcome.verdict == PASS, outcome.mismatches


def test_compile_state_is_reset_for_each_compile(adapter: object) -> None:
    import paddle

    c = case(["y = x * 2.0"], "{values: {y: [2.0, 4.0, 6.0, 8.0]}}")
    fn = adapter.compile(build(c.steps, adapter.ops, ["x"], ["y"]).function)
    fn(paddle.to_tensor([1.0, 2.0, 3.0, 4.0]))
    assert _translations() > 0
    adapter.compile(build(c.steps, adapter.ops, ["x"], ["y"]).function)  # a new compile: SOT's caches emptied
    assert _translations() == 0


def test_a_wrong_expectation_fails_in_the_mode(adapter: object) -> None:
    c = case(["y = x.add_(t)"], "{values: {x: [2.0, 3.0, 4.0, 5.0]}}", given=XT)  # eager's, not the mode's
    assert run(c, adapter).verdict == FAIL


def test_items_are_named_for_the_mode() -> None:
    pytest.importorskip("paddle")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--frameworks",
         "paddle,paddle_static", "cases/inplace/binary_math.yaml"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    names = [line for line in result.stdout.splitlines() if "::" in line]
    item = "cases/inplace/binary_math.yaml::inplace.add_.view_sees_result[paddle_static]"
    assert item in names, result.stdout[-2000:]
    assert "cases/inplace/binary_math.yaml::inplace.add_.view_sees_result[paddle]" in names


def test_every_assignment_the_paddle_table_makes_is_written_as_the_statement() -> None:
    # SOT cannot simulate a call of operator.setitem or setattr ("value: None, type should be
    # VariableBase"): the compiled function writes x[i] = v and x.attr = v as statements,
    # which the table's entries being Python's own syntax says (conformance/run/function.py)
    from conformance.run.function import syntax_of

    ops = registry.get_adapter("paddle_static").ops
    assigned = [key for key in ops if key.startswith("setattr:") or key == "op:setitem"]
    assert assigned and all(syntax_of(ops[key], key) for key in assigned), assigned
