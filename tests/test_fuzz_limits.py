"""Fuzzing the limits of a run (conformance/limits.py, docs/fuzzing.md): generated programs
that bind constants to names and grow them with Python operators, constructors and
broadcasts, run through the engine on NumPy.

Whatever the program, the run answers quickly and within a small memory budget, and its
outcome is either a verdict or the item's error naming a limit; it never raises out of the
engine, and no value a step made is larger than the limits allow. The budget comes from
the Hypothesis profiles in conftest.py ("ci" in the normal run, "fuzz" for the large one).
"""

from __future__ import annotations

import textwrap
import time
import tracemalloc

import pytest

from conformance import limits, registry
from conformance.load.reader import load_text
from conformance.run.engine import ERROR, FAIL, NOT_APPLICABLE, PASS, run

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

BUDGET = settings.get_profile("ci") if settings.get_current_profile_name() == "default" else settings.default
SECONDS = 5.0  # a refused or bounded program answers in milliseconds
PEAK_BYTES = 64_000_000  # inputs are small; anything unbounded would take gigabytes

NAMES = ["n", "m", "k", "a", "b"]
SMALL = st.sampled_from([0, 1, 2, 3, 10, 64, 255, 1000, 99_999, 100_000, 100_001, 10**6, 10**9, 2**62, -1, -10])


@st.composite
def programs(draw: st.DrawFn) -> list[str]:
    """Steps binding constants (ints, lists, a dtype string) to names, then combining
    names with operators, augmented assignments, constructors and tensor operations."""
    steps = [f"{name} = {draw(SMALL)}" for name in NAMES[:3]]
    steps += ["a = [0]", "b = 'float32'"]
    names = list(NAMES)
    for _ in range(draw(st.integers(1, 25))):
        left, right = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        op = draw(st.sampled_from(["+", "-", "*", "**", "//", "%", "@", "&", "|", "^"]))
        target = draw(st.sampled_from(names))
        steps.append(draw(st.sampled_from([
            f"{target} = {left} {op} {right}",
            f"{target} {op}= {right}",
            f"{target} = zeros({left}, dtype='bool')",
            f"{target} = ones({left}, {right})",
            f"{target} = empty([{left}, {right}])",
            f"{target} = x.expand({left}, 4)",
            f"{target} = x + {left}",
            f"{target} = x.reshape({left}, -1)",
            f"{target} = [x] * {left}",
            f"{target} = cat([x, x])",
        ])))
    return steps


def build(steps: list[str]) -> object:
    steps_yaml = "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: fuzz.limits
    title: a generated program
    given: {{x: {{shape: [1, 4], fill: 1.0}}}}
    steps:
{steps_yaml}
    expect: {{shape: {{x: [1, 4]}}}}
""")
    result = load_text(text, "cases/fuzz/limits.yaml", registry.vocabulary())
    return result.cases[0] if result.cases else result.errors[0][1]


@BUDGET
@given(programs())
def test_generated_constant_programs_stay_within_the_limits(steps: list[str]) -> None:
    case = build(steps)
    if not hasattr(case, "steps"):  # refused at load (e.g. an operator between constants)
        event("refused at load")
        return
    adapter = registry.get_adapter("numpy")
    adapter.setup()
    tracemalloc.start()
    started = time.perf_counter()
    try:
        outcome = run(case, adapter)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    seconds = time.perf_counter() - started
    assert seconds < SECONDS, (seconds, steps)
    assert peak < PEAK_BYTES, (peak, steps)
    assert outcome.verdict in (PASS, FAIL, ERROR, NOT_APPLICABLE), outcome
    if outcome.verdict == ERROR:
        assert "(limits: docs/security.md)" in outcome.reason, outcome.reason
        event("refused at run time")
    else:
        event(f"ran: {outcome.verdict}" + (", a step raised" if any(s.error for s in outcome.steps) else ""))
    # whatever an error message quotes, it is bounded
    assert all(len(s.error.message) <= limits.MAX_MESSAGE_CHARS for s in outcome.steps if s.error)
