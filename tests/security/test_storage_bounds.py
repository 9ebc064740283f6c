"""A case reads and writes only the storage it addresses (issue 32, part 3; docs/security.md).

``as_strided``, ``set_`` and their kin take sizes, strides and an offset from the case. On
main before this check, NumPy's and Paddle's made a tensor over whatever memory those
numbers reached, torch's and MindSpore's ``set_`` (and torch's ``resize_as_``) grew the
storage with memory nobody wrote, and Paddle's ``resize_`` and ``view(dtype)`` of an offset
tensor read past the allocation: heap bytes were recorded as observed values, and writes
through such views damaged the framework process. Each adapter now bounds the request by the
storage it addresses before the framework is called (adapters/extent.py): the item is an
error that names the step and says what was refused.

Every hostile case runs through the real loader, engine and adapters (and the sandbox's
child for the write payloads); each has an in-bounds control that still runs, so that the
refusal is the bound and not a broken operation.
"""

from __future__ import annotations

import textwrap
from typing import Any, Iterator

import numpy as np
import pytest
from ready_adapter import ready_adapter

from conformance import registry
from conformance.adapters import extent
from conformance.limits import LimitExceeded
from conformance.load.reader import load_text
from conformance.model import Case
from conformance.outcomes import ERROR, NOT_APPLICABLE, PASS
from conformance.run.engine import Outcome, run
from conformance.run.sandbox import Sandbox

FILE = "cases/bounds.yaml"
WHY_READ = "refused before calling the framework (it would read memory outside the tensor)"


def case(steps: list[str], expect: str = "{}", given: str = "{x: [1.0, 2.0]}", name: str = "bounds.case") -> Case:
    steps_yaml = "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: {name}
    title: a case that addresses memory by its own numbers
    given: {given}
    steps:
{steps_yaml}
    expect: {expect}
""")
    result = load_text(text, FILE, registry.vocabulary())
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


def adapter(name: str) -> Any:
    return ready_adapter(name, setup=False)


def run_on(name: str, c: Case) -> Outcome:
    return run(c, adapter(name))


def numbers(value: Any) -> Iterator[float]:
    """Every number in an observation (nested lists, dicts, strings left out)."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield float(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from numbers(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from numbers(v)


def observed_numbers(outcome: Outcome) -> set[float]:
    found: set[float] = set()
    for value in outcome.observed.values():
        found.update(numbers(value))
    for mismatch in outcome.mismatches:
        found.update(numbers(mismatch.observed))
    return found


def assert_refused(outcome: Outcome, step: int, text: str, message: str) -> None:
    """The item is an error at ``step``, with the located message, and nothing was observed:
    no value of any tensor (let alone bytes past the storage) reached the outcome."""
    assert outcome.verdict == ERROR, (outcome.verdict, outcome.reason, outcome.observed)
    assert outcome.reason.startswith(f"step {step} {text!r} ({FILE}:{5 + step}): "), outcome.reason
    assert message in outcome.reason, outcome.reason
    assert outcome.reason.endswith(" (limits: docs/security.md)")
    assert outcome.observed == {} and outcome.mismatches == []
    assert all(record.error is None for record in outcome.steps)  # not recorded as the framework's behaviour


def assert_only_written(outcome: Outcome, written: set[float]) -> None:
    """Every number the outcome observed is one the case wrote (no heap byte in it)."""
    assert observed_numbers(outcome) <= written, observed_numbers(outcome) - written


# ---- the arithmetic (framework-free)


