"""Per-item overhead of the suite against a plain pytest baseline generated from the corpus.

    python benchmarks/baseline.py [--frameworks numpy,torch,paddle] [--repeat 3] [--keep DIR]

For each framework, every corpus case that runs on it becomes one plain pytest test
function in a generated module: the same inputs, the same framework calls in the same
order (each operation is the adapter's callable for its key, called directly, so the calls
are identical), and an assertion per expectation with the adapter's probes (values, dtype,
shape, grad, requires_grad, is_leaf, version counters, memory overlap, identity, the error
and the warning). No YAML, no engine, no plugin, no sandbox, no isolation: straight-line
Python, as a person would write the tests by hand. An item whose mutation an immutable
framework refuses (outcome refused: JAX, TensorFlow) is a test that the step raises.

Then, side by side and --repeat times each, in fresh processes from the repository root:

- suite:    python -m pytest cases -q -p no:cacheprovider --frameworks FW
- baseline: python -m pytest baseline_FW.py -q -p no:cacheprovider -p no:conformance

each warm (the suite's case cache filled; the baseline module's compiled .pyc written, as
Python and pytest keep it) and cold (no case cache, ``PYTHONDONTWRITEBYTECODE=1`` and no
.pyc: every YAML file parsed, and the module compiled and assertion-rewritten, again).

Both include interpreter start, pytest start and the framework's import. The suite runs
the whole corpus for the framework (its not-applicable and skipped items included: that
is the run a user makes); the baseline only the items that run and pass. A third run,
"tuned", is the baseline with ``gc.freeze()`` after the framework's import, as the suite's
sandbox child does after each framework's import: without it CPython's cyclic GC keeps
traversing torch's and Paddle's objects while pytest runs, and the plain baseline is slower
than the suite. Printed: medians, the ratios, and the overhead per item that ran against
the tuned baseline, in microseconds. The suite also does work the baseline does not (the
behavioural write probe besides the metadata probe, state isolation, per-case seeding,
the round trip to the sandbox), all counted as overhead.
"""

from __future__ import annotations

import argparse
import math
import operator
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance import kinds, registry
from conformance.ir import AttrTarget, Const, ItemTarget, NameTarget, Op, PyOp, Ref, Seq, SliceExpr, Step
from conformance.load.reader import load_file
from conformance.model import Case
from conformance.run.engine import PASS, REFUSED, not_applicable, run

ROOT = Path(__file__).resolve().parent.parent


