"""The conformance adapter for tinytensor, registered as framework ``minimal``.

A deliberately small but complete adapter (see docs/adapters.md): a handful of operations,
the memory probes for a tensor type that is not an ndarray, errors mapped to the neutral
kinds. Every case that uses an operation outside its table is *not applicable* on
``minimal``. Importing this module imports no framework: tinytensor is imported in
:meth:`MinimalAdapter.load`.
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.base import (
    NUMPY_CONVERSIONS,
    NUMPY_ERRORS,
    Adapter,
    Layout,
    NotApplicable,
    Operation,
    absent,
    attribute,
    passthrough,
)

_NO_AUTOGRAD = "tinytensor has no autograd"


def _tt() -> Any:
    """The framework module, imported on first use."""
    from extra_adapter import tinytensor

    return tinytensor


def _shape(args: tuple) -> tuple:
    """x.reshape(2, 3) and x.reshape((2, 3)) alike, like torch."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)


class MinimalAdapter(Adapter):
    name = "minimal"  # must equal the entry point's name
    module = "extra_adapter.tinytensor"  # checked with find_spec, not imported
    distribution = "minimal-adapter"  # its version comes from this distribution's metadata
    install_hint = "put tests/ and a minimal_adapter dist-info on PYTHONPATH (tests/test_extra_adapter.py)"
    title = "tinytensor"  # the framework, in words
    report_rank = 25  # its column in the reports: after torch (10) and Paddle (20), before NumPy (30)
    # capabilities (the base's defaults, written out): no autograd, the CPU only, no DLPack,
    # mutable arrays
    autograd = False
    device_kinds = ("cpu",)
    dlpack_export = dlpack_import = False
    immutable = None
    unobservable = frozenset({"version_change", "grad", "requires_grad", "is_leaf"})
    error_patterns = NUMPY_ERRORS  # tinytensor raises NumPy's exceptions

    def load(self) -> None:
        _tt()

    def operations(self) -> dict[str, Operation]:
        tt = _tt  # a function: the table is built without importing tinytensor
        ops: dict[str, Operation] = {
            "method:reshape": lambda x, *s: x.reshape(*_shape(s)),
            "method:transpose": passthrough("transpose"),
            "method:copy": passthrough("copy"),
            "method:clone": lambda x: x.copy(),  # tinytensor's copy() is clone()'s counterpart
            "method:numpy": passthrough("numpy"),
            "attr:T": attribute("T"),
            "attr:shape": attribute("shape"),
            "fn:tensor": lambda data, dtype=None: tt().tensor(data, dtype=dtype),
            "fn:from_numpy": lambda a: tt().from_numpy(a),
            # listed with a reason instead of left out: the item says what to use instead
            "method:view": absent("tinytensor has no view(); reshape() returns a view where the strides allow"),
            "method:add_": absent("tinytensor has no in-place add_(); the counterpart is x += y"),
        }
        ops.update(NUMPY_CONVERSIONS)  # fn:asarray, fn:array: NumPy's conversion of a Tensor
        return ops

    # ---- inputs

    def make_input(self, spec: Any, device: str) -> Any:
        if spec.requires_grad:
            raise NotApplicable(f"{_NO_AUTOGRAD} (input {spec.name!r} requires grad)")
        if spec.dtype == "bfloat16":
            raise NotApplicable(f"tinytensor has no bfloat16 (input {spec.name!r})")
        return super().make_input(spec, device)

    def tensor_from_numpy(self, array: Any, spec: Any, device: str) -> Any:
        return _tt().from_numpy(array)  # the array is fresh: the tensor may keep it

    # ---- probes: Tensors here, NumPy arrays through the base class

    def _is_tensor(self, obj: Any) -> bool:
        return isinstance(obj, _tt().Tensor)  # called after setup(): the import is done

    def is_array(self, obj: Any) -> bool:
        return self._is_tensor(obj) or super().is_array(obj)

    def to_numpy(self, obj: Any) -> Any:
        return super().to_numpy(obj.numpy() if self._is_tensor(obj) else obj)

    def layout(self, obj: Any) -> Layout:
        return super().layout(obj.numpy() if self._is_tensor(obj) else obj)

    # dtype_name, shape_of: the base reads .dtype and .shape, which Tensor has.
    # same_allocation, overlaps: the base compares self.layout() of both.
    # probe_fill, probe_restore: the base writes obj[...] = value, which Tensor supports.
    # grad, requires_grad, is_leaf, version_of: the base's None; declared unobservable above.
