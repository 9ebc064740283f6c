"""Case files -> :class:`~conformance.model.Case` objects, with precise errors.

A bad case makes one :class:`CaseFormatError` (file, line, column, what, fix) and the
other cases of the same file still load; a file that is not valid YAML makes one error
for the file. Nothing here imports a framework; the names of known operations,
frameworks and claims come in through :class:`Vocabulary`.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Iterable, NoReturn

from conformance.limits import MAX_ELEMENTS
from conformance.model import (
    CLAIM_STANCES, DEVICE_NAME, DTYPES, ERROR_KINDS, RELATIONS, TENSOR_PROPERTIES, Case, CaseFormatError,
    ErrorDetail, ErrorExpectation, Expect, ExpectOverride, FrameworkOverride, Generated, Location, TensorSpec,
    WarningExpectation,
)
from conformance.ir import Step
from conformance.load.steps import BLOCKS, parse_step_uses
from conformance.ir import names_bound, names_read
from conformance.load.yamlsrc import MAX_FILE_BYTES, YList, YMap, location_of, parse, too_large

MAX_STEPS = 200
# the largest value of each integer dtype, for arange: (NumPy would refuse it at run time)
INT_MAX = {"uint8": 2**8 - 1, "int8": 2**7 - 1, "int16": 2**15 - 1, "int32": 2**31 - 1, "int64": 2**63 - 1}
MAX_DIMS = 32  # per shape; NumPy allows 64, and no case needs more than a few
MAX_REGEX_GROUP_DEPTH = 50  # 'match' patterns quote a message; re itself fails somewhere past 400
ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
CLAIM_PATTERN = re.compile(r"^S\d-\d\d$")
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

CASE_KEYS = ("id", "title", "tags", "claims", "references", "device", "given", "steps",
             "expect", "frameworks")
REQUIRED_CASE_KEYS = ("id", "title", "steps", "expect")
TENSOR_KEYS = ("data", "real", "imag", "shape", "fill", "arange", "dtype", "requires_grad",
               "type", "writeable")
OVERRIDE_KEYS = ("reason", "expect", "not_applicable", "claims")
DEVICES = ("cpu", "cuda")
TENSOR_TYPES = ("tensor", "ndarray")


def _registered_frameworks() -> tuple[str, ...]:
    from conformance import registry  # which imports this module: asked when a Vocabulary is made

    return tuple(registry.framework_names())


@dataclass(frozen=True)
class Vocabulary:
    """What names are valid. ``frameworks``: by default the registered ones
    (conformance.registry). ``operations=None`` skips the operation check. ``strings``: the
    strings a step may pass besides dtype and device names (those some adapter's operations
    take, e.g. a test adapter's state names)."""

    frameworks: Collection[str] = field(default_factory=_registered_frameworks)
    operations: Collection[str] | None = None
    claims: Collection[str] | None = None
    strings: Collection[str] = ()


@dataclass
class LoadResult:
    path: str
    cases: list[Case] = field(default_factory=list)
    # (case id or None when the case's id is unknown, the error)
    errors: list[tuple[str | None, CaseFormatError]] = field(default_factory=list)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""


def load_file(path: str | Path, vocabulary: Vocabulary, display_path: str | None = None,
              draft: bool = False) -> LoadResult:
    """Load a case file. ``draft``: accept cases whose ``expect`` is still empty (for
    ``conformance observe``, which is how expectations get written)."""
    file = display_path or str(path)
    try:
        data = read_case_file(path)
    except OSError as exc:
        return unreadable(file, exc)
    return load_bytes(data, file, vocabulary, draft)


def unreadable(file: str, exc: Exception) -> LoadResult:
    """The result for a file that cannot be read or is not UTF-8."""
    return LoadResult(file, errors=[(None, CaseFormatError(Location(file, 1), f"cannot read file: {exc}"))])


def read_case_file(path: str | Path) -> bytes:
    """The file's bytes, at most one past the size limit: a huge file is never read whole.

    Only a regular file is read. A symbolic link is never followed (``O_NOFOLLOW``) and a
    named pipe or a device is never waited on (opened ``O_NONBLOCK``, then refused after
    ``fstat``): each raises an :class:`OSError` saying what the path is, so that a link (to
    ``/dev/stdin``, ``/dev/zero`` or a file elsewhere) or a FIFO is refused wherever a case
    file is read (pytest, lint, list, observe, the collection helper, the case cache)."""
    import os
    import stat

    link = "it is a symbolic link, and links are never followed; put the case file itself here"
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not nofollow and os.path.islink(path):  # no O_NOFOLLOW (Windows): ask first
        raise OSError(link)
    flags = os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        if nofollow and os.path.islink(path):  # O_NOFOLLOW refused it (ELOOP; EMLINK on FreeBSD)
            raise OSError(link) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                    else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "a folder" if stat.S_ISDIR(mode) else "something else")
            raise OSError(f"it is {kind}, not a regular file; a case file is read only from a regular file")
        stream = open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with stream:  # closes fd
        return stream.read(MAX_FILE_BYTES + 1)


