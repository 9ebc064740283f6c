"""The results file: one record per (case, framework) item, plus the cases and the
environment. Format: ``docs/results-format.md``; schema: ``conformance/data/results.schema.json``.

The record of each item travels with its pytest report (``user_properties``), so under
pytest-xdist the controller receives every worker's records; the file is written once,
by the controller, atomically (temporary file + fsync + rename).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import platform
import stat
from pathlib import Path
from typing import Any, Iterable, Mapping, cast

from conformance import kinds
from conformance.ir import productions
from conformance.kinds.relations import aliasing_class
from conformance.layouts import production_layouts
from conformance.model import Case, FrameworkOverride, ResultKey

# re-exported: the plugin and the renderers take these from here
from conformance.outcomes import ERROR as ERROR
from conformance.outcomes import FAIL, KNOWN_DIVERGENCE, PASS, Outcome
from conformance.outcomes import OUTCOMES as OUTCOMES
from conformance.outcomes import SKIPPED as SKIPPED
from conformance.report import outputs
from conformance.report.outputs import error_text
from conformance.report.validate import Problem, Schema, brief, found, json_equal, plain_problems
from conformance.resultsmodel import (
    NO_BEHAVIOUR,
    Behaviour,
    CaseInfo,
    DocumentationInfo,
    Environment,
    ErrorSeen,
    Installation,
    OverrideInfo,
    PairClass,
    Production,
    ProductionSeen,
    Record,
    RecordedMismatch,
    RecordedStep,
    ResultsDocument,
    Run,
    StepError,
    VersionedOverride,
    WarningSeen,
    document_from_json,
    document_to_json,
    from_json,
    to_json,
)

RESULTS_FORMAT_VERSION = 2
RECORD_KEY = "conformance"  # the record's entry in a pytest report's user_properties


@dataclasses.dataclass(frozen=True)
class ItemReport:
    """What a case item's pytest report carries to the process that writes the results file
    (under pytest-xdist, the controller): its record, its case's information, and what its
    framework's process said about itself."""
    record: Record
    case_info: CaseInfo | None = None
    framework_env: Installation | None = None


def carried(item: ItemReport) -> tuple[str, str]:
    """The user_properties entry that carries an item's report: its JSON text, which
    pytest-xdist's channel (execnet) carries whatever it holds (execnet cannot send an int
    below -2**31, and an observed int64 value can be one)."""
    return RECORD_KEY, item_text(item)


def item_text(item: ItemReport) -> str:
    return json.dumps(to_json(item))


def item_from_text(text: str) -> ItemReport:
    return cast(ItemReport, from_json(ItemReport, json.loads(text)))


def record_of(report: Any) -> ItemReport | None:
    """What a pytest report carries (:data:`RECORD_KEY`), if anything."""
    for key, value in report.user_properties:
        if key == RECORD_KEY and isinstance(value, str):
            return item_from_text(value)
    return None


SCHEMA_FILE = Path(__file__).resolve().parent.parent / "data" / "results.schema.json"

REASON_LIMIT = 300


