"""A third-party adapter, end to end: tests/extra_adapter/minimal.py (framework ``minimal``,
over the toy library tests/extra_adapter/tinytensor.py) registered through the real
``conformance.adapters`` entry point group, as docs/adapters.md describes.

The registration is a ``minimal_adapter-0.1.dist-info`` written to a temporary folder that
goes on the PYTHONPATH of a subprocess only: this process, and every other test in it, keeps
seeing the three built-in frameworks. The subprocesses run from the repository root, found
from this file, whatever the current directory of the parent run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from entry_points import register, subprocess_env
from extra_adapter.minimal import MinimalAdapter

from conformance import registry
from conformance.load.reader import Vocabulary, load_file, load_text
from conformance.model import ResultKey
from conformance.run.engine import FAIL, NOT_APPLICABLE, PASS, SKIPPED, run

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# real corpus files: a mix of cases minimal runs and cases that need operations it lacks
CASE_FILES = [ROOT / "cases" / "views" / "basic.yaml",
              ROOT / "cases" / "interop" / "numpy_bridge.yaml",
              ROOT / "cases" / "copies" / "selection.yaml"]
BUILTIN = list(registry.BUILTIN)
HEAVY = tuple(name for name in BUILTIN if name != "numpy")  # numpy is imported by the suite itself
FRAMEWORK_MODULE = "extra_adapter.tinytensor"


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment of a subprocess in which the minimal adapter is installed."""
    site = tmp_path_factory.mktemp("site")
    register(site, "minimal-adapter", {"minimal": "extra_adapter.minimal:MinimalAdapter"})
    return subprocess_env(site, TESTS)


