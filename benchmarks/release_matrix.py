"""The release matrix (issue 20): environment creation per release, cold (an empty uv
package cache) and warm (the cache the cold pass filled, the environment made again), and
the corpus on each release, serially and two releases at once.

    python benchmarks/release_matrix.py numpy==1.26.4,2.0.2,2.2.6,2.4.6 [--jobs 1,2] [--skip-cold]

Each pass is ``python -m conformance matrix SPEC --out OUT --envs ENVS`` in a fresh process
from the repository root. *cold*: ``UV_CACHE_DIR`` an empty folder and no environment, so
every wheel is downloaded; *warm*: the same cache, no environment, so every environment is
made again from cached wheels; *kept*: the environments are there, only the runs count.
The matrix prints each release's environment and run time; this script adds the wall time
of the whole pass.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"conformance matrix: (\S+) (\S+): environment ([\d.]+) s \((\w+)\), run ([\d.]+) s")


def matrix(spec: list[str], envs: Path, cache: Path, jobs: int) -> tuple[float, list[tuple[str, ...]]]:
    out = Path(tempfile.mkdtemp(prefix="conformance-bench-out-"))
    env = dict(os.environ, UV_CACHE_DIR=str(cache))
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "conformance", "matrix", *spec, "--out", str(out), "--envs",
                           str(envs), "-j", str(jobs)], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - began
    shutil.rmtree(out, ignore_errors=True)
    rows = [m.groups() for m in LINE.finditer(done.stdout)]
    if not rows:
        sys.exit(f"the matrix printed no release line:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", nargs="+")
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--skip-cold", action="store_true", help="use the default uv cache (warm) for every pass")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="conformance-bench-"))
    cache = scratch / "uv-cache"
    try:
        passes = [] if args.skip_cold else [("cold", 1)]
        passes += [("warm", 1)] + [("kept", int(j)) for j in args.jobs.split(",")]
        for label, jobs in passes:
            envs = scratch / "envs"
            if label in ("cold", "warm"):
                shutil.rmtree(envs, ignore_errors=True)
            used = cache if not args.skip_cold else Path(os.environ.get("UV_CACHE_DIR", Path.home() / ".cache" / "uv"))
            wall, rows = matrix(args.spec, envs, used, jobs)
            print(f"{label:5} -j {jobs}: {wall:6.1f} s in all")
            for fw, version, env_s, state, run_s in rows:
                print(f"    {fw} {version}: environment {env_s} s ({state}), run {run_s} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
