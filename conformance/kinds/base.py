"""An assertion kind: what one key of a case's ``expect`` means, in one class.

In the spirit of test262's linter (a tiny base class, one class per rule), each kind
(``shares_memory``, ``values``, ``error``, ...) is a :class:`Kind` that

1. **parses** its YAML value and validates it, failing with a located
   :class:`~conformance.source.CaseFormatError` (:meth:`Kind.parse`, with the helpers of
   :mod:`conformance.yamlvalues.fields`), and gives its JSON Schema fragment (:meth:`Kind.schema`);
2. **observes** through the adapter's probes and 3. **checks**, recording what it observed
   and producing the text of each mismatch (:meth:`Kind.check`, given a :class:`Checking`:
   the engine's view of the case that ran);
4. names each result with a typed key, :class:`~conformance.model.ResultKey`
   (``ResultKey("shares_memory", ("y", "x"))``, written ``shares_memory.y.x`` in the results
   file);
5. **describes** itself for failures (:meth:`Kind.what`), for the reports and ``diff``
   (:attr:`Kind.compared`, :attr:`Kind.aliasing`) and for ``conformance observe``
   (:meth:`Kind.probe`, :meth:`Kind.worth_writing`, :meth:`Kind.yaml_lines`).

Three shapes share most of that: :class:`TensorKind` (``{y: value}``, one name per entry),
:class:`PairKind` (``{y & x: true}``, two) and :class:`WholeKind` (one value about the
case as a whole: ``error``, ``warning``). The kinds are listed, once, in
:mod:`conformance.kinds`; every stage takes them from there.

Kinds import no framework: the engine hands them the adapter, whose probes they call
(NumPy only for comparing arrays the adapter gave as NumPy, imported when first needed).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, ClassVar, Collection, Mapping, NamedTuple, Protocol, Sequence

from conformance.contract import Probing
from conformance.ir import Step
from conformance.model import DROPPED, Case, ResultKey
from conformance.source import CaseFormatError, Location, raise_all, split
from conformance.yamlvalues import fields

_new_key = tuple.__new__

# The order kinds are checked in (stable within a phase: the order the case wrote them).
# Relations come last: the behavioural memory probe writes (and restores) memory.
ERRORS, WARNINGS, PROPERTIES, RELATIONS = 0, 1, 2, 3


class ParseContext(NamedTuple):
    """What a kind's parser may refer to besides its own value."""

    steps: Sequence[Step]  # the case's steps, flat, in the order they run (numbered from 1)
    # every name the case has: given, or bound by a step (a fields.OpenNames where part of
    # the case that defines names could not be read: every name is then taken as known)
    bound: Collection[str]
    frameworks: Sequence[str]  # the frameworks an entry may name (the error's per-framework details)
    # framework -> the exception type names it may raise (its adapter's exception_types and
    # Python's builtin exceptions); a framework not in it (or None) is not checked
    exception_types: Mapping[str, Collection[str]] | None = None
    # an override's expect: an entry written null drops the shared entry (model.Dropped)
    drops: bool = False


class Checking(Protocol):
    """The engine's view of a case that ran, as a kind checks it (conformance.run.engine's
    ``_Checker``). ``failed`` and ``steps`` are the engine's step records: ``number``,
    ``text``, ``location``, ``warnings`` and ``error`` (``type``, ``message``, ``kind``)."""

    @property
    def adapter(self) -> Probing:
        """The framework's adapter: its probes (to_numpy, overlaps, version_of, ...)."""
        ...

    failed: Any  # the record of the step that raised, or None
    # whether a version counter counts the steps' mutations (eager), or only shows that an
    # input was mutated (a compiled mode applies an input's mutations as its own copies)
    counts_versions: bool

    @property
    def steps(self) -> Sequence[Any]:
        """Every step's record, step n at n - 1."""
        ...

    def lookup(self, name: str, what: str, key: ResultKey) -> tuple[bool, Any]:
        """(True, the object bound to ``name``), or (False, None) after recording that it
        was never bound as a mismatch of ``what``."""
        ...

    def first_version(self, obj: Any) -> int | None:
        """The version counter ``obj`` had when it first appeared."""
        ...

    def unwritten(self, obj: Any) -> str | None:
        """Where the memory nobody wrote that ``obj`` holds came from, or None."""
        ...

    def gradient(self, obj: Any, name: str) -> tuple[str | None, Any]:
        """(None, the gradient of ``obj``, bound to ``name``; None for none): its ``.grad`` on a
        framework with tensor autograd, what the run's backward() steps computed for the leaf
        the name holds where gradients are functional (conformance/run/gradients.py); or (why
        it is not observable, None)."""
        ...

    def record(self, key: ResultKey, value: Any) -> None:
        """Keep an observation (made plain data)."""
        ...

    def miss(self, what: str, expected: Any, observed: Any, key: ResultKey | None = None, name: str | None = None,
             detail: str = "", *, step: int | None = None, location: Location | None = None) -> None:
        """Record an expectation that did not hold: at the YAML position of ``key`` (or
        ``location``), blaming the step that bound ``name`` (or ``step``)."""
        ...

    def unobservable(self, text: str) -> None:
        """Record an expectation this framework has no notion of."""
        ...


