"""The loader: valid cases load into the model; every mistake gets a precise message with
file:line:column, what is wrong and the fix, all the mistakes of a case at once, none
repeated where what it would have defined is used."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conformance import registry
from conformance.adapters.base import numpy_input
from conformance.ir import NameTarget, Op
from conformance.load.reader import Vocabulary, load_text
from conformance.model import Case, Generated, ResultKey
from conformance.source import split

VOCAB = Vocabulary(
    frameworks=tuple(registry.BUILTIN),
    operations={"method:add_", "method:view", "method:clone", "fn:relu", "attr:T", "method:backward",
                "method:sum", "block:no_grad", "setattr:requires_grad"},
    claims={"S3-03", "S2-01"},
)


def load(text: str):
    return load_text(textwrap.dedent(text), "cases/t.yaml", VOCAB)


def only_error(text: str) -> str:
    result = load(text)
    assert len(result.errors) == 1, result.errors
    return result.errors[0][1].render()


GOOD = """\
cases:
  - id: views.view.contiguous
    title: view shares
    tags: [views, view]
    claims: {S3-03: holds}
    given:
      x: {data: [[1.0, 2.0], [3.0, 4.0]]}
      i: [0, 1]
    steps:
      - y = x.view(4)
      - no_grad:
          - y.add_(1)
      - z = y.T
    expect:
      shares_memory: {y & x: true}
      values: {x: [[2.0, 3.0], [4.0, 5.0]]}
      version_change: {x: 1}
      error: {at: "z = y.T", kind: other, torch: {type: RuntimeError, match: "x+"}}
    frameworks:
      paddle:
        reason: because
        expect: {shares_memory: {y & x: false}, error: null}
        claims: {S3-03: does_not_hold}
      numpy:
        not_applicable: no such thing
"""


def test_valid_case_loads_into_the_model() -> None:
    result = load(GOOD)
    assert result.errors == []
    (case,) = result.cases
    assert isinstance(case, Case)
    assert case.id == "views.view.contiguous" and case.family == "views"
    assert case.location.line == 2
    assert [g.name for g in case.given] == ["x", "i"]
    assert case.given[0].dtype == "float32" and case.given[1].dtype == "int64"
    flat = case.flat_steps()
    assert [s.number for s in flat] == [1, 2, 3]
    assert flat[0].targets == (NameTarget("y"),)
    assert isinstance(flat[0].value, Op) and flat[0].value.key == "method:view"
    assert case.operations() == {"method:view", "method:add_", "attr:T", "block:no_grad"}
    error = case.expect.checks["error"]
    assert error.at == 3
    assert error.details["torch"].type == "RuntimeError"
    assert case.expect.locations[ResultKey("shares_memory", ("y", "x"))].line == 15


def test_per_framework_override_merges_entry_by_entry() -> None:
    (case,) = load(GOOD).cases
    paddle = case.expect_for("paddle")
    assert paddle.checks["shares_memory"][("y", "x")] is False
    assert paddle.checks["values"][("x",)] == [[2.0, 3.0], [4.0, 5.0]]
    assert "error" not in paddle.checks  # 'error: null' removes the expected error
    assert case.expect_for("torch").checks["shares_memory"][("y", "x")] is True
    assert case.overrides["numpy"].not_applicable == "no such thing"


def test_fill_and_arange_inputs_expand() -> None:
    (case,) = load("""\
        cases:
          - id: a.b
            title: t
            given:
              z: {shape: [2, 2], fill: 1.5}
              r: {shape: [2, 3], arange: true, dtype: float64}
              c: {real: [1.0], imag: [2.0], dtype: complex64}
            steps: ["y = z.clone()"]
            expect: {values: {y: [[1.5, 1.5], [1.5, 1.5]]}}
        """).cases
    z, r, c = case.given
    # fill and arange stay rules until an adapter makes the input
    assert z.values == Generated("fill", 1.5) and z.shape == (2, 2) and z.dtype == "float32"
    assert r.values == Generated("arange") and r.shape == (2, 3) and r.dtype == "float64"
    assert c.imag == [2.0]
    assert numpy_input(z).tolist() == [[1.5, 1.5], [1.5, 1.5]] and numpy_input(z).dtype == "float32"
    assert numpy_input(r).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and numpy_input(r).dtype == "float64"


def test_a_zero_d_complex_input_is_a_writable_array() -> None:
    # real + 1j * imag of 0-d arrays is a NumPy scalar (np.complex64): read-only, no array, so
    # NumPy's items saw no memory to share (views.view_as_real.zero_d)
    (case,) = load("""\
        cases:
          - id: a.b
            title: t
            given:
              c: {real: 2.0, imag: 3.0, dtype: complex64}
            steps: ["y = c.clone()"]
            expect: {values: {y: {real: 2.0, imag: 3.0}}}
        """).cases
    (c,) = case.given
    array = numpy_input(c)
    assert type(array).__name__ == "ndarray" and array.shape == () and array.dtype == "complex64"
    assert array.flags.writeable and array.item() == 2 + 3j


def test_an_arange_that_does_not_fit_its_dtype_is_refused() -> None:
    result = load("""\
        cases:
          - id: a.b
            title: t
            given:
              x: {shape: [300], arange: true, dtype: uint8}
            steps: ["y = x.clone()"]
            expect: {values: {y: [1]}}
        """)
    (_, error), = result.errors
    assert error.location.line == 5
    assert error.message == "input 'x': arange up to 299 does not fit uint8 (at most 255)"
    assert error.hint == "use fewer elements or a wider dtype"


# --------------------------------------------------------------------------- messages


def case_with(steps: str = '["y = x.clone()"]', expect: str = "{values: {y: [1.0]}}", extra: str = "",
              given: str = "{x: [1.0]}") -> str:
    return f"""\
