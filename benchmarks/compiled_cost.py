"""Each compiled mode against its compiler's own cost (issue 33): what an item costs in the
suite, where that time goes, and what the compiler alone takes for the same program.

    python benchmarks/compiled_cost.py [--modes torch_compile,jax_jit,...] [--passes 3] [--every 8]

For a sample of cases (every case of ``cases/compiled/``, and every ``--every``-th case of the
rest in the corpus's order: the same sample each time; the items not applicable to a mode
left out), each mode runs ``--passes`` passes over the sample, each pass in a fresh process
with the run's compilers' caches (conformance.run.caches, the folder a suite run uses, so
inductor's caches are as warm as the last run left them). Per item:

- **suite**: ``engine.run(case, adapter)``, the item as the sandbox's child runs it, split
  (by ``time.perf_counter`` around the engine's own functions, each part without the parts
  timed inside it) into *eager* (the eager run the engine makes first: the memory limits and
  the names' eager objects), *compiled* (the compiled function's construction, compile and
  call, with the adapter's reset of its compiler's state), *prefix* (the prefixes compiled
  again where a step raised or a warning was expected), *observe* (checking the
  expectations) and *other* (isolation, the inputs, the runner's set-up);
- **limit**: the compiler's own cost for the same program: the adapter's reset, then
  compiling the case's function (``conformance.run.compiled.program``, with the same inputs
  and outputs as the suite's) and calling it once on inputs made beforehand, nothing else.

The ratio is suite over limit: 1.0 would be a suite that adds nothing to the compiler.
paddle_static runs its items in a process each, forked from a warm fork server
(docs/compiled-paddle.md): here they run in one process, so the fork (a few ms, in
docs/performance.md) is not in either figure.

Figures are each item's median over the passes, summed over the sample and divided by its
items (ms per item). On a shared machine run nothing else heavy at the same time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("eager", "compiled", "prefix", "observe", "other")
DEFAULT_MODES = "torch_compile,torch_inductor,jax_jit,tensorflow_function,tensorflow_xla,paddle_static"


def sample(every: int) -> list[Any]:
    """Every case of cases/compiled/, and every ``every``-th of the others, in file order."""
    from conformance import registry
    from conformance.load.reader import load_file

    vocabulary = registry.vocabulary()
    compiled, others = [], []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        result = load_file(path, vocabulary, display_path=str(path.relative_to(ROOT)))
        assert not result.errors, result.errors[0][1].render()
        (compiled if path.parent.name == "compiled" else others).extend(result.cases)
    return compiled + others[::every]


class Clock:
    """Exclusive time per part: a part's time leaves out the parts timed inside it."""

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []  # [name, start, time of the parts inside]
        self.parts: dict[str, float] = {}

    def timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            frame = [name, time.perf_counter(), 0.0]
            self.stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                self.stack.pop()
                elapsed = time.perf_counter() - frame[1]
                self.parts[name] = self.parts.get(name, 0.0) + elapsed - frame[2]
                if self.stack:
                    self.stack[-1][2] += elapsed
        return wrapper


def instrument(clock: Clock) -> None:
    """Time the engine's parts (its functions wrapped in this process only)."""
    from conformance.run import compiled, engine

    engine._Runner.execute = clock.timed("eager", engine._Runner.execute)  # type: ignore[method-assign]
    engine._checked = clock.timed("observe", engine._checked)
    compiled.CompiledRunner.execute = clock.timed(  # type: ignore[method-assign]
        "compiled", compiled.CompiledRunner.execute)
    for method in ("_failing_step", "_before", "_warnings"):
        setattr(compiled.CompiledRunner, method, clock.timed("prefix", getattr(compiled.CompiledRunner, method)))


def prepared(mode: str, every: int) -> tuple[Any, list[Any]]:
    """The mode's adapter, set up and warmed as a run's process is before its first item
    (lazy imports, a first compile, the frameworks the DLPack cases hand tensors to), and the
    sample's items that apply to it."""
    from conformance import registry
    from conformance.run import engine

    adapter = registry.get_adapter(mode)
    adapter.setup()
    adapter.warm()
    cases = [c for c in sample(every) if engine.not_applicable(c, adapter) is None]
    for case in cases:
        for key in case.operations():
            other = key[len("fn:"):-len("_from_dlpack")] if key.endswith("_from_dlpack") else ""
            if other in registry.framework_names() and registry.get_adapter(other).unavailable() is None:
                registry.get_adapter(other).setup()
    engine.run(cases[0], adapter)  # the first compile of the process: not an item's cost
    return adapter, cases


