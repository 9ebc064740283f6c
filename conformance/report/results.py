"""The results file: one record per (case, framework) item, plus the cases and the
environment. Format: ``docs/results-format.md``; schema: ``conformance/data/results.schema.json``.

The record of each item travels with its pytest report (``user_properties``), so under
pytest-xdist the controller receives every worker's records; the file is written once,
by the controller, atomically (temporary file + fsync + rename).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any, Iterable, cast

from conformance import kinds
from conformance.ir import productions
from conformance.kinds.relations import aliasing_class
from conformance.model import Case, FrameworkOverride, ResultKey

# re-exported: the plugin and the renderers take these from here
from conformance.outcomes import ERROR as ERROR
from conformance.outcomes import FAIL, KNOWN_DIVERGENCE, PASS
from conformance.outcomes import OUTCOMES as OUTCOMES
from conformance.outcomes import SKIPPED as SKIPPED
from conformance.report.outputs import file_mode
from conformance.run.engine import Outcome

RESULTS_FORMAT_VERSION = 2
RECORD_KEY = "conformance"  # the record's entry in a pytest report's user_properties


def carried(record: dict[str, Any]) -> tuple[str, str]:
    """The user_properties entry that carries a record: its JSON text, which pytest-xdist's
    channel (execnet) carries whatever it holds (execnet cannot send an int below -2**31,
    and an observed int64 value can be one)."""
    return RECORD_KEY, json.dumps(record)


def record_of(report: Any) -> dict[str, Any] | None:
    """The results record a pytest report carries (:data:`RECORD_KEY`), if any."""
    for key, value in report.user_properties:
        if key == RECORD_KEY and isinstance(value, str):
            return cast(dict[str, Any], json.loads(value))
    return None
SCHEMA_FILE = Path(__file__).resolve().parent.parent / "data" / "results.schema.json"

REASON_LIMIT = 300


def short(text: str, limit: int = REASON_LIMIT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def outcome_record(case: Case, outcome: Outcome) -> dict[str, Any]:
    """The JSON record of one engine outcome."""
    result = outcome.verdict
    reason = outcome.reason.removeprefix("not applicable: ")
    if result == PASS and outcome.override_reason is not None:
        result, reason = KNOWN_DIVERGENCE, outcome.override_reason
    elif result == FAIL and outcome.mismatches:
        m = outcome.mismatches[0]
        more = f" (and {len(outcome.mismatches) - 1} more)" if len(outcome.mismatches) > 1 else ""
        reason = f"{m.what}: expected {_jsonable(m.expected)!s}, observed {_jsonable(m.observed)!s}{more}"
    return {
        "case": case.id,
        "framework": outcome.framework,
        "outcome": result,
        "reason": short(reason) if result != PASS else "",
        "behaviour": behaviour(outcome),
        "observed": observed_record(outcome.observed),
        "unobservable": list(outcome.unobservable),
        "mismatches": [
            {"what": m.what, "expected": _jsonable(m.expected), "observed": _jsonable(m.observed),
             "at": str(m.location) if m.location else None, "step": m.step, "detail": m.detail}
            for m in outcome.mismatches
        ],
        "steps": [
            {"number": s.number, "text": s.text, "status": s.status, "warnings": s.warnings,
             "error": None if s.error is None else {"type": s.error.type, "kind": s.error.kind,
                                                    "message": s.error.message[:2000]}}
            for s in outcome.steps
        ],
    }


def unrun_record(case_id: str | None, framework: str | None, outcome: str, reason: str) -> dict[str, Any]:
    """The record of an item the engine did not finish: skipped, crashed, invalid."""
    return {"case": case_id, "framework": framework, "outcome": outcome, "reason": short(reason),
            "behaviour": {"pairs": [], "error": None, "warnings": [], "productions": []}, "observed": {},
            "unobservable": [], "mismatches": [], "steps": []}


def behaviour(outcome: Outcome) -> dict[str, Any]:
    """What the framework did, in the suite's words: the aliasing class of each pair of
    names the case relates, the error raised (if any), the warnings, and the class of each
    production right after its step."""
    error = None
    for step in outcome.steps:
        if step.error is not None:
            error = {"at": step.number, "kind": step.error.kind, "type": step.error.type,
                     "message": short(step.error.message, 500)}
    return {
        "pairs": pair_classes(outcome.observed),
        "error": error,
        "warnings": [{"at": s.number, "message": short(w, 300)} for s in outcome.steps for w in s.warnings],
        "productions": [dict(p) for p in outcome.productions],
    }


def observed_record(observed: dict[ResultKey, Any]) -> dict[str, Any]:
    """``observed`` as the results file keeps it: each key in its text form (``values.y``)."""
    return {str(key): _jsonable(value) for key, value in observed.items()}


def pair_classes(observed: dict[ResultKey, Any]) -> list[dict[str, Any]]:
    """``[{"a", "b", "class", "relations"}]`` for every pair with an observed aliasing
    relation (conformance.kinds.relations)."""
    pairs: dict[tuple[str, ...], dict[str, bool]] = {}
    for key, value in observed.items():
        if kinds.aliasing(key) and isinstance(value, bool):
            pairs.setdefault(key.names, {})[key.kind] = value
    return [{"a": a, "b": b, "class": aliasing_class(rel), "relations": dict(sorted(rel.items()))}
            for (a, b), rel in sorted(pairs.items())]


def case_info(case: Case) -> dict[str, Any]:
    """What the report needs to know about a case, independent of any framework."""
    return {
        "title": case.title,
        "file": str(case.location.file),
        "line": case.location.line,
        "family": case.family,
        "tags": list(case.tags),
        "device": case.device,
        "claims": dict(case.claims),
        "references": list(case.references),
        "operations": sorted(case.operations()),
        "expect": expect_record(case),
        "productions": [{"step": n, "operation": op, "result": r, "input": i}
                        for n, op, r, i in productions(case.steps)],
        "overrides": {fw: _override_info(o) for fw, o in sorted(case.overrides.items())},
        "documentation": {
            fw: {"says": d.says, "source": d.source, "contradicts": d.contradicts}
            for fw, d in sorted(case.documentation.items())
        },
        **({"versioned": {fw: [dict(_override_info(o), versions=o.versions) for o in group]
                          for fw, group in sorted(case.versioned.items())}} if case.versioned else {}),
    }


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


def _override_info(o: FrameworkOverride) -> dict[str, Any]:
    return {"reason": o.reason, "not_applicable": o.not_applicable is not None, "claims": dict(o.claims)}


def environment(frameworks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": platform.system(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "frameworks": frameworks,
    }


def results_document(records: Iterable[dict[str, Any]], cases: dict[str, dict[str, Any]],
                     frameworks: dict[str, dict[str, Any]], claims: dict[str, str],
                     run: dict[str, Any]) -> dict[str, Any]:
    ordered = sorted(records, key=lambda r: (r["nodeid"]))
    return {
        "format": RESULTS_FORMAT_VERSION,
        "environment": environment(frameworks),
        "run": run,
        "claims": dict(sorted(claims.items())),
        "cases": dict(sorted(cases.items())),
        "results": ordered,
    }


def load_results(path: Path) -> dict[str, Any]:
    """Read a results file, refusing other format versions with a clear message."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsFileError(f"{path}: cannot read results JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT_VERSION:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ResultsFileError(f"{path}: results format {found!r}, this tool reads format "
                               f"{RESULTS_FORMAT_VERSION}; rerun the suite to regenerate it")
    return data


class ResultsFileError(Exception):
    pass


def results_text(data: dict[str, Any]) -> str:
    """The results file's text for a results document."""
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def write_atomically(path: Path, data: dict[str, Any]) -> str:
    """Write the results document; returns the text written."""
    text = results_text(data)
    write_text_atomically(path, text)
    return text


def write_text_atomically(path: Path, text: str) -> None:
    """Readers see the old file or the complete new one, never a torn one."""
    write_texts_atomically({path: text})


def write_texts_atomically(texts: dict[Path, str]) -> None:
    """Write every file to a temporary file beside it (fsync'd, mode ``0o666 & ~umask``)
    first, then move each into place: a write that fails (a full disk) leaves every file
    as it was and no temporary file behind."""
    mode = file_mode()
    written: list[tuple[str, Path]] = []
    try:
        for path, text in texts.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = _temporary_file(path)
            written.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
                os.fchmod(fh.fileno(), mode)  # mkstemp makes it 0600
        for tmp, path in written:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in written:
            Path(tmp).unlink(missing_ok=True)
        raise


def _temporary_file(path: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)


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
