"""The ``frozen`` framework: NumPy whose every array is read-only, a stand-in for a framework
whose arrays are immutable (JAX, TensorFlow), for tests/test_immutable.py.

Every array a case holds is frozen: the inputs (``kind: ndarray`` ones too: in this
framework a NumPy array is the framework's array) and whatever an entry of the operation
table returns, Python's operators (``op:add``, ``op:getitem``, ...) included. A mutation
then meets NumPy's own refusal, ``ValueError: assignment destination is read-only`` (item
assignment), ``output array is read-only`` (augmented assignment, ``out=``), which the
adapter declares once as its framework's refusal (``immutable``). Nothing else differs from
the NumPy adapter. Importing this module imports no framework.
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.base import Immutability, Operation
from conformance.adapters.numpy_adapter import NumpyAdapter


def _freeze(value: Any) -> Any:
    """Make ``value`` read-only, if it is an array, or the arrays in it if it is a list or
    tuple (split() results); return it."""
    import numpy as np

    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, np.ndarray):
                item.flags.writeable = False
    return value


def _freezing(op: Operation) -> Operation:
    """The entry, with its result frozen. ``absent()`` entries are kept as they are (the
    engine asks them why they are not applicable without calling them)."""
    if hasattr(op, "not_applicable"):
        return op

    def call(*args: Any, **kwargs: Any) -> Any:
        return _freeze(op(*args, **kwargs))

    call.__name__ = getattr(op, "__name__", "op")
    return call


class FrozenAdapter(NumpyAdapter):
    overrides_from = None  # a probe: no framework's case overrides apply to it
    name = "frozen"
    title = "NumPy, frozen"
    distribution = "frozen-adapter"
    # NumPy refusing to write into a read-only array, wherever a step meets it
    immutable = Immutability(raises=(r"^ValueError: .*read-only",))

    def operation_table(self) -> dict[str, Operation]:
        return {key: _freezing(op) for key, op in super().operation_table().items()}

    def make_input(self, spec: Any, device: str) -> Any:
        return _freeze(super().make_input(spec, device))
