"""Hypothesis strategies for programs: well-typed by construction, and shrinkable.

A program is drawn step by step: a view of any name bound so far (with arguments valid for
its shape), or a write into any name, with at least one write. Every choice is a Hypothesis
draw from a list, so shrinking removes steps, moves choices towards the first entry of each
list (the simplest operation, the first index) and shrinks the input's shape.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.discover.programs import VIEW_OPS, WRITE_OPS, Program, Shape, Step, shape_after, write_value

MAX_VIEWS = 3
MAX_WRITES = 2


@st.composite
def shapes(draw: Any) -> Shape:
    rank = draw(st.integers(1, 3))
    return tuple(draw(st.integers(1, 4)) for _ in range(rank))


@st.composite
def programs(draw: Any, view_ops: tuple[str, ...] | None = None, write_ops: tuple[str, ...] | None = None) -> Program:
    views = [op for op in VIEW_OPS if view_ops is None or op.name in view_ops]
    writes = [op for op in WRITE_OPS if write_ops is None or op.name in write_ops]
    program = Program(draw(shapes()))
    n_views = draw(st.integers(1, MAX_VIEWS))
    n_writes = draw(st.integers(1, MAX_WRITES))
    kinds = draw(st.permutations(["view"] * n_views + ["write"] * n_writes))
    steps: list[Step] = []
    written = 0
    for kind in kinds:
        shapes_now = shape_after(Program(program.shape, tuple(steps)))
        names = list(shapes_now)
        if kind == "view":
            source = draw(st.sampled_from(names[::-1]))  # the newest name shrinks first
            fitting = [op for op in views if op.arguments(shapes_now[source])]
            if not fitting:
                continue
            op = draw(st.sampled_from(fitting))
            args = draw(st.sampled_from(op.arguments(shapes_now[source])))
            steps.append(Step(op.name, source, tuple(args), result=f"v{sum(s.is_view for s in steps) + 1}"))
        else:
            target = draw(st.sampled_from(names[::-1]))
            fitting_w = [op for op in writes if op.arguments(shapes_now[target])]
            if not fitting_w:
                continue
            wop = draw(st.sampled_from(fitting_w))
            args = draw(st.sampled_from(wop.arguments(shapes_now[target])))
            # the constant is the write's own, whatever the draw: distinct per write
            args = args[:-1] + (write_value(written) if wop.name != "mul_" else float(written + 2),)
            written += 1
            steps.append(Step(wop.name, target, tuple(args)))
    if not any(not s.is_view for s in steps):
        names = list(shape_after(Program(program.shape, tuple(steps))))
        steps.append(Step("fill_", names[-1], (write_value(written),)))
    return Program(program.shape, tuple(steps))