cases:
  - id: a.b
    title: t
    given: {given}
    steps: {steps}
    expect: {expect}
{extra}"""


def test_yaml_syntax_error_has_line_and_fix() -> None:
    msg = only_error("cases:\n  - id: a.b\n    title: [unclosed\n")
    # (libyaml stops at the end of the file, 4:1: the mistake is the bracket)
    assert msg.startswith("cases/t.yaml:3:12: YAML syntax error: the '[' opened here is never closed")
    assert "fix:" in msg


def test_unknown_key_suggests_the_nearest() -> None:
    msg = only_error(case_with(extra="    expcet: {}\n"))
    assert msg.startswith("cases/t.yaml:7:5: unknown key 'expcet' in a case")
    assert "did you mean 'expect'?" in msg


def test_unknown_expectation_key_suggests_the_nearest() -> None:
    msg = only_error(case_with(expect="{shares_memroy: {y & x: true}}"))
    assert "unknown key 'shares_memroy'" in msg and "did you mean 'shares_memory'?" in msg


def test_unknown_operation_names_the_nearest_known() -> None:
    msg = only_error(case_with(steps='["y = x.clne()"]'))
    assert msg.startswith("cases/t.yaml:5:13: in step")
    assert "unknown operation method '.clne()': no adapter defines it" in msg
    assert "did you mean 'clone'?" in msg


def test_undefined_tensor_name_suggests_a_defined_one() -> None:
    msg = only_error(case_with(steps='["y = xx.clone()"]'))
    assert "'xx' is not defined" in msg and "did you mean 'x'?" in msg


def test_a_module_path_in_a_step_says_steps_name_no_module_and_what_to_call() -> None:
    msg = only_error(case_with(steps='["y = np.lib.stride_tricks.as_strided(x, (2,), (1,))"]'))
    assert "'np' is not defined" in msg
    assert ("'np' reads like a framework's module, and steps name no module (a module path is not allowed): call "
            "the operation by its name, as_strided(...) or x.as_strided(...)") in msg


def test_misspelled_name_in_expect() -> None:
    msg = only_error(case_with(expect="{values: {yy: [1.0]}}"))
    assert "'yy' is not a tensor of this case" in msg and "did you mean 'y'?" in msg


def test_duplicate_id_in_one_file() -> None:
    one = case_with().split("\n", 1)[1]
    result = load("cases:\n" + one + one)
    assert len(result.cases) == 1
    (case_id, error), = result.errors
    assert case_id == "a.b" and "duplicate case id 'a.b' (first at line 2)" in error.render()


def test_wrong_type_says_what_was_found() -> None:
    msg = only_error(case_with(given="{x: {data: [1.0], requires_grad: yes please}}"))
    assert "'requires_grad' must be true or false, got a string ('yes please')" in msg


def test_unknown_claim() -> None:
    msg = only_error(case_with(extra="    claims: {S3-04: holds}\n"))
    assert "unknown claim 'S3-04'" in msg


def test_claims_as_a_list_asks_for_stances() -> None:
    msg = only_error(case_with(extra="    claims: [S3-03]\n"))
    assert "'claims' must map each claim ID to a stance, not list the IDs" in msg
    assert "fix: write claims: {S3-02: holds} (stances: holds, does_not_hold, related)" in msg


def test_unknown_claim_stance() -> None:
    msg = only_error(case_with(extra="    claims: {S3-03: hold}\n"))
    assert "claim S3-03: unknown stance 'hold'" in msg and "did you mean 'holds'?" in msg


def test_override_that_changes_expectations_must_restate_claims() -> None:
    msg = only_error(case_with(extra="    claims: {S3-03: holds}\n    frameworks:\n      torch:\n"
                                     "        reason: r\n        expect: {values: {y: [2.0]}}\n"))
    assert "the override for 'torch' changes what is expected, so it must say whether S3-03 hold(s) on torch" in msg
    assert "fix: add claims: {S3-03: holds} or {S3-03: does_not_hold} to the override" in msg


def test_override_claims_are_the_case_claims() -> None:
    msg = only_error(case_with(extra="    claims: {S3-03: related}\n    frameworks:\n      torch:\n"
                                     "        reason: r\n        expect: {values: {y: [2.0]}}\n"
                                     "        claims: {S2-01: holds}\n"))
    assert "unknown claim 'S2-01'" in msg and "an override can only restate the case's own claims: S3-03" in msg


def test_not_applicable_override_takes_no_claims() -> None:
    msg = only_error(case_with(extra="    claims: {S3-03: holds}\n    frameworks:\n      torch:\n"
                                     "        not_applicable: no such op\n        claims: {S3-03: holds}\n"))
    assert "a not_applicable override cannot take a stance on claims" in msg


def test_override_needs_a_reason() -> None:
    msg = only_error(case_with(extra="    frameworks:\n      torch:\n        expect: {values: {y: [2.0]}}\n"))
    assert "the override for 'torch' has no 'reason'" in msg


def test_override_of_unknown_framework() -> None:
    msg = only_error(case_with(extra="    frameworks:\n      pytorch: {reason: r, expect: {}}\n"))
    assert "unknown framework 'pytorch'" in msg and "did you mean 'torch'?" in msg
    # the known frameworks are the registry's, all of them
    assert "the frameworks are numpy, torch, paddle, jax, tensorflow, mindspore, array_api_strict" in msg
    far = only_error(case_with(extra="    frameworks:\n      mxnet: {reason: r, expect: {}}\n"))
    assert "did you mean" not in far and "the frameworks are numpy, torch, paddle, jax" in far


def test_error_at_unknown_step() -> None:
    msg = only_error(case_with(expect="{error: {at: 5, kind: other}}"))
    assert "there is no step 5 (the case has 1)" in msg


def test_unknown_error_kind() -> None:
    msg = only_error(case_with(expect="{error: {at: 1, kind: inplace_on_leaves}}"))
    assert "unknown error kind 'inplace_on_leaves'" in msg and "did you mean 'inplace_on_leaf'?" in msg


def test_ragged_data() -> None:
    msg = only_error(case_with(given="{x: [[1.0, 2.0], [3.0]]}"))
    assert "ragged data" in msg


def test_oversized_fill_is_refused_before_allocating() -> None:
    msg = only_error(case_with(given="{x: {shape: [100000, 100000], fill: 0}}"))
    assert "has 10000000000 elements; at most 100000 are allowed" in msg


def test_a_bad_case_does_not_hide_the_good_ones() -> None:
    bad = case_with(steps='["y = x.nope()"]').split("\n", 1)[1].replace("a.b", "a.bad")
    good = case_with().split("\n", 1)[1]
    result = load("cases:\n" + bad + good)
    assert [c.id for c in result.cases] == ["a.b"]
    assert [cid for cid, _ in result.errors] == ["a.bad"]


@pytest.mark.parametrize("text, message", [
    ("cases: !!python/object/apply:os.system ['touch /tmp/x']\n",
     "YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed"),
    ("cases:\n  - &a {id: a.b}\n  - *a\n", "anchors and aliases"),
    ("cases:\n  - id: a.b\n    id: a.c\n", "duplicate key 'id' (first at line 2)"),
    ("- id: a.b\n", "a case file must be a mapping with a 'cases' list"),
    ("", "the file is empty"),
    ("cases: []\n", "'cases' must be a non-empty list"),
    ("cases:\n  - id: a.b\n    title: when\n    date: 2024-01-01\n", "YAML tag 'tag:yaml.org,2002:timestamp' is not allowed"),  # noqa: E501
])
def test_unsafe_or_malformed_yaml_is_refused(text: str, message: str) -> None:
    assert message in only_error(text)


@pytest.mark.parametrize("pattern, message", [
    ("a{4294967296}", "'match' is not a valid regular expression: the repetition number is too large"),
    ("(unclosed", "'match' is not a valid regular expression: missing ), unterminated subpattern"),
    ("(" * 51 + "a" + ")" * 51, "'match' nests groups 51 deep (at most 50)"),
])
def test_a_bad_match_pattern_is_refused(pattern: str, message: str) -> None:
    error = only_error(case_with(extra=f"    frameworks: {{torch: {{reason: r, expect: "
                                       f"{{warning: {{at: 1, match: '{pattern}'}}}}}}}}\n"))
    assert message in error


def test_a_match_pattern_at_the_nesting_limit_loads() -> None:
    result = load(case_with(extra="    frameworks: {torch: {reason: r, expect: "
                                  "{warning: {at: 1, match: '" + "(" * 50 + "a" + ")" * 50 + "'}}}}\n"))
    assert result.errors == [] and len(result.cases) == 1


@pytest.mark.parametrize("text, message", [
    # a problem of the values before a syntax error further down: the values' problem
    ("cases:\n  - id: a.b\n    id: a.c\n  - id: [unclosed\n", "cases/t.yaml:3:5: duplicate key 'id'"),
    ("cases:\n  - !!binary aGk=\n  - id: [unclosed\n", "cases/t.yaml:2:5: YAML tag"),
    ("cases:\n  - &a {id: a.b}\n  - *a\n  - id: [unclosed\n", "cases/t.yaml:3:5: YAML anchors and aliases"),
    # a syntax error before a problem of the values: the syntax error
    ("cases:\n  - id: [unclosed\n  - id: a.b\n    id: a.c\n", "cases/t.yaml:2:9: YAML syntax error"),
    ("cases:\n  - id: a.b\n---\ncases: [\n", "cases/t.yaml:4:1: more than one YAML document"),
])
def test_the_first_problem_in_the_file_is_the_one_reported(text: str, message: str) -> None:
    assert only_error(text).startswith(message)


@pytest.mark.parametrize("step, message", [
    ("y = x.__class__", "names starting with '_' are not allowed ('__class__')"),
    ("y = __import__('os')", "names starting with '_' are not allowed"),
    ("import os", "'Import' statements are not allowed"),
    ("y = (lambda: 1)()", "lambda is not allowed"),
    ("y = x; z = x", "exactly one statement"),
    ("y = [i for i in x]", "a comprehension is not allowed"),
    ("y = f'{x}'", "an f-string is not allowed"),
    ("y = x.clone(**k)", "'**' unpacking is not allowed"),
    ("y = x if x else x", "a conditional expression is not allowed"),
    ("y = x.clone(", "not a valid step"),
])
def test_steps_outside_the_allowlist_are_refused(step: str, message: str) -> None:
    result = load_text(case_with(steps=f'["{step}"]' if '"' not in step else f"['{step}']",
                                 expect="{values: {x: [1.0]}}"),
                       "cases/t.yaml", Vocabulary(operations=None))
    assert len(result.errors) == 1
    assert message in result.errors[0][1].render()


def test_calling_a_bound_value_is_a_call_operation() -> None:
    (case,) = load_text(case_with(steps='["r = relu(x)", "f = x", "y = f(x)"]', expect="{values: {r: [1.0]}}"),
                        "c.yaml", Vocabulary(operations=None)).cases
    keys = [s.value.key for s in case.flat_steps()[::2]]
    assert keys == ["fn:relu", "call"]


def test_claim_stances_per_framework() -> None:
    case = load(GOOD).cases[0]
    assert case.claims == {"S3-03": "holds"}
    assert case.claims_for("torch") == {"S3-03": "holds"}
    assert case.claims_for("paddle") == {"S3-03": "does_not_hold"}


def test_productions_pair_each_result_with_its_input() -> None:
    from conformance.ir import productions

    steps = '"y = x.view(4)", "a = x[0]", "b = x[[0]]", "c = y.clone()", "c = c.clone()", "d = x.T"'
    case = load(case_with(steps=f"[{steps}]")).cases[0]
    # c is rebound at step 5, so step 4 is dropped; step 5 relates c to itself
    assert productions(case.steps) == [(1, "method:view", "y", "x"), (2, "index:basic", "a", "x"),
                                       (3, "index:advanced", "b", "x"), (6, "attr:T", "d", "x")]
    # an attribute assigned later (a.data = ... swaps the buffer) voids what x produced
    case = load(case_with(steps=f'[{steps}, "x.requires_grad = True"]')).cases[0]
    assert productions(case.steps) == []


def test_productions_of_a_negative_index_and_of_several_results() -> None:
    """Two defects of the operation classification (issue 18): ``x[-1]`` is basic indexing
    (-1 is ``neg`` of a constant), and a step with several results (``a, b = x.split(2)``)
    produces each of them."""
    from conformance.ir import productions

    steps = '"y = x[-1]", "z = x[1:, -2]", "w = x[[-1]]", "a, b = x.split(2)", "p, q = x.chunk(2)", "q = x.T"'
    (case,) = load_text(case_with(steps=f"[{steps}]"), "c.yaml", Vocabulary(operations=None)).cases
    assert productions(case.steps) == [(1, "index:basic", "y", "x"), (2, "index:basic", "z", "x"),
                                       (3, "index:advanced", "w", "x"), (4, "method:split", "a", "x"),
                                       (4, "method:split", "b", "x"), (5, "method:chunk", "p", "x"),
                                       (6, "attr:T", "q", "x")]  # q is rebound: step 5 keeps p only


def test_operator_keys_name_each_operator_and_the_kind_of_each_index() -> None:
    """What conformance coverage matches basic indexing by: x[-1] and slices are basic, a
    list index advanced (-1 is neg of a constant); item assignment and augmented assignment
    are operators too."""
    from conformance.ir import operator_keys

    steps = '"y = x[-1] + 1", "z = x[[0]]", "x[0] = 2.0", "x *= 2", {no_grad: ["w = -x[1:]"]}'
    (case,) = load_text(case_with(steps=f"[{steps}]"), "c.yaml", Vocabulary(operations=None)).cases
    assert [operator_keys(step) for step in case.steps] == [
        {"op:getitem", "op:neg", "index:basic", "op:add"}, {"op:getitem", "index:advanced"}, {"op:setitem"},
        {"op:imul"}, {"op:neg", "op:getitem", "index:basic"}]


# ---- one-line text: no line break, no control character (docs/security.md, output escaping)

ONE_LINE_FIELDS = {
    # field -> (the YAML that sets it to VALUE, the line:col the error points at)
    "title": ("    title: VALUE\n", "6:5"),
    "tags": ("    tags: [ok, VALUE]\n", "7:16"),
    "references": ("    references:\n      - https://example.org\n      - VALUE\n", "9:9"),
    "reason": ("    frameworks: {torch: {reason: VALUE, expect: {values: {y: [2.0]}}}}\n", "7:26"),
    "not_applicable": ("    frameworks: {torch: {not_applicable: VALUE}}\n", "7:26"),
}


def with_field(field: str, value: str) -> str:
    text = case_with().replace("    title: t\n", "" if field == "title" else "    title: t\n")
    return text + ONE_LINE_FIELDS[field][0].replace("VALUE", value)


@pytest.mark.parametrize("field", ONE_LINE_FIELDS)
@pytest.mark.parametrize("value, code", [(r'"a\nb"', 0x0A), (r'"a\rb"', 0x0D), (r'"a\x85b"', 0x85),
                                         (r'"a\u2028b"', 0x2028), (r'"a\vb"', 0x0B)])
def test_a_line_break_in_one_line_text_is_refused(field: str, value: str, code: int) -> None:
    msg = only_error(with_field(field, value))
    where = ONE_LINE_FIELDS[field][1]
    assert msg == (f"cases/t.yaml:{where}: '{field}' must be one line, but holds a line break (U+{code:04X}) after 'a'\n"  # noqa: E501
                   "  fix: write it on one line; a long text can be a folded string (key: >- with the text indented "
                   "on the lines below), whose lines are joined with spaces")


@pytest.mark.parametrize("field", ONE_LINE_FIELDS)
@pytest.mark.parametrize("value, code", [(r'"a\e[31m"', 0x1B), (r'"a\0"', 0x00), (r'"a\x7f"', 0x7F),
                                         (r'"a\x9b"', 0x9B), (r'"a\a"', 0x07)])
def test_a_control_character_in_one_line_text_is_refused(field: str, value: str, code: int) -> None:
    msg = only_error(with_field(field, value))
    where = ONE_LINE_FIELDS[field][1]
    assert msg == (f"cases/t.yaml:{where}: '{field}' holds the control character U+{code:04X} after 'a'\n"
                   "  fix: remove it: text that terminals, CI logs and the reports show holds printable characters "
                   "and spaces only")


def test_a_tab_in_one_line_text_is_refused_with_its_own_hint() -> None:
    msg = only_error(with_field("title", r'"a\tb"'))
    assert msg.startswith("cases/t.yaml:6:5: 'title' holds the control character U+0009 after 'a'\n")
    assert msg.endswith("(a tab: write spaces)")


def test_a_folded_string_is_one_line_and_loads() -> None:
    result = load(with_field("reason", "VALUE").replace(
        "    frameworks: {torch: {reason: VALUE, expect: {values: {y: [2.0]}}}}\n",
        "    frameworks:\n      torch:\n        reason: >-\n          a long reason\n          on two lines\n"
        "        expect: {values: {y: [2.0]}}\n"))
    assert result.errors == []
    assert result.cases[0].overrides["torch"].reason == "a long reason on two lines"


def test_a_folded_string_that_keeps_a_line_break_is_refused() -> None:
    # '>' without '-' keeps the last line break; a blank line inside keeps one too
    text = case_with().replace("    title: t\n", "    title: >\n      a title\n\n      with a blank line\n")
    assert "'title' must be one line, but holds a line break (U+000A)" in only_error(text)


@pytest.mark.parametrize("text", ["::error::pwned", "##vso[task.setvariable variable=x]y", "[click](http://evil)",
                                  "__iadd__ <script>x</script>", "a \u202e b"])
def test_printable_text_with_markup_loads_and_is_escaped_where_it_is_shown(text: str) -> None:
    result = load(with_field("title", json.dumps(text)))
    assert result.errors == [] and result.cases[0].title == text


def test_a_claim_id_with_a_line_break_is_an_unknown_claim() -> None:
    msg = only_error(case_with(extra='    claims: {"S3-03\\n": holds}\n'))
    # claim IDs are checked against the claims list (the CLI and the plugin always pass one)
    assert msg == "cases/t.yaml:7:14: unknown claim 'S3-03\\n'\n  fix: did you mean 'S3-03'?"


# ---- every error of a case (issue 16): each part read on its own, no error repeated downstream


def errors_of(text: str, vocabulary: Vocabulary = VOCAB) -> list[tuple[int, int, str, str]]:
    """(line, column, code, message) of every error, in the order the loader gives them."""
    result = load_text(textwrap.dedent(text), "cases/t.yaml", vocabulary)
    assert not result.cases
    return [(e.location.line, e.location.column, e.code, e.message) for _, e in result.errors]


MANY_MISTAKES = """\
cases:
  - id: Views.Bad
    title: [a list]
    tags: [views, 3]
    claims: {S3-03: holds, S9-99: holds, S2-01: maybe}
    device: tpu
    given:
      x: {data: [1.0, 2.0], dtype: flaot32}
      w: {data: [1.0], requires_grad: yes please}
      v: [1.0]
    steps:
      - y = x.veiw(2)
      - z = q + v
      - no_grad:
          - u = y.clone(dtype='float16x')
    expect:
      values: {y: [1.0, a], yy: [2.0], u: [1.0]}
      shape: {z: [-1]}
      error: {at: 9, kind: othr}
    frameworks:
      mxnet: {reason: r}
      paddle: {expect: {values: {y: [1.0]}}, claims: {S3-03: does_not_hold}}
