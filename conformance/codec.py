"""Plain data to bytes and back, building only the classes the reader allows.

For data that crosses a trust boundary, where ``pickle`` would run whatever the bytes name
(the case cache's files; messages between processes)::

    data = codec.dumps(value)              # bytes (ASCII JSON)
    value = codec.loads(data, (Case, Location, ...))   # the allowlist: what may be built

What it carries, round-tripping exactly (equal, and of the same types): ``None``, ``bool``,
``int``, ``float`` (``nan``, ``inf``, ``-0.0`` included), ``complex``, ``str`` (lone
surrogates included), ``Ellipsis``, ``tuple``, ``list``, ``dict`` (keys of any hashable
value made of these: ``("values", "y")``), and instances of three kinds of classes:

- **dataclasses** (frozen or not): their fields (:func:`dataclasses.fields`), in order.
  Decoding makes the object without calling ``__init__`` and sets exactly those fields,
  as ``pickle`` does (so ``__post_init__`` does not run again; other attributes an
  instance may have acquired are not carried);
- **NamedTuples**: their ``_fields``, rebuilt with ``tuple.__new__``;
- **declared classes**: a class that says how it is taken apart, by a class attribute
  ``__codec_fields__ = ("location", "message", ...)`` or, for a class you cannot edit,
  by an allowlist entry ``Fields(cls, ("location", "message", ...))``. Encoding reads
  those attributes; decoding calls ``cls(*values)``. This is how exceptions travel
  (only their declared parts: not ``args``, the traceback, the cause or notes).
  ``__reduce__`` is never consulted: it can name any callable.

Exact types only: a subclass of a supported type (a ``str`` enum, a NumPy float, an
``OrderedDict``) and anything else raises :class:`CodecError` naming its type, as do
integers past Python's 4,300-digit conversion limit and values nested deeper than the
recursion limit (or cyclic). Callers decide what to do (the case cache just does not
keep such a result).

**Allowlist.** ``types`` is a sequence of classes (named by ``__qualname__``), a
mapping ``name -> class`` (names of your choosing), either of them with :class:`Fields`
entries, or an :class:`Allowlist` made from one of them once (the fast way for repeated
calls). Decoding builds only those classes, each from exactly its declared number of
fields; an unknown name, a field too many or too few, a value of the wrong shape,
malformed JSON, overlong numbers or too deep nesting raise :class:`CodecError`. Bytes
from an attacker therefore give at most a wrong value of an allowed type: nothing is
imported, no name is looked up outside the allowlist, no callable other than an allowed
declared class's constructor (and the hashing and comparing of allowed values) runs.
Field values are not type-checked: check what you decoded before trusting it (the case
cache checks it got a ``LoadResult`` of the right path). Encoding with ``types`` refuses
classes outside it; without, it takes any supported class, named by ``__qualname__``.

**Encoding** (JSON through the C ``json`` module; never ``pickle``, ``marshal`` or
``eval``). Scalars and lists are themselves (``nan``/``inf`` as Python's ``json`` writes
them: ``NaN``, ``Infinity``); everything else is a JSON object of exactly one key, a tag,
whose value is a list::

    (1, "a")            {"()": [1, "a"]}
    {("values","y"): 1} {"{}": [[{"()": ["values", "y"]}], [1]]}    (keys, values)
    2-3j                {"1j": [2.0, -3.0]}
    ...                 {"...": null}
    Location("f", 2, 1) {"Location": ["f", 2, 1]}                   (fields, in order)

The tags of the built-in kinds are not identifiers, so they cannot meet a class name.
Decoding is one ``json`` pass with an ``object_pairs_hook``: lists (the bulk of tensor
data) are never walked in Python.
"""

from __future__ import annotations

import dataclasses
import json
from operator import attrgetter
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Union, cast

TUPLE, DICT, COMPLEX, ELLIPSIS = "()", "{}", "1j", "..."
_TAGS = (TUPLE, DICT, COMPLEX, ELLIPSIS)
_SCALARS = frozenset({str, int, float, bool, type(None)})
_NUMBERS = frozenset({int, float})


class CodecError(ValueError):
    """A value that cannot be encoded, or bytes that are not a valid encoding for the
    allowlist they are decoded with."""


class Fields(NamedTuple):
    """An allowlist entry declaring how to take apart a class you cannot edit: encoded as
    its attributes ``names``, in order, and rebuilt as ``cls(*values)``."""

    cls: type
    names: tuple[str, ...]


Types = Union["Allowlist", Iterable[Union[type, Fields]], Mapping[str, Union[type, Fields]]]


