"""conformance/data/case.schema.json, the JSON Schema of a case file, agrees with the
loader (the reference): fixtures the loader accepts, the schema accepts; fixtures that
break one structural rule, both refuse; the corpus passes the schema; and the schema's
enums and key lists are the loader's and the model's constants, so that a key added to
the loader without the schema fails here.

The schema checks structure only. Whether an operation exists, a name is defined before
use, step text parses or a claim ID exists is the loader's job (tested in test_loader.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from conformance import kinds, registry
from conformance.load import inputs, overrides, steplist, steps
from conformance.load import reader as loader
from conformance.load.reader import load_file
from conformance.model import CLAIM_STANCES, DTYPES, ERROR_KINDS
from conformance.tools import schema as schema_tool

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "conformance" / "data" / "case.schema.json"
FIXTURES = Path(__file__).resolve().parent / "schema_fixtures"
VALID = sorted((FIXTURES / "valid").glob("*.yaml"))
INVALID = sorted((FIXTURES / "invalid").glob("*.yaml"))
CORPUS = sorted((ROOT / "cases").rglob("*.yaml"))
BUILTIN_FRAMEWORKS = list(registry.BUILTIN)


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem if p.is_relative_to(FIXTURES) else str(p.relative_to(ROOT)) for p in paths]


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator() -> Any:
    cls = jsonschema.Draft202012Validator
    # FORMAT_CHECKER makes 'format: regex' an assertion (re.compile), as the loader checks.
    # The schema for the registered frameworks: the shipped file where only the built-ins are
    # (test_schema_names_the_builtin_frameworks_of_the_registry).
    return cls(registry.case_schema(), format_checker=cls.FORMAT_CHECKER)


@pytest.fixture(scope="module")
def vocabulary() -> loader.Vocabulary:
    return registry.vocabulary()


class _TextKeysLoader(yaml.SafeLoader):
    """``yaml.safe_load``, except that a mapping key is the text written, as the suite's
    reader (conformance/yamlvalues/yamlsrc.py) and YAML 1.2 editors read it: under plain safe_load a
    tensor named ``on`` or ``no`` would be the key True / False, which a schema's
    ``propertyNames`` does not check."""


def _construct_mapping(reader: _TextKeysLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    reader.flatten_mapping(node)
    return {(k.value if isinstance(k, yaml.ScalarNode) else reader.construct_object(k, deep=True)):
            reader.construct_object(v, deep=True) for k, v in node.value}


_TextKeysLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


def read_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_TextKeysLoader)  # a SafeLoader


def schema_errors(validator: Any, path: Path) -> list[Any]:
    return list(validator.iter_errors(read_yaml(path)))


def header(path: Path, key: str) -> str:
    """The value of a leading '# key: value' comment line."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        m = re.match(rf"#\s*{key}:\s?(.*)$", line)
        if m:
            return m.group(1).strip()
    raise AssertionError(f"{path.name}: no '# {key}: ...' line at the top")


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def test_schema_is_a_valid_draft_2020_12_schema(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"]
    jsonschema.Draft202012Validator.check_schema(schema)


def test_there_are_fixtures() -> None:
    assert len(VALID) >= 5
    assert len(INVALID) >= 20


@pytest.mark.parametrize("path", VALID, ids=_ids(VALID))
def test_valid_fixture_passes_schema_and_loader(path: Path, validator: Any, vocabulary: loader.Vocabulary) -> None:
    assert [f"{e.json_path}: {e.message}" for e in schema_errors(validator, path)] == []
    result = load_file(path, vocabulary)
    assert [e.render() for _, e in result.errors] == []
    assert result.cases


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def test_valid_fixtures_use_every_key_of_the_format() -> None:
    docs = [read_yaml(p) for p in VALID]
    used = {k for doc in docs for k in _keys(doc)}
    keys = (set(loader.CASE_KEYS) | set(inputs.TENSOR_KEYS) | set(overrides.OVERRIDE_KEYS) | set(steps.BLOCKS)
            | set(kinds.names()) | {"at", "kind", "type", "match"})
    assert sorted(keys - used) == []
    # a framework's name is a key of the format's framework-keyed mappings, all with one
    # definition (test_schema_names_the_builtin_frameworks_of_the_registry): some are used
    assert set(BUILTIN_FRAMEWORKS) & used
    devices = {case.get("device", "cpu") for doc in docs for case in doc["cases"]}
    assert sorted(set(loader.DEVICES) - devices) == []


@pytest.mark.parametrize("path", INVALID, ids=_ids(INVALID))
def test_invalid_fixture_fails_schema_and_loader(path: Path, validator: Any, vocabulary: loader.Vocabulary) -> None:
    expected_message = header(path, "expect")
    expected_path = header(path, "schema")
    result = load_file(path, vocabulary)
    messages = [e.render() for _, e in result.errors]
    assert len(messages) == 1 and expected_message in messages[0], messages
    assert not result.cases
    errors = schema_errors(validator, path)
    assert errors, "the schema accepts a file the loader refuses"
    # The schema refuses it at the place the fixture breaks (the '# schema:' JSON path), and
    # nowhere else: every error is at or under that path.
    paths = sorted({e.json_path for e in errors})
    assert all(_under(p, expected_path) for p in paths), paths


@pytest.mark.parametrize("path", CORPUS, ids=_ids(CORPUS))
def test_corpus_file_passes_schema(path: Path, validator: Any) -> None:
    assert [f"{e.json_path}: {e.message}" for e in schema_errors(validator, path)] == []


# ---- the schema's enums and key lists are the loader's and the model's


def test_top_level_keys(schema: dict[str, Any]) -> None:
    assert schema["required"] == ["cases"]
    assert list(schema["properties"]) == ["cases"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["cases"]["minItems"] == 1


def test_case_keys_and_patterns(schema: dict[str, Any]) -> None:
    case = schema["$defs"]["case"]
    assert tuple(case["properties"]) == loader.CASE_KEYS
    assert tuple(case["required"]) == loader.REQUIRED_CASE_KEYS
    assert case["additionalProperties"] is False
    assert case["properties"]["id"]["pattern"] == loader.ID_PATTERN.pattern
    assert tuple(case["properties"]["device"]["enum"]) == loader.DEVICES
    assert case["properties"]["device"]["default"] == loader.DEVICES[0]
    assert case["properties"]["given"]["propertyNames"]["pattern"] == inputs.NAME_PATTERN.pattern
    assert list(case["properties"]["frameworks"]["properties"]) == BUILTIN_FRAMEWORKS


def test_claims(schema: dict[str, Any]) -> None:
    defs = schema["$defs"]
    assert defs["claims"]["propertyNames"]["pattern"] == overrides.CLAIM_PATTERN.pattern
    assert tuple(defs["stance"]["enum"]) == CLAIM_STANCES


def test_tensor_spec(schema: dict[str, Any]) -> None:
    tensor = schema["$defs"]["tensorMapping"]
    assert tuple(tensor["properties"]) == inputs.TENSOR_KEYS
    assert tensor["additionalProperties"] is False
    assert tuple(tensor["properties"]["type"]["enum"]) == inputs.TENSOR_TYPES
    assert tuple(schema["$defs"]["dtype"]["enum"]) == DTYPES
    complex_dtypes = [d for d in DTYPES if d.startswith("complex")]
    assert [c["then"]["properties"]["dtype"]["enum"] for c in tensor["allOf"]
            if "dtype" in c["then"].get("properties", {})] == [complex_dtypes]


def test_steps(schema: dict[str, Any]) -> None:
    defs = schema["$defs"]
    assert tuple(defs["block"]["properties"]) == steps.BLOCKS
    assert defs["block"]["additionalProperties"] is False
    assert defs["stepList"]["maxItems"] == steplist.MAX_STEPS
    assert defs["statement"]["maxLength"] == steps.MAX_STEP_CHARS


def test_the_expect_part_is_the_kinds_schema() -> None:
    # $defs/expectation's properties and the $defs the kinds use are generated from the
    # assertion kinds (conformance regen writes them): the file says what they say
    assert schema_tool.stale(SCHEMA_FILE.read_text(encoding="utf-8")) == []


def test_expectation_keys(schema: dict[str, Any]) -> None:
    expectation = schema["$defs"]["expectation"]
    assert tuple(expectation["properties"]) == kinds.names()
    assert expectation["additionalProperties"] is False
    for kind in kinds.KINDS:
        if kind.arity == 2:
            assert expectation["properties"][kind.name]["$ref"] == "#/$defs/pairs"
    assert tuple(schema["$defs"]["errorKind"]["enum"]) == tuple(ERROR_KINDS)
    error = schema["$defs"]["error"]
    assert list(error["properties"]) == ["at", "kind"] + BUILTIN_FRAMEWORKS
    assert list(schema["$defs"]["errorDetail"]["properties"]) == ["type", "match"]
    assert list(schema["$defs"]["warning"]["properties"]) == ["at", "match"]


def test_override_keys(schema: dict[str, Any]) -> None:
    assert schema["$defs"]["override"]["anyOf"][0] == {"$ref": "#/$defs/overrideEntry"}  # or a list of them
    override = schema["$defs"]["overrideEntry"]
    assert tuple(override["properties"]) == overrides.OVERRIDE_KEYS
    assert override["additionalProperties"] is False


def test_frameworks_are_the_builtin_adapters() -> None:
    # The schema names the built-in frameworks; the loader's default vocabulary is the same.
    assert tuple(BUILTIN_FRAMEWORKS) == tuple(loader.Vocabulary().frameworks)


def test_schema_names_the_builtin_frameworks_of_the_registry(schema: dict[str, Any]) -> None:
    # every mapping keyed by framework name lists the registry's built-ins, in its order,
    # each with the same definition; registry.case_schema() puts the registered frameworks
    # there (test_registry.py, test_extra_adapter.py)
    keyed = [schema["$defs"]["case"]["properties"]["frameworks"]["properties"], schema["$defs"]["error"]["properties"]]
    for properties in keyed:
        assert [k for k in properties if k in BUILTIN_FRAMEWORKS] == BUILTIN_FRAMEWORKS, (
            "list every built-in framework (registry.BUILTIN), in its order, in this mapping of "
            "conformance/data/case.schema.json")
        assert len({json.dumps(properties[name]) for name in BUILTIN_FRAMEWORKS}) == 1
    assert registry.case_schema() == schema


def test_the_framework_keyed_mappings_are_the_ones_that_list_a_framework(schema: dict[str, Any]) -> None:
    """registry.FRAMEWORK_KEYED finds them by place (conformance regen rewrites them there):
    every mapping with a framework's name among its keys is one of them, and no other."""
    found = set()

    def visit(node: Any, pointer: str) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict) and set(node["properties"]) & set(BUILTIN_FRAMEWORKS):
                found.add(pointer)
            for key, value in node.items():
                visit(value, f"{pointer}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                visit(value, f"{pointer}/{index}")

    visit(schema, "")
    assert found == set(registry.FRAMEWORK_KEYED)
    for pointer, fixed in registry.FRAMEWORK_KEYED.items():
        node = schema
        for part in pointer.strip("/").split("/"):
            node = node[part]
        assert list(node["properties"]) == [*fixed, *BUILTIN_FRAMEWORKS]


def test_modeline_path_from_a_case_file_reaches_the_schema() -> None:
    # A case file under cases/<family>/ points editors at the schema with
    #   # yaml-language-server: $schema=../../conformance/data/case.schema.json
    family_dir = ROOT / "cases" / "views"
    assert (family_dir / "../../conformance/data/case.schema.json").resolve() == SCHEMA_FILE.resolve()
