"""What a case makes while it runs is bounded like what it writes (conformance/limits.py,
docs/security.md): constructors, named constants, broadcasting, joins and chains of views
are refused before they allocate, as the item's error with the step and the bound, never
recorded as the framework's behaviour. Observations carry plain data only, of bounded size,
and never bytes nobody wrote.

Run on the real frameworks, in process (the engine is what bounds them; the sandbox tests
show the same outcomes arrive through the child). Each refusal is timed and, on NumPy, its
traced memory measured: without the bound the same step takes seconds and gigabytes (the
controls show the request is real by making it with a small size).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import tracemalloc
from typing import Any

import pytest
from ready_adapter import ready_adapter

from conformance import limits, registry
from conformance.adapters.numpy_adapter import NumpyAdapter
from conformance.load.reader import load_text
from conformance.model import Case, ResultKey
from conformance.run.engine import ERROR, FAIL, PASS, Outcome, plain, run

FRAMEWORKS = list(registry.BUILTIN)


def case(steps: list[str], expect: str, given: str = "{x: [1.0, 2.0]}") -> Case:
    steps_yaml = "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: limits.case
    title: a case that asks for too much
    given: {given}
    steps:
{steps_yaml}
    expect: {expect}
""")
    result = load_text(text, "cases/limits.yaml", registry.vocabulary())
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


def run_on(framework: str, c: Case) -> tuple[Outcome, float, int]:
    adapter = ready_adapter(framework)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        outcome = run(c, adapter)
        return outcome, time.perf_counter() - started, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


REFUSED = {
    # the report's two-line case: 50 million booleans, then their values sent to pytest
    "constructor": (["y = zeros(50000000, dtype='bool')"], "{values: {y: [true]}}", "{x: [1.0]}",
                    "step 1 \"y = zeros(50000000, dtype='bool')\" (cases/limits.yaml:6): zeros() would make "
                    "50,000,000 elements; a tensor has at most 100,000"),
    "constructor_list_shape": (["y = ones([1000, 1000, 1000])"], "{shape: {y: [1]}}", "{x: [1.0]}",
                               "ones() would make 1,000,000,000 elements"),
    "named_constant_shape": (["n = 100000", "y = empty(n, n)"], "{shape: {y: [1]}}", "{x: [1.0]}",
                             "step 2 'y = empty(n, n)' (cases/limits.yaml:7): empty() would make 10,000,000,000"),
    "named_constant_power": (["n = 10", "z = n ** n ** n"], "{values: {x: [1.0]}}", "{x: [1.0]}",
                             "pow of two integers would make a number of about 40,000,000,000 bits; at most 1,100"),
    "named_constant_repetition": (["n = 1000000000", "m = [0] * n"], "{values: {x: [1.0]}}", "{x: [1.0]}",
                                  "repeating a sequence of 1 items 1,000,000,000 times"),
    "doubling": (["a = [0]"] + ["a += a"] * 20, "{values: {x: [1.0]}}", "{x: [1.0]}",
                 "step 18 'a += a' (cases/limits.yaml:23): joining sequences makes 131,072 items"),
    "squaring": (["n = 3"] + ["n *= n"] * 14, "{values: {x: [1.0]}}", "{x: [1.0]}",
                 "mul of two integers would make a number of about 1,"),
    "string_operand": (["s = 'float32'", "t = s * 1000000"], "{values: {x: [1.0]}}", "{x: [1.0]}",
                       "a string cannot be an operand of an arithmetic operator"),
    "broadcast": (["z = a + b"], "{values: {z: [1.0]}}",
                  "{a: {shape: [100000, 1], fill: 1.0}, b: {shape: [1, 100000], fill: 1.0}}",
                  "'+' would broadcast to 10,000,000,000 elements"),
    "join": (["xs = [x] * 3", "z = cat(xs)"], "{values: {z: [1.0]}}", "{x: {shape: [100000], fill: 1.0}}",
             "cat() would join tensors of 300,000 elements"),
    "view_chain": (["v = x.expand(100000, 100000)", "c = v.clone()"], "{values: {c: [1.0]}}",
                   "{x: {shape: [1, 100000], fill: 1.0}}",
                   "step 1 'v = x.expand(100000, 100000)' (cases/limits.yaml:6): expand() would make 10,000,000,000 elements"),  # noqa: E501
    "view_chain_in_one_step": (["c = x.expand(100000, 100000).clone()"], "{values: {c: [1.0]}}",
                               "{x: {shape: [1, 100000], fill: 1.0}}", "expand() would make 10,000,000,000 elements"),
}


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_case_that_asks_for_too_much_is_refused_before_it_allocates(name: str, framework: str) -> None:
    steps, expect, given, message = REFUSED[name]
    if framework == "numpy" and "expand" in steps[-1]:
        steps = [s.replace("x.expand(", "x.broadcast_to(").replace("expand()", "broadcast_to()") for s in steps]
        message = message.replace("x.expand(", "x.broadcast_to(").replace("expand()", "broadcast_to()")
    outcome, seconds, peak = run_on(framework, case(steps, expect, given))
    assert outcome.verdict == ERROR, (outcome.verdict, outcome.reason, outcome.mismatches)
    assert message in outcome.reason, outcome.reason
    assert "(limits: docs/security.md)" in outcome.reason
    assert seconds < 5, "the refusal came after the work"
    # inputs of 10^5 float32 elements take 0.4 MB each; what was refused would take GBs
    assert peak < 16_000_000, f"{peak:,} bytes traced"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_control_the_same_requests_within_the_bounds_run(framework: str) -> None:
    """The refused steps are real requests: at sizes within the bounds they run and pass."""
    c = case(["y = zeros(50000, dtype='bool')", "n = 300", "e = empty(n, n)", "m = [0] * n",
              "s = n ** 8", "z = a + b", "xs = [a] * 2", "j = cat(xs)"],
             "{shape: {y: [50000], e: [300, 300], z: [300, 300], j: [600, 1]}}",
             "{a: {shape: [300, 1], fill: 1.0}, b: {shape: [1, 300], fill: 1.0}}")
    outcome, _, _ = run_on(framework, c)
    assert outcome.verdict == PASS, (outcome.reason, outcome.mismatches)