def run_python(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def run_code(code: str, env: dict[str, str]) -> Any:
    """Run ``code`` in a fresh interpreter; it prints one JSON line starting with RESULT."""
    proc = run_python(["-c", textwrap.dedent(code)], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


REGISTRY_PROBE = f"""
    import json, sys
    from conformance import registry
    from conformance.tools.operations import operations_markdown

    names = registry.framework_names()
    info = {{"names": names}}
    if "minimal" in names:
        adapter = registry.get_adapter("minimal")
        table = operations_markdown()  # what `conformance ops` prints
        rows = {{line.split("|")[1].strip().strip("`"): [c.strip() for c in line.split("|")[2:-1]]
                for line in table.splitlines() if line.startswith("| ")}}
        info.update(spec=registry.adapter_specs()["minimal"], cls=type(adapter).__qualname__,
                    name=adapter.name, version=adapter.version(), unavailable=adapter.unavailable(),
                    rows=rows)
    info["imported"] = sorted(m for m in {(*HEAVY, FRAMEWORK_MODULE)!r} if m in sys.modules)
    print("RESULT", json.dumps(info))
"""


def test_entry_point_registers_the_adapter(registered: dict[str, str]) -> None:
    info = run_code(REGISTRY_PROBE, registered)
    assert info["names"][:len(BUILTIN)] == BUILTIN and "minimal" in info["names"]
    assert info["spec"] == "extra_adapter.minimal:MinimalAdapter"
    assert (info["cls"], info["name"]) == ("MinimalAdapter", "minimal")
    assert info["version"] == "0.1"  # from the distribution's METADATA, without importing
    assert info["unavailable"] is None
    # the operations table (`conformance ops`) gains a column for it
    rows = info["rows"]
    column = rows["operation"].index("minimal")
    assert rows["x.reshape()"][column] == "yes"
    assert rows["asarray()"][column] == "yes"
    assert rows["x.view()"][column].startswith("n/a: tinytensor has no view()")
    assert rows["x.t()"][column] == "—"  # not in its table at all
    # listing adapters and their tables imported no framework, not even tinytensor
    assert info["imported"] == []


def test_one_module_and_one_registration_reach_everywhere(registered: dict[str, str], tmp_path: Path) -> None:
    """The entry point alone (no other file of the suite changed) puts ``minimal`` in the run,
    the results file, both reports (its column placed by its ``report_rank``), the listing of
    frameworks with its title and capabilities, and the case schema."""
    results, reports = tmp_path / "results.json", tmp_path / "reports"
    proc = run_python(["-m", "conformance", "run", str(CASE_FILES[0]), "--frameworks", "numpy,minimal",
                       "--results", str(results), "--reports", str(reports), "-p", "no:cacheprovider"], registered)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(results.read_text())
    assert data["environment"]["frameworks"]["minimal"] == {"version": "0.1", "devices": ["cpu"]}
    assert {r["framework"] for r in data["results"]} == {"numpy", "minimal"}
    # the reports: a column after torch and Paddle, before NumPy, in both
    order = ["torch", "paddle", "minimal", "numpy"]
    markdown = (reports / "behaviour.md").read_text()
    assert "| case | " + " | ".join(order) + " |" in markdown
    assert "minimal 0.1" in markdown
    html = (reports / "behaviour.html").read_text()
    assert "".join(f"<th data-fw='{fw}'>{fw}</th>" for fw in order) in html
    assert "minimal 0.1" in html

    listing = run_python(["-m", "conformance", "frameworks"], registered)
    assert listing.returncode == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if line.startswith("| minimal |"))
    assert [c.strip() for c in row.split("|")[1:-1]] == [
        "minimal", "tinytensor", "0.1", "entry point (extra_adapter.minimal:MinimalAdapter)", "no", "yes", "cpu",
        "no", "no"]

    schema = run_python(["-m", "conformance", "schema"], registered)
    assert schema.returncode == 0, schema.stderr
    check_schema(json.loads(schema.stdout))


def check_schema(schema: dict[str, Any]) -> None:
    """The case schema of a process where minimal is registered accepts an override and an
    error detail for it, as it does for a built-in, and still refuses an unknown name."""
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema)
    case = {"id": "views.view.on_minimal", "title": "t", "given": {"x": {"data": [1.0]}}, "steps": ["y = x.view(1)"],
            "expect": {"error": {"at": 1, "kind": "other", "minimal": {"type": "ValueError"}}}}
    assert list(validator.iter_errors({"cases": [case]})) == []
    for name, valid in (("minimal", True), ("numpy", True), ("ghost", False)):
        overridden = dict(case, frameworks={name: {"reason": "r", "not_applicable": "n/a"}})
        assert (list(validator.iter_errors({"cases": [overridden]})) == []) is valid, name
    assert list(schema["$defs"]["case"]["properties"]["frameworks"]["properties"]) == [*BUILTIN, "minimal"]


def test_without_the_distribution_nothing_is_registered() -> None:
    """The tests folder on the path is not enough: registration is the entry point's."""
    info = run_code(REGISTRY_PROBE, subprocess_env(TESTS))
    assert info["names"] == BUILTIN


