"""The MindSpore adapter against the real framework (skipped where it is not installed)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conformance.adapters.mindspore_adapter import MindsporeAdapter


def test_importing_the_adapter_imports_no_mindspore() -> None:
    code = ("import sys; from conformance.adapters.mindspore_adapter import MindsporeAdapter; "
            "MindsporeAdapter(); print('mindspore' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "False", run.stderr[-2000:]


@pytest.fixture(scope="module")
def adapter() -> MindsporeAdapter:
    pytest.importorskip("mindspore")
    a = MindsporeAdapter()
    a.setup()
    return a


def _t(adapter: MindsporeAdapter, values: list) -> object:
    return adapter.tensor_from_numpy(np.array(values, np.float32), type("S", (), {"dtype": "float32"})(), "cpu")


def test_probes_see_a_view_share_memory_and_a_copy_not(adapter: MindsporeAdapter) -> None:
    x = _t(adapter, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    col = x[:, 1]
    assert adapter.overlaps(col, x) and adapter.same_allocation(col, x)
    flipped = x.flip([0])  # a copy
    assert not adapter.overlaps(flipped, x)
    # the behaviour probe's write goes through the view's own elements and is seen in x
    adapter.probe_fill(col, 7.25)
    assert adapter.to_numpy(x).tolist() == [[1.0, 7.25, 3.0], [4.0, 7.25, 6.0]]
    adapter.probe_restore(col, np.array([2.0, 5.0], np.float32))
    assert adapter.to_numpy(x).tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_asnumpy_of_a_contiguous_tensor_aliases_it(adapter: MindsporeAdapter) -> None:
    x = _t(adapter, [1.0, 2.0, 3.0])
    a = x.asnumpy()
    assert adapter.overlaps(a, x)
    a[0] = 10.0
    assert adapter.to_numpy(x)[0] == 10.0
    # to_numpy is a copy: writing into it never reaches the tensor
    c = adapter.to_numpy(x)
    c[1] = 99.0
    assert adapter.to_numpy(x)[1] == 2.0


def test_from_numpy_shares_the_array(adapter: MindsporeAdapter) -> None:
    a = np.array([1.0, 2.0], np.float32)
    t = adapter.ops["fn:from_numpy"](a)
    assert adapter.overlaps(t, a) and adapter.dtype_name(t) == "float32"


def test_bfloat16_round_trips_through_the_probes(adapter: MindsporeAdapter) -> None:
    spec = type("S", (), {"dtype": "bfloat16"})()
    t = adapter.tensor_from_numpy(np.array([1.0, 2.0], np.float32), spec, "cpu")
    assert adapter.dtype_name(t) == "bfloat16"
    adapter.probe_fill(t, -3.5)
    assert adapter.to_numpy(t).tolist() == [-3.5, -3.5]


def test_errors_are_classified_and_cleaned(adapter: MindsporeAdapter) -> None:
    x = _t(adapter, [1.0, 2.0])
    with pytest.raises(RuntimeError) as info:  # no such kernel on the CPU build: raised by the call
        x.zero_()
    assert adapter.classify_error(info.value) == "other"
    assert "C++ Call Stack" not in adapter.error_message(info.value)
    with pytest.raises(TypeError) as info:
        adapter.ops["fn:add"](x, x, out=x)
    assert adapter.classify_error(info.value) == "type_error"


def test_gradients_are_functional(adapter: MindsporeAdapter) -> None:
    # no tensor-level autograd: the table has no backward(), which the engine reads as
    # mindspore.grad of the steps before it (conformance/run/gradients.py)
    assert adapter.lacks("method:backward") and "mindspore.grad" in adapter.lacks("method:backward")
    assert not adapter.autograd and "mindspore.grad" in (adapter.functional_gradient or "")
    assert {"requires_grad", "is_leaf"} <= adapter.unobservable and "grad" not in adapter.unobservable
    x, k = _t(adapter, [1.0, 2.0]), _t(adapter, [3.0, 4.0])
    (gx,) = adapter.gradient(lambda x, k: (x * x * k).sum(), [x, k], [1])
    assert gx.asnumpy().tolist() == [1.0, 4.0]
    gx, gk = adapter.gradient(lambda x, k: x * k, [x, k], [0, 1], _t(adapter, [1.0, 10.0]))
    assert gx.asnumpy().tolist() == [3.0, 40.0] and gk.asnumpy().tolist() == [1.0, 20.0]
    # no_grad: what runs inside the block is not differentiated

    def loss(x: object, k: object) -> object:
        y = x * x  # type: ignore[operator]
        with adapter.ops["block:no_grad"]():
            z = x * 2  # type: ignore[operator]
        return (y + z).sum()

    (gx,) = adapter.gradient(loss, [x, k], [0])
    assert gx.asnumpy().tolist() == [2.0, 4.0]


def test_load_names_the_paddle_import_order_problem() -> None:
    pytest.importorskip("mindspore")
    code = ("import sys; sys.modules.setdefault('paddle', type(sys)('paddle')); "
            "from conformance.adapters.mindspore_adapter import MindsporeAdapter\n"
            "try:\n    MindsporeAdapter().setup()\nexcept ImportError as e:\n    print('refused:', e)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "refused:" in run.stdout and "dnnl_threadpool_interop_stream_create" in run.stdout, run.stderr[-2000:]