def load_bytes(data: bytes, file: str, vocabulary: Vocabulary, draft: bool = False) -> LoadResult:
    if len(data) > MAX_FILE_BYTES:
        return LoadResult(file, errors=[(None, too_large(file))])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return unreadable(file, exc)
    return load_text(text, file, vocabulary, draft)


def load_text(text: str, file: str, vocabulary: Vocabulary, draft: bool = False) -> LoadResult:
    result = LoadResult(file)
    try:
        doc = parse(text, file)
        cases = _top_level(doc, file)
    except CaseFormatError as exc:
        result.errors.append((None, exc))
        return result
    seen: dict[str, Location] = {}
    for index, raw in enumerate(cases):
        where = cases.where(index)
        case_id = raw.get("id") if isinstance(raw, YMap) and isinstance(raw.get("id"), str) else None
        try:
            case = _CaseReader(file, vocabulary, draft).read(raw, where)
        except CaseFormatError as exc:
            result.errors.append((case_id, exc))
            continue
        if case.id in seen:
            result.errors.append((case.id, CaseFormatError(
                case.location, f"duplicate case id {case.id!r} (first at line {seen[case.id].line})",
                "give each case a unique id", code="CF001")))
            continue
        seen[case.id] = case.location
        result.cases.append(case)
    return result


def _top_level(doc: Any, file: str) -> YList:
    if not isinstance(doc, YMap):
        raise CaseFormatError(Location(file, 1), "a case file must be a mapping with a 'cases' list",
                              "start the file with 'cases:' and list the cases under it")
    extra = [k for k in doc if k != "cases"]
    if extra:
        raise CaseFormatError(doc.where(extra[0]), f"unknown top-level key {extra[0]!r}",
                              "only 'cases' is allowed at the top of a case file")
    cases = doc.get("cases")
    if not isinstance(cases, YList) or not cases:
        raise CaseFormatError(doc.where("cases") if "cases" in doc else doc.location,
                              "'cases' must be a non-empty list", "add at least one case under 'cases:'")
    return cases


