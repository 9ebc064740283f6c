"""A case run as one compiled function (issue 19): the compiled modes' engine.

What "the same case, compiled" means (docs/case-format.md, "Compiled modes"):

- the case's ``given`` tensors are the function's arguments, made as for an eager run;
- its steps are the function's body, each operation the framework's own table entry, as
  in eager (blocks such as ``no_grad`` are ``with`` statements inside it);
- it returns every name any expectation of the case mentions (the shared one and every
  override's, so that an override never changes the program) that a step binds; the caller's inputs
  are the given tensors themselves, so a mutation of an input, and whether a returned tensor
  is an input, a view of it or new memory, are what the caller sees;
- the expectations are the eager ones (the framework's override, then the mode's own) and
  are checked on those names, as in eager, except the version counter of a tensor made
  inside the function: its version when it was bound cannot be observed, so its
  ``version_change`` is *not observable* (an input's is observed);
- a step that raises: the call raises, and the step is the first whose prefix of the
  case, compiled alone (on fresh inputs), raises what the call raised; what the expectations
  see then is the steps before it, compiled alone on fresh inputs (where that function
  cannot return a name, its expectations are not observable), and a name the steps bind
  only at or after the step the case expects to raise is not observable either. Warnings
  are attributed the same way where the case expects one, else to the last step, each once;
- the version counter of an input shows whether the function mutated it, not how many
  times: the compiled function applies an input's mutations as its own copies;
- a step the compiler cannot capture (a NumPy conversion, ``backward()``) is not an error:
  the compiler runs it eagerly between compiled graphs (a graph break), as it would in a
  user's function; where the compiler refuses the program, that refusal is the step's error.

Memory limits: the eager run of the same case, which the engine makes first, held every
step to conformance.limits; the compiled function makes the same tensors from the same
inputs. Nothing here imports a framework: the adapter's ``compile`` does.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Mapping, Sequence

from conformance import kinds
from conformance.contract import FrameworkAdapter
from conformance.ir import AttrTarget, Const, ItemTarget, NameTarget, Op, PyOp, Ref, Seq, SliceExpr, Step
from conformance.model import Case, Expect
from conformance.outcomes import ErrorInfo, StepRecord
from conformance.run.engine import (
    IMMUTABLE,
    _bounded,
    _qualname,
    _Refused,
    _warning_texts,
)
from conformance.run.probes import Probes


def program(steps: Sequence[Step], ops: Mapping[str, Callable[..., Any]], inputs: Sequence[str],
            outputs: Sequence[str]) -> Callable[..., tuple[tuple[Any, ...], tuple[bool, ...]]]:
    """The case's steps as a Python function of its inputs, returning (the values of
    ``outputs``, whether each was bound). Only the operation table's entries and plain
    Python run in it, so that a compiler captures the operations themselves."""

    def evaluate(expr: Any, env: dict[str, Any]) -> Any:
        if isinstance(expr, Ref):
            return env[expr.name]
        if isinstance(expr, Const):
            return expr.value
        if isinstance(expr, Seq):
            items: list[Any] = []
            for e in expr.items:
                items.append(evaluate(e, env))
            return tuple(items) if expr.tuple_ else items
        if isinstance(expr, SliceExpr):
            return slice(evaluate(expr.start, env), evaluate(expr.stop, env), evaluate(expr.step, env))
        # (loops, not comprehensions: Paddle's SOT, resuming after a graph break (backward()),
        # gives a comprehension's closure the wrong cells: "'dict' object is not callable")
        if isinstance(expr, (PyOp, Op)):
            args: list[Any] = []
            for a in expr.args:
                args.append(evaluate(a, env))
            if isinstance(expr, PyOp):
                return ops["op:" + expr.op](*args)
            kwargs: dict[str, Any] = {}
            for k, v in expr.kwargs:
                kwargs[k] = evaluate(v, env)
            return ops[expr.key](*args, **kwargs)
        return None

    def store(target: Any, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, NameTarget):
            env[target.name] = value
        elif isinstance(target, ItemTarget):
            ops["op:setitem"](evaluate(target.obj, env), evaluate(target.index, env), value)
        else:
            ops["setattr:" + target.attr](evaluate(target.obj, env), value)

    def run(body: Sequence[Step], env: dict[str, Any]) -> None:
        for step in body:
            if step.kind == "block":
                with ops["block:" + str(step.block)]():
                    run(step.body, env)
            elif step.kind == "expr":
                evaluate(step.value, env)
            elif step.kind == "assign":
                value = evaluate(step.value, env)
                if len(step.targets) == 1:
                    store(step.targets[0], value, env)
                else:
                    for target, item in zip(step.targets, list(value)):
                        store(target, item, env)
            else:  # augmented assignment, as the eager engine does it
                target, op = step.targets[0], "op:" + str(step.aug_op)
                value = evaluate(step.value, env)
                if isinstance(target, NameTarget):
                    env[target.name] = ops[op](env[target.name], value)
                elif isinstance(target, ItemTarget):
                    obj, index = evaluate(target.obj, env), evaluate(target.index, env)
                    ops["op:setitem"](obj, index, ops[op](ops["op:getitem"](obj, index), value))
                else:
                    assert isinstance(target, AttrTarget)
                    obj = evaluate(target.obj, env)
                    ops["setattr:" + target.attr](obj, ops[op](ops["attr:" + target.attr](obj), value))

    def function(*args: Any) -> tuple[tuple[Any, ...], tuple[bool, ...]]:
        # loops, not dict(zip(...)), generators or comprehensions, which Paddle's SOT cannot
        # translate, or resume after a graph break (the whole function eager, or wrong cells)
        env: dict[str, Any] = {}
        for name, arg in zip(inputs, args):
            env[name] = arg
        run(steps, env)
        values: list[Any] = []
        bound: list[bool] = []
        for n in outputs:
            values.append(env.get(n))
            bound.append(n in env)
        return tuple(values), tuple(bound)

    return function


class _Unwritten:
    """What the eager run knew of unwritten memory, by name (conformance.run.memory)."""

    def __init__(self) -> None:
        self.by_id: dict[int, str] = {}

    def where(self, obj: Any) -> str | None:
        return self.by_id.get(id(obj))


class CompiledRunner:
    """What the checker reads (``env``, ``records``, ``failed``, ``first_version``, ...), from
    one call of the compiled function. ``eager`` is the eager run of the same case."""

    def __init__(self, case: Case, adapter: FrameworkAdapter, eager: Any, expect: Expect) -> None:
        self.case = case
        self.adapter = adapter
        self.eager = eager
        self.expect = expect
        self.probes = Probes(adapter)
        self.env: dict[str, Any] = {}
        self.bound_at = dict(eager.bound_at)
        self.records = [StepRecord(s.number, s.text, s.location) for s in case.flat_steps()]
        self.failed: StepRecord | None = None
        self.first_version: dict[int, int | None] = {}
        self.keep: list[Any] = []
        self.unwritten = _Unwritten()
        # name -> why the checker cannot see it (the steps before a failing one would not run
        # compiled alone): its expectations are then not observable, not mismatches
        self.hidden: dict[str, str] = {}
        self.production_classes: list[dict[str, Any]] = []  # no step-time relation inside a compiled function
        # torch.compile applies an input's mutations as copies at the end of its graph (aot_eager
        # raises the counter by 2, inductor by 1, however many steps wrote): whether it changed
        self.counts_versions = False
        # every name any expectation of the case mentions (the shared one and every override's,
        # dropped entries included), so that what an override says never changes the program
        mentioned: set[str] = set()
        for each in [case.expect, *(o.expect.expect for o in case.all_overrides() if o.expect is not None)]:
            for kind, entries in each.checks.items():
                mentioned |= kinds.get(kind).names_in(entries)
        given = [spec.name for spec in case.given]
        bound = [n for s in case.flat_steps() for t in s.targets if isinstance(t, NameTarget) for n in [t.name]]
        self.inputs = given
        self.outputs = sorted({n for n in bound if n in mentioned})

    def fresh_inputs(self) -> list[Any]:
        return [self.adapter.make_input(spec, self.case.device) for spec in self.case.given]

    def execute(self) -> None:
        args = self.fresh_inputs()
        self.env = dict(zip(self.inputs, args))
        for obj in args:
            self.keep.append(obj)
            self.first_version[id(obj)] = self.probes.version_of(obj) if self.probes.is_array(obj) else None
        function = self.adapter.compile(program(self.case.steps, self.adapter.ops, self.inputs, self.outputs))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                values, bound = function(*args)
            except Exception as exc:
                if self.adapter.out_of_memory(exc):
                    raise _Refused(f"the compiled function ran out of the memory the framework process may use: "
                                   f"{_bounded(str(exc), 300)} (limits: docs/security.md)") from None
                self._failed_at(self._failing_step(exc), exc)
                return
        for name, value, was_bound in zip(self.outputs, values, bound):
            if was_bound:
                self.env[name] = value
                self.keep.append(value)
        for record in self.records:
            record.status = "ok"
        self._warnings(_warning_texts(caught))
        for name, value in self.env.items():
            eager_value = self.eager.env.get(name)
            where = None if eager_value is None else self.eager.unwritten.where(eager_value)
            if where is not None:
                self.unwritten.by_id[id(value)] = where

    # ---- which step

    def _prefix_raises(self, count: int) -> BaseException | None:
        """Whether the first ``count`` top-level steps, compiled alone on fresh inputs, raise."""
        function = self.adapter.compile(program(self.case.steps[:count], self.adapter.ops, self.inputs, ()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                function(*self.fresh_inputs())
            except Exception as exc:
                return exc
        return None

    def _failing_step(self, exc: BaseException) -> int:
        """The top-level step (1-based count) whose prefix first raises what the call raised
        (its type and message); else the first whose prefix raises at all; else the last."""
        same = (type(exc), self.adapter.error_message(exc))
        first_raising = None
        for count in range(1, len(self.case.steps) + 1):
            raised = self._prefix_raises(count)
            if raised is None:
                continue
            if (type(raised), self.adapter.error_message(raised)) == same:
                return count
            first_raising = first_raising or count
        return first_raising or len(self.case.steps)

    def _before(self, count: int) -> None:
        """The state at a step that raised: the function of the steps before it, compiled alone
        on fresh inputs (the failed call returned nothing), its inputs and the names it bound."""
        if count <= 1:
            return
        args = self.fresh_inputs()
        for obj in args:
            self.keep.append(obj)
            self.first_version[id(obj)] = self.probes.version_of(obj) if self.probes.is_array(obj) else None
        function = self.adapter.compile(program(self.case.steps[:count - 1], self.adapter.ops, self.inputs,
                                                self.outputs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                values, bound = function(*args)
            except Exception as exc:
                # it ran without raising a moment ago, returning nothing: returning these names
                # is what it refuses (torch.compile: a tensor saved for backward and modified)
                why = (f"the steps before step {self.case.steps[count - 1].flat()[0].number}, compiled alone to "
                       f"return it, raise {type(exc).__name__}: {_bounded(self.adapter.error_message(exc), 160)}")
                self.hidden = {name: why for name in self.outputs}
                return
        self.env = dict(zip(self.inputs, args))
        for name, value, was_bound in zip(self.outputs, values, bound):
            if was_bound:
                self.env[name] = value
                self.keep.append(value)

    def _failed_at(self, count: int, exc: BaseException) -> None:
        self._before(count)
        steps = self.case.steps
        failing = steps[count - 1].flat()[0].number
        for record in self.records:
            if record.number < failing:
                record.status = "ok"
        record = self.records[failing - 1]
        record.status = "error"
        kind = IMMUTABLE if self.adapter.refused_mutation(exc) else self.adapter.classify_error(exc)
        record.error = ErrorInfo(_qualname(type(exc)), _bounded(self.adapter.error_message(exc)), kind)
        self.failed = record

    def _warnings(self, texts: list[str]) -> None:
        """The call's warnings: by the step whose prefix first emits each, where the case
        expects a warning; else on the last step."""
        texts = list(dict.fromkeys(texts))  # the compiler may trace the program more than once
        if not texts:
            return
        if "warning" not in self.expect.checks:
            self.records[-1].warnings = texts
            return
        seen: list[str] = []
        for count in range(1, len(self.case.steps) + 1):
            function = self.adapter.compile(program(self.case.steps[:count], self.adapter.ops, self.inputs, ()))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    function(*self.fresh_inputs())
                except Exception:
                    pass
            now = _warning_texts(caught)
            new = [t for t in now if t not in seen]
            if new:
                self.records[self.case.steps[count - 1].flat()[-1].number - 1].warnings = new
                seen += new
