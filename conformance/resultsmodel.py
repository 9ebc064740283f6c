"""The results file as typed values: the document, its environment and run, each case's
information and each item's record, as frozen dataclasses. The one reader
(:func:`conformance.report.results.load_results`: the schema first, then :func:`document_from_json`)
and the one writer (:func:`document_to_json`) go through here, so a field renamed in one place
and not the other is a type error or a failing schema test (``tests/test_results_model.py``
checks these classes against ``conformance/data/results.schema.json`` key by key), never a
``.get`` that quietly returns ``None``.

Each class's fields are its JSON object's keys (``class_`` is ``class``). A field whose default
is ``None`` is a key the schema leaves optional: absent from the JSON when ``None``, except
where :data:`WRITTEN_WHEN_NONE` says ``null`` is what is written. Values the results keep as
plain JSON (an observed value, an expectation) are :data:`JSON`.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Mapping, Union

JSON = Any  # a JSON value as json.loads gives it: what the results keep without a type of their own

# the JSON key of a field whose name is a Python keyword
_JSON_KEY = {"class_": "class"}
# optional keys written as null rather than left out when there is nothing to say
WRITTEN_WHEN_NONE = frozenset({("Release", "installed")})


# ---- the environment and the run

@dataclass(frozen=True)
class Installation:
    """A framework as the run found it installed."""
    version: str | None  # None: not installed
    devices: tuple[str, ...] | None  # None: the framework was not loaded in this run


@dataclass(frozen=True)
class Environment:
    python: str
    implementation: str
    os: str
    machine: str
    platform: str
    frameworks: Mapping[str, Installation]


@dataclass(frozen=True)
class Commit:
    sha: str
    modified: bool


@dataclass(frozen=True)
class MergedFile:
    """One of the files ``conformance merge`` joined."""
    file: str
    items: int
    shard: tuple[int, ...] | None = None
    platform: str | None = None
    python: str | None = None


@dataclass(frozen=True)
class Release:
    """The framework release a ``conformance matrix`` run's environment was made for."""
    framework: str
    package: str
    version: str
    installed: str | None = None  # None: the framework could not be set up (written as null)
    error: str | None = None


@dataclass(frozen=True)
class Run:
    items: int
    exit_status: int
    reused: int | None = None
    partial: tuple[str, ...] | None = None  # None: a full run of the corpus
    corpus: str | None = None
    corpus_items: int | None = None
    shard: tuple[int, ...] | None = None
    date: str | None = None
    commit: Commit | None = None
    merged_from: tuple[MergedFile, ...] | None = None
    release: Release | None = None


# ---- what the results know about a case

@dataclass(frozen=True)
class Production:
    """A step ``result = operation(input, ...)`` whose names keep their binding to the end."""
    step: int
    operation: str
    result: str
    input: str
    # the input's layout as the steps make it (conformance.layouts: contiguous, transposed, ...);
    # None: a file written before it was recorded
    layout: str | None = None


@dataclass(frozen=True)
class OverrideInfo:
    reason: str
    not_applicable: bool
    claims: Mapping[str, str]


@dataclass(frozen=True)
class VersionedOverride(OverrideInfo):
    """An override that holds for some of the framework's releases only."""
    versions: str  # a PEP 440 specifier set


@dataclass(frozen=True)
class DocumentationInfo:
    """Where a framework's documentation says otherwise than the case measures."""
    says: str
    source: str
    contradicts: str


@dataclass(frozen=True)
class CaseInfo:
    title: str
    file: str
    line: int
    family: str
    tags: tuple[str, ...]
    device: str
    claims: Mapping[str, str]
    references: tuple[str, ...]
    operations: tuple[str, ...]
    productions: tuple[Production, ...]
    overrides: Mapping[str, OverrideInfo]
    expect: Mapping[str, JSON] | None = None  # None: a file written before it was recorded
    documentation: Mapping[str, DocumentationInfo] | None = None
    versioned: Mapping[str, tuple[VersionedOverride, ...]] | None = None


# ---- an item's record

@dataclass(frozen=True)
class ErrorSeen:
    """The error a step raised, in the behaviour summary."""
    at: int
    kind: str
    type: str
    message: str


@dataclass(frozen=True)
class PairClass:
    a: str
    b: str
    class_: str
    relations: Mapping[str, bool]


