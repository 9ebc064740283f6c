"""Whole runs of the corpus: wall time and peak memory, serial against ``-n 2``, in the
sandbox against ``--in-process``, and the frameworks' own import times that bound them.

    python benchmarks/run_cost.py [--repeat 3] [--modes serial,xdist,inprocess,xdist-inprocess]

Each mode runs ``python -m pytest cases -q -p no:cacheprovider`` (plus its options) in a
fresh process from the repository root; the medians of --repeat runs are printed. Memory is
the peak of the summed resident set (VmRSS) of the whole process tree (pytest, xdist
workers, sandbox children), sampled every 20 ms from /proc, and the largest single process.
Linux only (/proc).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from conformance import registry

ROOT = Path(__file__).resolve().parent.parent
MODES = {
    "serial": [],
    "xdist": ["-n", "2"],
    "inprocess": ["--in-process"],
    "xdist-inprocess": ["-n", "2", "--in-process"],
}


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeMemory:
    """Samples the resident memory of a process and all its descendants."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid, self.interval = pid, interval
        self.peak_total = self.peak_single = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            tree, pids, todo = _children(), [], [self.pid]
            while todo:
                pid = todo.pop()
                pids.append(pid)
                todo += tree.get(pid, [])
            sizes = [_rss_kib(p) for p in pids]
            self.peak_total = max(self.peak_total, sum(sizes))
            self.peak_single = max(self.peak_single, max(sizes, default=0))
            self._stop.wait(self.interval)

    def __enter__(self) -> "TreeMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_once(args: list[str]) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "cases", "-q", "-p", "no:cacheprovider", *args],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with TreeMemory(proc.pid) as memory:
        output, _ = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{output[-2000:]}")
    return {"wall_s": wall, "peak_tree_mib": memory.peak_total / 1024, "peak_single_mib": memory.peak_single / 1024}


def import_time(framework: str) -> float:
    """The framework's import as the sandbox child makes it, in a fresh interpreter: the
    adapter's setup() (its flags, its ``imports_first``: TensorFlow's includes Paddle's)."""
    code = ("import time; from conformance import registry; a = registry.get_adapter(%r); "
            "t = time.perf_counter(); a.setup(); print(time.perf_counter() - t)" % framework)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout
    return float(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args(argv)
    for framework in registry.framework_names():
        if registry.get_adapter(framework).unavailable() is None:
            times = [import_time(framework) for _ in range(args.repeat)]
            print(f"import {framework:16} {statistics.median(times):6.2f} s")
    print(f"{'mode':16} {'wall':>7} {'peak RSS (tree)':>16} {'largest process':>16}")
    results = {}
    for mode in args.modes.split(","):
        runs = [run_once(MODES[mode]) for _ in range(args.repeat)]
        results[mode] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        r = results[mode]
        print(f"{mode:16} {r['wall_s']:6.2f}s {r['peak_tree_mib']:13.0f} MiB {r['peak_single_mib']:13.0f} MiB")
    if "serial" in results and "xdist" in results:
        print(f"speed-up of -n 2 (sandbox): {results['serial']['wall_s'] / results['xdist']['wall_s']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