def short(text: str, limit: int = REASON_LIMIT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def outcome_record(case: Case, outcome: Outcome, nodeid: str = "") -> Record:
    """The record of one engine outcome."""
    result = outcome.verdict
    reason = outcome.reason.removeprefix("not applicable: ")
    if result == PASS and outcome.override_reason is not None:
        result, reason = KNOWN_DIVERGENCE, outcome.override_reason
    elif result == FAIL and outcome.mismatches:
        m = outcome.mismatches[0]
        more = f" (and {len(outcome.mismatches) - 1} more)" if len(outcome.mismatches) > 1 else ""
        reason = f"{m.what}: expected {_jsonable(m.expected)!s}, observed {_jsonable(m.observed)!s}{more}"
    return Record(
        nodeid=nodeid,
        case=case.id,
        framework=outcome.framework,
        outcome=result,
        reason=short(reason) if result != PASS else "",
        behaviour=behaviour(outcome),
        observed=observed_record(outcome.observed),
        unobservable=tuple(outcome.unobservable),
        mismatches=tuple(
            RecordedMismatch(what=m.what, expected=_jsonable(m.expected), observed=_jsonable(m.observed),
                           at=str(m.location) if m.location else None, step=m.step, detail=m.detail)
            for m in outcome.mismatches),
        steps=tuple(
            RecordedStep(number=s.number, text=s.text, status=s.status, warnings=tuple(s.warnings),
                       error=None if s.error is None else StepError(type=s.error.type, kind=s.error.kind,
                                                                     message=s.error.message[:2000]))
            for s in outcome.steps),
        observed_apart=tuple(outcome.observed_apart) or None,
    )


def unrun_record(case_id: str | None, framework: str | None, outcome: str, reason: str, nodeid: str = "") -> Record:
    """The record of an item the engine did not finish: skipped, crashed, invalid."""
    return Record(nodeid=nodeid, case=case_id, framework=framework, outcome=outcome, reason=short(reason),
                  behaviour=NO_BEHAVIOUR, observed={}, unobservable=(), mismatches=(), steps=())


def behaviour(outcome: Outcome) -> Behaviour:
    """What the framework did, in the suite's words: the aliasing class of each pair of
    names the case relates, the error raised (if any), the warnings, and the class of each
    production right after its step."""
    error = None
    for step in outcome.steps:
        if step.error is not None:
            error = ErrorSeen(at=step.number, kind=step.error.kind, type=step.error.type,
                              message=short(step.error.message, 500))
    return Behaviour(
        pairs=pair_classes(outcome.observed),
        error=error,
        warnings=tuple(WarningSeen(at=s.number, message=short(w, 300)) for s in outcome.steps for w in s.warnings),
        productions=tuple(ProductionSeen(step=p["step"], result=p["result"], input=p["input"], class_=p["class"])
                          for p in outcome.productions),
    )


def observed_record(observed: dict[ResultKey, Any]) -> dict[str, Any]:
    """``observed`` as the results file keeps it: each key in its text form (``values.y``)."""
    return {str(key): _jsonable(value) for key, value in observed.items()}


def pair_classes(observed: dict[ResultKey, Any]) -> tuple[PairClass, ...]:
    """The aliasing class of every pair with an observed aliasing relation
    (conformance.kinds.relations)."""
    pairs: dict[tuple[str, ...], dict[str, bool]] = {}
    for key, value in observed.items():
        if kinds.aliasing(key) and isinstance(value, bool):
            pairs.setdefault(key.names, {})[key.kind] = value
    return tuple(PairClass(a=a, b=b, class_=aliasing_class(rel), relations=dict(sorted(rel.items())))
                 for (a, b), rel in sorted(pairs.items()))


def case_info(case: Case) -> CaseInfo:
    """What the report needs to know about a case, independent of any framework."""
    # the steps as eager runs them: once per call, numbered on (Case.called), as the records are
    steps = case.called().steps
    layouts = production_layouts(case.given, steps)
    return CaseInfo(
        title=case.title,
        file=str(case.location.file),
        line=case.location.line,
        family=case.family,
        tags=tuple(case.tags),
        device=case.device,
        claims=dict(case.claims),
        references=tuple(case.references),
        operations=tuple(sorted(case.operations())),
        expect=expect_record(case),
        productions=tuple(Production(step=n, operation=op, result=r, input=i, layout=layouts[(n, i)])
                          for n, op, r, i in productions(steps)),
        overrides={fw: _override_info(o) for fw, o in sorted(case.overrides.items())},
        documentation={fw: DocumentationInfo(says=d.says, source=d.source, contradicts=d.contradicts)
                       for fw, d in sorted(case.documentation.items())},
        versioned={fw: tuple(VersionedOverride(reason=o.reason, not_applicable=o.not_applicable is not None,
                                               claims=dict(o.claims), versions=o.versions) for o in group)
                   for fw, group in sorted(case.versioned.items())} or None,
    )


def expect_record(case: Case) -> dict[str, Any]:
    """The shared expectation, by the keys records observe under (``values.y``,
    ``shares_memory.y.x``, ``error``): the expected value as the kind parsed it, plain data
    (an error or warning expectation as its fields, without its YAML position)."""
    out: dict[str, Any] = {}
    for kind, value in case.expect.checks.items():
        if isinstance(value, dict) and all(isinstance(k, tuple) for k in value):
            for names, expected in value.items():
                out[str(ResultKey(kind, tuple(names)))] = _plain(expected)
        else:
            out[kind] = _plain(value)
    return dict(sorted(out.items()))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "location"}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return _jsonable(value)


def _override_info(o: FrameworkOverride) -> OverrideInfo:
    return OverrideInfo(reason=o.reason, not_applicable=o.not_applicable is not None, claims=dict(o.claims))


def installation(said: Mapping[str, Any]) -> Installation:
    """What a framework's process said about itself (``{"version", "devices"}``, either
    possibly missing or None) as an installation."""
    devices = said.get("devices")
    return Installation(version=said.get("version"), devices=None if devices is None else tuple(devices))


