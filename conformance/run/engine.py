"""Run one case on one adapter: ``run(case, adapter) -> Outcome``.

Pure: no pytest, no report knowledge. The steps are performed one at a time as
:mod:`conformance.run.statements` defines them (the runner is its ``Forms``); operations
resolve only through ``adapter.ops``. All
observations are taken before they are compared, and the probes that write (the
behavioural memory probe) run last, after values and version counters were read.
"""

from __future__ import annotations

import inspect
import warnings
import zlib
from contextlib import AbstractContextManager
from typing import Any

from conformance import kinds, limits
from conformance.adapters.base import OPERATOR_SYMBOLS, NotApplicable
from conformance.contract import FrameworkAdapter
from conformance.ir import NameTarget, Step, productions
from conformance.kinds.base import plain
from conformance.kinds.relations import COPY, SAME_OBJECT, VIEW
from conformance.limits import LimitExceeded
from conformance.model import Case, Expect, Location, ResultKey
from conformance.outcomes import (
    ERROR,
    FAIL,
    NOT_APPLICABLE,
    PASS,
    REFUSED,
    SKIPPED,
    UNCHECKED,
    ErrorInfo,
    Mismatch,
    Outcome,
    StepRecord,
)
from conformance.run import gradients, statements
from conformance.run.memory import Bounds, ProbeFailed, Unwritten
from conformance.run.probes import Probes

# the error kind of a mutation the framework refused (its arrays are immutable), whatever
# its exception's type: what the adapter's Immutability declaration recognises
IMMUTABLE = "immutable"


class _Stop(Exception):
    """A step raised; the run stops there."""


class _NotApplicableAtRun(Exception):
    pass


class _Refused(Exception):
    """The case broke a limit of conformance.limits; the message names the step."""


class _WrapperRefused(Exception):
    """The adapter's own table entry (a function of the adapter's module) did not take the
    call's arguments, so the framework was never called: the TypeError is the suite's, and
    recording it as the framework's error would be a false verdict (issue 38)."""


def case_seed(case_id: str) -> int:
    return zlib.crc32(case_id.encode()) & 0x7FFFFFFF


def release(case: Case, adapter: FrameworkAdapter) -> str | None:
    """The framework's installed release, where the case has overrides that depend on it
    (``versions:``; read from package metadata, imports nothing); else None."""
    return adapter.version() if case.versioned else None


def not_applicable(case: Case, adapter: FrameworkAdapter) -> Outcome | None:
    """The outcome when the case cannot apply to this adapter (its override says so, or an
    operation has no counterpart), decided without importing the framework; else None."""
    case = program(case, adapter)
    fw = adapter.name
    why = case.not_applicable_for(fw, adapter.lineage(), release(case, adapter))
    if why:
        return Outcome(case.id, fw, NOT_APPLICABLE, f"not applicable: {why}")
    # an operation with no counterpart (a backward() step on a framework whose gradients are
    # functional is read as one: conformance/run/gradients.py)
    why = gradients.lacking(case, adapter)
    if why:
        return Outcome(case.id, fw, NOT_APPLICABLE, f"not applicable: {why}")
    return None


def program(case: Case, adapter: FrameworkAdapter) -> Case:
    """The case as this framework runs it: where its arrays are immutable, with the case's
    ``functional_steps`` (if any) as its steps (docs/case-format.md#functional-steps)."""
    return case.program_for(adapter.immutable is not None)


