"""Run one case on one adapter: ``run(case, adapter) -> Outcome``.

Pure: no pytest, no report knowledge. The steps are interpreted over the IR from
:mod:`conformance.load.steps`; operations resolve only through ``adapter.ops``. All
observations are taken before they are compared, and the probes that write (the
behavioural memory probe) run last, after values and version counters were read.
"""

from __future__ import annotations

import re
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any

from conformance import limits
from conformance.adapters.base import OPERATOR_SYMBOLS, NotApplicable
from conformance.limits import LimitExceeded
from conformance.model import Case, Expect, Location
from conformance.outcomes import ERROR, FAIL, NOT_APPLICABLE, PASS, SKIPPED
from conformance.ir import (
    AttrTarget, Const, Expr, ItemTarget, NameTarget, Op, PyOp, Ref, Seq, SliceExpr, Step,
)

# the error kind of a mutation the framework refused (its arrays are immutable), whatever
# its exception's type: what the adapter's Immutability declaration recognises
IMMUTABLE = "immutable"


@dataclass
class ErrorInfo:
    type: str  # qualified exception type name
    message: str
    kind: str  # neutral error kind


@dataclass
class StepRecord:
    number: int
    text: str
    location: Location
    status: str = "not_run"  # ok / error / not_run
    error: ErrorInfo | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class Mismatch:
    """One expectation that did not hold."""

    what: str  # e.g. "values of y", "shares_memory(y, x)"
    expected: Any
    observed: Any
    location: Location | None = None
    step: int | None = None  # the step that last bound / failed, when known
    detail: str = ""


@dataclass
class Outcome:
    case_id: str
    framework: str
    verdict: str
    reason: str = ""
    steps: list[StepRecord] = field(default_factory=list)
    observed: dict[str, Any] = field(default_factory=dict)  # expectation key -> observed value
    mismatches: list[Mismatch] = field(default_factory=list)
    override_reason: str | None = None
    unobservable: list[str] = field(default_factory=list)  # expectations this framework cannot observe


class _Stop(Exception):
    """A step raised; the run stops there."""


class _NotApplicableAtRun(Exception):
    pass


class _Refused(Exception):
    """The case broke a limit of conformance.limits; the message names the step."""


class _ProbeFailed(Exception):
    """An adapter probe the engine ran between operations raised: an adapter bug, raised
    out of the engine (as its cause), never recorded as the framework's behaviour."""


def case_seed(case_id: str) -> int:
    return zlib.crc32(case_id.encode()) & 0x7FFFFFFF


def not_applicable(case: Case, adapter: Any) -> Outcome | None:
    """The outcome when the case cannot apply to this adapter (its override says so, or an
    operation has no counterpart), decided without importing the framework; else None."""
    fw = adapter.name
    override = case.overrides.get(fw)
    if override is not None and override.not_applicable:
        return Outcome(case.id, fw, NOT_APPLICABLE, f"not applicable: {override.not_applicable}")
    for key in sorted(case.operations()):
        why = adapter.lacks(key)
        if why:
            return Outcome(case.id, fw, NOT_APPLICABLE, f"not applicable: {why}")
    return None


def run(case: Case, adapter: Any) -> Outcome:
    early = not_applicable(case, adapter)
    if early is not None:
        return early
    fw = adapter.name
    override = case.overrides.get(fw)
    adapter.setup()
    why = adapter.device_unavailable(case.device)
    if why:
        return Outcome(case.id, fw, SKIPPED, why)
    expect = case.expect_for(fw)
    runner = _Runner(case, adapter)
    with adapter.isolation(case_seed(case.id)):
        try:
            runner.execute()
        except _NotApplicableAtRun as exc:
            return Outcome(case.id, fw, NOT_APPLICABLE, f"not applicable: {exc}")
        except _Refused as exc:
            return Outcome(case.id, fw, ERROR, str(exc), steps=runner.records)
        outcome = Outcome(case.id, fw, PASS, steps=runner.records,
                          override_reason=override.reason if override else None)
        _Checker(runner, expect, outcome).check()
    if outcome.mismatches:
        outcome.verdict = FAIL
        outcome.reason = outcome.mismatches[0].what
    return outcome


