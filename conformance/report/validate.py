r"""A validator for the subset of JSON Schema (draft 2020-12) that the results schema
(``conformance/data/results.schema.json``) uses, with no dependency.

Results files are data from anyone (a pull request can change ``releases/*/*.json``), so
every command that reads one checks the whole document before using any of it, and says
every problem (the first few) at once: each with its JSON path (``results[12].outcome``),
what is there and what was expected (:class:`Problem`).

Keywords: ``type``, ``const``, ``enum``, ``required``, ``properties``,
``additionalProperties``, ``propertyNames``, ``items``, ``minItems``, ``maxItems``,
``minimum``, ``minLength``, ``pattern``, ``$ref`` (to ``#/$defs/NAME``), ``oneOf``,
``allOf``, ``if`` / ``then`` / ``else``; ``$schema``, ``$id``, ``$defs``, ``title`` and
``description`` are annotations. A schema that uses any other keyword is refused when it is
compiled (:class:`SchemaError`; the tests compile the shipped one), never half-checked.

Where the standard is looser than what the renderers rely on, this is stricter (the tests
cross-check everything else against the ``jsonschema`` package):

- ``integer`` is a number written without a fraction (``12``, not ``12.0``), never ``true``;
- ``pattern`` is read as ECMA-262 reads it: ``\d`` and ``\w`` are ASCII only, and ``$`` is
  the end of the text (Python's own ``$`` also matches before a final line feed).

:func:`plain_problems` checks what JSON Schema cannot say: how deep the document nests,
strings that are not Unicode text (a lone surrogate, which ``\ud800`` in JSON makes and no
UTF-8 file can hold), and numbers too large to be finite.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Union

PathPart = Union[str, int]
JsonPath = tuple[PathPart, ...]

ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description", "$comment"})
KEYWORDS = frozenset({"type", "const", "enum", "required", "properties", "additionalProperties", "propertyNames",
                      "items", "minItems", "maxItems", "minimum", "minLength", "pattern", "$ref", "oneOf", "allOf",
                      "if", "then", "else"})
TYPE_WORDS = {"object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
              "number": "a number", "boolean": "a boolean", "null": "null"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
SHOWN_CHARS = 40  # of a value quoted in a message
SHOWN_KEY_CHARS = 60  # of an object's key in a JSON path


class SchemaError(Exception):
    """The schema uses what this validator does not implement."""


@dataclass(frozen=True)
class Problem:
    """One way a document differs from its schema."""

    path: JsonPath
    what: str  # what is wrong: 'is "passed"', "is missing"
    expected: str  # what the schema wants there

    def text(self) -> str:
        return f"{json_path(self.path)}: {self.what}; expected {self.expected}"


def json_path(path: JsonPath) -> str:
    """``results[12].outcome``, ``cases["views.reshape.agree"].title``; ``(the document)``
    for the top. Keys are quoted as JSON strings (ASCII, cut to 60 characters) unless they
    are plain words, so a key can neither hide nor fake a part of the path."""
    out = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.fullmatch(part) and len(part) <= SHOWN_KEY_CHARS:
            out.append(f".{part}" if out else part)
        else:
            shown = part if len(part) <= SHOWN_KEY_CHARS else part[:SHOWN_KEY_CHARS - 3] + "..."
            out.append(f"[{json.dumps(shown, ensure_ascii=True)}]")
    return "".join(out) or "(the document)"


def kind_of(value: Any) -> str:
    """The JSON type of a value in words: ``a string``, ``an integer``, ``null``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def brief(value: Any) -> str:
    """A value as JSON, cut to :data:`SHOWN_CHARS` characters (quoted in a message)."""
    if isinstance(value, dict):
        return "{...}" if value else "{}"
    if isinstance(value, list):
        return "[...]" if value else "[]"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** SHOWN_CHARS:
        return f"an integer of {len(str(abs(value)))} digits"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= SHOWN_CHARS:
        return text
    return text[:SHOWN_CHARS - 4] + ('..."' if isinstance(value, str) else "...")


def found(value: Any) -> str:
    """What is there, for a message: ``a string ("12")``, ``an array of 3 items``, ``null``."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, dict):
        return f"an object of {len(value)} key{'s' * (len(value) != 1)}"
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' * (len(value) != 1)}"
    return f"{kind_of(value)} ({brief(value)})"


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: ``true`` is not ``1``, ``2.0`` is ``2``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# the JSON type of what json.loads makes (a bool is not an integer; an integer is a number)
_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "integer", float: "number", bool: "boolean",
               type(None): "null"}


def _is_type(value: Any, name: str) -> bool:
    found = _JSON_TYPES.get(type(value))
    return found == name or (name == "number" and found == "integer")


def ecma_pattern(pattern: str) -> re.Pattern[str]:
    """A JSON Schema ``pattern`` as ECMA-262 reads it (ASCII classes; ``$`` only at the end)."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    try:
        return re.compile(pattern, re.ASCII)
    except re.error as exc:
        raise SchemaError(f"pattern {pattern!r}: {exc}") from None