def suite_pass(mode: str, every: int) -> dict[str, Any]:
    """One pass over the sample in this process: each item's parts, as the suite runs it."""
    from conformance.run import engine

    adapter, cases = prepared(mode, every)
    clock = Clock()
    instrument(clock)
    items = []
    for case in cases:
        clock.parts = {}
        start = time.perf_counter()
        engine.run(case, adapter)
        total = time.perf_counter() - start
        parts = dict(clock.parts)
        parts["other"] = total - sum(parts.values())
        parts["total"] = total
        items.append(parts)
    return {"cases": [c.id for c in cases], "items": items}


def limit_pass(mode: str, every: int) -> dict[str, Any]:
    """One pass over the sample in this process: each item's program compiled and called
    once, alone (the adapter's reset included), on inputs made beforehand."""
    from conformance.run import engine
    from conformance.run.compiled import CompiledRunner, program

    adapter, cases = prepared(mode, every)
    items = []
    for case in cases:
        expect = case.expect_for(mode, adapter.lineage(), engine.release(case, adapter))
        runner = CompiledRunner(case, adapter, engine._Runner(case, adapter), expect)
        function = program(case.steps, adapter.ops, runner.inputs, runner.outputs)
        elapsed = 0.0
        with adapter.isolation(engine.case_seed(case.id)):
            try:
                args = runner.fresh_inputs()
            except Exception:  # not applicable when run: the suite's item makes no call either
                args = None
            if args is not None:
                start = time.perf_counter()
                try:
                    adapter.compile(function)(*args)
                except Exception:  # a case about an error: the compiler's refusal is its cost
                    pass
                elapsed = time.perf_counter() - start
        items.append({"total": elapsed})
    return {"cases": [c.id for c in cases], "items": items}


def in_child(mode: str, what: str, every: int) -> dict[str, Any]:
    """One pass in a fresh process with the run's compilers' caches (the sandbox child's
    environment); its last line of output read as JSON."""
    from conformance.run.caches import open_caches
    from conformance.run.sandbox import child_environment

    caches = open_caches()
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", mode, "--what", what, "--every", str(every)],
                              cwd=ROOT, env=child_environment(caches), capture_output=True, text=True)
    finally:
        caches.close()
    if proc.returncode != 0:
        raise SystemExit(f"{mode} {what}: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def summary(passes: list[dict[str, Any]], parts: tuple[str, ...]) -> dict[str, float]:
    """Per part, the sum over the items of each item's median over the passes, per item."""
    count = len(passes[0]["items"])
    return {part: sum(statistics.median(p["items"][i].get(part, 0.0) for p in passes)
                      for i in range(count)) / count for part in parts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default=DEFAULT_MODES)
    parser.add_argument("--passes", type=int, default=3, help="each in a fresh process")
    parser.add_argument("--every", type=int, default=8, help="of the cases outside cases/compiled/, every N-th")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--what", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure = suite_pass if args.what == "suite" else limit_pass
        print(json.dumps(measure(args.child, args.every)))
        return
    ms = 1000.0
    print("| mode | items | " + " | ".join(PARTS) + " | **suite** | limit | ratio |")
    print("|---|---:|" + "---:|" * (len(PARTS) + 3))
    for mode in args.modes.split(","):
        suite_passes = [in_child(mode, "suite", args.every) for _ in range(args.passes)]
        limit_passes = [in_child(mode, "limit", args.every) for _ in range(args.passes)]
        assert suite_passes[0]["cases"] == limit_passes[0]["cases"]
        suite = summary(suite_passes, (*PARTS, "total"))
        limit = summary(limit_passes, ("total",))["total"]
        cells = " | ".join(f"{suite[p] * ms:.1f}" for p in PARTS)
        print(f"| {mode} | {len(suite_passes[0]['cases'])} | {cells} | **{suite['total'] * ms:.1f}** | "
              f"{limit * ms:.1f} | {suite['total'] / limit:.2f} |", flush=True)
    print(f"\n(ms per item, each item's median over {args.passes} passes, each pass a fresh process)")


if __name__ == "__main__":
    main()