def test_the_extent_arithmetic() -> None:
    extent.check("as_strided", [2, 3], [3, 1], 0, 6)  # the whole storage
    extent.check("as_strided", [3], [-1], 2, 3)  # downwards from the last element
    extent.check("as_strided", [0, 10**6], [10**9, 10**9], 10**12, 1)  # no elements: no memory
    with pytest.raises(extent.OutsideStorage, match=r"size \[2, 3\], stride \[3, 1\], offset 1 reach element 6 "
                                                   r"of a storage of 6 elements: " + WHY_READ.replace("(", r"\(")
                       .replace(")", r"\)")):
        extent.check("as_strided", [2, 3], [3, 1], 1, 6)
    with pytest.raises(extent.OutsideStorage, match="reach element -1 of a storage of 3 elements"):
        extent.check("as_strided", [3], [-1], 1, 3)
    with pytest.raises(extent.OutsideStorage, match="differ in length"):
        extent.check("as_strided", [2, 2], [1], 0, 100)
    with pytest.raises(extent.OutsideStorage, match="negative size"):
        extent.check("as_strided", [-2], [1], 0, 100)
    with pytest.raises(extent.OutsideStorage, match="is not an integer"):
        extent.check("as_strided", [2.0], [1], 0, 100)
    with pytest.raises(extent.OutsideStorage, match="is not a list of integers"):
        extent.check("as_strided", 2, [1], 0, 100)
    assert extent.contiguous_strides([2, 3, 4]) == [12, 4, 1] and extent.contiguous_strides([]) == []
    assert extent.window(6, 16, 4) == (1, 3)  # 2 bytes in: whole float32 elements from there


def test_a_request_of_too_many_elements_is_refused_before_the_bound_by_storage() -> None:
    """Stride 0 keeps a huge size inside one element; the element bound refuses it first (no
    framework computes a product that overflows)."""
    with pytest.raises(LimitExceeded, match="as_strided\\(\\) would make 1,000,000 elements"):
        extent.check("as_strided", [10**6], [0], 0, 1)


# ---- every adapter's table: bounded, or no such operation

# keys of extent.ADDRESSING an adapter may pass through unbounded, and why
UNBOUNDED = {
    ("torch", "method:resize_"): "torch allocates what resize_ grows; the engine marks the new elements unwritten",
}


@pytest.mark.parametrize("name", list(registry.BUILTIN))
def test_every_adapter_bounds_or_lacks_each_storage_addressing_operation(name: str) -> None:
    a = registry.get_adapter(name)
    base = registry.get_adapter(a.compiles) if a.compiles else a
    assert isinstance(a.storage_bounds, str) and a.storage_bounds == base.storage_bounds
    for key in sorted(extent.ADDRESSING):
        op = a.ops.get(key)
        if op is None or getattr(op, "not_applicable", None):
            continue
        if (base.name, key) in UNBOUNDED:
            continue
        assert getattr(op, "bounds_storage", False), f"{name}: {key} reaches the framework unbounded"
        if a.compiles:  # a compiled mode runs the framework's own bounded entry
            assert op.__code__ is base.ops[key].__code__, f"{name}: {key} is not {base.name}'s bounded entry"


# ---- NumPy: np.lib.stride_tricks.as_strided checks nothing

def test_numpy_as_strided_past_the_end_is_refused_and_an_in_bounds_one_runs() -> None:
    outcome = run_on("numpy", case(["y = x.as_strided([64], [1])"], "{values: {y: [1.0]}}"))
    assert_refused(outcome, 1, "y = x.as_strided([64], [1])",
                   f"as_strided: size [64], stride [1], offset 0 reach element 63 of a storage of 2 elements: "
                   f"{WHY_READ}")
    control = run_on("numpy", case(["y = x.as_strided([2, 2], [0, 1])"], "{values: {y: [[1.0, 2.0], [1.0, 2.0]]}}"))
    assert control.verdict == PASS, control.reason