class _Collector:
    """The problems found: the first ``limit`` kept, all counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.shown: list[Problem] = []
        self.total = 0

    def add(self, problem: Problem) -> None:
        self.total += 1
        if len(self.shown) < self.limit:
            self.shown.append(problem)


class _Node:
    """One compiled (sub)schema."""

    def __init__(self, schema: Any, compiler: _Compiler, where: str) -> None:
        if schema is True or schema == {}:
            schema = {}
        if not isinstance(schema, dict):
            raise SchemaError(f"{where}: a schema is an object (or true), not {kind_of(schema)}")
        unknown = sorted(set(schema) - KEYWORDS - ANNOTATIONS)
        if unknown:
            raise SchemaError(f"{where}: keyword(s) {', '.join(unknown)} not implemented by this validator")
        self.where = where
        self.ref: _Node | None = None
        self.ref_name = schema.get("$ref")
        if self.ref_name is not None:
            compiler.wait_for(self, self.ref_name)
        types = schema.get("type")
        self.types: tuple[str, ...] | None = None if types is None else \
            (types,) if isinstance(types, str) else tuple(types)
        for name in self.types or ():
            if name not in TYPE_WORDS:
                raise SchemaError(f"{where}: unknown type {name!r}")
        # the JSON types of json.loads's values it accepts ("number" takes integers too)
        self.allowed = None if self.types is None else \
            frozenset(self.types) | ({"integer"} if "number" in self.types else set())
        self.has_const = "const" in schema
        self.const = schema.get("const")
        self.enum: list[Any] | None = schema.get("enum")
        self.required: list[str] = list(schema.get("required", []))
        self.properties = {k: compiler.node(v, f"{where}/properties/{k}")
                           for k, v in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties", True)
        self.closed = extra is False
        self.extra = None if isinstance(extra, bool) else compiler.node(extra, f"{where}/additionalProperties")
        self.names = None if "propertyNames" not in schema else \
            compiler.node(schema["propertyNames"], f"{where}/propertyNames")
        self.items = None if "items" not in schema else compiler.node(schema["items"], f"{where}/items")
        self.min_items: int | None = schema.get("minItems")
        self.max_items: int | None = schema.get("maxItems")
        self.minimum: float | None = schema.get("minimum")
        self.min_length: int | None = schema.get("minLength")
        self.pattern_text: str | None = schema.get("pattern")
        self.pattern = None if self.pattern_text is None else ecma_pattern(self.pattern_text)
        self.one_of = [compiler.node(s, f"{where}/oneOf/{i}") for i, s in enumerate(schema.get("oneOf", []))]
        self.all_of = [compiler.node(s, f"{where}/allOf/{i}") for i, s in enumerate(schema.get("allOf", []))]
        self.if_ = None if "if" not in schema else compiler.node(schema["if"], f"{where}/if")
        self.then = None if "then" not in schema else compiler.node(schema["then"], f"{where}/then")
        self.else_ = None if "else" not in schema else compiler.node(schema["else"], f"{where}/else")
        self.if_words = _condition_words(schema.get("if"))
        self._described: str | None = None

    # ---- checking

    def matches(self, value: Any) -> bool:
        probe = _Collector(0)
        self.check(value, (), probe, "")
        return probe.total == 0

    def accepts_type(self, value: Any) -> bool:
        """Whether the value is of a type this schema (or the one it refers to) allows."""
        node = self
        while node.ref is not None and node.types is None:
            node = node.ref
        if node.types is not None:
            return any(_is_type(value, t) for t in node.types)
        if node.has_const:
            return kind_of(value) == kind_of(node.const)
        if node.enum is not None:
            return any(kind_of(value) == kind_of(v) for v in node.enum)
        return True

    def check(self, value: Any, path: JsonPath, out: _Collector, context: str) -> None:
        if self.ref is not None:
            self.ref.check(value, path, out, context)
        if self.allowed is not None and _JSON_TYPES.get(type(value)) not in self.allowed:
            out.add(Problem(path, f"is {found(value)}", self.describe() + context))
            return
        if self.has_const and not json_equal(value, self.const):
            out.add(Problem(path, f"is {brief(value)}", self.describe() + context))
            return
        if self.enum is not None and not any(json_equal(value, v) for v in self.enum):
            out.add(Problem(path, f"is {brief(value)}", self.describe() + context))
            return
        if isinstance(value, dict):
            self._check_object(value, path, out, context)
        elif isinstance(value, list):
            self._check_array(value, path, out, context)
        elif isinstance(value, str):
            if self.min_length is not None and len(value) < self.min_length:
                out.add(Problem(path, f"is {brief(value)}", self.describe() + context))
            elif self.pattern is not None and not self.pattern.search(value):
                out.add(Problem(path, f"is {brief(value)}", self.describe() + context))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if self.minimum is not None and value < self.minimum:
                out.add(Problem(path, f"is {brief(value)}", self.describe() + context))
        if self.one_of:
            self._check_one_of(value, path, out, context)
        for node in self.all_of:
            node.check(value, path, out, context)
        if self.if_ is not None:
            holds = self.if_.matches(value)
            branch = self.then if holds else self.else_
            if branch is not None:
                words = self.if_words[0 if holds else 1]
                branch.check(value, path, out, f" ({words})" if words else context)

    def _check_object(self, value: dict[str, Any], path: JsonPath, out: _Collector, context: str) -> None:
        for key in self.required:
            if key not in value:
                wanted = self.properties[key].describe() if key in self.properties else "a value"
                out.add(Problem(path + (key,), "is missing", wanted + context))
        for key, item in value.items():
            if self.names is not None and not self.names.matches(key):
                out.add(Problem(path + (key,), "is a key this object cannot have", self.names.key_words() + context))
                continue
            node = self.properties.get(key)
            if node is not None:
                node.check(item, path + (key,), out, context)
            elif self.closed:
                keys = ", ".join(self.properties) or "none"
                out.add(Problem(path + (key,), "is a key this object cannot have", f"only the keys {keys}"))
            elif self.extra is not None:
                self.extra.check(item, path + (key,), out, context)

    def _check_array(self, value: list[Any], path: JsonPath, out: _Collector, context: str) -> None:
        if (self.min_items is not None and len(value) < self.min_items) or \
                (self.max_items is not None and len(value) > self.max_items):
            out.add(Problem(path, f"is {found(value)}", self.describe() + context))
        if self.items is not None:
            for i, item in enumerate(value):
                self.items.check(item, path + (i,), out, context)

    def _check_one_of(self, value: Any, path: JsonPath, out: _Collector, context: str) -> None:
        matching = [node for node in self.one_of if node.matches(value)]
        if len(matching) == 1:
            return
        if not matching:
            typed = [node for node in self.one_of if node.accepts_type(value)]
            if len(typed) == 1:  # the one it is meant to be: its own problems, precisely
                typed[0].check(value, path, out, context)
            else:
                out.add(Problem(path, f"is {found(value)}", self.describe() + context))
        else:
            out.add(Problem(path, f"is {found(value)}, which fits more than one of its forms",
                            self.describe() + context))

    # ---- words

    def describe(self) -> str:
        """What the schema wants, in words: ``an integer of at least 1``, ``one of "cpu", "cuda"``."""
        if self._described is None:
            self._described = "..."  # a schema that refers to itself
            self._described = self._words()
        return self._described

    def key_words(self) -> str:
        """What a ``propertyNames`` schema wants, in words: ``a key matching ^S\\d-\\d\\d$``."""
        if self.pattern_text is not None and self.types is None:
            return f"a key matching {self.pattern_text}"
        if self.enum is not None:
            return "a key that is one of " + ", ".join(brief(v) for v in self.enum)
        return f"a key that is {self.describe()}"

    def _words(self) -> str:
        if self.ref is not None and self.types is None and not self.has_const and self.enum is None:
            return self.ref.describe()
        if self.has_const:
            return brief(self.const)
        if self.enum is not None:
            return "one of " + ", ".join(brief(v) for v in self.enum)
        if self.one_of:
            return " or ".join(dict.fromkeys(node.describe() for node in self.one_of))
        types = list(self.types or ())
        if not types:
            if self.pattern_text is not None or self.min_length is not None:
                types = ["string"]
            else:
                return "any JSON value"
        words = []
        for name in types:
            text = TYPE_WORDS[name]
            if name == "object" and self.required:
                text += " with the keys " + ", ".join(self.required)
            elif name == "array":
                if self.min_items is not None and self.min_items == self.max_items:
                    text += f" of {self.min_items} items"
                elif self.min_items:
                    text += f" of at least {self.min_items} item{'s' * (self.min_items != 1)}"
                if self.items is not None and self.items.describe() != "any JSON value":
                    text += f" (each {self.items.describe()})"
            elif name in ("integer", "number") and self.minimum is not None:
                text += f" of at least {self.minimum:g}"
            elif name == "string":
                if self.min_length == 1:
                    text = "a non-empty string"
                elif self.min_length:
                    text += f" of at least {self.min_length} characters"
                if self.pattern_text is not None:
                    text += f" matching {self.pattern_text}"
            words.append(text)
        return " or ".join(words)


def _condition_words(schema: Any) -> tuple[str, str]:
    """``if: {properties: {outcome: {const: pass}}}`` -> ('as outcome is "pass"', 'as outcome
    is not "pass"'); ('', '') for any other condition."""
    if isinstance(schema, dict) and set(schema) == {"properties"} and len(schema["properties"]) == 1:
        (key, sub), = schema["properties"].items()
        if isinstance(sub, dict) and set(sub) == {"const"}:
            value = brief(sub["const"])
            return f"as {key} is {value}", f"as {key} is not {value}"
    return "", ""


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.defs: dict[str, _Node] = {}
        self.waiting: list[tuple[_Node, str]] = []

    def node(self, schema: Any, where: str) -> _Node:
        return _Node(schema, self, where)

    def wait_for(self, node: _Node, ref: Any) -> None:
        if not isinstance(ref, str) or not ref.startswith("#/$defs/") or "/" in ref[len("#/$defs/"):]:
            raise SchemaError(f"{node.where}: $ref {ref!r}: only references to #/$defs/NAME are implemented")
        name = ref[len("#/$defs/"):]
        if name not in self.root.get("$defs", {}):
            raise SchemaError(f"{node.where}: $ref {ref!r}: no such definition")
        self.waiting.append((node, name))

    def link(self) -> None:
        while self.waiting:
            node, name = self.waiting.pop()
            if name not in self.defs:
                self.defs[name] = self.node(self.root["$defs"][name], f"#/$defs/{name}")
            node.ref = self.defs[name]


class Schema:
    """A compiled schema: :meth:`problems` of a document."""

    def __init__(self, schema: dict[str, Any]) -> None:
        compiler = _Compiler(schema)
        for name, sub in schema.get("$defs", {}).items():  # every definition, used or not, is checked
            compiler.defs.setdefault(name, compiler.node(sub, f"#/$defs/{name}"))
        self.root = compiler.node(schema, "#")
        compiler.link()

    def problems(self, document: Any, limit: int = 20) -> tuple[list[Problem], int]:
        """The first ``limit`` problems, in the document's order, and how many there are."""
        out = _Collector(limit)
        self.root.check(document, (), out, "")
        return out.shown, out.total


def plain_problems(document: Any, max_depth: int, limit: int = 20) -> tuple[list[Problem], int, bool]:
    """What JSON Schema cannot say about a parsed document: nesting deeper than
    ``max_depth`` containers, strings and keys that are not Unicode text (a lone surrogate),
    numbers that are not finite (``1e400`` reads as infinity). Iterative: any depth is
    walked without recursion. Returns the first ``limit`` problems, their number, and
    whether the document nests too deep (then no recursive walk may take it)."""
    out = _Collector(limit)
    too_deep = False
    stack: list[tuple[Any, JsonPath]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, (dict, list)):
            if len(path) >= max_depth:
                too_deep = True
                out.add(Problem(path, f"nests more than {max_depth} levels deep",
                                f"at most {max_depth} levels of arrays and objects"))
                continue
            if isinstance(value, dict):
                children: list[tuple[Any, JsonPath]] = []
                for key, item in value.items():
                    if not key.isascii() and _SURROGATE.search(key):
                        out.add(_not_text(path + (key,), key, "key"))
                    children.append((item, path + (key,)))
            else:
                children = [(item, path + (i,)) for i, item in enumerate(value)]
            stack.extend(reversed(children))
        elif isinstance(value, str):
            if not value.isascii() and _SURROGATE.search(value):
                out.add(_not_text(path, value, "string"))
        elif isinstance(value, float) and not math.isfinite(value):
            out.add(Problem(path, "is a number too large to be finite (it reads as infinity)",
                            "a finite number"))
    return out.shown, out.total, too_deep


def _not_text(path: JsonPath, text: str, what: str) -> Problem:
    bad = _SURROGATE.search(text)
    code = f"\\u{ord(bad.group()):04x}" if bad else "?"
    return Problem(path, f"is a {what} that is not Unicode text (a lone surrogate, {code})",
                   "text that UTF-8 can write")
