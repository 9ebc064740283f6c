"""Python's operators are operations of every adapter's table: a step's ``x + y``, ``x[i]``,
``x[i] = v`` and ``x += y`` reach the adapter as ``op:add``, ``op:getitem``, ``op:setitem`` and
``op:iadd``, with Python's own semantics unless the adapter maps them."""

from __future__ import annotations

from typing import Any

from fake_adapter import FakeAdapter

from conformance import registry
from conformance.adapters.base import OPERATOR_SYMBOLS, PYTHON_OPERATORS, absent
from conformance.load import steps
from conformance.load.reader import Vocabulary, load_text
from conformance.run.engine import PASS, run


def test_every_operator_a_step_can_write_is_in_the_table() -> None:
    parsed = {*steps.BINARY.values(), *steps.INPLACE.values(), *steps.UNARY.values(), *steps.COMPARE.values(),
              "getitem", "setitem"}
    assert {"op:" + name for name in parsed} == set(PYTHON_OPERATORS)
    assert set(OPERATOR_SYMBOLS) == parsed
    for name in registry.framework_names():
        assert set(PYTHON_OPERATORS) <= set(registry.get_adapter(name).ops), name


CASE = """\
cases:
  - id: inplace.operators.through_the_table
    title: every operator of a step goes through the adapter's table
    given:
      x: {data: [1.0, -2.0, 3.0]}
    steps:
      - y = x + 1.0
      - x[0] = 5.0
      - x += 1.0
      - x[1] *= 2.0
      - z = -x
      - m = x > 0
      - w = x[m]
      - n = 2 + 3
    expect:
      values: {x: [6.0, -2.0, 4.0], y: [2.0, -1.0, 4.0], z: [-6.0, 2.0, -4.0], w: [6.0, 4.0]}
"""


class RecordingAdapter(FakeAdapter):
    """FakeAdapter whose Python operators record their keys, then do what Python does."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[str] = []
        super().__init__()

    def operations(self) -> dict[str, Any]:
        def recorded(key: str) -> Any:
            def call(*args: Any) -> Any:
                self.calls.append(key)
                return PYTHON_OPERATORS[key](*args)
            return call

        return {**super().operations(), **{key: recorded(key) for key in PYTHON_OPERATORS}}


def test_the_engine_runs_every_operator_through_the_adapter() -> None:
    adapter = RecordingAdapter()
    vocabulary = Vocabulary(frameworks=[*registry.BUILTIN, adapter.name], operations=set(adapter.ops))
    (case,) = load_text(CASE, "t.yaml", vocabulary).cases
    assert not any(key.startswith("op:") for key in case.operations())  # every adapter has them
    outcome = run(case, adapter)
    assert outcome.verdict == PASS, outcome.mismatches
    assert adapter.calls == ["op:add", "op:setitem", "op:iadd", "op:getitem", "op:imul", "op:setitem", "op:neg",
                             "op:gt", "op:getitem", "op:add"]


def test_an_adapter_maps_an_operator_its_own_way() -> None:
    """An entry the adapter sets wins over Python's; absent() makes the item not applicable
    when the step runs."""

    class NoMatmul(FakeAdapter):
        name = "nomatmul"

        def operations(self) -> dict[str, Any]:
            return {**super().operations(), "op:matmul": absent("no matrix product here")}

    adapter = NoMatmul()
    text = CASE.replace("- n = 2 + 3", "- p = x @ x").replace(", w: [6.0, 4.0]}", "}")
    vocabulary = Vocabulary(frameworks=[*registry.BUILTIN, adapter.name], operations=set(adapter.ops))
    (case,) = load_text(text, "t.yaml", vocabulary).cases
    outcome = run(case, adapter)
    assert (outcome.verdict, outcome.reason) == ("not_applicable", "not applicable: no matrix product here")