def test_corpus_cases_run_through_the_plugin(registered: dict[str, str], tmp_path: Path) -> None:
    results_path = tmp_path / "r.json"
    proc = run_python(["-m", "pytest", *map(str, CASE_FILES), "--frameworks", "minimal",
                       "-p", "no:cacheprovider", "-q", "--conformance-results", str(results_path)],
                      registered)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(results_path.read_text())

    assert data["environment"]["frameworks"]["minimal"] == {"version": "0.1", "devices": ["cpu"]}
    records = data["results"]
    assert records and {r["framework"] for r in records} == {"minimal"}
    assert {r["case"] for r in records} == set(data["cases"])  # one item per case, minimal only
    assert {data["cases"][r["case"]]["file"] for r in records} == {
        str(p.relative_to(ROOT)) for p in CASE_FILES}

    adapter = MinimalAdapter()  # its table and lacks() import nothing
    vocabulary = Vocabulary(frameworks=[*BUILTIN, "minimal"])
    cases = {c.id: c for path in CASE_FILES for c in load_file(path, vocabulary).cases}
    seen = {"pass": 0, "not in table": 0, "absent": 0, "input": 0}
    for r in records:
        ops = data["cases"][r["case"]]["operations"]
        lacking = sorted(k for k in ops if adapter.lacks(k))
        where = f"{r['case']}: {r['outcome']} ({r['reason']})"
        if not lacking:
            grad_inputs = [g.name for g in cases[r["case"]].given if g.requires_grad]
            if grad_inputs:  # make_input refuses it
                assert r["outcome"] == "not_applicable", where
                assert r["reason"] == f"tinytensor has no autograd (input {grad_inputs[0]!r} requires grad)", where
                seen["input"] += 1
            else:
                assert r["outcome"] == "pass", where
                seen["pass"] += 1
            continue
        # the engine reports the first operation (in key order) the adapter lacks
        key = lacking[0]
        assert r["outcome"] == "not_applicable", where
        assert r["reason"] == adapter.lacks(key), where  # the record drops "not applicable: "
        assert key.partition(":")[2] in r["reason"], where
        seen["absent" if key in adapter.ops else "not in table"] += 1
    assert seen["pass"] and seen["not in table"] and seen["absent"], seen
    assert not [r for r in records if r["outcome"] in ("fail", "error")]
    # the cases that do run exercise the operations and both memory probes
    passed = {r["case"] for r in records if r["outcome"] == "pass"}
    assert {"views.reshape.contiguous", "views.reshape.non_contiguous_copies",
            "views.slice.interleaved_same_storage_no_overlap", "interop.asarray.of_tensor",
            "interop.numpy.shares_with_tensor", "copies.advanced_indexing.integer_list"} <= passed
    by_case = {r["case"]: r for r in records}
    assert by_case["views.reshape.contiguous"]["observed"]["shares_memory.y.x"] is True
    assert by_case["views.reshape.non_contiguous_copies"]["observed"]["shares_memory.y.x"] is False
    assert by_case["views.view.contiguous"]["reason"] == (
        "tinytensor has no view(); reshape() returns a view where the strides allow")
    assert by_case["views.expand.shares"]["reason"] == "minimal has no counterpart for method:expand"


def test_collecting_imports_no_framework(registered: dict[str, str]) -> None:
    """Collection builds every adapter and its table; the frameworks stay unimported."""
    result = run_code(f"""
        import json, sys, pytest

        class Probe:
            def pytest_collection_finish(self, session):
                self.items = sorted(i.name for i in session.items)
                self.adapter = "extra_adapter.minimal" in sys.modules
                self.imported = sorted(m for m in {(*HEAVY, FRAMEWORK_MODULE)!r} if m in sys.modules)

        probe = Probe()
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--frameworks", "minimal",
                            *{list(map(str, CASE_FILES))!r}], plugins=[probe])
        print("RESULT", json.dumps([int(code), probe.items, probe.adapter, probe.imported]))
    """, registered)
    code, items, adapter_imported, imported = result
    assert code == 0
    assert items and all(name.endswith("[minimal]") for name in items)
    assert adapter_imported  # the plugin loaded the adapter module through the entry point...
    assert imported == []  # ...which imported neither its framework nor torch or paddle


# ---- the adapter contract without pytest: the engine on an adapter instance

