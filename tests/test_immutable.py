"""A framework whose arrays are immutable, over the whole corpus: every mutation a case makes
goes through the adapter's table and ends in the framework's refusal, which the engine
records as the framework's behaviour (the step's error, kind ``immutable``), with no
per-case override and nothing left to the engine.

The framework is ``frozen`` (tests/probe_adapters/frozen.py): NumPy with every array
read-only, whose adapter declares NumPy's "read-only" ValueError as its refusal, once. It is
registered through the ``conformance.adapters`` entry point for a subprocess only, which runs
every corpus case on ``numpy`` and ``frozen`` side by side. The two share their operation
table and inputs, so an item of ``frozen`` must behave as its ``numpy`` twin up to the first
refused mutation, and exactly as it where nothing is refused.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from entry_points import register, subprocess_env
from fake_adapter import FakeAdapter
from probe_adapters.frozen import FrozenAdapter

from conformance import registry
from conformance.adapters.base import Immutability, MutationRefused, refusal
from conformance.ir import AttrTarget, ItemTarget, Op, Step, _step_exprs, _walk
from conformance.load.reader import Vocabulary, load_file, load_text
from conformance.model import ERROR_KINDS
from conformance.run.engine import FAIL, IMMUTABLE, PASS, REFUSED, run

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
RAN = ("pass", "known_divergence", "refused", "fail")


def is_mutation(step: Step) -> bool:
    """A step that writes into an existing object: item or attribute assignment (``c.imag =
    v`` writes c), augmented assignment (on a name, an item or an attribute), an in-place
    method, an ``out=`` argument, an
    ``inplace=True`` one (NumPy's ``byteswap(inplace=True)``)."""
    ops = [e for x in _step_exprs(step) for e in _walk(x) if isinstance(e, Op)]
    return (step.kind == "augassign" or any(isinstance(t, (ItemTarget, AttrTarget)) for t in step.targets)
            or any((op.key.startswith("method:") and op.key.endswith("_"))
                   or any(k == "out" or (k == "inplace" and getattr(v, "value", None) is True) for k, v in op.kwargs)
                   for op in ops))


def exported_read_only_at(record: dict[str, Any]) -> int | None:
    """The step where a DLPack export of a frozen (read-only) array was refused: DLPack cannot
    signal read-only memory, so NumPy refuses to export it (``Cannot export readonly array``),
    the frozen framework's other refusal, which NumPy's writable arrays never meet."""
    return next((s["number"] for s in record["steps"] if s["status"] == "error" and s["error"]["kind"] == "read_only"
                 and "export readonly" in s["error"]["message"]), None)


def refused_at(record: dict[str, Any]) -> int | None:
    return next((s["number"] for s in record["steps"] if s["status"] == "error" and s["error"]["kind"] == IMMUTABLE),
                None)


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    site = tmp_path_factory.mktemp("site")
    register(site, "frozen-adapter", {"frozen": "probe_adapters.frozen:FrozenAdapter"})
    results = site / "results.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "cases", "-p", "no:cacheprovider", "-q",
                           "--frameworks", "numpy,frozen", "--conformance-results", str(results)],
                          cwd=ROOT, env=subprocess_env(site, TESTS), capture_output=True, text=True, timeout=600)
    # 1: expectations failed on frozen (the shared expectation where NumPy passes under its
    # own override), which is its behaviour; anything else is not
    assert proc.returncode in (0, 1), proc.stdout[-5000:] + proc.stderr[-5000:]
    data = json.loads(results.read_text())
    # the corpus's vocabulary (array-api-strict's device names among its strings), and frozen
    vocabulary = dataclasses.replace(registry.vocabulary(), frameworks=[*registry.framework_names(), "frozen"],
                                     operations=None)
    cases = {c.id: c for path in sorted((ROOT / "cases").rglob("*.yaml")) for c in load_file(path, vocabulary).cases}
    records: dict[str, dict[str, dict[str, Any]]] = {}
    for record in data["results"]:
        records.setdefault(record["framework"], {})[record["case"]] = record
    return {"data": data, "cases": cases, "numpy": records["numpy"], "frozen": records["frozen"]}


def test_the_adapter_declares_its_refusal_once() -> None:
    adapter = FrozenAdapter()
    assert not adapter.mutable
    assert adapter.refused_mutation(ValueError("assignment destination is read-only"))
    assert adapter.refused_mutation(ValueError("output array is read-only"))
    assert not adapter.refused_mutation(ValueError("operands could not be broadcast together"))
    assert not adapter.refused_mutation(TypeError("assignment destination is read-only"))
    assert adapter.refused_mutation(MutationRefused("any adapter may refuse by itself"))


