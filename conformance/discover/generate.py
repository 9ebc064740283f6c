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

from typing import Any

from hypothesis import strategies as st

from conformance.discover.programs import (
    NOT_WITH_GRAD,
    TWINS,
    VIEW_OPS,
    WRITE_OPS,
    Program,
    Shape,
    Step,
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
    """The constant of the k-th write: a factor for a product, else write_value(k)."""
    return float(k + 2) if write in ("mul_", "imul", "mul") else write_value(k)


@st.composite
def programs(draw: Any, view_ops: tuple[str, ...] | None = None, write_ops: tuple[str, ...] | None = None,
             grad: bool | None = None) -> Program:
    """A program; ``grad`` None draws whether it computes a gradient (False first, so that
    shrinking drops the gradient when the finding does not need it)."""
    with_grad = draw(st.booleans()) if grad is None else grad
    views = [op for op in VIEW_OPS if (view_ops is None or op.name in view_ops)
             and not (with_grad and op.name in NOT_WITH_GRAD)]
    writes = [op for op in WRITE_OPS if write_ops is None or op.name in write_ops]
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
            fitting = [op for op in views if op.arguments(shapes_now[source])]
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
                args: tuple[Any, ...] = (draw(st.sampled_from(same)),)
            else:
                args = tuple(draw(st.sampled_from(wop.arguments(shapes_now[target]))))
                # the constant is the write's own, whatever the draw: distinct per write
                args = args[:-1] + (constant(wop.name, written),)
            written += 1
            steps.append(Step(wop.name, target, args))
    if not any(not s.is_view for s in steps):
        names = list(shape_after(Program(shape, tuple(steps))))
        steps.append(Step("fill_", names[-1], (write_value(written),)))
    program = Program(shape, tuple(steps), with_grad)
    twins = {name: twin for name, rewrite in TWINS.items() if (twin := rewrite(program))}
    relation = draw(st.sampled_from(["none", *twins]))
    if relation == "none":
        return program
    return Program(shape, program.steps, with_grad, twins[relation], relation)
