"""What the sandbox costs: the round trip per item, a child's start, and a restart after a
crash (the framework imported again).

    python benchmarks/sandbox_cost.py [--frameworks numpy,torch,paddle] [--repeat 3]

Runs every corpus case that applies to each framework in process and through the sandbox,
several times, and prints the median per-item time of each and their difference.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from conformance import registry
from conformance.load.reader import load_file
from conformance.run.engine import not_applicable, run
from conformance.run.sandbox import FrameworkProcess, Sandbox

ROOT = Path(__file__).resolve().parent.parent


def corpus() -> list:
    vocabulary = registry.vocabulary()
    cases = []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        cases += load_file(path, vocabulary).cases
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default="numpy,torch,paddle")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    cases = corpus()
    # in this process, a framework that needs a process of its own (MindSpore: not after
    # Paddle, which TensorFlow's setup imports) is imported first
    frameworks = sorted(args.frameworks.split(","), key=lambda f: not registry.adapter_class(f).own_process)
    print(f"{'framework':16} {'items':>5} {'in process':>12} {'sandbox':>12} {'round trip':>12}")
    for framework in frameworks:
        adapter = registry.get_adapter(framework)
        runnable = [c for c in cases if not_applicable(c, adapter) is None]
        for case in runnable:  # warm: imports, caches
            run(case, adapter)
        sandbox = Sandbox(timeout=None)
        for case in runnable:
            sandbox.run(case, framework)
        inproc, boxed = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            for case in runnable:
                run(case, adapter)
            inproc.append((time.perf_counter() - start) / len(runnable))
            start = time.perf_counter()
            for case in runnable:
                sandbox.run(case, framework)
            boxed.append((time.perf_counter() - start) / len(runnable))
        sandbox.close()
        a, b = statistics.median(inproc) * 1e6, statistics.median(boxed) * 1e6
        print(f"{framework:16} {len(runnable):5} {a:10.0f}us {b:10.0f}us {b - a:10.0f}us")

    # a child's start (python + conformance), then each framework's first import in it:
    # what a restart after a crash costs
    for framework in frameworks:
        sandbox = FrameworkProcess(timeout=None)  # one child, as the pool starts it
        case = next(c for c in cases if not_applicable(c, registry.get_adapter(framework)) is None)
        start = time.perf_counter()
        sandbox._start()
        started = time.perf_counter()
        sandbox.run(case, framework)
        done = time.perf_counter()
        sandbox.close()
        print(f"restart with {framework}: child start {started - start:.2f} s, "
              f"{framework} import and first item {done - started:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
