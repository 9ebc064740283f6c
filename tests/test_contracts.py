"""torch's declared alias contracts (conformance/data/contracts/torch.yaml, conformance.tools.contracts):
the classification of an introspection, the exclusions and their reasons, the reader's errors,
what the corpus reaches, and ``conformance contracts``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from conformance.load.reader import Vocabulary, load_text
from conformance.tools import contracts
from conformance.tools.cli import main


def overload(schema: str, aliased: str = "self", kernels: tuple[str, ...] = ("CPU",), name: str = "") -> dict:
    return {"overload": name, "schema": schema, "aliased": aliased, "kernels": list(kernels)}


FOUND = {"version": "2.13.0+cpu", "operators": [
    {"name": "view", "kind": "view", "spellings": ["torch.Tensor.view"],
     "overloads": [overload("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)")]},
    {"name": "_reshape_alias", "kind": "view", "spellings": [],
     "overloads": [overload("aten::_reshape_alias(Tensor(a) self) -> Tensor(a)")]},
    {"name": "add_", "kind": "inplace", "spellings": ["torch.Tensor.add_"],
     "overloads": [overload("aten::add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", name="Tensor")]},
    {"name": "numpy_T", "kind": "view", "spellings": [],
     "overloads": [overload("aten::numpy_T(Tensor(a) self) -> Tensor(a)")]},
    {"name": "sparse_resize_", "kind": "inplace", "spellings": ["torch.Tensor.sparse_resize_"],
     "overloads": [overload("aten::sparse_resize_(Tensor(a!) self) -> Tensor(a!)", kernels=("SparseCPU", "Meta"))]},
    {"name": "record_stream", "kind": "inplace", "spellings": ["torch.Tensor.record_stream"],
     "overloads": [overload("aten::record_stream(Tensor(a!) self, Stream s) -> ()", kernels=())]},
    {"name": "add", "kind": "out", "spellings": ["torch.Tensor.add", "torch.add"],
     "overloads": [overload("aten::add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "out",
                            name="out")]},
    {"name": "mT", "kind": "view", "spellings": ["torch.Tensor.mT (attribute)"],
     "overloads": [overload("aten::mT(Tensor(a) self) -> Tensor(a)")]},
    {"name": "linalg_diagonal", "kind": "view", "spellings": ["torch.linalg.diagonal"],
     "overloads": [overload("aten::linalg_diagonal(Tensor(a) A) -> Tensor(a)", "A")]},
]}


def test_build_keeps_the_public_reachable_operators_and_says_why_it_leaves_out_the_rest() -> None:
    document = contracts.build(FOUND)
    assert document["version"] == "2.13.0"
    assert [(o["kind"], o["name"]) for o in document["operators"]] == [
        ("view", "linalg_diagonal"), ("view", "mT"), ("view", "view"), ("inplace", "add_"), ("out", "add")]
    reasons = {e["name"]: e["reason"] for e in document["excluded"]}
    assert reasons["_reshape_alias"] == "private: the name starts with _"
    assert reasons["numpy_T"].startswith("no Python binding: no attribute of this name on torch.Tensor")
    assert reasons["sparse_resize_"] == "no kernel for a dense CPU tensor: kernels only for Meta, SparseCPU"
    assert reasons["record_stream"] == ("no kernel for a dense CPU tensor in this build (none registered: "
                                        "CUDA-only or unbuilt)")


def test_the_dump_reads_back_and_spellings_become_vocabulary_keys(tmp_path: Path) -> None:
    path = tmp_path / "torch.yaml"
    path.write_text(contracts.dump(contracts.build(FOUND)), encoding="utf-8")
    read = contracts.read(path)
    keys = {c.name: c.keys for c in read.operators}
    assert keys == {"view": ("method:view",), "add_": ("method:add_",), "add": ("fn:add",),  # out=: the function
                    "mT": ("attr:mT",), "linalg_diagonal": ("fn:linalg_diagonal",)}
    assert read.of_kind("out")[0].overloads[0].aliased == "out"
    assert len(read.excluded) == 4


def test_reading_a_missing_or_malformed_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(contracts.ContractsError, match=r"cannot be read .*: run python -m conformance.tools.contracts "
                                                       r"--introspect where torch is installed"):
        contracts.read(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("framework: torch\nversion: '1'\nsource: s\noperators: []\n", encoding="utf-8")
    with pytest.raises(contracts.ContractsError, match=r"not what --introspect writes \(missing or malformed "
                                                       r"'excluded'\)"):
        contracts.read(bad)
    bad.write_text("operators: [\n", encoding="utf-8")
    with pytest.raises(contracts.ContractsError, match="not YAML"):
        contracts.read(bad)
    bad.write_text("framework: torch\nversion: '1'\nsource: s\nexcluded: []\noperators:\n"
                   "  - {name: x, kind: copy, spellings: [], overloads: []}\n", encoding="utf-8")
    with pytest.raises(contracts.ContractsError, match="unknown kind 'copy': the kinds are view, inplace, out"):
        contracts.read(bad)


def test_an_operator_name_that_is_no_public_identifier_is_refused(tmp_path: Path) -> None:
    # the names become entries of the torch adapter's table: the file is data anyone can change
    bad = tmp_path / "bad.yaml"
    for name in ("__class__", "_private", "os.system", "view()"):
        bad.write_text("framework: torch\nversion: '1'\nsource: s\nexcluded: []\noperators:\n"
                       f"  - {{name: '{name}', kind: view, spellings: [], overloads: []}}\n", encoding="utf-8")
        with pytest.raises(contracts.ContractsError, match="is no public identifier"):
            contracts.read(bad)


def test_the_check_refuses_a_data_file_that_is_not_what_the_installed_torch_declares(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    from conformance.tools.commands import contracts as command

    forged = tmp_path / "torch.yaml"
    forged.write_text(contracts.DATA.read_text(encoding="utf-8").replace("name: view_as\n", "name: load\n", 1),
                      encoding="utf-8")
    monkeypatch.setattr(contracts, "DATA", forged)
    monkeypatch.setattr(out_calls, "sample", lambda declared: {"calls": [], "left": []})
    monkeypatch.setattr(out_calls, "DATA", tmp_path / "torch_out_calls.yaml")
    (out_calls.DATA).write_text(out_calls.dump({"calls": [], "left": []}), encoding="utf-8")
    (problem,) = command._not_what_the_frameworks_declare(contracts.read())
    assert problem == (f"{forged} is not what the installed torch declares (python -m conformance.tools.contracts "
                       "--introspect writes it)")


def test_the_module_alone_says_how_to_call_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert contracts.main([]) == 2
    assert "usage: python -m conformance.tools.contracts --introspect" in capsys.readouterr().err


VOCAB = Vocabulary(frameworks=("torch",), operations={"method:view", "method:add_", "fn:add"}, claims=set())

CASES = """\
cases:
  - id: views.view.shares
    title: t
    given: {x: {data: [1.0, 2.0]}}
    steps:
      - y = x.view(2)
    expect: {shares_memory: {y & x: true}}
  - id: inplace.add_.values_only
    title: t
    given: {x: {data: [1.0, 2.0]}}
    steps:
      - x.add_(1)
    expect: {values: {x: [2.0, 3.0]}}
  - id: out.add.is_out
    title: t
    given: {x: {data: [1.0, 2.0]}, o: {data: [0.0, 0.0]}}
    steps:
      - r = add(x, x, out=o)
    expect: {same_object: {r & o: true}}
  - id: out.add.without_out
    title: t
    given: {x: {data: [1.0, 2.0]}}
    steps:
      - r = add(x, x)
    expect: {values: {r: [2.0, 4.0]}}
