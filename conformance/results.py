"""Outcomes as JSON-ready records, and the results file.

The record of each item travels with its pytest report (``user_properties``), so under
pytest-xdist the controller receives every worker's records; the file is written once,
by the controller, atomically (temporary file + rename).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

from conformance.engine import Outcome

RESULTS_FORMAT_VERSION = 1
RECORD_KEY = "conformance"


def outcome_record(outcome: Outcome) -> dict[str, Any]:
    return {
        "verdict": outcome.verdict,
        "reason": outcome.reason,
        "override_reason": outcome.override_reason,
        "observed": _jsonable(outcome.observed),
        "unobservable": outcome.unobservable,
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


def environment(frameworks: dict[str, str | None]) -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "frameworks": frameworks,
        "argv": sys.argv[1:],
    }


def write_atomically(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)
