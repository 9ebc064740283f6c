"""The probes the engine observes through: the run's adapter, extended to tensors of other
frameworks that a step produced (``y = torch_from_dlpack(x)`` in Paddle's run).

Each probe asks the adapter that owns the object: the run's adapter for its own tensors and
NumPy arrays, else the registered framework whose tensor it is (``registry.owner``, which
asks only frameworks already imported, so observing never imports one). A relation between
tensors of two frameworks is measured from both layouts: the data pointers, strides and
allocations each owner reports, in the one address space of the process. Everything that is
not a probe (the operation table, the name, ``unobservable``, error classification) is the
run's adapter's.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from conformance import registry
from conformance.adapters.base import allocations_intersect, layouts_overlap
from conformance.contract import FrameworkAdapter, Probing


class Probes:
    """The run's adapter, whose probes answer for any framework's tensor (see the module)."""

    def __init__(self, adapter: FrameworkAdapter) -> None:
        self.adapter = adapter

    def __getattr__(self, name: str) -> Any:
        return getattr(self.adapter, name)

    @property
    def name(self) -> str:
        return self.adapter.name

    @property
    def unobservable(self) -> Collection[str]:
        return self.adapter.unobservable

    def owner(self, obj: Any) -> Any:
        """The adapter whose probes take ``obj``: the run's, or another framework's (its
        tensor), or the run's for anything that is no framework's (its probes say so)."""
        if self.adapter.is_array(obj):
            return self.adapter
        other = registry.owner(obj)
        return self.adapter if other is None else other

    def foreign(self, obj: Any) -> Any:
        """The adapter of another framework whose tensor ``obj`` is, or None."""
        if self.adapter.is_array(obj):
            return None
        other = registry.owner(obj)
        return None if other is None or other.name == self.adapter.name else other

    # ---- one object: its owner's probe

    def is_array(self, obj: Any) -> bool:
        return bool(self.adapter.is_array(obj) or registry.owner(obj) is not None)

    def to_numpy(self, obj: Any) -> Any:
        return self.owner(obj).to_numpy(obj)

    def dtype_name(self, obj: Any) -> str:
        return str(self.owner(obj).dtype_name(obj))

    def shape_of(self, obj: Any) -> tuple[int, ...]:
        return tuple(self.owner(obj).shape_of(obj))

    def strides_of(self, obj: Any) -> tuple[int, ...] | None:
        strides = self.owner(obj).strides_of(obj)
        return None if strides is None else tuple(strides)

    def layout(self, obj: Any) -> Any:
        return self.owner(obj).layout(obj)

    def grad(self, obj: Any) -> Any:
        return self.owner(obj).grad(obj)

    def requires_grad(self, obj: Any) -> bool | None:
        return self.owner(obj).requires_grad(obj)

    def is_leaf(self, obj: Any) -> bool | None:
        return self.owner(obj).is_leaf(obj)

    def version_of(self, obj: Any) -> int | None:
        return self.owner(obj).version_of(obj)

    def sentinels(self, obj: Any) -> tuple[Any, Any]:
        return self.owner(obj).sentinels(obj)

    def probe_fill(self, obj: Any, value: Any) -> None:
        self.owner(obj).probe_fill(obj, value)

    def probe_restore(self, obj: Any, snapshot: Any) -> None:
        self.owner(obj).probe_restore(obj, snapshot)

    def recorded_base(self, obj: Any) -> Any:
        return self.owner(obj).recorded_base(obj)

    # ---- two objects: one owner's probe, or both layouts

    def overlaps(self, a: Any, b: Any) -> bool:
        owner_a, owner_b = self.owner(a), self.owner(b)
        if owner_a is owner_b:
            return bool(owner_a.overlaps(a, b))
        return layouts_overlap(owner_a.layout(a), owner_b.layout(b))

    def same_allocation(self, a: Any, b: Any) -> bool:
        owner_a, owner_b = self.owner(a), self.owner(b)
        if owner_a is owner_b:
            return bool(owner_a.same_allocation(a, b))
        return allocations_intersect(owner_a.layout(a), owner_b.layout(b))


if TYPE_CHECKING:  # mypy: the probes are what a kind observes through
    def _probing(probes: Probes) -> Probing:
        return probes
