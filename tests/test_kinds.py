"""The assertion kinds (conformance/kinds): each parses its YAML value with located errors
(the same messages, codes and positions as the loader gave before the kinds), observes and
checks on the fake adapter with the same mismatch texts, and names its results with a
ResultKey whose text form round-trips through the results file. A kind a test registers
is parsed, checked, recorded, diffed and described, and joins the schema, with no other code
changed."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
from fake_adapter import FakeAdapter
from hypothesis import given
from hypothesis import strategies as st
from results_factory import case_info, document, record, typed

from conformance import kinds
from conformance.kinds.base import Checking, TensorKind
from conformance.load.cache import ENTRY_TYPES
from conformance.load.inputs import NAME_PATTERN
from conformance.load.reader import load_text
from conformance.model import ERROR_KINDS, Case, ResultKey
from conformance.outcomes import FAIL, PASS, UNCHECKED
from conformance.registry import Vocabulary, exception_names
from conformance.report import analysis
from conformance.report.diff import compare, render_text
from conformance.report.failure import render_failure
from conformance.report.results import outcome_record
from conformance.run.engine import run
from conformance.source import CaseFormatError, Location
from conformance.tools import lint, regen
from conformance.tools import schema as schema_tool
from conformance.tools.observe import observe, probe_expect, render
from conformance.yamlvalues import fields

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "conformance" / "data" / "case.schema.json"

VOCAB = Vocabulary(frameworks=("numpy", "torch", "paddle"),
                   operations={"method:clone", "method:add_", "method:view", "method:leafy_", "method:warn"})


def load_case(expect: str, steps: str = "['y = x.clone()', 'y.add_(1)']", vocabulary: Vocabulary = VOCAB) -> Case:
    text = (f"cases:\n  - id: a.b\n    title: t\n    given: {{x: [1.0, 2.0]}}\n    steps: {steps}\n"
            f"    expect:\n      {expect}\n")
    result = load_text(text, "cases/t.yaml", vocabulary)
    assert result.errors == [], [e.render() for _, e in result.errors]
    return result.cases[0]


# --------------------------------------------------------------------------- (1) parse

# (kind, its value under expect, column, code, message, fix); every value is written on line 7
PARSE_ERRORS = [
    ('shares_memory', '[y]', 7, 'CF000',
     "'shares_memory' must be a mapping, got a list",
     None),
    ('shares_memory', '{y: true}', 23, 'CF000',
     "'shares_memory' entries are 'a & b: true|false', got 'y'",
     "name two tensors joined by '&', e.g. shares_memory: {y & x: true}"),
    ('shares_memory', '{y & z: true}', 23, 'CF002',
     "'z' is not a tensor of this case",
     "known names: x, y"),
    ('shares_memory', '{y & x: 1}', 23, 'CF000',
     "'shares_memory' of 'y & x' must be true or false, got a number (1)",
     None),
    ('same_storage', '{y & x & x: true}', 22, 'CF000',
     "'same_storage' entries are 'a & b: true|false', got 'y & x & x'",
     "name two tensors joined by '&', e.g. same_storage: {y & x: true}"),
    ('same_object', '{y & x: maybe}', 21, 'CF000',
     "'same_object' of 'y & x' must be true or false, got a string ('maybe')",
     None),
    ('recorded_view', '{y & x: 1}', 23, 'CF000',
     "'recorded_view' of 'y & x' must be true or false, got a number (1)",
     None),
    ('recorded_view', '{y: true}', 23, 'CF000',
     "'recorded_view' entries are 'a & b: true|false', got 'y'",
     "name two tensors joined by '&', e.g. recorded_view: {y & x: true}"),
    ('values', '{y: [[1, 2], [3]]}', 19, 'CF000',
     "'values': ragged data (rows of different lengths)",
     "every row must have the same length"),
    ('values', '{y: {real: [1.0], imag: [1.0, 2.0]}}', 16, 'CF000',
     "'values': 'real' and 'imag' have different shapes",
     None),
    ('values', '{y: {real: [1.0], img: [1.0]}}', 33, 'CF000',
     "unknown key 'img' in complex 'values'",
     "did you mean 'imag'?"),
    ('values', '{y: a}', 16, 'CF000',
     "'values': data must be numbers or booleans, got a string ('a')",
     "complex values are given as 'real' and 'imag' lists"),
    ('values', '{q: [1.0]}', 16, 'CF002',
     "'q' is not a tensor of this case",
     "known names: x, y"),
    ('grad', '{x: [1.0, a]}', 14, 'CF000',
     "'grad': data must be numbers or booleans, got a string ('a')",
     "complex values are given as 'real' and 'imag' lists"),
    ('dtype', '{y: float33}', 15, 'CF000',
     "unknown dtype 'float33'",
     "did you mean 'float32'?"),
    ('dtype', '{y: [float32]}', 15, 'CF000',
     "unknown dtype ['float32']",
     "did you mean 'float32'?"),
    ('shape', '{y: [-1]}', 15, 'CF000',
     "'shape': 'shape' must be a list of non-negative integers",
     "e.g. shape: [2, 3]"),
    ('strides', '{y: [1.5, 1]}', 17, 'CF000',
     "'strides' must be a list of integers, got a number (1.5) at position 0",
     "one integer per dimension, in elements: e.g. strides: {y: [3, 1]}"),
    ('strides', '{y: 3}', 17, 'CF000',
     "'strides' must be a list of integers, got a number (3)",
     "one integer per dimension, in elements: e.g. strides: {y: [3, 1]}"),
    ('strides', '{y: [true]}', 17, 'CF000',
     "'strides' must be a list of integers, got a boolean (True) at position 0",
     "one integer per dimension, in elements: e.g. strides: {y: [3, 1]}"),
    ('requires_grad', '{y: 1}', 23, 'CF000',
     "'requires_grad' must be true or false, got a number (1)",
     None),
    ('is_leaf', '{y: 2}', 17, 'CF000',
     "'is_leaf' must be true or false, got a number (2)",
     None),
    ('version_change', '{x: -1}', 24, 'CF000',
     "'version_change' must be a non-negative integer, got a number (-1)",
     None),
    ('version_change', '{x: true}', 24, 'CF000',
     "'version_change' must be a non-negative integer, got a boolean (True)",
     None),
    ('error', '{at: 9, kind: other}', 15, 'CF000',
     "'error.at': there is no step 9 (the case has 2)",
     "steps are numbered from 1 in the order they run"),
    ('error', '{at: 1, kind: bogus}', 22, 'CF000',
     "unknown error kind 'bogus'",
     "kinds: " + ", ".join(ERROR_KINDS)),
    ('error', '{at: 1}', 14, 'CF000',
     "'error' needs 'kind'",
     "e.g. error: {at: 3, kind: inplace_on_leaf}"),
    ('error', '{at: 1, kind: other, torch: {type: 3}}', 43, 'CF000',
     "'error.torch.type' must be an exception type name, got a number (3)",
     "e.g. type: RuntimeError"),
    ('error', "{at: 1, kind: other, torch: {match: '('}}", 43, 'CF000',
     "'match' is not a valid regular expression: missing ), unterminated subpattern at position "
     "0",
     "escape special characters such as ( ) [ ] . with a backslash"),
    ('error', '{at: 1, kind: other, mxnet: {}}', 35, 'CF000',
     "unknown key 'mxnet' in 'error'",
     "allowed keys: at, kind, numpy, torch, paddle"),
    ('error', "{at: 'y = x.clone()', kind: [other]}", 36, 'CF000',
     "unknown error kind ['other']",
     "did you mean 'other'?"),
    ('warning', '{at: 1}', 16, 'CF000',
     "'warning' needs 'at' and 'match'",
     "e.g. warning: {at: 2, match: deprecated}"),
    ('warning', '{at: nope, match: x}', 17, 'CF000',
     "'warning.at': no step reads 'nope'",
     "give the step's exact text or its number"),
    ('warning', "{at: 1, match: '(('}", 24, 'CF000',
     "'match' is not a valid regular expression: missing ), unterminated subpattern at position "
     "1",
     "escape special characters such as ( ) [ ] . with a backslash"),
    ('warning', '[1]', 7, 'CF000',
     "'warning' must be a mapping, got a list",
     None),
]


@pytest.mark.parametrize(("key", "value", "column", "code", "message", "hint"), PARSE_ERRORS,
                         ids=[f"{row[0]}:{row[1]}" for row in PARSE_ERRORS])
def test_a_bad_value_is_refused_where_it_is_written(key: str, value: str, column: int, code: str, message: str,
                                                     hint: str | None) -> None:
    text = ("cases:\n  - id: a.b\n    title: t\n    given: {x: [1.0, 2.0]}\n"
            "    steps: ['y = x.clone()', 'y.add_(1)']\n"
            f"    expect:\n      {key}: {value}\n")
    (_, error), = load_text(text, "cases/t.yaml", VOCAB).errors
    assert (error.location, error.message, error.hint, error.code) == (Location("cases/t.yaml", 7, column), message,
                                                                      hint, code)


def test_every_kind_has_its_parse_errors_tested() -> None:
    assert sorted({row[0] for row in PARSE_ERRORS}) == sorted(kinds.names())


def load_errors(expect: str, vocabulary: Vocabulary = VOCAB) -> list[tuple[int, int, str, str]]:
    text = ("cases:\n  - id: a.b\n    title: t\n    given: {x: [1.0, 2.0]}\n"
            f"    steps: ['y = x.clone()', 'y.add_(1)']\n    expect:\n      {expect}\n")
    return [(e.location.line, e.location.column, e.code, e.message)
            for _, e in load_text(text, "cases/t.yaml", vocabulary).errors]


def test_each_entry_of_a_kind_is_read_on_its_own() -> None:
    """Failed before: the first bad entry only."""
    assert load_errors("values: {y: [1.0, a], q: [1.0], x: [[1.0], [2.0, 3.0]]}") == [
        (7, 16, "CF000", "'values': data must be numbers or booleans, got a string ('a')"),
        (7, 29, "CF002", "'q' is not a tensor of this case"),
        (7, 42, "CF000", "'values': ragged data (rows of different lengths)"),
    ]
    assert load_errors("shares_memory: {y: true, y & z: true, y & x: 1}") == [
        (7, 23, "CF000", "'shares_memory' entries are 'a & b: true|false', got 'y'"),
        (7, 32, "CF002", "'z' is not a tensor of this case"),
        (7, 45, "CF000", "'shares_memory' of 'y & x' must be true or false, got a number (1)"),
    ]


def test_each_part_of_an_expected_error_is_read_on_its_own() -> None:
    """Failed before: the first of them only."""
    assert load_errors("error: {at: 9, kind: bogus, torch: {type: 3}, paddle: {match: '('}}") == [
        (7, 15, "CF000", "'error.at': there is no step 9 (the case has 2)"),
        (7, 22, "CF000", "unknown error kind 'bogus'"),
        (7, 43, "CF000", "'error.torch.type' must be an exception type name, got a number (3)"),
        (7, 62, "CF000", "'match' is not a valid regular expression: missing ), unterminated subpattern at position 0"),
    ]


EXCEPTIONS = Vocabulary(frameworks=VOCAB.frameworks, operations=VOCAB.operations, exception_types={
    "torch": exception_names({"torch._C._LinAlgError", "torch.OutOfMemoryError"}),
    "numpy": exception_names({"numpy.exceptions.AxisError", "numpy._core._exceptions._UFuncOutputCastingError"})})


@pytest.mark.parametrize("written, hint", [
    ("RuntimeErorr", "did you mean 'RuntimeError'?"),
    ("LinAlgError", "did you mean '_LinAlgError'?"),  # the engine records torch's class name, _LinAlgError
    ("torch.RuntimeError", "did you mean 'RuntimeError'?"),  # builtins are recorded unqualified
    ("Zork", "name the exception's class as torch raises it: a Python builtin such as RuntimeError or ValueError, "
             "or one of torch's own (its adapter's exception_types); run `conformance observe` to see what a step "
             "raises"),
])
def test_an_exception_type_the_framework_cannot_raise_is_refused_at_load(written: str, hint: str) -> None:
    """Failed before: any name loaded, and the case failed at run time with a confusing type mismatch."""
    text = ("cases:\n  - id: a.b\n    title: t\n    given: {x: [1.0, 2.0]}\n    steps: ['y = x.clone()']\n"
            f"    expect:\n      error: {{at: 1, kind: other, torch: {{type: {written}}}}}\n")
    (_, error), = load_text(text, "cases/t.yaml", EXCEPTIONS).errors
    assert (error.location, error.code, error.message, error.hint) == (
        Location("cases/t.yaml", 7, 43), "CF013",
        f"'error.torch.type': unknown exception type {written!r}: neither a Python builtin exception nor one torch "
        "defines", hint)


@pytest.mark.parametrize("framework, written", [
    ("torch", "RuntimeError"), ("torch", "OutOfMemoryError"), ("torch", "torch.OutOfMemoryError"),
    ("torch", "_LinAlgError"), ("numpy", "_UFuncOutputCastingError"), ("numpy", "numpy.exceptions.AxisError"),
    ("numpy", "BufferError"), ("paddle", "Anything"),  # paddle declares none here: not checked
])
def test_a_known_exception_type_loads(framework: str, written: str) -> None:
    load_case(f"error: {{at: 1, kind: other, {framework}: {{type: {written}}}}}", vocabulary=EXCEPTIONS)


def test_an_unknown_key_under_expect_names_the_kinds() -> None:
    text = ("cases:\n  - id: a.b\n    title: t\n    given: {x: [1.0]}\n    steps: ['y = x.clone()']\n"
            "    expect: {valeus: {y: [1.0]}}\n")
    (_, error), = load_text(text, "cases/t.yaml", VOCAB).errors
    assert (error.message, error.hint) == ("unknown key 'valeus' in 'expect'", "did you mean 'values'?")


def test_each_kind_parses_into_checks_with_a_location_per_entry() -> None:
    case = load_case("{shares_memory: {y & x: false}, values: {y: [2.0, 3.0]}, grad: {x: null}, dtype: {y: float32},"
                     " error: {at: 2, kind: other, torch: {type: E, match: 'a+'}}, warning: {at: 1, match: w}}")
    checks, locations = case.expect.checks, case.expect.locations
    assert checks["shares_memory"] == {("y", "x"): False}
    assert checks["values"] == {("y",): [2.0, 3.0]} and checks["grad"] == {("x",): None}
    assert checks["dtype"] == {("y",): "float32"}
    error, warning = checks["error"], checks["warning"]
    assert (error.at, error.kind, error.details["torch"].type, error.details["torch"].match) == (2, "other", "E", "a+")
    assert (warning.at, warning.match) == (1, "w")
    assert list(locations) == [ResultKey("shares_memory", ("y", "x")), ResultKey("values", ("y",)),
                               ResultKey("grad", ("x",)), ResultKey("dtype", ("y",)), ResultKey("error"),
                               ResultKey("warning")]
    assert {loc.line for loc in locations.values()} == {7}


def test_an_override_merges_entry_kinds_and_replaces_whole_ones() -> None:
    text = textwrap.dedent("""\
        cases:
          - id: a.b
            title: t
            given: {x: [1.0, 2.0]}
            steps: ['y = x.clone()', 'y.add_(1)']
            expect: {values: {x: [1.0, 2.0], y: [2.0, 3.0]}, error: {at: 2, kind: other}, warning: {at: 1, match: w}}
            frameworks:
              torch: {reason: r, expect: {values: {y: [0.0, 0.0]}, error: null, warning: {at: 2, match: v}}}
        """)
    case, = load_text(text, "cases/t.yaml", VOCAB).cases
    assert case.overrides["torch"].expect.replaces == ("error", "warning")
    torch = case.expect_for("torch")
    assert torch.checks["values"] == {("x",): [1.0, 2.0], ("y",): [0.0, 0.0]}
    assert "error" not in torch.checks and torch.checks["warning"].at == 2
    assert torch.locations[ResultKey("values", ("y",))].line == 8
    assert case.expect_for("numpy") == case.expect


# --------------------------------------------------------------------------- (2, 3) observe and check


class ProbeAdapter(FakeAdapter):
    """The fake adapter with autograd probes: 1-d arrays require grad and have a gradient
    of ones; an array is a leaf when it owns its memory."""

    name = "probe"

    def requires_grad(self, obj: Any) -> bool | None:
        return bool(obj.ndim == 1)

    def is_leaf(self, obj: Any) -> bool | None:
        return obj.base is None

    def grad(self, obj: Any) -> Any:
        return np.ones_like(obj) if obj.ndim == 1 else None


STEPS = "['y = x.clone()', 'y.add_(1)', 'v = x.view(2)']"

# (expect, what, expected, observed, detail) of a failure; the same expect with the
# observed value passes
CHECKS = [
    ("values: {y: [9.0, 9.0]}", "values of y", "[9.0, 9.0]", "[2.0, 3.0]", ""),
    ("grad: {x: null}", "grad of x", "None", "[1.0, 1.0]", ""),
    ("dtype: {y: int64}", "dtype of y", "int64", "float32", ""),
    ("shape: {y: [3]}", "shape of y", [3], [2], ""),
    ("strides: {y: [2]}", "strides of y", [2], [1], ""),
    ("requires_grad: {y: false}", "requires_grad of y", False, True, ""),
    ("is_leaf: {v: true}", "is_leaf of v", True, False, ""),
    ("version_change: {y: 0}", "version_change of y", 0, 1, ""),
    ("shares_memory: {y & x: true}", "shares_memory(y, x)", True, False,
     "metadata probe: no overlap; behaviour probe: wrote through y, did not see the change in x"),
    ("same_storage: {y & x: true}", "same_storage(y, x)", True, False, "metadata: allocation ranges are disjoint"),
    ("same_object: {v & x: true}", "same_object(v, x)", True, False, None),
]
PASSING = ["values: {y: [2.0, 3.0]}", "grad: {x: [1.0, 1.0]}", "dtype: {y: float32}", "shape: {y: [2]}",
           "strides: {y: [1]}",
           "requires_grad: {y: true}", "is_leaf: {v: false}", "version_change: {y: 1}",
           "shares_memory: {v & x: true}", "same_storage: {v & x: true}", "same_object: {v & x: false}"]


@pytest.mark.parametrize(("expect", "what", "expected", "observed", "detail"), CHECKS, ids=[c[1] for c in CHECKS])
def test_a_kind_that_does_not_hold_says_what_it_expected_and_observed(expect: str, what: str, expected: Any,
                                                                        observed: Any, detail: str | None) -> None:
    case = load_case("{" + expect + "}", STEPS)
    outcome = run(case, ProbeAdapter())
    assert outcome.verdict == FAIL
    (m,) = outcome.mismatches
    assert (m.what, m.expected, m.observed) == (what, expected, observed)
    assert m.location == Location("cases/t.yaml", 7, m.location.column)
    name = what.split("(")[-1].split(",")[0] if "(" in what else what.rsplit(" ", 1)[-1]
    assert m.step == {"x": None, "y": 1, "v": 3}[name]  # the step that bound the name
    if detail is None:
        assert re.fullmatch(r"id\(v\)=0x[0-9a-f]+, id\(x\)=0x[0-9a-f]+", m.detail)
    else:
        assert m.detail == detail
    key = next(iter(case.expect.locations))
    assert list(outcome.observed) == [key]


@pytest.mark.parametrize("expect", PASSING)
def test_a_kind_that_holds_records_what_it_observed(expect: str) -> None:
    case = load_case("{" + expect + "}", STEPS)
    outcome = run(case, ProbeAdapter())
    assert outcome.verdict == PASS, outcome.mismatches
    (key,) = case.expect.locations
    assert list(outcome.observed) == [key]
    assert outcome.observed[key] == case.expect.checks[key.kind][key.names] or key.kind == "values"


def test_the_error_kind_is_checked_in_every_case() -> None:
    steps = "['y = x.clone()', 'y.leafy_()']"
    unexpected = run(load_case("{values: {x: [1.0, 2.0]}}", steps), ProbeAdapter())
    m = unexpected.mismatches[0]
    assert (m.what, m.expected, m.observed, m.step, m.detail) == (
        "step 2 raised", "no error", "RuntimeError: a leaf Variable that requires grad is being used in an in-place "
        "operation.", 2, "error kind: inplace_on_leaf")
    assert m.location.line == 1 + 4  # the steps' line: where the step is written
    with_probe = Vocabulary(frameworks=("probe",), operations=VOCAB.operations)
    expected = run(load_case("{error: {at: 2, kind: inplace_on_leaf, probe: {type: RuntimeError, match: leaf}}}",
                             steps, with_probe), ProbeAdapter())
    assert expected.verdict == PASS, expected.mismatches
    assert expected.observed[ResultKey("error")]["kind"] == "inplace_on_leaf"
    wrong = run(load_case("{error: {at: 2, kind: other}}", steps), ProbeAdapter())
    m, = wrong.mismatches
    assert (m.what, m.expected, m.step) == ("error", "other at step 2", 2)
    assert m.observed.startswith("inplace_on_leaf at step 2 (RuntimeError: a leaf Variable")
    none = run(load_case("{error: {at: 2, kind: other}}"), ProbeAdapter())
    assert [(m.what, m.observed) for m in none.mismatches] == [("error", "no error: every step completed")]


def test_the_warning_kind() -> None:
    steps = "['y = x.clone()', 'z = y.warn()']"
    assert run(load_case("{warning: {at: 2, match: deprecated}}", steps), ProbeAdapter()).verdict == PASS
    outcome = run(load_case("{warning: {at: 1, match: deprecated}}", steps), ProbeAdapter())
    m, = outcome.mismatches
    assert (m.what, m.expected, m.observed) == ("warning", "a warning matching /deprecated/ at step 1", "no warning")
    assert outcome.observed[ResultKey("warning")] == []


def test_a_property_the_framework_has_no_notion_of_is_unobservable_not_compared() -> None:
    class NoVersions(ProbeAdapter):
        unobservable = frozenset({"version_change"})

    outcome = run(load_case("{version_change: {y: 7}}"), NoVersions())
    # nothing was compared: not a pass (its own outcome), whatever the expectation said
    assert outcome.verdict == UNCHECKED and outcome.observed == {}
    assert outcome.unobservable == ["version_change of y: probe has no version change"]
    assert outcome.reason == "nothing compared: version_change of y: probe has no version change"


def test_strides_are_in_elements_and_a_tensor_without_them_is_unobservable() -> None:
    # the fake's arrays are NumPy's: strides in bytes over the itemsize
    steps = "['y = x.clone()', 'v = x.view(2, 1)']"
    outcome = run(load_case("{strides: {y: [1], v: [1, 1]}}", steps), ProbeAdapter())
    assert outcome.verdict == PASS and outcome.observed[ResultKey("strides", ("v",))] == [1, 1]

    class NoStrides(ProbeAdapter):  # a framework that gives none for this tensor (a JAX array in torch's run)
        def strides_of(self, obj: Any) -> tuple[int, ...] | None:
            return None

    outcome = run(load_case("{strides: {y: [1]}}"), NoStrides())
    assert outcome.verdict == UNCHECKED and outcome.observed == {}
    assert outcome.unobservable == ["strides of y: y exposes no element strides"]

    class Declared(ProbeAdapter):  # JAX, TensorFlow: declared in the adapter
        unobservable = frozenset({"strides"})

    outcome = run(load_case("{strides: {y: [1]}, values: {y: [2.0, 3.0]}}"), Declared())
    assert outcome.verdict == PASS and outcome.unobservable == ["strides of y: probe has no strides"]
    assert ResultKey("strides", ("y",)) not in outcome.observed

    class Refuses(ProbeAdapter):
        def strides_of(self, obj: Any) -> tuple[int, ...] | None:
            raise TypeError("a sparse tensor has no strides")

    (m,) = run(load_case("{strides: {y: [1]}}"), Refuses()).mismatches
    assert (m.what, m.observed) == ("strides of y", "reading it raised TypeError: a sparse tensor has no strides")


def test_a_numpy_stride_that_is_no_whole_element_is_none() -> None:
    from conformance.adapters.base import ArrayProbes

    a = np.zeros(4, dtype=[("a", np.int8), ("b", np.int32)])
    assert ArrayProbes().strides_of(a["b"]) is None  # 5 bytes apart, 4-byte elements
    assert ArrayProbes().strides_of(np.arange(6.0).reshape(2, 3).T) == (1, 3)
    assert ArrayProbes().strides_of(np.arange(4)[::-1]) == (-1,)
    assert ArrayProbes().strides_of(np.broadcast_to(np.arange(3), (2, 3))) == (0, 1)


def test_observe_writes_strides_only_where_a_layout_is_not_dense_row_major() -> None:
    strides = kinds.get("strides")
    key = ResultKey("strides", ("y",))
    case = load_case("{values: {y: [2.0, 3.0]}}")
    assert not strides.worth_writing(key, {"torch": [3, 1], "numpy": [3, 1]}, case, set())
    assert not strides.worth_writing(key, {"torch": [1], "numpy": [1]}, case, set())
    for layout in ([1, 3], [0, 1], [3, 2], [-1]):
        assert strides.worth_writing(key, {"torch": [3, 1], "numpy": layout}, case, set()), layout
    # frameworks that disagree, each dense: worth a line (the compiled mode's copy)
    assert strides.worth_writing(key, {"torch": [6, 2, 1], "paddle": [6, 3, 1]}, case, set())


def test_kinds_are_checked_error_first_and_relations_last_in_written_order_within() -> None:
    case = load_case("{same_object: {y & x: true}, values: {y: [0.0, 0.0]}, shares_memory: {y & x: true},"
                     " dtype: {y: int8}}")
    assert [kind.name for kind, _ in kinds.checks(case.expect)] == [
        "error", "values", "dtype", "same_object", "shares_memory"]
    assert [m.what for m in run(case, ProbeAdapter()).mismatches] == [
        "values of y", "dtype of y", "same_object(y, x)", "shares_memory(y, x)"]


# --------------------------------------------------------------------------- (4) the key


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_each_kinds_key_round_trips_through_its_text(kind: Any) -> None:
    key = kind.key(("y", "x")[:kind.arity])
    text = {0: kind.name, 1: f"{kind.name}.y", 2: f"{kind.name}.y.x"}[kind.arity]
    assert str(key) == text and ResultKey.parse(text) == key and kinds.find(text) is kind


names = st.from_regex(NAME_PATTERN, fullmatch=True)


@given(st.sampled_from(kinds.names()), st.lists(names, max_size=2))
def test_any_key_round_trips(kind: str, key_names: list[str]) -> None:
    key = ResultKey(kind, tuple(key_names))
    assert ResultKey.parse(str(key)) == key


def test_the_results_file_writes_the_text_keys() -> None:
    case = load_case("{shares_memory: {v & x: true}, values: {y: [2.0, 3.0]}, error: null}", STEPS)
    outcome = run(case, ProbeAdapter())
    observed = outcome_record(case, outcome).observed
    assert observed == {"shares_memory.v.x": True, "values.y": [2.0, 3.0]}
    assert {ResultKey.parse(k) for k in observed} == set(outcome.observed)


# --------------------------------------------------------------------------- a kind added by a test


class Ndim(TensorKind):
    """A kind no case uses: how many dimensions a tensor has."""

    name = "ndim"
    description = "Tensor -> its number of dimensions."
    probed = "always"
    observe_order = 9

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        if type(value) is not int or value < 0:
            raise CaseFormatError(loc, f"'ndim' must be a non-negative integer, got {fields.kind_of(value)}")
        return value

    def value_schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": 0}

    def observe(self, obj: Any, run: Checking) -> Any:
        return len(run.adapter.shape_of(obj))

    def worth_writing(self, key: ResultKey, values: Any, case: Case, made: Any) -> bool:
        return True


@pytest.fixture
def ndim() -> Iterator[Ndim]:
    kind = kinds.register(Ndim())
    try:
        yield kind
    finally:
        kinds.unregister("ndim")
    assert "ndim" not in kinds.names()


def test_a_registered_kind_is_parsed(ndim: Ndim) -> None:
    case = load_case("{ndim: {y: 1}}")
    assert case.expect.checks == {"ndim": {("y",): 1}}
    assert case.expect.locations[ResultKey("ndim", ("y",))] == Location("cases/t.yaml", 7, 15)
    text = "cases:\n  - id: a.b\n    title: t\n    given: {x: [1.0]}\n    steps: ['y = x.clone()']\n"
    (_, error), = load_text(text + "    expect: {ndim: {y: -1}}\n", "t.yaml", VOCAB).errors
    assert (error.location.line, error.message) == (6, "'ndim' must be a non-negative integer, got a number (-1)")
    (_, error), = load_text(text + "    expect: {ndim: {z: 1}}\n", "t.yaml", VOCAB).errors
    assert error.code == "CF002"
    (_, error), = load_text(text + "    expect: {nidm: {y: 1}}\n", "t.yaml", VOCAB).errors
    assert error.hint == "did you mean 'ndim'?"
    # the case cache and the sandbox carry it (its value is plain data)
    assert ENTRY_TYPES.loads(ENTRY_TYPES.dumps(case)) == case


def test_a_registered_kind_is_checked_recorded_and_described_in_a_failure(ndim: Ndim) -> None:
    passing = run(load_case("{ndim: {y: 1}}"), FakeAdapter())
    assert passing.verdict == PASS and passing.observed == {ResultKey("ndim", ("y",)): 1}
    case = load_case("{ndim: {y: 2}}")
    outcome = run(case, FakeAdapter())
    m, = outcome.mismatches
    assert (outcome.verdict, m.what, m.expected, m.observed, m.step, m.location.line) == (FAIL, "ndim of y", 2, 1, 1, 7)
    rec = outcome_record(case, outcome)
    assert rec.observed == {"ndim.y": 1} and rec.reason == "ndim of y: expected 2, observed 1"
    assert "  ndim of y  (cases/t.yaml:7)\n    expected: 2\n    observed: 1\n    by step 1: y = x.clone()" in \
        render_failure(case, outcome)


def test_a_registered_kind_is_compared_and_diffed(ndim: Ndim) -> None:
    cases = {"a.b": case_info("a.b")}
    old = document(cases, [record("a.b", fw, observed={"ndim.y": 1}) for fw in ("torch", "numpy")])
    new = document(cases, [record("a.b", fw, observed={"ndim.y": n}) for fw, n in (("torch", 2), ("numpy", 1))])
    assert [row.agrees for row in analysis.build(typed(old)).rows] == [True]
    assert [row.agrees for row in analysis.build(typed(new)).rows] == [False]
    change, = compare(typed(old), typed(new)).changes
    assert change.details == ["ndim.y: 1 → 2"]
    assert "    ndim.y: 1 → 2\n" in render_text(compare(typed(old), typed(new)))


def test_a_registered_kind_is_observed_and_written_by_observe(ndim: Ndim) -> None:
    case = load_case("{values: {y: [2.0, 3.0]}}")
    assert probe_expect(case).checks["ndim"] == {("x",): None, ("y",): None}
    obs = observe(case, FakeAdapter())
    assert obs.observed[ResultKey("ndim", ("x",))] == 1
    assert "      ndim: {x: 1, y: 1}\n" in render(case, [obs])
    # lint: an input used only by the kind is used
    case = load_case("{ndim: {x: 1}}", "['y = x.clone()']")
    assert list(lint.check_unused_inputs(case)) == []


def test_a_registered_kind_joins_the_schema(ndim: Ndim) -> None:
    properties, _ = kinds.schema(["numpy"])
    assert properties["ndim"] == {"description": "Tensor -> its number of dimensions.", "type": "object",
                                  "additionalProperties": {"type": "integer", "minimum": 0}}
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    assert schema_tool.stale(text) == ["expectation", "overrideExpectation"]
    updated = regen._case_schema(ROOT)  # what conformance regen writes, the file's only writer
    assert schema_tool.stale(updated) == []
    assert list(json.loads(updated)["$defs"]["expectation"]["properties"])[-1] == "ndim"
    # in an override, an entry may also be null (it drops the shared entry)
    assert json.loads(updated)["$defs"]["overrideExpectation"]["properties"]["ndim"]["additionalProperties"] == {
        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}
    # nothing else changes: without the kind's two entries, it is the file as committed
    without = json.loads(updated)
    for name in ("expectation", "overrideExpectation"):
        del without["$defs"][name]["properties"]["ndim"]
    assert without == json.loads(text)


def test_registering_refuses_a_taken_or_unusable_name() -> None:
    with pytest.raises(ValueError, match="'values'"):
        kinds.register(Ndim.__new__(type("Values2", (Ndim,), {"name": "values"})))
    with pytest.raises(ValueError, match="'a.b'"):
        kinds.register(type("Dotted", (Ndim,), {"name": "a.b"})())