class _Runner:
    def __init__(self, case: Case, adapter: Any) -> None:
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
        # arrays that hold memory nobody wrote (empty(), a grown resize_(), and whatever
        # was computed from them): id -> (the array, kept alive; where it came from)
        self.uninitialised: dict[int, tuple[Any, str]] = {}
        self.step: Step | None = None  # the step running

    # ---- statements

    def execute(self) -> None:
        for spec in self.case.given:
            try:
                self.env[spec.name] = self.adapter.make_input(spec, self.case.device)
            except NotApplicable as exc:
                raise _NotApplicableAtRun(str(exc)) from None
            self.bound_at[spec.name] = 0
        self.note_new_objects()
        try:
            self.run_steps(self.case.steps)
        except _Stop:
            pass

    def run_steps(self, steps: tuple[Step, ...]) -> None:
        for step in steps:
            if step.kind == "block":
                with self.adapter.ops["block:" + str(step.block)]():
                    self.run_steps(step.body)
                continue
            record = self.records[step.number - 1]
            self.step = step
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")  # once-per-process warnings are seen every time
                try:
                    self.statement(step)
                except NotApplicable as exc:
                    raise _NotApplicableAtRun(str(exc)) from None
                except _ProbeFailed as exc:
                    raise exc.__cause__ from None  # type: ignore[misc]
                except LimitExceeded as exc:
                    raise _Refused(f"step {step.number} {step.text!r} ({step.location}): {exc} "
                                   "(limits: docs/security.md)") from None
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
            self.note_new_objects()

    def statement(self, step: Step) -> None:
        if step.kind == "expr":
            self.eval(step.value)
            return
        if step.kind == "assign":
            value = self.eval(step.value)
            if len(step.targets) == 1:
                self.assign(step.targets[0], value, step.number)
            else:
                values = list(value)
                if len(values) != len(step.targets):
                    raise ValueError(f"cannot unpack {len(values)} values into {len(step.targets)} names")
                for target, item in zip(step.targets, values):
                    self.assign(target, item, step.number)
            return
        # augmented assignment, as Python does it, each part an operation of the adapter's
        # table: the in-place operator (op:iadd, ...) may return a new object, which is then
        # bound (or stored back with op:setitem / setattr:NAME) in place of the old
        target = step.targets[0]
        op = str(step.aug_op)
        value = self.eval(step.value)
        if isinstance(target, NameTarget):
            self.assign(target, self.python_operator(op, self.env[target.name], value), step.number)
        elif isinstance(target, ItemTarget):
            obj, index = self.eval(target.obj), self.eval(target.index)
            current = self.python_operator("getitem", obj, index)
            self.set_item(obj, index, self.python_operator(op, current, value))
        else:
            assert isinstance(target, AttrTarget)
            obj = self.eval(target.obj)
            current = self.call("attr:" + target.attr, (obj,), {})
            self.call("setattr:" + target.attr, (obj, self.python_operator(op, current, value)), {})

    def assign(self, target: Any, value: Any, number: int) -> None:
        if isinstance(target, NameTarget):
            self.env[target.name] = value
            self.bound_at[target.name] = number
        elif isinstance(target, ItemTarget):
            self.set_item(self.eval(target.obj), self.eval(target.index), value)
        else:
            self.call("setattr:" + target.attr, (self.eval(target.obj), value), {})

    def set_item(self, obj: Any, index: Any, value: Any) -> None:
        """``obj[index] = value``: the adapter's op:setitem. It makes nothing (it writes into
        ``obj``, whose elements are bounded already), so no bound applies to what it makes."""
        self.adapter.ops["op:setitem"](obj, index, value)
        self.spread_uninitialised((index, value), written=(obj,), made=None)

    # ---- expressions

    def eval(self, expr: Expr | None) -> Any:
        if isinstance(expr, Ref):
            return self.env[expr.name]
        if isinstance(expr, Const):
            return expr.value
        if isinstance(expr, Seq):
            items = [self.eval(e) for e in expr.items]
            return tuple(items) if expr.tuple_ else items
        if isinstance(expr, SliceExpr):
            return slice(self.eval(expr.start), self.eval(expr.stop), self.eval(expr.step))
        if isinstance(expr, PyOp):
            return self.python_operator(expr.op, *(self.eval(a) for a in expr.args))
        if isinstance(expr, Op):
            args = tuple(self.eval(a) for a in expr.args)
            kwargs = {k: self.eval(v) for k, v in expr.kwargs}
            return self.call(expr.key, args, kwargs)
        if expr is None:
            return None
        raise TypeError(f"unknown expression {expr!r}")  # pragma: no cover

    def call(self, key: str, args: tuple, kwargs: dict[str, Any]) -> Any:
        """One operation of the adapter's table, within the limits: a shape it is asked to
        allocate and the tensors it would broadcast or join are checked before the call,
        whatever it made after."""
        name = key.partition(":")[2] or key
        requested = limits.shape_request(key, args)
        if requested is not None:
            limits.check_elements(requested, f"{name}() would make")
        self.check_inputs(f"{name}()", (*args, *kwargs.values()))
        grows = key in limits.UNINITIALISED_WHEN_GROWN and bool(args) and self.adapter.is_array(args[0])
        before = _numel(self.shape(args[0])) if grows else None
        result = self.adapter.ops[key](*args, **kwargs)
        self.check_made(result, f"{name}() made")
        self.note_uninitialised(key, args, kwargs, result, before)
        return result

    def python_operator(self, op: str, *operands: Any) -> Any:
        """A Python operator, the adapter's ``op:<op>``: when a tensor takes part, bounded
        like an operation; between plain values, bounded before it computes."""
        operation = self.adapter.ops["op:" + op]
        if any(self.adapter.is_array(o) for o in operands):
            symbol = f"'{OPERATOR_SYMBOLS.get(op, op)}'"
            self.check_inputs(symbol, operands)
            result = operation(*operands)
            self.check_made(result, f"{symbol} made")
            written = operands[:1] if op.startswith("i") and op != "invert" else ()
            self.spread_uninitialised(operands, written=written, made=result)
            return result
        limits.check_python_operation(op, operands)
        result = operation(*operands)
        limits.check_python_value(result, f"'{OPERATOR_SYMBOLS.get(op, op)}' made")
        return result

    def check_inputs(self, name: str, values: tuple) -> None:
        """Bound what an operation can make from its tensor arguments: the broadcast of the
        tensors passed directly (x + y of shapes (n, 1) and (1, n) makes n * n elements), and
        the elements of tensors passed in a list (cat([x] * k))."""
        direct = [self.shape(v) for v in values if self.adapter.is_array(v)]
        if len(direct) > 1:
            limits.check_elements(limits.broadcast_elements(direct), f"{name} would broadcast to")
        for v in values:
            if isinstance(v, (list, tuple)) and len(v) > 1:
                joined = sum(_numel(self.shape(t)) for t in v if self.adapter.is_array(t))
                limits.check_elements(joined, f"{name} would join tensors of")

    def check_made(self, value: Any, what: str) -> None:
        if self.adapter.is_array(value):
            limits.check_elements(_numel(self.shape(value)), what)
        elif isinstance(value, (list, tuple)):
            limits.check_python_value(value, what)
            for item in value:
                if self.adapter.is_array(item):
                    limits.check_elements(_numel(self.shape(item)), what)
        else:
            limits.check_python_value(value, what)

    def shape(self, array: Any) -> tuple[int, ...]:
        try:
            return tuple(self.adapter.shape_of(array))
        except Exception as exc:
            raise _ProbeFailed() from exc

    # ---- memory nobody wrote

    def note_uninitialised(self, key: str, args: tuple, kwargs: dict[str, Any], result: Any,
                           elements_before: int | None) -> None:
        """Mark what an operation left holding memory nobody wrote (``elements_before``: the
        receiver's elements before a call that may grow it)."""
        step = self.step.number if self.step else 0
        name = key.partition(":")[2]
        if key in limits.UNINITIALISED_ALWAYS:
            self.mark_uninitialised(result, f"{name}() at step {step}")
        elif elements_before is not None and _numel(self.shape(args[0])) > elements_before:
            self.mark_uninitialised(args[0], f"{name}() at step {step}, which grew the tensor")
        writes_receiver = key.startswith("method:") and key.endswith("_")
        receiver = args[:1] if writes_receiver else ()
        out = tuple(v for k, v in kwargs.items() if k == "out")
        if key in limits.WRITES_EVERY_ELEMENT and receiver and \
                not any(id(v) in self.uninitialised for v in _arrays((*args[1:], *kwargs.values()))):
            self.uninitialised.pop(id(receiver[0]), None)
            return
        self.spread_uninitialised((*args, *kwargs.values()), written=(*receiver, *out), made=result)

    def spread_uninitialised(self, inputs: tuple, written: tuple, made: Any) -> None:
        """What is computed from uninitialised memory, or written with it, holds it too."""
        if not self.uninitialised:
            return
        source = next((self.uninitialised[id(v)][1] for v in _arrays(inputs) if id(v) in self.uninitialised), None)
        if source is None:
            return
        for target in (*written, *_arrays((made,))):
            self.mark_uninitialised(target, source)

    def mark_uninitialised(self, value: Any, where: str) -> None:
        for array in _arrays((value,)):
            if self.adapter.is_array(array) and id(array) not in self.uninitialised:
                self.uninitialised[id(array)] = (array, where)

    def note_new_objects(self) -> None:
        for obj in self.env.values():
            if id(obj) not in self.first_version:
                self.keep.append(obj)
                self.first_version[id(obj)] = (
                    self.adapter.version_of(obj) if self.adapter.is_array(obj) else None)


