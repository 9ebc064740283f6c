"""What a case may make while it runs, and what the suite records of it.

The loader bounds what a case *writes* (file size, nesting, inputs of at most
:data:`MAX_ELEMENTS` elements, step length). These bounds hold for what a case *makes* when
it runs, however it makes it: a constructor (``zeros(n)``), a name bound to a constant
(``n = 10`` then ``n ** n ** n`` or ``[0] * n``), an operation that broadcasts or stacks,
or a chain of views. The engine applies them around every operation call
(:mod:`conformance.run.engine`); a case that breaks one is refused as an error of its item,
never recorded as the framework's behaviour. Framework-free: this module knows operation
keys and plain Python values only.

Also here: which operations hand out memory that nobody wrote (its bytes are whatever the
allocator had: addresses, earlier items' data), so that their values are never observed,
and the bounds on what an observation may hold.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

# elements of one tensor, whether written under 'given', made by a constructor or produced
# by any operation (views included: a view of 10^10 elements is one .clone() away from
# allocating them)
MAX_ELEMENTS = 100_000
# bits of a Python integer a step computes: float64's range needs 1,024; 10 ** 10 ** 10
# would need 3.3e10 and hours
MAX_INT_BITS = 1_100
# items of a Python list or tuple a step computes ([0] * n, a + a)
MAX_SEQUENCE_ITEMS = MAX_ELEMENTS
# what an observation keeps of an array's values: the whole of a small one, a digest and
# the first elements of a larger one (the comparison itself always sees every element)
MAX_RECORDED_ELEMENTS = 1_000
RECORDED_HEAD = 10
# characters of an exception message or a warning kept in an outcome, and warnings per step
MAX_MESSAGE_CHARS = 4_000
MAX_WARNINGS_PER_STEP = 20

# Operations that make a tensor of a shape given by their arguments, with the position of
# the first shape argument (after the receiver, for methods): the request is checked before
# the framework sees it, since the allocation itself is what must not happen. expand() and
# broadcast_to() are views in torch and NumPy but allocate in Paddle (measured on 3.3.1:
# x.expand(10**5, 10**5) asks for 40 GB).
SHAPE_ARGUMENTS: dict[str, int] = {"fn:zeros": 0, "fn:ones": 0, "fn:empty": 0, "method:resize_": 1,
                                   "method:expand": 1, "method:broadcast_to": 1}
# Operations whose result holds memory nobody wrote: empty() always; resize_() when it
# grows the tensor past the elements it had (the new tail is uninitialised).
UNINITIALISED_ALWAYS = frozenset({"fn:empty"})
UNINITIALISED_WHEN_GROWN = frozenset({"method:resize_"})
# In-place operations that write every element of their receiver, so that it no longer
# holds uninitialised memory afterwards (its views still may: they are not tracked).
WRITES_EVERY_ELEMENT = frozenset({"method:fill_", "method:zero_", "method:copy_", "method:normal_",
                                  "method:uniform_"})

_ARITHMETIC = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_",
                         "xor", "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul",
                         "iand", "ior", "ixor"})


class LimitExceeded(Exception):
    """A case asked for more than the suite allows; the message says what and the bound."""


def shape_request(key: str, args: tuple) -> int | None:
    """The number of elements a shape-taking operation is asked to make, or None when the
    operation takes no shape (or its arguments are not a shape: the framework refuses
    those itself)."""
    start = SHAPE_ARGUMENTS.get(key)
    if start is None:
        return None
    dims: Any = args[start:]
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    if not all(type(d) is int for d in dims):
        return None
    return math.prod(abs(d) for d in dims)


def repeat_request(receiver_elements: int, args: tuple) -> int | None:
    """The elements ``x.repeat(*sizes)`` (torch's repeat, NumPy's tile: the whole tensor tiled)
    is asked to make: the receiver's times the product of the repeats; None when the repeats
    are not integers (the framework refuses those itself)."""
    dims: Any = args[1:]
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    if not dims or not all(type(d) is int for d in dims):
        return None
    return receiver_elements * math.prod(abs(d) for d in dims)


def arange_request(args: tuple, kwargs: dict[str, Any]) -> int | None:
    """The elements ``arange(end)``, ``arange(start, end[, step])`` (or with ``start=``,
    ``end=``/``stop=``, ``step=``) would make; None when they are not plain numbers."""
    named = {"start": kwargs.get("start"), "end": kwargs.get("end", kwargs.get("stop")), "step": kwargs.get("step")}
    positional = dict(zip(("end",) if len(args) == 1 else ("start", "end", "step"), args))
    values = {key: positional.get(key, named[key]) for key in named}
    numbers = [0 if values["start"] is None else values["start"], values["end"],
               1 if values["step"] is None else values["step"]]
    plain = [float(v) for v in numbers if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(plain) != 3:
        return None
    start, end, step = plain
    if step == 0 or not all(math.isfinite(v) for v in (start, end, step)):
        return None  # (the framework refuses these itself)
    return max(0, math.ceil((end - start) / step))


def check_elements(count: int, what: str) -> None:
    if count > MAX_ELEMENTS:
        raise LimitExceeded(f"{what} {count:,} elements; a tensor has at most {MAX_ELEMENTS:,}")


def broadcast_elements(shapes: Iterable[tuple[int, ...]]) -> int:
    """Elements of the broadcast of ``shapes`` (dimensions that cannot broadcast count as
    their largest size: the framework refuses them itself, the estimate only has to bound)."""
    shapes = list(shapes)
    ndim = max((len(s) for s in shapes), default=0)
    total = 1
    for axis in range(ndim):
        total *= max((s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0), default=1)
    return total


def check_python_operation(op: str, operands: tuple[Any, ...]) -> None:
    """Refuse a Python operator between plain values (no tensor takes part) whose result
    would be too large to compute: Python computes it itself, before any framework sees it,
    and neither a timeout nor the memory cap stops it cleanly. Strings are no operands at
    all (``'%0999999999d' % n``): steps pass strings only as names (dtypes, devices)."""
    if op not in _ARITHMETIC:
        return
    if any(isinstance(o, (str, bytes)) for o in operands):
        raise LimitExceeded("a string cannot be an operand of an arithmetic operator")
    a, b = operands if len(operands) == 2 else (operands[0], None)
    base = op[1:] if op.startswith("i") else op  # the in-place forms compute the same
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if base == "mul":
            sequence, times = (a, b) if isinstance(a, (list, tuple)) else (b, a)
            if isinstance(sequence, (list, tuple)) and isinstance(times, int) and \
                    len(sequence) * max(times, 0) > MAX_SEQUENCE_ITEMS:
                raise LimitExceeded(f"repeating a sequence of {len(sequence):,} items {times:,} times makes more "
                                    f"than {MAX_SEQUENCE_ITEMS:,} items")
        elif base == "add" and isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            if len(a) + len(b) > MAX_SEQUENCE_ITEMS:
                raise LimitExceeded(f"joining sequences makes {len(a) + len(b):,} items; at most "
                                    f"{MAX_SEQUENCE_ITEMS:,}")
        return
    if isinstance(a, int) and isinstance(b, int):  # bool is an int too
        bits = _result_bits(base, int(a), int(b))
        if bits > MAX_INT_BITS:
            raise LimitExceeded(f"{base} of two integers would make a number of about {bits:,} bits; at most "
                                f"{MAX_INT_BITS:,}")


def _result_bits(op: str, a: int, b: int) -> int:
    """An upper bound of the bits of ``a <op> b`` for Python integers."""
    na, nb = a.bit_length(), b.bit_length()
    if op == "pow":
        if b < 0 or abs(a) <= 1:
            return 1
        return na * b
    if op == "mul":
        return na + nb
    return max(na, nb) + 1


def check_python_value(value: Any, what: str) -> None:
    """A plain value a step made: integers and sequences within their bounds."""
    if type(value) is int and value.bit_length() > MAX_INT_BITS:
        raise LimitExceeded(f"{what} an integer of {value.bit_length():,} bits; at most {MAX_INT_BITS:,}")
    if isinstance(value, (list, tuple)) and len(value) > MAX_SEQUENCE_ITEMS:
        raise LimitExceeded(f"{what} a sequence of {len(value):,} items; at most {MAX_SEQUENCE_ITEMS:,}")
