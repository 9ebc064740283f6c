"""The static site (issue 22): build time, page count and size for a results file.

    python benchmarks/site.py [RESULTS.json] [--releases FILE...] [--repeat N]

Each build is ``python -m conformance site RESULTS --out OUT`` in a fresh process from the
repository root (the command as a user runs it: interpreter start, imports, loading the
results, analysis, rendering, writing); the stages inside one process are timed apart as
well. Default input: ``reports/results.json`` and ``releases/*/*.json``.
"""

from __future__ import annotations

import argparse
import glob
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stages(results: Path, releases: list[Path]) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from conformance.report import analysis, changelog
    from conformance.site import pages, render
    from conformance.site.build import load_inputs

    times: dict[str, float] = {}
    began = time.perf_counter()
    document, release_docs = load_inputs([results], releases, allow_partial=True)
    times["load results"] = time.perf_counter() - began
    began = time.perf_counter()
    analysis.build(document)
    times["analysis (the report's)"] = time.perf_counter() - began
    began = time.perf_counter()
    log = changelog.build(release_docs) if release_docs else None
    site = pages.build(document, log)
    times["pages as data (analysis included)"] = time.perf_counter() - began
    began = time.perf_counter()
    render.render(site)
    times["render (Jinja2)"] = time.perf_counter() - began
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="?", default=str(ROOT / "reports" / "results.json"))
    parser.add_argument("--releases", nargs="*", default=sorted(glob.glob(str(ROOT / "releases" / "*" / "*.json"))))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    walls = []
    with tempfile.TemporaryDirectory(prefix="conformance-bench-site-") as tmp:
        out = Path(tmp) / "site"
        for _ in range(args.repeat):
            began = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "conformance", "site", args.results, "--out", str(out),
                                   "--partial", *(["--releases", *args.releases] if args.releases else [])],
                                  cwd=ROOT, capture_output=True, text=True)
            walls.append(time.monotonic() - began)
            if done.returncode != 0:
                sys.exit(done.stderr)
        files = [p for p in out.rglob("*") if p.is_file()]
        html = [p for p in files if p.suffix == ".html"]
        size = sum(p.stat().st_size for p in files)
        largest = max(files, key=lambda p: p.stat().st_size)
        largest_text = f"{largest.relative_to(out)} ({largest.stat().st_size / 1e3:.0f} kB)"
        kinds: dict[str, int] = {}
        for p in html:
            kind = p.relative_to(out).parts[0] if len(p.relative_to(out).parts) > 1 else "top level"
            kinds[kind] = kinds.get(kind, 0) + 1
    print(f"input: {args.results} ({Path(args.results).stat().st_size / 1e6:.1f} MB), "
          f"{len(args.releases)} release files")
    print(f"build (fresh process, {args.repeat} runs): median {statistics.median(walls):.2f} s, "
          f"min {min(walls):.2f} s")
    print(f"pages: {len(html)} ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}); files: {len(files)}")
    print(f"size: {size / 1e6:.1f} MB; largest file: {largest_text}")
    for stage, seconds in stages(Path(args.results), [Path(p) for p in args.releases]).items():
        print(f"  {stage}: {seconds:.2f} s")


if __name__ == "__main__":
    main()
