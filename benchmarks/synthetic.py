"""Synthetic corpora for the benchmarks: N cases made from the real corpus.

Case i is corpus case ``i % len(corpus)`` (all of its keys: inputs, steps, expectations,
overrides, claims) with the id ``synthetic.<i>.<original id>``, written 100 cases to a file
in folders of 50 files, the shape of a grown corpus. The corpus's mix is kept: views,
in-place, autograd, interop and the few memory cases with 10^5-element inputs. The
"small" kind repeats the README's example case instead (a lower bound for a case).
Nothing is committed: the benchmarks write into a temporary folder.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CASES_PER_FILE = 100
FILES_PER_FOLDER = 50


def corpus_cases(cases_dir: Path = ROOT / "cases") -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in sorted(cases_dir.rglob("*.yaml")):
        cases += yaml.safe_load(path.read_text())["cases"]
    return cases


# the README's example case: one input, two steps, two expectations
SMALL_CASE: dict[str, Any] = {
    "id": "views.view.contiguous",
    "title": "view() of a contiguous tensor shares its memory",
    "tags": ["views", "view"],
    "claims": {"S3-03": "holds"},
    "given": {"x": {"data": [[1.0, 2.0], [3.0, 4.0]]}},
    "steps": ["y = x.view(4)", "y[0] = 10.0"],
    "expect": {"shares_memory": {"y & x": True}, "values": {"x": [[10.0, 2.0], [3.0, 4.0]]}},
}


def write_corpus(target: Path, count: int, cases_dir: Path = ROOT / "cases", kind: str = "corpus") -> list[Path]:
    """Write ``count`` cases under ``target``; returns the files written. ``kind``: "corpus"
    (the real corpus's cases in turn) or "small" (the README's example case, repeated)."""
    source = corpus_cases(cases_dir) if kind == "corpus" else [SMALL_CASE]
    files = []
    for start in range(0, count, CASES_PER_FILE):
        batch = []
        for i in range(start, min(start + CASES_PER_FILE, count)):
            case = copy.deepcopy(source[i % len(source)])  # shared objects would be dumped as YAML aliases
            case["id"] = f"synthetic.{i}.{case['id']}"
            batch.append(case)
        number = start // CASES_PER_FILE
        folder = target / f"part{number // FILES_PER_FOLDER:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"cases{number:05d}.yaml"
        path.write_text(yaml.safe_dump({"cases": batch}, sort_keys=False, width=120, default_flow_style=None))
        files.append(path)
    return files
