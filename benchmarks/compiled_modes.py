"""The whole corpus on each compiled mode (issue 19): wall time cold (an empty compile cache)
and warm (the cache the cold run filled), serial and with ``-n 2``.

    python benchmarks/compiled_modes.py [--modes torch_compile,torch_inductor,...] [--jobs serial,xdist]
    python benchmarks/compiled_modes.py --from-results results.json   # the item times a run recorded

Each run is ``python -m pytest cases -q -p no:cacheprovider --frameworks MODE`` (plus ``-n 2``)
in a fresh process from the repository root, with ``CONFORMANCE_CACHE_DIR`` a folder of its
own: *cold* starts from an empty folder, *warm* reuses the folder the cold run of the same
jobs setting filled. Only torch_inductor keeps a compile cache on disk (its FX graph cache and
built C++); the other compilers keep none across processes, so their cold and warm runs differ
by noise and the operating system's file cache. An item of a compiled mode also runs its
case eagerly first (the memory limits), so these times include the eager steps.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance import registry
from conformance.report.results import load_results

ROOT = Path(__file__).resolve().parent.parent
JOBS = {"serial": [], "xdist": ["-n", "2"]}


def run(mode: str, jobs: list[str], cache: Path) -> tuple[float, str]:
    env = {**os.environ, "CONFORMANCE_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "cases", "-q", "-p", "no:cacheprovider",
                           "--frameworks", mode, *jobs], cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    # pytest -q's last line: "4532 passed, 5656 skipped in 79.01s" (with '=' around it without -q)
    summary = next((line for line in reversed(proc.stdout.splitlines())
                    if " in " in line and (" passed" in line or " failed" in line)), "?")
    return elapsed, summary.strip("= ")


def from_results(path: str) -> None:
    """Per framework, the sum of its items' durations in a results file: the serial time of
    its items (a -n 2 run's items ran two at a time), without collection and start-up."""
    totals: dict[str, list[float]] = {}
    for record in load_results(Path(path)).results:
        totals.setdefault(str(record.framework), []).append(record.duration_s or 0.0)
    print("| framework | items | their time (s) |")
    print("|---|---:|---:|")
    for name in registry.report_order(totals):
        print(f"| {name} | {len(totals[name])} | {sum(totals[name]):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    modes = [name for name in registry.framework_names() if registry.lineage(name)]
    parser.add_argument("--modes", default=",".join(modes))
    parser.add_argument("--jobs", default="serial,xdist")
    parser.add_argument("--from-results", default=None, help="a results file: print its item times per framework")
    args = parser.parse_args()
    if args.from_results:
        from_results(args.from_results)
        return
    print("| mode | jobs | cold (s) | warm (s) | items |")
    print("|---|---|---:|---:|---|")
    for mode in args.modes.split(","):
        for jobs in args.jobs.split(","):
            cache = Path(tempfile.mkdtemp(prefix=f"conformance-{mode}-"))
            try:
                cold, summary = run(mode, JOBS[jobs], cache)
                warm, _ = run(mode, JOBS[jobs], cache)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            print(f"| {mode} | {jobs} | {cold:.1f} | {warm:.1f} | {summary} |", flush=True)


if __name__ == "__main__":
    main()