def run(case: Case, adapter: FrameworkAdapter) -> Outcome:
    case = program(case, adapter)
    early = not_applicable(case, adapter)
    if early is not None:
        return early
    fw = adapter.name
    adapter.setup()
    why = adapter.device_unavailable(case.device)
    if why:
        return Outcome(case.id, fw, SKIPPED, why)
    version = release(case, adapter)
    expect = case.expect_for(fw, adapter.lineage(), version)
    override_reason = case.override_reason(fw, adapter.lineage(), version)
    # the pairs whose relation the expectation checks at the end: the only productions whose
    # relation right after their step is recorded (Outcome.productions). Another pair's may
    # depend on what the case does not pin down (jnp.from_dlpack of an array shares it only
    # when it is 64-byte aligned), and a record must be the same in every run
    checked = {frozenset(names) for kind, entries in expect.checks.items() if kinds.get(kind).aliasing
               for names in entries}
    runner = _Runner(case, adapter, checked)
    with adapter.isolation(case_seed(case.id)):
        try:
            runner.execute()
        except _NotApplicableAtRun as exc:
            return Outcome(case.id, fw, NOT_APPLICABLE, f"not applicable: {exc}")
        except _Refused as exc:
            return Outcome(case.id, fw, ERROR, str(exc), steps=runner.records)
        if not adapter.compiles:
            return _checked(case, runner, expect, override_reason)  # checked before isolation restores
    # a compiled mode: the eager run above held every step to the limits, and the compiled
    # function makes the same tensors from the same inputs (conformance/run/compiled.py)
    from conformance.run.compiled import CompiledRunner

    compiled = CompiledRunner(case, adapter, runner, expect)
    with adapter.isolation(case_seed(case.id)):
        try:
            compiled.execute()
        except NotApplicable as exc:
            return Outcome(case.id, fw, NOT_APPLICABLE, f"not applicable: {exc}")
        except _Refused as exc:
            return Outcome(case.id, fw, ERROR, str(exc), steps=compiled.records)
        return _checked(case, compiled, expect, override_reason)


def make_inputs(case: Case, adapter: FrameworkAdapter) -> dict[str, Any]:
    """The case's given tensors, made as an eager run makes them (:meth:`_Runner.make_inputs`):
    a compiled mode's arguments."""
    runner = _Runner(case, adapter)
    runner.make_inputs()
    return {spec.name: runner.env[spec.name] for spec in case.given}


def _checked(case: Case, runner: Any, expect: Expect, override_reason: str | None) -> Outcome:
    """The outcome of a run: refused, or checked against the expectation."""
    fw = runner.adapter.name
    refused = _unexpected_refusal(runner.failed, expect)
    if refused is not None:
        return Outcome(case.id, fw, REFUSED, refused, steps=runner.records)  # nothing was checked
    outcome = Outcome(case.id, fw, PASS, steps=runner.records, productions=runner.production_classes,
                      override_reason=override_reason)
    apart = getattr(runner, "apart", ())  # a compiled mode's intermediates (run/compiled.py)
    if apart:
        mentioned = {n for kind, entries in expect.checks.items() for n in kinds.get(kind).names_in(entries)}
        outcome.observed_apart = [n for n in apart if n in mentioned and n not in runner.hidden]
    _Checker(runner, expect, outcome).check()
    if outcome.mismatches:
        outcome.verdict = FAIL
        outcome.reason = outcome.mismatches[0].what
    elif outcome.unobservable and not outcome.observed:
        # every expectation was about something this framework cannot observe: a pass here
        # would claim what nobody compared (a claim and its opposite would both pass)
        outcome.verdict = UNCHECKED
        outcome.reason = "nothing compared: " + "; ".join(outcome.unobservable)
    return outcome


def _unexpected_refusal(failed: StepRecord | None, expect: Expect) -> str | None:
    """The reason of a ``refused`` outcome when the run stopped at a mutation the framework
    refused (error kind ``immutable``) and the expectation does not say that this step is
    refused so: the case asks about a mutation this framework cannot make, and the refusal
    is what it does (conformance.outcomes.REFUSED)."""
    if failed is None or failed.error is None or failed.error.kind != IMMUTABLE:
        return None
    expected = expect.checks.get("error")
    if expected is not None and expected.at == failed.number and expected.kind == IMMUTABLE:
        return None  # expected: the error kind checks it as any other
    error = failed.error
    return (f"refused: step {failed.number} {failed.text!r} ({failed.location}) raised {error.type}: "
            f"{_bounded(error.message, 300)}")


