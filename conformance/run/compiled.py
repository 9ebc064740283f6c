"""A case run as one compiled function (issue 19): the compiled modes' engine.

What "the same case, compiled" means (docs/case-format.md, "Compiled modes"):

- the case's ``given`` tensors are the function's arguments, made as for an eager run;
- its steps are the function's body, written as a user writes them (conformance/run/function.py:
  straight-line statements, Python's syntax where the table's entry is Python's own, the
  table's entry called otherwise, blocks such as ``no_grad`` as ``with`` statements);
- it returns what the program leaves (conformance.ir.results_of: each name whose last binding
  no later step reads), whatever the expectations mention, as a user's function returns its
  results; the caller's inputs are the given tensors themselves, so a mutation of an input,
  and whether a returned tensor is an input, a view of it or new memory, are what the caller
  sees. An intermediate an expectation mentions is observed apart, from a second compile of
  the function that returns it as well, called on fresh inputs (``observed_apart``);
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
from typing import Any

from conformance import kinds
from conformance.contract import FrameworkAdapter
from conformance.ir import NameTarget, Step, names_bound, results_of
from conformance.model import Case, Expect
from conformance.outcomes import ErrorInfo, StepRecord
from conformance.run import gradients, statements
from conformance.run.engine import (
    IMMUTABLE,
    _bounded,
    _qualname,
    _Refused,
    _warning_texts,
    case_seed,
    make_inputs,
)
from conformance.run.function import CaseFunction, build
from conformance.run.probes import Probes


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
        # the top-level steps of every call, numbered on from call to call (Case.called): the
        # compiled function is compiled once and called case.calls times on the same inputs
        called = case.called()
        self.top = called.steps
        self.records = [StepRecord(s.number, s.text, s.location) for s in called.flat_steps()]
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
        # what the function returns: what the program leaves (conformance.ir.results_of), as a
        # user's function returns its results, whatever the expectations mention; a name they
        # mention that the program does not leave (an intermediate) is observed apart, from a
        # second compile of the function that returns it as well (observed_apart)
        # where the framework's gradients are functional (run/gradients.py): the function
        # leaves out the backward() steps, and each is the mode's compiled gradient of the
        # steps before it (jax.jit of jax.grad, tf.function around the tape)
        self.gradients = (gradients.Gradients(case, adapter.name, str(adapter.functional_gradient))
                          if gradients.functional(adapter) else None)
        self.results = results_of(self.steps(len(case.steps)))
        # an autograd_grad step's targets are its compiled gradient's results (_backward), bound
        # after the function ran: nothing the function returns
        returned = {n for s in case.steps if self.gradients is not None and gradients.is_functional_form_step(s)
                    for n in names_bound(s)}
        self.apart = [n for n in self.outputs if n not in self.results and n not in returned]
        self.env_apart: dict[str, Any] = {}

    def function(self, count: int, outputs: tuple[str, ...] | list[str]) -> CaseFunction:
        """The first ``count`` top-level steps as a user's function of the given tensors,
        returning those of ``outputs`` they bind (conformance.run.function)."""
        return build(self.steps(count), self.adapter.ops, self.inputs, outputs)

    def steps(self, count: int) -> tuple[Step, ...]:
        """The first ``count`` top-level steps, as the function has them: without the
        backward() steps where gradients are functional (each is a gradient of its own)."""
        steps = self.case.steps[:count]
        if self.gradients is not None:
            steps = tuple(s for s in steps if not gradients.differentiates(s))
        return steps

    def fresh_inputs(self) -> list[Any]:
        """The function's arguments, made as the eager run makes them (an input ``from``
        others, a view of one, made eagerly, outside the function: the function is called
        with inputs that alias, as a user's would be)."""
        made = make_inputs(self.case, self.adapter)
        return [made[name] for name in self.inputs]

    def tracked_inputs(self) -> list[Any]:
        """Fresh inputs for a call the expectations read: kept alive (no id is reused), with
        their version counters before the call."""
        args = self.fresh_inputs()
        for obj in args:
            self.keep.append(obj)
            self.first_version[id(obj)] = self.probes.version_of(obj) if self.probes.is_array(obj) else None
        return args

    def _call_prefix(self, count: int, outputs: tuple[str, ...] | list[str], args: list[Any]
                     ) -> tuple[CaseFunction, Any]:
        """Calls the program on ``args`` up to its ``count``-th top-level step (of all its
        calls, :attr:`top`): the whole function, compiled once, for each call before the one
        that step is in, then that call's first steps compiled alone, returning ``outputs``.
        Returns that last function and what it returned; raises what a call raised."""
        body = len(self.case.steps)
        whole_calls, part = divmod(count - 1, body)
        if whole_calls:
            whole = self.adapter.compile(self.function(body, ()).function)
            for _ in range(whole_calls):
                whole(*args)
        case_function = self.function(part + 1, outputs)
        return case_function, self.adapter.compile(case_function.function)(*args)

    def _call_alone(self, count: int, outputs: list[str]) -> dict[str, Any] | Exception:
        """The first ``count`` top-level steps (:meth:`_call_prefix`) compiled alone, returning
        ``outputs``, called on tracked fresh inputs with warnings ignored: the inputs and the
        names it returned, or what it raised."""
        args = self.tracked_inputs()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                case_function, values = self._call_prefix(count, outputs, args)
            except Exception as exc:
                return exc
        env = dict(zip(self.inputs, args))
        for name, value in zip(case_function.returns, values):
            env[name] = value
            self.keep.append(value)
        return env

    def execute(self) -> None:
        args = self.tracked_inputs()
        self.env = dict(zip(self.inputs, args))
        case_function = self.function(len(self.case.steps), self.results)
        function = self.adapter.compile(case_function.function)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                for _ in range(self.case.calls):  # the same compiled function, on the same inputs
                    values = function(*args)
            except Exception as exc:
                if self.adapter.out_of_memory(exc):
                    raise _Refused(f"the compiled function ran out of the memory the framework process may use: "
                                   f"{_bounded(str(exc), 300)} (limits: docs/security.md)") from None
                failing = self._failing_step(exc)
                self._failed_at(failing, exc)
                self._warnings(_warning_texts(caught), failing)
                return
        for name, value in zip(case_function.returns, values):
            self.env[name] = value
            self.keep.append(value)
        if self.gradients is not None and not self._backward():
            return
        for record in self.records:
            record.status = "ok"
        self._warnings(_warning_texts(caught))
        if self.apart:
            self._observe_apart()
        for env in (self.env, self.env_apart):
            for name, value in env.items():
                eager_value = self.eager.env.get(name)
                where = None if eager_value is None else self.eager.unwritten.where(eager_value)
                if where is not None:
                    self.unwritten.by_id[id(value)] = where

    def _backward(self) -> bool:
        """Each backward() step, read functionally: the mode's compiled gradient of the steps
        before it (run/gradients.py), called on fresh inputs; ``backward(g)``'s ``g`` is the
        eager run's. False where one raised: that step is the one that failed, and the state
        the expectations see is the steps before it, compiled alone."""
        assert self.gradients is not None
        self.gradients.track(self.env)
        for index, step in enumerate(self.case.steps):
            if not gradients.differentiates(step):
                continue
            form = gradients.is_functional_form_step(step)
            written = gradients.cotangent_expr(step)
            cotangent = None if written is None else statements.expression(written, self.eager)
            positions = gradients.form_positions(self.case, step) if form else self.gradients.positions
            compiled = self.adapter.compile(self._gradient_function(index, cotangent, positions))
            # from the case's seed, as the function was called: a random operation draws the same
            with warnings.catch_warnings(), self.adapter.isolation(case_seed(self.case.id)):
                warnings.simplefilter("ignore")
                try:
                    computed = list(compiled(*self.fresh_inputs()))
                except Exception as exc:
                    self._failed_at(index + 1, exc)
                    self.gradients.track(self.env)
                    return False
            if not form:
                self.gradients.add(computed, self.adapter.ops["op:add"])
                continue
            # autograd_grad's targets: the gradients it returns, as the eager run binds them
            returned = tuple(computed)
            values = list(returned) if step.unpack else [returned]
            for target, value in zip(step.targets, values):
                if isinstance(target, NameTarget):
                    self.env[target.name] = value
                    self.keep.append(value)
        return True

    def _gradient_function(self, index: int, cotangent: Any, positions: list[int]) -> Any:
        """The gradient of the steps before the gradient step ``case.steps[index]`` with
        respect to the given tensors at ``positions``, as a function of the given tensors (what
        the mode compiles: the adapter's gradient of the loss function, traced inside the
        compiler)."""
        assert self.gradients is not None
        loss = gradients.loss_of(self.case, index, self.adapter.ops)
        adapter = self.adapter

        def gradient(*args: Any) -> list[Any]:
            return adapter.gradient(loss, list(args), positions, cotangent)

        return gradient

    def _observe_apart(self) -> None:
        """The intermediates the expectations mention, from a second compile of the function
        that returns them besides its results, called on fresh inputs: what an expectation
        about one of them sees (its relations to the inputs included) is that call's."""
        called = self._call_alone(len(self.top), [*self.results, *self.apart])
        if isinstance(called, Exception):
            # the program ran a moment ago: returning these names is what the compiler refuses
            why = (f"the function that also returns it raises {type(called).__name__}: "
                   f"{_bounded(self.adapter.error_message(called), 160)}")
            self.hidden.update({name: why for name in self.apart})
            return
        self.env_apart = called

    def env_for(self, names: tuple[str, ...]) -> dict[str, Any]:
        """Where an expectation about ``names`` looks: the second call's names where it is about
        an intermediate observed apart, else the function's own call."""
        if self.env_apart and any(name in self.apart for name in names):
            return self.env_apart
        return self.env

    # ---- which step

    def _prefix_raises(self, count: int) -> BaseException | None:
        """Whether the first ``count`` top-level steps (of all calls: :meth:`_call_prefix`),
        compiled alone on fresh inputs, raise."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                self._call_prefix(count, (), self.fresh_inputs())
            except Exception as exc:
                return exc
        return None

    def _failing_step(self, exc: BaseException) -> int:
        """The top-level step (1-based count) whose prefix first raises what the call raised
        (its type and message); else the first whose prefix raises at all; else the last."""
        same = (type(exc), self.adapter.error_message(exc))
        first_raising = None
        for count in range(1, len(self.top) + 1):
            raised = self._prefix_raises(count)
            if raised is None:
                continue
            if (type(raised), self.adapter.error_message(raised)) == same:
                return count
            first_raising = first_raising or count
        return first_raising or len(self.top)

    def _before(self, count: int) -> None:
        """The state at a step that raised: the function of the steps before it, compiled alone
        on fresh inputs (the failed call returned nothing), its inputs and the names it bound."""
        if count <= 1:
            return
        called = self._call_alone(count - 1, self.outputs)
        if isinstance(called, Exception):
            # it ran without raising a moment ago, returning nothing: returning these names
            # is what it refuses (torch.compile: a tensor saved for backward and modified)
            why = (f"the steps before step {self.top[count - 1].flat()[0].number}, compiled alone to "
                   f"return it, raise {type(called).__name__}: {_bounded(self.adapter.error_message(called), 160)}")
            self.hidden = {name: why for name in self.outputs}
            return
        self.env = called

    def _failed_at(self, count: int, exc: BaseException) -> None:
        self._before(count)
        failing = self.top[count - 1].flat()[0].number
        for record in self.records:
            if record.number < failing:
                record.status = "ok"
        record = self.records[failing - 1]
        record.status = "error"
        kind = IMMUTABLE if self.adapter.refused_mutation(exc) else self.adapter.classify_error(exc)
        record.error = ErrorInfo(_qualname(type(exc)), _bounded(self.adapter.error_message(exc)), kind)
        self.failed = record

    def _warnings(self, texts: list[str], steps: int | None = None) -> None:
        """The call's warnings: by the step whose prefix first emits each, where the case
        expects a warning; else on the step that raised, or the last. ``steps``: the top-level
        steps that ran (all of them, unless the call raised at the last of them)."""
        texts = list(dict.fromkeys(texts))  # the compiler may trace the program more than once
        if not texts:
            return
        steps = len(self.top) if steps is None else steps
        if "warning" not in self.expect.checks:
            (self.failed or self.records[-1]).warnings = texts
            return
        seen: list[str] = []
        for count in range(1, steps + 1):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    self._call_prefix(count, (), self.fresh_inputs())
                except Exception:
                    pass
            now = _warning_texts(caught)
            new = [t for t in now if t not in seen]
            if new:
                self.records[self.top[count - 1].flat()[-1].number - 1].warnings = new
                seen += new
