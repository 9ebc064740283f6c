"""The whole matrix as a user runs it (issue 33): ``conformance run`` on every framework and
mode, from a fresh store of outcomes and compile caches, then again after editing one case
file, with the item time per framework that each run recorded.

    python benchmarks/whole_run.py [--workers auto|0|N] [--frameworks LIST] [--edit FILE]

Each run is ``python -m conformance run --plain -n WORKERS`` in a fresh process from the
repository root, with ``CONFORMANCE_CACHE_DIR`` a temporary folder of its own and the results
and reports written to another (the committed reports are not touched):

- *fresh*: ``--fresh``, an empty cache folder: every item computed, every compiler cold;
- *warm*: ``--fresh`` again, the same cache folder: every item computed, inductor's caches warm;
- *edited*: the default (outcomes reused), after putting a comment line at the top of one
  case file (restored afterwards), which moves every case in it: the items of the cases it
  moved are computed, the others' outcomes reused.

Prints the wall time of each, and per framework the summed ``duration_s`` of the fresh run.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.report.results import load_results
from conformance.resultsmodel import ResultsDocument

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_EDIT = ROOT / "cases" / "views" / "basic.yaml"


def run(cache: Path, out: Path, workers: str, frameworks: str | None, *extra: str) -> tuple[float, ResultsDocument]:
    env = {**os.environ, "CONFORMANCE_CACHE_DIR": str(cache)}
    args = [sys.executable, "-m", "conformance", "run", "--plain", "-n", workers,
            "--results", str(out / "results.json"), "--reports", str(out), *extra]
    if frameworks:
        args += ["--frameworks", frameworks]
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"conformance run failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return elapsed, load_results(out / "results.json")


def per_framework(data: ResultsDocument) -> list[tuple[str, float, int]]:
    total: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for record in data.results:
        total[str(record.framework)] += record.duration_s or 0.0
        count[str(record.framework)] += 1
    return [(fw, total[fw], count[fw]) for fw, _ in total.most_common()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="auto")
    parser.add_argument("--frameworks")
    parser.add_argument("--edit", type=Path, default=DEFAULT_EDIT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="conformance-bench-") as tmp:
        cache, out = Path(tmp) / "cache", Path(tmp) / "out"
        fresh, data = run(cache, out / "fresh", args.workers, args.frameworks, "--fresh")
        warm, _ = run(cache, out / "warm", args.workers, args.frameworks, "--fresh")
        reused_all, again = run(cache, out / "again", args.workers, args.frameworks)
        original = args.edit.read_bytes()
        try:
            args.edit.write_bytes(b"# edited by benchmarks/whole_run.py\n" + original)
            edited, after = run(cache, out / "edited", args.workers, args.frameworks)
        finally:
            args.edit.write_bytes(original)
    print(f"workers {args.workers}; {data.run.items} items")
    print(f"fresh (empty caches)        {fresh:8.1f} s")
    print(f"warm (compile caches kept)  {warm:8.1f} s")
    print(f"unchanged (all reused)      {reused_all:8.1f} s  ({again.run.reused or 0} reused)")
    print(f"one case file edited        {edited:8.1f} s  ({after.run.reused or 0} reused)")
    print("item time of the fresh run, per framework (summed duration_s):")
    for fw, seconds, items in per_framework(data):
        print(f"  {fw:22s} {seconds:8.1f} s  {items:5d} items  {seconds / max(items, 1) * 1000:7.1f} ms/item")


if __name__ == "__main__":
    main()