class Kind:
    """One assertion kind. Subclass :class:`TensorKind`, :class:`PairKind` or
    :class:`WholeKind`, set the class attributes and write the abstract methods; then add
    one instance to ``conformance.kinds.KINDS``."""

    name: ClassVar[str] = ""  # its key under expect, and the kind of its ResultKeys
    description: ClassVar[str] = ""  # what it expects, in one line: the schema's description of its key
    arity: ClassVar[int] = 1  # names per entry: 1 (a tensor), 2 (a pair: 'y & x'), 0 (the case as a whole)
    phase: ClassVar[int] = PROPERTIES  # when it is checked (ERRORS, WARNINGS, PROPERTIES, RELATIONS)
    always_checked: ClassVar[bool] = False  # checked even when the case does not write it (error)
    # the classes of what its parser makes, which the case cache and the sandbox may rebuild
    value_types: ClassVar[tuple[type, ...]] = ()
    # its observations take part in comparing frameworks (the report's agreement) and runs
    # (diff); false for what is compared through the record's behaviour instead (error)
    compared: ClassVar[bool] = True
    # its observation of a pair is one of the relations that classify it (view, copy, ...:
    # conformance.kinds.relations.aliasing_class), shown as that class rather than alone
    aliasing: ClassVar[bool] = False
    # where `conformance observe` writes it among the kinds (None: never)
    observe_order: ClassVar[int | None] = None
    # the kind whose observation of the same names usually says the same thing (same_storage:
    # shares_memory, since elements in common are one allocation): observe writes this kind's
    # entry only where the two differ on some framework, and then writes that kind's entry
    # for the same names beside it, since the contrast is the fact
    implied_by: ClassVar[str | None] = None

    # ---- its key and its words

    def key(self, names: Sequence[str] = ()) -> ResultKey:
        return ResultKey(self.name, tuple(names))

    def what(self, names: Sequence[str]) -> str:
        """The expectation in a failure's words: ``values of y``, ``shares_memory(y, x)``."""
        return self.name

    # ---- (1) parse

    def parse(self, raw: Any, loc: Location, ctx: ParseContext, locations: dict[ResultKey, Location]) -> Any:
        """The parsed value of ``raw`` (written at ``loc``); where each of its entries was
        written goes into ``locations``, under its key. A mistake raises a
        :class:`CaseFormatError`; a kind that reads on past one (each entry on its own)
        raises them all at the end as one :class:`~conformance.source.CaseFormatErrors`."""
        raise NotImplementedError

    def schema(self, frameworks: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the JSON Schema of its value under ``expect``, the ``$defs`` it adds)."""
        raise NotImplementedError

    # ---- (2, 3) observe and check

    def check(self, expected: Any, run: Checking) -> None:
        """Observe what ``expected`` (the parsed value; None for an unwritten
        ``always_checked`` kind) is about, record it, and record each mismatch."""
        raise NotImplementedError

    # ---- (5) describe

    def names_in(self, value: Any) -> set[str]:
        """The names an expectation of this kind is about."""
        return set()

    def comparable(self, value: Any) -> Any:
        """The expectation without where it was written (two overrides compare equal)."""
        return value

    def probe(self, names: Sequence[str], pairs: Sequence[tuple[str, str]], autograd: bool) -> Any:
        """What `conformance observe` asks of the case's names to see everything (only what
        the check observes is used, never the expected values), or None."""
        return None

    def worth_writing(self, key: ResultKey, values: Mapping[str, Any], case: Case,
                      made: Collection[tuple[str, str]]) -> bool:
        """Whether `conformance observe` writes an observation (``values``: framework ->
        observed) as an expectation; ``made``: the (result, source) pairs the steps produce
        (``y = x.view(4)``: (y, x); ``a, b = x.split(2)``: (a, x) and (b, x))."""
        return False

    def written(self, names: Sequence[str]) -> str:
        """How an entry's names are written under its key."""
        return ", ".join(names)

    def yaml_lines(self, entries: Sequence[tuple[ResultKey, Any]]) -> list[str]:
        """`conformance observe`'s lines for observations (key, observed) of this kind."""
        return [f"{self.name}: {{{', '.join(f'{self.written(k.names)}: {json.dumps(shown(v))}' for k, v in entries)}}}"]