def test_the_framework_process_cannot_allocate_past_its_memory_cap() -> None:
    """The sandbox child caps its data segment (RLIMIT_DATA) before importing anything: a
    framework allocation past it fails inside the framework instead of exhausting the
    machine (the backstop for an operation no bound above foresees)."""
    code = textwrap.dedent("""
        from conformance.run.sandbox import cap_memory
        cap_memory()
        import numpy, torch
        for make in (lambda: numpy.ones(2**31, "uint8"), lambda: torch.ones(2**31, dtype=torch.uint8)):
            try:
                make()
                print("allocated")
            except (MemoryError, RuntimeError) as exc:
                print("refused", type(exc).__name__)
        small = numpy.ones(2**20, "uint8")  # what a case needs still works
        print("small", small.size)
    """)
    env = dict(os.environ, CONFORMANCE_CHILD_MEMORY_MB="1024")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.stdout.split("\n")[:3] == ["refused MemoryError", "refused RuntimeError", "small 1048576"], proc.stderr


def test_control_without_the_cap_the_same_allocation_succeeds() -> None:
    code = "import numpy; a = numpy.ones(2**31, 'uint8'); print('allocated', a.size)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == f"allocated {2**31}", proc.stderr


def test_running_out_of_memory_is_the_items_error_not_the_frameworks_behaviour() -> None:
    adapter = NumpyAdapter()

    def exhausted(x: Any) -> Any:
        raise MemoryError("Unable to allocate 9.31 GiB for an array")

    adapter.ops["method:clone"] = exhausted
    outcome = run(case(["y = x.clone()"], "{error: {at: 1, kind: other}}"), adapter)
    assert outcome.verdict == ERROR
    assert "ran out of the memory the framework process may use: Unable to allocate 9.31 GiB" in outcome.reason


# ---- what an observation carries


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_uninitialised_memory_is_never_recorded(framework: str) -> None:
    """empty() hands out whatever bytes the allocator had (addresses, earlier items' data):
    its values, and what is computed from them, are 'unspecified', never those bytes."""
    c = case(["y = empty(64)", "z = y + 1.0", "w = y[0:4]"],
             "{values: {y: [0.0], z: [1.0], w: [0.0]}, shape: {y: [64]}}")
    outcome, _, _ = run_on(framework, c)
    assert outcome.verdict == FAIL
    for name in "yzw":
        observed = outcome.observed[ResultKey("values", (name,))]
        assert observed == "unspecified: memory nobody wrote (empty() at step 1)", observed
    assert outcome.observed[ResultKey("shape", ("y",))] == [64]
    assert all("unspecified" in str(m.observed) for m in outcome.mismatches)
    assert "fill_, zero_, copy_" in outcome.mismatches[0].detail
    # the same case again records the same outcome: nothing in it depends on the heap
    again, _, _ = run_on(framework, c)
    assert again.observed == outcome.observed and again.mismatches == outcome.mismatches