def test_numpy_as_strided_is_bounded_by_the_base_not_the_view() -> None:
    """A view starts inside its base: as_strided of x[2:] may reach the base's last element
    (in bounds, runs) but not one past it, and a negative stride may reach back to the base's
    first element but not before it. A chain (as_strided of an as_strided result, whose .base
    is NumPy's DummyArray) is bounded by the same base."""
    given = "{x: [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}"
    inside = run_on("numpy", case(["s = x[2:]", "y = s.as_strided([4], [1])"], "{values: {y: [2.0, 3.0, 4.0, 5.0]}}",
                                  given))
    assert inside.verdict == PASS, inside.reason
    back = run_on("numpy", case(["s = x[2:]", "y = s.as_strided([3], [-1])"], "{values: {y: [2.0, 1.0, 0.0]}}",
                                given))
    assert back.verdict == PASS, back.reason
    past = run_on("numpy", case(["s = x[2:]", "y = s.as_strided([5], [1])"], "{values: {y: [2.0]}}", given))
    assert_refused(past, 2, "y = s.as_strided([5], [1])",
                   "as_strided: size [5], stride [1], offset 2 (where the array starts in its base's memory) reach "
                   f"element 6 of a storage of 6 elements: {WHY_READ}")
    before = run_on("numpy", case(["s = x[2:]", "y = s.as_strided([4], [-1])"], "{values: {y: [2.0]}}", given))
    assert_refused(before, 2, "y = s.as_strided([4], [-1])", "reach element -1 of a storage of 6 elements")
    chain = run_on("numpy", case(["a = x.as_strided([2], [1])", "b = a.as_strided([6], [1])",
                                  "c = a.as_strided([7], [1])"], "{values: {b: [0.0]}}", given))
    assert_refused(chain, 3, "c = a.as_strided([7], [1])", "reach element 6 of a storage of 6 elements")


# the write payloads: a float64 view of 64, 1,026 and 8,194 elements over a 2-element (16-byte)
# array reaches 496 bytes, 8 KiB and 64 KiB past its end; the write fills all of it
WRITES = {"496_bytes": 64, "8_KiB": 1026, "64_KiB": 8194}


@pytest.mark.parametrize("label", list(WRITES))
def test_numpy_out_of_bounds_writes_are_refused_and_the_next_item_in_the_child_is_unaffected(label: str) -> None:
    n = WRITES[label]
    assert n * 8 - 16 == {"496_bytes": 496, "8_KiB": 8192, "64_KiB": 65536}[label]
    hostile = case([f"y = x.as_strided([{n}], [1])", "y[:] = 7.0"], "{values: {x: [7.0, 7.0]}}",
                   "{x: {data: [1.0, 2.0], dtype: float64}}")
    # control: NumPy itself would make that view, over memory past x's 16 bytes (only made
    # here, never read or written)
    x = np.array([1.0, 2.0])
    low, high = np.lib.array_utils.byte_bounds(np.lib.stride_tricks.as_strided(x, (n,), (8,)))
    assert high - np.lib.array_utils.byte_bounds(x)[1] == n * 8 - 16
    after = case(["z = x * 3.0"], "{values: {z: [3.0, 6.0, 9.0, 12.0]}}", "{x: [1.0, 2.0, 3.0, 4.0]}",
                 "bounds.after")
    box = Sandbox(timeout=120)
    try:
        outcome = box.run(hostile, "numpy")
        assert_refused(outcome, 1, f"y = x.as_strided([{n}], [1])",
                       f"as_strided: size [{n}], stride [1], offset 0 reach element {n - 1} of a storage of 2 "
                       f"elements: {WHY_READ}")
        for _ in range(3):  # the same child runs the next items, which see nothing of it
            nxt = box.run(after, "numpy")
            assert nxt.verdict == PASS, nxt.reason
            assert nxt.observed[next(iter(nxt.observed))] == [3.0, 6.0, 9.0, 12.0]
        assert box.starts == 1  # no crash, no restart
    finally:
        box.close()


# ---- torch: set_ and resize_as_ grow the storage; as_strided is bounded before torch too

