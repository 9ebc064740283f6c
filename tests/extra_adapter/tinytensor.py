"""tinytensor: a toy "framework" for the adapter example (tests/extra_adapter/minimal.py).

A :class:`Tensor` holds a NumPy array and never copies it on its own: basic indexing,
``reshape()`` (where the strides allow), ``transpose()``, ``.T`` and ``numpy()`` share memory
with the tensor; ``copy()`` and advanced indexing copy. Python operators work as on NumPy
arrays (``+=`` writes in place). There is no autograd, no version counter, no device but the
CPU, and no in-place method. The adapter imports this module only in its ``load()``: the
test checks that collecting cases never imports it.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np


def _unwrap(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, tuple):
        return tuple(_unwrap(v) for v in value)
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def _wrap(value: Any) -> Any:
    return Tensor(value) if isinstance(value, np.ndarray) else value


class Tensor:
    __slots__ = ("_data",)

    def __init__(self, data: np.ndarray) -> None:
        self._data = data  # shared, never copied here

    # ---- metadata
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def T(self) -> Tensor:
        return Tensor(self._data.T)

    # ---- methods
    def reshape(self, *shape: int) -> Tensor:
        return Tensor(self._data.reshape(shape))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return Tensor(self._data.swapaxes(dim0, dim1))

    def copy(self) -> Tensor:
        return Tensor(self._data.copy())

    def numpy(self) -> np.ndarray:
        return self._data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy:
            return np.array(self._data, dtype=dtype, copy=True)
        return np.asarray(self._data, dtype=dtype)

    # ---- indexing
    def __getitem__(self, index: Any) -> Any:
        return _wrap(self._data[_unwrap(index)])

    def __setitem__(self, index: Any, value: Any) -> None:
        self._data[_unwrap(index)] = _unwrap(value)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"tinytensor.Tensor({self._data.tolist()!r}, dtype={self._data.dtype})"


def _binary(op: Any) -> Any:
    def method(self: Tensor, other: Any) -> Any:
        return _wrap(op(self._data, _unwrap(other)))

    return method


def _reflected(op: Any) -> Any:
    def method(self: Tensor, other: Any) -> Any:
        return _wrap(op(_unwrap(other), self._data))

    return method


def _inplace(op: Any) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        op(self._data, _unwrap(other))  # NumPy's in-place operator writes into the array
        return self

    return method


def _unary(op: Any) -> Any:
    def method(self: Tensor) -> Tensor:
        return _wrap(op(self._data))

    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor"):
    _op = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    setattr(Tensor, f"__{_name}__", _binary(_op))
    setattr(Tensor, f"__r{_name}__", _reflected(_op))
    setattr(Tensor, f"__i{_name}__", _inplace(getattr(operator, "i" + _name)))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Tensor, f"__{_name}__", _binary(getattr(operator, _name)))
for _name in ("neg", "pos", "invert"):
    setattr(Tensor, f"__{_name}__", _unary(getattr(operator, _name)))
Tensor.__hash__ = None  # type: ignore[assignment]  # == is elementwise


def tensor(data: Any, dtype: Any = None) -> Tensor:
    """A new tensor holding a copy of ``data``."""
    return Tensor(np.array(_unwrap(data), dtype=dtype))


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor over ``array``'s memory (no copy)."""
    return Tensor(array)