class _Kind(NamedTuple):
    name: str
    parts: Callable[[Any], Iterable[Any]]  # the object's field values, in order
    build: Callable[[Any], Any]  # a JSON list of decoded field values -> the object


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(cls: Any, name: str | None = None, names: tuple[str, ...] | None = None) -> _Kind:
    """How ``cls`` is taken apart and rebuilt; ``names`` given: a declared class."""
    if not isinstance(cls, type):
        raise TypeError(f"codec: {cls!r} is not a class")
    name = cls.__qualname__ if name is None else name
    if names is None:
        names = getattr(cls, "__codec_fields__", None)
    if names is not None:
        names = tuple(names)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"codec: the fields of {cls.__qualname__} must be attribute names")
        return _Kind(name, _getter(names), _declared_builder(cls, name, len(names)))
    fields = getattr(cls, "_fields", None)
    if issubclass(cls, tuple) and isinstance(fields, tuple):
        return _Kind(name, _identity, _namedtuple_builder(cls, name, len(fields)))
    if dataclasses.is_dataclass(cls):
        names = tuple(f.name for f in dataclasses.fields(cls))
        return _Kind(name, _getter(names), _dataclass_builder(cls, name, names))
    raise TypeError(f"codec: {cls.__module__}.{cls.__qualname__} is not a dataclass, a NamedTuple or a "
                    "class that declares __codec_fields__ (or an allowlist entry Fields(cls, names))")


def _identity(value: Any) -> Any:
    return value


def _getter(names: tuple[str, ...]) -> Callable[[Any], Iterable[Any]]:
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _wrong_fields(name: str, count: int, values: Any) -> CodecError:
    got = f"{len(values)} fields" if type(values) is list else f"a {type(values).__name__}"
    return CodecError(f"{name}: expected a list of {count} fields, got {got}")


def _dataclass_builder(cls: type, name: str, names: tuple[str, ...]) -> Callable[[Any], Any]:
    count, new = len(names), cast(Callable[[type], Any], cls.__new__)
    if "__slots__" in cls.__dict__:
        def build(values: Any) -> Any:
            if type(values) is not list or len(values) != count:
                raise _wrong_fields(name, count, values)
            obj = new(cls)
            for field_name, value in zip(names, values):
                object.__setattr__(obj, field_name, value)  # a frozen class's own __setattr__ refuses
            return obj
    else:
        def build(values: Any) -> Any:
            if type(values) is not list or len(values) != count:
                raise _wrong_fields(name, count, values)
            obj = new(cls)
            obj.__dict__.update(zip(names, values))
            return obj
    return build


def _namedtuple_builder(cls: type, name: str, count: int) -> Callable[[Any], Any]:
    new = tuple.__new__

    def build(values: Any) -> Any:
        if type(values) is not list or len(values) != count:
            raise _wrong_fields(name, count, values)
        return new(cls, values)
    return build


def _declared_builder(cls: type, name: str, count: int) -> Callable[[Any], Any]:
    def build(values: Any) -> Any:
        if type(values) is not list or len(values) != count:
            raise _wrong_fields(name, count, values)
        return cls(*values)
    return build


def _build_tuple(values: Any) -> tuple:
    if type(values) is not list:
        raise CodecError(f"a tuple is a list of items, not {_short(values)}")
    return tuple(values)


def _build_dict(values: Any) -> dict:
    if type(values) is not list or len(values) != 2 or type(values[0]) is not list \
            or type(values[1]) is not list or len(values[0]) != len(values[1]):
        raise CodecError(f"a dict is [keys, values] of equal lengths, not {_short(values)}")
    return dict(zip(values[0], values[1]))  # an unhashable key raises TypeError


def _build_complex(values: Any) -> complex:
    if type(values) is not list or len(values) != 2 or not _NUMBERS.issuperset(map(type, values)):
        raise CodecError(f"a complex number is [real, imag], not {_short(values)}")
    return complex(values[0], values[1])


def _build_ellipsis(values: Any) -> Any:
    if values is not None:
        raise CodecError(f"Ellipsis has no value, not {_short(values)}")
    return Ellipsis


def _hook(builders: dict[str, Callable[[Any], Any]]) -> Callable[[list[tuple[str, Any]]], Any]:
    """What ``json`` calls with each JSON object's pairs, innermost first."""
    get = builders.get

    def hook(pairs: list[tuple[str, Any]]) -> Any:
        if len(pairs) != 1:
            raise CodecError(f"an object has exactly one key (its tag), not {len(pairs)}")
        tag, values = pairs[0]
        if tag == TUPLE and type(values) is list:  # the most frequent, inline
            return tuple(values)
        build = get(tag)
        if build is None:
            raise CodecError(f"{_short(tag)} is not an allowed class")
        return build(values)
    return hook


