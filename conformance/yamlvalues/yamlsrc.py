"""Safe YAML reading that remembers where every value was written.

libyaml's parser (in C, through PyYAML; PyYAML's own Python parser where PyYAML was built
without libyaml) gives the events, and we build plain Python values from them ourselves, so
that every mapping key and list item keeps its line, and so that anything outside plain
data is refused: tags other than the core scalar/map/seq ones (no ``!!python/...``,
``!!binary``, timestamps, sets), aliases (which also rules out alias bombs), merge keys and
duplicate keys. Nesting deeper than :data:`MAX_DEPTH` and numbers written with more than
:data:`MAX_NUMBER_CHARS` characters are refused before anything is built from them.
PyYAML's composer and its node objects are skipped: reading the YAML is most of the cost
of collecting a case file.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from conformance.source import CaseFormatError, Location
from conformance.yamlvalues import yamlerrors

MAX_FILE_BYTES = 1_000_000
MAX_DEPTH = 32  # levels of nested mappings and lists; the corpus needs about 10
MAX_NUMBER_CHARS = 100  # no dtype holds a number that needs more digits than this

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null")}
_NUMBER_TAGS = {_CORE + "int", _CORE + "float"}


class _Located:
    """Where a mapping or list was written: kept as the parser's start mark and made a
    Location when asked (most never are, and a case file has thousands of them)."""

    __slots__ = ()
    _file: str
    _at: Any  # a Location, or the parser's mark

    @property
    def location(self) -> Location:
        if type(self._at) is not Location:
            self._at = _as_location(self._file, self._at)
        return self._at

    @location.setter
    def location(self, value: Location) -> None:
        # the slots are the subclasses' (a mixin of dict / list subclasses has none of its own)
        self._file, self._at = value.file, value  # type: ignore[misc]


class YMap(_Located, dict):
    """A mapping that remembers where it and each key were written."""

    __slots__ = ("_file", "_at", "key_locations")
    # key -> its Location, or the parser's start mark of the key (made a Location when asked)
    key_locations: dict[str, Any]

    def where(self, key: str) -> Location:
        at = self.key_locations.get(key)
        return self.location if at is None else _as_location(self._file, at)


class YList(_Located, list):
    """A sequence that remembers where it and each item were written."""

    __slots__ = ("_file", "_at", "item_locations")
    item_locations: list[Any]  # Locations, or the parser's start marks (as for YMap)

    def where(self, index: int) -> Location:
        if index >= len(self.item_locations):
            return self.location
        return _as_location(self._file, self.item_locations[index])


def _as_location(file: str, at: Any) -> Location:
    """A Location as it is, or the parser's mark (0-based) as a Location."""
    return at if type(at) is Location else Location(file, at.line + 1, at.column + 1)


def location_of(value: Any, default: Location) -> Location:
    return getattr(value, "location", default)


_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # what YAML counts as a line break


def find_text(text: str, value: str, after: Location) -> Location | None:
    """Where the text of a value is written, searched from ``after`` (the key that holds
    it) on: the reader keeps the place of keys and items only, and an error about a text
    value (a list item that lost its space after '-') belongs where the text is. None if
    it is not written as it reads (a quoted text with escapes, a folded one)."""
    first = value.strip().split("\n", 1)[0][:40]
    if not first:
        return None
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    if not 1 <= after.line <= len(starts):
        return None
    found = text.find(first, starts[after.line - 1] + after.column - 1)
    if found < 0:
        return None
    line = bisect.bisect_right(starts, found)
    return Location(after.file, line, found - starts[line - 1] + 1)


