"""conformance discover (issue 21): programs per second per framework and across frameworks,
and time to the first finding from fresh seeds.

    python benchmarks/discover.py [--seconds 60] [--seeds 1,2,3]
    python benchmarks/discover.py --targets [--seconds 3600] [--seed 31] [--jobs 2]

``--targets`` is issue 36's measurement: one run from a fresh seed (torch, NumPy, Paddle and
torch_compile by default), then per framework the programs refused or not run by reason,
the operations drawn fewer than 100 times, whether the torch.compile expand-write bug
(pytorch#197448) was found, and the findings, new and known.

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


def discover(frameworks: str, seconds: float, seed: int, jobs: int = 1) -> dict:
    out = Path(tempfile.mkdtemp(prefix="conformance-bench-discover-"))
    subprocess.run([sys.executable, "-m", "conformance", "discover", "--frameworks", frameworks, "--seconds",
                    str(seconds), "--seed", str(seed), "--jobs", str(jobs), "--out", str(out)], cwd=ROOT, check=True,
                   capture_output=True)
    print(f"(findings, cases and upstream drafts of this run: {out})", file=sys.stderr)
    return json.loads((out / "findings.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--targets", action="store_true", help="issue 36's targets from one run (--seed)")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--frameworks", default="torch,numpy,paddle,torch_compile")
    parser.add_argument("--jobs", type=int, default=2, help="--targets: runs at once (conformance discover --jobs; "
                                                            "default 2, the cores the targets are set for)")
    args = parser.parse_args()
    if args.targets:
        targets(args.frameworks, args.seconds, args.seed, args.jobs)
        return
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


def targets(frameworks: str, seconds: float, seed: int, jobs: int) -> None:
    r = discover(frameworks, seconds, seed, jobs)
    print(f"{r['programs']} programs in {r['seconds']:.0f} s ({r['programs'] / r['seconds']:.1f}/s), "
          f"frameworks {frameworks}, seed {seed}, {jobs} job(s)")
    print()
    print("| framework | refused or not run | by reason |")
    print("|---|---:|---|")
    for fw, n in r["refused"].items():
        reasons = ", ".join(f"{why} {k}" for why, k in sorted(r["refusals"][fw].items(), key=lambda e: -e[1]))
        print(f"| {fw} | {100.0 * n / r['programs']:.1f} % | {reasons or '-'} |")
    drawn = r["drawn"]
    rare = sorted((n, op) for op, n in drawn.items() if n < 100)
    print()
    print(f"operations drawn: {len(drawn)}; fewest steps: {min(drawn.values()) if drawn else 0}; "
          f"under 100: {', '.join(f'{op} {n}' for n, op in rare) or 'none'}")
    expand = r["known"].get("torch-compile-expand-write", 0) or any(
        "expand" in f["program"] and f["framework"].startswith("torch_") for f in r["findings"])
    print(f"torch.compile expand-write (pytorch#197448) found: {'yes' if expand else 'no'}")
    print("findings:")
    for f in r["findings"]:
        print(f"- {f['oracle']} {f['framework']} ({'reproduced' if f['reproduced'] else 'not reproduced'}, "
              f"{f['status'][:40]}): {f['program']}: {f['summary']}")
    print("known bugs (programs):", ", ".join(f"{k} {n}" for k, n in r["known"].items()) or "none")


def confirmed(r: dict) -> int:
    return sum(1 for f in r["findings"] if f["reproduced"])


if __name__ == "__main__":
    main()
