"""Paddle's CPU stride (view) kernels as data (conformance/tools/paddle_strided.py,
conformance/data/contracts/paddle_strided.yaml): which functions are a kernel's spellings, what
the data keeps and excludes, the reader's errors, what the corpus reaches and the check
against the installed Paddle."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from conformance import registry
from conformance.load.reader import load_text
from conformance.tools import paddle_strided

# stand-ins whose source the scan reads; never called
_C_ops = SimpleNamespace()
helper: Any = None


def transpose(x: Any, perm: Any) -> Any:
    if helper:
        out = helper.create_variable()
        return out  # the static graph's variable: neither a spelling nor against one
    return _C_ops.transpose(x, perm)


def reshape(x: Any, shape: Any) -> Any:
    out = _C_ops.reshape(x, shape)
    return out


def squeeze(x: Any, axis: Any = None) -> Any:
    input = x
    if axis is None:
        return x
    return _C_ops.squeeze(input, axis)


def diagonal(*args: Any, **kwargs: Any) -> Any:
    return _C_ops.diagonal(*args, **kwargs)


def pinv(x: Any) -> Any:
    if helper:
        return _C_ops.transpose(x, [1, 0])  # an empty x
    u = _C_ops.svd(x)
    return _C_ops.matmul(u, u)  # another result: pinv is no spelling of transpose


def diagflat(x: Any) -> Any:
    y = _C_ops.flatten(x, 0, -1)
    return _C_ops.diag(y)


def view_as_real(input: Any) -> Any:
    return as_real(x=input)


def as_real(x: Any) -> Any:
    return _C_ops.as_real(x)


def narrow(x: Any, start: int) -> Any:
    return paddle.as_strided(x, [1], [1], start)


paddle = SimpleNamespace(as_strided=None)


def as_strided(x: Any, shape: Any, stride: Any, offset: int = 0) -> Any:
    return _C_ops.as_strided(x, shape, stride, offset)


def test_a_spelling_returns_the_operator_of_its_first_parameter_and_nothing_else() -> None:
    returned = paddle_strided.returned_operators
    assert returned(transpose) == {"transpose"}
    assert returned(reshape) == {"reshape"}
    assert returned(squeeze) == {"squeeze"}  # input = x; return x is neither
    assert returned(diagonal) == {"diagonal"}  # *args passed through
    assert returned(pinv) == set()  # another _C_ops result on another path
    assert returned(diagflat) == set()  # flatten is not what it returns
    assert returned(view_as_real) == {"=as_real"}  # a delegation, resolved by spellings_by_operator
    assert returned(len) == set()  # no Python source


def test_spellings_follow_delegations_to_another_public_function() -> None:
    module = SimpleNamespace(transpose=transpose, pinv=pinv, view_as_real=view_as_real, as_real=as_real,
                             narrow=narrow, as_strided=as_strided, diagflat=diagflat, _hidden=reshape)
    found = paddle_strided.spellings_by_operator((("paddle", module),))
    assert found == {"transpose": ["paddle.transpose"], "as_real": ["paddle.as_real", "paddle.view_as_real"],
                     "as_strided": ["paddle.as_strided", "paddle.narrow"]}


def test_a_kernel_is_its_operator_s_or_its_name_less_strided_and_the_rest_are_excluded_with_why() -> None:
    operators = {"transpose", "split", "index_select_strided"}.__contains__
    spelled = {"transpose": ["paddle.transpose"], "split": ["paddle.split", "paddle.Tensor.split"]}
    document = paddle_strided.build(["transpose", "split_strided", "index_select_strided", "squeeze_with_xshape"],
                                    operators, spelled, "3.3.1")
    assert document["kernels"] == [
        {"name": "split_strided", "operator": "split", "spellings": ["paddle.split", "paddle.Tensor.split"]},
        {"name": "transpose", "operator": "transpose", "spellings": ["paddle.transpose"]}]
    reasons = {e["name"]: e["reason"] for e in document["excluded"]}
    assert reasons["index_select_strided"].startswith("no public function of paddle.Tensor, paddle")
    assert reasons["squeeze_with_xshape"] == ("no operator of paddle._C_ops is named squeeze_with_xshape (a kernel "
                                              "C++ dispatches to)")
    assert "3.3.1" in document["source"]


def write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "paddle_strided.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def document() -> dict[str, Any]:
    return paddle_strided.build(["transpose", "slice"], {"transpose", "slice"}.__contains__,
                                {"transpose": ["paddle.Tensor.transpose", "paddle.transpose"],
                                 "slice": ["paddle.slice"]}, "3.3.1")


def test_the_reader_refuses_what_write_does_not_make(tmp_path: Path) -> None:
    made = document()
    assert paddle_strided.read(write(tmp_path, made))["kernels"] == made["kernels"]
    with pytest.raises(paddle_strided.PaddleStridedError, match=r"cannot be read"):
        paddle_strided.read(tmp_path / "missing.yaml")
    made["kernels"][0]["spellings"] = ["os.system"]
    with pytest.raises(paddle_strided.PaddleStridedError, match=r"kernel 'slice': .* paddle spellings"):
        paddle_strided.read(write(tmp_path, made))
    del made["kernels"]
    with pytest.raises(paddle_strided.PaddleStridedError, match=r"not what --write writes \(missing or "
                                                                r"malformed 'kernels'\)"):
        paddle_strided.read(write(tmp_path, made))


CASES = """\
cases:
  - id: views.transpose.demo
    title: t
    given: {x: {shape: [2, 3], arange: true}}
    steps: ["y = x.transpose(0, 1)"]
    expect: {shares_memory: {y & x: true}}
"""


def test_a_kernel_is_reached_by_a_case_calling_a_spelling_and_asserting_sharing() -> None:
    cases = load_text(CASES, "cases/t.yaml", registry.vocabulary()).cases
    lines = paddle_strided.reach(document(), cases)
    assert lines[0] == "stride kernels: 2 registered for CPU, 2 with a Python spelling, 1 reached by the corpus"
    assert lines[1] == "  slice (fn:slice): no case applies"  # control: no case calls it


def test_the_committed_data_is_what_the_installed_paddle_registers_and_spells() -> None:
    if importlib.util.find_spec("paddle") is None:
        pytest.skip("paddle is not installed")
    committed = paddle_strided.read()
    assert paddle_strided.stale(committed) == []
    committed["kernels"][0]["spellings"] = ["paddle.nothing_here"]
    (problem,) = paddle_strided.stale(committed)
    assert f"kernels {committed['kernels'][0]['name']}: " in problem and "not {" in problem


def test_the_site_shows_nothing_of_a_forged_paddle_data_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance import declared

    made = document()
    monkeypatch.setattr(declared, "PADDLE_DATA", tmp_path / "missing.yaml")  # a file that cannot be read: left out
    monkeypatch.setattr(declared, "PADDLE_STRIDED_DATA", write(tmp_path, made))
    declared.paddle_packaged.cache_clear()
    try:
        version, found = declared.paddle_packaged()
        assert version == "3.3.1" and [d.name for d in found] == ["slice", "transpose"]  # control
        made["kernels"][0]["spellings"] = ["<script>alert(1)</script>"]
        write(tmp_path, made)
        declared.paddle_packaged.cache_clear()
        assert declared.paddle_packaged() == ("", ())
        (tmp_path / "paddle_strided.yaml").write_text("kernels: !!python/object/apply:os.system [echo]\n")
        declared.paddle_packaged.cache_clear()
        assert declared.paddle_packaged() == ("", ())  # the safe loader refuses the tag
    finally:
        declared.paddle_packaged.cache_clear()