TORCH_REFUSED = {
    "as_strided": (["y = x.as_strided([64], [1])"],
                   f"as_strided: size [64], stride [1], offset 0 reach element 63 of a storage of 2 elements: "
                   f"{WHY_READ}"),
    "as_strided_offset": (["y = x.as_strided([2], [1], 1)"],
                          "as_strided: size [2], stride [1], offset 1 reach element 2 of a storage of 2 elements"),
    "as_strided_": (["y = x.as_strided_([3], [1])"],
                    "as_strided_: size [3], stride [1], offset 0 reach element 2 of a storage of 2 elements"),
    "as_strided_copy": (["y = as_strided_copy(x, [2, 2], [1, 1])"],
                        "as_strided_copy: size [2, 2], stride [1, 1], offset 0 reach element 2 of a storage of 2"),
    "set_": (["y = x.set_(s, 0, [64], [1])"],
             "set_: size [64], stride [1], offset 0 reach element 63 of a storage of 2 elements: refused before "
             "calling the framework (it would reach past the end of the storage: torch grows the storage to fit, "
             "and the new elements hold memory nobody wrote)"),
    "set_offset": (["y = x.set_(s, 2, [1])"],
                   "set_: size [1], stride [1], offset 2 reach element 2 of a storage of 2 elements"),
    "set_source_offset": (["t = s[1:]", "y = x.set_(t, 1, [1])"],
                          "set_: size [1], stride [1], offset 2 (the source's storage offset 1 + 1) reach element 2 "
                          "of a storage of 2 elements"),
    "set_narrower_source": (["y = x.set_(b, 0, [2])"],
                            "set_: size [2], stride [1], offset 0 reach element 1 of a storage of 1 elements"),
    "resize_as_": (["y = x.resize_as_(o)"],
                   "resize_as_: size [64] (64 elements) grows a tensor of 2 elements: refused before calling the "
                   "framework (the new elements would hold memory nobody wrote, which the suite tracks for resize_ "
                   "only; torch grows the storage to fit)"),
}
TORCH_GIVEN = "{x: [1.0, 2.0], s: [3.0, 4.0], o: {shape: [64], fill: 0.0}, b: {data: [1, 2, 3, 4], dtype: int8}}"


@pytest.mark.parametrize("label", list(TORCH_REFUSED))
def test_torch_requests_outside_the_storage_are_refused(label: str) -> None:
    steps, message = TORCH_REFUSED[label]
    outcome = run_on("torch", case(steps, "{values: {x: [1.0, 2.0]}}", TORCH_GIVEN))
    assert_refused(outcome, len(steps), steps[-1], message)


TORCH_CONTROLS = {
    "as_strided": (["y = x.as_strided([2, 2], [0, 1], 0)"], "{values: {y: [[1.0, 2.0], [1.0, 2.0]]}}"),
    "as_strided_": (["y = x.as_strided_([1], [1], 1)"], "{values: {y: [2.0]}}"),
    "as_strided_copy": (["y = as_strided_copy(x, [2], [1])"], "{values: {y: [1.0, 2.0]}}"),
    "set_": (["y = x.set_(s, 1, [1])"], "{values: {y: [4.0]}, same_object: {y & x: true}}"),
    "set_source_offset": (["t = s[1:]", "y = x.set_(t, 0, [1])"], "{values: {y: [4.0]}}"),
    "set_source": (["y = x.set_(s)"], "{values: {y: [3.0, 4.0]}}"),
    "set_nothing": (["y = x.set_()"], "{shape: {y: [0]}}"),
    "resize_as_": (["y = x.resize_as_(c)"], "{values: {y: [1.0]}}"),
}


@pytest.mark.parametrize("label", list(TORCH_CONTROLS))
def test_torch_in_bounds_controls_still_run(label: str) -> None:
    steps, expect = TORCH_CONTROLS[label]
    outcome = run_on("torch", case(steps, expect, "{x: [1.0, 2.0], s: [3.0, 4.0], c: [0.0]}"))
    assert outcome.verdict == PASS, (outcome.reason, outcome.mismatches)


def test_torch_resize_growth_stays_allowed_and_unspecified() -> None:
    """resize_ is torch's own: it allocates what it grows, and the engine records the new
    elements as memory nobody wrote (the control for set_ and resize_as_, refused above)."""
    outcome = run_on("torch", case(["y = x.resize_(64)"], "{values: {y: [1.0]}}"))
    assert outcome.verdict == "fail"
    assert outcome.observed[next(iter(outcome.observed))].startswith("unspecified: memory nobody wrote")
    assert_only_written(outcome, set())


