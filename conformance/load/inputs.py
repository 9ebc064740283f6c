"""A case's ``given``: each named input read into a :class:`~conformance.model.TensorSpec`
(listed values, or a ``fill`` / ``arange`` rule kept as the rule, or an expression of the
inputs before it: ``from: "b.t()"``), with located errors."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from conformance import rules
from conformance.ir import Step
from conformance.limits import MAX_ELEMENTS
from conformance.load.steps import parse_step_uses
from conformance.model import DTYPES, Generated, TensorSpec
from conformance.source import CaseFormatError, Location, split
from conformance.yamlvalues import fields
from conformance.yamlvalues.yamlsrc import YMap

TENSOR_KEYS = ("data", "real", "imag", "shape", "fill", "arange", "dtype", "requires_grad",
               "type", "writeable", "align", "from")
# ``align: N``: the powers of two an input's buffer may be asked to start on a multiple of
# (NumPy's allocator promises 16 bytes; DLPack importers ask for 64, pages are 4096)
ALIGNMENTS = tuple(2 ** n for n in range(3, 13))
TENSOR_TYPES = ("tensor", "ndarray")
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# the largest value of each integer dtype, for arange: (NumPy would refuse it at run time)
INT_MAX = {"uint8": 2**8 - 1, "int8": 2**7 - 1, "int16": 2**15 - 1, "int32": 2**31 - 1, "int64": 2**63 - 1}


@dataclass
class Given:
    """What ``given`` holds: the inputs that could be read, the names of every input written
    (None: ``given`` itself could not be read), and, of each input made ``from`` others, the
    operation-table keys and the strings its expression uses (checked with the steps')."""
    specs: list[TensorSpec] = field(default_factory=list)
    names: set[str] | None = field(default_factory=set)
    operations: list[tuple[Step, set[str]]] = field(default_factory=list)
    strings: list[tuple[Step, set[str]]] = field(default_factory=list)


def read_given(m: YMap, errors: list[CaseFormatError]) -> Given:
    """The inputs, each read on its own, its mistake added to ``errors``. An input in error
    still defines its name (no use of it is reported as undefined); the names are None when
    ``given`` itself could not be read (what it defines is unknown)."""
    if "given" not in m:
        return Given()
    try:
        g = fields.mapping(m["given"], m.where("given"), "'given'")
    except CaseFormatError as exc:
        errors += split(exc)
        return Given(names=None)
    given = Given(names=set(g))
    before: set[str] = set()
    for name, raw in g.items():
        try:
            if not NAME_PATTERN.fullmatch(name):
                raise CaseFormatError(g.where(name), f"invalid tensor name {name!r}",
                                      "names start with a letter and use letters, digits and '_'")
            if isinstance(raw, YMap) and "from" in raw:
                given.specs.append(_made_from(name, raw, before, given))
            else:
                given.specs.append(read_tensor(name, raw, g.where(name)))
        except CaseFormatError as exc:
            errors += split(exc)
        before.add(name)
    return given


def _made_from(name: str, t: YMap, before: set[str], given: Given) -> TensorSpec:
    """``x: {from: "b.t()"}``: an input made by an expression of the inputs written before
    it, parsed as the step ``x = b.t()`` (the same parser and allowlist as a step's)."""
    what = f"input {name!r}"
    fields.keys(t, ("from",), what)
    text = fields.string(t, "from", f"{what}'s 'from'")
    loc = t.where("from")
    try:
        step, reads, operations, strings = parse_step_uses(f"{name} = {text}", 0, loc, set(before))
    except CaseFormatError as exc:
        raise CaseFormatError(exc.location, f"{what}: from {text!r}: {exc.message}", exc.hint, code=exc.code) \
            from None
    undefined = sorted(reads - before)
    if undefined:
        raise CaseFormatError(loc, f"{what}: from {text!r} reads {', '.join(map(repr, undefined))}, which no input "
                              "written before it defines", "an input is made from the inputs above it under "
                              "'given' (steps run after every input is made)", code=rules.UNDEFINED_NAME.code)
    given.operations.append((step, operations))
    if strings:
        given.strings.append((step, strings))
    return TensorSpec(name=name, values=None, dtype="", shape=(), location=t.location, made_by=step)


def read_tensor(name: str, raw: Any, loc: Location) -> TensorSpec:
    if not isinstance(raw, YMap):  # shorthand: x: [1.0, 2.0]
        t = YMap(data=raw)
        t.location, t.key_locations = loc, {"data": loc}
    else:
        t = raw
    what = f"input {name!r}"
    fields.keys(t, TENSOR_KEYS, what)
    source = _source(t, what)
    imag = None
    if source in ("data", "real"):
        values, shape, kinds, imag = _listed(t, source, what)
    else:
        values, shape, kinds = _generated(t, source, what)
    dtype = _dtype(t, kinds, what)
    if isinstance(values, Generated) and values.rule == "arange" and dtype in INT_MAX and \
            math.prod(shape) - 1 > INT_MAX[dtype]:
        raise CaseFormatError(t.where("arange"), f"{what}: arange up to {math.prod(shape) - 1} does not fit {dtype} "
                              f"(at most {INT_MAX[dtype]})", "use fewer elements or a wider dtype")
    if imag is not None and not dtype.startswith("complex"):
        raise CaseFormatError(t.where("dtype"), f"{what}: 'real'/'imag' need a complex dtype", "dtype: complex64")
    kind = t.get("type", "tensor")
    if kind not in TENSOR_TYPES:
        raise CaseFormatError(t.where("type"), f"{what}: unknown type {kind!r}",
                              "'tensor' (the framework's own) or 'ndarray' (a NumPy array)")
    requires_grad = fields.boolean(t, "requires_grad", "'requires_grad'") if "requires_grad" in t else False
    writeable = fields.boolean(t, "writeable", "'writeable'") if "writeable" in t else True
    if not writeable and kind != "ndarray":
        raise CaseFormatError(t.where("writeable"), f"{what}: 'writeable: false' applies to NumPy inputs only",
                              "add 'type: ndarray'")
    align = None
    if "align" in t:
        align = t["align"]
        if type(align) is not int or align not in ALIGNMENTS:
            raise CaseFormatError(t.where("align"), f"{what}: 'align' must be a power of two from {ALIGNMENTS[0]} to "
                                  f"{ALIGNMENTS[-1]} (bytes), got {align!r}", "e.g. align: 64")
        if kind != "ndarray":
            raise CaseFormatError(t.where("align"), f"{what}: 'align' applies to NumPy inputs only (a framework's "
                                  "own tensor is allocated by the framework)", "add 'type: ndarray'")
    return TensorSpec(name=name, values=values, dtype=dtype, shape=tuple(shape), imag=imag,
                      requires_grad=requires_grad, kind=kind, writeable=writeable, location=loc, align=align)


def _source(t: YMap, what: str) -> str:
    """Where the values come from: data, real (with imag), fill or arange."""
    sources = [k for k in ("data", "real", "fill", "arange") if k in t]
    if "real" in sources and "imag" not in t:
        raise CaseFormatError(t.where("real"), f"{what} has 'real' but no 'imag'", "give both parts")
    if "imag" in t and "real" not in t:
        raise CaseFormatError(t.where("imag"), f"{what} has 'imag' but no 'real'",
                              "give both parts: real: [...], imag: [...], dtype: complex64")
    if len(sources) != 1:
        raise CaseFormatError(t.location, f"{what} needs exactly one of 'data', 'real'/'imag', 'fill' or 'arange'",
                              "e.g. data: [1.0, 2.0], or shape: [2, 3] with fill: 0")
    return sources[0]


def _listed(t: YMap, source: str, what: str) -> tuple[Any, tuple[int, ...], set[str], Any]:
    """(values, shape, kinds of number, imaginary parts) of ``data:`` or ``real:``/``imag:``."""
    values, shape, kinds = fields.literal(t[source], t.where(source), what)
    imag = None
    if source == "real":
        imag, ishape, ikinds = fields.literal(t["imag"], t.where("imag"), what)
        if ishape != shape:
            raise CaseFormatError(t.where("imag"), f"{what}: 'imag' has shape {list(ishape)}, 'real' has {list(shape)}")
        kinds |= ikinds | {"complex"}
    if "shape" in t:
        raise CaseFormatError(t.where("shape"), f"{what}: 'shape' comes from 'data'", "remove 'shape'")
    return values, shape, kinds, imag


def _generated(t: YMap, source: str, what: str) -> tuple[Generated, tuple[int, ...], set[str]]:
    """(the rule, shape, kinds of number) of ``fill:`` or ``arange:`` with a ``shape:``."""
    if "shape" not in t:
        raise CaseFormatError(t.location, f"{what}: '{source}' needs a 'shape'", "e.g. shape: [2, 3]")
    shape = fields.shape(t["shape"], t.where("shape"), what)
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        shown = count if count < 10**18 else "more than 10**18"  # not thousands of digits
        raise CaseFormatError(t.where("shape"), f"{what} has {shown} elements; at most {MAX_ELEMENTS} are allowed",
                              "cases are about semantics: use a small tensor")
    if source == "fill":
        fill = t["fill"]
        if not fields.is_number(fill):
            raise CaseFormatError(t.where("fill"), f"{what}: 'fill' must be a number")
        return Generated("fill", fill), shape, {fields.number_kind(fill)}
    if t["arange"] is not True:
        raise CaseFormatError(t.where("arange"), f"{what}: 'arange' must be true", "arange: true")
    return Generated("arange"), shape, {"int"}


def _dtype(t: YMap, kinds: set[str], what: str) -> str:
    dtype = t["dtype"] if "dtype" in t else _default_dtype(kinds)
    if dtype not in DTYPES:
        raise CaseFormatError(t.where("dtype"), f"{what}: unknown dtype {dtype!r}",
                              fields.did_you_mean(str(dtype), DTYPES) or f"use one of {', '.join(DTYPES)}")
    return dtype


def _default_dtype(kinds: set[str]) -> str:
    if "complex" in kinds:
        return "complex64"
    if "float" in kinds:
        return "float32"
    if kinds == {"bool"}:
        return "bool"
    return "int64"