"""


class TableOf:
    """An adapter's table with the keys given (tools.coverage asks only lacks())."""

    def __init__(self, keys: set[str]) -> None:
        self.keys = keys

    def lacks(self, key: str) -> str | None:
        return None if key in self.keys else f"no counterpart for {key}"


def reaches(case_text: str, keys: set[str]) -> dict[str, dict[str, Any]]:
    loaded = load_text(case_text, "cases/t.yaml", VOCAB)
    assert not loaded.errors, loaded.errors
    read = contracts.Contracts("torch", "2.13.0", "s", tuple(
        contracts.Contract(o["name"], o["kind"], tuple(o["spellings"]), ())
        for o in contracts.build(FOUND)["operators"]), ())
    found = contracts.measure(read, loaded.cases, TableOf(keys))
    return {kind: {r.contract.name: (r.cases, r.gap) for r in rs} for kind, rs in found.items()}


def test_a_contract_is_reached_by_a_case_that_calls_it_and_asserts_its_relation() -> None:
    found = reaches(CASES, {"method:view", "method:add_", "fn:add"})
    assert found["view"]["view"] == (("views.view.shares",), "")
    assert found["view"]["mT"] == ((), "not in the vocabulary (no counterpart for attr:mT)")
    assert found["view"]["linalg_diagonal"] == ((), "not in the vocabulary (no counterpart for fn:linalg_diagonal)")
    assert found["inplace"]["add_"][1] == "no case asserts same_object, shares_memory or same_storage, version_change"
    assert found["out"]["add"] == (("out.add.is_out",), "")


