"""The engine on the fake adapter: verdicts, mismatches, errors, probes, identity."""

from __future__ import annotations

import textwrap

from fake_adapter import FakeAdapter, LyingAdapter

from conformance.load.reader import Vocabulary, load_text
from conformance.model import Case, ResultKey
from conformance.run.engine import ERROR, FAIL, NOT_APPLICABLE, PASS, UNCHECKED, run

FRAMEWORKS = ("fake", "liar")


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
    result = load_text(text, "t.yaml", Vocabulary(frameworks=FRAMEWORKS))
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


def test_inplace_method_passes_when_expectations_hold() -> None:
    c = case(["y = x.add_(1)"], "{same_object: {y & x: true}, values: {x: [2.0, 3.0, 4.0, 5.0]}, "
                                "version_change: {x: 1}}")
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.observed[ResultKey("values", ("x",))] == [2.0, 3.0, 4.0, 5.0]
    assert [s.status for s in outcome.steps] == ["ok"]


def test_a_tuple_of_one_target_unpacks_the_value() -> None:
    # `a, = value` binds value's one item, as Python does (issue 37: `g, = autograd_grad(s, [x])`
    # binds the gradient, not the tuple torch returns); `a = value` binds the value itself
    c = case(["first, = x.view(1, 4)", "[second] = x.view(1, 4)", "whole = x.view(1, 4)"],
             "{values: {first: [1.0, 2.0, 3.0, 4.0], second: [1.0, 2.0, 3.0, 4.0], whole: [[1.0, 2.0, 3.0, 4.0]]}}")
    assert [s.unpack for s in c.steps] == [True, True, False]
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches


def test_value_mismatch_reports_expected_observed_line_and_step() -> None:
    c = case(["y = x.clone()", "y.add_(1)"], "{values: {x: [2.0, 3.0, 4.0, 5.0]}, shares_memory: {y & x: true}}")
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == FAIL
    values, sharing = outcome.mismatches
    assert values.what == "values of x" and values.expected == "[2.0, 3.0, 4.0, 5.0]"
    assert values.observed == "[1.0, 2.0, 3.0, 4.0]"
    assert values.location is not None and values.location.line == 8
    assert sharing.what == "shares_memory(y, x)" and sharing.expected is True and sharing.observed is False
    assert sharing.step == 1  # the step that bound y
    assert "behaviour probe: wrote through y, did not see the change in x" in sharing.detail


def test_view_shares_memory_by_both_probes_and_values_are_restored() -> None:
    c = case(["y = x.view(2, 2)"], "{shares_memory: {y & x: true}, values: {x: [1.0, 2.0, 3.0, 4.0]}}")
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches


def test_probes_that_disagree_fail_the_case_showing_both() -> None:
    c = case(["y = x.view(2, 2)"], "{shares_memory: {y & x: false}}")
    outcome = run(c, LyingAdapter())
    assert outcome.verdict == FAIL
    (m,) = outcome.mismatches
    assert m.what == "shares_memory(y, x): probes disagree"
    assert m.observed == "metadata=False, behaviour=True"
    assert "metadata probe: no overlap; behaviour probe: wrote through y, saw the change in x" in m.detail


def test_same_storage_without_overlap() -> None:
    c = case(["a = x[::2]", "b = x[1::2]"], "{same_storage: {a & b: true}, shares_memory: {a & b: false}}")
    assert run(c, FakeAdapter()).verdict == PASS


def test_expected_error_at_the_right_step_with_type_and_message() -> None:
    c = case(["y = x.clone()", "x.leafy_()"],
             "{error: {at: 2, kind: inplace_on_leaf, fake: {type: RuntimeError, match: 'leaf Variable'}}, "
             "values: {x: [1.0, 2.0, 3.0, 4.0]}}")
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.steps[1].error is not None and outcome.steps[1].error.kind == "inplace_on_leaf"


def test_expected_error_that_does_not_happen_fails() -> None:
    c = case(["y = x.clone()"], "{error: {at: 1, kind: inplace_on_leaf}}")
    (m,) = run(c, FakeAdapter()).mismatches
    assert m.what == "error" and m.observed == "no error: every step completed"