class Allowlist:
    """``types`` made ready for :func:`dumps` and :func:`loads`: make one per allowlist
    and keep it (making it inspects every class)."""

    def __init__(self, types: Types, *, _open: bool = False) -> None:
        entries: list[tuple[str | None, Any]]
        if isinstance(types, Allowlist):  # its (name, entry) pairs, as made
            entries = list(types.types)
        elif isinstance(types, Mapping):
            entries = list(types.items())
        else:
            entries = [(None, t) for t in types]
        self.types: tuple[tuple[str | None, Any], ...] = tuple(entries)
        self.open = _open  # encoding takes any supported class (dumps without types)
        self.kinds: dict[type, _Kind] = {}
        self.builders: dict[str, Callable[[Any], Any]] = {
            TUPLE: _build_tuple, DICT: _build_dict, COMPLEX: _build_complex, ELLIPSIS: _build_ellipsis}
        for name, entry in entries:
            if name is not None and not isinstance(name, str):
                raise TypeError(f"codec: an allowlist name must be a str, not {name!r}")
            cls, kind = (entry.cls, _kind(entry.cls, name, tuple(entry.names))) if isinstance(entry, Fields) \
                else (entry, _kind(entry, name))
            if kind.name in self.builders:
                raise ValueError(f"codec: two allowlist entries are named {kind.name!r}" if kind.name not in _TAGS
                                 else f"codec: {kind.name!r} is a reserved tag")
            if cls in self.kinds:
                raise ValueError(f"codec: {cls.__qualname__} is in the allowlist twice")
            self.kinds[cls] = kind
            self.builders[kind.name] = kind.build
        self._decoder = json.JSONDecoder(object_pairs_hook=_hook(self.builders))
        self._encoder = json.JSONEncoder(ensure_ascii=True, check_circular=False, allow_nan=True,
                                         separators=(",", ":"))

    def _kind_of(self, cls: type) -> _Kind:
        kind = self.kinds.get(cls)
        if kind is None:
            try:
                if not self.open:
                    raise TypeError("not in the allowlist")
                kind = self.kinds[cls] = _kind(cls)
            except TypeError:
                raise CodecError(f"cannot encode an object of type {cls.__module__}.{cls.__qualname__}") from None
        return kind

    def _plain(self, value: Any) -> Any:
        """``value`` as what ``json`` writes (tuples of scalars are left as they are)."""
        cls = type(value)
        if cls in _SCALARS:
            return value
        plain = self._plain
        if cls is list:
            return value if _SCALARS.issuperset(map(type, value)) else [plain(v) for v in value]
        if cls is tuple:
            return {TUPLE: value if _SCALARS.issuperset(map(type, value)) else [plain(v) for v in value]}
        if cls is dict:
            return {DICT: [[plain(k) for k in value], [plain(v) for v in value.values()]]}
        if cls is complex:
            return {COMPLEX: [value.real, value.imag]}
        if value is Ellipsis:
            return {ELLIPSIS: None}
        kind = self._kind_of(cls)
        return {kind.name: [plain(v) for v in kind.parts(value)]}

    def dumps(self, value: Any) -> bytes:
        try:
            return self._encoder.encode(self._plain(value)).encode("ascii")
        except RecursionError:
            raise CodecError("cannot encode: nested too deeply, or cyclic") from None
        except ValueError as exc:  # an integer past the conversion limit
            if isinstance(exc, CodecError):
                raise
            raise CodecError(f"cannot encode: {exc}") from None

    def loads(self, data: bytes | bytearray | memoryview | str) -> Any:
        try:
            if not isinstance(data, (bytes, bytearray, memoryview, str)):
                raise CodecError(f"expected bytes, not {type(data).__name__}")
            return self._decoder.decode(data if isinstance(data, str) else str(data, "utf-8"))
        except CodecError:
            raise
        except RecursionError:
            raise CodecError("not a valid encoding: nested too deeply") from None
        except Exception as exc:  # malformed JSON, an overlong number, an unhashable key, a constructor's refusal
            raise CodecError(f"not a valid encoding: {type(exc).__name__}: {_short(str(exc))}") from None


_OPEN = Allowlist((), _open=True)
_compiled: dict[Any, Allowlist] = {}


def allowlist(types: Types) -> Allowlist:
    """The :class:`Allowlist` of ``types`` (kept for the next call with equal ``types``)."""
    if isinstance(types, Allowlist):
        return types
    key: tuple[Any, ...] = tuple(types.items()) if isinstance(types, Mapping) else tuple(types)
    try:
        return _compiled[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable entry: made every time
        return Allowlist(types)
    if len(_compiled) >= 32:
        _compiled.clear()
    made = _compiled[key] = Allowlist(types)
    return made


def dumps(value: Any, types: Types | None = None) -> bytes:
    """``value`` as bytes. With ``types``, only its classes may appear; without, any
    supported class (named by its ``__qualname__``)."""
    return (_OPEN if types is None else allowlist(types)).dumps(value)


def loads(data: bytes | bytearray | memoryview | str, types: Types) -> Any:
    """The value ``data`` encodes, building no class outside ``types``."""
    return allowlist(types).loads(data)
