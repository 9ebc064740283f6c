"""The compiled modes' function (conformance/run/function.py): a case's steps written as a
user writes them, built from the IR with the statement forms the eager engine performs
(conformance/run/statements.py)."""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

import numpy as np
import pytest

from conformance.adapters.base import PYTHON_OPERATORS, attribute, attribute_setter, passthrough
from conformance.ir import Const, NameTarget, Ref, Step, results_of
from conformance.load.reader import Vocabulary, load_text
from conformance.model import Case
from conformance.run.function import build
from conformance.source import Location


def case(steps: list[str] | str, given: str = "{x: [1.0, 2.0], k: [1.0, 1.0]}") -> Case:
    """A case of these steps: each a step's text, or the step list's YAML (blocks)."""
    steps_yaml = steps.rstrip("\n") if isinstance(steps, str) else "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: t.function
    title: test
    given: {given}
    steps:
{steps_yaml}
    expect: {{values: {{x: [0.0, 0.0]}}}}
""")
    result = load_text(text, "t.yaml", Vocabulary(frameworks=("fake",)))
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


class Block:
    """A context manager that records that it was entered."""

    entered: list[str] = []

    def __enter__(self) -> None:
        Block.entered.append("in")

    def __exit__(self, *exc: Any) -> None:
        Block.entered.append("out")


def table(**more: Any) -> dict[str, Any]:
    ops: dict[str, Any] = dict(PYTHON_OPERATORS)
    ops.update({
        "method:add_": passthrough("add_"), "method:copy": passthrough("copy"), "attr:T": attribute("T"),
        "attr:real": attribute("real"), "setattr:flags_note": attribute_setter("flags_note"),
        "fn:relu": lambda x: np.maximum(x, 0), "fn:scale": lambda x, factor=1.0: x * factor,
        "fn:split2": lambda x: (x[:1], x[1:]), "block:no_grad": Block,
    })
    ops.update(more)
    return ops


def source(steps: list[str], ops: dict[str, Any] | None = None, outputs: tuple[str, ...] = ()) -> str:
    c = case(steps)
    return build(c.steps, ops or table(), [g.name for g in c.given], outputs).source()


def test_the_steps_are_the_statements_a_user_writes() -> None:
    steps = ["y = relu(x)", "z = y.copy()", "x[0] = 5.0", "x[1] += k[0]", "y += 1.0", "a, b = split2(z)",
             "t = -z.T + a * 2.0", "w = x[0:1, None] > 0.0"]
    assert source(steps, outputs=("y", "a", "never")) == textwrap.dedent("""\
        def case(x, k):
            y = _relu(x)
            z = y.copy()
            x[0] = 5.0
            x[1] += k[0]
            y += 1.0
            _t1, _t2 = _split2(z)
            a = _t1
            b = _t2
            t = -z.T + a * 2.0
            w = x[0:1, None] > 0.0
            return (y, a)""")


def test_a_tuple_of_one_target_is_unpacked() -> None:
    c = case(["a, = split1(x)", "b = split1(x)"])
    function = build(c.steps, table(**{"fn:split1": lambda x: (x[:1],)}), ["x", "k"], ["a", "b"])
    assert function.source() == textwrap.dedent("""\
        def case(x, k):
            _t1, = _split1(x)
            a = _t1
            b = _split1(x)
            return (a, b)""")
    a, b = function.function(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    assert a.tolist() == [1.0] and isinstance(b, tuple)


def test_a_block_is_a_with_statement() -> None:
    c = case("""\
      - no_grad:
          - x += 1.0
      - y = x.copy()