class EntryKind(Kind):
    """A kind whose value maps entries (names) to what is expected of them, merged entry by
    entry under an override. Parsed into ``{names: expected}``."""

    placeholder: ClassVar[Any] = None  # what observe's probe expects of each entry
    probed: ClassVar[str] = "never"  # observe probes it "always", for "autograd" cases, or "never"
    # whether null is an expected value of an entry (grad: no gradient); if not, an override's
    # entry written null drops the shared entry (model.Dropped)
    null_is_value: ClassVar[bool] = False

    def parse(self, raw: Any, loc: Location, ctx: ParseContext, locations: dict[ResultKey, Location]) -> Any:
        entries = fields.mapping(raw, loc, f"'{self.name}'")
        parsed: dict[tuple[str, ...], Any] = {}
        name, parse_names, parse_value = self.name, self.parse_names, self.parse_value
        errors: list[CaseFormatError] = []
        for text, value in entries.items():  # each entry on its own: every mistake is reported
            eloc = entries.where(text)
            try:
                names = parse_names(text, eloc, ctx)
                dropped = value is None and ctx.drops and not self.null_is_value
                parsed[names] = DROPPED if dropped else parse_value(value, eloc, text)
            except CaseFormatError as exc:
                errors += split(exc)
                continue
            locations[_new_key(ResultKey, (name, names))] = eloc  # ResultKey(name, names), without its __new__
        if errors:
            raise_all(errors)
        return parsed

    def parse_names(self, text: str, loc: Location, ctx: ParseContext) -> tuple[str, ...]:
        raise NotImplementedError

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        """An entry's expected value (``text``: how its names were written)."""
        raise NotImplementedError

    def check(self, expected: Any, run: Checking) -> None:
        for names, value in expected.items():
            self.check_entry(names, value, run)

    def check_entry(self, names: tuple[str, ...], expected: Any, run: Checking) -> None:
        raise NotImplementedError

    def names_in(self, value: Any) -> set[str]:
        return {n for names in value for n in names}

    def comparable(self, value: Any) -> Any:
        return repr(dict(value))

    def probe(self, names: Sequence[str], pairs: Sequence[tuple[str, str]], autograd: bool) -> Any:
        if self.probed == "never" or (self.probed == "autograd" and not autograd):
            return None
        entries = pairs if self.arity == 2 else [(n,) for n in names]
        return {tuple(e): self.placeholder for e in entries}


class TensorKind(EntryKind):
    """A property of one tensor: ``{y: expected}``. Frameworks that have no notion of it
    list its name in their adapter's ``unobservable``."""

    arity = 1
    phase = PROPERTIES

    def what(self, names: Sequence[str]) -> str:
        return f"{self.name} of {names[0]}"

    def written(self, names: Sequence[str]) -> str:
        return names[0]

    def parse_names(self, text: str, loc: Location, ctx: ParseContext) -> tuple[str, ...]:
        if text not in ctx.bound:
            fields.known_name(text, ctx.bound, loc)  # raises, saying which names there are
        return (text,)

    def check_entry(self, names: tuple[str, ...], expected: Any, run: Checking) -> None:
        (name,), key, what, adapter = names, ResultKey(self.name, names), self.what(names), run.adapter
        if self.name in adapter.unobservable:
            run.unobservable(f"{what}: {adapter.name} has no {self.name.replace('_', ' ')}")
            return
        found, obj = run.lookup(name, what, key)
        if not found:
            return
        if not adapter.is_array(obj):
            run.miss(what, expected, f"{name} is a {type(obj).__name__}, not a tensor", key, name)
            return
        self.compare(obj, name, expected, run)

    def compare(self, obj: Any, name: str, expected: Any, run: Checking) -> None:
        """Observe a tensor, record it, compare: equality of :meth:`observe`'s value."""
        key = ResultKey(self.name, (name,))
        try:
            observed = self.observe(obj, run)
        except Exception as exc:  # the framework refuses to say
            # torch refuses to read is_leaf or grad_fn of a view whose base was written after
            # a multi-output view op made it ("Output 0 of Unbind is a view and its base ...
            # has been modified inplace"): what the framework does, reported, not a crash
            run.miss(self.what((name,)), expected, f"reading it raised {type(exc).__name__}: {exc}", key, name)
            return
        run.record(key, observed)
        if observed != expected:
            run.miss(self.what((name,)), expected, observed, key, name)

    def observe(self, obj: Any, run: Checking) -> Any:
        raise NotImplementedError

    def schema(self, frameworks: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"description": self.description, "type": "object",
                "additionalProperties": self.value_schema()}, {}

    def value_schema(self) -> dict[str, Any]:
        """The JSON Schema of one entry's expected value."""
        raise NotImplementedError


