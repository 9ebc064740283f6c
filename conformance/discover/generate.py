"""Hypothesis strategies for programs: well-typed by construction, and shrinkable.

A program is drawn as: whether it computes a gradient; its input's shape; then step by step,
a view of any name bound so far (with arguments valid for its shape) or a write into any
name (a product's operand among the names of the target's shape), with at least one write;
last, which twin it carries (none, or a rewrite that applies to it: programs.TWINS). Every choice is a Hypothesis
draw from a list, so shrinking removes steps, moves choices towards the first entry of each
list (the simplest operation, the first index, no gradient, no twin) and shrinks the input's
shape.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from hypothesis import strategies as st

from conformance.discover.programs import (
    TWINS,
    VIEW_OPS,
    WRITES_BY_NAME,
    Program,
    Shape,
    Step,
    ViewOp,
    all_writes,
    shape_after,
    write_value,
)

MAX_VIEWS = 3
MAX_WRITES = 2


@st.composite
def shapes(draw: Any) -> Shape:
    rank = draw(st.integers(1, 3))
    return tuple(draw(st.integers(1, 4)) for _ in range(rank))


def constant(write: str, k: int) -> float:
    """The constant of the k-th write: a factor for a product (2, 3, ...), a power of two
    for a division (exact), else write_value(k)."""
    kind = WRITES_BY_NAME[write].constant
    if kind == "factor":
        return float(k + 2)
    if kind == "divisor":
        return float(2 ** (k + 1))
    return write_value(k)


@st.composite
def programs(draw: Any, view_ops: Collection[str] | None = None, write_ops: Collection[str] | None = None,
             grad: bool | None = None, no_grad: bool = True) -> Program:
    """A program of the operations named (every one of VIEW_OPS and programs.all_writes() by default:
    conformance.discover.run draws from those every framework of the run has); ``grad`` None
    draws whether it computes a gradient (False first, so that shrinking drops the gradient
    when the finding does not need it). With a gradient and ``no_grad``, an in-place write
    may be drawn in a ``no_grad`` block (not first, so that shrinking takes it out)."""
    with_grad = draw(st.booleans()) if grad is None else grad
    views = [op for op in VIEW_OPS if view_ops is None or op.name in view_ops]
    writes = [op for op in all_writes() if (write_ops is None or op.name in write_ops)
              and not (with_grad and not op.analytic)]
    shape = draw(shapes())
    n_views = draw(st.integers(1, MAX_VIEWS))
    n_writes = draw(st.integers(1, MAX_WRITES))
    kinds = draw(st.permutations(["view"] * n_views + ["write"] * n_writes))
    steps: list[Step] = []
    written = 0
    for kind in kinds:
        shapes_now = shape_after(Program(shape, tuple(steps)))
        names = list(shapes_now)
        if kind == "view":
            source = draw(st.sampled_from(names[::-1]))  # the newest name shrinks first
            fitting = [op for op in views if (not op.input_only or source == names[0])
                       and op.arguments(shapes_now[source])]
            if not fitting:
                continue
            op = draw(st.sampled_from(fitting))
            view_args = draw(st.sampled_from(op.arguments(shapes_now[source])))
            steps.append(Step(op.name, source, tuple(view_args), result=f"v{sum(s.is_view for s in steps) + 1}"))
        else:
            target = draw(st.sampled_from(names[::-1]))
            fitting_w = [op for op in writes if op.arguments(shapes_now[target])]
            if not fitting_w:
                continue
            wop = draw(st.sampled_from(fitting_w))
            if wop.operand:  # another name of the same shape, or the target itself
                same = [n for n in names[::-1] if shapes_now[n] == shapes_now[target]]
                sibling = _sibling(Program(shape, tuple(steps)), target, views, shapes_now)
                if sibling is not None and draw(st.booleans()):
                    # another view of the same base at another offset: partial overlaps
                    steps.append(sibling)
                    same = [str(sibling.result)] + same
                args: tuple[Any, ...] = (draw(st.sampled_from(same)),)
            else:
                args = tuple(draw(st.sampled_from(wop.arguments(shapes_now[target]))))
                if wop.constant:  # the write's own constant, whatever the draw: distinct per write
                    args = args[:-1] + (constant(wop.name, written),)
            written += 1
            in_block = with_grad and no_grad and not wop.creates and draw(st.integers(0, 3)) == 3
            steps.append(Step(wop.name, target, args, no_grad=in_block))
    if not any(not s.is_view for s in steps):
        names = list(shape_after(Program(shape, tuple(steps))))
        steps.append(Step("fill_", names[-1], (write_value(written),)))
    program = Program(shape, tuple(steps), with_grad)
    allowed = {op.name for op in views} | {op.name for op in writes} | {"clone"}
    twins = {name: twin for name, rewrite in TWINS.items()
             if (twin := rewrite(program)) and all(s.op in allowed for s in twin)}
    relation = draw(st.sampled_from(["none", *twins]))
    if relation == "none":
        return program
    return Program(shape, program.steps, with_grad, twins[relation], relation)


def _sibling(program: Program, target: str, views: list[ViewOp], shapes_now: dict[str, Shape]) -> Step | None:
    """When ``target`` is a slice or narrow of dimension 0 of some name, the same slice one
    element further (or back): a view of the same shape that overlaps the target in all but
    one row, for a write that reads it. None when there is none or it is not drawable."""
    made = next((s for s in program.steps if s.result == target), None)
    if made is None or made.op not in ("slice", "narrow") or not any(v.name == made.op for v in views):
        return None
    result = f"v{sum(s.is_view for s in program.steps) + 1}"
    length = shapes_now[made.target][0]
    if made.op == "slice":
        start, stop, step = made.args
        for shift in (1, -1):
            if 0 <= start + shift and stop + shift <= length and start + shift < stop + shift:
                return Step("slice", made.target, (start + shift, stop + shift, step), result)
        return None
    dim, start, size = made.args
    if dim != 0:
        return None
    for shift in (1, -1):
        if 0 <= start + shift and start + shift + size <= length:
            return Step("narrow", made.target, (dim, start + shift, size), result)
    return None