def test_wrong_error_message_fails() -> None:
    c = case(["x.leafy_()"], "{error: {at: 1, kind: inplace_on_leaf, fake: {match: 'saved tensor'}}}")
    (m,) = run(c, FakeAdapter()).mismatches
    assert m.what == "error message" and "leaf Variable" in m.observed


def test_unexpected_error_stops_the_run_and_is_shown() -> None:
    c = case(["x.leafy_()", "y = x.clone()"], "{values: {y: [1.0]}}")
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == FAIL
    raised, unbound = outcome.mismatches
    assert raised.what == "step 1 raised" and raised.observed.startswith("RuntimeError: a leaf Variable")
    assert "'y' was never bound (the run stopped at step 1)" in unbound.observed
    assert [s.status for s in outcome.steps] == ["error", "not_run"]


def test_missing_operation_is_not_applicable() -> None:
    c = case(["y = only_elsewhere(x)"], "{values: {y: [1.0]}}")
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == NOT_APPLICABLE
    assert outcome.reason == "not applicable: fake has no only_elsewhere"


def test_override_not_applicable_and_override_expectation() -> None:
    extra = "    frameworks:\n      liar: {not_applicable: it lies}\n      fake: {reason: r, expect: {values: {y: [5.0, 5.0]}}}\n"  # noqa: E501
    c = case(["y = x.clone()", "y.add_(3)"], "{values: {y: [0.0, 0.0]}}", given="{x: [2.0, 2.0]}", extra=extra)
    assert run(c, LyingAdapter()).reason == "not applicable: it lies"
    fake = run(c, FakeAdapter())
    assert fake.verdict == PASS and fake.override_reason == "r"


def test_augmented_assignment_keeps_identity_and_rebinding_does_not() -> None:
    c = case(["x0 = x", "x += 1", "y0 = x", "x = x + 1"],
             "{same_object: {x & x0: false, y0 & x0: true}, values: {x0: [2.0, 3.0, 4.0, 5.0]}}")
    assert run(c, FakeAdapter()).verdict == PASS


def test_warning_expectation_sees_every_occurrence() -> None:
    c = case(["y = x.warn()", "z = x.warn()"], "{warning: {at: 2, match: 'DeprecationWarning: this op'}}")
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.steps[0].warnings == outcome.steps[1].warnings == ["DeprecationWarning: this op is deprecated"]


def test_unobservable_property_is_recorded_not_compared() -> None:
    from conformance.adapters.numpy_adapter import NumpyAdapter

    c = case(["y = x.clone()"], "{version_change: {y: 0}, values: {y: [1.0, 2.0, 3.0, 4.0]}}")
    outcome = run(c, NumpyAdapter())
    assert outcome.verdict == PASS
    assert outcome.unobservable == ["version_change of y: numpy has no version change"]


def test_an_item_whose_every_expectation_is_unobservable_is_unchecked_not_passed() -> None:
    from conformance.adapters.numpy_adapter import NumpyAdapter

    # a claim and its exact opposite: neither may pass where nothing is compared
    for count in (0, 7):
        outcome = run(case(["y = x.clone()"], f"{{version_change: {{y: {count}}}}}"), NumpyAdapter())
        assert (outcome.verdict, outcome.observed) == (UNCHECKED, {})
        assert outcome.reason == "nothing compared: version_change of y: numpy has no version change"
    # one expectation compared is enough: the rest is recorded as not observed
    outcome = run(case(["y = x.clone()"], "{version_change: {y: 7}, values: {y: [1.0, 2.0, 3.0, 4.0]}}"),
                  NumpyAdapter())
    assert outcome.verdict == PASS and outcome.unobservable