def folded_into(text: str, step: str, at: Location) -> CaseFormatError | None:
    """The error for a list item (a step at ``at``) whose plain text YAML folded the next
    line into, or None if it did not: a line starting with '- ' indented deeper than the
    item's own '-' is read as more of its text, and so is a line that lost its '- '."""
    lines = _LINE_BREAK.split(text)
    if not 1 <= at.line <= len(lines):
        return None
    first = lines[at.line - 1]
    dash = first.rfind("-", 0, at.column - 1)
    rest = first[at.column - 1:]
    if dash < 0 or first[:dash].strip() or rest[:1] in ("'", '"') or len(step) <= len(rest.split(" #")[0].rstrip()):
        return None
    following = next((i for i in range(at.line, len(lines)) if lines[i].strip()), None)
    if following is None:
        return None
    line = lines[following]
    indent = len(line) - len(line.lstrip(" "))
    where = Location(at.file, following + 1, indent + 1)
    if line.lstrip(" ").startswith("- "):
        return CaseFormatError(where, f"this '- ' is indented {indent} spaces, more than the step's on line {at.line} "
                                      f"({dash}): YAML reads it as the rest of that step's text, not a step",
                               f"indent it by {dash} spaces, like the step on line {at.line}")
    return CaseFormatError(where, f"this line has no '- ': YAML reads it as the rest of the step on line {at.line}",
                           f"start it with '- ', indented {dash} spaces like the step on line {at.line}")


def too_large(file: str) -> CaseFormatError:
    return CaseFormatError(Location(file, 1), f"file is larger than {MAX_FILE_BYTES} bytes",
                           "split the cases over several files")


def parse(text: str, file: str) -> Any:
    """Parse one YAML document into YMap / YList / scalars, or raise CaseFormatError."""
    # a character is at least one byte: a text longer than the limit is refused without
    # making a second, encoded copy of it
    if len(text) > MAX_FILE_BYTES or len(text.encode("utf-8", errors="replace")) > MAX_FILE_BYTES:
        raise too_large(file)
    try:
        parser = _EventParser(text)  # libyaml's parser encodes the text whole: a lone surrogate raises here
        try:
            return _Builder(file).build(parser)
        finally:
            parser.dispose()
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in (exc.problem or "") and exc.problem_mark is not None:
            # PyYAML 6.0.4's scanner has a nesting limit of its own and refuses a deep flow
            # collection ("exceeded maximum nesting depth") before the builder sees the level
            # past MAX_DEPTH: the same refusal as the builder's, where the scanner stopped
            raise _too_deep(file, exc.problem_mark) from None
        try:  # the mistake behind it, where it is written (libyaml's mark is often past it)
            explained = yamlerrors.explain(text, exc, _EventParser)
        except Exception:  # noqa: BLE001 - a diagnosis never costs the error itself (test_fuzz calls it alone)
            explained = None
        if explained is not None:
            raise CaseFormatError(Location(file, explained.line, explained.column), explained.message,
                                  explained.hint) from None
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise CaseFormatError(
            Location(file, line, col), f"YAML syntax error: {problem}",
            "check indentation and quoting on this line (strings with ': ' or '#' need quotes)",
        ) from None
    except yaml.reader.ReaderError as exc:  # control characters, invalid bytes
        before = text.encode("utf-8", "surrogatepass")[:exc.position].decode("utf-8", "replace")
        line, col = before.count("\n") + 1, len(before) - before.rfind("\n")
        raise CaseFormatError(
            Location(file, line, col), f"YAML error: unacceptable character #x{exc.character:04x}: "
            f"{exc.reason}", "remove it, or write it as an escape inside double quotes (\"\\t\")",
        ) from None
    except yaml.YAMLError as exc:
        raise CaseFormatError(Location(file, 1), f"YAML error: {exc}", None) from None
    except UnicodeEncodeError as exc:  # a lone surrogate: no file decoded as UTF-8 holds one
        raise CaseFormatError(Location(file, text.count("\n", 0, exc.start) + 1), f"YAML error: {exc.reason}",
                              "remove the character") from None


def _loc(file: str, event: yaml.Event) -> Location:
    return _as_location(file, event.start_mark)


try:  # libyaml's parser, in C: reading the events is most of the cost of a case file
    from yaml._yaml import CParser as _EventParser
