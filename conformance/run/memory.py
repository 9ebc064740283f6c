"""What the engine keeps track of around each operation call, besides the step's result:
the bounds of conformance.limits on what the call may make (:class:`Bounds`), and which
arrays hold memory nobody wrote (:class:`Unwritten`). Framework-free: both ask the adapter
they are given for shapes and array-ness."""

from __future__ import annotations

from typing import Any

from conformance import limits


class ProbeFailed(Exception):
    """An adapter probe run between operations raised: an adapter bug, raised out of the
    engine (as its cause), never recorded as the framework's behaviour."""


class Bounds:
    """The limits of a run applied to one adapter's values (docs/security.md, "What a case
    makes is bounded"). Each check raises :class:`limits.LimitExceeded`."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter

    def shape(self, array: Any) -> tuple[int, ...]:
        try:
            return tuple(self.adapter.shape_of(array))
        except Exception as exc:
            raise ProbeFailed() from exc

    def elements(self, array: Any) -> int:
        return numel(self.shape(array))

    def before_call(self, key: str, name: str, args: tuple, kwargs: dict[str, Any]) -> None:
        """A shape the operation is asked to allocate, and what it would make of its tensor
        arguments, before the framework sees them."""
        requested = limits.shape_request(key, args)
        if key == "method:repeat" and args and self.adapter.is_array(args[0]):
            requested = limits.repeat_request(self.elements(args[0]), args)
        elif key == "fn:arange":
            requested = limits.arange_request(args, kwargs)
        if requested is not None:
            limits.check_elements(requested, f"{name}() would make")
        self.inputs(f"{name}()", (*args, *kwargs.values()))

    def inputs(self, name: str, values: tuple) -> None:
        """Bound what an operation can make from its tensor arguments: the broadcast of the
        tensors passed directly (x + y of shapes (n, 1) and (1, n) makes n * n elements), and
        the elements of tensors passed in a list (cat([x] * k))."""
        direct = [self.shape(v) for v in values if self.adapter.is_array(v)]
        if len(direct) > 1:
            limits.check_elements(limits.broadcast_elements(direct), f"{name} would broadcast to")
        for v in values:
            if isinstance(v, (list, tuple)) and len(v) > 1:
                joined = sum(self.elements(t) for t in v if self.adapter.is_array(t))
                limits.check_elements(joined, f"{name} would join tensors of")

    def made(self, value: Any, what: str) -> None:
        """Whatever an operation made: each array within the element bound, plain values
        within theirs."""
        if self.adapter.is_array(value):
            limits.check_elements(self.elements(value), what)
        elif isinstance(value, (list, tuple)):
            limits.check_python_value(value, what)
            for item in value:
                if self.adapter.is_array(item):
                    limits.check_elements(self.elements(item), what)
        else:
            limits.check_python_value(value, what)


class Unwritten:
    """Arrays that hold memory nobody wrote: empty(), a resize_() that grew its tensor, and
    whatever was computed from them or written with them, arrays or not (``e.tolist()``,
    ``e.sum().item()``, a tensor made from such a list). Their bytes are whatever the
    allocator had, so the engine never records them as values (docs/security.md)."""

    def __init__(self, adapter: Any, bounds: Bounds) -> None:
        self.adapter = adapter
        self.bounds = bounds
        # id -> (the array, kept alive so that its id is not reused; where it came from)
        self.arrays: dict[int, tuple[Any, str]] = {}

    def where(self, obj: Any) -> str | None:
        """Where ``obj``'s unwritten memory came from, or None when every byte was written."""
        entry = self.arrays.get(id(obj))
        return None if entry is None else entry[1]

    def elements_before(self, key: str, args: tuple) -> int | None:
        """The receiver's elements before a call that may grow it (resize_), else None."""
        if key in limits.UNINITIALISED_WHEN_GROWN and args and self.adapter.is_array(args[0]):
            return self.bounds.elements(args[0])
        return None

    def after_call(self, key: str, args: tuple, kwargs: dict[str, Any], result: Any, step: int,
                   elements_before: int | None) -> None:
        """Mark what an operation left holding memory nobody wrote, and clear a receiver an
        operation wrote whole."""
        name = key.partition(":")[2]
        if key in limits.UNINITIALISED_ALWAYS:
            self.mark(result, f"{name}() at step {step}")
        elif elements_before is not None and self.bounds.elements(args[0]) > elements_before:
            self.mark(args[0], f"{name}() at step {step}, which grew the tensor")
        writes_receiver = key.startswith("method:") and key.endswith("_")
        receiver = args[:1] if writes_receiver else ()
        out = tuple(v for k, v in kwargs.items() if k == "out")
        if key in limits.WRITES_EVERY_ELEMENT and receiver and \
                not any(id(v) in self.arrays for v in arrays_in((*args[1:], *kwargs.values()))):
            self.arrays.pop(id(receiver[0]), None)
            return
        self.spread((*args, *kwargs.values()), written=(*receiver, *out), made=result)

    def spread(self, inputs: tuple, written: tuple, made: Any) -> None:
        """What is computed from unwritten memory, or written with it, holds it too."""
        if not self.arrays:
            return
        source = next((self.arrays[id(v)][1] for v in (*inputs, *arrays_in(inputs)) if id(v) in self.arrays),
                      None)
        if source is None:
            return
        for target in (*written, *arrays_in((made,))):
            self.mark(target, source)

    def mark(self, value: Any, where: str) -> None:
        for array in arrays_in((value,)):
            if self.adapter.is_array(array) and id(array) not in self.arrays:
                self.arrays[id(array)] = (array, where)
        # a Python value made from unwritten memory (a list from tolist(), a number from
        # item()) carries its bytes as well: kept by identity, as the arrays are. (True and
        # False are shared by every comparison of a case, so a bool is not marked: one bit.)
        if value is not None and not isinstance(value, bool) and not self.adapter.is_array(value) \
                and id(value) not in self.arrays:
            self.arrays[id(value)] = (value, where)


def arrays_in(values: tuple) -> list[Any]:
    """The values, and the items of lists and tuples among them (one level: split() results,
    cat() arguments)."""
    out: list[Any] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(v)
        elif v is not None:
            out.append(v)
    return out


def numel(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n