def environment(frameworks: Mapping[str, Installation]) -> Environment:
    return Environment(
        python=platform.python_version(),
        implementation=platform.python_implementation(),
        os=platform.system(),
        machine=platform.machine(),
        platform=platform.platform(),
        frameworks=dict(frameworks),
    )


def results_document(records: Iterable[Record], cases: Mapping[str, CaseInfo],
                     frameworks: Mapping[str, Installation], claims: Mapping[str, str],
                     run: Run) -> ResultsDocument:
    return ResultsDocument(
        format=RESULTS_FORMAT_VERSION,
        environment=environment(frameworks),
        run=run,
        claims=dict(sorted(claims.items())),
        cases=dict(sorted(cases.items())),
        results=tuple(sorted(records, key=lambda r: r.nodeid)),
    )


def results_json(records: Iterable[dict[str, Any]], cases: Mapping[str, Any], frameworks: Mapping[str, Any],
                 claims: Mapping[str, str], run: dict[str, Any]) -> dict[str, Any]:
    """A results document from parts that are still JSON (a journal's lines, which anyone may
    have written): check it with :func:`results_problems` before reading it."""
    return {
        "format": RESULTS_FORMAT_VERSION,
        "environment": {**to_json(environment({})), "frameworks": dict(frameworks)},
        "run": run,
        "claims": dict(sorted(claims.items())),
        "cases": dict(sorted(cases.items())),
        "results": sorted(records, key=lambda r: str(r.get("nodeid"))),
    }


# ---- reading a results file: data from anyone (a pull request can change releases/*/*.json),
# so it is checked whole (schema, then what the renderers rely on) before any of it is used

MAX_RESULTS_BYTES = 256 * 2**20  # a full run of the corpus writes about 20 MB
MAX_DEPTH = 64  # arrays and objects inside each other; a results file nests about 40 deep
MAX_PROBLEMS = 20  # shown per file; the rest are counted
REMAKE = "conformance run"


