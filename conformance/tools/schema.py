"""The case file JSON Schema's ``expect`` part, generated from the assertion kinds.

    python -m conformance.tools.schema            # rewrite what is out of date
    python -m conformance.tools.schema --check    # exit 1 if anything is

``conformance/data/case.schema.json`` is written by hand, except ``$defs/expectation``'s
``properties`` (one per kind, in the kinds' order) and the ``$defs`` the kinds use
(``pairs``, ``stepRef``, ``errorKind``, ``error``, ``errorDetail``, ``warning``): those are
each kind's :meth:`~conformance.kinds.base.Kind.schema`, for the built-in frameworks.
The file stays as written wherever it already says the same (its hand formatting is
kept); an entry that differs is rewritten in place, and a new one is added at the end
of ``$defs``. tests/test_case_schema.py checks that the file is up to date.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from conformance import kinds
from conformance.report.outputs import write_files

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "data" / "case.schema.json"
WIDTH = 120  # a value is written on one line when it fits


def frameworks() -> list[str]:
    """The frameworks the schema names: the built-in ones."""
    from conformance import registry

    return list(registry.BUILTIN)


def generated_defs(schema: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The ``$defs`` entries the kinds make: ``expectation`` (the hand-written one with
    the kinds' properties), ``overrideExpectation`` (the same, each entry of an entry kind
    also null: an override drops the shared entry, model.Dropped) and each def a kind adds."""
    properties, defs = kinds.schema(names)
    expectation = dict(schema["$defs"]["expectation"])
    expectation["properties"] = properties
    override = dict(expectation)
    override["description"] = ("What differs on a framework (may be partial). An entry written null drops the "
                               "shared expectation's entry (not for grad, whose null means no gradient).")
    override["properties"] = {name: _droppable(name, fragment, defs) for name, fragment in properties.items()}
    return {"expectation": expectation, "overrideExpectation": override, **defs}


def _droppable(name: str, fragment: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A kind's schema with each entry also null, where null drops the entry."""
    kind = kinds.get(name)
    if kind.arity == 0 or getattr(kind, "null_is_value", False):
        return fragment
    ref = fragment.get("$ref", "")
    inner = dict(defs[ref.rsplit("/", 1)[-1]]) if ref.startswith("#/$defs/") else dict(fragment)
    inner["description"] = fragment.get("description", inner.get("description", ""))
    inner["additionalProperties"] = {"anyOf": [inner["additionalProperties"], {"type": "null"}]}
    return inner


def stale(text: str, names: Sequence[str] | None = None) -> list[str]:
    """The ``$defs`` entries of a schema's text that differ from the kinds'."""
    schema = json.loads(text)
    wanted = generated_defs(schema, frameworks() if names is None else names)
    return [name for name, value in wanted.items() if schema["$defs"].get(name) != value]


def updated(text: str, names: Sequence[str] | None = None) -> str:
    """The schema's text saying what the kinds say. Only what differs is rewritten, in
    place: inside an object written one key a line, only the keys that differ (a new key
    after the others, a key no kind gives any more removed); the rest is kept as written."""
    schema = json.loads(text)
    wanted = {**schema["$defs"], **generated_defs(schema, frameworks() if names is None else names)}
    defs = re.search(r'^  "\$defs": ', text, re.MULTILINE)
    if defs is None:
        raise ValueError("the schema has no $defs")
    text = _splice(text, defs.end(), schema["$defs"], wanted, 4)
    if json.loads(text)["$defs"] != wanted:
        raise AssertionError("the rewritten schema does not say what the kinds say")  # pragma: no cover
    return text


def _splice(text: str, start: int, old: dict[str, Any], new: dict[str, Any], indent: int) -> str:
    """``text`` with the object written at ``start`` (saying ``old``, its keys at
    ``indent``) made to say ``new``."""
    kept = [k for k in old if k in new]
    if kept != [k for k in new if k in old] or not kept or not all(_key_span(text, start, k, indent) for k in old):
        return _rewrite(text, start, new, indent - 2)  # reordered, emptied, or not one key a line
    for key in [k for k in old if k not in new]:
        line_start, _, value_end = _key_span(text, start, key, indent)  # type: ignore[misc]
        comma = text.rfind(",", start, line_start)
        if comma != -1 and not text[comma + 1:line_start].strip():  # from the comma before it
            text = text[:comma] + text[value_end:]
        else:  # the first key: up to the next one
            following = _key_span(text, start, next(k for k in old if k in new), indent)
            text = text[:line_start] + text[following[0]:]  # type: ignore[index]
    previous = None
    for key, value in new.items():
        span = _key_span(text, start, key, indent)
        if span is None:
            text = _insert(text, start, previous, key, value, indent)
        elif old[key] != value:
            _, value_start, value_end = span
            if isinstance(old[key], dict) and isinstance(value, dict):
                text = _splice(text, value_start, old[key], value, indent + 2)
            else:
                text = text[:value_start] + _format(value, indent, _column(text, value_start)) + text[value_end:]
        previous = key
    return text


def _insert(text: str, start: int, previous: str | None, key: str, value: Any, indent: int) -> str:
    """``text`` with ``key`` added to the object at ``start``, after ``previous`` (first when None)."""
    prefix = f'{" " * indent}{json.dumps(key)}: '
    entry = prefix + _format(value, indent, len(prefix))
    if previous is None:
        return text[:start + 1] + "\n" + entry + "," + text[start + 1:]
    after = _key_span(text, start, previous, indent)[2]  # type: ignore[index]
    gap = "\n\n" if "\n\n" in text[start:_end(text, start)] else "\n"  # $defs: a blank line between entries
    return text[:after] + "," + gap + entry + text[after:]


def _key_span(text: str, start: int, key: str, indent: int) -> tuple[int, int, int] | None:
    """(where its line starts, its value starts, its value ends) of a key of the object at
    ``start`` written on a line of its own at ``indent``; None if it is not."""
    found = re.compile(rf'^ {{{indent}}}{re.escape(json.dumps(key))}: ', re.MULTILINE).search(
        text, start, _end(text, start))
    if found is None:
        return None
    return found.start(), found.end(), _end(text, found.end())


def _end(text: str, start: int) -> int:
    """Where the JSON value written at ``start`` ends."""
    return json.JSONDecoder().raw_decode(text, start)[1]


def _column(text: str, position: int) -> int:
    return position - text.rfind("\n", 0, position) - 1


def _rewrite(text: str, start: int, value: Any, indent: int) -> str:
    return text[:start] + _format(value, indent, _column(text, start)) + text[_end(text, start):]


def _format(value: Any, indent: int, column: int) -> str:
    """JSON as the schema file writes it: two spaces an indent, a value on one line when
    it fits in WIDTH columns from ``column`` (a list of plain values always)."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    plain_list = isinstance(value, list) and not any(isinstance(v, (list, dict)) for v in value)
    if not isinstance(value, (list, dict)) or plain_list or column + len(flat) + 1 <= WIDTH or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: " + _format(v, indent + 2, len(inner) + len(json.dumps(k)) + 2)
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [inner + _format(v, indent + 2, len(inner)) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.tools.schema", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the schema is up to date")
    args = parser.parse_args(argv)
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    names = stale(text)
    if args.check:
        print(f"{SCHEMA_FILE.name}: " + (f"out of date: {', '.join(names)}" if names else "up to date"))
        return 1 if names else 0
    if names:
        write_files({SCHEMA_FILE: updated(text)})
    print(f"{SCHEMA_FILE.name}: " + (f"rewrote {', '.join(names)}" if names else "up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
