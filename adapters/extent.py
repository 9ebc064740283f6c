"""The memory an operation addresses, bounded by the storage it addresses, before the
framework is called (docs/security.md; issue 32).

``as_strided``, ``set_`` and their kin take sizes, strides and an offset from the case and
make a tensor over whatever memory those numbers reach: NumPy's
``np.lib.stride_tricks.as_strided`` and Paddle's ``as_strided`` / ``set_`` check nothing
(measured on NumPy 2 and Paddle 3.3.1: a view 64 elements long over 2 reads the process's
heap, and a write through it damages it), torch's ``set_`` and MindSpore's grow the source's
storage to fit, with memory nobody wrote. Each adapter computes, from the operation's
arguments and the storage it addresses, the elements the result would reach, and this
module refuses the call when they fall outside: as :class:`OutsideStorage`, a
:class:`~conformance.limits.LimitExceeded`, which the engine makes the item's error (the
case asked for something the suite does not run), never the framework's behaviour.

Framework-free: the adapters pass plain integers (sizes, strides and offsets in elements,
the storage's element count), read by each from its framework's own record of the storage
(torch: ``untyped_storage().nbytes()``; Paddle: ``_holder_size()``; NumPy: the memory the
ultimate base owns).
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence, TypeVar

from conformance.limits import LimitExceeded, check_elements

# why a request is refused: the framework would read (and a write through the result would
# write) memory outside the storage ...
READS_OUTSIDE = "it would read memory outside the tensor"
# ... or would grow the storage to fit, whose new elements hold memory nobody wrote, which
# the engine does not track for this operation (conformance.limits.UNINITIALISED_WHEN_GROWN)
GROWS_STORAGE = ("it would reach past the end of the storage: {framework} grows the storage to fit, and the new "
                 "elements hold memory nobody wrote")

# the operations of the vocabulary that address memory by numbers a case gives (sizes,
# strides, an offset) or adopt another tensor's storage: every adapter's entry for one is
# absent() or checks its arguments here first (marked by :func:`bounded`, or made by
# base.passthrough with a bound);
# tests/security/test_storage_bounds.py holds every registered adapter, compiled modes
# included, to that
ADDRESSING = frozenset({"method:as_strided", "method:as_strided_", "fn:as_strided_copy", "method:set_",
                        "method:resize_", "method:resize_as_"})

# bytes per element of the suite's dtypes (model.DTYPES)
DTYPE_SIZES = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2,
               "bfloat16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16}

F = TypeVar("F", bound=Callable[..., Any])


class OutsideStorage(LimitExceeded):
    """An operation would address elements outside the storage it addresses (or elements
    the engine cannot bound); refused before the framework is called."""


def bounded(operation: F) -> F:
    """Mark an operation of an adapter's table as one that checks, here, the memory it
    addresses before it calls the framework (the marker the tests look for)."""
    operation.bounds_storage = True  # type: ignore[attr-defined]
    return operation


def integers(op: str, values: Any, what: str) -> list[int]:
    """``values`` (a size or a stride: a list or tuple of integers) as Python ints; anything
    else is refused, since the memory it would address cannot be bounded."""
    if not isinstance(values, (list, tuple)):
        raise OutsideStorage(f"{op}: {what} {values!r} is not a list of integers: refused before calling the "
                             "framework (the memory it would address cannot be bounded)")
    return [integer(op, v, what) for v in values]


def integer(op: str, value: Any, what: str) -> int:
    if isinstance(value, float) or not hasattr(type(value), "__index__"):
        raise OutsideStorage(f"{op}: {what} {value!r} is not an integer: refused before calling the framework (the "
                             "memory it would address cannot be bounded)")
    return operator.index(value)


def contiguous_strides(size: Sequence[int]) -> list[int]:
    """The strides, in elements, of a contiguous (row-major) tensor of ``size``."""
    strides: list[int] = []
    step = 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def window(offset_bytes: int, storage_bytes: int, itemsize: int) -> tuple[int, int]:
    """A byte offset into a storage of ``storage_bytes`` as (offset, storage) in elements of
    ``itemsize`` bytes, for :func:`check`: where the offset is not a whole number of elements,
    the storage is counted in whole elements from the first one's alignment, so that the
    check stays exact."""
    shift = offset_bytes % itemsize
    return offset_bytes // itemsize, (storage_bytes - shift) // itemsize


def reach(size: Sequence[int], stride: Sequence[int]) -> tuple[int, int] | None:
    """The lowest and highest element, relative to the first one, that a tensor of ``size``
    and ``stride`` covers (negative strides reach below it); None when it has no elements."""
    if any(n == 0 for n in size):
        return None
    low = sum(min(0, (n - 1) * s) for n, s in zip(size, stride))
    high = sum(max(0, (n - 1) * s) for n, s in zip(size, stride))
    return low, high


def check(op: str, size: Any, stride: Any, offset: Any, storage: int, why: str = READS_OUTSIDE,
          note: str = "") -> None:
    """Refuse a tensor of ``size`` and ``stride`` (in elements) whose first element is element
    ``offset`` of a storage of ``storage`` elements, unless every element it covers is in that
    storage. A result with no elements addresses no memory and passes. ``note`` says how the
    framework's numbers were derived from the case's, where they differ."""
    size = integers(op, size, "size")
    stride = integers(op, stride, "stride")
    offset = integer(op, offset, "offset")
    if len(size) != len(stride):
        raise OutsideStorage(f"{op}: size {size} and stride {stride} differ in length: refused before calling the "
                             "framework (the memory it would address cannot be bounded)")
    if any(n < 0 for n in size):
        raise OutsideStorage(f"{op}: size {size} has a negative size: refused before calling the framework (the "
                             "memory it would address cannot be bounded)")
    check_elements(math.prod(size), f"{op}() would make")
    covered = reach(size, stride)
    if covered is None:
        return
    low, high = offset + covered[0], offset + covered[1]
    if low < 0 or high >= storage:
        reached = low if low < 0 else high
        raise OutsideStorage(f"{op}: size {size}, stride {stride}, offset {offset}{note} reach element {reached} "
                             f"of a storage of {storage} elements: refused before calling the framework ({why})")


def check_growth(op: str, size: Any, elements: int, framework: str) -> None:
    """Refuse an operation that would give a tensor of ``elements`` elements a larger
    ``size``: ``framework`` would grow it with memory nobody wrote, which the engine tracks
    for resize_ (limits.UNINITIALISED_WHEN_GROWN) but not for this operation."""
    size = integers(op, size, "size")
    check_elements(math.prod(size), f"{op}() would make")
    if math.prod(size) > elements:
        raise OutsideStorage(f"{op}: size {size} ({math.prod(size):,} elements) grows a tensor of {elements:,} "
                             f"elements: refused before calling the framework (the new elements would hold memory "
                             f"nobody wrote, which the suite tracks for resize_ only; {framework} grows the storage "
                             "to fit)")
