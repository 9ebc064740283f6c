"""Collection scaling: how long pytest takes to collect synthetic corpora of 1,000, 10,000
and 50,000 cases (3 items each), and that collecting imports neither torch nor Paddle.

    python benchmarks/collection.py [--sizes 1000,10000,50000] [--repeat 3] [--kind corpus|small]

For each size: the cases are written to a temporary folder (benchmarks/synthetic.py), then
a fresh interpreter runs ``pytest --collect-only`` on it with a probe plugin that times the
collection phase (from pytest_collection's start to its end: finding, reading, validating
every file and making every item). The wall time of the whole command (interpreter start,
plugin import, collection, exit) is measured around it. Three ways: cold (the case cache
off: every file read, parsed and validated), first (an empty cache that the run fills) and
warm (the filled cache: conformance/load/cache.py). Medians of --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import write_corpus  # noqa: E402

PROBE = textwrap.dedent("""
    import json, sys, time, pytest

    class Probe:
        @pytest.hookimpl(wrapper=True)
        def pytest_collection(self, session):
            start = time.perf_counter()
            try:
                return (yield)
            finally:
                self.seconds = time.perf_counter() - start

        def pytest_collection_finish(self, session):
            self.items = len(session.items)
            self.errors = sum(1 for i in session.items if i.name.endswith(("[load]", "[duplicate]")))
            self.heavy = sorted(m for m in ("torch", "paddle") if m in sys.modules)

    probe = Probe()
    code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-o", "conformance_paths=" + sys.argv[1],
                        sys.argv[1]], plugins=[probe])
    print("RESULT " + json.dumps({"code": int(code), "items": probe.items, "errors": probe.errors,
                                  "collect_s": probe.seconds, "heavy": probe.heavy}))
""")


def measure(folder: Path, cache: str) -> dict:
    env = dict(os.environ, CONFORMANCE_CACHE_DIR=cache)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PROBE, str(folder)], capture_output=True, text=True,
                          cwd=folder, env=env)
    wall = time.perf_counter() - start
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return dict(json.loads(line[len("RESULT "):]), wall_s=wall)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kind", choices=("corpus", "small"), default="corpus",
                        help="corpus: the real cases in turn; small: the README's example case repeated")
    args = parser.parse_args(argv)
    print("cold: no cache (CONFORMANCE_CACHE_DIR=off); first: an empty cache, filled by the run; "
          "warm: the filled cache")
    print(f"{'cases':>7} {'items':>7} {'':6} {'collect':>9} {'per case':>9} {'wall':>8}  torch/paddle imported")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            folder, cache = Path(tmp) / "cases", Path(tmp) / "cache"
            write_corpus(folder, size, kind=args.kind)
            runs = {"cold": [measure(folder, "off") for _ in range(args.repeat)],
                    "first": [measure(folder, str(cache))],
                    "warm": [measure(folder, str(cache)) for _ in range(args.repeat)]}
        for kind, measured in runs.items():
            collect = statistics.median(r["collect_s"] for r in measured)
            wall = statistics.median(r["wall_s"] for r in measured)
            last = measured[-1]
            assert last["code"] == 0 and last["errors"] == 0, last
            print(f"{size:7} {last['items']:7} {kind:6} {collect:8.2f}s {collect / size * 1e6:7.0f}us {wall:7.2f}s  "
                  f"{last['heavy'] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
