"""The compiled modes' function on the whole corpus (conformance/run/function.py, issue 34):
it graph-breaks where the same statements written as a function do, and compiled by a
"compiler" that changes nothing, it reproduces every eager outcome."""

from __future__ import annotations

import ast
import builtins
import types
import warnings
from typing import Any

import pytest
from corpus_cases import corpus

from conformance import registry
from conformance.ir import Step
from conformance.model import Case
from conformance.outcomes import NOT_APPLICABLE
from conformance.run import engine
from conformance.run.engine import make_inputs, not_applicable
from conformance.run.function import _check, build, syntax_of

pytestmark = pytest.mark.slow(reason="runs every corpus case: Dynamo explains each torch case twice (~30 s), and "
                                     "the identity mode runs the corpus on torch and NumPy (~40 s)")


def written(case: Case, ops: dict[str, Any]) -> Any:
    """The case's steps as a user writes them in a function: each step's own text, parsed
    (the loader accepted it), a block as a ``with``, the functions it calls the table's
    entries under the builder's names (``relu`` is ``_relu``)."""
    names: dict[str, Any] = {}

    def statements(steps: tuple[Step, ...]) -> list[ast.stmt]:
        body: list[ast.stmt] = []
        for step in steps:
            if step.kind == "block":
                names["_" + str(step.block)] = ops["block:" + str(step.block)]
                call = ast.Call(ast.Name("_" + str(step.block), ast.Load()), [], [])
                body.append(ast.With([ast.withitem(call)], statements(step.body)))
                continue
            statement = ast.parse(step.text).body[0]
            for node in ast.walk(statement):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    names["_" + node.func.id] = ops["fn:" + node.func.id]
                    node.func = ast.Name("_" + node.func.id, ast.Load())
            body.append(statement)
        return body

    parameters = ast.arguments(posonlyargs=[], args=[ast.arg(spec.name) for spec in case.given], vararg=None,
                               kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    body = statements(case.steps) + [ast.Return(ast.Tuple([], ast.Load()))]
    tree = ast.fix_missing_locations(ast.Module([ast.FunctionDef("case", parameters, body, [], None)], []))
    _check(tree, set(names))  # the builder's own check: only the step forms, the table's names, no builtin
    code = compile(tree, "<written>", "exec")
    inner = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(inner, {"__builtins__": builtins, **names})


def _written_as_is(case: Case, ops: dict[str, Any]) -> bool:
    """Whether every operation the case names is Python's syntax for its table entry, or a
    function or block of the table: the steps' text is then what a user of the framework writes."""
    return all(key.startswith(("fn:", "block:")) or syntax_of(ops[key], key) for key in case.operations())


def test_the_suites_function_graph_breaks_where_the_same_statements_written_as_a_function_do() -> None:
    torch = pytest.importorskip("torch")
    adapter = registry.get_adapter("torch_compile")
    adapter.setup()

    def explained(function: Any, case: Case) -> tuple[Any, ...]:
        torch._dynamo.reset()
        made = make_inputs(case, adapter)
        args = [made[spec.name] for spec in case.given]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                explanation = torch._dynamo.explain(function)(*args)
            except Exception as exc:
                return ("raises", type(exc).__name__)
        return explanation.graph_count, explanation.graph_break_count

    compared, breaking, other = [], [], []
    for case in corpus():
        if not_applicable(case, adapter) is not None or adapter.device_unavailable(case.device):
            continue
        if not _written_as_is(case, adapter.ops):
            other.append(case.id)  # an adapter's own entry (a bounded method, a dtype name's counterpart)
            continue
        suites = explained(build(case.steps, adapter.ops, [g.name for g in case.given], ()).function, case)
        users = explained(written(case, adapter.ops), case)
        assert suites == users, f"{case.id}: the suite's function {suites}, the written one {users}"
        compared.append(case.id)
        if suites[0] != "raises" and suites[1] > 0:
            breaking.append(case.id)
    # the comparison covers the corpus's torch cases, graph breaks included
    assert len(compared) > 9 * len(other), (len(compared), other)
    assert len(breaking) >= 5, breaking  # 10 on torch 2.13.0: backward(), .numpy(), a boolean mask, ...


class IdentityCompiled:
    """A compiled mode whose compiler returns the function as it is: what the compiled
    runner sees is then what the steps do, run as one function."""

    compile_calls = 0

    @staticmethod
    def compile(fn: Any) -> Any:
        IdentityCompiled.compile_calls += 1
        return fn


def identity_mode(framework: str) -> Any:
    base = type(registry.get_adapter(framework))
    mode = type(f"{base.__name__}Identity", (base,), {
        "name": f"{framework}_identity", "compiles": framework, "compile": lambda self, fn: fn})
    return mode()


@pytest.mark.parametrize("framework", ["torch", "numpy"])
def test_an_identity_compiler_reproduces_every_eager_outcome_of_the_corpus(framework: str) -> None:
    eager = registry.get_adapter(framework)
    if eager.unavailable():
        pytest.skip(f"{framework} is not installed")
    compiled = identity_mode(framework)
    ran = 0
    for case in corpus():
        expected = engine.run(case, eager)
        outcome = engine.run(case, compiled)
        if expected.verdict == NOT_APPLICABLE:
            assert outcome.verdict == NOT_APPLICABLE, case.id
            continue
        ran += 1
        assert (outcome.verdict, outcome.reason) == (expected.verdict, expected.reason), case.id
        # every observation the eager run made, the function's run made the same; what it
        # cannot observe (a version counter of a tensor made inside the function) it says
        unobserved = {key for key in expected.observed if key not in outcome.observed}
        assert all(key.kind == "version_change" for key in unobserved), (case.id, unobserved)
        assert {k: v for k, v in outcome.observed.items() if k.kind != "error"} == \
            {k: v for k, v in expected.observed.items() if k.kind != "error" and k not in unobserved}, case.id
    assert ran > 250  # torch runs 764 of the corpus's cases, NumPy 292