"""


def test_every_mistake_of_a_case_is_reported_in_writing_order() -> None:
    """Failed before: only the first ('invalid id'), one round per mistake."""
    assert errors_of(MANY_MISTAKES) == [
        (2, 5, "CF000", "invalid id 'Views.Bad'"),
        (3, 5, "CF000", "'title' must be a non-empty string, got a list"),
        (4, 5, "CF000", "'tags' must be a list of strings"),
        (5, 28, "CF007", "unknown claim 'S9-99'"),
        (5, 42, "CF000", "claim S2-01: unknown stance 'maybe'"),
        (6, 5, "CF000", "unknown device 'tpu'"),
        (8, 29, "CF000", "input 'x': unknown dtype 'flaot32'"),
        (9, 24, "CF000", "'requires_grad' must be true or false, got a string ('yes please')"),
        (12, 9, "CF004", "in step 'y = x.veiw(2)': unknown operation method '.veiw()': no adapter defines it"),
        (13, 9, "CF002", "in step 'z = q + v': 'q' is not defined"),
        (15, 13, "CF011", "in step \"u = y.clone(dtype='float16x')\": unknown string 'float16x': not a dtype or a "
                          "device"),
        (17, 16, "CF000", "'values': data must be numbers or booleans, got a string ('a')"),
        (17, 29, "CF002", "'yy' is not a tensor of this case"),
        (18, 15, "CF000", "'shape': 'shape' must be a list of non-negative integers"),
        (19, 15, "CF000", "'error.at': there is no step 9 (the case has 3)"),
        (19, 22, "CF000", "unknown error kind 'othr'"),
        (21, 7, "CF005", "unknown framework 'mxnet'"),
        (22, 7, "CF008", "the override for 'paddle' has no 'reason'"),
    ]


def test_lint_and_pytest_items_show_every_mistake(tmp_path: Path, pytester: pytest.Pytester) -> None:
    from conformance.tools.lint import lint_paths

    path = tmp_path / "t.yaml"
    path.write_text(MANY_MISTAKES)
    findings = lint_paths([path], VOCAB)
    assert [(f.location.line, f.location.column, f.code) for f in findings] == [
        (line, column, code) for line, column, code, _ in errors_of(MANY_MISTAKES)]
    # pytest: one [load] item for the case, its failure every error with its fix
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "t.yaml").write_text(MANY_MISTAKES)
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "cases/t.yaml::Views.Bad[load]" in output
    for line, column, _, message in errors_of(MANY_MISTAKES):
        assert f"cases/t.yaml:{line}:{column}: {message}" in output


def test_a_case_with_any_error_does_not_load_and_the_others_do() -> None:
    good = case_with().split("\n", 1)[1]
    bad = good.replace("a.b", "a.bad").replace("title: t", "title: [t]").replace("x.clone()", "x.nope()")
    result = load("cases:\n" + good + bad)
    assert [c.id for c in result.cases] == ["a.b"] and result.refused == 1
    assert [(cid, e.location.line) for cid, e in result.errors] == [("a.bad", 8), ("a.bad", 10)]


@pytest.mark.parametrize("steps, expect, errors", [
    # a step that cannot be parsed still binds the names left of its '=': no "'y' is not defined" after it
    ('["y = x.view(4", "z = y + 1"]', "{values: {y: [1.0], z: [1.0]}}",
     [(5, 13, "CF000", "in step 'y = x.view(4': not a valid step: '(' was never closed")]),
    ('["a, b = x.chunk(2", "z = a + b"]', "{values: {a: [1.0]}}",
     [(5, 13, "CF000", "in step 'a, b = x.chunk(2': not a valid step: '(' was never closed")]),
    # one the allowlist refuses (valid Python) binds its Python targets
    ('["y = lambda: x", "z = y + 1"]', "{values: {z: [1.0]}}",
     [(5, 17, "CF000", "in step 'y = lambda: x': lambda is not allowed in a step")]),
    # one whose targets cannot be told: names are no longer checked after it
    ('["foo bar = x", "z = q + 1"]', "{values: {z: [1.0], w: [1.0]}}",
     [(5, 13, "CF000", "in step 'foo bar = x': not a valid step: invalid syntax")]),
    # an undefined name is reported at its first use only
    ('["z = w + 1", "u = w * 2"]', "{values: {w: [1.0]}}",
     [(5, 13, "CF002", "in step 'z = w + 1': 'w' is not defined")]),
    # a step's first kind of problem only: the name, not the unknown method called on it or its string
    ('["z = q.nope(\'zz\')"]', "{values: {x: [1.0]}}",
     [(5, 13, "CF002", "in step \"z = q.nope('zz')\": 'q' is not defined")]),
    # a step in error keeps its number and text: the steps after it are numbered as written
    ('["y = x.view(4", "z = x.clone()", "z.add_(1)"]', "{error: {at: 3, kind: other}}",
     [(5, 13, "CF000", "in step 'y = x.view(4': not a valid step: '(' was never closed")]),
    ('["y = x.view(4", "z = x.clone()"]', "{error: {at: 'y = x.view(4', kind: other}}",
     [(5, 13, "CF000", "in step 'y = x.view(4': not a valid step: '(' was never closed")]),
    # 'steps' that cannot be read: neither names nor step numbers are checked
    ("y = x.clone()", "{values: {y: [1.0]}, error: {at: 3, kind: other}}",
     [(5, 5, "CF000", "'steps' must be a non-empty list")]),
])
def test_a_mistake_is_not_reported_again_where_what_it_would_define_is_used(
        steps: str, expect: str, errors: list[tuple[int, int, str, str]]) -> None:
    assert errors_of(case_with(steps=steps, expect=expect), Vocabulary(operations=VOCAB.operations)) == errors


def test_an_input_in_error_still_defines_its_name_and_given_in_error_defines_any() -> None:
    assert errors_of(case_with(given="{x: {data: [1.0], dtype: float99}}")) == [
        (4, 30, "CF000", "input 'x': unknown dtype 'float99'")]
    assert errors_of(case_with(given="[x]", steps='["y = x.clone()", "z = w.clone()"]')) == [
        (4, 5, "CF000", "'given' must be a mapping, got a list")]


def test_an_unknown_key_is_the_error_not_the_key_it_stands_for() -> None:
    # a misspelled (or renamed) key is one error: the key it replaces is not also reported missing
    assert errors_of(case_with().replace("title: t", "titel: t")) == [
        (3, 5, "CF000", "unknown key 'titel' in a case")]
    assert errors_of(case_with(extra="    frameworks: {paddle: {why: r, expect: {values: {y: [2.0]}}}}\n")) == [
        (7, 27, "CF000", "unknown key 'why' in 'frameworks.paddle'")]
    assert errors_of(case_with(expect="{error: {at: 1, knd: other}}")) == [
        (6, 29, "CF000", "unknown key 'knd' in 'error'")]


def test_an_override_is_not_held_to_claims_the_case_writes_in_error() -> None:
    extra = "    frameworks: {paddle: {reason: r, expect: {values: {y: [2.0]}}}}\n"
    text = case_with(extra=extra).replace("title: t", "title: t\n    claims: {S3-03: hold}")
    assert errors_of(text) == [(4, 14, "CF000", "claim S3-03: unknown stance 'hold'")]


def test_a_file_with_many_unknown_top_level_keys_reports_each() -> None:
    assert errors_of("cases:\n  - id: a.b\nnotes: x\ncase: y\n") == [
        (3, 1, "CF000", "unknown top-level key 'notes'"), (4, 1, "CF000", "unknown top-level key 'case'")]


# ---- YAML mistakes (issue 16): each said as what it is, where it is written, with its fix

YAML_BASE = """\
cases:
  - id: views.a.b
    title: t
    given:
      x: [1.0, 2.0]
      w: [3.0]
    steps:
      - y = x.view(2)
      - z = w.clone()
    expect:
      values: {y: [1.0, 2.0]}
