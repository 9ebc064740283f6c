"""An in-memory adapter over NumPy arrays for testing the engine without heavy frameworks.

Its ``add_`` writes in place and bumps a version counter kept per allocation; ``leafy_``
raises the way torch does for an in-place op on a leaf. ``LyingAdapter`` reports
no overlap from metadata whatever the truth, to prove that probe disagreement fails a case.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.adapters.base import Adapter, Operation, absent


class FakeAdapter(Adapter):
    name = "fake"
    module = "numpy"
    distribution = "numpy"
    install_hint = "it is always there"
    error_patterns = {"inplace_on_leaf": (r"leaf",)}

    def __init__(self) -> None:
        super().__init__()
        self.versions: dict[int, int] = {}

    def load(self) -> None:
        pass

    def _root(self, a: np.ndarray) -> int:
        while isinstance(a.base, np.ndarray):
            a = a.base
        return id(a)

    def _add_(self, x: np.ndarray, other: Any) -> np.ndarray:
        np.add(x, other, out=x)
        self.versions[self._root(x)] = self.versions.get(self._root(x), 0) + 1
        return x

    def _leafy_(self, x: np.ndarray) -> np.ndarray:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")

    def operations(self) -> dict[str, Operation]:
        return {
            "method:add_": self._add_,
            "method:leafy_": self._leafy_,
            "method:view": lambda x, *s: x.reshape(s, copy=False),
            "method:clone": lambda x: x.copy(),
            "method:warn": _warn,
            "fn:only_elsewhere": absent("fake has no only_elsewhere"),
        }

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        return array

    def version_of(self, obj: Any) -> int | None:
        return self.versions.get(self._root(obj), 0)


def _warn(x: np.ndarray) -> np.ndarray:
    import warnings

    warnings.warn("this op is deprecated", DeprecationWarning, stacklevel=2)
    return x


class LyingAdapter(FakeAdapter):
    name = "liar"

    def overlaps(self, a: Any, b: Any) -> bool:
        return False