def test_an_argument_the_adapters_own_entry_does_not_take_is_no_framework_error() -> None:
    # clone's entry is the suite's lambda x: x.copy(): an extra argument is refused by the
    # lambda itself, before NumPy is called, so it is not NumPy's TypeError (issue 38)
    outcome = run(case(["y = x.clone(1)"], "{error: {at: 1, kind: type_error}}"), FakeAdapter())
    assert outcome.verdict == ERROR
    assert "fake's table entry for method:clone does not take these arguments" in outcome.reason
    assert "so fake itself was never called" in outcome.reason
    # the framework's own refusal, raised inside the entry, stays the framework's
    outcome = run(case(["y = x.view(1, 2, 3)"], "{error: {at: 1, kind: shape_mismatch}}"), FakeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches


def test_layout_overlap_is_exact_for_strided_and_fast_for_dense_layouts() -> None:
    from conformance.adapters.base import Layout, layouts_overlap

    def layout(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> Layout:
        return Layout(ptr, shape, strides, 4, None)

    whole = layout(0, (300, 300), (1200, 4))
    assert layouts_overlap(whole, whole)  # dense and dense: decided by the bounds
    assert layouts_overlap(whole, layout(1196, (300,), (-4,)))  # a flipped row inside it
    assert not layouts_overlap(layout(0, (4,), (8,)), layout(4, (4,), (8,)))  # x[::2] and x[1::2]
    # bounds intersect, but the strided one's elements (bytes 0-3 and 100-103) miss the
    # dense one's (10-49): no shared byte
    assert not layouts_overlap(layout(0, (2,), (100,)), layout(12, (10,), (4,)))
    assert layouts_overlap(layout(0, (2,), (100,)), layout(96, (2,), (4,)))


def test_each_production_is_classified_right_after_its_step() -> None:
    """Outcome.productions: what y = op(x) made, by the memory probe, when the step ran (the
    report's operation table trusts it over the end of the case where a later step moved a
    buffer: tests/test_report.py), for the pairs whose relation the expectation checks."""
    steps = ["y = x.view(4)", "z = x.clone()", "w = x.add_(1)", "n = 3"]
    c = case(steps, "{values: {x: [2.0, 3.0, 4.0, 5.0]}, shares_memory: {y & x: true, z & x: false}, "
                    "same_object: {w & x: true}}")
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    assert outcome.productions == [{"step": 1, "result": "y", "input": "x", "class": "view"},
                                   {"step": 2, "result": "z", "input": "x", "class": "copy"},
                                   {"step": 3, "result": "w", "input": "x", "class": "same_object"}]
    # a pair the expectation does not relate is not recorded: its relation may depend on what
    # the case does not pin down (an alignment), and records must be the same in every run
    outcome = run(case(steps, "{shares_memory: {y & x: true}}"), FakeAdapter())
    assert outcome.productions == [{"step": 1, "result": "y", "input": "x", "class": "view"}]
    # a step that raised produced nothing
    outcome = run(case(["y = x.leafy_()"], "{error: {at: 1, kind: inplace_on_leaf}, shares_memory: {y & x: true}}"),
                  FakeAdapter())
    assert outcome.productions == []


def test_a_failure_says_the_error_once_and_lists_the_expectations_it_left_unbound_in_one_line() -> None:
    from conformance.report.failure import render_failure

    c = case(["y = x.view(3)", "z = y.clone()"], "{values: {y: [1.0], z: [1.0]}, shares_memory: {z & y: false}}")
    outcome = run(c, FakeAdapter())
    text = render_failure(c, outcome)
    assert text.count("was never bound") == 0 and text.count("step 1 raised") == 1
    assert ("and 3 expectation(s) about names the run never bound, as it stopped at the error above: values of y "
            "(line 8), values of z (line 8), shares_memory(z, y) (line 8)") in text
    assert len(outcome.mismatches) == 5  # the record keeps each (shares_memory's names, one each)


def test_an_input_made_from_another_is_a_view_of_it_made_before_the_steps() -> None:
    c = case(["v.add_(10)"], "{values: {x: [1.0, 12.0, 13.0, 4.0]}, shares_memory: {v & x: true}}",
             given='{x: [1.0, 2.0, 3.0, 4.0], v: {from: "x[1:3]"}}')
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    c = case(["y = v.clone()"], "{values: {y: [1.0]}}", given='{x: [1.0, 2.0], v: {from: "x.view(3)"}}')
    outcome = run(c, FakeAdapter())
    assert outcome.verdict == ERROR
    assert outcome.reason.startswith("input 'v' (")
    assert "could not be made from x.view(3): ValueError: cannot reshape array of size 2" in outcome.reason


def test_an_error_written_as_other_that_the_adapter_now_names_points_at_the_migration_note() -> None:
    outcome = run(case(["y = x.view(3)"], "{error: {at: 1, kind: other}}"), FakeAdapter())
    (miss,) = outcome.mismatches
    assert miss.detail == ("the adapter now names this error's kind: write kind: shape_mismatch "
                           "(docs/case-format-changes.md)")