class PairKind(EntryKind):
    """A relation between two tensors: ``{y & x: true}``."""

    arity = 2
    phase = RELATIONS
    placeholder = True

    def what(self, names: Sequence[str]) -> str:
        return f"{self.name}({names[0]}, {names[1]})"

    def written(self, names: Sequence[str]) -> str:
        return " & ".join(names)

    def parse_names(self, text: str, loc: Location, ctx: ParseContext) -> tuple[str, ...]:
        names = tuple(p.strip() for p in text.split("&"))
        if len(names) != 2 or not all(names):
            raise CaseFormatError(loc, f"'{self.name}' entries are 'a & b: true|false', got {text!r}",
                                  f"name two tensors joined by '&', e.g. {self.name}: {{y & x: true}}")
        for n in names:
            fields.known_name(n, ctx.bound, loc)
        return names

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        if not isinstance(value, bool):
            raise CaseFormatError(loc, f"'{self.name}' of {text!r} must be true or false, got {fields.kind_of(value)}")
        return value

    def check_entry(self, names: tuple[str, ...], expected: Any, run: Checking) -> None:
        (a, b), key, what = names, ResultKey(self.name, names), self.what(names)
        found_a, x = run.lookup(a, what, key)
        found_b, y = run.lookup(b, what, key)
        if found_a and found_b:
            self.compare((a, x), (b, y), expected, run)

    def compare(self, first: tuple[str, Any], second: tuple[str, Any], expected: bool, run: Checking) -> None:
        raise NotImplementedError

    def tensors(self, first: tuple[str, Any], second: tuple[str, Any], expected: bool, run: Checking) -> bool:
        """Whether both are tensors; if not, the mismatch says which is not."""
        key = ResultKey(self.name, (first[0], second[0]))
        for name, obj in (first, second):
            if not run.adapter.is_array(obj):
                run.miss(self.what(key.names), expected, f"{name} is a {type(obj).__name__}, not a tensor", key, name)
                return False
        return True

    def schema(self, frameworks: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"description": self.description, "$ref": "#/$defs/pairs"}, {"pairs": PAIRS_SCHEMA}


PAIRS_SCHEMA: dict[str, Any] = {
    "description": "'a & b' -> true or false: two tensors of the case joined by '&'.",
    "type": "object",
    "propertyNames": {
        "description": "Two tensor names joined by '&', e.g. 'y & x'.",
        "pattern": "^[^&]*[^&\\s][^&]*&[^&]*[^&\\s][^&]*$",
    },
    "additionalProperties": {"type": "boolean"},
}


class WholeKind(Kind):
    """One value about the case as a whole (``error: {...}``), replaced whole by an
    override; ``null`` expects none. Its key has no names."""

    arity = 0
    compared = False

    def parse(self, raw: Any, loc: Location, ctx: ParseContext, locations: dict[ResultKey, Location]) -> Any:
        locations[ResultKey(self.name)] = loc
        return None if raw is None else self.parse_value(raw, loc, ctx)

    def parse_value(self, raw: Any, loc: Location, ctx: ParseContext) -> Any:
        raise NotImplementedError

    def comparable(self, value: Any) -> Any:
        return replace(value, location=None) if hasattr(value, "location") else value


# ---- showing values


def shown(value: Any) -> Any:
    """A value as a case writes it: floats rounded to what the values check can tell apart
    (float32 noise removed), complex values in the case format's {real, imag} form."""
    if _has_complex(value):
        return {"real": shown(_part(value, "real")), "imag": shown(_part(value, "imag"))}
    if isinstance(value, list):
        return [shown(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.6g}")
    return value


def _has_complex(value: Any) -> bool:
    return isinstance(value, complex) or (isinstance(value, list) and any(_has_complex(v) for v in value))


def _part(value: Any, part: str) -> Any:
    if isinstance(value, list):
        return [_part(v, part) for v in value]
    return float(getattr(complex(value), part))


def expressible(value: Any) -> bool:
    """Whether an observed value can be written as an expectation (the engine records a
    string for unspecified memory and a digest for a large array)."""
    if isinstance(value, list):
        return all(expressible(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex))


def short_repr(value: Any, limit: int = 300) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