"""

# (mistake, the lines of YAML_BASE it rewrites, line, column, message, fix); libyaml's own
# mark is elsewhere for many (the next line, the end of the file, the colon of a key indented
# too far), and its message was one generic "check indentation and quoting on this line"
YAML_MISTAKES = [
    ('tab in the indentation', ((5, '\tx: [1.0, 2.0]'),),
     5, 1, 'YAML syntax error: a tab in the indentation: YAML indents with spaces only',
     'replace the tab with spaces (editors: indent with spaces in YAML files)'),
    ("tab after '-'", ((8, '      -\ty = x.view(2)'),),
     8, 8, "YAML syntax error: a tab after '-': YAML separates with spaces, and allows tabs only inside quoted text",
     'replace the tab with a space'),
    ('key indented less than its sibling', ((3, '   title: t'),),
     3, 4, "YAML syntax error: 'title' is indented 3 spaces, but 'id' above it (line 2) is indented 4: the keys of "
             'one mapping line up',
     "indent it by 4 spaces, like 'id' on line 2"),
    ('key indented more than its sibling', ((3, '     title: t'),),
     3, 6, "YAML syntax error: 'title' is indented 5 spaces, but 'id' above it (line 2) is indented 4: the keys of "
             'one mapping line up',
     "indent it by 4 spaces, like 'id' on line 2"),
    ('nested key indented more', ((6, '        w: [3.0]'),),
     6, 9, "YAML syntax error: 'w' is indented 8 spaces, but 'x' above it (line 5) is indented 6: the keys of one "
             'mapping line up',
     "indent it by 6 spaces, like 'x' on line 5"),
    ('list item indented less than the one above', ((9, '     - z = w.clone()'),),
     9, 6, "YAML syntax error: the list item '- z = w.clone()' is indented 5 spaces, but the list item above it "
             '(line 8) is indented 6: the items of one list line up',
     'indent it by 6 spaces, like the list item on line 8'),
    ('list item indented less than the one above, by more', ((9, '   - z = w.clone()'),),
     9, 4, "YAML syntax error: the list item '- z = w.clone()' is indented 3 spaces, but the list item above it "
             '(line 8) is indented 6: the items of one list line up',
     'indent it by 6 spaces, like the list item on line 8'),
    ('first list item indented more than the next', ((8, '        - y = x.view(2)'),),
     9, 7, "YAML syntax error: the list item '- z = w.clone()' is indented 6 spaces, but the list item above it "
             '(line 8) is indented 8: the items of one list line up',
     'indent it by 8 spaces, like the list item on line 8'),
    ('list item among keys', ((6, '      - w: [3.0]'),),
     6, 7, "YAML syntax error: a list item ('- ') among the keys of a mapping ('x', line 5)",
     "remove the '- ' (the entry is a key of that mapping), or write every entry as a list item"),
    ('line among list items without its dash', ((9, '      z = w.clone()'),),
     9, 7, "YAML syntax error: 'z = w.clone()' lines up with the list item on line 8 but has no '- '",
     "start it with '- ' (an item of that list), or indent it as what it belongs to"),
    ("no space after ':'", ((3, '    title:t'),),
     3, 10, "YAML syntax error: no space after ':' in 'title:t': YAML reads it as one text, not a key and its value",
     "write 'title: t'"),
    ("no space after ':' before a flow value", ((5, '      x:[1.0, 2.0]'),),
     5, 8, "YAML syntax error: no space after ':' in 'x:[1.0, 2.0]': YAML reads it as one text, not a key and its "
             'value',
     "write 'x: [1.0, 2.0]'"),
    ("no space after ':' in a flow mapping", ((11, '      values: {y:[1.0, 2.0]}'),),
     11, 17, "YAML syntax error: no space after ':' in 'y:[1.0, 2.0]': YAML reads it as one text, not a key and "
               'its value',
     "write 'y: [1.0, 2.0]'"),
    ("no space after '-'", ((9, '      -z = w.clone()'),),
     9, 7, "YAML syntax error: no space after '-' in '-z = w.clone()': YAML reads it as text, not a list item",
     "write '- z = w.clone()'"),
    ('unclosed double quote', ((3, '    title: "t'),),
     3, 12, 'YAML syntax error: the string opened here with " is never closed',
     'close it with " where the text ends, on this line'),
    ('unclosed single quote closed further down', ((3, "    title: 't"), (8, "      - 'y = x.view(2)'")),
     3, 12, "YAML syntax error: the string opened here with ' is not closed on its line, so YAML read on into the "
              'lines below',
     "close it with ' at the end of the text"),
    ('unknown escape', ((3, '    title: "a\\q"'),),
     3, 14, "YAML syntax error: '\\q' is not an escape in a double-quoted string",
     "write the backslash twice ('\\\\q'), or use single quotes, where a backslash is itself (a regular expression: "
     "match: 'a\\d+')"),
    ('unclosed bracket', ((5, '      x: [1.0, 2.0'),),
     5, 10, "YAML syntax error: the '[' opened here is never closed",
     "close it with ']' (a list or mapping in brackets is best kept on one line)"),
    ('unclosed brace at the end', ((11, '      values: {y: [1.0, 2.0]'),),
     11, 15, "YAML syntax error: the '{' opened here is never closed",
     "close it with '}' (a list or mapping in brackets is best kept on one line)"),
    ('closed by the other bracket', ((11, '      values: {y: [1.0, 2.0}'),),
     11, 28, "YAML syntax error: '}' where the '[' opened at column 19 is still open",
     "close the '[' with ']' first"),
    ('a bracket that closes nothing', ((5, '      x: [1.0, 2.0]]'),),
     5, 20, "YAML syntax error: ']' closes nothing: no '[' is open here",
     "remove it, or open the list or mapping it closes with '['"),
    ('key: value: more', ((3, '    title: t: x'),),
     3, 13, "YAML syntax error: a second ': ' on the line of 'title': YAML cannot read 't: x' as one value",
     'put the value in quotes (title: "t: x"), or write a mapping it holds on the lines below, indented, or in '
     'braces ({data: [1.0]})'),
    ('key: key: value', ((5, '      x: data: [1.0]'),),
     5, 14, "YAML syntax error: a second ': ' on the line of 'x': YAML cannot read 'data: [1.0]' as one value",
     'put the value in quotes (x: "data: [1.0]"), or write a mapping it holds on the lines below, indented, or in '
     'braces ({data: [1.0]})'),
    ("second ':' in a flow entry", ((11, '      values: {y: a: [1.0]}'),),
     11, 20, "YAML syntax error: a second ':' in one entry of {...}",
     "put the value that holds ': ' in quotes"),
    ('text after the closing quote', ((3, '    title: "t" more'),),
     3, 16, 'YAML syntax error: text after the closing " of a quoted value',
     'put the whole value inside the quotes'),
    ('reserved character', ((3, '    title: @t'),),
     3, 12, "YAML syntax error: a value cannot start with '@' in YAML (it is reserved)",
     'put the value in quotes: "@t"'),
    ("no ':' after a key", ((3, '    title t'),),
     3, 10, "YAML syntax error: no ':' after 'title': a line of a mapping is 'key: value'",
     "write 'title: t'"),
    ("no space after '-' of the only step", ((8, '      -y = x.view(2)'), (9, '')),
     8, 7, "'steps' is the text '-y = x.view(2)', not a list: a list item needs a space after '-'",
     "write '- y = x.view(2)'"),
    ("a step's '- ' indented deeper than the one above", ((9, '        - z = w.clone()'),),
     9, 9, "this '- ' is indented 8 spaces, more than the step's on line 8 (6): YAML reads it as the rest of that "
             "step's text, not a step",
     'indent it by 6 spaces, like the step on line 8'),
    ("a step without its '- ', indented deeper", ((9, '        z = w.clone()'),),
     9, 9, "this line has no '- ': YAML reads it as the rest of the step on line 8",
     "start it with '- ', indented 6 spaces like the step on line 8"),
    ("a step written 'y: ...'", ((8, '      - y: x.view(2)'),),
     8, 9, "the step 'y: x.view(2)' is a mapping to YAML (': ' makes a key and a value), not a step's text",
     "write an assignment, 'y = x.view(2)', or put the step in quotes"),
    ("no space after ':' of the only key of a mapping", ((4, '    given:'), (5, '      x:[1.0, 2.0]'), (6, '')),
     5, 7, "'given' must be a mapping, got the text 'x:[1.0, 2.0]': a key needs a space after ':'",
     "write 'x: [1.0, 2.0]'"),
    ('an input indented as a key of the case', ((6, '    w: [3.0]'),),
     6, 5, "unknown key 'w' in a case",
     "an input? indent it under 'given', like the others (allowed keys: id, title, tags, claims, references, device, "
     'given, steps, functional_steps, calls, expect, frameworks, documentation)'),
]


@pytest.mark.parametrize("mistake, edits, line, column, message, hint", YAML_MISTAKES,
                         ids=[row[0] for row in YAML_MISTAKES])
def test_a_yaml_mistake_is_said_where_it_is_written(mistake: str, edits: tuple[tuple[int, str], ...], line: int,
                                                    column: int, message: str, hint: str) -> None:
    lines = YAML_BASE.splitlines()
    for number, text in edits:
        lines[number - 1] = text
    result = load_text("\n".join(lines) + "\n", "cases/t.yaml", Vocabulary(operations=None))
    assert [(e.location.file, e.location.line, e.location.column, e.message, e.hint) for _, e in result.errors] == [
        ("cases/t.yaml", line, column, message, hint)]


def test_the_yaml_base_of_the_mistakes_is_valid() -> None:
    assert load_text(YAML_BASE, "cases/t.yaml", Vocabulary(operations=None)).errors == []


DOC_CASE = """\
cases:
  - id: views.reshape.documented
    title: t
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x.view(2)
    expect:
      shares_memory: {y & x: true}
    frameworks:
      numpy: {not_applicable: no view of that meaning}
    documentation:
"""


def test_documentation_reads_each_framework_finding() -> None:
    result = load(DOC_CASE + """\
      paddle:
        says: "the output shares data with x"
        source: https://example.org/reshape
        contradicts: shares_memory
      torch:
        says: "raises for a non-contiguous input"
        source: https://example.org/view
        contradicts: error
""")
    assert not result.errors  # error: whether a step raises is always measured
    assert result.cases[0].documentation["torch"].contradicts == "error"
    doc = result.cases[0].documentation["paddle"]
    assert (doc.says, doc.source, doc.contradicts, doc.location.line) == (
        "the output shares data with x", "https://example.org/reshape", "shares_memory", 13)


def test_every_mistake_in_documentation_is_located() -> None:
    result = load(DOC_CASE + """\
      padle: {says: a, source: https://example.org, contradicts: shares_memory}
      paddle:
        says: a
        source: the docs
        contradicts: values
      torch: {says: a}
      numpy: {says: a, source: https://example.org, contradicts: shares_memory}
      jax: {says: a, source: https://example.org, contradicts: shares_memory, why: b}
""")
    messages = [e.render() for _, error in result.errors for e in split(error)]
    assert messages == [
        "cases/t.yaml:13:7: unknown framework 'padle'\n  fix: did you mean 'paddle'?; the frameworks are "
        + ", ".join(registry.BUILTIN) + " (conformance frameworks)",
        "cases/t.yaml:16:9: 'documentation.paddle''s source must be a link (http:// or https://)\n"
        "  fix: link the documentation page that says it",
        "cases/t.yaml:17:9: 'documentation.paddle': the case does not assert 'values' on paddle\n"
        "  fix: name one the case asserts on paddle: shares_memory",
        "cases/t.yaml:18:7: 'documentation.torch' has no 'source'\n  fix: add source: <the link to that page>",
        "cases/t.yaml:18:7: 'documentation.torch' has no 'contradicts'\n"
        "  fix: name the expectation that measures otherwise: contradicts: shares_memory",
        "cases/t.yaml:19:7: the case is not applicable on numpy: it measures nothing there to contradict the "
        "documentation\n  fix: remove 'documentation.numpy'",
        "cases/t.yaml:20:79: unknown key 'why' in 'documentation.jax'\n"
        "  fix: allowed keys: says, source, contradicts",
    ]


def test_an_override_entry_written_null_drops_the_shared_entry() -> None:
    """Where a framework refuses the step that binds a name, its override drops what the
    shared expectation says of that name (the step's error is what it expects instead)."""
    from conformance.model import DROPPED

    result = load(case_with(steps='["y = x.view(4)"]', expect="{shares_memory: {y & x: true}, values: {x: [1.0]}}",
                            extra="""\
    frameworks:
      paddle:
        reason: refused
        expect:
          shares_memory: {y & x: null}
          values: {x: null}
          error: {at: 1, kind: other}
"""))
    assert not result.errors, result.errors
    (case,) = result.cases
    assert case.overrides["paddle"].expect.expect.checks["shares_memory"] == {("y", "x"): DROPPED}
    merged = case.expect_for("paddle")
    assert "shares_memory" not in merged.checks and "values" not in merged.checks
    assert merged.checks["error"].at == 1
    assert case.expect_for("torch").checks["shares_memory"] == {("y", "x"): True}


def test_a_null_entry_in_the_shared_expectation_is_still_an_error() -> None:
    message = only_error(case_with(steps='["y = x.view(4)"]', expect="{shares_memory: {y & x: null}}"))
    assert "shares_memory" in message


def test_a_case_without_expect_gets_one_error_though_its_documentation_names_a_kind() -> None:
    """One mistake, one error: the missing expect, not also 'the case does not assert ...'
    (found by tests/test_fuzz.py::test_required_key_removed_is_an_error)."""
    text = DOC_CASE.replace("    expect:\n      shares_memory: {y & x: true}\n", "") + """\
      paddle: {says: a, source: https://example.org, contradicts: shares_memory}
"""
    result = load(text)
    assert [e.message for _, error in result.errors for e in split(error)] == ["the case has no 'expect'"]


def test_an_input_made_from_earlier_inputs_is_parsed_as_their_expression() -> None:
    result = load(case_with(given='{b: [1.0, 2.0, 3.0], v: {from: "b[1:]"}}', steps='["y = v.clone()"]'))
    assert result.errors == []
    (case,) = result.cases
    made = case.given[1]
    assert made.name == "v" and made.made_by.text == "v = b[1:]" and made.made_by.number == 0


def test_an_input_made_from_a_later_or_unknown_name_says_inputs_come_from_those_above() -> None:
    msg = only_error(case_with(given='{v: {from: "b.t()"}, b: [1.0, 2.0]}', steps='["y = v.clone()"]'))
    assert "input 'v': from 'b.t()' reads 'b', which no input written before it defines" in msg
    assert "an input is made from the inputs above it under 'given'" in msg


def test_an_input_made_from_an_expression_the_allowlist_refuses_says_so_at_its_from() -> None:
    msg = only_error(case_with(given='{b: [1.0], v: {from: "__import__(\'os\')"}}', steps='["y = v.clone()"]'))
    assert "input 'v': from" in msg and "cases/t.yaml:4:" in msg


def test_an_input_made_from_another_takes_no_other_key() -> None:
    msg = only_error(case_with(given='{b: [1.0], v: {from: "b[0:1]", dtype: float64}}', steps='["y = v.clone()"]'))
    assert "unknown key 'dtype' in input 'v'" in msg


# ---- calls: the program called more than once (docs/case-format.md, "Calling the program again")


def test_calls_numbers_each_calls_steps_on_from_the_last() -> None:
    (case,) = load(case_with(steps='["y = x.clone()", {no_grad: ["x.add_(1)"]}]', extra="    calls: 3\n",
                             expect="{error: {at: 6, kind: other}}")).cases
    assert case.calls == 3 and len(case.steps) == 2
    called = case.called()
    assert called.calls == 1
    assert [(s.number, s.text) for s in called.flat_steps()] == [
        (1, "y = x.clone()"), (2, "x.add_(1)"), (3, "y = x.clone()"), (4, "x.add_(1)"), (5, "y = x.clone()"),
        (6, "x.add_(1)")]
    assert [s.kind for s in called.steps] == ["assign", "block"] * 3
    assert load(case_with()).cases[0].calls == 1  # absent: called once


def test_calls_errors_say_what_is_allowed() -> None:
    for value, said in (("0", "got 0"), ("5", "got 5"), ("'2'", "got a string"), ("true", "got a boolean")):
        msg = only_error(case_with(extra=f"    calls: {value}\n"))
        assert msg.startswith("cases/t.yaml:7:5: 'calls' must be a whole number from 1 to 4, " + said), msg
        assert "fix: e.g. calls: 2" in msg
    # an expectation's step past the last call's last step
    msg = only_error(case_with(extra="    calls: 2\n", expect="{error: {at: 3, kind: other}}"))
    assert "there is no step 3 (the case has 2)" in msg
    # a step's text occurs once per call: the number says which
    msg = only_error(case_with(extra="    calls: 2\n", expect="{error: {at: 'y = x.clone()', kind: other}}"))
    assert "occurs 2 times" in msg and "one of [1, 2]" in msg


def test_calls_with_a_gradient_step_is_refused_with_why() -> None:
    msg = only_error(case_with(steps='["y = x * 2.0", "y.sum().backward()"]', extra="    calls: 2\n",
                               given="{x: {data: [1.0], requires_grad: true}}"))
    assert msg.startswith("cases/t.yaml:7:5: 'calls: 2' with a gradient step ('y.sum().backward()', "
                          "cases/t.yaml:5) is not supported"), msg
    assert "fix: call a program without backward() or autograd_grad more than once" in msg


# ---- align: a NumPy input on a known address boundary


def test_align_gives_a_numpy_input_that_starts_on_that_boundary_and_its_view_an_offset() -> None:
    given = "{b: {shape: [5], arange: true, dtype: float32, type: ndarray, align: 64}, v: {from: 'b[1:]'}}"
    (case,) = load(case_with(given=given, steps='["y = v.clone()"]',
                             expect="{values: {y: [1.0, 2.0, 3.0, 4.0]}}")).cases
    spec = case.given[0]
    assert spec.align == 64 and case.given[1].align is None
    for _ in range(20):  # NumPy's allocator alone promises 16 bytes: 20 draws would not all be 64
        b = numpy_input(spec)
        assert b.ctypes.data % 64 == 0 and b[1:].ctypes.data % 64 == 4
        assert b.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and b.dtype == "float32" and b.flags.writeable
    read_only = numpy_input(load(case_with(given="{b: {data: [1.0], type: ndarray, align: 4096, writeable: false}}",
                                           steps='["y = b.clone()"]')).cases[0].given[0])
    assert read_only.ctypes.data % 4096 == 0 and not read_only.flags.writeable


def test_align_errors_say_what_is_allowed() -> None:
    msg = only_error(case_with(given="{x: {data: [1.0], type: ndarray, align: 48}}"))
    assert msg.startswith("cases/t.yaml:4:45: input 'x': 'align' must be a power of two from 8 to 4096 (bytes), "
                          "got 48"), msg
    msg = only_error(case_with(given="{x: {data: [1.0], align: 64}}"))
    assert "input 'x': 'align' applies to NumPy inputs only" in msg and "fix: add 'type: ndarray'" in msg