def test_an_out_contract_needs_out_and_an_assertion_that_the_result_is_out() -> None:
    without = CASES.replace("r = add(x, x, out=o)", "r = add(x, o)")
    assert reaches(without, {"fn:add"})["out"]["add"] == ((), "no case calls it with out=")
    unasserted = CASES.replace("expect: {same_object: {r & o: true}}", "expect: {values: {o: [2.0, 4.0]}}")
    assert reaches(unasserted, {"fn:add"})["out"]["add"] == (
        (), "no case asserts same_object or shares_memory or same_storage")
    assert reaches(CASES, set())["out"]["add"] == ((), "not in the vocabulary (no counterpart for fn:add)")


def test_summary_counts_each_kind_and_lists_what_is_not_reached() -> None:
    read = contracts.read()
    lines = contracts.summary({"view": [contracts.Reach(read.of_kind("view")[0], (), "no case applies")]})
    assert lines[0] == "view: 1 declared, 0 reached by the corpus, 1 not reached"
    assert lines[1].endswith(": no case applies")
    assert lines[2] == "inplace: 0 declared, 0 reached by the corpus, 0 not reached"


def test_the_committed_data_is_torchs_declaration_on_the_pinned_version() -> None:
    read = contracts.read()
    assert read.version == "2.13.0"
    counts = {kind: len(read.of_kind(kind)) for kind in contracts.KINDS}
    assert counts == {"view": 56, "inplace": 168, "out": 527}
    view = {c.name: c for c in read.of_kind("view")}["view"]
    assert view.keys == ("method:view",) and view.overloads[0].schema.startswith("aten::view(Tensor(a) self")


def test_the_committed_data_is_what_introspection_writes_now() -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    assert contracts.DATA.read_text(encoding="utf-8") == contracts.dump(contracts.build(contracts.introspect()))