def test_every_corpus_item_gets_a_verdict(corpus_run: dict[str, Any]) -> None:
    frozen, numpy = corpus_run["frozen"], corpus_run["numpy"]
    assert set(frozen) == set(numpy) == set(corpus_run["cases"])  # the whole corpus, once each
    assert corpus_run["data"]["environment"]["frameworks"]["frozen"] == {"version": "0.1", "devices": ["cpu"]}
    outcomes = {r["outcome"] for r in frozen.values()}
    assert "error" not in outcomes, [r["case"] for r in frozen.values() if r["outcome"] == "error"]
    assert outcomes <= {"pass", "refused", "fail", "not_applicable", "skipped"}  # frozen has no override anywhere
    for case_id, record in frozen.items():  # what did not run, did not run on NumPy either, for the same reason
        twin = numpy[case_id]
        functional = corpus_run["cases"][case_id].functional_steps
        if functional:
            # an immutable framework runs the case's functional_steps (docs/case-format.md), NumPy
            # its steps: another program, whose records are those steps
            # (once per call, where the case is called more than once: Case.called)
            program = corpus_run["cases"][case_id].program_for(True).called()
            assert record["outcome"] not in RAN or [s["text"] for s in record["steps"]] == [
                s.text for s in program.flat_steps()], case_id
            continue
        if record["outcome"] not in RAN:
            assert twin["outcome"] == record["outcome"], case_id
            assert record["reason"] in (twin["reason"], twin["reason"].replace("numpy has no", "frozen has no")), case_id  # noqa: E501


def test_every_mutation_is_the_frameworks_refusal(corpus_run: dict[str, Any]) -> None:
    """Each mutation step a frozen item reaches is refused (kind ``immutable``), unless NumPy
    did the very same there (a write into something that is not a frozen array: a NumPy
    scalar, another framework's tensor); and only mutation steps are refused."""
    refused = reached = 0
    for case_id, record in corpus_run["frozen"].items():
        if record["outcome"] not in RAN:
            continue
        if corpus_run["cases"][case_id].functional_steps:
            continue  # another program than NumPy's (above), without mutations
        twin = corpus_run["numpy"][case_id]["steps"]
        for step, seen, numpy_seen in zip(corpus_run["cases"][case_id].flat_steps(), record["steps"], twin):
            assert seen["number"] == step.number
            refusal_seen = seen["status"] == "error" and seen["error"]["kind"] == IMMUTABLE
            if not is_mutation(step):
                assert not refusal_seen, (case_id, step.text)
                continue
            if seen["status"] == "not_run":
                continue
            if not refusal_seen and numpy_seen["status"] == "error" and seen == numpy_seen:
                # NumPy refuses the call itself before anything is written (a function without
                # out=, an out array of another shape: the generated out= cases): no mutation
                continue
            reached += 1
            refused += refusal_seen
            assert refusal_seen or seen == numpy_seen, (case_id, step.text, seen)
            if refusal_seen:
                assert seen["error"]["type"] == "ValueError" and "read-only" in seen["error"]["message"]
    # the few reached and not refused write into something that is no frozen array (a NumPy
    # scalar, another framework's tensor): each was checked above to be NumPy's very same step
    assert reached > 100 and refused >= reached - 10, (reached, refused)


def test_up_to_the_refusal_frozen_behaves_as_numpy(corpus_run: dict[str, Any]) -> None:
    """Nothing but the refusal differs: the steps before it ran as on NumPy, and an item with
    no refusal ran and observed exactly as on NumPy (where both observed the same thing:
    NumPy's overrides change what its items observe)."""
    for case_id, record in corpus_run["frozen"].items():
        if record["outcome"] not in RAN or corpus_run["cases"][case_id].functional_steps:
            continue  # (a case's functional_steps: another program than NumPy's)
        twin = corpus_run["numpy"][case_id]
        exported = exported_read_only_at(record)
        if exported is not None and refused_at(record) is None:
            assert record["steps"][:exported - 1] == twin["steps"][:exported - 1], case_id
            continue
        stop = refused_at(record)
        if stop is None:
            assert record["steps"] == twin["steps"], case_id
            assert record["behaviour"]["error"] == twin["behaviour"]["error"], case_id
            assert record["behaviour"]["warnings"] == twin["behaviour"]["warnings"], case_id
            common = set(record["observed"]) & set(twin["observed"])
            assert {k: record["observed"][k] for k in common} == {k: twin["observed"][k] for k in common}, case_id
        else:
            assert record["steps"][:stop - 1] == twin["steps"][:stop - 1], case_id
            assert record["behaviour"]["error"] == {
                "at": stop, "kind": IMMUTABLE, "type": "ValueError", "message": record["steps"][stop - 1]["error"]["message"]}  # noqa: E501