@dataclass(frozen=True)
class WarningSeen:
    at: int
    message: str


@dataclass(frozen=True)
class ProductionSeen:
    step: int
    result: str
    input: str
    class_: str


@dataclass(frozen=True)
class Behaviour:
    pairs: tuple[PairClass, ...]
    error: ErrorSeen | None
    warnings: tuple[WarningSeen, ...]
    productions: tuple[ProductionSeen, ...] | None = None  # None: a file written before it was recorded


@dataclass(frozen=True)
class Crash:
    reason: str
    culprit: tuple[str, ...] | None
    tried: tuple[tuple[str, ...], ...]
    text: str


@dataclass(frozen=True)
class RecordedMismatch:
    what: str
    expected: JSON
    observed: JSON
    at: str | None
    step: int | None
    detail: str


@dataclass(frozen=True)
class StepError:
    type: str
    kind: str
    message: str


@dataclass(frozen=True)
class RecordedStep:
    number: int
    text: str
    status: str
    warnings: tuple[str, ...]
    error: StepError | None


@dataclass(frozen=True)
class Record:
    """One (case, framework) item's record."""
    nodeid: str
    case: str | None
    framework: str | None  # None: a case file or case that could not be loaded
    outcome: str
    reason: str
    behaviour: Behaviour
    observed: Mapping[str, JSON]
    unobservable: tuple[str, ...]
    mismatches: tuple[RecordedMismatch, ...]
    steps: tuple[RecordedStep, ...]
    duration_s: float | None = None
    reused: bool | None = None
    crash: Crash | None = None
    file: str | None = None
    line: int | None = None
    observed_apart: tuple[str, ...] | None = None

    @property
    def item(self) -> tuple[str | None, str | None]:
        return self.case, self.framework


@dataclass(frozen=True)
class ResultsDocument:
    format: int
    environment: Environment
    run: Run
    claims: Mapping[str, str]
    cases: Mapping[str, CaseInfo]
    results: tuple[Record, ...]


NO_BEHAVIOUR = Behaviour(pairs=(), error=None, warnings=(), productions=())
NOT_INSTALLED = Installation(version=None, devices=None)  # nothing known of a framework


# ---- JSON <-> values, driven by the classes' annotations

def document_from_json(data: Mapping[str, Any]) -> ResultsDocument:
    """The typed document of a results document the schema accepted
    (:func:`conformance.report.results.load_results` checks it first)."""
    return typing.cast(ResultsDocument, from_json(ResultsDocument, data))


def document_to_json(document: ResultsDocument) -> dict[str, Any]:
    """The JSON value of a document, as the results file writes it."""
    return typing.cast(dict[str, Any], to_json(document))


def record_from_json(data: Mapping[str, Any]) -> Record:
    return typing.cast(Record, from_json(Record, data))


def from_json(kind: Any, value: Any) -> Any:
    """``value`` (JSON of the schema's shape) as a ``kind``: a class above, a container of them,
    or plain JSON."""
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = _hints(kind)
        given = {}
        for f in dataclasses.fields(kind):
            key = _JSON_KEY.get(f.name, f.name)
            if key in value:
                given[f.name] = from_json(hints[f.name], value[key])
        return kind(**given)
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        if value is None:
            return None
        (inner,) = [a for a in typing.get_args(kind) if a is not type(None)]
        return from_json(inner, value)
    if origin is tuple:
        inner = typing.get_args(kind)[0]
        return tuple(from_json(inner, v) for v in value)
    if origin in (collections.abc.Mapping, dict):
        inner = typing.get_args(kind)[1]
        return {k: from_json(inner, v) for k, v in value.items()}
    return value


def to_json(value: Any) -> Any:
    """The JSON value of one of the classes above (or a container of them)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if item is None and f.default is None and (name, f.name) not in WRITTEN_WHEN_NONE:
                continue
            out[_JSON_KEY.get(f.name, f.name)] = to_json(item)
        return out
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    return value


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def json_key(name: str) -> str:
    """The JSON key of a field."""
    return _JSON_KEY.get(name, name)


def fields_of(kind: type) -> dict[str, dataclasses.Field[Any]]:
    """A class's fields by their JSON key."""
    return {json_key(f.name): f for f in dataclasses.fields(kind)}

