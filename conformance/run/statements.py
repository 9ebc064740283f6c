"""What each form of the step IR means: the one definition the eager engine and the compiled
modes share (issue 34).

A step's expression and statement forms are defined here once, in terms of a few primitive
actions (:class:`Forms`): a name's value, a constant, an operation of the adapter's table, a
Python operator, a binding, an item or attribute store, unpacking. The eager engine
(:mod:`conformance.run.engine`) performs the actions as it meets them, one step at a time,
each within the limits; the compiled modes' builder (:mod:`conformance.run.function`) emits
them as the statements of one Python function, which the compiler is given as a user's
function. So augmented assignment, unpacking, item stores and blocks mean the same in both,
in Python's order of evaluation:

- ``target = value``: the value, then the target's parts (``obj``, then ``index``), then the store;
- ``a, b = value``: the value, unpacked into as many values as there are targets (a
  ``ValueError`` otherwise), each stored in turn; ``a, = value`` and ``[a] = value`` unpack
  into one;
- ``target op= value``: the target's parts, each evaluated once; its current value (the
  name's, ``obj[index]``, or ``obj.attr``); the value; the in-place operator (``op:iadd``,
  ...), whose result, which may be a new object, is stored back into the target;
- ``with block():``: the table's ``block:NAME`` entry as a context manager around the body.

Imports nothing of the suite's runners and no framework.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Callable, Protocol, Sequence, TypeVar

from conformance.ir import AttrTarget, Const, Expr, ItemTarget, NameTarget, Op, PyOp, Ref, Seq, SliceExpr, Step, Target

V = TypeVar("V")


class Forms(Protocol[V]):
    """The primitive actions a step is made of, over values of type ``V``: the values
    themselves (the eager engine) or the expressions of a function's syntax tree (the
    compiled modes' builder)."""

    def name(self, name: str) -> V: ...

    def constant(self, value: Any) -> V: ...

    def sequence(self, items: list[V], tuple_: bool) -> V: ...

    def slice(self, start: V | None, stop: V | None, step: V | None) -> V: ...

    def operator(self, op: str, operands: list[V]) -> V:
        """A Python operator, the table's ``op:<op>`` (``getitem``, ``add``, ``iadd``, ...)."""

    def call(self, key: str, args: list[V], kwargs: list[tuple[str, V]]) -> V:
        """An operation of the table: ``fn:``, ``method:`` (receiver first), ``attr:``, ``call``."""

    def once(self, value: V) -> V:
        """``value``, evaluated once although the statement uses it twice (an augmented
        assignment's ``obj`` and ``index``)."""

    def discard(self, value: V) -> None: ...

    def bind(self, name: str, value: V, number: int) -> None: ...

    def store_item(self, obj: V, index: V, value: V) -> None: ...

    def store_attr(self, obj: V, attr: str, value: V) -> None: ...

    def unpack(self, value: V, count: int) -> list[V]: ...

    def block(self, name: str) -> AbstractContextManager[Any]: ...


def expression(expr: Expr | None, forms: Forms[V]) -> V | None:
    """An expression's value, its parts left to right."""
    if expr is None:
        return None
    if isinstance(expr, Ref):
        return forms.name(expr.name)
    if isinstance(expr, Const):
        return forms.constant(expr.value)
    if isinstance(expr, Seq):
        return forms.sequence([_value(e, forms) for e in expr.items], expr.tuple_)
    if isinstance(expr, SliceExpr):
        return forms.slice(expression(expr.start, forms), expression(expr.stop, forms), expression(expr.step, forms))
    if isinstance(expr, PyOp):
        return forms.operator(expr.op, [_value(a, forms) for a in expr.args])
    if isinstance(expr, Op):
        args = [_value(a, forms) for a in expr.args]
        return forms.call(expr.key, args, [(k, _value(v, forms)) for k, v in expr.kwargs])
    raise TypeError(f"unknown expression {expr!r}")  # pragma: no cover


def _value(expr: Expr, forms: Forms[V]) -> V:
    """An expression that is there (an operation's value may be None: ``y.backward()``)."""
    return expression(expr, forms)  # type: ignore[return-value]


def statement(step: Step, forms: Forms[V]) -> None:
    """One step that is not a block (:func:`run` walks blocks)."""
    if step.kind == "expr":
        forms.discard(_value(step.value, forms))  # type: ignore[arg-type]
        return
    if step.kind == "assign":
        value = _value(step.value, forms)  # type: ignore[arg-type]
        if not step.unpack:
            _store(step.targets[0], value, step.number, forms)
        else:
            for target, item in zip(step.targets, forms.unpack(value, len(step.targets))):
                _store(target, item, step.number, forms)
        return
    assert step.kind == "augassign", step.kind
    target, op = step.targets[0], str(step.aug_op)
    if isinstance(target, NameTarget):
        current = forms.name(target.name)
        forms.bind(target.name, forms.operator(op, [current, _value(step.value, forms)]), step.number)  # type: ignore[arg-type]
    elif isinstance(target, ItemTarget):
        obj, index = forms.once(_value(target.obj, forms)), forms.once(_value(target.index, forms))
        current = forms.operator("getitem", [obj, index])
        forms.store_item(obj, index, forms.operator(op, [current, _value(step.value, forms)]))  # type: ignore[arg-type]
    else:
        assert isinstance(target, AttrTarget)
        obj = forms.once(_value(target.obj, forms))
        current = forms.call("attr:" + target.attr, [obj], [])
        forms.store_attr(obj, target.attr, forms.operator(op, [current, _value(step.value, forms)]))  # type: ignore[arg-type]


def _store(target: Target, value: V, number: int, forms: Forms[V]) -> None:
    if isinstance(target, NameTarget):
        forms.bind(target.name, value, number)
    elif isinstance(target, ItemTarget):
        obj = _value(target.obj, forms)
        forms.store_item(obj, _value(target.index, forms), value)
    else:
        forms.store_attr(_value(target.obj, forms), target.attr, value)


def run(steps: Sequence[Step], forms: Forms[V], each: Callable[[Step], None] | None = None) -> None:
    """The steps in order, a block's body inside its context manager; ``each`` runs one
    step that is not a block (the eager engine records it), :func:`statement` by default."""
    for step in steps:
        if step.kind == "block":
            with forms.block(str(step.block)):
                run(step.body, forms, each)
        elif each is not None:
            each(step)
        else:
            statement(step, forms)

