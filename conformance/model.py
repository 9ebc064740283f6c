"""The case model: frozen, framework-free descriptions of what a case does and expects.

Nothing here imports a framework. A :class:`Case` is produced by :mod:`conformance.load.reader`
from YAML and consumed by :mod:`conformance.run.engine`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, NamedTuple, Sequence

from conformance import ir
from conformance.ir import Step, operations_of
from conformance.releases import release_matches
from conformance.source import CaseFormatError, Location

# Framework-neutral error kinds an expectation can name: the error taxonomy. Each says what
# situation the step met; docs/case-format.md ("Error kinds") gives, for each, the messages
# of each framework that map to it (the adapters' error_patterns and base.COMMON_ERRORS,
# which tests/test_error_kinds.py keeps equal to it). A message none of them matches is
# ``other``.
ERROR_KINDS: Mapping[str, str] = {
    "inplace_on_leaf": "an in-place write (an _ method, item assignment, an inplace layer) into a leaf that "
                       "requires grad, or into a view of one",
    "modified_saved_tensor": "backward found a tensor it saved modified in place after it was saved",
    "read_only": "a write into memory the framework keeps read-only (a non-writeable array, a read-only view)",
    "overlapping_write": "an in-place write whose destination has several elements in one memory location, or "
                         "whose source partly overlaps it",
    "dtype_cast": "a dtype conversion the operation needs is refused: the result cannot be cast to the "
                  "destination's dtype (in place, out=, copy_), or the operands' dtypes are not promoted to a "
                  "common one",
    "unsupported_dtype": "the operation has no implementation for the tensor's dtype (no kernel for it; the "
                         "imaginary part of a real dtype; a dtype the conversion's target lacks)",
    "shape_mismatch": "the shapes do not fit the operation: they cannot be broadcast, reshaped or viewed as asked, "
                      "joined, split into equal pieces or squeezed",
    "not_contiguous_view": "a view (a result without a copy) was demanded and the memory cannot give one: its "
                           "strides cannot express it, or the source cannot promise it (copy=False)",
    "no_grad_fn": "backward on a tensor that does not require grad / has no grad_fn",
    "graph_freed": "backward through a graph a second time after its buffers were freed",
    "requires_grad_conversion": "a conversion out of the framework (to NumPy, DLPack export) refused because the "
                                "tensor requires grad",
    "type_error": "the call is refused for the form of its arguments: an unexpected keyword, a missing or extra "
                  "argument, a value of a Python type the operation does not take",
    "immutable": "a mutation (item or augmented assignment, an in-place write) refused: the framework's arrays "
                 "are immutable (the adapter's Immutability declaration)",
    "other": "any other exception",
}

# What a case says about a claim it lists: the behaviour it expects is what the claim says
# (holds), contradicts it (does_not_hold), or bounds it without deciding it (related).
CLAIM_STANCES = ("holds", "does_not_hold", "related")
DTYPES = (
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
)
# device names a step may pass (x.to('cpu')): cpu, cuda, cuda:N
DEVICE_NAME = re.compile(r"cpu|cuda(:\d{1,2})?")


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Generated:
    """Values written as a rule (``fill: 0.5`` or ``arange: true``) rather than listed: kept
    as the rule, so that a 10^5-element input costs nothing to load, pickle or hold until
    an adapter makes it (``numpy_input``)."""

    rule: str  # "fill" or "arange"
    fill: Any = None  # the value, for "fill"


@dataclass(frozen=True)
class TensorSpec:
    """One named input under ``given``."""

    name: str
    values: Any  # nested lists of numbers (data:, real:), or the Generated rule (fill:, arange:)
    dtype: str
    shape: tuple[int, ...]
    requires_grad: bool = False
    kind: str = "tensor"  # "tensor" (the framework's own) or "ndarray" (a NumPy array)
    writeable: bool = True
    imag: Any = None  # imaginary parts for complex dtypes, same nesting as values
    # ``align: N``: a NumPy input whose buffer starts on a multiple of N bytes (and its views,
    # ``from: "b[1:]"``, on a known offset from one): what a DLPack import's copy depends on
    align: int | None = None
    location: Location | None = None
    # ``from: "b.t()"``: an input made from earlier inputs through the adapter's table, as the
    # assignment step ``x = b.t()`` (step number 0), before the steps and outside a compiled
    # function: a view of another input, two inputs that alias (values, dtype, shape unused)
    made_by: Any = None


# --------------------------------------------------------------------------- expectations


class ResultKey(NamedTuple):
    """What one expectation is about, and the key its observation is recorded under: an
    assertion kind (``conformance.kinds``) and the names it is about, ``("y", "x")`` for a
    relation, ``("y",)`` for a tensor property, ``()`` for the case as a whole (error,
    warning). Its text form, ``shares_memory.y.x``, is the key of the results file's
    ``observed``; :meth:`__str__` writes it and :meth:`parse` reads it, and nothing else
    does either (names hold no dot)."""

    kind: str
    names: tuple[str, ...] = ()

    def __str__(self) -> str:
        return ".".join((self.kind, *self.names))

    @classmethod
    def parse(cls, text: str) -> ResultKey:
        kind, *names = text.split(".")
        return cls(kind, tuple(names))


@dataclass(frozen=True)
class Dropped:
    """An override's entry written ``null`` (``same_object: {y & x: null}``): the shared
    expectation's entry of that key does not apply on that framework (the step that would
    bind ``y`` raises there, say). Only an override's ``expect`` holds it; merging removes
    the entry."""


DROPPED = Dropped()


@dataclass(frozen=True)
class Expect:
    """What must hold after the steps: ``checks`` maps an assertion kind's name to what the
    case expects of it, in the order written. A kind about names (``values``,
    ``shares_memory``, ...) holds ``{names: expected}`` (``("y",)``, ``("y", "x")``); a kind
    about the case as a whole (``error``, ``warning``) holds its value, and is absent when
    the case expects none (written ``null`` or not at all). The values are what the kind's
    parser made (``conformance.kinds``)."""

    checks: Mapping[str, Any] = field(default_factory=dict)
    # where each entry was written: ResultKey("values", ("y",)) -> Location, ResultKey("error") -> Location
    locations: Mapping[ResultKey, Location] = field(default_factory=dict)

    def merged(self, override: ExpectOverride) -> Expect:
        """The override's entries win entry by entry; a kind it ``replaces`` is replaced
        whole (and removed by ``null``)."""
        checks = dict(self.checks)
        for kind in override.replaces:
            if kind not in override.expect.checks:
                checks.pop(kind, None)
        for kind, value in override.expect.checks.items():
            if kind in override.replaces:
                checks[kind] = value
                continue
            entries = {key: v for key, v in {**checks.get(kind, {}), **value}.items() if not isinstance(v, Dropped)}
            if entries:
                checks[kind] = entries
            else:  # every entry dropped: the kind asks nothing here
                checks.pop(kind, None)
        return replace(self, checks=checks, locations={**self.locations, **override.expect.locations})


@dataclass(frozen=True)
class ExpectOverride:
    expect: Expect
    # the kinds the override writes that replace the shared expectation whole (error, warning)
    replaces: tuple[str, ...] = ()


@dataclass(frozen=True)
class FrameworkOverride:
    framework: str
    reason: str
    expect: ExpectOverride | None = None
    not_applicable: str | None = None
    location: Location | None = None
    # claim ID -> stance on this framework, where it differs from the case's (CLAIM_STANCES)
    claims: Mapping[str, str] = field(default_factory=dict)
    # the framework's releases it holds for (a PEP 440 specifier set, e.g. "<2.0" or
    # ">=3.1,<3.3"); empty: every release the case has no versioned override for
    versions: str = ""


@dataclass(frozen=True)
class Documented:
    """Where a framework's documentation says one thing and the case measured another
    (``documentation: {fw: {says, source, contradicts}}``): a finding the report lists."""

    framework: str
    says: str  # what the documentation says, quoted or closely paraphrased
    source: str  # the link to the page that says it
    contradicts: str  # the expectation kind whose value on this framework measures otherwise
    location: Location | None = None


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    location: Location
    steps: tuple[Step, ...]
    expect: Expect
    given: tuple[TensorSpec, ...] = ()
    tags: tuple[str, ...] = ()
    # claim ID -> the case's stance on it (CLAIM_STANCES)
    claims: Mapping[str, str] = field(default_factory=dict)
    references: tuple[str, ...] = ()
    device: str = "cpu"
    overrides: Mapping[str, FrameworkOverride] = field(default_factory=dict)
    documentation: Mapping[str, Documented] = field(default_factory=dict)  # framework -> finding
    # framework -> the overrides that hold only for some of its releases (each with
    # ``versions``), in the order written: on a release one of them matches, the first that
    # does replaces the framework's override in ``overrides`` (or adds one)
    versioned: Mapping[str, tuple[FrameworkOverride, ...]] = field(default_factory=dict)
    # ``functional_steps``: the same program without in-place writes, as a user of a framework
    # whose arrays are immutable writes it (rebinding names, cat/where for writes through a
    # view); those frameworks run it instead of ``steps`` (:meth:`program_for`). Empty: they
    # run ``steps`` (and refuse or lack their mutations)
    functional_steps: tuple[Step, ...] = ()
    # ``calls``: the steps are the body of a function of the given tensors, called this many times
    # on the same tensors (a compiled mode compiles it once and calls it again: its guards and
    # caches; docs/case-format.md, "Calling the program again"); the expectations are about
    # the state after the last call. Eager runs :meth:`called`'s steps
    calls: int = 1

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]

    def program_for(self, immutable_arrays: bool) -> Case:
        """The case a framework runs: on one whose arrays are immutable (an adapter's
        ``immutable``), the case with its ``functional_steps`` as its steps, where it has
        them; otherwise the case itself."""
        if immutable_arrays and self.functional_steps:
            return replace(self, steps=self.functional_steps, functional_steps=())
        return self

    def called(self) -> Case:
        """The case as one straight program: its steps once per call, numbered on
        (:func:`conformance.ir.repeated`); the case itself when it is called once."""
        if self.calls == 1:
            return self
        return replace(self, steps=ir.repeated(self.steps, self.calls), calls=1)

    def flat_steps(self) -> list[Step]:
        out: list[Step] = []
        for s in self.steps:
            out.extend(s.flat())
        return out

    def operations(self) -> set[str]:
        """Every operation-table key the steps use."""
        keys: set[str] = set()
        for step in self.steps:
            keys |= operations_of(step)
        return keys

    def overrides_for(self, framework: str, lineage: Sequence[str] = (),
                      version: str | None = None) -> list[FrameworkOverride]:
        """The overrides that apply on a framework, in the order they apply: for a compiled
        mode, those of its ``lineage`` (registry.lineage: the framework it compiles, then the
        modes it derives from) first, then its own. ``version``: the framework's release
        (a compiled mode's is its framework's), which picks among the versioned overrides;
        None: the unversioned ones only."""
        chosen = []
        for name in (*lineage, framework):
            override = self.overrides.get(name)
            if version is not None:
                override = next((o for o in self.versioned.get(name, ()) if release_matches(o.versions, version)),
                                override)
            if override is not None:
                chosen.append(override)
        return chosen

    def all_overrides(self) -> list[FrameworkOverride]:
        """Every override the case has, versioned or not (for checks that hold on each)."""
        return [*self.overrides.values(), *(o for group in self.versioned.values() for o in group)]

    def not_applicable_for(self, framework: str, lineage: Sequence[str] = (), version: str | None = None) -> str | None:
        return next((o.not_applicable for o in self.overrides_for(framework, lineage, version) if o.not_applicable),
                    None)

    def override_reason(self, framework: str, lineage: Sequence[str] = (), version: str | None = None) -> str | None:
        """The reason of the most specific override that changes what is expected, if any."""
        reasons = [o.reason for o in self.overrides_for(framework, lineage, version) if o.expect is not None]
        return reasons[-1] if reasons else None

    def claims_for(self, framework: str, lineage: Sequence[str] = (), version: str | None = None) -> dict[str, str]:
        """The stance on each claim for one framework: the case's, unless an override restates it."""
        stances = dict(self.claims)
        for override in self.overrides_for(framework, lineage, version):
            stances.update(override.claims)
        return stances

    def expect_for(self, framework: str, lineage: Sequence[str] = (), version: str | None = None) -> Expect:
        expect = self.expect
        for override in self.overrides_for(framework, lineage, version):
            if override.expect is not None:
                expect = expect.merged(override.expect)
        return expect


# Every class a Case (or a file's load errors) is made of: what conformance.codec may build
# when it reads one back (the case cache, the sandbox's messages).
CASE_TYPES: tuple[type, ...] = (
    Case, TensorSpec, Generated, ir.Step, ir.Ref, ir.Const, ir.Seq, ir.SliceExpr, ir.Op, ir.PyOp, ir.NameTarget,
    ir.ItemTarget, ir.AttrTarget, Expect, ResultKey, ExpectOverride, FrameworkOverride, Documented, Dropped,
    Location, CaseFormatError,
)
# (the classes of what each assertion kind parses are its own: conformance.kinds.VALUE_TYPES)
