"""Paddle's declared alias contracts (conformance/tools/paddle_contracts.py,
conformance/data/contracts/paddle.yaml): what the data keeps and excludes, the reader's
errors, the vocabulary keys and what the corpus reaches."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conformance import registry
from conformance.load.reader import load_text
from conformance.tools import paddle_contracts


def _fn() -> None:
    """A callable stand-in."""


PADDLE = (("paddle.Tensor", SimpleNamespace(abs_=_fn, flatten=_fn, flatten_=_fn)),
          ("paddle", SimpleNamespace(erf_=_fn, flatten=_fn, batch_norm=_fn)),
          ("paddle.nn.functional", SimpleNamespace(relu_=_fn)))
FOUND = [
    ("ops.yaml", {"op": "abs", "args": "(Tensor x)", "output": "Tensor(out)", "inplace": "(x -> out)"}),
    ("ops.yaml", {"op": "erf", "args": "(Tensor x)", "output": "Tensor(out)", "inplace": "(x -> out)"}),
    ("ops.yaml", {"op": "flatten", "args": "(Tensor x, int start_axis = 1, int stop_axis = 1)",
                  "output": "Tensor(out)", "inplace": "(x -> out)", "view": "(x -> out)"}),
    ("ops.yaml", {"op": "sgd_", "args": "(Tensor param)", "output": "Tensor(param_out)",
                  "inplace": "(param -> param_out)"}),
    ("ops.yaml", {"op": "batch_norm", "args": "(Tensor x)", "output": "Tensor(out), Tensor(mean_out)",
                  "view": "(mean -> mean_out)"}),
]


def test_each_map_is_a_contract_with_its_spellings_and_the_rest_are_excluded_with_why() -> None:
    document = paddle_contracts.build(FOUND, "3.3.1", PADDLE)
    kept = [(o["kind"], o["name"], tuple(o["spellings"])) for o in document["operators"]]
    assert kept == [("view", "flatten", ("paddle.Tensor.flatten", "paddle.flatten")),
                    ("inplace", "abs", ("paddle.Tensor.abs_",)), ("inplace", "erf", ("paddle.erf_",)),
                    ("inplace", "flatten", ("paddle.Tensor.flatten_",))]
    reasons = {(e["kind"], e["name"]): e["reason"] for e in document["excluded"]}
    assert reasons[("inplace", "sgd_")].startswith("no Python spelling: no sgd_ on paddle.Tensor")
    assert reasons[("view", "batch_norm")].startswith("no map names the first output 'out'")
    assert "not necessarily the v3.3.1 tag" in document["source"]["note"]


def test_the_spellings_are_vocabulary_keys_and_torch_names_of_a_method_too() -> None:
    contract = {"spellings": ["paddle.Tensor.equal_", "paddle.nn.functional.relu_"]}
    assert paddle_contracts.keys(contract) == ("method:equal_", "fn:relu_")
    assert paddle_contracts.keys(contract, {"eq_": "equal_", "ne_": "not_equal_"}) == (
        "method:equal_", "method:eq_", "fn:relu_")


def write(tmp_path: Path, document: dict) -> Path:
    path = tmp_path / "paddle.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_the_reader_refuses_what_write_does_not_make(tmp_path: Path) -> None:
    document = paddle_contracts.build(FOUND, "3.3.1", PADDLE)
    assert paddle_contracts.read(write(tmp_path, document))["operators"] == document["operators"]
    with pytest.raises(paddle_contracts.PaddleContractsError, match=r"cannot be read"):
        paddle_contracts.read(tmp_path / "missing.yaml")
    document["operators"][0]["spellings"] = ["os.system"]
    with pytest.raises(paddle_contracts.PaddleContractsError, match=r"operator 'flatten': .* paddle spellings"):
        paddle_contracts.read(write(tmp_path, document))
    del document["operators"]
    with pytest.raises(paddle_contracts.PaddleContractsError, match=r"not what --write writes \(missing or "
                                                                    r"malformed 'operators'\)"):
        paddle_contracts.read(write(tmp_path, document))


CASES = """\
cases:
  - id: inplace.abs_.demo
    title: t
    given: {x: [1.0, -2.0]}
    steps: ["r = x.abs_()"]
    expect: {shares_memory: {r & x: true}, same_object: {r & x: true}, version_change: {x: 1}}
"""


def test_a_contract_is_reached_by_a_case_calling_it_on_paddle_and_asserting_identity() -> None:
    document = paddle_contracts.build(FOUND, "3.3.1", PADDLE)
    cases = load_text(CASES, "cases/t.yaml", registry.vocabulary()).cases
    lines = paddle_contracts.reach(document, cases)
    assert lines[0] == "view: 2 declared, 1 with a Python spelling, 0 reached by the corpus"
    assert lines[2] == "inplace: 4 declared, 3 with a Python spelling, 1 reached by the corpus"
    assert any(line.startswith("  erf (fn:erf_): ") for line in lines)  # control: no case calls it


def test_the_committed_data_is_what_the_installed_paddle_spells() -> None:
    if importlib.util.find_spec("paddle") is None:
        pytest.skip("paddle is not installed")
    document = paddle_contracts.read()
    assert paddle_contracts.stale(document) == []
    document["operators"][0]["spellings"] = ["paddle.nothing_here"]
    (problem,) = paddle_contracts.stale(document)
    assert "spelled [" in problem and "not ['paddle.nothing_here']" in problem
