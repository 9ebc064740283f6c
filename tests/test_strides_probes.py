"""The adapters' ``strides_of`` (the ``strides`` kind, issue 38) against the real frameworks
(each skipped where it is not installed): element strides, not bytes, as each framework
exposes them, for a transposed view, an expanded view, a slice with a step and a copy; JAX
and TensorFlow expose none and declare the kind unobservable."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

SPEC = type("Spec", (), {"dtype": "float32", "requires_grad": False})()


def _adapter(name: str) -> Any:
    from conformance import registry

    adapter = registry.adapter_class(name)()
    adapter.setup()
    return adapter


def _b(adapter: Any) -> Any:
    return adapter.tensor_from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), SPEC, "cpu")


def test_numpy_strides_are_bytes_over_itemsize() -> None:
    adapter = _adapter("numpy")
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert adapter.strides_of(b) == (3, 1) and adapter.strides_of(b.T) == (1, 3)
    assert adapter.strides_of(b[:, ::2]) == (3, 2) and adapter.strides_of(b[::-1]) == (-3, 1)
    assert adapter.strides_of(np.broadcast_to(b[0], (2, 3))) == (0, 1)
    assert adapter.strides_of(np.ascontiguousarray(b.T)) == (2, 1)
    assert "strides" not in adapter.unobservable


def test_torch_strides_are_stride() -> None:
    torch = pytest.importorskip("torch")
    adapter = _adapter("torch")
    b = _b(adapter)
    assert adapter.strides_of(b) == (3, 1) and adapter.strides_of(b.t()) == (1, 3)
    assert adapter.strides_of(b[:, ::2]) == (3, 2) and adapter.strides_of(b[0].expand(2, 3)) == (0, 1)
    assert adapter.strides_of(b.t().contiguous()) == (2, 1) and adapter.strides_of(b.t().reshape(6)) == (1,)
    assert adapter.strides_of(b.to(torch.float64).t()) == (1, 3)  # elements whatever the itemsize
    assert adapter.strides_of(b.to_sparse()) is None  # a sparse tensor has no strides
    assert adapter.strides_of(b.numpy()) == (3, 1)  # a NumPy array in torch's run: NumPy's


def test_paddle_strides_are_get_strides_in_elements() -> None:
    pytest.importorskip("paddle")
    adapter = _adapter("paddle")
    b = _b(adapter)
    assert adapter.strides_of(b) == (3, 1) and adapter.strides_of(b.t()) == (1, 3)
    assert adapter.strides_of(b[:, ::2]) == (3, 2)
    # paddle.expand copies (no stride kernel in 3.3.1): dense, no 0
    assert adapter.strides_of(b[0].expand([2, 3])) == (3, 1)
    assert adapter.strides_of(b.t().reshape([6])) == (1,)
    assert tuple(b.t().strides) == adapter.strides_of(b.t())  # the property is the same list


def test_mindspore_strides_are_stride_not_the_strides_property() -> None:
    pytest.importorskip("mindspore")
    adapter = _adapter("mindspore")
    b = _b(adapter)
    t = b.T
    assert adapter.strides_of(b) == (3, 1) and adapter.strides_of(t) == (1, 3)
    # MindSpore's strides property gives the bytes of a contiguous tensor of t's shape, not t's layout
    assert tuple(t.strides) == (8, 4)
    assert adapter.strides_of(b[:, ::2]) == (3, 2)
    assert adapter.strides_of(b[0].broadcast_to((2, 3))) == (0, 1)
    assert adapter.strides_of(t.contiguous()) == (2, 1)


def test_array_api_strict_strides_are_its_numpy_arrays() -> None:
    xp = pytest.importorskip("array_api_strict")
    adapter = _adapter("array_api_strict")
    b = _b(adapter)
    assert adapter.strides_of(b) == (3, 1) and adapter.strides_of(b.T) == (1, 3)
    assert adapter.strides_of(b[:, ::2]) == (3, 2)
    assert adapter.strides_of(xp.broadcast_to(b[0, ...], (2, 3))) == (0, 1)


@pytest.mark.parametrize(("name", "module"), [("jax", "jax"), ("tensorflow", "tensorflow")])
def test_jax_and_tensorflow_expose_no_strides(name: str, module: str) -> None:
    pytest.importorskip(module)
    adapter = _adapter(name)
    b = _b(adapter)
    assert not [n for n in dir(b) if "stride" in n.lower()]  # no attribute or method to read
    assert adapter.strides_of(b) is None and "strides" in adapter.unobservable