class _Runner:
    def __init__(self, case: Case, adapter: FrameworkAdapter, checked: set[frozenset[str]] | None = None) -> None:
        # a program called more than once runs as its steps once per call (Case.called); each
        # call starts from the given tensors as the caller holds them (an earlier call's
        # in-place writes in them, its rebinding of their names undone, as a function's
        # parameters are bound afresh on each call)
        self.call_length = len(case.flat_steps()) if case.calls > 1 else 0
        self.given: dict[str, Any] = {}
        case = case.called()
        self.case = case
        self.adapter = adapter
        self.env: dict[str, Any] = {}
        self.bound_at: dict[str, int] = {}  # name -> step number that last bound it (0 = given)
        self.records: list[StepRecord] = [
            StepRecord(s.number, s.text, s.location) for s in case.flat_steps()
        ]
        self.failed: StepRecord | None = None
        # version counters when each object first appeared; objects are kept alive so
        # that id() values are never reused during the case
        self.first_version: dict[int, int | None] = {}
        self.keep: list[Any] = []
        # the adapter's probes, answering for another framework's tensors too (a result of
        # fn:<name>_from_dlpack): what the limits, the version counters and the checks ask
        self.probes = Probes(adapter)
        self.bounds = Bounds(self.probes)
        self.unwritten = Unwritten(self.probes, self.bounds)
        self.step: Step | None = None  # the step running
        self.produced: dict[int, list[tuple[str, str]]] = {}  # step number -> its (result, input) names
        for number, _, result, source in productions(case.steps):
            if checked is None or frozenset((result, source)) in checked:
                self.produced.setdefault(number, []).append((result, source))
        self.production_classes: list[dict[str, Any]] = []
        # the gradients of the backward() steps, where the framework's are functional
        self.gradients = (gradients.Gradients(case, adapter.name, str(adapter.functional_gradient))
                          if gradients.functional(adapter) else None)

    # ---- statements

    def execute(self) -> None:
        self.make_inputs()
        if self.gradients is not None:
            self.gradients.track(self.env)
        self.note_new_objects()
        try:
            statements.run(self.case.steps, self, self.run_step)
        except _Stop:
            pass

    def make_inputs(self) -> None:
        """The given tensors, in the order written: each made by the adapter, or, written
        ``from`` earlier inputs, by that expression through the adapter's table (its
        assignment step, number 0), within the limits. The framework refusing to make one is
        no behaviour of the steps: the item is an error naming the input."""
        for spec in self.case.given:
            try:
                if spec.made_by is None:
                    self.env[spec.name] = self.adapter.make_input(spec, self.case.device)
                else:
                    statements.statement(spec.made_by, self)
            except NotApplicable as exc:
                raise _NotApplicableAtRun(str(exc)) from None
            except LimitExceeded as exc:
                raise _Refused(f"input {spec.name!r} ({spec.location}): {exc} (limits: docs/security.md)") from None
            except _WrapperRefused as exc:
                raise _Refused(f"input {spec.name!r} ({spec.location}): {exc}") from None
            except Exception as exc:  # noqa: BLE001 (the framework's, reported with the input)
                made = spec.made_by.text.partition(" = ")[2] if spec.made_by is not None else "its values"
                raise _Refused(f"input {spec.name!r} ({spec.location}) could not be made from {made}: "
                               f"{_qualname(type(exc))}: {_bounded(self.adapter.error_message(exc), 300)} (an "
                               "input's 'from' must run where the case applies: say not_applicable for a "
                               "framework that refuses it)") from None
            self.bound_at[spec.name] = 0
            self.given[spec.name] = self.env[spec.name]

    def run_step(self, step: Step) -> None:
        """One step (conformance.run.statements), recorded: its status, its warnings, the
        error it raised (which stops the run), the objects it made."""
        record = self.records[step.number - 1]
        if self.call_length and step.number > 1 and (step.number - 1) % self.call_length == 0:
            self.env.update(self.given)  # the next call's parameters
            self.bound_at.update(dict.fromkeys(self.given, 0))
        self.step = step
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # once-per-process warnings are seen every time
            try:
                if self.gradients is not None and gradients.is_gradient_step(step):
                    self.backward(step)
                elif self.gradients is not None and gradients.is_functional_form_step(step):
                    self.functional_form(step)
                else:
                    statements.statement(step, self)
            except NotApplicable as exc:
                raise _NotApplicableAtRun(str(exc)) from None
            except ProbeFailed as exc:
                raise exc.__cause__ from None  # type: ignore[misc]
            except LimitExceeded as exc:
                raise _Refused(f"step {step.number} {step.text!r} ({step.location}): {exc} "
                               "(limits: docs/security.md)") from None
            except _WrapperRefused as exc:
                raise _Refused(f"step {step.number} {step.text!r} ({step.location}): {exc}") from None
            except Exception as exc:  # the framework's behaviour, recorded, not raised
                if self.adapter.out_of_memory(exc):
                    raise _Refused(f"step {step.number} {step.text!r} ({step.location}) ran out of the "
                                   f"memory the framework process may use: {_bounded(str(exc), 300)} "
                                   "(limits: docs/security.md)") from None
                record.status = "error"
                kind = IMMUTABLE if self.adapter.refused_mutation(exc) else self.adapter.classify_error(exc)
                record.error = ErrorInfo(_qualname(type(exc)), _bounded(self.adapter.error_message(exc)), kind)
                record.warnings = _warning_texts(caught)
                self.failed = record
                raise _Stop from None
        record.status = "ok"
        record.warnings = _warning_texts(caught)
        if self.gradients is not None and gradients.differentiates(step):
            # the gradient's function ran the earlier steps again: their warnings are theirs
            earlier = {w for r in self.records[: step.number - 1] for w in r.warnings}
            record.warnings = [w for w in record.warnings if w not in earlier]
        self.note_new_objects()
        self.note_productions(step.number)

    def backward(self, step: Step) -> None:
        """A ``backward()`` step read functionally (conformance/run/gradients.py): the gradient
        of the steps before it, as a function of the given tensors returning its receiver, with
        respect to the inputs that require grad, at fresh inputs; ``backward(g)``'s ``g`` is
        evaluated here, as the eager step would."""
        assert self.gradients is not None
        self.gradients.add(self.gradient_of(step, self.gradients.positions), self.adapter.ops["op:add"])

    def functional_form(self, step: Step) -> None:
        """An ``autograd_grad`` step read functionally (conformance/run/gradients.py): the
        gradient of the steps before it with respect to the inputs it lists, bound to its
        targets as it returns them (a tuple), and never added to what ``.grad`` reads."""
        computed = self.gradient_of(step, gradients.form_positions(self.case, step))
        returned = tuple(computed)
        pairs = zip(step.targets, self.unpack(returned, len(step.targets))) if step.unpack else \
            [(step.targets[0], returned)]
        for target, value in pairs:
            assert isinstance(target, NameTarget)
            self.bind(target.name, value, step.number)

    def gradient_of(self, step: Step, positions: list[int]) -> list[Any]:
        """The adapter's gradient of the steps before the gradient step ``step``, returning its
        loss, with respect to the given tensors at ``positions``, at fresh inputs."""
        index = next(i for i, s in enumerate(self.case.steps) if s.kind != "block" and s.number == step.number)
        loss = gradients.loss_of(self.case, index, self.adapter.ops)
        written = gradients.cotangent_expr(step)
        cotangent = None if written is None else statements.expression(written, self)
        # the function runs the steps again: from the case's seed, so that a random operation
        # draws what it drew in the steps above, with the state this run has put back after
        with self.adapter.isolation(case_seed(self.case.id)):
            made = make_inputs(self.case, self.adapter)
            return list(self.adapter.gradient(loss, [made[spec.name] for spec in self.case.given], positions,
                                              cotangent))

    def note_productions(self, number: int) -> None:
        """The relation of each (result, input) the step produced, now (Outcome.productions)."""
        for result, source in self.produced.get(number, ()):
            a, b = self.env.get(result), self.env.get(source)
            if not (self.probes.is_array(a) and self.probes.is_array(b)):
                continue
            try:
                overlap = self.probes.overlaps(a, b)
            except Exception:  # a probe that cannot answer here leaves the final relation to decide
                continue
            cls = SAME_OBJECT if a is b else VIEW if overlap else COPY
            self.production_classes.append({"step": number, "result": result, "input": source, "class": cls})

    # ---- the primitive actions of the steps (conformance.run.statements.Forms), performed

    def name(self, name: str) -> Any:
        return self.env[name]

    def constant(self, value: Any) -> Any:
        return value

    def sequence(self, items: list[Any], tuple_: bool) -> Any:
        return tuple(items) if tuple_ else items

    def slice(self, start: Any, stop: Any, step: Any) -> Any:
        return slice(start, stop, step)

    def operator(self, op: str, operands: list[Any]) -> Any:
        return self.python_operator(op, *operands)

    def once(self, value: Any) -> Any:
        return value

    def discard(self, value: Any) -> None:
        pass

    def bind(self, name: str, value: Any, number: int) -> None:
        self.env[name] = value
        self.bound_at[name] = number

    def store_item(self, obj: Any, index: Any, value: Any) -> None:
        """``obj[index] = value``: the adapter's op:setitem. It makes nothing (it writes into
        ``obj``, whose elements are bounded already), so no bound applies to what it makes."""
        self.operation("op:setitem", (obj,))(obj, index, value)
        self.unwritten.spread((index, value), written=(obj,), made=None)

    def store_attr(self, obj: Any, attr: str, value: Any) -> None:
        self.call("setattr:" + attr, [obj, value], [])

    def unpack(self, value: Any, count: int) -> list[Any]:
        values = list(value)
        if len(values) != count:
            raise ValueError(f"cannot unpack {len(values)} values into {count} names")
        return values

    def block(self, name: str) -> AbstractContextManager[Any]:
        return self.adapter.ops["block:" + name]()

    def call(self, key: str, args: list[Any], kwargs: list[tuple[str, Any]]) -> Any:
        """One operation of the adapter's table, within the limits: a shape it is asked to
        allocate and the tensors it would broadcast or join are checked before the call,
        whatever it made after."""
        arguments, keywords = tuple(args), dict(kwargs)
        name = key.partition(":")[2] or key
        self.bounds.before_call(key, name, arguments, keywords)
        before = self.unwritten.elements_before(key, arguments)
        operation = self.operation(key, arguments)
        try:
            result = operation(*arguments, **keywords)
        except TypeError as exc:
            if _refused_by_entry(operation, exc, self.adapter):
                raise _WrapperRefused(f"{self.adapter.name}'s table entry for {key} does not take these arguments "
                                      f"({exc}), so {self.adapter.name} itself was never called: the entry "
                                      "must take every call the framework's own function takes "
                                      "(docs/adapters.md)") from None
            raise
        self.bounds.made(result, f"{name}() made")
        self.unwritten.after_call(key, arguments, keywords, result, self.step.number if self.step else 0, before)
        return result

    def python_operator(self, op: str, *operands: Any) -> Any:
        """A Python operator, the adapter's ``op:<op>``: when a tensor takes part, bounded
        like an operation; between plain values, bounded before it computes."""
        operation = self.operation("op:" + op, operands)
        if any(self.probes.is_array(o) for o in operands):
            symbol = f"'{OPERATOR_SYMBOLS.get(op, op)}'"
            self.bounds.inputs(symbol, operands)
            result = operation(*operands)
            self.bounds.made(result, f"{symbol} made")
            written = operands[:1] if op.startswith("i") and op != "invert" else ()
            self.unwritten.spread(operands, written=written, made=result)
            return result
        limits.check_python_operation(op, operands)
        result = operation(*operands)
        limits.check_python_value(result, f"'{OPERATOR_SYMBOLS.get(op, op)}' made")
        return result

    def operation(self, key: str, args: tuple) -> Any:
        """The callable of ``key``: the run's adapter's, except for an operation on another
        framework's tensor (a method, an attribute or an operator whose receiver is the result
        of fn:<name>_from_dlpack in this run), which is that framework's own entry, as in its
        own run: ``y.add_(1)`` of a Paddle tensor is Paddle's add_ in torch's run too."""
        if self.gradients is not None and key == gradients.GRAD:
            return self.gradients.read  # x.grad where gradients are functional (run/gradients.py)
        if args and key.startswith(("method:", "attr:", "setattr:", "op:")):
            other = self.probes.foreign(args[0])
            if other is not None and key in other.ops:
                return other.ops[key]
        return self.adapter.ops[key]

    def note_new_objects(self) -> None:
        for obj in self.env.values():
            if id(obj) not in self.first_version:
                self.keep.append(obj)
                self.first_version[id(obj)] = (
                    self.probes.version_of(obj) if self.probes.is_array(obj) else None)