""", given="{x: [1.0]}")
    function = build(c.steps, table(), ["x"], ["y"])
    assert function.source() == textwrap.dedent("""\
        def case(x):
            with _no_grad():
                x += 1.0
            y = x.copy()
            return (y,)""")
    Block.entered = []
    x = np.array([1.0])
    (y,) = function.function(x)
    assert Block.entered == ["in", "out"] and x.tolist() == [2.0] and y.tolist() == [2.0]


def test_an_entry_that_is_not_pythons_own_is_called() -> None:
    # an immutable framework's refusal of x[i] = v, a method the adapter maps otherwise: the
    # table's entries are called, as the eager engine calls them
    def refuse(*args: Any) -> None:
        raise TypeError("immutable")

    ops = table(**{"op:setitem": refuse, "op:getitem": lambda x, i: x[i], "method:copy": lambda x: x + 0})
    assert source(["z = x.copy()", "x[0] = 5.0", "x[1] += 1.0"], ops) == textwrap.dedent("""\
        def case(x, k):
            z = _copy(x)
            _setitem(x, 0, 5.0)
            _setitem(x, 1, _iadd(_getitem(x, 1), 1.0))
            return ()""")


def test_the_augmented_target_is_evaluated_once() -> None:
    assert source(["x[relu(k).argmax_index] += 1.0"], table(**{"attr:argmax_index": attribute("argmax_index")})) == \
        textwrap.dedent("""\
        def case(x, k):
            _t1 = _relu(k).argmax_index
            x[_t1] += 1.0
            return ()""")


def test_the_function_runs_as_the_steps_say_and_mutates_its_inputs() -> None:
    c = case(["y = x.T", "x += k", "x[0] = 7.0", "z = relu(-x)"])
    function = build(c.steps, table(), ["x", "k"], ["y", "z"])
    x, k = np.array([1.0, 2.0]), np.array([1.0, 1.0])
    y, z = function.function(x, k)
    assert x.tolist() == [7.0, 3.0] and np.shares_memory(y, x) and z.tolist() == [0.0, 0.0]


def test_each_statement_is_on_the_line_of_its_source() -> None:
    # what a traceback or a compiler's message shows of the function, and what TensorFlow's
    # AutoGraph reads (it refuses a function whose source it cannot find)
    c = case("""\
      - y = x.copy()
      - no_grad:
          - y[0] = 3.0
          - z, w = split2(y)
      - y += scale(z, factor=2.0)
""", given="{x: [1.0]}")
    function = build(c.steps, table(), ["x"], ["y"])
    lines = function.source().splitlines()
    statements = [n for n in ast.walk(function.tree) if isinstance(n, ast.stmt)]
    assert len(statements) == len(lines) == 9
    for statement in statements:
        assert lines[statement.lineno - 1].strip().startswith(ast.unparse(statement).splitlines()[0])
    assert inspect.getsource(function.function) == function.source() + "\n"
    x = np.array([1.0, 2.0])
    (y,) = function.function(x)  # keywords compile too (each node placed on its line)
    assert y.tolist() == [9.0, 8.0]


def test_the_functions_code_reads_only_its_names_and_the_tables_entries() -> None:
    c = case(["y = relu(x)", "z = y.T + k"])
    function = build(c.steps, table(), ["x", "k"], ["z"])
    code = function.function.__code__
    assert set(code.co_names) - {"T"} == {"_relu"}  # globals read: the entry; T is an attribute
    assert set(function.function.__globals__) == {"__builtins__", "_relu"}


def test_a_name_neither_bound_nor_the_tables_is_refused() -> None:
    # the loader refuses a step that reads a name no step binds; the builder checks again
    where = Location("t.yaml", 1, 1)
    step = Step(1, "y = open", "assign", where, targets=(NameTarget("y"),), value=Ref("open"))
    with pytest.raises(ValueError, match="reads 'open', which is neither its own nor the table's"):
        build([step], table(), ["x"], ["y"])
    bad = Step(1, "y = __import__", "assign", where, targets=(NameTarget("__import__"),), value=Const(1))
    with pytest.raises(ValueError, match="names '__import__'"):
        build([bad], table(), ["x"], [])


def test_the_builders_nodes_are_all_checked() -> None:
    c = case(["y = relu(x)"])
    tree = build(c.steps, table(), ["x", "k"], ["y"]).tree
    assert {type(n) for n in ast.walk(tree)} <= {
        ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Assign, ast.Name, ast.Load, ast.Store, ast.Call,
        ast.Return, ast.Tuple}


def test_what_the_program_leaves_is_each_name_no_later_step_reads() -> None:
    c = case(["y = x.copy()", "z = relu(y)", "y = z.T", "w = k.copy()", "w[0] = 1.0", "x += k"])
    # y's first binding is read (z = relu(y)), its last is not; z is read; w is read by the
    # item assignment; the input x is one because a step binds it again (x += k may make a
    # new object: Paddle's does)
    assert results_of(c.steps) == ["y", "x"]
