"""The compiled modes of JAX and TensorFlow (issue 19) against the real frameworks (skipped
where one is not installed): jax_jit (jax.jit), tensorflow_function (tf.function) and
tensorflow_xla (tf.function(jit_compile=True)). What
crosses the compiled boundary (arrays; the rest of the output around them), a variable
mutated inside seen by the caller, the identity jit loses, refusals recorded as in eager,
each item traced anew, and the items named by mode."""

from __future__ import annotations

import textwrap

import pytest
from ready_adapter import ready_adapter

from conformance import registry
from conformance.load.reader import load_text
from conformance.model import Case, ResultKey
from conformance.outcomes import REFUSED
from conformance.run.engine import FAIL, PASS, run
from conformance.run.function import build

pytest_plugins = ["pytester"]


adapter = ready_adapter


def case(steps: list[str], expect: str, given: str = "{x: [1.0, 2.0, 3.0]}", extra: str = "") -> Case:
    steps_yaml = "\n".join(f"      - {s!r}" for s in steps)
    text = textwrap.dedent(f"""\
cases:
  - id: t.compiled
    title: test
    given: {given}
    steps:
{steps_yaml}
    expect: {expect}
{extra}""")
    result = load_text(text, "t.yaml", registry.vocabulary())
    assert not result.errors, result.errors[0][1].render()
    return result.cases[0]


# ---- what crosses the compiled boundary


@pytest.mark.parametrize("mode", ["jax_jit", "tensorflow_function", "tensorflow_xla"])
def test_none_and_python_values_come_back_around_the_arrays(mode: str) -> None:
    a = adapter(mode)
    c = case(["y = x.reshape(3, 1)", "s = y.shape"], "{shape: {y: [3, 1]}}")
    function = build(c.steps, a.ops, ["x"], ["never", "s", "y"])
    assert function.returns == ("s", "y")  # a name no step binds is not returned
    x = a.make_input(c.given[0], "cpu")
    s, y = a.compile(function.function)(x)
    assert tuple(int(d) for d in s) == (3, 1) and not a.is_array(s)
    assert a.is_array(y) and a.to_numpy(y).tolist() == [[1.0], [2.0], [3.0]]


@pytest.mark.parametrize("mode", ["jax_jit", "tensorflow_function", "tensorflow_xla"])
def test_every_item_is_traced_anew(mode: str) -> None:
    """Compile state is reset between items: the same program compiled for two items is
    traced twice (a Python side effect runs only while tracing)."""
    a = adapter(mode)
    traces = []

    def fn(x):  # type: ignore[no-untyped-def]
        traces.append(1)
        return (x * 2,), (True,)

    c = case(["y = x + 1"], "{shape: {y: [3]}}")
    for _ in range(2):
        a.compile(fn)(a.make_input(c.given[0], "cpu"))
    assert len(traces) == 2


def test_jax_jit_clears_jaxs_caches_for_every_item(monkeypatch: pytest.MonkeyPatch) -> None:
    a = adapter("jax_jit")
    import jax

    cleared = []
    monkeypatch.setattr(jax, "clear_caches", lambda: cleared.append(1))
    a.compile(lambda x: ((x,), (True,)))
    a.compile(lambda x: ((x,), (True,)))
    assert len(cleared) == 2


# ---- tf.Variable inputs


def test_a_variable_mutated_inside_tf_function_is_seen_by_the_caller() -> None:
    a = adapter("tensorflow_function")
    import tensorflow as tf

    c = case(["v.assign_add(one)", "w = v.assign(v * 10.0)"], "{shape: {w: [2]}}",
             given="{v: [1.0, 2.0], one: [1.0, 1.0]}")
    compiled = a.compile(build(c.steps, a.ops, ["v", "one"], ["w"]).function)
    v = tf.Variable([1.0, 2.0])
    (w,) = compiled(v, tf.constant([1.0, 1.0]))
    assert v.numpy().tolist() == [20.0, 30.0]  # both writes reached the caller's variable
    # a variable returned from tf.function comes back as a tensor of its value, not the variable
    assert not isinstance(w, tf.Variable) and w.numpy().tolist() == [20.0, 30.0]