def literal(value: Any) -> str:
    """Python source for a plain value (nan and inf included)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(literal(v) + ", " for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


# the op:<name> entries of the adapter being generated for that are not Python's operator
TRANSLATED_OPERATORS: set[str] = set()


def expr(e: Any) -> str:
    if e is None:
        return "None"
    if isinstance(e, Ref):
        return e.name
    if isinstance(e, Const):
        return literal(e.value)
    if isinstance(e, Seq):
        inner = ", ".join(expr(i) for i in e.items)
        return f"({inner}{',' if len(e.items) == 1 else ''})" if e.tuple_ else f"[{inner}]"
    if isinstance(e, SliceExpr):
        return f"slice({expr(e.start)}, {expr(e.stop)}, {expr(e.step)})"
    if isinstance(e, PyOp):
        # the operator itself, as a test written by hand would (the suite calls the adapter's
        # op:<name>), unless the framework refuses the case's spelling and the adapter maps it
        # (JAX's x[[0, 2]] is x[jnp.array([0, 2])]): then the mapping, as the hand would write
        if f"op:{e.op}" in TRANSLATED_OPERATORS:
            return f"OPS['op:{e.op}']({', '.join(expr(a) for a in e.args)})"
        return f"operator.{e.op}({', '.join(expr(a) for a in e.args)})"
    assert isinstance(e, Op)
    args = [expr(a) for a in e.args] + [f"{k}={expr(v)}" for k, v in e.kwargs]
    return f"OPS[{e.key!r}]({', '.join(args)})"


def statement(step: Step) -> list[str]:
    if step.kind == "expr":
        return [expr(step.value)]
    if step.kind == "assign":
        value = expr(step.value)
        if len(step.targets) > 1:
            return [", ".join(t.name for t in step.targets) + f" = {value}"]
        return assign(step.targets[0], value)
    target, op = step.targets[0], f"operator.{step.aug_op}"
    if isinstance(target, NameTarget):
        return [f"{target.name} = {op}({target.name}, {expr(step.value)})"]
    if isinstance(target, ItemTarget):
        obj, index = expr(target.obj), expr(target.index)
        return [f"operator.setitem({obj}, {index}, {op}(operator.getitem({obj}, {index}), {expr(step.value)}))"]
    assert isinstance(target, AttrTarget)
    obj = expr(target.obj)
    return [f"OPS['setattr:{target.attr}']({obj}, {op}(OPS['attr:{target.attr}']({obj}), {expr(step.value)}))"]


def assign(target: Any, value: str) -> list[str]:
    if isinstance(target, NameTarget):
        return [f"{target.name} = {value}"]
    if isinstance(target, ItemTarget):
        return [f"operator.setitem({expr(target.obj)}, {expr(target.index)}, {value})"]
    return [f"OPS['setattr:{target.attr}']({expr(target.obj)}, {value})"]


class Writer:
    """The body of one test function."""

    def __init__(self, case: Case, adapter: Any, refused_at: int | None = None) -> None:
        self.case, self.adapter, self.expect = case, adapter, case.expect_for(adapter.name)
        # an immutable framework's refusal of the mutation at this step is the item's verdict
        # (outcome refused): the test asserts the refusal and nothing after it, as the suite
        self.refused_at = refused_at
        self.lines: list[str] = []
        self.versions = {name for (name,) in self.expect.checks.get("version_change", {})}
        self.seen: set[str] = set()

    def emit(self, text: str, indent: int) -> None:
        self.lines.append("    " * indent + text)

    def note_bound(self, names: list[str], indent: int) -> None:
        for name in names:  # the version a name had when it first appeared
            if name in self.versions and name not in self.seen:
                self.seen.add(name)
                self.emit(f"v_{name} = ADAPTER.version_of({name})", indent)

    def steps(self, steps: tuple[Step, ...], indent: int) -> bool:
        """Emit the steps; False once the expected error was raised (the rest do not run)."""
        error, warning = self.expect.checks.get("error"), self.expect.checks.get("warning")
        if self.refused_at is not None:  # the refusal is all the suite checks
            error = warning = None
        for step in steps:
            if step.kind == "block":
                self.emit(f"with OPS['block:{step.block}']():", indent)
                if not self.steps(step.body, indent + 1):
                    return False
                continue
            body = statement(step)
            if (error is not None and error.at == step.number) or self.refused_at == step.number:
                self.emit("with pytest.raises(Exception):", indent)
                for line in body:
                    self.emit(line, indent + 1)
                return False
            if warning is not None and warning.at == step.number:
                self.emit("with warnings.catch_warnings(record=True) as caught:", indent)
                self.emit("warnings.simplefilter('always')", indent + 1)
                for line in body:
                    self.emit(line, indent + 1)
                self.emit(f"assert any(re.search({warning.match!r}, f'{{w.category.__name__}}: {{w.message}}') "
                          "for w in caught)", indent)
            else:
                for line in body:
                    self.emit(line, indent)
            self.note_bound([t.name for t in step.targets if isinstance(t, NameTarget)], indent)
        return True

    def checks(self) -> None:
        unobservable = self.adapter.unobservable
        checks = self.expect.checks
        for prop, entries in checks.items():
            if prop in unobservable or kinds.get(prop).arity != 1:
                continue
            for (name,), expected in entries.items():
                e = literal(expected)
                check = {
                    "values": f"assert values_match(ADAPTER.to_numpy({name}), {e})",
                    "grad": (f"assert ADAPTER.grad({name}) is None" if expected is None else
                             f"assert values_match(ADAPTER.to_numpy(ADAPTER.grad({name})), {e})"),
                    "dtype": f"assert ADAPTER.dtype_name({name}) == {e}",
                    "shape": f"assert list(ADAPTER.shape_of({name})) == {e}",
                    "requires_grad": f"assert ADAPTER.requires_grad({name}) == {e}",
                    "is_leaf": f"assert ADAPTER.is_leaf({name}) == {e}",
                    "version_change": f"assert ADAPTER.version_of({name}) - v_{name} == {e}",
                }[prop]
                self.emit(check, 1)
        for relation, pairs in checks.items():
            if kinds.get(relation).arity != 2:
                continue
            for (a, b), expected in pairs.items():
                self.emit({
                    "same_object": f"assert ({a} is {b}) == {expected}",
                    "same_storage": f"assert ADAPTER.same_allocation({a}, {b}) == {expected}",
                    "shares_memory": f"assert ADAPTER.overlaps({a}, {b}) == {expected}",
                }[relation], 1)

    def function(self, number: int) -> str:
        self.emit(f"def test_{number:04d}_{re.sub(r'[^a-z0-9_]', '_', self.case.id)}():", 0)
        for spec in self.case.given:
            self.emit(f"{spec.name} = ADAPTER.make_input({spec_source(spec)}, 'cpu')", 1)
        self.note_bound([spec.name for spec in self.case.given], 1)
        self.steps(self.case.steps, 1)
        if self.refused_at is None:
            self.checks()
        return "\n".join(self.lines) + "\n"


def spec_source(spec: Any) -> str:
    values = literal(spec.values) if not hasattr(spec.values, "rule") else repr(spec.values)
    return (f"TensorSpec({spec.name!r}, {values}, "
            f"{spec.dtype!r}, {spec.shape!r}, requires_grad={spec.requires_grad}, kind={spec.kind!r}, "
            f"writeable={spec.writeable}, imag={literal(spec.imag)})")


PRELUDE = '''\
"""Generated by benchmarks/baseline.py from the corpus: plain pytest tests for {framework}."""
import gc
import operator
import os
import re
import warnings

import numpy as np
import pytest

from conformance.adapters.{module} import {cls}
from conformance.model import Generated, TensorSpec
from conformance.run.probes import Probes

# Probes: a tensor of another framework (DLPack cases) is probed by its own framework's
# adapter, as a person writing the test would (everything else is the adapter's own)
ADAPTER = Probes({cls}())
ADAPTER.setup()
OPS = ADAPTER.ops
if os.environ.get("BASELINE_GC_FREEZE"):  # the tuned variant: what the suite does after collection
    gc.freeze()


def values_match(observed, expected):
    if isinstance(expected, dict):
        expected = np.array(expected["real"]) + 1j * np.array(expected["imag"])
    expected = np.asarray(expected)
    if observed.shape != expected.shape:
        return False
    if observed.dtype.kind in "fc" or expected.dtype.kind in "fc":
        return bool(np.allclose(observed.astype(complex if observed.dtype.kind == "c" else float), expected,
                                rtol=1e-5, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(observed, expected))

'''


def generate(cases: list[Case], framework: str) -> tuple[str, int]:
    adapter = registry.get_adapter(framework)
    TRANSLATED_OPERATORS.update(key for key, call in adapter.ops.items()
                                if key.startswith("op:") and call is not getattr(operator, key[3:], None))
    cls = type(adapter)
    source = PRELUDE.format(framework=framework, module=cls.__module__.rsplit(".", 1)[1], cls=cls.__name__)
    count = 0
    for case in cases:
        # the items that run and pass here (known divergences included), or whose mutation the
        # framework refuses (outcome refused): decided by running them once with the engine,
        # at generation, which is not timed
        if not_applicable(case, adapter) is not None:
            continue
        outcome = run(case, adapter)
        if outcome.verdict not in (PASS, REFUSED):
            continue
        refused_at = next((s.number for s in outcome.steps if s.error is not None), None) \
            if outcome.verdict == REFUSED else None
        count += 1
        source += "\n\n" + Writer(case, adapter, refused_at).function(count)
    return source, count


def corpus() -> list[Case]:
    vocabulary = registry.vocabulary()
    cases: list[Case] = []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        cases += load_file(path, vocabulary, display_path=str(path.relative_to(ROOT))).cases
    return cases


def timed(args: list[str], extra_env: dict[str, str] | None = None) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    env.update(extra_env or {})
    env = {k: v for k, v in env.items() if v != "" or k != "PYTHONDONTWRITEBYTECODE"}  # "" unsets it
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    if proc.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}")
    return seconds, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default="numpy,torch,paddle")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", metavar="DIR", help="write the generated modules here (default: a temporary folder)")
    parser.add_argument("--generate", metavar="FW", help=argparse.SUPPRESS)  # one module, in this process
    args = parser.parse_args(argv)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="conformance-baseline-"))
    folder.mkdir(parents=True, exist_ok=True)
    if args.generate:
        source, count = generate(corpus(), args.generate)
        (folder / f"baseline_{args.generate}.py").write_text(source)
        print(count)
        return 0
    frameworks = args.frameworks.split(",")
    modules, counts = {}, {}
    for framework in frameworks:
        # each framework's module is generated in a process of its own, as the suite runs it
        # (MindSpore cannot be imported after Paddle; TensorFlow imports Paddle first)
        proc = subprocess.run([sys.executable, __file__, "--generate", framework, "--keep", str(folder)],
                              cwd=ROOT, capture_output=True, text=True, check=True)
        counts[framework] = int(proc.stdout.split()[-1])
        modules[framework] = folder / f"baseline_{framework}.py"
    print(f"generated in {folder}")
    cache = folder / "case-cache"
    warm_env = {"CONFORMANCE_CACHE_DIR": str(cache), "PYTHONDONTWRITEBYTECODE": ""}
    cold_env = {"CONFORMANCE_CACHE_DIR": "off", "PYTHONDONTWRITEBYTECODE": "1"}
    print("warm: the suite's case cache filled, the baseline's compiled module (.pyc) written; "
          "cold: neither (every YAML file parsed, the module compiled and rewritten by pytest again)")
    print("tuned: the baseline with gc.freeze() after the framework's import")
    header = ["framework", "items", "suite", "baseline", "tuned", "ratio", "ratio tuned", "overhead/item"]
    print(("{:10} {:>5} " + "{:>9} " * 3 + "{:>6} {:>11} {:>14}").format(*header))
    totals: dict[str, float] = {}
    for framework in frameworks:
        plain = [str(modules[framework]), "-p", "no:conformance", "--rootdir", str(folder)]
        runs = {
            "suite warm": (["cases", "--frameworks", framework], warm_env),
            "baseline warm": (plain, warm_env),
            "tuned warm": (plain, dict(warm_env, BASELINE_GC_FREEZE="1")),
            "suite cold": (["cases", "--frameworks", framework], cold_env),
            "baseline cold": (plain, cold_env),
        }
        for command, env in runs.values():  # fill the cache and write the .pyc
            if env is warm_env:
                timed(command, env)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeat):  # side by side, alternating
            for name, (command, env) in runs.items():
                if env is cold_env:
                    for compiled in folder.rglob("__pycache__"):
                        shutil.rmtree(compiled)
                times[name].append(timed(command, env)[0])
        medians = {name: statistics.median(values) for name, values in times.items()}
        for name, value in medians.items():
            totals[name] = totals.get(name, 0.0) + value
        print_rows(framework, counts[framework], medians)
    print_rows("all", sum(counts.values()), totals)
    return 0


def print_rows(label: str, items: int, t: dict[str, float]) -> None:
    for kind in ("warm", "cold"):
        suite, baseline = t[f"suite {kind}"], t[f"baseline {kind}"]
        tuned = t.get(f"tuned {kind}")
        reference = tuned if tuned is not None else baseline
        print(f"{label + ' ' + kind:10} {items:5} {suite:8.2f}s {baseline:8.2f}s "
              f"{(f'{tuned:8.2f}s' if tuned is not None else '        -')} {suite / baseline:6.2f} "
              f"{(f'{suite / tuned:11.2f}' if tuned is not None else '          -')} "
              f"{(suite - reference) / items * 1e6:11.0f} us")


if __name__ == "__main__":
    sys.exit(main())
