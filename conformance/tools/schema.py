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

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "data" / "case.schema.json"
WIDTH = 120  # a value is written on one line when it fits


def frameworks() -> list[str]:
    """The frameworks the schema names: the built-in ones."""
    from conformance import registry

    return list(registry.BUILTIN)


def generated_defs(schema: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The ``$defs`` entries the kinds make: ``expectation`` (the hand-written one with
    the kinds' properties) and each def a kind adds."""
    properties, defs = kinds.schema(names)
    expectation = dict(schema["$defs"]["expectation"])
    expectation["properties"] = properties
    return {"expectation": expectation, **defs}


def stale(text: str, names: Sequence[str] | None = None) -> list[str]:
    """The ``$defs`` entries of a schema's text that differ from the kinds'."""
    schema = json.loads(text)
    wanted = generated_defs(schema, frameworks() if names is None else names)
    return [name for name, value in wanted.items() if schema["$defs"].get(name) != value]


def updated(text: str, names: Sequence[str] | None = None) -> str:
    """The schema's text with every stale entry rewritten (or added)."""
    schema = json.loads(text)
    wanted = generated_defs(schema, frameworks() if names is None else names)
    for name in stale(text, names):
        entry = f'    "{name}": ' + _format(wanted[name], 4, len(f'    "{name}": '))
        span = _entry_span(text, name)
        if span is None:  # a new def: after the last one
            last = list(schema["$defs"])[-1]
            end = _entry_span(text, last)[1]  # type: ignore[index]
            text = text[:end] + ",\n\n" + entry + text[end:]
        else:
            text = text[:span[0]] + entry + text[span[1]:]
    if json.loads(text)["$defs"] != {**schema["$defs"], **wanted}:
        raise AssertionError("the rewritten schema does not say what the kinds say")  # pragma: no cover
    return text


def _entry_span(text: str, name: str) -> tuple[int, int] | None:
    """Where ``$defs/<name>`` is written: from its key to its closing brace (an entry of
    ``$defs`` starts at an indent of four spaces)."""
    start = re.search(rf'^    "{re.escape(name)}": ', text, re.MULTILINE)
    if start is None:
        return None
    decoder = json.JSONDecoder()
    _, end = decoder.raw_decode(text, start.end())
    return start.start(), end


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
        SCHEMA_FILE.write_text(updated(text), encoding="utf-8")
    print(f"{SCHEMA_FILE.name}: " + (f"rewrote {', '.join(names)}" if names else "up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