def test_a_refusal_is_the_items_verdict_and_failures_are_the_frameworks_behaviour(
        corpus_run: dict[str, Any]) -> None:
    """An item that stops at the refusal, which its case does not expect, is ``refused``,
    with the step and the framework's exception as its reason; an item that fails on frozen
    fails the shared expectation where NumPy passes only under its own override (frozen has
    none), never because of the refusal."""
    refused = 0
    for case_id, record in corpus_run["frozen"].items():
        stop = refused_at(record)
        if record["outcome"] == REFUSED:
            refused += 1
            assert stop is not None, case_id
            assert record["reason"].startswith(f"refused: step {stop} "), record["reason"]
            assert "ValueError: " in record["reason"] and "read-only" in record["reason"], record["reason"]
        elif record["outcome"] == FAIL and exported_read_only_at(record) is not None:
            continue  # frozen's other refusal: DLPack cannot export its read-only arrays (NumPy's are writable)
        elif record["outcome"] == FAIL:
            assert stop is None and corpus_run["numpy"][case_id]["outcome"] == "known_divergence", (
                case_id, record["reason"])
        else:
            assert stop is None or record["outcome"] in ("pass", "known_divergence"), case_id  # expected there
    assert refused > 100, refused


# ---- the engine side, one case at a time

CASES = """\
cases:
  - id: inplace.setitem.refused
    title: item assignment into an immutable array
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x + 1.0
      - y[0] = 5.0
      - z = y * 2.0
    expect:
      values: {y: [2.0, 3.0], x: [1.0, 2.0]}
      error: {at: 2, kind: immutable}
  - id: inplace.iadd.item
    title: augmented assignment on an item reads, adds, and is refused when it stores back
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - x[0] += 1.0
    expect:
      error: {at: 1, kind: immutable}
  - id: inplace.iadd.name
    title: augmented assignment on a name of an immutable array binds a new one (Python's fallback)
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - x0 = x
      - x += 1.0
    expect:
      values: {x: [2.0, 3.0], x0: [1.0, 2.0]}
      same_object: {x & x0: false}
"""


class RefusingAdapter(FakeAdapter):
    """FakeAdapter (NumPy arrays) refusing by itself: every item and attribute assignment of
    its table raises MutationRefused before NumPy is asked; augmented assignment on a name
    keeps Python's semantics for a type without in-place operators and binds a new array."""

    name = "refusing"
    immutable = Immutability(refuse="refusing's arrays are immutable")

    def operations(self) -> dict[str, Any]:
        import operator

        return {**super().operations(), "op:iadd": operator.add, "setattr:flag": lambda x, v: None}


def _load(adapter: Any) -> dict[str, Any]:
    vocabulary = Vocabulary(frameworks=[*registry.BUILTIN, adapter.name], operations=set(adapter.ops))
    loaded = load_text(CASES, "t.yaml", vocabulary)
    assert not loaded.errors, loaded.errors[0][1].render()
    return {case.id: case for case in loaded.cases}


def test_immutable_is_a_neutral_error_kind() -> None:
    assert IMMUTABLE in ERROR_KINDS and list(ERROR_KINDS)[-1] == "other"


@pytest.mark.parametrize("adapter", [FrozenAdapter(), RefusingAdapter()], ids=["raises", "refuses"])
def test_a_refused_mutation_is_the_steps_error(adapter: Any) -> None:
    cases = _load(adapter)
    outcome = run(cases["inplace.setitem.refused"], adapter)
    assert outcome.verdict == PASS, outcome.mismatches
    assert [s.status for s in outcome.steps] == ["ok", "error", "not_run"]
    error = outcome.steps[1].error
    assert error is not None and error.kind == IMMUTABLE
    if isinstance(adapter, RefusingAdapter):
        assert (error.type, error.message) == ("conformance.adapters.base.MutationRefused",
                                               "refusing's arrays are immutable")
    else:
        assert (error.type, error.message) == ("ValueError", "assignment destination is read-only")
    item = run(cases["inplace.iadd.item"], adapter)
    assert item.verdict == PASS, item.mismatches
    name = run(cases["inplace.iadd.name"], adapter)
    if isinstance(adapter, RefusingAdapter):  # op:iadd is Python's fallback: a new array, bound to x
        assert name.verdict == PASS, name.mismatches
    else:  # NumPy's in-place operator writes, the frozen array refuses, and the case does not expect it
        assert name.verdict == REFUSED and name.steps[1].error.kind == IMMUTABLE
        assert name.reason == ("refused: step 2 'x += 1.0' (t.yaml:27) raised ValueError: output array is "
                               "read-only"), name.reason


def test_refusing_by_itself_replaces_the_assignments_of_the_table() -> None:
    adapter = RefusingAdapter()
    with pytest.raises(MutationRefused, match="refusing's arrays are immutable"):
        adapter.ops["op:setitem"](None, 0, 1)
    with pytest.raises(MutationRefused, match="refusing's arrays are immutable"):
        adapter.ops["setattr:flag"](None, 1)
    assert adapter.ops["op:setitem"].refuses == "refusing's arrays are immutable"
    assert adapter.ops["op:getitem"] is FakeAdapter().ops["op:getitem"]  # reading is untouched
    with pytest.raises(MutationRefused, match="^no$"):
        refusal("no")()


def test_a_mutable_framework_refuses_nothing() -> None:
    adapter = registry.get_adapter("numpy")
    assert adapter.mutable and adapter.immutable is None
    assert not adapter.refused_mutation(ValueError("assignment destination is read-only"))
