"""conformance discover (issue 21): programs per second per framework and across frameworks,
and time to the first finding from fresh seeds.

    python benchmarks/discover.py [--seconds 60] [--seeds 1,2,3]

Each measurement is ``python -m conformance discover`` in a fresh process from the
repository root (the sandbox's children start inside it, as in a user's run), reading the
programs, seconds and findings from the findings.json it writes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def discover(frameworks: str, seconds: float, seed: int) -> dict:
    out = Path(tempfile.mkdtemp(prefix="conformance-bench-discover-"))
    subprocess.run([sys.executable, "-m", "conformance", "discover", "--frameworks", frameworks, "--seconds",
                    str(seconds), "--seed", str(seed), "--out", str(out)], cwd=ROOT, check=True, capture_output=True)
    return json.loads((out / "findings.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seeds", default="1,2,3")
    args = parser.parse_args()
    print("| frameworks | programs/s | findings | programs showing a known bug |")
    print("|---|---:|---|---:|")
    for frameworks in ("numpy", "torch", "paddle", "torch,numpy,paddle"):
        r = discover(frameworks, args.seconds, 0)
        print(f"| {frameworks} | {r['programs'] / r['seconds']:.1f} | {confirmed(r)} | {sum(r['known'].values())} |")
    print()
    print("| seed | programs | seconds | first finding or known bug after | findings | known bugs (programs) |")
    print("|---|---:|---:|---:|---|---|")
    for seed in map(int, args.seeds.split(",")):
        r = discover("torch,numpy,paddle", args.seconds, seed)
        first = r["first_bug_seconds"]
        what = "; ".join(f"{f['oracle']} {f['framework']}: {f['program']}" for f in r["findings"]
                         if f["reproduced"]) or "none"
        known = ", ".join(f"{rule} {n}" for rule, n in r["known"].items()) or "none"
        print(f"| {seed} | {r['programs']} | {r['seconds']:.0f} | "
              f"{'-' if first is None else f'{first:.1f} s'} | {what} | {known} |")


def confirmed(r: dict) -> int:
    return sum(1 for f in r["findings"] if f["reproduced"])


if __name__ == "__main__":
    main()
