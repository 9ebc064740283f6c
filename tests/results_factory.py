"""Hand-made results documents (format 2) for testing the report and the diff without
running any framework."""

from __future__ import annotations

import copy
from typing import Any

from conformance.report.results import RESULTS_FORMAT_VERSION
from conformance.resultsmodel import ResultsDocument, document_from_json

FRAMEWORKS = ("torch", "paddle", "numpy")


def case_info(case_id: str, *, claims: dict[str, str] | None = None, overrides: dict[str, Any] | None = None,
              productions: list[dict[str, Any]] | None = None, line: int = 1) -> dict[str, Any]:
    family = case_id.split(".", 1)[0]
    return {"title": f"title of {case_id}", "file": f"cases/{family}/c.yaml", "line": line, "family": family,
            "tags": [family], "device": "cpu", "claims": claims or {}, "references": ["https://example.org/doc"],
            "operations": ["method:reshape"], "productions": productions or [], "overrides": overrides or {}}


def record(case_id: str, framework: str, outcome: str = "pass", *, pairs: dict[tuple[str, str], str] | None = None,
           error: tuple[int, str, str] | None = None, observed: dict[str, Any] | None = None,
           reason: str = "") -> dict[str, Any]:
    relation = {"view": {"shares_memory": True}, "copy": {"shares_memory": False},
                "same_object": {"same_object": True}}
    pair_list = [{"a": a, "b": b, "class": cls, "relations": relation[cls]} for (a, b), cls in (pairs or {}).items()]
    obs = dict(observed or {})
    for p in pair_list:
        for rel, value in p["relations"].items():
            obs[f"{rel}.{p['a']}.{p['b']}"] = value
    err = None if error is None else {"at": error[0], "kind": error[1], "type": error[2], "message": "boom"}
    return {"nodeid": f"cases/x.yaml::{case_id}[{framework}]", "case": case_id, "framework": framework,
            "outcome": outcome, "reason": (reason or f"the {outcome} of this record") if outcome != "pass" else "",
            "behaviour": {"pairs": pair_list, "error": err, "warnings": []}, "observed": obs, "unobservable": [],
            "mismatches": [], "steps": [], "duration_s": 0.001}


def document(cases: dict[str, dict[str, Any]], records: list[dict[str, Any]],
             claims: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "format": RESULTS_FORMAT_VERSION,
        "environment": {"python": "3.11.7", "implementation": "CPython", "os": "Linux", "machine": "x86_64",
                        "platform": "Linux-test", "frameworks": {
                            "torch": {"version": "2.13.0", "devices": ["cpu"]},
                            "paddle": {"version": "3.3.1", "devices": ["cpu"]},
                            "numpy": {"version": "2.4.6", "devices": ["cpu"]}}},
        "run": {"items": len(records), "exit_status": 0},
        "claims": claims or {},
        "cases": cases,
        "results": sorted(records, key=lambda r: r["nodeid"]),
    }


def sample() -> dict[str, Any]:
    """Three cases: one where all agree, one known divergence (Paddle copies), one failure."""
    prod = [{"step": 1, "operation": "method:reshape", "result": "y", "input": "x"}]
    cases = {
        "views.reshape.agree": case_info("views.reshape.agree", claims={"S3-03": "holds"}, productions=prod),
        "views.expand.paddle_copies": case_info(
            "views.expand.paddle_copies", claims={"S3-03": "holds"}, line=20,
            productions=[{"step": 1, "operation": "method:expand", "result": "y", "input": "x"}],
            overrides={"paddle": {"reason": "Paddle's expand copies", "not_applicable": False,
                                  "claims": {"S3-03": "does_not_hold"}}}),
        "copies.clone.broken": case_info("copies.clone.broken", claims={"S3-07": "does_not_hold"}),
    }
    records = []
    for fw in FRAMEWORKS:
        records.append(record("views.reshape.agree", fw, pairs={("y", "x"): "view"}, observed={"values.y": [1.0]}))
        cls, outcome = ("copy", "known_divergence") if fw == "paddle" else ("view", "pass")
        records.append(record("views.expand.paddle_copies", fw, outcome, pairs={("y", "x"): cls},
                              reason="Paddle's expand copies"))
        if fw == "numpy":
            records.append(record("copies.clone.broken", fw, "not_applicable", reason="NumPy has no clone"))
        else:
            outcome = "fail" if fw == "torch" else "pass"
            records.append(record("copies.clone.broken", fw, outcome, pairs={("y", "x"): "copy"},
                                  reason="values of y: expected [2.0], observed [1.0]"))
    claims = {"S3-03": "`view()` changes shape but shares memory.", "S3-07": "Selection shares memory.",
              "S4-01": "Three kinds of op."}
    return document(cases, records, claims)


def with_changes(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return copy.deepcopy(doc) | changes


def typed(document: dict[str, Any]) -> ResultsDocument:
    """A hand-made document as the readers take it (conformance.report.results.load_results
    gives them the same, from a file)."""
    return document_from_json(document)


def typed_all(documents: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, ResultsDocument]]:
    return [(name, typed(document)) for name, document in documents]
