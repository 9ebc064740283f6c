"""The step IR: what conformance.load.steps makes of a step's text, and the walks over it
(the operations a step needs, the names it reads and binds, what a step produces).

Part of the case model (:mod:`conformance.model` holds the rest), and like it framework-free
and importable from every stage; it imports nothing of the suite.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Union

from conformance.source import Location

# --------------------------------------------------------------------------- the IR
# Expressions and statements produced by conformance.load.steps from the step text. They name
# operations by neutral keys ("method:add_", "fn:relu", "attr:T"), resolved only through
# an adapter's operation table.


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Const:
    value: Any  # int, float, bool, None, str, Ellipsis


@dataclass(frozen=True)
class Seq:
    items: tuple[Expr, ...]
    tuple_: bool = False


@dataclass(frozen=True)
class SliceExpr:
    start: Expr | None
    stop: Expr | None
    step: Expr | None


@dataclass(frozen=True)
class Op:
    """A call to a table operation: ``fn:NAME`` (args), ``method:NAME`` (receiver is
    ``args[0]``), ``attr:NAME`` (one arg), ``call`` (calling a value, e.g. a layer)."""

    key: str
    args: tuple[Expr, ...] = ()
    kwargs: tuple[tuple[str, Expr], ...] = ()


@dataclass(frozen=True)
class PyOp:
    """A Python operator (``+``, ``-x``, ``x[i]``, ``x > 0``) applied to values."""

    op: str  # the operator module's name; the adapter's table entry "op:<op>" (adapters.base.PYTHON_OPERATORS)
    args: tuple[Expr, ...]


Expr = Union[Ref, Const, Seq, SliceExpr, Op, PyOp]


@dataclass(frozen=True)
class NameTarget:
    name: str


@dataclass(frozen=True)
class ItemTarget:
    obj: Expr
    index: Expr


@dataclass(frozen=True)
class AttrTarget:
    obj: Expr
    attr: str  # resolved through "attr:NAME" / "setattr:NAME"


Target = Union[NameTarget, ItemTarget, AttrTarget]


@dataclass(frozen=True)
class Step:
    """One statement. ``kind`` is ``assign``, ``augassign``, ``expr`` or ``block``."""

    number: int  # 1-based, in the order steps run (blocks are not numbered)
    text: str
    kind: str
    location: Location
    targets: tuple[Target, ...] = ()  # assign: one target, or several for ``a, b = ...``
    value: Expr | None = None
    aug_op: str | None = None  # augassign: "iadd", ... (the table entry "op:iadd", ...)
    block: str | None = None  # block: "no_grad" / "enable_grad" / "inference_mode"
    body: tuple[Step, ...] = ()
    # assign: the targets were written as a tuple or list, so the value is unpacked even into
    # one name (``g, = autograd_grad(s, [a])`` binds the tuple's one item, not the tuple)
    unpack: bool = False

    def flat(self) -> list[Step]:
        if self.kind != "block":
            return [self]
        out: list[Step] = []
        for s in self.body:
            out.extend(s.flat())
        return out


# the operations that take a gradient: backward() and its functional form (conformance/run/gradients.py)
GRADIENT_KEYS = frozenset({"method:backward", "fn:autograd_grad"})


def renumbered(step: Step, offset: int) -> Step:
    """The step (and its block's body) with every number moved on by ``offset``."""
    return replace(step, number=step.number + offset if step.kind != "block" else step.number,
                   body=tuple(renumbered(s, offset) for s in step.body))


def repeated(steps: tuple[Step, ...], calls: int) -> tuple[Step, ...]:
    """The steps of a program called ``calls`` times, in the order they run: each call's steps
    numbered on from the last step of the call before (three steps called twice are steps 1
    to 6; the second call's first step is step 4)."""
    count = sum(len(s.flat()) for s in steps)
    return tuple(renumbered(s, call * count) for call in range(calls) for s in steps)


# --------------------------------------------------------------------------- walking the IR


def _children(expr: Expr | None) -> Iterable[Expr]:
    if isinstance(expr, Seq):
        return expr.items
    if isinstance(expr, SliceExpr):
        return [p for p in (expr.start, expr.stop, expr.step) if p is not None]
    if isinstance(expr, Op):
        return list(expr.args) + [v for _, v in expr.kwargs]
    if isinstance(expr, PyOp):
        return expr.args
    return ()


def _walk(expr: Expr | None) -> Iterable[Expr]:
    if expr is None:
        return
    yield expr
    for child in _children(expr):
        yield from _walk(child)


def _step_exprs(step: Step) -> list[Expr]:
    exprs: list[Expr] = [step.value] if step.value is not None else []
    for target in step.targets:
        if isinstance(target, ItemTarget):
            exprs += [target.obj, target.index]
        elif isinstance(target, AttrTarget):
            exprs.append(target.obj)
    return exprs


def operations_of(step: Step) -> set[str]:
    """Operation-table keys a step (and its block body) needs, which an adapter may lack.
    Python's operators (``op:add``, ``op:setitem``, ...) resolve through the table too, but
    every adapter has them (the base gives Python's semantics), so they are not listed: a
    framework without a counterpart maps its entry to ``absent()``, and the item is then not
    applicable when the step runs."""
    if step.kind == "block":
        keys = {"block:" + str(step.block)}
        for inner in step.body:
            keys |= operations_of(inner)
        return keys
    keys = {e.key for x in _step_exprs(step) for e in _walk(x) if isinstance(e, Op)}
    for target in step.targets:
        if isinstance(target, AttrTarget):
            keys.add("setattr:" + target.attr)
            if step.kind == "augassign":
                keys.add("attr:" + target.attr)
    return keys


def calls(step: Step) -> list[Op]:
    """Every operation call of a step (and its block body), with its arguments: what
    ``conformance contracts`` reads to find the calls that pass ``out=``."""
    if step.kind == "block":
        return [op for inner in step.body for op in calls(inner)]
    return [e for x in _step_exprs(step) for e in _walk(x) if isinstance(e, Op)]


def operator_keys(step: Step) -> set[str]:
    """The Python operators a step (and its block body) applies, as table keys (``op:add``,
    ``op:setitem``), and what kind of indexing each ``x[...]`` read is (``index:basic``,
    ``index:advanced``, as :func:`productions` names it): the keys that say which cases
    exercise basic indexing, which :func:`operations_of` leaves out."""
    if step.kind == "block":
        return {key for inner in step.body for key in operator_keys(inner)}
    keys = set()
    for expr in _step_exprs(step):
        for e in _walk(expr):
            if isinstance(e, PyOp):
                keys.add("op:" + e.op)
                if e.op == "getitem" and len(e.args) == 2:
                    keys.add("index:" + index_kind(e.args[1]))
    for target in step.targets:
        if isinstance(target, ItemTarget):
            keys.add("op:setitem")
    if step.kind == "augassign" and step.aug_op:
        keys.add("op:" + step.aug_op)
    return keys


def strings_of(step: Step) -> set[str]:
    """The string constants a (non-block) step passes."""
    return {e.value for x in _step_exprs(step) for e in _walk(x) if isinstance(e, Const) and isinstance(e.value, str)}


def names_read(step: Step) -> list[Ref]:
    """Names a (non-block) step reads, in order; augmented assignment reads its target."""
    refs = [e for x in _step_exprs(step) for e in _walk(x) if isinstance(e, Ref)]
    if step.kind == "augassign" and isinstance(step.targets[0], NameTarget):
        refs.insert(0, Ref(step.targets[0].name))
    return refs


def names_bound(step: Step) -> list[str]:
    return [t.name for t in step.targets if isinstance(t, NameTarget)]


def results_of(steps: Iterable[Step]) -> list[str]:
    """What the steps, written as a function, return: each name a step binds whose last
    binding no later step reads (the values the program computed and left), in the order
    they were bound. An input is one only where a step binds its name again (``x += y`` may
    make a new object); otherwise the caller holds it."""
    flat = [s for step in steps for s in step.flat()]
    last: dict[str, int] = {}
    for i, step in enumerate(flat):
        for name in names_bound(step):
            last.pop(name, None)
            last[name] = i
    read_after = {name: any(ref.name == name for later in flat[i + 1:] for ref in names_read(later))
                  for name, i in last.items()}
    return [name for name in last if not read_after[name]]


# --------------------------------------------------------------------------- what a step produces


def _is_int(e: Expr | None) -> bool:
    """An integer constant, negative ones included (``-1`` is ``neg`` of the constant 1)."""
    if isinstance(e, PyOp) and e.op in ("neg", "pos") and len(e.args) == 1:
        return _is_int(e.args[0])
    return isinstance(e, Const) and type(e.value) is int


def index_parts(index: Expr | None) -> tuple[Expr | None, ...]:
    """The parts of ``x[index]``: each item of a tuple index (``x[1:, 0]``), else the index."""
    return index.items if isinstance(index, Seq) and index.tuple_ else (index,)


def index_kind(index: Expr | None) -> str:
    """``basic`` for ints (negative ones too), slices, ``None`` and ``...`` (NumPy's
    view-producing indexing), ``advanced`` for lists and tensors."""
    parts = index_parts(index)
    basic = all(isinstance(p, SliceExpr) or _is_int(p) or (isinstance(p, Const) and (p.value is None
                                                                                      or p.value is Ellipsis))
                for p in parts)
    return "basic" if basic else "advanced"


def productions(steps: Iterable[Step]) -> list[tuple[int, str, str, str]]:
    """``(step, operation, result, input)`` for each result of a step ``result = op(input,
    ...)`` (or ``a, b = op(input, ...)``: one for each of a and b) whose names keep their
    binding to the end of the case, so that a relation observed between them at the end
    describes what that step did. ``operation`` is a table key, or ``index:basic`` /
    ``index:advanced`` for ``x[...]``."""
    flat = [s for step in steps for s in step.flat()]
    found = []
    for i, step in enumerate(flat):
        if step.kind != "assign" or not all(isinstance(t, NameTarget) for t in step.targets):
            continue
        value = step.value
        if isinstance(value, Op) and value.key != "call":
            operation, args = value.key, value.args
        elif isinstance(value, PyOp) and value.op == "getitem":
            operation, args = "index:" + index_kind(value.args[1]), value.args[:1]
        else:
            continue
        source = next((a.name for a in args if isinstance(a, Ref)), None)
        # a later rebinding, or a later attribute assignment (``a.data = ...`` swaps a's
        # buffer), would make the final relation describe something else than this step
        later = {n for s in flat[i + 1:] for n in names_bound(s)}
        later |= {t.obj.name for s in flat[i + 1:] for t in s.targets
                  if isinstance(t, AttrTarget) and isinstance(t.obj, Ref)}
        if source is None or source in later:
            continue
        found += [(step.number, operation, result, source) for result in names_bound(step)
                  if result != source and result not in later]
    return found