# ---- outcomes through the engine


def test_jax_jit_returns_a_new_array_where_eager_jax_returns_the_input() -> None:
    adapter("jax")
    jit = adapter("jax_jit")
    c = case(["y = x.astype('float32')"], "{same_object: {y & x: true}}", extra=textwrap.indent(textwrap.dedent("""\
        frameworks:
          jax_jit:
            reason: measured, jax.jit returns every output as a new Array over a new buffer
            expect: {same_object: {y & x: false}, shares_memory: {y & x: false}}
        """), "    "))
    eager = run(c, registry.get_adapter("jax"))
    assert eager.verdict == PASS, eager.mismatches
    compiled = run(c, jit)
    assert compiled.verdict == PASS and compiled.override_reason, compiled.mismatches  # known_divergence
    assert compiled.observed[ResultKey("same_object", ("y", "x"))] is False


@pytest.mark.parametrize("mode", ["jax_jit", "tensorflow_function", "tensorflow_xla"])
def test_item_assignment_is_refused_in_the_compiled_mode_as_in_eager(mode: str) -> None:
    """A refusal of a mutation (immutable arrays) is recognised inside the compiled function
    too: tf.function's AutoGraph re-raises it with its own message, classified by the original."""
    a = adapter(mode)
    outcome = run(case(["x[0] = 5.0"], "{values: {x: [5.0, 2.0, 3.0]}}"), a)
    assert outcome.verdict == REFUSED, (outcome.verdict, outcome.reason)
    assert outcome.steps[0].error is not None and outcome.steps[0].error.kind == "immutable"
    assert "in user code" not in outcome.steps[0].error.message


def test_xla_outputs_never_share_an_input_buffer_where_the_graph_executor_does() -> None:
    """tf.reshape hands its output the input's buffer eagerly and in tf.function; the function
    XLA compiles writes every output into a buffer of its own."""
    c = case(["y = x.reshape(3, 1)"], "{shape: {y: [3, 1]}}")
    for mode, shared in (("tensorflow_function", True), ("tensorflow_xla", False)):
        a = adapter(mode)
        x = a.make_input(c.given[0], "cpu")
        (y,) = a.compile(build(c.steps, a.ops, ["x"], ["y"]).function)(x)
        assert a.overlaps(y, x) is shared, mode


def test_sparse_tensors_are_absent_under_xla_which_aborts_on_them() -> None:
    reason = registry.get_adapter("tensorflow_xla").lacks("method:to_sparse")
    assert reason is not None and "openxla/xla#44941" in reason
    assert registry.get_adapter("tensorflow_function").lacks("method:to_sparse") is None


def test_a_jit_error_names_no_path_of_the_checkout() -> None:
    a = adapter("jax_jit")
    outcome = run(case(["a = asarray(x)"], "{shape: {a: [3]}}"), a)
    assert outcome.verdict == FAIL  # np.asarray of a tracer: the step raises under jit
    error = outcome.steps[0].error
    assert error is not None and error.type.endswith("TracerArrayConversionError")
    assert "while tracing the function arrays_only for jit" in error.message
    assert ".py:" not in error.message


# ---- items


def test_items_are_named_by_mode(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nconformance_paths = cases\n"
                     "conformance_frameworks = jax_jit, tensorflow_function, tensorflow_xla\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "c.yaml").write_text(textwrap.dedent("""\
        cases:
          - id: views.reshape.compiled
            title: reshape
            given:
              x: {data: [1.0, 2.0]}
            steps:
              - y = x.reshape(2, 1)
            expect:
              shape: {y: [2, 1]}
        """))
    items, _ = pytester.inline_genitems("cases/views/c.yaml")
    assert {item.name for item in items} == {"views.reshape.compiled[jax_jit]",
                                             "views.reshape.compiled[tensorflow_function]",
                                             "views.reshape.compiled[tensorflow_xla]"}