except ImportError:  # PyYAML built without libyaml: the same events, in Python
    from yaml.parser import Parser as _PythonParser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _EventParser(Reader, Scanner, _PythonParser):  # type: ignore[no-redef]
        def __init__(self, text: str) -> None:
            Reader.__init__(self, text)
            Scanner.__init__(self)
            _PythonParser.__init__(self)

        def dispose(self) -> None:
            pass


def _too_deep(file: str, where: Any) -> CaseFormatError:
    """The refusal at an event (the builder's check) or at a parser's mark (the scanner's)."""
    mark = getattr(where, "start_mark", where)
    return CaseFormatError(
        _as_location(file, mark), f"YAML nesting deeper than {MAX_DEPTH} levels",
        "case files need only a few levels; write a many-dimensional input with 'shape:' and 'fill:'",
    )


_SEQ, _MAP, _STR, _MERGE = _CORE + "seq", _CORE + "map", _CORE + "str", _CORE + "merge"
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = SafeConstructor()
# plain untagged scalar text -> (its value,): the same text always resolves to the same
# immutable value (str, int, float, bool, None), so the values are shared by every file,
# for texts up to _CACHED_TEXT_CHARS long, up to _CACHE_LIMIT texts
_PLAIN_VALUES: dict[str, tuple[Any]] = {}
_CACHE_LIMIT = 50_000
_CACHED_TEXT_CHARS = 100


_NO_KEY = object()  # a mapping's next scalar is a key, not a value


