"""Memory nobody wrote never reaches an observation, whatever carries it (issue 32, door 3).

``empty()`` and a ``resize_()`` that grows a tensor hold whatever the allocator had: other
items' data, pointers. The engine marks them and whatever is computed from them
(docs/security.md, "Observations are plain, bounded, and never unwritten memory"); a Python
list or number made from them (``tolist()``, ``item()``) used to escape the mark, so
``tensor(e.tolist())`` recorded heap bytes as the case's values.
"""

from __future__ import annotations

import textwrap

import pytest
from ready_adapter import ready_adapter

from conformance import registry
from conformance.load.reader import load_text
from conformance.model import Case, ResultKey
from conformance.run.engine import run

UNSPECIFIED = "unspecified: memory nobody wrote (empty() at step 1)"


def _case(steps: list[str], names: list[str]) -> Case:
    lines = "\n".join(f"      - {s!r}" for s in steps)
    values = ", ".join(f"{n}: [0.0]" for n in names)
    text = textwrap.dedent(f"""\
cases:
  - id: security.unwritten.case
    title: heap bytes carried out of empty()
    given: {{x: [1.0, 2.0]}}
    steps:
{lines}
    expect: {{values: {{{values}}}}}
""")
    result = load_text(text, "unwritten.yaml", registry.vocabulary())
    assert not result.errors, result.errors
    return result.cases[0]


def _observed(framework: str, steps: list[str], names: list[str]) -> dict[str, object]:
    adapter = ready_adapter(framework)
    outcome = run(_case(steps, names), adapter)
    return {n: outcome.observed.get(ResultKey("values", (n,))) for n in names}


@pytest.mark.parametrize("framework", ["torch", "numpy", "paddle"])
@pytest.mark.parametrize("steps", [
    ["e = empty(64)", "l = e.tolist()", "y = tensor(l)"],
    ["e = empty(64)", "y = tensor(e.tolist())"],
    ["e = empty(64)", "s = e.sum()", "v = s.item()", "y = x * v"],
], ids=["list", "nested-call", "item"])
def test_what_is_made_from_unwritten_memory_through_python_values_is_not_observed(framework: str,
                                                                                 steps: list[str]) -> None:
    observed = _observed(framework, steps, ["y"])
    assert observed["y"] == UNSPECIFIED, observed


@pytest.mark.parametrize("framework", ["torch", "paddle"])
def test_a_python_value_of_written_memory_is_observed(framework: str) -> None:
    observed = _observed(framework, ["e = empty(2)", "e.fill_(3.0)",
                                     "y = tensor(e.tolist())"], ["y"])
    assert observed["y"] == [3.0, 3.0], observed