def _arrays(values: tuple) -> list[Any]:
    """The values, and the items of lists and tuples among them (one level: split() results,
    cat() arguments)."""
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(v)
        elif v is not None:
            out.append(v)
    return out


def _numel(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _bounded(text: str, limit: int = limits.MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _warning_texts(caught: list[warnings.WarningMessage]) -> list[str]:
    texts = [_bounded(f"{w.category.__name__}: {w.message}", 1_000) for w in caught]
    if len(texts) > limits.MAX_WARNINGS_PER_STEP:
        more = len(texts) - limits.MAX_WARNINGS_PER_STEP
        texts = texts[: limits.MAX_WARNINGS_PER_STEP] + [f"... and {more} more warnings"]
    return texts


class _Checker:
    """Observe what the expectations ask about, then compare."""

    def __init__(self, runner: _Runner, expect: Expect, outcome: Outcome) -> None:
        self.r = runner
        self.adapter = runner.adapter
        self.expect = expect
        self.outcome = outcome

    def miss(self, what: str, expected: Any, observed: Any, loc_key: tuple, name: str | None = None,
             detail: str = "") -> None:
        step = self.r.bound_at.get(name) if name else None
        self.outcome.mismatches.append(Mismatch(what, plain(expected), plain(observed),
                                                self.expect.locations.get(loc_key), step or None, detail))

    def check(self) -> None:
        self.check_error()
        self.check_warning()
        for prop, entries in self.expect.properties.items():
            for name, expected in entries.items():
                self.check_property(prop, name, expected)
        # relations last: the behavioural probe writes (and restores) memory
        for relation, pairs in self.expect.relations.items():
            for (a, b), expected in pairs.items():
                self.check_relation(relation, a, b, expected)

    # ---- errors and warnings

    def check_error(self) -> None:
        exp, failed = self.expect.error, self.r.failed
        if exp is None:
            if failed is not None:
                e = failed.error
                assert e is not None
                self.outcome.mismatches.append(Mismatch(
                    f"step {failed.number} raised", "no error", f"{e.type}: {e.message}",
                    failed.location, failed.number, f"error kind: {e.kind}"))
            return
        expected = f"{exp.kind} at step {exp.at}"
        self.outcome.observed["error"] = (
            None if failed is None else {"at": failed.number, "kind": failed.error.kind,
                                         "type": failed.error.type, "message": failed.error.message})
        if failed is None:
            self.miss("error", expected, "no error: every step completed", ("error",))
            return
        e = failed.error
        assert e is not None
        observed = f"{e.kind} at step {failed.number} ({e.type}: {e.message})"
        if failed.number != exp.at or e.kind != exp.kind:
            self.outcome.mismatches.append(Mismatch("error", expected, observed,
                                                    self.expect.locations.get(("error",)), failed.number))
            return
        detail = exp.details.get(self.adapter.name)
        if detail is not None:
            if detail.type and detail.type not in (e.type, e.type.rsplit(".", 1)[-1]):
                self.miss("error type", detail.type, e.type, ("error",), detail=e.message)
            if detail.match and not re.search(detail.match, e.message):
                self.miss("error message", f"matching /{detail.match}/", e.message, ("error",))

    def check_warning(self) -> None:
        exp = self.expect.warning
        if exp is None:
            return
        record = self.r.records[exp.at - 1]
        self.outcome.observed["warning"] = record.warnings
        if not any(re.search(exp.match, w) for w in record.warnings):
            self.miss("warning", f"a warning matching /{exp.match}/ at step {exp.at}",
                      record.warnings or "no warning", ("warning",))

    # ---- per-tensor properties

    def lookup(self, name: str, what: str, loc_key: tuple) -> tuple[bool, Any]:
        if name not in self.r.env:
            stopped = f" (the run stopped at step {self.r.failed.number})" if self.r.failed else ""
            self.miss(what, "a value", f"{name!r} was never bound{stopped}", loc_key)
            return False, None
        return True, self.r.env[name]

    def check_property(self, prop: str, name: str, expected: Any) -> None:
        key = (prop, name)
        what = f"{prop} of {name}"
        if prop in self.adapter.unobservable:
            self.outcome.unobservable.append(f"{what}: {self.adapter.name} has no {prop.replace('_', ' ')}")
            return
        found, obj = self.lookup(name, what, key)
        if not found:
            return
        if not self.adapter.is_array(obj):
            self.miss(what, expected, f"{name} is a {type(obj).__name__}, not a tensor", key, name)
            return
        a = self.adapter
        if prop == "values":
            unwritten = self.r.uninitialised.get(id(obj))
            if unwritten is not None:
                # the bytes are whatever the allocator had (addresses, earlier items' data):
                # never compared, never recorded
                self.record(key, f"unspecified: memory nobody wrote ({unwritten[1]})")
                self.miss(what, _show(expected), f"unspecified: {name} holds memory nobody wrote, from "
                          f"{unwritten[1]}", key, name, "write every element first (fill_, zero_, copy_) "
                          "or expect only its shape and dtype")
                return
            observed = a.to_numpy(obj)
            self.record(key, recorded_values(observed))
            ok, shown = _values_match(observed, expected)
            if not ok:
                self.miss(what, _show(expected), shown, key, name)
        elif prop == "grad":
            grad = a.grad(obj)
            observed = None if grad is None else a.to_numpy(grad)
            self.record(key, None if observed is None else recorded_values(observed))
            if expected is None or observed is None:
                if (expected is None) != (observed is None):
                    self.miss(what, _show(expected), _show(None if observed is None else observed.tolist()), key, name)
                return
            ok, shown = _values_match(observed, expected)
            if not ok:
                self.miss(what, _show(expected), shown, key, name)
        else:
            observed = {
                "dtype": lambda: a.dtype_name(obj),
                "shape": lambda: list(a.shape_of(obj)),
                "requires_grad": lambda: a.requires_grad(obj),
                "is_leaf": lambda: a.is_leaf(obj),
                "version_change": lambda: self.version_change(obj),
            }[prop]()
            self.record(key, observed)
            if observed != expected:
                self.miss(what, expected, observed, key, name)

    def version_change(self, obj: Any) -> int | None:
        now, first = self.adapter.version_of(obj), self.r.first_version.get(id(obj))
        return None if now is None or first is None else now - first

    def record(self, key: tuple, value: Any) -> None:
        self.outcome.observed[".".join(key)] = plain(value)

    # ---- relations between two names

    def check_relation(self, relation: str, a: str, b: str, expected: bool) -> None:
        key = (relation, a, b)
        what = f"{relation}({a}, {b})"
        found_a, x = self.lookup(a, what, key)
        found_b, y = self.lookup(b, what, key)
        if not (found_a and found_b):
            return
        if relation == "same_object":
            observed = x is y
            self.record(key, observed)
            if observed != expected:
                self.miss(what, expected, observed, key, a, f"id({a})={id(x):#x}, id({b})={id(y):#x}")
            return
        for name, obj in ((a, x), (b, y)):
            if not self.adapter.is_array(obj):
                self.miss(what, expected, f"{name} is a {type(obj).__name__}, not a tensor", key, name)
                return
        if relation == "same_storage":
            observed = self.adapter.same_allocation(x, y)
            self.record(key, observed)
            if observed != expected:
                self.miss(what, expected, observed, key, a, "metadata: allocation ranges "
                          + ("intersect" if observed else "are disjoint"))
            return
        metadata = self.adapter.overlaps(x, y)
        behaviour, how = _behaviour_overlap(self.adapter, (a, x), (b, y))
        self.record(key, metadata)
        evidence = f"metadata probe: {'overlap' if metadata else 'no overlap'}; behaviour probe: {how}"
        if behaviour is not None and behaviour != metadata:
            self.miss(f"{what}: probes disagree", "metadata and behaviour probes to agree",
                      f"metadata={metadata}, behaviour={behaviour}", key, a, evidence)
        elif metadata != expected:
            self.miss(what, expected, metadata, key, a, evidence)


def _behaviour_overlap(adapter: Any, first: tuple[str, Any], second: tuple[str, Any]) -> tuple[bool | None, str]:
    """Write sentinels through one tensor and look for the change in the other; restore.

    Returns (overlap or None when neither can be written, how it was decided)."""
    refused = []
    for (wname, w), (rname, r) in ((first, second), (second, first)):
        try:
            w_before = adapter.to_numpy(w)
            r_before = adapter.to_numpy(r).tobytes()
            if w_before.size == 0:
                return False, f"{wname} has no elements"
            seen = False
            try:
                for sentinel in adapter.sentinels(w):
                    adapter.probe_fill(w, sentinel)
                    if adapter.to_numpy(r).tobytes() != r_before:
                        seen = True
                        break
            finally:
                adapter.probe_restore(w, w_before)
        except Exception as exc:  # read-only memory and the like: try the other direction
            refused.append(f"{wname} not writable ({type(exc).__name__}: {exc})"[:200])
            continue
        verb = "saw" if seen else "did not see"
        return seen, f"wrote through {wname}, {verb} the change in {rname}"
    return None, "undetermined: " + "; ".join(refused)


def _values_match(observed: Any, expected: Any) -> tuple[bool, Any]:
    import numpy as np

    if isinstance(expected, dict):  # complex: {real, imag}
        exp = np.array(expected["real"]) + 1j * np.array(expected["imag"])
    else:
        exp = np.array(expected)
    shown = _show(plain(observed.tolist()))
    if observed.dtype.kind not in "biufc":  # e.g. an object array holding layers
        return False, f"{shown} (not numbers: dtype {observed.dtype})"
    if exp.shape != observed.shape:
        return False, f"{shown} (shape {list(observed.shape)}, expected shape {list(exp.shape)})"
    if observed.dtype.kind in "fc" or exp.dtype.kind in "fc":
        ok = np.allclose(observed.astype(complex if observed.dtype.kind == "c" else float), exp,
                         rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        ok = bool(np.array_equal(observed, exp))
    return bool(ok), shown


def recorded_values(array: Any) -> Any:
    """What an observation keeps of an array's values: all of a small one; of a larger
    one its size, shape, a digest of its bytes and its first elements (the comparison with
    the expectation has seen every element)."""
    import hashlib

    if array.size <= limits.MAX_RECORDED_ELEMENTS:
        return plain(array.tolist())
    flat = array.reshape(-1)
    digest = hashlib.sha256(flat.tobytes()).hexdigest() if array.dtype.kind in "biufc" else None
    return {"elements": int(array.size), "shape": [int(d) for d in array.shape], "dtype": str(array.dtype),
            "sha256": digest, "first": plain(flat[: limits.RECORDED_HEAD].tolist())}


_PLAIN_DEPTH = 64


def plain(value: Any, depth: int = 0) -> Any:
    """Plain data only (None, bool, int, float, complex, str, lists and dicts of them): what
    an outcome may carry out of the framework process. Anything else a step made (a layer,
    a module, a framework scalar) becomes its type's name, so that no framework object
    ever reaches the process that reads the outcome."""
    if value is None or type(value) in (bool, int, float, complex, str):
        return value
    if depth >= _PLAIN_DEPTH:
        return "<nested too deep>"
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    item = getattr(value, "item", None)  # NumPy scalars
    if type(value).__module__ == "numpy" and callable(item):
        return plain(item(), depth + 1)
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def _show(value: Any) -> Any:
    text = repr(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _qualname(tp: type) -> str:
    module = tp.__module__
    return tp.__qualname__ if module == "builtins" else f"{module}.{tp.__qualname__}"


# the classes an Outcome is made of: what conformance.codec may build when the sandbox's
# parent reads one
OUTCOME_TYPES: tuple[type, ...] = (Outcome, StepRecord, ErrorInfo, Mismatch, Location)