class _Builder:
    """Plain values from one document, built as the parser produces its events, each
    collection remembering where it and its keys or items were written. One loop, not a
    call per value, and no list of events: a case file has tens of thousands of values,
    most of them short plain scalars already resolved once. Every problem is refused where
    it is written, the first in the file first (a syntax error further down is reported
    only once everything before it is valid): aliases (which also rules out alias bombs),
    nesting deeper than MAX_DEPTH, tags, merge keys, duplicate keys, a second document."""

    def __init__(self, file: str) -> None:
        self.file = file

    def build(self, parser: Any) -> Any:
        file = self.file
        next_event = parser.get_event
        documents = 0
        document: Any = None
        top: Any = None  # the collection being filled; None before the document's value
        top_is_map = False
        key: Any = _NO_KEY  # in a mapping: the key waiting for its value
        open_collections: list[tuple[Any, bool, Any]] = []
        while True:
            event = next_event()
            kind = type(event)
            if kind is yaml.ScalarEvent:
                if len(open_collections) >= MAX_DEPTH:
                    raise _too_deep(file, event)
                if top_is_map and key is _NO_KEY:
                    key = self.key(event, top)
                    continue
                known = _PLAIN_VALUES.get(event.value) if event.tag is None and event.implicit[0] else None
                value = known[0] if known is not None else self.scalar(event)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if len(open_collections) >= MAX_DEPTH:
                    raise _too_deep(file, event)
                if top_is_map and key is _NO_KEY:
                    raise CaseFormatError(_loc(file, event), "mapping keys must be plain strings",
                                          "use a plain word as the key")
                if kind is yaml.MappingStartEvent:
                    if event.tag is not None:
                        self.check_tag(event, _MAP)
                    value = YMap()
                    value.key_locations = {}
                else:
                    if event.tag is not None:
                        self.check_tag(event, _SEQ)
                    value = YList()
                    value.item_locations = []
                value._file, value._at = file, event.start_mark
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                top, top_is_map, key = open_collections.pop()  # back to the collection holding it
                continue
            elif kind is yaml.AliasEvent:
                raise CaseFormatError(
                    _loc(file, event), "YAML anchors and aliases (&name / *name) are not allowed in case files",
                    "write the value out in full",
                )
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise CaseFormatError(
                        _loc(file, next_event()), "more than one YAML document ('---') in a case file",
                        "put all cases of the file in the one 'cases:' list",
                    )
                continue
            elif event is None or kind is yaml.StreamEndEvent:
                if not documents:
                    raise CaseFormatError(Location(file, 1), "the file is empty", "add a 'cases:' list")
                return document
            else:  # the stream's start, a document's end
                continue
            if top is None:
                document = value
            elif top_is_map:
                top[key] = value
                key = _NO_KEY
            else:
                top.item_locations.append(event.start_mark)
                top.append(value)
            if kind is not yaml.ScalarEvent:
                open_collections.append((top, top_is_map, key))
                top, top_is_map, key = value, kind is yaml.MappingStartEvent, _NO_KEY

    def key(self, event: yaml.ScalarEvent, mapping: YMap) -> str:
        """Check a mapping key and note where it is; return its text as written (YAML 1.1
        would turn keys such as 'on' into booleans, and no key of the case format is
        anything but a name)."""
        text = event.value
        if text == "<<" and self.tag(event) == _MERGE:  # only '<<' resolves to merge
            raise CaseFormatError(_loc(self.file, event), "YAML merge keys ('<<') are not allowed",
                                  "write the keys out in full")
        if not (event.tag is None and event.implicit[0] and text in _PLAIN_VALUES):
            self.scalar(event)  # refuses tags and overlong numbers on keys too
        if text in mapping:
            raise CaseFormatError(
                _loc(self.file, event), f"duplicate key {text!r} (first at line {mapping.where(text).line})",
                "remove or rename one of them",
            )
        mapping.key_locations[text] = event.start_mark
        return text

    @staticmethod
    def tag(event: yaml.Event) -> str:
        """The event's tag, resolved as PyYAML's composer does for untagged values."""
        tag = event.tag
        if tag is None or tag == "!":
            if type(event) is yaml.ScalarEvent:
                return _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
            node = yaml.SequenceNode if type(event) is yaml.SequenceStartEvent else yaml.MappingNode
            return _RESOLVER.resolve(node, None, event.implicit)
        return tag

    def check_tag(self, event: yaml.Event, allowed: str) -> None:
        tag = self.tag(event)
        if tag != allowed:
            raise CaseFormatError(_loc(self.file, event), f"YAML tag {tag!r} is not allowed in case files",
                                  "remove the tag")

    def scalar(self, event: yaml.ScalarEvent) -> Any:
        tag = self.tag(event)
        value = event.value
        if tag == _STR:
            _remember(event, value)
            return value
        if tag not in _SCALAR_TAGS:
            raise CaseFormatError(
                _loc(self.file, event), f"YAML tag {tag!r} is not allowed in case files",
                "use plain numbers, booleans, null and strings; quote values such as dates",
            )
        if tag in _NUMBER_TAGS and len(value) > MAX_NUMBER_CHARS:
            raise CaseFormatError(
                _loc(self.file, event), f"a number written with {len(value)} characters (at most {MAX_NUMBER_CHARS})",
                "cases use small values that fit their dtype",
            )
        node = yaml.ScalarNode(tag, value, event.start_mark, event.end_mark, style=event.style)
        try:
            constructed = _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, node)  # no memo of the node
        except (ValueError, KeyError, IndexError):  # an explicit core tag on a wrong value: !!int 'abc', !!bool 'maybe'
            raise CaseFormatError(
                _loc(self.file, event), f"{value[:40]!r} is not a valid {tag.removeprefix(_CORE)}",
                "remove the explicit tag, or write a value of that type",
            ) from None
        _remember(event, constructed)
        return constructed


def _remember(event: yaml.ScalarEvent, value: Any) -> None:
    """Cache the value of a short plain untagged scalar (after every check passed)."""
    if event.tag is None and event.implicit[0] and len(event.value) <= _CACHED_TEXT_CHARS:
        if len(_PLAIN_VALUES) > _CACHE_LIMIT:
            _PLAIN_VALUES.clear()
        _PLAIN_VALUES[event.value] = (value,)
