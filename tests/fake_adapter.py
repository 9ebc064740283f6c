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


class FunctionalAdapter(FakeAdapter):
    """The fake with gradients that are functional, as JAX's, TensorFlow's and MindSpore's
    (conformance/run/gradients.py): no backward() in its table, and ``gradient`` by central
    differences in float64 (exact for the polynomials of degree 2 the tests use). It counts
    the gradients it was asked for."""

    name = "functional"
    functional_gradient = "central differences (a test's)"
    unobservable = frozenset({"requires_grad", "is_leaf"})

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def operations(self) -> dict[str, Operation]:
        return {**super().operations(),
                "method:sum": lambda x: x.sum(),
                # x times a random 0/1 mask, from NumPy's global RNG (which the run seeds)
                "method:masked_at_random": lambda x: x * (np.random.rand(*x.shape) < 0.5),
                "method:warn": _warn,
                "method:backward": absent("functional has no backward(): its gradients are functional")}

    def gradient(self, fn: Any, args: list[Any], wrt: Any, cotangent: Any = None) -> list[Any]:
        self.asked += 1
        drawn = np.random.get_state()  # every evaluation draws what one run of fn draws (as a trace does)

        def loss(values: list[Any]) -> float:
            np.random.set_state(drawn)
            out = np.asarray(fn(*values), dtype=np.float64)
            if cotangent is not None:
                return float((out * np.asarray(cotangent, dtype=np.float64)).sum())
            if out.shape != ():
                raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {out.shape}")
            return float(out)

        grads = []
        for i in wrt:
            base = np.asarray(args[i], dtype=np.float64)
            grad = np.zeros_like(base)
            for index in np.ndindex(base.shape):
                for sign in (1, -1):
                    moved = base.copy()
                    moved[index] += sign * 0.5
                    values = list(args)
                    values[i] = moved.astype(args[i].dtype)
                    grad[index] += sign * loss(values)
            grads.append(grad.astype(args[i].dtype))
        return grads


class FunctionalCompiled(FunctionalAdapter):
    """Its compiled mode: a compiler that runs the function as written and counts its compiles."""

    name = "functional_compiled"
    compiles = "functional"

    def compile(self, fn: Any) -> Any:
        self.compiled = getattr(self, "compiled", 0) + 1
        return fn