class _CaseReader:
    def __init__(self, file: str, vocabulary: Vocabulary, draft: bool = False) -> None:
        self.file = file
        self.vocab = vocabulary
        self.draft = draft
        # each step text read, with the operation-table keys it needs (in the order written)
        self.step_operations: list[tuple[Step, set[str]]] = []
        # each step text read, with the strings it passes
        self.step_strings: list[tuple[Step, set[str]]] = []

    # ---- small typed getters with located errors

    def err(self, loc: Location, message: str, hint: str | None = None, code: str = "CF000") -> CaseFormatError:
        return CaseFormatError(loc, message, hint, code)

    def mapping(self, value: Any, loc: Location, what: str) -> YMap:
        if not isinstance(value, YMap):
            raise self.err(loc, f"{what} must be a mapping, got {_kind(value)}")
        return value

    def keys(self, m: YMap, allowed: Collection[str], what: str) -> None:
        for key in m:
            if key not in allowed:
                hint = did_you_mean(key, allowed) or f"allowed keys: {', '.join(allowed)}"
                raise self.err(m.where(key), f"unknown key {key!r} in {what}", hint)

    def string(self, m: YMap, key: str, what: str) -> str:
        value = m[key]
        if not isinstance(value, str) or not value.strip():
            raise self.err(m.where(key), f"{what} must be a non-empty string, got {_kind(value)}")
        _check_one_line(self, value, m.where(key), what)
        return value

    def bool_(self, m: YMap, key: str, what: str) -> bool:
        value = m[key]
        if not isinstance(value, bool):
            raise self.err(m.where(key), f"{what} must be true or false, got {_kind(value)}")
        return value

    def strings(self, m: YMap, key: str, what: str) -> tuple[str, ...]:
        value = m.get(key, YList())
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.err(m.where(key), f"{what} must be a list of strings",
                           f"e.g. {key}: [first, second]")
        for index, item in enumerate(value):
            _check_one_line(self, item, value.where(index) if isinstance(value, YList) else m.where(key), what)
        return tuple(value)

    # ---- the case

    def read(self, raw: Any, where: Location) -> Case:
        m = self.mapping(raw, where, "a case")
        self.keys(m, CASE_KEYS, "a case")
        for key in REQUIRED_CASE_KEYS:
            if key not in m and not (self.draft and key == "expect"):
                raise self.err(m.location, f"the case has no {key!r}", f"add '{key}:' to the case")
        case_id = self.string(m, "id", "'id'")
        if not ID_PATTERN.fullmatch(case_id):
            raise self.err(m.where("id"), f"invalid id {case_id!r}",
                           "use lowercase dotted words: family.topic.detail, e.g. views.reshape.contiguous")
        location = Location(self.file, m.location.line, m.location.column)
        claims = self.claims(m, "'claims'")
        device = m.get("device", "cpu")
        if device not in DEVICES:
            raise self.err(m.where("device"), f"unknown device {device!r}", f"use one of {', '.join(DEVICES)}")
        given = self.given(m)
        steps = self.steps(m, {g.name for g in given})
        flat = [s for step in steps for s in step.flat()]
        bound = {g.name for g in given} | {n for s in flat for n in names_bound(s)}
        expect = self.expect(m["expect"], m.where("expect"), flat, bound, "'expect'",
                             partial=self.draft) if "expect" in m else Expect()
        overrides = self.overrides(m, flat, bound, claims)
        if self.vocab.operations is not None:
            self.check_operations()
        self.check_strings()
        return Case(
            id=case_id, title=self.string(m, "title", "'title'"), location=location,
            steps=tuple(steps), expect=expect, given=tuple(given),
            tags=self.strings(m, "tags", "'tags'"), claims=claims,
            references=self.strings(m, "references", "'references'"), device=device,
            overrides=overrides,
        )

    # ---- given

    def given(self, m: YMap) -> list[TensorSpec]:
        if "given" not in m:
            return []
        g = self.mapping(m["given"], m.where("given"), "'given'")
        specs = []
        for name, raw in g.items():
            if not NAME_PATTERN.fullmatch(name):
                raise self.err(g.where(name), f"invalid tensor name {name!r}",
                               "names start with a letter and use letters, digits and '_'")
            specs.append(self.tensor(name, raw, g.where(name)))
        return specs

    def tensor(self, name: str, raw: Any, loc: Location) -> TensorSpec:
        if not isinstance(raw, YMap):  # shorthand: x: [1.0, 2.0]
            t = YMap(data=raw)
            t.location, t.key_locations = loc, {"data": loc}
        else:
            t = raw
        self.keys(t, TENSOR_KEYS, f"input {name!r}")
        what = f"input {name!r}"
        sources = [k for k in ("data", "real", "fill", "arange") if k in t]
        if "real" in sources and "imag" not in t:
            raise self.err(t.where("real"), f"{what} has 'real' but no 'imag'", "give both parts")
        if "imag" in t and "real" not in t:
            raise self.err(t.where("imag"), f"{what} has 'imag' but no 'real'",
                           "give both parts: real: [...], imag: [...], dtype: complex64")
        if len(sources) != 1:
            raise self.err(t.location, f"{what} needs exactly one of 'data', 'real'/'imag', 'fill' or 'arange'",
                           "e.g. data: [1.0, 2.0], or shape: [2, 3] with fill: 0")
        source = sources[0]
        imag = None
        if source in ("data", "real"):
            values, shape, kinds = self.literal(t[source], t.where(source), what)
            if source == "real":
                imag, ishape, ikinds = self.literal(t["imag"], t.where("imag"), what)
                if ishape != shape:
                    raise self.err(t.where("imag"), f"{what}: 'imag' has shape {list(ishape)}, 'real' has {list(shape)}")
                kinds |= ikinds | {"complex"}
            if "shape" in t:
                raise self.err(t.where("shape"), f"{what}: 'shape' comes from 'data'", "remove 'shape'")
        else:
            if "shape" not in t:
                raise self.err(t.location, f"{what}: '{source}' needs a 'shape'", "e.g. shape: [2, 3]")
            shape = self.shape(t["shape"], t.where("shape"), what)
            count = math.prod(shape)
            if count > MAX_ELEMENTS:
                shown = count if count < 10**18 else "more than 10**18"  # not thousands of digits
                raise self.err(t.where("shape"), f"{what} has {shown} elements; at most {MAX_ELEMENTS} are allowed",
                               "cases are about semantics: use a small tensor")
            if source == "fill":
                fill = t["fill"]
                if not _is_number(fill):
                    raise self.err(t.where("fill"), f"{what}: 'fill' must be a number")
                values = Generated("fill", fill)
                kinds = {_number_kind(fill)}
            else:
                if t["arange"] is not True:
                    raise self.err(t.where("arange"), f"{what}: 'arange' must be true", "arange: true")
                values = Generated("arange")
                kinds = {"int"}
        dtype = t["dtype"] if "dtype" in t else _default_dtype(kinds)
        if dtype not in DTYPES:
            raise self.err(t.where("dtype"), f"{what}: unknown dtype {dtype!r}",
                           did_you_mean(str(dtype), DTYPES) or f"use one of {', '.join(DTYPES)}")
        if isinstance(values, Generated) and values.rule == "arange" and dtype in INT_MAX and count - 1 > INT_MAX[dtype]:
            raise self.err(t.where("arange"), f"{what}: arange up to {count - 1} does not fit {dtype} "
                           f"(at most {INT_MAX[dtype]})", "use fewer elements or a wider dtype")
        if imag is not None and not dtype.startswith("complex"):
            raise self.err(t.where("dtype"), f"{what}: 'real'/'imag' need a complex dtype", "dtype: complex64")
        kind = t.get("type", "tensor")
        if kind not in TENSOR_TYPES:
            raise self.err(t.where("type"), f"{what}: unknown type {kind!r}",
                           "'tensor' (the framework's own) or 'ndarray' (a NumPy array)")
        requires_grad = self.bool_(t, "requires_grad", "'requires_grad'") if "requires_grad" in t else False
        writeable = self.bool_(t, "writeable", "'writeable'") if "writeable" in t else True
        if not writeable and kind != "ndarray":
            raise self.err(t.where("writeable"), f"{what}: 'writeable: false' applies to NumPy inputs only",
                           "add 'type: ndarray'")
        return TensorSpec(name=name, values=values, dtype=dtype, shape=tuple(shape), imag=imag,
                          requires_grad=requires_grad, kind=kind, writeable=writeable, location=loc)

    def shape(self, value: Any, loc: Location, what: str) -> tuple[int, ...]:
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
            raise self.err(loc, f"{what}: 'shape' must be a list of non-negative integers", "e.g. shape: [2, 3]")
        if len(value) > MAX_DIMS:
            raise self.err(loc, f"{what}: 'shape' has {len(value)} dimensions; at most {MAX_DIMS} are allowed",
                           "cases are about semantics: use a few dimensions")
        return tuple(value)

    def literal(self, value: Any, loc: Location, what: str) -> tuple[Any, tuple[int, ...], set[str]]:
        """Validate a nested list of numbers; return (values as plain lists, shape, kinds of number)."""
        kinds: set[str] = set()
        checked = _regular_numbers(value, kinds)
        if checked is not None and math.prod(checked[1]) <= MAX_ELEMENTS:
            return checked[0], checked[1], kinds
        self._raise_literal_error(value, loc, what)

    def _raise_literal_error(self, value: Any, loc: Location, what: str) -> NoReturn:
        """Walk a literal that is not a regular nested list of numbers, and raise the first
        error in it, in writing order."""
        count = 0

        def walk(v: Any) -> tuple[int, ...]:
            nonlocal count
            if isinstance(v, list):
                shapes = {walk(item) for item in v}
                if len(shapes) > 1:
                    raise self.err(location_of(v, loc), f"{what}: ragged data (rows of different lengths)",
                                   "every row must have the same length")
                inner = shapes.pop() if shapes else ()
                return (len(v),) + inner
            if not _is_number(v):
                raise self.err(loc, f"{what}: data must be numbers or booleans, got {_kind(v)}",
                               "complex values are given as 'real' and 'imag' lists")
            count += 1
            if count > MAX_ELEMENTS:
                raise self.err(loc, f"{what} has more than {MAX_ELEMENTS} elements", "use a small tensor")
            return ()

        walk(value)
        raise AssertionError("every literal that _regular_numbers refuses has an error")  # pragma: no cover

    # ---- steps

    def steps(self, m: YMap, given: set[str]) -> list[Step]:
        raw = m["steps"]
        if not isinstance(raw, YList) or not raw:
            raise self.err(m.where("steps"), "'steps' must be a non-empty list",
                           "e.g. steps: ['y = x.add_(1)']")
        # counted before any step text is parsed, so that a huge list costs no parsing
        total = _count_steps(raw)
        if total > MAX_STEPS:
            raise self.err(m.where("steps"), f"a case has at most {MAX_STEPS} steps ({total} given)",
                           "split it into several cases")
        return self.step_list(raw, set(given), [0])

    def step_list(self, raw: YList, defined: set[str], counter: list[int]) -> list[Step]:
        out = []
        for index, item in enumerate(raw):
            loc = raw.where(index)
            if isinstance(item, str):
                counter[0] += 1
                step, reads, operations, strings = parse_step_uses(item, counter[0], loc, defined)
                if not reads <= defined:
                    undefined = next(ref.name for ref in names_read(step) if ref.name not in defined)
                    hint = did_you_mean(undefined, defined) or (
                        "define it under 'given' or assign it in an earlier step")
                    raise self.err(loc, f"in step {item!r}: {undefined!r} is not defined", hint, code="CF002")
                defined.update(names_bound(step))
                self.step_operations.append((step, operations))
                if strings:
                    self.step_strings.append((step, strings))
                out.append(step)
            elif isinstance(item, YMap) and len(item) == 1:
                (block, body), = item.items()
                if block not in BLOCKS:
                    raise self.err(item.where(block), f"unknown block {block!r}",
                                   did_you_mean(block, BLOCKS) or f"blocks: {', '.join(BLOCKS)}")
                if not isinstance(body, YList) or not body:
                    raise self.err(item.where(block), f"'{block}' must hold a non-empty list of steps")
                inner = self.step_list(body, defined, counter)
                out.append(Step(number=0, text=block, kind="block", location=loc, block=block, body=tuple(inner)))
            else:
                raise self.err(loc, f"a step must be a string or a block, got {_kind(item)}",
                               "write the step as text, e.g. - y = x.add_(1); or a block: - no_grad: [...]")
        return out

    def check_operations(self) -> None:
        known = self.vocab.operations or ()
        for step, operations in self.step_operations:
            for key in sorted(operations):
                if key not in known:
                    prefix, _, name = key.partition(":")
                    same_kind = [k.partition(":")[2] for k in known if k.startswith(prefix + ":")]
                    hint = did_you_mean(name, same_kind) or "see docs/operations.md for the operations adapters define"
                    raise self.err(step.location, f"in step {step.text!r}: unknown operation "
                                   f"{_describe_op(key)}: no adapter defines it", hint, code="CF004")

    def check_strings(self) -> None:
        """A string in a step names something: a dtype, a device, or a name an adapter
        declares. Nothing else reaches an adapter, so no case string is ever looked up on a
        framework module or parsed by a framework's dtype parser."""
        for step, strings in self.step_strings:
            for text in sorted(strings):
                if text in DTYPES or DEVICE_NAME.fullmatch(text) or text in self.vocab.strings:
                    continue
                known = [*DTYPES, "cpu", "cuda", *self.vocab.strings]
                hint = did_you_mean(text, known) or f"a string in a step is a dtype ({', '.join(DTYPES)}) or a device (cpu, cuda, cuda:N)"
                raise self.err(step.location, f"in step {step.text!r}: unknown string {text[:60]!r}: not a dtype or a "
                               "device", hint, code="CF011")

    # ---- expectations

    def expect(self, raw: Any, loc: Location, flat: list[Step], bound: set[str], what: str,
               partial: bool = False) -> Expect:
        m = self.mapping(raw, loc, what)
        allowed = RELATIONS + TENSOR_PROPERTIES + ("error", "warning")
        self.keys(m, allowed, what)
        if not m and not partial:
            raise self.err(loc, f"{what} is empty", "state at least one thing that must hold: run "
                           "`conformance observe <case id>` and paste the expectations it prints", code="CF009")
        relations: dict[str, dict[tuple[str, str], bool]] = {}
        properties: dict[str, dict[str, Any]] = {}
        locations: dict[tuple, Location] = {}
        for key, value in m.items():
            kloc = m.where(key)
            if key in RELATIONS:
                pairs = self.mapping(value, kloc, f"'{key}'")
                relations[key] = {}
                for pair_text, flag in pairs.items():
                    ploc = pairs.where(pair_text)
                    names = tuple(p.strip() for p in pair_text.split("&"))
                    if len(names) != 2 or not all(names):
                        raise self.err(ploc, f"'{key}' entries are 'a & b: true|false', got {pair_text!r}",
                                       f"name two tensors joined by '&', e.g. {key}: {{y & x: true}}")
                    for n in names:
                        self.known_name(n, bound, ploc)
                    if not isinstance(flag, bool):
                        raise self.err(ploc, f"'{key}' of {pair_text!r} must be true or false, got {_kind(flag)}")
                    relations[key][names] = flag
                    locations[(key,) + names] = ploc
            elif key in TENSOR_PROPERTIES:
                entries = self.mapping(value, kloc, f"'{key}'")
                properties[key] = {}
                for name, expected in entries.items():
                    eloc = entries.where(name)
                    self.known_name(name, bound, eloc)
                    properties[key][name] = self.property_value(key, expected, eloc)
                    locations[(key, name)] = eloc
            elif key == "error":
                locations[("error",)] = kloc
            elif key == "warning":
                locations[("warning",)] = kloc
        error = self.error(m["error"], m.where("error"), flat) if m.get("error") is not None else None
        warning = self.warning(m["warning"], m.where("warning"), flat) if m.get("warning") is not None else None
        return Expect(relations=relations, properties=properties, error=error, warning=warning,
                      locations=locations)

    def known_name(self, name: str, bound: set[str], loc: Location) -> None:
        if name not in bound:
            hint = did_you_mean(name, bound) or f"known names: {', '.join(sorted(bound))}"
            raise self.err(loc, f"{name!r} is not a tensor of this case", hint, code="CF002")

    def property_value(self, key: str, value: Any, loc: Location) -> Any:
        if key in ("values", "grad"):
            if value is None and key == "grad":
                return None
            if isinstance(value, YMap):
                self.keys(value, ("real", "imag"), f"complex '{key}'")
                real, rshape, _ = self.literal(value.get("real"), loc, f"'{key}'")
                imag, ishape, _ = self.literal(value.get("imag"), loc, f"'{key}'")
                if rshape != ishape:
                    raise self.err(loc, f"'{key}': 'real' and 'imag' have different shapes")
                return {"real": real, "imag": imag}
            return self.literal(value, loc, f"'{key}'")[0]
        if key == "dtype":
            if value not in DTYPES:
                raise self.err(loc, f"unknown dtype {value!r}", did_you_mean(str(value), DTYPES) or None)
            return value
        if key == "shape":
            return list(self.shape(value, loc, "'shape'"))
        if key in ("requires_grad", "is_leaf"):
            if not isinstance(value, bool):
                raise self.err(loc, f"'{key}' must be true or false, got {_kind(value)}")
            return value
        if key == "version_change":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise self.err(loc, f"'version_change' must be a non-negative integer, got {_kind(value)}")
            return value
        raise AssertionError(key)  # pragma: no cover

    def step_ref(self, value: Any, loc: Location, flat: list[Step], what: str) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            if not 1 <= value <= len(flat):
                raise self.err(loc, f"{what}: there is no step {value} (the case has {len(flat)})",
                               "steps are numbered from 1 in the order they run")
            return value
        if isinstance(value, str):
            matches = [s.number for s in flat if s.text.strip() == value.strip()]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise self.err(loc, f"{what}: step text {value!r} occurs {len(matches)} times",
                               f"give the step number instead (one of {matches})")
            hint = did_you_mean(value, [s.text for s in flat]) or "give the step's exact text or its number"
            raise self.err(loc, f"{what}: no step reads {value!r}", hint)
        raise self.err(loc, f"{what} must be a step number or the step's text, got {_kind(value)}")

    def error(self, raw: Any, loc: Location, flat: list[Step]) -> ErrorExpectation:
        m = self.mapping(raw, loc, "'error'")
        self.keys(m, ("at", "kind") + tuple(self.vocab.frameworks), "'error'")
        for key in ("at", "kind"):
            if key not in m:
                raise self.err(m.location, f"'error' needs {key!r}", "e.g. error: {at: 3, kind: inplace_on_leaf}")
        at = self.step_ref(m["at"], m.where("at"), flat, "'error.at'")
        kind = m["kind"]
        if not isinstance(kind, str) or kind not in ERROR_KINDS:
            raise self.err(m.where("kind"), f"unknown error kind {kind!r}",
                           did_you_mean(str(kind), ERROR_KINDS) or f"kinds: {', '.join(ERROR_KINDS)}")
        details = {}
        for fw in self.vocab.frameworks:
            if fw in m:
                d = self.mapping(m[fw], m.where(fw), f"'error.{fw}'")
                self.keys(d, ("type", "match"), f"'error.{fw}'")
                if d.get("type") is not None and not isinstance(d["type"], str):
                    raise self.err(d.where("type"), f"'error.{fw}.type' must be an exception type name, got "
                                   f"{_kind(d['type'])}", "e.g. type: RuntimeError")
                match = d.get("match")
                if match is not None:
                    _check_regex(self, match, d.where("match"))
                details[fw] = ErrorDetail(type=d.get("type"), match=match)
        return ErrorExpectation(at=at, kind=kind, details=details, location=loc)

    def warning(self, raw: Any, loc: Location, flat: list[Step]) -> WarningExpectation:
        m = self.mapping(raw, loc, "'warning'")
        self.keys(m, ("at", "match"), "'warning'")
        if "at" not in m or "match" not in m:
            raise self.err(m.location, "'warning' needs 'at' and 'match'", "e.g. warning: {at: 2, match: deprecated}")
        _check_regex(self, m["match"], m.where("match"))
        return WarningExpectation(at=self.step_ref(m["at"], m.where("at"), flat, "'warning.at'"),
                                  match=m["match"], location=loc)

    # ---- per-framework overrides

    def overrides(self, m: YMap, flat: list[Step], bound: set[str],
                  case_claims: dict[str, str]) -> dict[str, FrameworkOverride]:
        if "frameworks" not in m:
            return {}
        fws = self.mapping(m["frameworks"], m.where("frameworks"), "'frameworks'")
        out = {}
        for fw, raw in fws.items():
            floc = fws.where(fw)
            if fw not in self.vocab.frameworks:
                raise self.err(floc, f"unknown framework {fw!r}",
                               did_you_mean(fw, self.vocab.frameworks) or f"known: {', '.join(self.vocab.frameworks)}",
                               code="CF005")
            o = self.mapping(raw, floc, f"'frameworks.{fw}'")
            self.keys(o, OVERRIDE_KEYS, f"'frameworks.{fw}'")
            not_applicable = self.string(o, "not_applicable", "'not_applicable'") if "not_applicable" in o else None
            if "reason" not in o and not_applicable is None:
                raise self.err(floc, f"the override for {fw!r} has no 'reason'",
                               "say why this framework differs (and cite docs or an issue)", code="CF008")
            reason = self.string(o, "reason", "'reason'") if "reason" in o else str(not_applicable)
            expect = None
            if "expect" in o:
                if not_applicable is not None:
                    raise self.err(o.where("expect"), "an override cannot both expect and be not_applicable")
                e = self.mapping(o["expect"], o.where("expect"), f"'frameworks.{fw}.expect'")
                expect = ExpectOverride(
                    self.expect(e, o.where("expect"), flat, bound, f"'frameworks.{fw}.expect'", partial=True),
                    replaces_error="error" in e, replaces_warning="warning" in e)
            elif not_applicable is None:
                raise self.err(floc, f"the override for {fw!r} changes nothing",
                               "add 'expect:' with what differs, or 'not_applicable: <why>'")
            claims = self.claims(o, f"'frameworks.{fw}.claims'", allowed=case_claims)
            if not_applicable is not None and claims:
                raise self.err(o.where("claims"), "a not_applicable override cannot take a stance on claims",
                               "remove 'claims:' (the case does not run on this framework)")
            undecided = [c for c, stance in case_claims.items() if stance != "related" and c not in claims]
            if expect is not None and undecided:
                raise self.err(floc, f"the override for {fw!r} changes what is expected, so it must say whether "
                                     f"{', '.join(undecided)} hold(s) on {fw}",
                               f"add claims: {{{undecided[0]}: holds}} or {{{undecided[0]}: does_not_hold}} "
                               "to the override")
            out[fw] = FrameworkOverride(framework=fw, reason=reason, expect=expect,
                                        not_applicable=not_applicable, location=floc, claims=claims)
        return out

    # ---- claims

    def claims(self, m: YMap, what: str, allowed: Collection[str] | None = None) -> dict[str, str]:
        """``claims: {S3-07: does_not_hold}``: claim ID -> stance."""
        if "claims" not in m:
            return {}
        example = "claims: {S3-02: holds} (stances: " + ", ".join(CLAIM_STANCES) + ")"
        if isinstance(m["claims"], list):
            raise self.err(m.where("claims"), f"{what} must map each claim ID to a stance, not list the IDs",
                           f"write {example}")
        c = self.mapping(m["claims"], m.where("claims"), what)
        out = {}
        for claim, stance in c.items():
            loc = c.where(claim)
            claim = str(claim)
            known = allowed if allowed is not None else self.vocab.claims
            if not CLAIM_PATTERN.match(claim) or (known is not None and claim not in known):
                if allowed is not None:
                    hint = f"an override can only restate the case's own claims: {', '.join(sorted(allowed)) or 'none'}"
                else:
                    hint = did_you_mean(claim, self.vocab.claims or ()) or "claims are IDs such as S3-07 from seed-claims"
                raise self.err(loc, f"unknown claim {claim!r}", hint, code="CF007")
            if stance not in CLAIM_STANCES:
                raise self.err(loc, f"claim {claim}: unknown stance {stance!r}",
                               did_you_mean(str(stance), CLAIM_STANCES) or f"use one of {', '.join(CLAIM_STANCES)}")
            out[claim] = stance
        return out