CASES = """\
cases:
  - id: views.reshape.tiny
    title: reshape of a contiguous tensor shares its memory
    given:
      x: {data: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}
    steps:
      - y = x.reshape(3, 2)
      - y[0, 0] = 10.0
    expect:
      shares_memory: {y & x: true}
      same_storage: {y & x: true}
      same_object: {y & x: false}
      shape: {y: [3, 2]}
      dtype: {y: float32}
      values: {x: [[10.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}
      version_change: {x: 1}
  - id: copies.copy.claimed_view
    title: a wrong expectation (copy() shares memory) fails with both probes' evidence
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x.copy()
    expect:
      shares_memory: {y & x: true}
  - id: views.reshape.bad_size
    title: reshape to a size that does not fit raises
    given:
      x: {data: [1.0, 2.0, 3.0]}
    steps:
      - y = x.reshape(2)
    expect:
      error: {at: 1, kind: shape_mismatch}
  - id: views.t.lacking
    title: t() is not in minimal's table
    given:
      x: {data: [[1.0, 2.0]]}
    steps:
      - y = x.t()
    expect:
      shape: {y: [2, 1]}
  - id: autograd.input.requires_grad
    title: an input that requires grad
    given:
      x: {data: [1.0, 2.0], requires_grad: true}
    steps:
      - y = x.copy()
    expect:
      values: {y: [1.0, 2.0]}
  - id: views.reshape.on_cuda
    title: a cuda case
    device: cuda
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x.reshape(2, 1)
    expect:
      shape: {y: [2, 1]}
"""


def test_engine_runs_cases_on_the_adapter() -> None:
    adapter = MinimalAdapter()
    vocabulary = Vocabulary(frameworks=[*BUILTIN, "minimal"], operations=set(adapter.ops) | {"method:t"})
    loaded = load_text(CASES, "t.yaml", vocabulary)
    assert not loaded.errors, loaded.errors[0][1].render()
    outcomes = {case.id: run(case, adapter) for case in loaded.cases}

    view = outcomes["views.reshape.tiny"]
    assert view.verdict == PASS, view.mismatches
    assert view.observed[ResultKey("shares_memory", ("y", "x"))] is True and view.observed[ResultKey("same_storage", ("y", "x"))] is True  # noqa: E501
    assert view.unobservable == ["version_change of x: minimal has no version change"]

    wrong = outcomes["copies.copy.claimed_view"]
    assert wrong.verdict == FAIL and wrong.reason == "shares_memory(y, x)"
    assert wrong.mismatches[0].detail == ("metadata probe: no overlap; behaviour probe: "
                                          "wrote through y, did not see the change in x")

    error = outcomes["views.reshape.bad_size"]
    assert error.verdict == PASS, error.mismatches
    assert error.steps[0].status == "error" and error.steps[0].error.kind == "shape_mismatch"

    assert (outcomes["views.t.lacking"].verdict, outcomes["views.t.lacking"].reason) == (
        NOT_APPLICABLE, "not applicable: minimal has no counterpart for method:t")
    grad = outcomes["autograd.input.requires_grad"]
    assert (grad.verdict, grad.reason) == (
        NOT_APPLICABLE, "not applicable: tinytensor has no autograd (input 'x' requires grad)")
    cuda = outcomes["views.reshape.on_cuda"]
    assert (cuda.verdict, cuda.reason) == (SKIPPED, "minimal: device 'cuda' is not supported")


def test_a_broken_or_misnamed_adapter_skips_its_items_and_the_others_run(tmp_path: Path) -> None:
    site = tmp_path / "site"
    register(site, "broken-adapters", {"ghost": "no_such_module:Adapter",
                                       "alias": "extra_adapter.minimal:MinimalAdapter"})
    results = tmp_path / "r.json"
    proc = run_python(["-m", "pytest", str(CASE_FILES[0]), "-p", "no:cacheprovider", "-q", "-rs",
                       "--frameworks", "numpy,ghost,alias", "--conformance-results", str(results)],
                      subprocess_env(site, TESTS))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = json.loads(results.read_text())["results"]
    by_framework: dict[str, set[str]] = {}
    for r in records:
        by_framework.setdefault(r["framework"], set()).add(r["outcome"])
    assert by_framework == {"numpy": {"pass"}, "ghost": {"skipped"}, "alias": {"skipped"}}
    reasons = {r["framework"]: r["reason"] for r in records}
    assert "adapter 'ghost' (no_such_module:Adapter) could not be loaded: ModuleNotFoundError" in reasons["ghost"]
    assert "registered as 'alias' (extra_adapter.minimal:MinimalAdapter) calls itself 'minimal'" in reasons["alias"]