@pytest.mark.parametrize("mode", ["torch_compile", "torch_inductor"])
def test_torch_compiled_modes_inherit_the_bound(mode: str) -> None:
    """A compiled mode runs the case eagerly first with the framework's table: the request is
    refused there, before anything is compiled."""
    outcome = run_on(mode, case(["y = x.as_strided([64], [1])"], "{values: {y: [1.0]}}"))
    assert_refused(outcome, 1, "y = x.as_strided([64], [1])", "reach element 63 of a storage of 2 elements")
    control = run_on(mode, case(["y = x.as_strided([2], [1])", "z = y * 2.0"], "{values: {z: [2.0, 4.0]}}"))
    assert control.verdict == PASS, control.reason


# ---- Paddle: as_strided, set_, resize_ and view(dtype) check nothing

PADDLE_REFUSED = {
    "as_strided": (["y = x.as_strided([64], [1])"],
                   "as_strided: size [64], stride [1], offset 0 (counted from the start of the allocation, as Paddle "
                   f"does) reach element 63 of a storage of 2 elements: {WHY_READ}"),
    "as_strided_offset": (["y = x.as_strided([2], [1], 100)"],
                          "as_strided: size [2], stride [1], offset 100 (counted from the start of the allocation, as "
                          "Paddle does) reach element 101 of a storage of 2 elements"),
    "as_strided_negative": (["y = x.as_strided([2], [-1], 0)"], "reach element -1 of a storage of 2 elements"),
    "set_": (["y = x.set_(s, 0, [64], [1])"],
             "set_: size [64], stride [1], offset 0 (counted from the start of the allocation, as Paddle does) reach "
             f"element 63 of a storage of 2 elements: {WHY_READ}"),
    "set_offset": (["y = x.set_(s, 2, [1])"], "offset 2 (counted from the start of the allocation, as Paddle does) "
                                              "reach element 2 of a storage of 2 elements"),
    "set_narrower_source": (["y = x.set_(b)"], "set_: size [4], stride [1], offset 0 (counted from the start of the "
                                               "allocation, as Paddle does) reach element 3 of a storage of 1 "
                                               "elements"),
    "resize_": (["y = x.resize_(64)"],
                "resize_: size [64], stride [1], offset 0 (counted from the start of the allocation, as Paddle does) "
                "reach element 63 of a storage of 2 elements: refused before calling the framework (it would read "
                "memory outside the tensor: Paddle's resize_ keeps the tensor's allocation)"),
    "view_dtype_of_offset": (["t = w[1:]", "y = t.view('int8')"],
                             "view: size [8], stride [1], offset 16 (Paddle views float32 as int8 by scaling the "
                             f"byte offset 4 by 4) reach element 23 of a storage of 12 elements: {WHY_READ}"),
}
PADDLE_GIVEN = "{x: [1.0, 2.0], s: [3.0, 4.0], b: {data: [1, 2, 3, 4], dtype: int8}, w: [1.0, 2.0, 3.0]}"


@pytest.mark.parametrize("label", list(PADDLE_REFUSED))
def test_paddle_requests_outside_the_allocation_are_refused(label: str) -> None:
    steps, message = PADDLE_REFUSED[label]
    outcome = run_on("paddle", case(steps, "{values: {x: [1.0, 2.0]}}", PADDLE_GIVEN))
    assert_refused(outcome, len(steps), steps[-1], message)