def test_the_command_prints_each_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "t.yaml").write_text(CASES.replace("add(x, x)", "add(x, x, out=x)"), encoding="utf-8")
    assert main(["contracts", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "view: 56 declared, 1 reached by the corpus, 55 not reached" in out
    assert "out: 527 declared, 1 reached by the corpus" in out


def test_the_command_refuses_a_corpus_that_does_not_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "t.yaml").write_text("cases:\n  - id: x\n", encoding="utf-8")
    assert main(["contracts", str(folder)]) == 2
    assert "conformance contracts: fix the case files above first (conformance lint)" in capsys.readouterr().err


# -- the generated cases (conformance.tools.contract_cases) ------------------------------------

from conformance.model import ResultKey  # noqa: E402
from conformance.tools import contract_cases  # noqa: E402
from conformance.tools.observe import Observation  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def view_contract() -> contracts.Contract:
    return contracts.Contract("view", "view", ("torch.Tensor.view",), (
        contracts.Overload("", "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", "self"),))


def inplace_contract() -> contracts.Contract:
    return contracts.Contract("add_", "inplace", ("torch.Tensor.add_",), (
        contracts.Overload("Tensor", "aten::add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", "self"),))


def test_a_case_per_operator_and_layout_with_the_same_values_in_every_layout() -> None:
    read = contracts.Contracts("torch", "2.13.0", "s", (view_contract(), inplace_contract()), ())
    made, left = contract_cases.generate(read, "view", TableOf({"method:view"}))
    assert [g.case_id for g in made] == ["contracts.torch.view.view.contiguous", "contracts.torch.view.view.transposed",
                                         "contracts.torch.view.view.offset"]
    assert left == []
    transposed = made[1].text
    assert "b: {data: [[0.1, 0.4], [0.2, 0.5], [0.3, 0.6]], dtype: float32}" in transposed
    assert "- x = b.t()\n      - r = x.view(6)" in transposed
    assert "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)" in transposed
    # add_ is one of the operators run on every layout
    made, _ = contract_cases.generate(read, "inplace", TableOf({"method:add_"}))
    assert [g.layout for g in made] == list(contract_cases.EVERY_LAYOUT)
    _, left = contract_cases.generate(read, "inplace", TableOf(set()))
    assert left == ["add_: the torch table lacks method:add_"]


def observation(framework: str, observed: dict[ResultKey, Any], error: dict | None = None) -> Observation:
    return Observation(framework, "1.0", observed=observed, error=error)


def generated_case(contract: contracts.Contract) -> tuple[contract_cases.Generated, Any]:
    from conformance import registry

    read = contracts.Contracts("torch", "2.13.0", "s", (contract,), ())
    gen = contract_cases.generate(read, contract.kind, registry.get_adapter("torch"))[0][0]
    loaded = load_text(contract_cases.skeleton_file([gen]), "t.yaml", registry.vocabulary(), draft=True)
    return gen, loaded.cases[0]


SAME = ResultKey("same_object", ("r", "x"))
VERSION = ResultKey("version_change", ("x",))


def test_torch_is_shared_and_every_other_framework_differing_gets_a_measured_override() -> None:
    gen, case = generated_case(inplace_contract())
    torch = observation("torch", {SAME: True, VERSION: 1})
    paddle = observation("paddle", {SAME: True, VERSION: 1})
    mindspore = observation("mindspore", {SAME: False, VERSION: 0})
    findings: list[contract_cases.Finding] = []
    text = contract_cases.case_text(gen, case, [torch, paddle, mindspore], frozenset(), findings)
    assert "same_object: {r & x: true}" in text and "version_change: {x: 1}" in text
    assert "mindspore:\n        reason: \"Measured on mindspore 1.0 by conformance contracts --write" in text
    assert "paddle:" not in text and findings == []


def test_torch_breaking_its_declaration_is_a_finding_with_the_declaration_shared() -> None:
    gen, case = generated_case(inplace_contract())
    torch = observation("torch", {SAME: True, VERSION: 0})
    numpy = observation("numpy", {SAME: True})
    findings: list[contract_cases.Finding] = []
    text = contract_cases.case_text(gen, case, [torch, numpy], frozenset(), findings)
    assert "    expect:\n      same_object: {r & x: true}\n      version_change: {x: 1}\n" in text
    assert ("torch:\n        reason: \"Finding: torch 1.0 breaks the contract its schema declares "
            "(aten::add_.Tensor") in text
    assert text.endswith("        expect:\n          version_change: {x: 0}\n")
    assert findings == [contract_cases.Finding("contracts.torch.inplace.add_.contiguous",
                                               "aten::add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                                               "version_change.x: 1", "0")]


def test_a_refused_call_declares_nothing_and_a_page_view_must_share_memory() -> None:
    gen, _ = generated_case(view_contract())
    shares = ResultKey("shares_memory", ("r", "x"))
    assert contract_cases.declared_checks(gen, {}, {"at": 1}, frozenset({"view"})) == {}
    assert contract_cases.declared_checks(gen, {}, None, frozenset({"view"})) == {shares: True}
    assert contract_cases.declared_checks(gen, {}, None, frozenset()) == {}  # may alias: nothing declared
    assert "reshape" not in contract_cases.must_alias() and "view" in contract_cases.must_alias()


def test_check_names_each_case_that_is_not_what_the_data_makes(tmp_path: Path) -> None:
    from conformance.declared import packaged

    for name in contract_cases.FILES.values():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    assert contract_cases.check(tmp_path, packaged(), "view") == []
    path = tmp_path / contract_cases.FILES["view"]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("r = x.view(6)", "r = x.view(3, 2)", 1)
                    .replace("contracts.torch.view.t.offset", "contracts.torch.view.t.other", 1), encoding="utf-8")
    assert contract_cases.check(tmp_path, packaged(), "view") == [
        "cases/contracts/torch_views.yaml: contracts.torch.view.t.offset is not in the file",
        "cases/contracts/torch_views.yaml: contracts.torch.view.t.other is not what the data makes (delete it)",
        "cases/contracts/torch_views.yaml: contracts.torch.view.view.contiguous: its inputs or steps are not what the "
        "data makes"]
    path.unlink()
    assert contract_cases.check(tmp_path, packaged(), "view") == ["cases/contracts/torch_views.yaml is missing"]


def test_the_committed_generated_cases_are_what_the_data_makes(capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["contracts", "--check"]) == 0


def test_check_outside_a_checkout_says_where_to_run_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["contracts", "--check"]) == 2
    assert "run it at the root of a checkout" in capsys.readouterr().err
    (tmp_path / "cases").mkdir()
    assert main(["contracts", "--check"]) == 1
    assert ("conformance contracts: cases/contracts/torch_views.yaml is missing: run 'conformance contracts --write' "
            "and commit it") in capsys.readouterr().err


def test_a_compiled_mode_is_compared_with_what_applies_to_it_after_its_frameworks_override() -> None:
    _, case = generated_case(inplace_contract())
    lineage = {"torch_compile": ("torch",), "torch_inductor": ("torch", "torch_compile")}
    observed = [observation("torch", {SAME: True}), observation("torch_compile", {SAME: False}),
                observation("torch_inductor", {SAME: False})]
    shared, overrides = contract_cases.against_torch(case, observed, {}, lambda name: lineage.get(name, ()))
    assert shared[SAME] is True
    assert overrides == {"torch_compile": {SAME: False}}  # torch_inductor inherits it


def test_an_empty_tensor_is_expected_by_its_shape_and_a_framework_that_raised_first_drops_entries() -> None:
    gen, case = generated_case(inplace_contract())
    values, shape = ResultKey("values", ("x",)), ResultKey("shape", ("x",))
    torch = observation("torch", {SAME: True, values: [], shape: [0, 3]})
    paddle = observation("paddle", {values: [], shape: [0, 3]},
                         error={"at": 1, "kind": "other", "type": "ValueError", "message": "no"})
    shared, overrides = contract_cases.against_torch(case, [torch, paddle], {})
    assert values not in shared and shared[shape] == [0, 3]
    assert overrides["paddle"][SAME] is None
    assert overrides["paddle"][ResultKey("error")] == {"at": 1, "kind": "other", "paddle": paddle.error}


def test_a_random_operators_values_are_neither_expected_nor_overridden() -> None:
    _, case = generated_case(inplace_contract())
    values = ResultKey("values", ("x",))
    torch = observation("torch", {SAME: True, values: [[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]})
    paddle = observation("paddle", {SAME: True, values: [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]})
    shared, overrides = contract_cases.against_torch(case, [torch, paddle], {})
    assert overrides == {"paddle": {values: [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]}}  # control
    shared, overrides = contract_cases.against_torch(case, [torch, paddle], {}, unexpected=frozenset({"values"}))
    assert values not in shared and shared[SAME] is True and overrides == {}
    assert {"bernoulli_", "normal_", "uniform_", "random_"} <= contract_cases.RANDOM


def test_an_out_variant_declares_that_it_returns_out_and_unstable_observations_are_dropped() -> None:
    out = contracts.Contract("add", "out", ("torch.add",), (
        contracts.Overload("out", "aten::add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "out"),))
    gen, _ = generated_case(out)
    assert gen.case_id == "contracts.torch.out.add.right_size" and "r = add(x, y, out=o)" in gen.text
    assert contract_cases.declared_checks(gen, {}, None, frozenset()) == {ResultKey("same_object", ("r", "o")): True}
    igamma = contracts.Contract("igamma_", "inplace", ("torch.Tensor.igamma_",), inplace_contract().overloads)
    gen, case = generated_case(igamma)
    values = ResultKey("values", ("x",))
    text = contract_cases.case_text(gen, case, [observation("torch", {SAME: True, VERSION: 1, values: [1.0]}),
                                                observation("paddle", {SAME: True, VERSION: 1, values: [1.0]})],
                                    frozenset(), [])
    assert "paddle:\n" in text and "its values are not expected: Paddle 3.3.1's igamma_" in text
    assert text.endswith("values: {x: null}\n")


def test_write_refuses_argument_tables_whose_cases_do_not_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.declared import packaged

    monkeypatch.setattr(contract_cases, "VIEW_CALLS", {"view": contract_cases.Call("r = x.view(")})
    with pytest.raises(ValueError, match="the generated cases do not load:\n"):
        contract_cases.write(tmp_path, packaged(), "view", lambda text: None)
    assert not (tmp_path / contract_cases.FILES["view"]).exists()


# -- the out= calls sampled from torch (conformance.tools.out_calls) ---------------------------

from conformance.tools import out_calls  # noqa: E402


def out_contract(name: str, schema: str, spelling: str) -> contracts.Contract:
    return contracts.Contract(name, "out", (spelling,), (contracts.Overload("out", schema, "out"),))


SORT = out_contract("sort", "aten::sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, "
                            "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)", "torch.sort")


def sampled_file(tmp_path: Path, call: str = "r, r1 = sort(x, out=(o, o1))", **changes: Any) -> Path:
    entry = {"name": "sort", "call": call, "given": {"x": "{data: [[0.2, 0.1]], dtype: float32}"},
             "outs": [{"name": "o", "shape": [1, 2], "dtype": "float32"},
                      {"name": "o1", "shape": [1, 2], "dtype": "int64"}],
             "values": True, "source": "its schema: " + SORT.overloads[0].schema, **changes}
    path = tmp_path / "torch_out_calls.yaml"
    path.write_text(out_calls.dump({"framework": "torch", "version": "2.13.0", "source": "s", "calls": [entry],
                                    "left": [{"name": "clone", "reason": "torch.clone(x, out=...) raises TypeError"}]}),
                    encoding="utf-8")
    return path


def test_an_out_variant_spelled_in_torch_linalg_special_or_fft_is_its_function_under_the_operators_name() -> None:
    cholesky = out_contract("linalg_cholesky", "aten::linalg_cholesky.out(Tensor self, *, bool upper=False, "
                                               "Tensor(a!) out) -> Tensor(a!)", "torch.linalg.cholesky")
    assert cholesky.keys == ("fn:linalg_cholesky",)
    assert contracts.Contract("linalg_diagonal", "view", ("torch.linalg.diagonal",), ()).keys == (
        "fn:linalg_diagonal",)
    assert contracts.Contract("diagonal", "view", ("torch.linalg.diagonal",), ()).keys == ()  # control: another name
    from conformance import registry

    torch_table = registry.get_adapter("torch")
    assert torch_table.lacks("fn:linalg_cholesky") is None and torch_table.lacks("fn:special_erf") is None


def test_the_sampled_calls_read_back_and_a_malformed_file_says_what_to_do(tmp_path: Path) -> None:
    read = out_calls.read(sampled_file(tmp_path))
    assert read.calls["sort"].outs[1] == out_calls.OutTensor("o1", (1, 2), "int64")
    assert read.left == {"clone": "torch.clone(x, out=...) raises TypeError"}
    with pytest.raises(out_calls.OutCallsError, match=r"cannot be read .*: run python -m conformance.tools.out_calls "
                                                      r"--sample where torch is installed"):
        out_calls.read(tmp_path / "missing.yaml")
    with pytest.raises(out_calls.OutCallsError, match=r"not what --sample writes \(missing or malformed 'outs'\)"):
        out_calls.read(_without(sampled_file(tmp_path), "outs"))
    with pytest.raises(out_calls.OutCallsError, match=r"'o;1' is no identifier"):
        out_calls.read(sampled_file(tmp_path, outs=[{"name": "o;1", "shape": [1], "dtype": "float32"}]))
    with pytest.raises(out_calls.OutCallsError, match=r"sort: its out tensors must be named, with a dtype of float32"):
        out_calls.read(sampled_file(tmp_path, outs=[{"name": "o", "shape": [1], "dtype": "object"}]))


def _without(path: Path, key: str) -> Path:
    import yaml

    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    del document["calls"][0][key]
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_a_sampled_call_is_one_case_on_out_tensors_of_other_shapes_declaring_each_result_its_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(out_calls, "DATA", sampled_file(tmp_path))
    read = contracts.Contracts("torch", "2.13.0", "s", (SORT,), ())
    (gen,), left = contract_cases.generate(read, "out", TableOf({"fn:sort"}))
    assert gen.case_id == "contracts.torch.out.sort.wrong_size" and left == []
    assert "o: {shape: [5], fill: 0, dtype: float32}\n      o1: {shape: [5], fill: 0, dtype: int64}" in gen.text
    assert "- r, r1 = sort(x, out=(o, o1))" in gen.text
    assert contract_cases.declared_checks(gen, {}, None, frozenset()) == {
        ResultKey("same_object", ("r", "o")): True, ResultKey("same_object", ("r1", "o1")): True}
    # an operator the sampling left out says why
    clone = out_contract("clone", "aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) "
                                  "-> Tensor(a!)", "torch.clone")
    _, left = contract_cases.generate(contracts.Contracts("torch", "2.13.0", "s", (clone,), ()), "out",
                                      TableOf({"fn:clone"}))
    assert left == ["clone: no sampled call (torch.clone(x, out=...) raises TypeError)"]


def test_a_hostile_sampled_call_is_a_step_the_loader_refuses_and_nothing_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.declared import packaged

    marker = tmp_path / "ran"
    monkeypatch.setattr(out_calls, "DATA", sampled_file(
        tmp_path, call=f"r = __import__('os').system('touch {marker}')"))
    with pytest.raises(ValueError, match="the generated cases do not load:\n"):
        contract_cases.write(tmp_path, packaged(), "out", lambda text: None)
    assert not marker.exists() and not (tmp_path / contract_cases.FILES["out"]).exists()


def test_sampling_fills_a_schema_by_type_and_says_why_torch_refuses_a_call() -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    import torch

    sin = out_contract("sin", "aten::sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "torch.sin")
    entry = out_calls.sample_one(torch, {}, sin)
    assert entry["call"] == "r = sin(x, out=o)" and entry["values"] is True
    assert entry["outs"] == [{"name": "o", "shape": [2, 3], "dtype": "float32"}]
    assert entry["given"] == {"x": "{data: [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], dtype: float32}"}
    rand = out_contract("rand", "aten::rand.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)", "torch.rand")
    entry = out_calls.sample_one(torch, {}, rand)
    assert entry["call"] == "r = rand([2, 3], out=o)" and entry["values"] is False  # random: no values expected
    clone = out_contract("clone", "aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) "
                                  "-> Tensor(a!)", "torch.clone")
    with pytest.raises(out_calls.Inexpressible, match=r"torch.clone\(x, out=...\) raises TypeError: clone\(\) got an "
                                                      r"unexpected keyword argument 'out'; it has no OpInfo"):
        out_calls.sample_one(torch, {}, clone)


def test_the_other_fills_are_small_ordered_and_never_the_first() -> None:
    assert out_calls.FILL == out_calls.Fill(((2, 3),), (1,), False) and out_calls.FILL not in out_calls.FILLS
    assert len(set(out_calls.FILLS)) == len(out_calls.FILLS)
    assert out_calls.FILLS[:3] == (out_calls.Fill(((2, 3),), (1,), True), out_calls.Fill(((2, 3),), (1, 1), False),
                                   out_calls.Fill(((2, 3),), (1, 1), True))  # the first's shapes come first
    for fill in out_calls.FILLS:
        assert all(len(shape) and 1 <= len(shape) <= 5 for shape in fill.shapes) and ":" not in fill.label()
        for position in range(3):  # each tensor small, its data of its shape, the ints non-negative
            size = 1
            for n in fill.shape(position):
                size *= n
            assert size <= 32
            for domain in ("float", "from_one", "int"):
                data = out_calls._data(fill, position, domain)
                for n in fill.shape(position):
                    assert isinstance(data, list) and len(data) == n
                    data = data[0]
    assert out_calls._data(out_calls.Fill(((3,),)), 0, "int") == [1, 2, 3]
    assert out_calls._data(out_calls.Fill(((2, 2), (2, 2, 2))), 1, "float") == [[[0.8, 0.9], [1.0, 1.1]],
                                                                                [[1.2, 1.3], [1.4, 1.5]]]
    assert out_calls.Fill(((2, 2),), (1, 1), True).label() == ("tensors 2x2; int lists [1, 1]; a number for an "
                                                              "optional Scalar")


def test_an_operator_the_first_fill_leaves_out_takes_the_first_other_fill_torch_runs() -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    import torch

    addbmm = out_contract("addbmm", "aten::addbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                                    "Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", "torch.addbmm")
    entry = out_calls.sample_one(torch, {}, addbmm)  # (n,p) + (b,n,m) x (b,m,p): 2x2, then 2x2x2 twice
    assert entry["call"] == "r = addbmm(x, y, z, out=o)" and entry["outs"][0]["shape"] == [2, 2]
    assert entry["given"]["x"] == "{data: [[0.1, 0.2], [0.3, 0.4]], dtype: float32}"
    assert entry["source"].startswith("its schema (tensors 2x2, then 2x2x2): aten::addbmm.out(")
    clip = out_contract("clip", "aten::clip.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) "
                                "-> Tensor(a!)", "torch.clip")
    told: list[str] = []
    entry = out_calls.sample_one(torch, {}, clip, told.append)  # clip(x) refuses: min or max
    assert entry["call"] == "r = clip(x, 0.5, out=o)" and entry["values"] is True
    assert told and told[0].startswith("torch.clip(x, out=...) raises RuntimeError: torch.clamp: At least one")
    slogdet = out_contract("slogdet", "aten::slogdet.out(Tensor self, *, Tensor(a!) sign, Tensor(b!) logabsdet) -> "
                                      "(Tensor(a!) sign, Tensor(b!) logabsdet)", "torch.slogdet")
    assert out_calls.sample_one(torch, {}, slogdet)["call"] == "r, r1 = slogdet(x, out=(o, o1))"  # square: 2x2
    sin = out_contract("sin", "aten::sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "torch.sin")
    told.clear()
    assert out_calls.sample_one(torch, {}, sin, told.append)["source"] == "its schema: " + sin.overloads[0].schema
    assert told == []  # control: the first fill gives a call, no other fill is tried


def test_a_crash_in_another_fill_keeps_why_the_first_gave_no_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import subprocess
    from types import SimpleNamespace

    names = ["a", "b", "c"]
    mark, version = out_calls.MARK, out_calls.MARK + json.dumps({"version": "2.13.0"})

    def run(command: list[str], **_: Any) -> Any:
        start = int(command[-1])
        if start == 0:  # a's call; b's first fill refused, then the process dies in another fill
            lines = [version, mark + json.dumps({"call": {"name": "a"}}),
                     mark + json.dumps({"pending": {"name": "b", "reason": "b refuses"}})]
            return SimpleNamespace(stdout="\n".join(lines), stderr="", returncode=-11)
        if start == 2:  # c crashes in its first fill
            return SimpleNamespace(stdout=version, stderr="", returncode=-11)
        raise AssertionError(start)

    monkeypatch.setattr(subprocess, "run", run)
    declared = SimpleNamespace(of_kind=lambda kind: [SimpleNamespace(name=n) for n in names])
    document = out_calls.sample(declared)
    assert document["left"] == [
        {"name": "b", "reason": "b refuses; a call of another fill ends the process (exit status -11)"},
        {"name": "c", "reason": "a call filled from its schema ends the process (exit status -11): torch crashes "
                                "on it"}]


def test_a_warning_at_the_step_a_framework_raises_is_not_expected_of_it() -> None:
    gen, case = generated_case(out_contract("add", "aten::add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
                                                   "Tensor(a!)", "torch.add"))
    warning = {"at": 1, "message": "UserWarning: An output with one or more elements was resized"}
    torch = Observation("torch", "1.0", observed={}, warning=warning)
    raised = {"at": 1, "kind": "other", "type": "BackendCompilerFailed", "message": "expand: too few dimensions"}
    compiled = Observation("torch_compile", "1.0", observed={}, error=raised, warning=warning)
    shared, overrides = contract_cases.against_torch(case, [torch, compiled], {})
    from conformance.tools.observe import WARNING_KEY

    assert shared[WARNING_KEY] == warning and overrides["torch_compile"][WARNING_KEY] is None
    warned = Observation("numpy", "1.0", observed={}, warning=warning)  # control: it warned and ran: as torch
    _, overrides = contract_cases.against_torch(case, [torch, warned], {})
    assert "numpy" not in overrides


def no_declared_operators(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's contracts data and the installed torch both declaring no operator, and the
    sampled calls the file sampled_file writes: what the two checks below start from."""
    monkeypatch.setattr(contracts, "introspect", lambda: {"version": "x", "operators": []})
    monkeypatch.setattr(contracts, "DATA", tmp_path / "torch.yaml")
    contracts.DATA.write_text(contracts.dump(contracts.build({"version": "x", "operators": []})), encoding="utf-8")
    monkeypatch.setattr(out_calls, "DATA", sampled_file(tmp_path))


def test_the_check_refuses_sampled_calls_that_are_not_what_the_installed_torch_samples(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    from conformance.tools.commands import contracts as command

    no_declared_operators(tmp_path, monkeypatch)
    monkeypatch.setattr(out_calls, "sample", lambda declared: {"calls": [], "left": []})
    (problem,) = command._not_what_the_frameworks_declare(contracts.read())
    assert problem == (f"{out_calls.DATA} is not what the installed torch samples (python -m "
                       "conformance.tools.out_calls --sample writes it)")
    monkeypatch.setattr(out_calls, "sample", lambda declared: out_calls.yaml.safe_load(out_calls.DATA.read_text()))
    assert command._not_what_the_frameworks_declare(contracts.read()) == []  # control: what it samples


def test_a_compiled_refusal_with_a_known_upstream_issue_says_so_in_its_reason() -> None:
    gen, case = generated_case(out_contract("add", "aten::add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
                                                   "Tensor(a!)", "torch.add"))
    failed = {"at": 1, "kind": "other", "type": "torch._dynamo.exc.BackendCompilerFailed",
              "message": "expand: the requested shape has too few dimensions!"}
    other = {"at": 1, "kind": "other", "type": "RuntimeError", "message": "something else"}
    text = contract_cases.case_text(gen, case, [Observation("torch", "1.0", observed={}),
                                                Observation("torch_compile", "1.0", observed={}, error=failed)],
                                    frozenset(), [])
    assert "torch.compile fails to compile the same call. Related upstream: https://github.com/pytorch/pytorch/" \
           "issues/110699" in text
    text = contract_cases.case_text(gen, case, [Observation("torch", "1.0", observed={}),
                                                Observation("torch_compile", "1.0", observed={}, error=other)],
                                    frozenset(), [])
    assert "torch_compile:" in text and "Related upstream" not in text  # control: another error


def test_the_check_names_a_malformed_paddle_data_file_as_a_problem(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    from conformance.tools import paddle_contracts
    from conformance.tools.commands import contracts as command

    no_declared_operators(tmp_path, monkeypatch)
    monkeypatch.setattr(out_calls, "sample", lambda declared: out_calls.yaml.safe_load(out_calls.DATA.read_text()))
    forged = tmp_path / "paddle.yaml"
    forged.write_text("framework: paddle\n", encoding="utf-8")
    monkeypatch.setattr(paddle_contracts, "DATA", forged)
    (problem,) = command._not_what_the_frameworks_declare(contracts.read())
    assert problem == f"{forged}: not what --write writes (missing or malformed 'operators')"
