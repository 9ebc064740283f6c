"""conformance.codec: plain data round-trips exactly, and bytes from an attacker build
nothing outside the allowlist and run nothing.

- round trips: Hypothesis over nested plain values (nan, inf, -0.0, complex, lone
  surrogates, big integers, tuple keys), over dataclasses (frozen, mutable, slotted),
  NamedTuples and declared classes, and every LoadResult of the real corpus and of the
  lint and hostile fixtures (errors included), which between them reach every model class;
- hostile bytes: unknown and outside names (``os.system``, ``subprocess.Popen``,
  builtins), missing and extra fields, wrong shapes, deep nesting, huge numbers, broken
  JSON, random JSON: each a CodecError, never another exception, and no sentinel file;
  the same payload as a pickle does create it (the control);
- encoding: every unsupported type is a CodecError naming it.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import os
import pickle
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any, NamedTuple

import numpy
import pytest

pytest.importorskip("hypothesis")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conformance import (  # noqa: E402
    codec,
    kinds,  # noqa: E402
    registry,
)
from conformance.codec import CodecError, Fields  # noqa: E402
from conformance.load.cache import ENTRY_TYPES  # noqa: E402
from conformance.load.reader import LoadResult, load_file  # noqa: E402
from conformance.model import CASE_TYPES, CaseFormatError, Location  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = settings(max_examples=300, deadline=None)


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down, nan equal to nan and -0.0 not to 0.0;
    exceptions by their declared parts."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, complex):
        return same(a.real, b.real) and same(a.imag, b.imag)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(k, j) and same(v, w) for (k, v), (j, w) in zip(a.items(), b.items()))
    if isinstance(a, CaseFormatError):
        return all(same(getattr(a, n), getattr(b, n)) for n in ("location", "message", "hint", "code"))
    if isinstance(a, Declared):
        return same(a.parts(), b.parts())
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def round_trip(value: Any, types: Any = ()) -> Any:
    data = codec.dumps(value, types or None)
    assert isinstance(data, bytes)
    back = codec.loads(data, types)
    assert same(back, value), (value, back)
    return back


# --------------------------------------------------------------------------- plain values

texts = st.text(st.characters(blacklist_categories=()), max_size=20)  # lone surrogates too
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-10**300, max_value=10**300),
    st.floats(), st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan]), st.complex_numbers(),
    texts, st.just(Ellipsis),
)
hashables = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=8)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(hashables, inner, max_size=4),
    ),
    max_leaves=40,
)


@EXAMPLES
@given(values)
def test_plain_values_round_trip_exactly(value: Any) -> None:
    round_trip(value)


@EXAMPLES
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts),
                    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(inner, max_size=4).map(tuple),
                                            st.dictionaries(st.tuples(texts, texts), inner, max_size=3)),
                    max_leaves=30))
def test_without_nan_a_round_trip_is_equal(value: Any) -> None:
    assert codec.loads(codec.dumps(value), ()) == value


def test_the_encoding_is_the_documented_json() -> None:
    value = [(1, "a"), {("values", "y"): 1}, 2 - 3j, ..., -0.0, math.inf, Location("f", 2, 1)]
    assert json.loads(codec.dumps(value)) == [
        {"()": [1, "a"]}, {"{}": [[{"()": ["values", "y"]}], [1]]}, {"1j": [2.0, -3.0]}, {"...": None},
        -0.0, math.inf, {"Location": ["f", 2, 1]}]
    assert codec.dumps("é\ud800").isascii()


# --------------------------------------------------------------------------- classes


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: Any
    b: Any = None


@dataclasses.dataclass
class Mutable:
    items: list
    extra: dict = dataclasses.field(default_factory=dict)
    derived: int = dataclasses.field(init=False, default=0)


@dataclasses.dataclass(frozen=True, slots=True)
class Slotted:
    x: Any
    y: Any


class Pair(NamedTuple):
    left: Any
    right: Any = 0


class Declared:
    """Declares its parts; its constructor is what rebuilds it."""

    __codec_fields__ = ("first", "second")

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def parts(self) -> tuple:
        return self.first, self.second


class Failure(Exception):
    def __init__(self, where: Location, why: str) -> None:
        self.where, self.why = where, why
        super().__init__(f"{where}: {why}")


CLASSES = (Frozen, Mutable, Slotted, Pair, Declared, Location)


def _mutable(items: list, extra: dict, derived: int) -> Mutable:
    made = Mutable(items, extra)
    made.derived = derived  # set after __init__: the codec carries it as a field
    return made


objects = st.recursive(
    values,
    lambda inner: st.one_of(
        st.builds(Frozen, inner, inner), st.builds(_mutable, st.lists(inner, max_size=3),
                                                   st.dictionaries(texts, inner, max_size=2), st.integers()),
        st.builds(Slotted, inner, inner), st.builds(Pair, inner, inner), st.builds(Declared, inner, inner),
        st.builds(Location, texts, st.integers(), st.integers()), st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
    ),
    max_leaves=25,
)


@EXAMPLES
@given(objects)
def test_allowlisted_classes_round_trip_exactly(value: Any) -> None:
    round_trip(value, CLASSES)


def test_a_frozen_object_is_rebuilt_without_its_constructor() -> None:
    back = round_trip(Frozen(Frozen(1, (2, 3)), {("values", "y"): [1.0, -0.0]}), CLASSES)
    assert back == Frozen(Frozen(1, (2, 3)), {("values", "y"): [1.0, -0.0]})
    assert hash(back.a) == hash(Frozen(1, (2, 3)))  # a key of a dict, as in the model
    with pytest.raises(dataclasses.FrozenInstanceError):
        back.a = 2  # type: ignore[misc]


def test_an_exception_travels_as_its_declared_parts() -> None:
    types = (Location, Fields(Failure, ("where", "why")))
    back = codec.loads(codec.dumps(Failure(Location("f", 3), "no"), types), types)
    assert type(back) is Failure and back.where == Location("f", 3) and str(back) == "f:3: no"
    with pytest.raises(CodecError, match="Failure"):  # not declared, not carried
        codec.dumps(Failure(Location("f", 3), "no"))


def test_names_of_a_mapping_are_the_callers() -> None:
    types = {"L": Location, "F": Frozen}
    data = codec.dumps([Location("f", 1), Frozen(1)], types)
    assert json.loads(data) == [{"L": ["f", 1, 1]}, {"F": [1, None]}]
    assert codec.loads(data, types) == [Location("f", 1), Frozen(1)]
    assert codec.loads(data, codec.Allowlist(types)) == [Location("f", 1), Frozen(1)]


# --------------------------------------------------------------------------- the model, from real files


def _case_files() -> list[Path]:
    return sorted((ROOT / "cases").rglob("*.yaml")) + sorted((ROOT / "tests" / "lint_fixtures").rglob("*.yaml")) \
        + sorted((ROOT / "tests" / "hostile").glob("*.yaml"))


def _classes_in(value: Any, seen: set[type]) -> None:
    seen.add(type(value))
    if isinstance(value, dict):
        for k, v in value.items():
            _classes_in(k, seen)
            _classes_in(v, seen)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _classes_in(item, seen)
    elif isinstance(value, CaseFormatError):
        for name in ("location", "message", "hint", "code"):
            _classes_in(getattr(value, name), seen)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            _classes_in(getattr(value, f.name), seen)


def test_every_load_result_of_the_corpus_and_fixtures_round_trips() -> None:
    vocabulary = registry.vocabulary()
    seen: set[type] = set()
    errors = 0
    for path in _case_files():
        result = load_file(path, vocabulary, display_path=path.relative_to(ROOT).as_posix())
        back = ENTRY_TYPES.loads(ENTRY_TYPES.dumps(result))
        assert same(back, result), path
        if not result.errors and "nan" not in path.read_text(encoding="utf-8"):
            assert back == result, path  # (nan != nan: same() above compares those)
        errors += len(result.errors)
        _classes_in(result, seen)
    model = {*CASE_TYPES, *kinds.value_types()}  # the model's classes and what the kinds parse
    assert errors > 50 and sorted(c.__name__ for c in model - seen) == []  # every model class was met


# --------------------------------------------------------------------------- hostile bytes


class _PicklePayload:
    """Unpickling this opens (creates) ``path`` for writing: the sentinel."""

    def __init__(self, call: Any, args: tuple) -> None:
        self.call, self.args = call, args

    def __reduce__(self) -> tuple:
        return self.call, self.args


def _payloads(sentinel: Path) -> list[tuple[str, bytes]]:
    """(what, the payload as pickle bytes) that create ``sentinel`` when unpickled."""
    return [
        ("builtins.open", pickle.dumps(_PicklePayload(open, (str(sentinel), "w")))),
        ("os.system", pickle.dumps(_PicklePayload(os.system, (f"touch {sentinel}",)))),
        ("subprocess.Popen", pickle.dumps(_PicklePayload(subprocess.Popen, (["touch", str(sentinel)],)))),
    ]


def _run(function: Any, *args: Any) -> None:
    result = function(*args)
    if hasattr(result, "close"):
        result.close()
    if hasattr(result, "wait"):
        result.wait()


@pytest.mark.parametrize("which", [0, 1, 2], ids=["open", "os.system", "subprocess.Popen"])
def test_control_the_payload_as_a_pickle_creates_the_sentinel(tmp_path: Path, which: int) -> None:
    sentinel = tmp_path / "sentinel"
    _, payload = _payloads(sentinel)[which]
    _run(pickle.loads, payload)
    assert sentinel.exists()


HOSTILE_NAMES = ["os.system", "system", "posix.system", "subprocess.Popen", "Popen", "builtins.open", "open",
                 "eval", "exec", "builtins.eval", "__import__", "getattr", "object", "type", "list", "tuple",
                 "LoadResult", "Case", "casecache.CaseCache", "codec.Allowlist", "_PicklePayload"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_names_outside_the_allowlist_are_refused_and_run_nothing(tmp_path: Path, name: str) -> None:
    sentinel = tmp_path / "sentinel"
    for args in ([f"touch {sentinel}"], [["touch", str(sentinel)]], [str(sentinel), "w"]):
        data = json.dumps({name: args}).encode()
        for types in ((Location,), {"L": Location}, ENTRY_TYPES if name not in ("LoadResult", "Case") else ()):
            with pytest.raises(CodecError, match="not an allowed class"):
                codec.loads(data, types)
    assert not sentinel.exists()


def test_pickle_bytes_are_not_a_valid_encoding(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    for _, payload in _payloads(sentinel):
        with pytest.raises(CodecError):
            ENTRY_TYPES.loads(payload)
    with pytest.raises(CodecError):  # protocol 0 is text, and still not JSON
        ENTRY_TYPES.loads(pickle.dumps([1, 2], protocol=0))
    assert not sentinel.exists()


@pytest.mark.parametrize("data, message", [
    ('{"Location": ["f", 1]}', "Location: expected a list of 3 fields, got 2 fields"),
    ('{"Location": ["f", 1, 2, 3]}', "Location: expected a list of 3 fields, got 4 fields"),
    ('{"Location": "f"}', "Location: expected a list of 3 fields, got a str"),
    ('{"Ref": []}', "Ref: expected a list of 1 fields"),
    ('{"Ref": ["x", "y"]}', "Ref: expected a list of 1 fields, got 2"),
    ('{"Case": "x"}', "Case: expected a list of [0-9]+ fields, got a str"),
    ('{"LoadResult": ["p", [], [], 0, "extra"]}', "LoadResult: expected a list of 4 fields, got 5"),
    ('{"CaseFormatError": ["where", "m", null, "CF000"]}', "not a valid encoding: AttributeError"),
    ('{"CaseFormatError": [{"Location": ["f", 1, 1]}, "m"]}', "CaseFormatError: expected a list of 4 fields"),
    ('{"()": 5}', "a tuple is a list of items"),
    ('{"{}": [[1], []]}', "a dict is \\[keys, values\\]"),
    ('{"{}": [[[1]], [2]]}', "unhashable type: 'list'"),
    ('{"{}": [[{"LoadResult": ["p", [], [], 0]}], [1]]}', "unhashable type: 'LoadResult'"),
    ('{"1j": ["1", 2]}', "a complex number is \\[real, imag\\]"),
    ('{"1j": [true, 2]}', "a complex number is \\[real, imag\\]"),
    ('{"...": 1}', "Ellipsis has no value"),
    ('{}', "exactly one key"),
    ('{"()": [], "Ref": ["x"]}', "exactly one key .*not 2"),
    ('{"Ref": ["x"], "Ref": ["y"]}', "exactly one key .*not 2"),
    ("", "Expecting value"),
    ("{", "Expecting property name"),
    ("nope", "Expecting value"),
    ("nan", "Expecting value"),
    ("[1] [2]", "Extra data"),
    ("1" * 5000, "Exceeds the limit"),
    ("-" + "9" * 4301, "Exceeds the limit"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"()":[' * 20_000 + "]}" * 20_000, "nested too deeply"),
    ('{"Frozen": [1, 2]}', "not an allowed class"),  # a dataclass, but not in this allowlist
])
def test_malformed_input_is_a_codec_error(data: str, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        ENTRY_TYPES.loads(data.encode())


def test_any_bytes_like_input_or_str_is_read() -> None:
    data = codec.dumps([Location("f", 1), (1,)])
    for encoded in (data, bytearray(data), memoryview(b"xx" + data)[2:], data.decode()):
        assert ENTRY_TYPES.loads(encoded) == [Location("f", 1), (1,)]


def test_bytes_that_are_not_utf8_are_a_codec_error() -> None:
    with pytest.raises(CodecError, match="UnicodeDecodeError"):
        ENTRY_TYPES.loads(b'"\xff"')
    with pytest.raises(CodecError, match="expected bytes"):
        ENTRY_TYPES.loads(123)  # type: ignore[arg-type]


def test_numbers_too_large_for_a_float_are_infinite_not_an_error() -> None:
    assert ENTRY_TYPES.loads(b"1e999999") == math.inf and ENTRY_TYPES.loads(b"[-1e999999]") == [-math.inf]


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
              st.sampled_from(["Location", "Ref", "Case", "()", "{}", "1j", "...", "os.system", "LoadResult"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(["Location", "Ref", "Const", "Case", "Step", "()", "{}",
                                                             "1j", "...", "os.system", "LoadResult", "x"]),
                                            inner, max_size=2)),
    max_leaves=30,
)
ALLOWED_TYPES = {LoadResult, *CASE_TYPES, *kinds.value_types()} | {
    type(None), bool, int, float, complex, str, list, tuple, dict, type(Ellipsis)}


def _types_in(value: Any) -> set[type]:
    seen: set[type] = set()
    _classes_in(value, seen)
    return seen


@EXAMPLES
@given(json_values)
def test_any_json_gives_an_allowed_value_or_a_codec_error(value: Any) -> None:
    try:
        decoded = ENTRY_TYPES.loads(json.dumps(value).encode())
    except CodecError:
        return
    assert _types_in(decoded) <= ALLOWED_TYPES


@EXAMPLES
@given(st.binary(max_size=200))
def test_any_bytes_give_a_value_or_a_codec_error(data: bytes) -> None:
    try:
        decoded = ENTRY_TYPES.loads(data)
    except CodecError:
        return
    assert _types_in(decoded) <= ALLOWED_TYPES


def test_decoding_runs_nothing_in_a_fresh_interpreter(tmp_path: Path) -> None:
    # the modules a payload names are not imported by decoding it
    sentinel = tmp_path / "sentinel"
    script = (
        "import sys, json\n"
        "from conformance import codec\n"
        "from conformance.model import Location\n"
        "before = set(sys.modules)\n"
        f"for name in {HOSTILE_NAMES!r}:\n"
        f"    for args in ([{str(sentinel)!r}, 'w'], ['touch {sentinel}']):\n"
        "        try:\n"
        "            codec.loads(json.dumps({name: args}).encode(), (Location,))\n"
        "        except codec.CodecError:\n"
        "            pass\n"
        "print(sorted(set(sys.modules) - before))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]" and not sentinel.exists()


# --------------------------------------------------------------------------- encoding refusals


class Colour(str, enum.Enum):
    RED = "red"


@pytest.mark.parametrize("value, named", [
    (object(), "builtins.object"),
    ({1, 2}, "builtins.set"),
    (frozenset({1}), "builtins.frozenset"),
    (b"bytes", "builtins.bytes"),
    (bytearray(b"x"), "builtins.bytearray"),
    (numpy.float64(1.0), "numpy.float64"),
    (numpy.int64(1), "numpy.int64"),
    (Colour.RED, "Colour"),
    (OrderedDict(a=1), "collections.OrderedDict"),
    ([1, (2, {"k": print})], "builtins.builtin_function_or_method"),
    (Frozen, "builtins.type"),
    (ValueError("x"), "builtins.ValueError"),
])
def test_an_unsupported_type_is_a_codec_error_naming_it(value: Any, named: str) -> None:
    with pytest.raises(CodecError, match=f"cannot encode an object of type .*{named}"):
        codec.dumps(value)


def test_encoding_with_an_allowlist_refuses_the_classes_outside_it() -> None:
    with pytest.raises(CodecError, match="test_codec.Frozen"):
        codec.dumps([Location("f", 1), Frozen(1)], (Location,))
    assert codec.dumps(Frozen(1))  # without one: any supported class


def test_unencodable_values_are_codec_errors() -> None:
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(CodecError, match="nested too deeply, or cyclic"):
        codec.dumps(cyclic)
    with pytest.raises(CodecError, match="limit"):
        codec.dumps(10 ** 5000)


def test_what_cannot_be_allowlisted() -> None:
    with pytest.raises(TypeError, match="is not a class"):
        codec.Allowlist((os.system,))
    with pytest.raises(TypeError, match="not a dataclass, a NamedTuple or a class that declares"):
        codec.Allowlist((subprocess.Popen,))
    with pytest.raises(TypeError, match="not a dataclass"):
        codec.Allowlist((dict,))
    with pytest.raises(ValueError, match="named 'Location'"):
        codec.Allowlist((Location, dataclasses.make_dataclass("Location", ["a"])))
    with pytest.raises(ValueError, match="reserved tag"):
        codec.Allowlist({"()": Location})
    with pytest.raises(ValueError, match="twice"):
        codec.Allowlist({"A": Location, "B": Location})
    with pytest.raises(TypeError, match="must be a str"):
        codec.Allowlist({1: Location})  # type: ignore[dict-item]