PADDLE_CONTROLS = {
    "as_strided": (["y = x.as_strided([2], [-1], 1)"], "{values: {y: [2.0, 1.0]}}"),
    # Paddle counts the default offset from the allocation's start: the slice's own first
    # element is not where it begins, and reaching the allocation's last element is in bounds
    "as_strided_of_slice": (["t = w[1:]", "y = t.as_strided([3], [1])"], "{values: {y: [1.0, 2.0, 3.0]}}"),
    "set_": (["y = x.set_(s, 1, [1])"], "{values: {y: [4.0]}}"),
    "set_source": (["y = x.set_(s)"], "{values: {y: [3.0, 4.0]}}"),
    "resize_shrink_then_regrow": (["y = x.resize_(1)", "z = x.resize_(2)"], "{shape: {z: [2]}}"),
    "view_dtype_larger": (["y = w.view('int8')"], "{shape: {y: [12]}}"),
    "view_dtype_of_offset_same_size": (["t = w[1:]", "y = t.view('int32')"], "{shape: {y: [2]}}"),
}


@pytest.mark.parametrize("label", list(PADDLE_CONTROLS))
def test_paddle_in_bounds_controls_still_run(label: str) -> None:
    steps, expect = PADDLE_CONTROLS[label]
    outcome = run_on("paddle", case(steps, expect, PADDLE_GIVEN))
    assert outcome.verdict == PASS, (outcome.reason, outcome.mismatches)


def test_paddle_own_refusals_of_a_dtype_view_are_still_its_own() -> None:
    """Where Paddle refuses view(dtype) itself (a last stride other than 1), the bound leaves it
    to: the step's error is Paddle's, recorded as its behaviour."""
    outcome = run_on("paddle", case(["t = w.as_strided([2], [2])", "y = t.view('int8')"],
                                    "{error: {at: 2, kind: not_contiguous_view}}", "{w: [1.0, 2.0, 3.0]}"))
    assert outcome.verdict == PASS, (outcome.reason, outcome.mismatches)


def test_paddle_static_inherits_the_bound() -> None:
    outcome = run_on("paddle_static", case(["y = x.set_(s, 0, [64], [1])"], "{values: {y: [1.0]}}", PADDLE_GIVEN))
    assert_refused(outcome, 1, "y = x.set_(s, 0, [64], [1])", "reach element 63 of a storage of 2 elements")


# ---- MindSpore: set_ grows the storage

def test_mindspore_set_outside_the_storage_is_refused_and_in_bounds_runs() -> None:
    box = Sandbox(timeout=300)  # MindSpore's items run in a child of its own (it cannot follow Paddle)
    try:
        for number, (steps, message) in enumerate([
            (["y = x.set_(s, 0, [64], [1])"], "set_: size [64], stride [1], offset 0 reach element 63 of a storage "
                                              "of 2 elements: refused before calling the framework (it would reach "
                                              "past the end of the storage: MindSpore grows the storage to fit, and "
                                              "the new elements hold memory nobody wrote)"),
            (["t = s[1:]", "y = x.set_(t, 1, (1,), (1,))"], "offset 2 (the source's storage offset 1 + 1) reach "
                                                             "element 2 of a storage of 2 elements"),
        ]):
            outcome = box.run(case(steps, "{values: {x: [1.0, 2.0]}}", "{x: [1.0, 2.0], s: [3.0, 4.0]}",
                                   f"bounds.hostile_{number}"), "mindspore")
            if outcome.verdict == "skipped" or "not installed" in outcome.reason:
                pytest.skip(outcome.reason)
            assert_refused(outcome, len(steps), steps[-1], message)
        control = box.run(case(["y = x.set_(s, 1, (1,), (1,))"], "{values: {y: [4.0]}}",
                               "{x: [1.0, 2.0], s: [3.0, 4.0]}", "bounds.control"), "mindspore")
        assert control.verdict == PASS, (control.reason, control.mismatches)
    finally:
        box.close()


# ---- the frameworks without strides: nothing to address

@pytest.mark.parametrize("name", ["jax", "tensorflow", "array_api_strict", "jax_jit", "tensorflow_function",
                                  "tensorflow_xla"])
@pytest.mark.parametrize("step", ["y = x.as_strided([64], [1])", "y = x.as_strided_([64], [1])",
                                  "y = x.set_(s, 0, [64], [1])", "y = x.resize_(64)", "y = x.resize_as_(s)"])
