"""The typed results model (conformance/resultsmodel.py) against the results schema
(conformance/data/results.schema.json), key by key, and JSON -> values -> JSON on real files."""

from __future__ import annotations

import collections.abc
import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any, Union

import pytest

from conformance import resultsmodel
from conformance.report.results import SCHEMA_FILE
from conformance.resultsmodel import ResultsDocument

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _nullable(node: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Whether the schema allows null here, and the schema of the non-null value."""
    node = _resolve(node)
    if "oneOf" in node:
        others = [_resolve(n) for n in node["oneOf"] if _resolve(n).get("type") != "null"]
        assert len(others) == 1, node
        return len(others) < len(node["oneOf"]), others[0]
    kinds = node.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        rest = [k for k in kinds if k != "null"]
        return True, {**node, "type": rest[0] if len(rest) == 1 else rest}
    return False, node


def _strip_optional(kind: Any) -> tuple[bool, Any]:
    if typing.get_origin(kind) in (Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if len(args) < len(typing.get_args(kind)):
            assert len(args) == 1, kind
            return True, args[0]
    return False, kind


def _walk(kind: Any, node: dict[str, Any], where: str, seen: set[type]) -> None:
    """Check ``kind`` (an annotation) against the schema ``node``, recursively."""
    node = _resolve(node)
    if dataclasses.is_dataclass(kind):
        assert isinstance(kind, type)
        seen.add(kind)
        assert node.get("type") == "object", f"{where}: {kind.__name__} is an object, the schema says {node}"
        fields = resultsmodel.fields_of(kind)
        props = node["properties"]
        assert set(fields) == set(props), (
            f"{where} ({kind.__name__}): fields without a schema key {sorted(set(fields) - set(props))}, "
            f"schema keys without a field {sorted(set(props) - set(fields))}")
        required = set(node.get("required", ()))
        hints = typing.get_type_hints(kind)
        for key, f in fields.items():
            optional_field = f.default is None
            assert optional_field == (key not in required), (
                f"{where}.{key}: the schema has it {'optional' if key not in required else 'required'}; the field "
                f"{'has' if optional_field else 'has no'} default None")
            nullable, inner_node = _nullable(props[key])
            none_typed, inner_kind = _strip_optional(hints[f.name])
            # an optional key is None when absent, so its annotation allows None whatever the schema says
            assert none_typed == (nullable or optional_field), (
                f"{where}.{key}: None in the annotation {hints[f.name]} but null "
                f"{'allowed' if nullable else 'not allowed'} by the schema")
            if nullable and optional_field:
                assert (kind.__name__, f.name) in resultsmodel.WRITTEN_WHEN_NONE, \
                    f"{where}.{key}: optional and nullable: say in WRITTEN_WHEN_NONE how None is written"
            _walk(inner_kind, inner_node, f"{where}.{key}", seen)
        return
    origin = typing.get_origin(kind)
    if origin is tuple:
        assert node.get("type") == "array", f"{where}: a tuple, the schema says {node}"
        _walk(typing.get_args(kind)[0], node.get("items", {}), f"{where}[]", seen)
    elif origin in (collections.abc.Mapping, dict):
        assert node.get("type") == "object" and "properties" not in node, f"{where}: a mapping, the schema says {node}"
        _walk(typing.get_args(kind)[1], node.get("additionalProperties", {}), f"{where}{{}}", seen)
    else:
        kinds = node.get("type")
        expected = {str: "string", int: "integer", float: "number", bool: "boolean"}.get(kind)
        if expected is not None and kinds is not None:
            allowed = kinds if isinstance(kinds, list) else [kinds]
            assert expected in allowed, f"{where}: {kind} but the schema says {kinds}"


def test_every_class_matches_its_schema_object_key_by_key() -> None:
    seen: set[type] = set()
    _walk(ResultsDocument, SCHEMA, "(document)", seen)
    defined = {c for c in vars(resultsmodel).values()
               if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == resultsmodel.__name__}
    assert defined == seen, f"classes no schema object describes: {sorted(c.__name__ for c in defined - seen)}"


@pytest.mark.parametrize("path", sorted((ROOT / "releases").glob("*/*.json"))[:2], ids=lambda p: p.name)
def test_a_real_results_file_comes_back_as_it_was(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    document = resultsmodel.document_from_json(data)
    assert resultsmodel.document_to_json(document) == data
    record = document.results[0]
    assert isinstance(record.behaviour.pairs, tuple) and record.nodeid == data["results"][0]["nodeid"]


def test_an_absent_optional_key_stays_absent_and_a_written_null_stays_written() -> None:
    run = resultsmodel.from_json(resultsmodel.Run, {
        "items": 0, "exit_status": 0,
        "release": {"framework": "numpy", "package": "numpy", "version": "2.0", "installed": None}})
    assert run.partial is None and run.release.installed is None
    assert resultsmodel.to_json(run) == {
        "items": 0, "exit_status": 0,
        "release": {"framework": "numpy", "package": "numpy", "version": "2.0", "installed": None}}


def test_class_is_the_json_key_of_class_() -> None:
    pair = resultsmodel.from_json(resultsmodel.PairClass, {"a": "y", "b": "x", "class": "view",
                                                           "relations": {"shares_memory": True}})
    assert pair.class_ == "view"
    assert resultsmodel.to_json(pair)["class"] == "view"