def _count_steps(raw: Any) -> int:
    """Step texts in a step list, blocks included (the nesting is bounded by the YAML reader)."""
    if isinstance(raw, str):
        return 1
    if isinstance(raw, YList):
        return sum(_count_steps(item) for item in raw)
    if isinstance(raw, YMap):
        return sum(_count_steps(body) for body in raw.values())
    return 0


# what str.splitlines() breaks at; all but the last two are control characters too
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _check_one_line(reader: _CaseReader, text: str, loc: Location, what: str) -> None:
    """Text that terminals, CI logs and the reports show on one line (ids, titles, tags,
    references, reasons) holds no line break and no control character (C0, DEL, C1): a
    double-quoted YAML string can write any of them as an escape (``"\\e[31m"``)."""
    for index, ch in enumerate(text):
        code = ord(ch)
        if ch in LINE_BREAKS:
            raise reader.err(loc, f"{what} must be one line, but holds a line break (U+{code:04X}) after "
                                  f"{text[:index][-30:]!r}",
                             "write it on one line; a long text can be a folded string (key: >- with the text "
                             "indented on the lines below), whose lines are joined with spaces")
        if code < 0x20 or 0x7F <= code <= 0x9F:
            raise reader.err(loc, f"{what} holds the control character U+{code:04X} after {text[:index][-30:]!r}",
                             "remove it: text that terminals, CI logs and the reports show holds printable "
                             "characters and spaces only" + (" (a tab: write spaces)" if ch == "\t" else ""))