class ResultsFileError(Exception):
    """A file that is not a results document this tool reads: one message per problem
    (:attr:`problems`, each naming the file), never a traceback."""

    def __init__(self, problems: str | list[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


@functools.lru_cache(maxsize=1)
def results_schema() -> Schema:
    """The shipped results schema, compiled (:mod:`conformance.report.validate`)."""
    return Schema(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def load_results(path: Path, *, remake: str = REMAKE) -> ResultsDocument:
    """Read a results file and check all of it: its format version, the schema
    (``conformance/data/results.schema.json``) and what the commands rely on beyond it.
    Raises :class:`ResultsFileError` with every problem (the first :data:`MAX_PROBLEMS`),
    each as ``FILE: JSON-PATH: what is there; expected what; how to fix it``. ``remake``:
    the command that writes such a file (``conformance matrix`` for a release's)."""
    fix = f"regenerate it with {remake}"
    text = _read_text(Path(path), remake)
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise ResultsFileError(f"{path}: cannot read results JSON: it nests too deeply to be read (results files "
                               f"nest at most {MAX_DEPTH} levels); {fix}") from None
    except ValueError as exc:
        reason = str(exc)
        if "integer string conversion" in reason:
            reason = "a number has more digits than can be read (at most 4,300)"
        raise ResultsFileError(f"{path}: cannot read results JSON: {reason}; {fix}") from None
    if not isinstance(data, dict):
        raise ResultsFileError(f"{path}: (the document): is {found(data)}; expected an object (a results document: "
                               "format, environment, run, claims, cases, results); " + fix)
    if "format" not in data:
        raise ResultsFileError(f"{path}: format: is missing, so this is no results file this tool wrote; expected "
                               f"{RESULTS_FORMAT_VERSION}; {fix}")
    if not json_equal(data["format"], RESULTS_FORMAT_VERSION):
        raise ResultsFileError(f"{path}: results format {brief(data['format'])}, this tool reads format "
                               f"{RESULTS_FORMAT_VERSION}; rerun the suite to regenerate it ({remake})")
    shown, total = results_problems(data, MAX_PROBLEMS)
    if total:
        lines = [f"{path}: {p.text()}; {fix}" for p in shown]
        if total > len(shown):
            lines.append(f"{path}: {total - len(shown)} more problem(s) not shown (the first {len(shown)} are above)")
        raise ResultsFileError(lines)
    return document_from_json(data)


def results_problems(data: Any, limit: int = MAX_PROBLEMS) -> tuple[list[Problem], int]:
    """The problems of a parsed results document (the first ``limit``) and their number:
    what no JSON document may hold here (:func:`~conformance.report.validate.plain_problems`),
    the schema's, then what the commands rely on that the schema cannot say."""
    shown, total, too_deep = plain_problems(data, MAX_DEPTH, limit)
    if too_deep:
        return shown, total  # the schema's walk (recursive) is not taken into what is too deep
    more, count = results_schema().problems(data, limit)
    shown, total = shown + more[:max(0, limit - len(shown))], total + count
    if not total:
        shown, total = _consistency_problems(data, limit)
    return shown, total


def _consistency_problems(data: dict[str, Any], limit: int) -> tuple[list[Problem], int]:
    """What the renderers rely on beyond the schema, for a document the schema accepts."""
    problems: list[Problem] = []
    for i, record in enumerate(data["results"]):
        for key, value in record["observed"].items():
            # a version counter's change is compared as a number (conformance.report.analysis)
            if key.startswith("version_change.") and not (
                    value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))):
                problems.append(Problem(("results", i, "observed", key), f"is {found(value)}",
                                        "a number or null (a version counter's change)"))
    return problems[:limit], len(problems)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (the results files write NaN and infinities as \"nan\", \"inf\", \"-inf\")")


def _read_text(path: Path, remake: str) -> str:
    """The file's text: a regular file (not a link, which could make a command read and quote
    another file; not a FIFO or device, which could block or never end), of at most
    :data:`MAX_RESULTS_BYTES`, in UTF-8."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError) as exc:
        raise ResultsFileError(f"{path}: cannot read results JSON: {error_text(exc)}") from None
    _check_kind(path, info)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as fh:
            _check_kind(path, os.fstat(fh.fileno()))  # what was opened, should it have been replaced
            raw = fh.read(MAX_RESULTS_BYTES + 1)
    except OSError as exc:
        raise ResultsFileError(f"{path}: cannot read results JSON: {error_text(exc)}") from None
    if len(raw) > MAX_RESULTS_BYTES:
        raise ResultsFileError(_too_large(path, len(raw)))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsFileError(f"{path}: cannot read results JSON: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                               f"offset {exc.start}); expected the UTF-8 JSON that {remake} writes; regenerate "
                               f"it with {remake}") from None


def _check_kind(path: Path, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise ResultsFileError(f"{path}: is a symbolic link; results files are read only as regular files (a link "
                               "could make a command read, and quote, any file it can reach): give the file it "
                               "points to, or a copy of it")
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else \
            "a device or socket"
        raise ResultsFileError(f"{path}: cannot read results JSON: it is {kind}, not a regular file; give a results "
                               "file (conformance run writes reports/results.json)")
    if info.st_size > MAX_RESULTS_BYTES:
        raise ResultsFileError(_too_large(path, info.st_size))


def _too_large(path: Path, size: int) -> str:
    return (f"{path}: cannot read results JSON: it is {size:,} bytes or more; results files are at most "
            f"{MAX_RESULTS_BYTES:,} bytes (a full run of the corpus writes about 20 MB)")


def results_text(document: ResultsDocument) -> str:
    """The results file's text for a results document."""
    return json.dumps(document_to_json(document), indent=1, sort_keys=True) + "\n"


def write_atomically(path: Path, document: ResultsDocument) -> str:
    """Write the results document; returns the text written."""
    text = results_text(document)
    write_text_atomically(path, text)
    return text


def write_text_atomically(path: Path, text: str) -> None:
    """Readers see the old file or the complete new one, never a torn one."""
    write_texts_atomically({path: text})


def write_texts_atomically(texts: dict[Path, str]) -> None:
    """Write every file to a temporary file beside it (fsync'd, mode ``0o666 & ~umask``)
    first, then move them all into place at once (:func:`conformance.report.outputs.commit`:
    a link at a file's place is replaced, never written through): a write that fails (a full
    disk) leaves every file as it was and no temporary file behind."""
    outputs.commit(stage_texts(texts))


def stage_texts(texts: dict[Path, str]) -> outputs.Staged:
    """The files written beside their places, not yet moved into them
    (:func:`conformance.report.outputs.stage`; :func:`conformance.report.outputs.commit`
    moves them, with others staged elsewhere, as one step)."""
    return outputs.stage(texts, temporary=_temporary_file)


def _temporary_file(path: Path) -> tuple[int, str]:
    return outputs.temporary_file(path)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:
        return "nan"  # JSON has no NaN; strict parsers refuse it
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)
