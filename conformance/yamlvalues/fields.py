"""Typed reads of a case file's values, each failing with a located :class:`CaseFormatError`
(file, line, column, what, fix): shared by the case reader's parts (``reader``, ``inputs``,
``steplist``, ``overrides``, ``expect``) and by the assertion kinds (``conformance.kinds``),
which parse their own ``expect`` entries with them.

Plain functions over the YAML reader's values (:mod:`conformance.yamlvalues.yamlsrc`); nothing
here imports a framework.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import Any, Collection, Iterable, NoReturn, Sequence, cast

from conformance import rules
from conformance.ir import Step
from conformance.limits import MAX_ELEMENTS
from conformance.source import CaseFormatError, CaseFormatErrors, Location
from conformance.yamlvalues.yamlsrc import YList, YMap, location_of

MAX_DIMS = 32  # per shape; NumPy allows 64, and no case needs more than a few
MAX_REGEX_GROUP_DEPTH = 50  # 'match' patterns quote a message; re itself fails somewhere past 400
# what str.splitlines() breaks at; all but the last two are control characters too
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


# a link a case or a reference list cites (documentation: source, a list's source)
LINK = re.compile(r"^https?://\S+$")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""


def kind_of(v: Any) -> str:
    """What a value is, in a message: ``a string ('x')``, ``a list``, ..."""
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


class WrittenAs(CaseFormatError):
    """An error about a text value, which the YAML reader does not locate (it keeps where
    keys and items are): raised at the key that holds it, and moved by the case reader,
    which has the file's text, to where the text itself is written (the line below the key,
    for a block value). Never leaves the reader."""

    def __init__(self, text: str, location: Location, message: str, hint: str | None = None,
                 code: str = rules.INVALID_FORMAT.code) -> None:
        self.text = text
        super().__init__(location, message, hint, code)


class StepText(CaseFormatError):
    """A step text that could not be parsed, with where the step is written: the case
    reader, which has the file's text, checks whether YAML folded the next line into it
    (a '- ' indented deeper than the step's own, or a line that lost its '- ') and then
    says so, at that line. Never leaves the reader."""

    def __init__(self, text: str, step: Location, location: Location, message: str, hint: str | None = None,
                 code: str = rules.INVALID_FORMAT.code) -> None:
        self.text = text
        self.step = step
        super().__init__(location, message, hint, code)


# a plain text that was meant as 'key: value' but lost the space after ':' ('x:[1.0]')
_KEY_WITHOUT_SPACE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(?=[^\s/:])")


# ---- mappings and scalars


def mapping(value: Any, loc: Location, what: str) -> YMap:
    if not isinstance(value, YMap):
        if isinstance(value, str):
            glued = _KEY_WITHOUT_SPACE.match(value)
            if glued:  # 'given: {x:[1.0]}' or a block 'x:[1.0]': YAML read one text, not a key and a value
                key = glued.group(1)
                raise WrittenAs(value, loc, f"{what} must be a mapping, got the text {value[:40]!r}: a key needs a "
                                f"space after ':'", f"write '{key}: {value[glued.end():][:40]}'")
        raise CaseFormatError(loc, f"{what} must be a mapping, got {kind_of(value)}")
    return value


def keys(m: YMap, allowed: Collection[str], what: str) -> None:
    """Refuse every key of ``m`` that is not ``allowed`` (all of them at once)."""
    for key in m:
        if key not in allowed:
            break
    else:
        return
    errors: list[CaseFormatError] = []
    unknown_keys(m, allowed, what, errors)
    if errors:
        raise errors[0] if len(errors) == 1 else CaseFormatErrors(errors)


def unknown_keys(m: YMap, allowed: Collection[str], what: str, errors: list[CaseFormatError]) -> list[str]:
    """Add an error for each key of ``m`` that is not ``allowed`` to ``errors``, and return
    those keys. A caller does not report the keys its mapping lacks while it has unknown
    ones: an unknown key is most likely the missing one under another name (``titel``,
    ``why`` for ``reason``), and one mistake is one error."""
    unknown = [key for key in m if key not in allowed]
    for key in unknown:
        hint = did_you_mean(key, allowed) or f"allowed keys: {', '.join(allowed)}"
        errors.append(CaseFormatError(m.where(key), f"unknown key {key!r} in {what}", hint))
    return unknown


def string(m: YMap, key: str, what: str) -> str:
    value = m[key]
    if not isinstance(value, str) or not value.strip():
        raise CaseFormatError(m.where(key), f"{what} must be a non-empty string, got {kind_of(value)}")
    one_line(value, m.where(key), what)
    return value


def boolean(m: YMap, key: str, what: str) -> bool:
    value = m[key]
    if not isinstance(value, bool):
        raise CaseFormatError(m.where(key), f"{what} must be true or false, got {kind_of(value)}")
    return value


def strings(m: YMap, key: str, what: str) -> tuple[str, ...]:
    value = m.get(key, YList())
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise not_a_list(value, m.where(key), what, "be a list of strings", f"e.g. {key}: [first, second]")
    for index, item in enumerate(value):
        one_line(item, value.where(index) if isinstance(value, YList) else m.where(key), what)
    return tuple(value)


def not_a_list(value: Any, loc: Location, what: str, expected: str, example: str) -> CaseFormatError:
    """``what`` should be a list (``expected``: ``must ...`` what) and is not: a text that
    starts with '-' and no space is a list item that lost its space."""
    if isinstance(value, str) and value[:1] == "-" and value[1:2] not in ("", " "):
        return WrittenAs(value, loc, f"{what} is the text {value[:40]!r}, not a list: a list item needs a "
                                f"space after '-'", f"write '- {value[1:41]}'")
    return CaseFormatError(loc, f"{what} must {expected}", example)


def one_line(text: str, loc: Location, what: str) -> None:
    """Text that terminals, CI logs and the reports show on one line (ids, titles, tags,
    references, reasons) holds no line break and no control character (C0, DEL, C1): a
    double-quoted YAML string can write any of them as an escape (``"\\e[31m"``)."""
    for index, ch in enumerate(text):
        code = ord(ch)
        if ch in LINE_BREAKS:
            raise CaseFormatError(loc, f"{what} must be one line, but holds a line break (U+{code:04X}) after "
                                       f"{text[:index][-30:]!r}",
                                  "write it on one line; a long text can be a folded string (key: >- with the text "
                                  "indented on the lines below), whose lines are joined with spaces")
        if code < 0x20 or 0x7F <= code <= 0x9F:
            raise CaseFormatError(loc, f"{what} holds the control character U+{code:04X} after "
                                       f"{text[:index][-30:]!r}",
                                  "remove it: text that terminals, CI logs and the reports show holds printable "
                                  "characters and spaces only" + (" (a tab: write spaces)" if ch == "\t" else ""))


def regex(pattern: Any, loc: Location) -> None:
    """A ``match`` pattern: a string that compiles, with groups nested at most
    MAX_REGEX_GROUP_DEPTH deep."""
    if not isinstance(pattern, str):
        raise CaseFormatError(loc, f"'match' must be a string (a regular expression), got {kind_of(pattern)}")
    # Python's re compiles nested groups by recursion: how deep it gets before a
    # RecursionError depends on the caller's stack, so the depth is refused here, the same
    # for every caller, before re sees the pattern
    depth = group_depth(pattern)
    if depth > MAX_REGEX_GROUP_DEPTH:
        raise CaseFormatError(loc, f"'match' nests groups {depth} deep (at most {MAX_REGEX_GROUP_DEPTH})",
                              "match a shorter part of the message")
    try:
        re.compile(pattern)
    except (re.error, OverflowError) as exc:
        raise CaseFormatError(loc, f"'match' is not a valid regular expression: {exc}",
                              "escape special characters such as ( ) [ ] . with a backslash") from None


def group_depth(pattern: str) -> int:
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


# ---- names and steps of the case


class OpenNames(frozenset):
    """The names of a case of which a part that defines names could not be read (a
    ``given`` that is not a mapping, a step whose targets cannot be told): every name is
    taken as known, so that no use of a name is reported while what may define it is
    itself in error. Iterating gives the names known."""

    def __contains__(self, name: object) -> bool:
        return True


class OpenSteps(tuple):
    """The steps of a case whose ``steps`` could not be read at all: every step reference
    (a number from 1, a text) is taken as valid."""


def known_name(name: str, bound: Collection[str], loc: Location) -> None:
    """A name an expectation is about: given, or bound by a step."""
    if name not in bound:
        hint = did_you_mean(name, bound) or f"known names: {', '.join(sorted(bound))}"
        raise CaseFormatError(loc, f"{name!r} is not a tensor of this case", hint, code=rules.UNDEFINED_NAME.code)


def step_ref(value: Any, loc: Location, flat: Sequence[Step], what: str) -> int:
    """A step named by its number or its exact text: its number."""
    if isinstance(flat, OpenSteps) and (isinstance(value, str) or type(value) is int and value >= 1):
        return value if isinstance(value, int) else 1
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= len(flat):
            raise CaseFormatError(loc, f"{what}: there is no step {value} (the case has {len(flat)})",
                                  "steps are numbered from 1 in the order they run")
        return value
    if isinstance(value, str):
        matches = [s.number for s in flat if s.text.strip() == value.strip()]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise CaseFormatError(loc, f"{what}: step text {value!r} occurs {len(matches)} times",
                                  f"give the step number instead (one of {matches})")
        hint = did_you_mean(value, [s.text for s in flat]) or "give the step's exact text or its number"
        raise CaseFormatError(loc, f"{what}: no step reads {value!r}", hint)
    raise CaseFormatError(loc, f"{what} must be a step number or the step's text, got {kind_of(value)}")


# ---- shapes and literal values


def shape(value: Any, loc: Location, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise CaseFormatError(loc, f"{what}: 'shape' must be a list of non-negative integers", "e.g. shape: [2, 3]")
    if len(value) > MAX_DIMS:
        raise CaseFormatError(loc, f"{what}: 'shape' has {len(value)} dimensions; at most {MAX_DIMS} are allowed",
                              "cases are about semantics: use a few dimensions")
    return tuple(value)


def literal(value: Any, loc: Location, what: str) -> tuple[Any, tuple[int, ...], set[str]]:
    """Validate a nested list of numbers; return (values as plain lists, shape, kinds of number)."""
    kinds: set[str] = set()
    checked = _regular_numbers(value, kinds)
    if checked is not None and math.prod(checked[1]) <= MAX_ELEMENTS:
        return checked[0], checked[1], kinds
    _raise_literal_error(value, loc, what)


def _raise_literal_error(value: Any, loc: Location, what: str) -> NoReturn:
    """Walk a literal that is not a regular nested list of numbers, and raise the first
    error in it, in writing order."""
    count = 0

    def walk(v: Any) -> tuple[int, ...]:
        nonlocal count
        if isinstance(v, list):
            shapes = {walk(item) for item in v}
            if len(shapes) > 1:
                raise CaseFormatError(location_of(v, loc), f"{what}: ragged data (rows of different lengths)",
                                      "every row must have the same length")
            inner = shapes.pop() if shapes else ()
            return (len(v),) + inner
        if not is_number(v):
            raise CaseFormatError(loc, f"{what}: data must be numbers or booleans, got {kind_of(v)}",
                                  "complex values are given as 'real' and 'imag' lists")
        count += 1
        if count > MAX_ELEMENTS:
            raise CaseFormatError(loc, f"{what} has more than {MAX_ELEMENTS} elements", "use a small tensor")
        return ()

    walk(value)
    raise AssertionError("every literal that _regular_numbers refuses has an error")  # pragma: no cover


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
        kinds |= cast("set[str]", row_kinds)
        return list(value), (len(value),)
    rows = []
    shape = None
    for item in value:
        checked = _regular_numbers(item, kinds) if isinstance(item, list) else None
        if checked is None or (shape is not None and checked[1] != shape):
            return None
        rows.append(checked[0])
        shape = checked[1]
    return rows, (len(value),) + cast("tuple[int, ...]", shape)  # value is not empty: shape is set


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float, bool))


def number_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    return "int" if isinstance(v, int) else "float"