def _check_regex(reader: _CaseReader, pattern: Any, loc: Location) -> None:
    if not isinstance(pattern, str):
        raise reader.err(loc, f"'match' must be a string (a regular expression), got {_kind(pattern)}")
    # Python's re compiles nested groups by recursion: how deep it gets before a
    # RecursionError depends on the caller's stack, so the depth is refused here, the same
    # for every caller, before re sees the pattern
    depth = _group_depth(pattern)
    if depth > MAX_REGEX_GROUP_DEPTH:
        raise reader.err(loc, f"'match' nests groups {depth} deep (at most {MAX_REGEX_GROUP_DEPTH})",
                         "match a shorter part of the message")
    try:
        re.compile(pattern)
    except (re.error, OverflowError) as exc:
        raise reader.err(loc, f"'match' is not a valid regular expression: {exc}",
                         "escape special characters such as ( ) [ ] . with a backslash") from None


def _group_depth(pattern: str) -> int:
    """How deep the groups of a regular expression nest (escapes and character classes
    skipped; an unbalanced pattern is re's to refuse)."""
    depth = deepest = 0
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth = max(depth - 1, 0)
    return deepest


def _describe_op(key: str) -> str:
    prefix, _, name = key.partition(":")
    return {
        "method": f"method '.{name}()'", "fn": f"function '{name}()'", "attr": f"attribute '.{name}'",
        "setattr": f"attribute assignment '.{name} = ...'", "block": f"block '{name}'",
        "call": "calling a value",
    }.get(prefix, key)


