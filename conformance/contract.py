"""The adapter contract, as types: what the engine, the compiled runner and the assertion kinds
may ask of a framework's adapter (issue 34).

Two protocols, both structural (an adapter does not name them; mypy checks that
``conformance.adapters.base.Adapter`` and :class:`conformance.run.probes.Probes` satisfy them
where they are passed):

- :class:`Probing`: the probes a kind observes through (memory, identity, versions,
  gradients, values), for the run's adapter and, through ``run/probes.py``, for a tensor of
  another framework;
- :class:`FrameworkAdapter`: a framework as the engine runs it: the probes, and its operation
  table, its lifecycle, its isolation between items, how it makes inputs, compiles a case's
  function (a compiled mode) and names the errors its steps raise.

Part of the model layer: it imports no framework and nothing of the suite, so every layer
can name it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Probing(Protocol):
    """The probes (``adapters/base.py``'s ``ArrayProbes`` for NumPy arrays, each framework's
    for its tensors)."""

    @property
    def name(self) -> str: ...

    @property
    def unobservable(self) -> Collection[str]: ...

    def is_array(self, obj: Any) -> bool: ...

    def to_numpy(self, obj: Any) -> Any: ...

    def dtype_name(self, obj: Any) -> str: ...

    def shape_of(self, obj: Any) -> tuple[int, ...]: ...

    def strides_of(self, obj: Any) -> tuple[int, ...] | None:
        """Its element strides (in elements, not bytes), or None where the framework exposes none."""
        ...

    def same_allocation(self, a: Any, b: Any) -> bool: ...

    def recorded_base(self, obj: Any) -> Any: ...

    def overlaps(self, a: Any, b: Any) -> bool: ...

    def grad(self, obj: Any) -> Any: ...

    def requires_grad(self, obj: Any) -> bool | None: ...

    def is_leaf(self, obj: Any) -> bool | None: ...

    def version_of(self, obj: Any) -> int | None: ...

    def probe_fill(self, obj: Any, value: Any) -> None: ...

    def probe_restore(self, obj: Any, snapshot: Any) -> None: ...

    def sentinels(self, obj: Any) -> tuple[Any, Any]: ...


class FrameworkAdapter(Probing, Protocol):
    """A framework as the engine and the compiled runner use it."""

    @property
    def ops(self) -> Mapping[str, Callable[..., Any]]: ...

    @property
    def compiles(self) -> str | None:
        """The framework a compiled mode runs compiled; None for an eager framework."""
        ...

    @property
    def loaded(self) -> bool:
        """Whether the framework has been imported in this process (nothing is imported to
        answer)."""
        ...

    def lineage(self) -> tuple[str, ...]: ...

    def unavailable(self) -> str | None: ...

    def setup(self) -> None: ...

    def warm(self) -> None: ...

    def version(self) -> str | None: ...

    def devices(self) -> list[str]: ...

    def device_unavailable(self, device: str) -> str | None: ...

    def isolation(self, seed: int) -> AbstractContextManager[None]: ...

    def lacks(self, key: str) -> str | None: ...

    def make_input(self, spec: Any, device: str) -> Any: ...

    def compile(self, fn: Any) -> Any: ...

    @property
    def autograd(self) -> bool:
        """Whether the framework has autograd on its tensors (backward(), .grad)."""
        ...

    @property
    def functional_gradient(self) -> str | None:
        """Its functional gradient in words, where it has one instead (jax.grad / jax.vjp)."""
        ...

    def gradient(self, fn: Any, args: list[Any], wrt: Sequence[int], cotangent: Any = None) -> list[Any]: ...

    def refused_mutation(self, exc: BaseException) -> bool: ...

    @property
    def immutable(self) -> object | None:
        """How the framework refuses a mutation where its arrays are immutable (adapters.base
        Immutability); None where they can be changed."""
        ...

    def error_message(self, exc: BaseException) -> str: ...

    def out_of_memory(self, exc: BaseException) -> bool: ...

    def classify_error(self, exc: BaseException) -> str: ...
