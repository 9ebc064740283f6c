"""Safe YAML reading that remembers where every value was written.

PyYAML's ``SafeLoader`` composes the node graph; we build plain Python values from it
ourselves so that every mapping key and list item keeps its line, and so that anything
outside plain data is refused: tags other than the core scalar/map/seq ones (no
``!!python/...``, ``!!binary``, timestamps, sets), aliases (which also rules out alias
bombs), merge keys and duplicate keys. Nesting deeper than :data:`MAX_DEPTH` and numbers
written with more than :data:`MAX_NUMBER_CHARS` characters are refused before anything is
built from them (PyYAML composes recursively, and converts numbers of any length).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from conformance.model import CaseFormatError, Location

MAX_FILE_BYTES = 1_000_000
MAX_DEPTH = 32  # levels of nested mappings and lists; the corpus needs about 10
MAX_NUMBER_CHARS = 100  # no dtype holds a number that needs more digits than this

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null")}
_NUMBER_TAGS = {_CORE + "int", _CORE + "float"}


class YMap(dict):
    """A mapping that remembers where it and each key were written."""

    location: Location
    key_locations: dict[str, Location]

    def where(self, key: str) -> Location:
        return self.key_locations.get(key, self.location)


class YList(list):
    """A sequence that remembers where it and each item were written."""

    location: Location
    item_locations: list[Location]

    def where(self, index: int) -> Location:
        return self.item_locations[index] if index < len(self.item_locations) else self.location


def location_of(value: Any, default: Location) -> Location:
    return getattr(value, "location", default)


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
        nodes = _compose(text, file)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise CaseFormatError(
            Location(file, line, col), f"YAML syntax error: {problem}",
            "check indentation and quoting on this line (strings with ': ' or '#' need quotes)",
        ) from None
    except yaml.reader.ReaderError as exc:  # control characters, invalid bytes
        before = text[:exc.position]
        line, col = before.count("\n") + 1, exc.position - before.rfind("\n")
        raise CaseFormatError(
            Location(file, line, col), f"YAML error: unacceptable character #x{exc.character:04x}: "
            f"{exc.reason}", "remove it, or write it as an escape inside double quotes (\"\\t\")",
        ) from None
    except yaml.YAMLError as exc:
        raise CaseFormatError(Location(file, 1), f"YAML error: {exc}", None) from None
    if not nodes:
        raise CaseFormatError(Location(file, 1), "the file is empty", "add a 'cases:' list")
    if len(nodes) > 1:
        loc = _loc(file, nodes[1])
        raise CaseFormatError(
            loc, "more than one YAML document ('---') in a case file",
            "put all cases of the file in the one 'cases:' list",
        )
    return _Builder(file).build(nodes[0])


def _loc(file: str, node: yaml.Node | yaml.Event) -> Location:
    return Location(file, node.start_mark.line + 1, node.start_mark.column + 1)


def _compose(text: str, file: str) -> list[yaml.Node]:
    """``yaml.compose_all`` with :class:`_Composer`."""
    composer = _Composer(text, file)
    try:
        nodes = []
        while composer.check_node():
            nodes.append(composer.get_node())
        return nodes
    finally:
        composer.dispose()


class _Composer(yaml.SafeLoader):
    """``SafeLoader`` composing nodes only, and refusing aliases and deep nesting as it
    reads, at the place they are written: PyYAML composes recursively, so a few hundred
    levels of '[' would end in RecursionError."""

    def __init__(self, text: str, file: str) -> None:
        super().__init__(text)
        self.file = file
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise CaseFormatError(
                _loc(self.file, event), "YAML anchors and aliases (&name / *name) are not allowed in case files",
                "write the value out in full",
            )
        if self.depth >= MAX_DEPTH:
            raise CaseFormatError(
                _loc(self.file, event), f"YAML nesting deeper than {MAX_DEPTH} levels",
                "case files need only a few levels; write a many-dimensional input with 'shape:' and 'fill:'",
            )
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.seen: set[int] = set()
        self.constructor = SafeConstructor()

    def build(self, node: yaml.Node) -> Any:
        loc = _loc(self.file, node)
        if id(node) in self.seen:  # an alias; _Composer refuses them first, where they are written
            raise CaseFormatError(
                loc, "YAML anchors and aliases (&name / *name) are not allowed in case files",
                "write the value out in full",
            )
        self.seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if node.tag not in _SCALAR_TAGS:
                raise CaseFormatError(
                    loc, f"YAML tag {node.tag!r} is not allowed in case files",
                    "use plain numbers, booleans, null and strings; quote values such as dates",
                )
            if node.tag in _NUMBER_TAGS and len(node.value) > MAX_NUMBER_CHARS:
                raise CaseFormatError(
                    loc, f"a number written with {len(node.value)} characters (at most {MAX_NUMBER_CHARS})",
                    "cases use small values that fit their dtype",
                )
            try:
                return self.constructor.construct_object(node, deep=True)
            except (ValueError, KeyError):  # an explicit core tag on a wrong value: !!int 'abc', !!bool 'maybe'
                raise CaseFormatError(
                    loc, f"{node.value[:40]!r} is not a valid {node.tag.removeprefix(_CORE)}",
                    "remove the explicit tag, or write a value of that type",
                ) from None
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _CORE + "seq":
                raise CaseFormatError(loc, f"YAML tag {node.tag!r} is not allowed in case files",
                                      "remove the tag")
            out = YList(self.build(item) for item in node.value)
            out.location = loc
            out.item_locations = [_loc(self.file, item) for item in node.value]
            return out
        if isinstance(node, yaml.MappingNode):
            if node.tag != _CORE + "map":
                raise CaseFormatError(loc, f"YAML tag {node.tag!r} is not allowed in case files",
                                      "remove the tag")
            out_map = YMap()
            out_map.location = loc
            out_map.key_locations = {}
            for key_node, value_node in node.value:
                key_loc = _loc(self.file, key_node)
                if key_node.tag == _CORE + "merge":
                    raise CaseFormatError(key_loc, "YAML merge keys ('<<') are not allowed",
                                          "write the keys out in full")
                if not isinstance(key_node, yaml.ScalarNode):
                    raise CaseFormatError(key_loc, "mapping keys must be plain strings",
                                          "use a plain word as the key")
                self.build(key_node)  # refuses tags and aliases on keys too
                # The key's text as written: YAML 1.1 would turn keys such as 'on' into
                # booleans, and no key of the case format is anything but a name.
                key = key_node.value
                if key in out_map:
                    first = out_map.key_locations[key]
                    raise CaseFormatError(
                        key_loc, f"duplicate key {key!r} (first at line {first.line})",
                        "remove or rename one of them",
                    )
                out_map.key_locations[key] = key_loc
                out_map[key] = self.build(value_node)
            return out_map
        raise CaseFormatError(loc, "unsupported YAML node", None)  # pragma: no cover