_NUMBER_KINDS = {bool: "bool", int: "int", float: "float"}


def _regular_numbers(value: Any, kinds: set[str]) -> tuple[Any, tuple[int, ...]] | None:
    """(plain nested lists, shape) of a regular nested list of numbers, adding the kinds of
    number met to ``kinds``; None if it is ragged or holds anything but numbers (the slow
    walk then finds the error and where it is). One pass: data lists are most of a case."""
    if not isinstance(value, list):
        kind = _NUMBER_KINDS.get(type(value))
        if kind is None:
            return None
        kinds.add(kind)
        return value, ()
    if not value:
        return [], (0,)
    if not isinstance(value[0], list):  # a row of numbers, or an error
        row_kinds = {_NUMBER_KINDS.get(type(v)) for v in value}
        if None in row_kinds:
            return None
        kinds |= row_kinds
        return list(value), (len(value),)
    rows = []
    shape = None
    for item in value:
        checked = _regular_numbers(item, kinds) if isinstance(item, list) else None
        if checked is None or (shape is not None and checked[1] != shape):
            return None
        rows.append(checked[0])
        shape = checked[1]
    return rows, (len(value),) + shape


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, bool))


def _number_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    return "int" if isinstance(v, int) else "float"


def _default_dtype(kinds: set[str]) -> str:
    if "complex" in kinds:
        return "complex64"
    if "float" in kinds:
        return "float32"
    if kinds == {"bool"}:
        return "bool"
    return "int64"


def _kind(v: Any) -> str:
    if v is None:
        return "nothing (null)"
    if isinstance(v, bool):
        return f"a boolean ({v})"
    if isinstance(v, (int, float)):
        return f"a number ({v})"
    if isinstance(v, str):
        return f"a string ({v!r})"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a mapping"
    return type(v).__name__