def _bounded(text: str, limit: int = limits.MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _warning_texts(caught: list[warnings.WarningMessage]) -> list[str]:
    texts = [_bounded(f"{w.category.__name__}: {w.message}", 1_000) for w in caught]
    if len(texts) > limits.MAX_WARNINGS_PER_STEP:
        more = len(texts) - limits.MAX_WARNINGS_PER_STEP
        texts = texts[: limits.MAX_WARNINGS_PER_STEP] + [f"... and {more} more warnings"]
    return texts


class _Checker:
    """Observe what the expectations ask about, then compare: each assertion kind checks
    its own (conformance.kinds), in the kinds' order, through this object (the kinds'
    ``Checking``: the names bound, the step records, the adapter, and where to record)."""

    def __init__(self, runner: _Runner, expect: Expect, outcome: Outcome) -> None:
        self.r = runner
        self.adapter = runner.probes  # the probes, for any framework's tensor (run/probes.py)
        self.expect = expect
        self.outcome = outcome
        self.failed = runner.failed
        self.steps = runner.records
        self.counts_versions = getattr(runner, "counts_versions", True)

    def check(self) -> None:
        for kind, expected in kinds.checks(self.expect):
            kind.check(expected, self)

    def lookup(self, name: str, what: str, key: ResultKey) -> tuple[bool, Any]:
        env = self.r.env_for(key.names) if hasattr(self.r, "env_for") else self.r.env
        hidden = getattr(self.r, "hidden", {}).get(name)
        if hidden is not None:  # a compiled mode's name it cannot show (run/compiled.py)
            self.unobservable(f"{what}: {hidden}")
            return False, None
        if name not in env:
            later = self._bound_after_expected_error(name)
            if later is not None:
                self.unobservable(f"{what}: {name!r} is bound at step {later}, after the step the expected error "
                                  f"stopped the run at")
                return False, None
            stopped = f" (the run stopped at step {self.r.failed.number})" if self.r.failed else ""
            self.miss(what, "a value", f"{name!r} was never bound{stopped}", key)
            return False, None
        return True, env[name]

    def _bound_after_expected_error(self, name: str) -> int | None:
        """The first step binding ``name`` where the run stopped, as expected, at an earlier
        step (an override that records a refusal need not drop what the case says of the
        names the refused step would have bound); else None."""
        failed, expected = self.r.failed, self.expect.checks.get("error")
        if failed is None or expected is None or expected.at != failed.number:
            return None
        binding = [step.number for step in self.r.case.flat_steps() if step.kind != "block"
                   for target in step.targets if isinstance(target, NameTarget) and target.name == name]
        return binding[0] if binding and binding[0] >= failed.number else None

    def first_version(self, obj: Any) -> int | None:
        return self.r.first_version.get(id(obj))

    def gradient(self, obj: Any, name: str) -> tuple[str | None, Any]:
        """(None, ``obj``'s gradient or None), or (why it is not observable, None): the
        functional gradients a run's backward() steps computed for the leaf ``name`` is bound
        to (run/gradients.py), else the tensor's own ``.grad``."""
        functional = getattr(self.r, "gradients", None)
        if functional is None:
            return None, self.adapter.grad(obj)
        return functional.of(obj, name, self.r.bound_at.get(name))

    def unwritten(self, obj: Any) -> str | None:
        return self.r.unwritten.where(obj)

    def record(self, key: ResultKey, value: Any) -> None:
        self.outcome.observed[key] = plain(value)

    def miss(self, what: str, expected: Any, observed: Any, key: ResultKey | None = None, name: str | None = None,
             detail: str = "", *, step: int | None = None, location: Location | None = None) -> None:
        if step is None:
            step = self.r.bound_at.get(name) if name else None
        if location is None and key is not None:
            location = self.expect.locations.get(key)
        self.outcome.mismatches.append(Mismatch(what, plain(expected), plain(observed), location, step or None,
                                                detail))

    def unobservable(self, text: str) -> None:
        self.outcome.unobservable.append(text)


def _refused_by_entry(operation: Any, exc: TypeError, adapter: Any) -> bool:
    """Whether a TypeError is the adapter's table entry refusing its arguments: the entry is a
    Python function of the adapter's own modules (its class's and its bases', where the
    table's wrappers are written), and the error was raised binding the arguments to it (the
    traceback has no frame of the entry: nothing of it ran). A TypeError raised by the
    framework's own function, inside the entry, has the entry's frame; a framework function
    put in the table as it is belongs to the framework's module."""
    if not inspect.isfunction(operation):
        return False
    own = {cls.__module__ for cls in type(adapter).__mro__ if cls is not object}
    return operation.__module__ in own and exc.__traceback__ is not None and exc.__traceback__.tb_next is None


def _qualname(tp: type) -> str:
    module = tp.__module__
    return tp.__qualname__ if module == "builtins" else f"{module}.{tp.__qualname__}"