@pytest.mark.parametrize("framework", ["torch", "paddle"])
def test_memory_written_whole_is_observed_again(framework: str) -> None:
    c = case(["y = empty(4)", "y.fill_(2.0)", "z = y * 2.0"],
             "{values: {y: [2.0, 2.0, 2.0, 2.0], z: [4.0, 4.0, 4.0, 4.0]}}")
    outcome, _, _ = run_on(framework, c)
    assert outcome.verdict == PASS, outcome.mismatches


@pytest.mark.parametrize("framework", ["torch", "paddle"])
def test_resize_that_grows_is_unspecified_and_one_that_shrinks_is_not(framework: str) -> None:
    grown, _, _ = run_on(framework, case(["x.resize_(6)"], "{values: {x: [1.0, 2.0, 0.0, 0.0, 0.0, 0.0]}}"))
    if framework == "paddle":
        # Paddle keeps the old allocation: the grown tensor would address memory outside it, so the
        # suite refuses the call (adapters/extent.py; tests/security/test_storage_bounds.py)
        assert grown.verdict == ERROR and "refused before calling the framework" in grown.reason, grown.reason
    else:  # torch reallocates: the new elements are memory nobody wrote, tracked as such
        assert grown.observed[ResultKey("values", ("x",))] == "unspecified: memory nobody wrote (resize_() at step 1, which grew the tensor)"  # noqa: E501
    shrunk, _, _ = run_on(framework, case(["x.resize_(1)"], "{values: {x: [1.0]}}"))
    assert shrunk.verdict == PASS, shrunk.mismatches


def test_an_object_array_is_recorded_as_type_names() -> None:
    """A NumPy object array holding a torch layer, observed as values: the outcome carries
    the layer's type name, not the layer (which would import torch in the process that
    reads the outcome)."""
    outcome, _, _ = run_on("torch", case(["m = ReLU()", "y = array([m])"], "{values: {y: [1.0]}}"))
    assert outcome.verdict == FAIL
    assert outcome.observed[ResultKey("values", ("y",))] == ["<torch.nn.modules.activation.ReLU>"]
    assert "not numbers: dtype object" in str(outcome.mismatches[0].observed)
    assert all(type(k) is ResultKey and _only_plain(tuple(k)) for k in outcome.observed)
    assert _only_plain(list(outcome.observed.values()))
    assert _only_plain([(m.expected, m.observed) for m in outcome.mismatches])


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_large_values_are_recorded_as_a_digest(framework: str) -> None:
    outcome, _, _ = run_on(framework, case(["y = x * 2.0"], "{values: {x: [1.0]}}", "{x: {shape: [5000], fill: 1.0}}"))
    recorded = outcome.observed[ResultKey("values", ("x",))]
    assert recorded["elements"] == 5000 and recorded["shape"] == [5000] and len(recorded["sha256"]) == 64
    assert recorded["first"] == [1.0] * limits.RECORDED_HEAD
    assert "shape [5000], expected shape [1]" in str(outcome.mismatches[0].observed)


class Strange:
    pass


def test_plain_turns_anything_into_plain_data() -> None:
    import numpy as np

    assert plain([1, 2.5, True, None, "s", 1j, (3,), {"k": np.float32(1.5)}, Strange()]) == [
        1, 2.5, True, None, "s", 1j, [3], {"k": 1.5}, "<test_limits.Strange>"]
    deep: Any = []
    for _ in range(1000):
        deep = [deep]
    assert "<nested too deep>" in repr(plain(deep))


def _only_plain(value: Any) -> bool:
    if value is None or type(value) in (bool, int, float, complex, str):
        return True
    if isinstance(value, (list, tuple)):
        return all(_only_plain(v) for v in value)
    if isinstance(value, dict):
        return all(type(k) is str and _only_plain(v) for k, v in value.items())
    return False


def test_repeat_and_arange_are_bounded_by_the_elements_they_would_make() -> None:
    from conformance import limits

    assert limits.repeat_request(4, (None, 2, 3)) == limits.repeat_request(4, (None, [2, 3])) == 24
    assert limits.repeat_request(4, (None,)) is None and limits.repeat_request(4, (None, 2.5)) is None
    assert limits.arange_request((10,), {}) == 10 and limits.arange_request((2, 10, 3), {}) == 3
    assert limits.arange_request((5, 0, -1), {}) == 5 and limits.arange_request((), {"end": 5.5}) == 6
    assert limits.arange_request((0, 1, 0), {}) is None  # the framework refuses a zero step itself
    assert limits.arange_request((10**10,), {}) == 10**10
    with pytest.raises(limits.LimitExceeded, match="10,000,000,000 elements"):
        limits.check_elements(limits.arange_request((10**10,), {}) or 0, "arange() would make")