def test_frameworks_without_strides_have_no_such_operation(name: str, step: str) -> None:
    a = registry.get_adapter(name)
    outcome = run(case([step], "{values: {y: [1.0]}}", "{x: [1.0, 2.0], s: [3.0, 4.0]}"), a)
    assert outcome.verdict == NOT_APPLICABLE, (outcome.verdict, outcome.reason)


# ---- no heap byte in an observation, whatever the framework

@pytest.mark.parametrize("name, steps", [
    ("numpy", ["y = x.as_strided([8], [1])", "z = y * 1.0"]),
    ("torch", ["y = x.set_(s, 0, [8])", "z = y * 1.0"]),
    ("torch", ["y = x.resize_as_(o)", "z = x * 1.0"]),
    ("paddle", ["y = x.as_strided([8], [1])", "z = y * 1.0"]),
    ("paddle", ["y = x.resize_(8)", "z = x.as_strided([8], [1])"]),
])
def test_no_value_that_was_not_written_reaches_the_outcome(name: str, steps: list[str]) -> None:
    outcome = run_on(name, case(steps, "{values: {z: [1.0, 2.0]}}",
                                "{x: [1.0, 2.0], s: [3.0, 4.0], o: {shape: [8], fill: 0.0}}"))
    assert outcome.verdict == ERROR, outcome.reason
    assert_only_written(outcome, {1.0, 2.0, 3.0, 4.0, 0.0})


# ---- the bound changes nothing a compiler traces

# corpus cases whose compiled outcome depends on the compiler tracing the operation itself:
# SOT's InnerError for resize_ / view, torch.compile's functionalized as_strided and set_. The
# checks are skipped while a compiler traces (the eager run checked the same requests); a
# first form of Paddle's skip, reaching in_sot_simulation_mode through module attributes, made
# SOT stop translating: both Paddle cases then recorded eager Paddle's outcome (measured)
TRACED = [
    ("paddle_static", "cases/memory/storage.yaml", "memory.resize_.shrink_keeps_storage"),
    ("paddle_static", "cases/views/test_view_ops_facts.yaml", "views.view.dtype_larger_offset_not_divisible"),
    ("paddle_static", "cases/views/as_strided.yaml", "views.as_strided.storage_offset"),
    ("paddle_static", "cases/views/paddle_documented.yaml", "views.set_.offset_size_stride"),
    ("torch_compile", "cases/compiled/storage_index.yaml", "compiled.as_strided.offset_write"),
    ("torch_compile", "cases/compiled/data_set.yaml", "compiled.data_set.set_after_mutation"),
]


@pytest.mark.parametrize("mode, path, case_id", TRACED)
def test_compiled_modes_trace_the_bounded_operations_as_before(mode: str, path: str, case_id: str) -> None:
    from pathlib import Path

    from conformance.load.reader import load_file

    root = Path(__file__).resolve().parents[2]
    cases = {c.id: c for c in load_file(root / path, registry.vocabulary(), display_path=path).cases}
    outcome = run_on(mode, cases[case_id])
    assert outcome.verdict == PASS, (outcome.reason, outcome.mismatches)


def test_numpy_as_strided_of_a_scalar_is_bounded_by_its_own_array() -> None:
    """x[0] of a 1-D array is a NumPy scalar, which np.lib.stride_tricks.as_strided makes a 0-d
    array of first: four elements of it would read 12 bytes past that array's 4."""
    outcome = run_on("numpy", case(["v = x[0]", "y = v.as_strided([4], [1])"], "{values: {y: [1.0]}}"))
    assert_refused(outcome, 2, "y = v.as_strided([4], [1])", "reach element 3 of a storage of 1 elements")
    control = run_on("numpy", case(["v = x[1]", "y = v.as_strided([3], [0])"], "{values: {y: [2.0, 2.0, 2.0]}}"))
    assert control.verdict == PASS, (control.reason, control.mismatches)
