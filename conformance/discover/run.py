"""``conformance discover``: generate programs, run them on every framework, keep what the
oracles find, shrink each finding to a minimal program and write it as a case.

The loop runs Hypothesis in rounds (``ROUND`` programs each, a seed per round derived from
``--seed``). A program whose oracles report a finding of a kind not seen yet (its
:meth:`Finding.signature`) fails the round's property; Hypothesis then shrinks it (fewer
steps, simpler operations, smaller shapes, the first index) while it still fails, and the
last failing program is the minimal one. Its kind joins the known ones, so the next rounds look
for other kinds. Every program runs in the sandbox's child processes (one per framework
that needs its own), as a pytest item does: a program that crashes or hangs a framework is a
finding, never the end of the run.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import platform
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import FlakyFailure

from conformance import registry
from conformance.discover import derived
from conformance.discover.generate import programs
from conformance.discover.model import explanations
from conformance.discover.oracles import ORACLES, Finding, Observed, known, parts
from conformance.discover.programs import TWINS, VIEW_OPS, VIEWS_BY_NAME, WRITES_BY_NAME, Program, all_writes
from conformance.discover.triage import KNOWN, triaged
from conformance.escaping import for_markdown
from conformance.ir import results_of
from conformance.load.reader import load_text
from conformance.report.outputs import write_files
from conformance.run.sandbox import Sandbox
from conformance.site import repro
from conformance.tools.observe import Observation, expect_lines, observe, split

ROUND = 100  # programs per Hypothesis round
# programs per known-bug rule that, after the budget, are shrunk to measure the rule's
# precision (how many of the programs it absorbs shrink to its shape)
PRECISION_SAMPLE = 3
# what the oracles read (and a finding's case expects): observing every kind of every name
# and pair would cost most of a program's time for nothing
OBSERVED = ("values", "shares_memory", "grad")
CRASH_TRIES = 3  # runs of a smaller program before a crash counts as gone (still_found)
PROGRAM_ID = "discovered.program"


class GeneratorError(Exception):
    """A generated program the loader refused: a bug of the generator, never skipped."""


@dataclass
class Found:
    finding: Finding
    observations: list[Observation]
    seconds: float  # from the start of the run to the first program of this kind
    flaky: bool = False  # the program did not show it again when run a second time
    runs: int = 0  # programs run to reduce it (reduce_steps)
    known: str | None = None  # the known bug (triage.KNOWN) it is, by name; None: new

    def status(self) -> str:
        """New, or the known bug with its upstream links and corpus cases."""
        rule = next((r for r in KNOWN if r.name == self.known), None)
        if rule is None:
            return "new"
        return f"known: {' '.join(rule.links)}; in the corpus: {', '.join(rule.cases)}"


@dataclass
class Discovery:
    frameworks: list[str]
    seed: int
    programs: int = 0
    seconds: float = 0.0
    decisions: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (op, framework, view/copy)
    found: list[Found] = field(default_factory=list)
    triaged: Counter[str] = field(default_factory=Counter)  # known rule (triage.KNOWN) -> programs it matched
    first_bug: float | None = None  # seconds to the first program that showed a bug, known or new
    room: list[str] = field(default_factory=list)  # the operations the programs draw from (room())
    # rule -> the first programs it absorbed after its finding (PRECISION_SAMPLE), and, once
    # shrunk, how many of them still have its shape: (kept, sampled)
    absorbed: dict[str, list[Found]] = field(default_factory=dict)
    precision: dict[str, tuple[int, int]] = field(default_factory=dict)
    drawn: Counter[str] = field(default_factory=Counter)  # operation -> steps of it drawn (twins' included)
    refusals: Counter[tuple[str, str]] = field(default_factory=Counter)  # (framework, error kind or status) -> programs
    # (framework, error kind or status) -> the first refusal of that reason: the framework's
    # error (type: message) or the reason it did not run, and the program
    refusal_examples: dict[tuple[str, str], str] = field(default_factory=dict)
    # framework -> the programs it ran to the end whose values the model explains (some
    # assignment of view or copy reproduces them), and the programs that showed a known bug
    explained: Counter[str] = field(default_factory=Counter)
    known_by_framework: Counter[str] = field(default_factory=Counter)

    def refused(self, framework: str) -> int:
        """The programs ``framework`` refused or lacked, whatever the reason."""
        return sum(n for (fw, _), n in self.refusals.items() if fw == framework)


class _NewFinding(Exception):
    def __init__(self, found: Found) -> None:
        super().__init__(found.finding.summary)
        self.found = found


def case_of(program: Program, case_id: str = PROGRAM_ID, title: str = "a generated program",
            expect: tuple[str, ...] = ("expect: {}",), draft: bool = True) -> Any:
    text = program.case_text(case_id, title, expect)
    result = load_text(text, "<conformance discover>", registry.vocabulary(), draft=draft)
    if result.errors or len(result.cases) != 1:
        raise GeneratorError(f"the loader refused a generated program ({program.describe()}): "
                             + "; ".join(str(e) for _, e in result.errors))
    return result.cases[0]


def run_program(program: Program, frameworks: list[str], sandbox: Sandbox | None) -> list[Observation]:
    # an id of its own: the sandbox's child keeps the last case it was sent, by id
    digest = hashlib.blake2b(repr(program).encode(), digest_size=6).hexdigest()
    case = case_of(program, f"{PROGRAM_ID}_{digest}")
    return [observe(case, registry.get_adapter(fw), sandbox, OBSERVED, returned(case) if compiles(fw) else None)
            for fw in frameworks]


def compiles(framework: str) -> bool:
    return getattr(registry.adapter_class(framework), "compiles", None) is not None


def returned(case: Any) -> frozenset[str]:
    """What a caller of the program's compiled function holds: its inputs and what it returns
    (conformance.ir.results_of). A compiled mode is observed on these only: an intermediate
    would need a second compile of a function that also returns it (conformance/run/
    compiled.py, observed apart), which doubled each program's cost, and a value the
    function neither returns nor writes into an input is one its caller never sees."""
    return frozenset([g.name for g in case.given] + results_of(case.steps))


def observed_of(observation: Observation) -> Observed:
    adapter = registry.adapter_class(observation.framework)
    return Observed(observation.framework, observation.status, observation.reason,
                    {str(k): v for k, v in observation.observed.items()}, observation.error,
                    getattr(adapter, "compiles", None))


def _refusal_example(program: Program, obs: Observed) -> str:
    """What a refused program shows: the framework's error at its step (type: message, cut
    short) or why it did not run, and the program."""
    if obs.error is not None:
        what = f"{obs.error.get('type')}: {obs.error.get('message')}"
    else:
        what = obs.reason or obs.status
    what = " ".join(str(what).split())
    return f"{what[:160]}{'…' if len(what) > 160 else ''} (in: {program.describe()[:160]})"


def room(frameworks: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The view and write operations (programs.VIEW_OPS, all_writes()) the programs of a run
    draw from: those whose vocabulary key every framework of the run whose arrays can change
    has (its table's entry is not absent; Python's operators, indexing and item assignment
    every framework has). A program with an operation one framework lacks tells nothing on
    that framework; an immutable framework refuses every write (documented), whatever the
    operation, so it narrows nothing.

    The writes include those derived from the tables' entries (conformance.discover.
    derived), each drawn where every such framework has an entry for its key (not only no
    absent one: a method is no Python operator every framework has), an out= form where each
    such entry takes out= (derived.takes_out)."""
    register_derived()
    has, listed = _everywhere(frameworks), _everywhere(frameworks, listed=True)
    mutable = [registry.get_adapter(fw) for fw in frameworks if registry.adapter_class(fw).immutable is None]

    def out_everywhere(key: str) -> bool:
        return all(derived.takes_out(adapter, key) for adapter in mutable)

    return (frozenset(op.name for op in VIEW_OPS if has(op.key)),
            frozenset(op.name for op in all_writes()
                      if (out_everywhere if op.out else listed if op.derived else has)(op.key)))


def register_derived() -> list[str]:
    """The writes derived from the vocabulary's in-place entries, registered where steps
    render and the model applies them (conformance.discover.derived.register)."""
    return derived.register(registry.vocabulary().operations or ())


def _everywhere(frameworks: list[str], listed: bool = False) -> Callable[[str], bool]:
    """Whether every framework of the run whose arrays can change has a key (see room): with
    ``listed``, an entry of its table; otherwise no absent one."""
    tables = [registry.get_adapter(fw).ops for fw in frameworks if registry.adapter_class(fw).immutable is None]
    return lambda key: all((not listed or key in table) and getattr(table.get(key), "not_applicable", None) is None
                           for table in tables)


def discover(frameworks: list[str], seconds: float | None = None, max_programs: int | None = None,
             seed: int = 0, sandbox: Sandbox | None = None, shard: tuple[int, int] = (0, 1),
             stopped: Callable[[], bool] = lambda: False) -> Discovery:
    """Programs drawn and checked until the budget is spent. ``shard`` (k, n): the rounds
    k, k + n, k + 2n, ... of the seed's sequence of rounds, so that n runs with the shards
    0..n-1 of one seed draw, between them, the rounds one run draws (discover_in_parallel).
    ``stopped``: asked with the budget, ends the run early when true."""
    result = Discovery(list(frameworks), seed)
    view_ops, write_ops = room(frameworks)
    no_grad = _everywhere(frameworks)("block:no_grad")
    result.room = sorted(view_ops | write_ops)
    signatures: set[tuple[str, str, frozenset[str]]] = set()
    reported: set[str] = set()  # the known bugs (triage.KNOWN) already reported by a finding
    began = time.monotonic()

    def over() -> bool:
        return ((seconds is not None and time.monotonic() - began >= seconds)
                or (max_programs is not None and result.programs >= max_programs) or stopped())

    # a round whose property failed is shrinking: its programs run whatever the budget says,
    # or the replays of the failing program would pass once the budget is spent and the finding
    # would read "not reproduced" (Hypothesis's FlakyFailure) when it is not
    shrinking = False

    def check(program: Program) -> None:
        nonlocal shrinking
        if over() and not shrinking:
            return
        result.programs += 1
        result.drawn.update(step.op for step in program.steps + program.twin)
        observations = run_program(program, frameworks, sandbox)
        by_framework = {o.framework: observed_of(o) for o in observations}
        for obs in by_framework.values():
            if obs.status != "ran" or obs.error is not None:
                why = obs.status.replace("_", " ") if obs.error is None else str(obs.error.get("kind"))
                result.refusals[(obs.framework, why)] += 1
                result.refusal_examples.setdefault((obs.framework, why), _refusal_example(program, obs))
                continue
            found, _ = explanations(program, parts(program, obs.values)[0][2])
            result.explained[obs.framework] += bool(found)
            for i, step in enumerate(program.steps):
                if step.is_view and found and i in found[0] and len({f[i] for f in found}) == 1:
                    result.decisions[(step.op, obs.framework, found[0][i])] += 1
        for obs in by_framework.values():
            finding = first_finding(program, obs, by_framework)
            if finding is None:
                continue
            if result.first_bug is None:
                result.first_bug = time.monotonic() - began
            rule = triaged(finding)
            if rule is not None:
                # a known bug: reported once, with its minimal program; afterwards counted
                result.triaged[rule.name] += 1
                result.known_by_framework[obs.framework] += 1
                if rule.name not in reported:  # added once handled: Hypothesis replays the program
                    shrinking = True
                    raise _NewFinding(Found(finding, observations, time.monotonic() - began, known=rule.name))
                sample = result.absorbed.setdefault(rule.name, [])
                if len(sample) < PRECISION_SAMPLE and all(f.finding.program != program for f in sample):
                    sample.append(Found(finding, observations, time.monotonic() - began, known=rule.name))
            elif not known(finding, signatures):
                shrinking = True
                raise _NewFinding(Found(finding, observations, time.monotonic() - began))

    round_number, every = shard
    while not over():
        shrinking = False
        prop = given(programs(view_ops, write_ops, no_grad=no_grad))(check)
        prop = settings(max_examples=ROUND, database=None, deadline=None, derandomize=False,
                        suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                        phases=[Phase.generate, Phase.shrink])(prop)
        prop = hypothesis_seed(seed * 1_000_003 + round_number)(prop)
        try:
            prop()
        except _NewFinding as exc:
            found = reduce_steps(exc.found, frameworks, sandbox)
            rule = triaged(found.finding)
            found.known = None if rule is None else rule.name
            # once more: a finding the minimal program does not show again (a timeout under
            # load, a framework's nondeterminism) is listed as not reproduced, not confirmed
            found.flaky = found.flaky or still_found(found.finding, found.finding.program, frameworks, sandbox) is None
            result.programs += found.runs + 1
            signatures.add(found.finding.signature())
            reported.update(name for name in (exc.found.known, found.known) if name is not None)
            result.found.append(found)
        except FlakyFailure as exc:  # found once, not again when Hypothesis ran it a second time
            for inner in exc.exceptions:
                if isinstance(inner, _NewFinding):
                    inner.found.flaky = True
                    signatures.add(inner.found.finding.signature())
                    reported.update(name for name in (inner.found.known,) if name is not None)
                    result.found.append(inner.found)
        round_number += every
    result.seconds = time.monotonic() - began
    measure_precision(result, signatures, frameworks, sandbox)
    result.found = distinct(result.found)
    return result


def discover_in_parallel(frameworks: list[str], jobs: int, seconds: float | None = None,
                         max_programs: int | None = None, seed: int = 0,
                         case_timeout: float | None = None) -> Discovery:
    """``jobs`` runs of :func:`discover` at once, each in a process of its own with a sandbox
    of its own, on the shards of the seed's rounds (round k to run k mod ``jobs``), merged
    into one result (:func:`merged`). A program compiled by torch.compile costs a core for a
    fifth of a second or more, and one run uses one core: on n cores, n runs check about n
    times the programs in the same time. Each run has the whole time budget and its share of
    a program budget. With ``case_timeout`` None, programs run in the workers' own processes
    (no sandbox: tests)."""
    register_derived()  # the workers' programs name derived writes, which merging reads here
    if jobs == 1:
        return _sandboxed(frameworks, seconds, max_programs, seed, (0, 1), case_timeout, lambda: False)
    budgets = [None if max_programs is None else max_programs // jobs + (k < max_programs % jobs)
               for k in range(jobs)]
    # spawn, not fork: a forked worker would inherit whatever framework this process loaded
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        runs = [pool.submit(_shard, frameworks, seconds, budgets[k], seed, (k, jobs), case_timeout)
                for k in range(jobs)]
        return merged([run.result() for run in runs])


def _shard(frameworks: list[str], seconds: float | None, max_programs: int | None, seed: int,
           shard: tuple[int, int], case_timeout: float | None) -> Discovery:
    """One worker of discover_in_parallel: a run on its shard, with a sandbox of its own. It
    stops drawing once the process that started it is gone (killed: nobody would merge
    what it finds), instead of spending the rest of its budget."""
    parent = os.getppid()
    return _sandboxed(frameworks, seconds, max_programs, seed, shard, case_timeout, lambda: os.getppid() != parent)


def _sandboxed(frameworks: list[str], seconds: float | None, max_programs: int | None, seed: int,
               shard: tuple[int, int], case_timeout: float | None, stopped: Callable[[], bool]) -> Discovery:
    """A run of :func:`discover` with a sandbox of its own (none with ``case_timeout`` None),
    closed when it ends."""
    sandbox = None if case_timeout is None else Sandbox(case_timeout)
    try:
        return discover(frameworks, seconds, max_programs, seed, sandbox, shard, stopped)
    finally:
        if sandbox is not None:
            sandbox.close()


def merged(results: list[Discovery]) -> Discovery:
    """One result of several runs on shards of one seed (discover_in_parallel): programs,
    counts and refusals added up, the first refusal example of each reason, the rules'
    precision samples added up, the time the longest run took, and the findings of all the
    runs, earliest first, less repeats: two runs may each find and shrink a bug of the same
    kind (the same signature, or the same known rule), and a finding another run's stands for
    (distinct) goes too."""
    out = Discovery(list(results[0].frameworks), results[0].seed)
    out.room = list(results[0].room)
    out.seconds = max(r.seconds for r in results)
    out.first_bug = min((r.first_bug for r in results if r.first_bug is not None), default=None)
    for r in results:
        out.programs += r.programs
        out.decisions.update(r.decisions)
        out.triaged.update(r.triaged)
        out.drawn.update(r.drawn)
        out.refusals.update(r.refusals)
        out.explained.update(r.explained)
        out.known_by_framework.update(r.known_by_framework)
        for reason, example in r.refusal_examples.items():
            out.refusal_examples.setdefault(reason, example)
        for name, sample in r.absorbed.items():
            out.absorbed.setdefault(name, []).extend(sample)
        for name, (kept, sampled) in r.precision.items():
            was_kept, was_sampled = out.precision.get(name, (0, 0))
            out.precision[name] = (was_kept + kept, was_sampled + sampled)
    seen: set[object] = set()
    for found in sorted((f for r in results for f in r.found), key=lambda f: (f.flaky, f.seconds)):
        key = found.known if found.known is not None else found.finding.signature()
        if key not in seen:
            seen.add(key)
            out.found.append(found)
    out.found = distinct(sorted(out.found, key=lambda f: f.seconds))
    return out


def measure_precision(result: Discovery, signatures: set[tuple[str, str, frozenset[str]]], frameworks: list[str],
                      sandbox: Sandbox | None) -> None:
    """Shrink the programs each known-bug rule absorbed (Discovery.absorbed) and count those
    whose minimal form the rule still matches: a rule that absorbs programs of another shape
    hides bugs. A minimal form the rule no longer matches, of a kind not known yet, is a
    finding of its own (new, or another rule's). Runs after the budget."""
    for name, sample in result.absorbed.items():
        kept = 0
        for found in sample:
            shrunk = reduce_steps(found, frameworks, sandbox)
            result.programs += shrunk.runs
            rule = triaged(shrunk.finding)
            if rule is not None and rule.name == name:
                kept += 1
                continue
            shrunk.known = None if rule is None else rule.name
            if rule is None and known(shrunk.finding, signatures):
                continue
            signatures.add(shrunk.finding.signature())
            result.found.append(shrunk)
        result.precision[name] = (kept, len(sample))


def first_finding(program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
    """The first oracle's finding on one framework's run, in ORACLES' order: a program that
    puts a value in the wrong place also gives its twin and its gradient other values, and
    the model's finding is the one that says why."""
    for oracle in ORACLES:
        finding = oracle.check(program, observed, all_observed)
        if finding is not None:
            return finding
    return None


def still_found(finding: Finding, program: Program, frameworks: list[str],
                sandbox: Sandbox | None) -> tuple[Finding, list[Observation]] | None:
    """The same finding (first oracle and framework) on ``program``, if it shows it: in one
    run, or for a crash in one of CRASH_TRIES (a heap corruption is detected, as an abort or
    a hang, only when the allocator next trips over it)."""
    for _ in range(CRASH_TRIES if finding.oracle == "crash" else 1):
        observations = run_program(program, frameworks, sandbox)
        by_framework = {o.framework: observed_of(o) for o in observations}
        obs = by_framework.get(finding.framework)
        again = None if obs is None else first_finding(program, obs, by_framework)
        if again is not None and again.oracle == finding.oracle:
            return again, observations
    return None


def without_step(program: Program, index: int) -> Program | None:
    """The program less one step (and the steps that read a name it binds), or None when
    nothing would be left to write in a program without a gradient. Its twin is made again from what is left (none when
    the rewrite no longer applies)."""
    dropped = {program.steps[index].result} - {None}
    kept = []
    for i, step in enumerate(program.steps):
        if i == index or step.target in dropped or step.operand in dropped:
            if step.result is not None:
                dropped.add(step.result)
            continue
        kept.append(step)
    if not program.grad and not any(not s.is_view for s in kept):
        return None  # without a write, the values show nothing; a gradient needs none
    return with_twin(Program(program.shape, tuple(kept), program.grad), program.relation)


def with_twin(program: Program, relation: str) -> Program:
    twin = TWINS[relation](program) if relation else ()
    return Program(program.shape, program.steps, program.grad, twin, relation if twin else "")


def simpler(program: Program) -> list[Program]:
    """The program less its twin, less its gradient, less one step: every smaller program
    reduce_steps tries."""
    out = []
    if program.twin:
        out.append(Program(program.shape, program.steps, program.grad))
    if program.grad:
        out.append(with_twin(Program(program.shape, program.steps), program.relation))
    out += [p for p in (without_step(program, i) for i in range(len(program.steps))) if p is not None]
    return out


def reduce_steps(found: Found, frameworks: list[str], sandbox: Sandbox | None) -> Found:
    """Hypothesis shrinks towards a minimal program of the kinds not yet known; this then
    removes every step the finding does not need (one at a time, until none can go)."""
    finding, observations, runs = found.finding, found.observations, 0
    changed = True
    while changed:
        changed = False
        for smaller in simpler(finding.program):
            runs += 1
            again = still_found(finding, smaller, frameworks, sandbox)
            if again is not None:
                finding, observations = again
                changed = True
                break
    return Found(finding, observations, found.seconds, found.flaky, runs, found.known)


# ---- writing what was found


def finding_case_text(found: Found, number: int, seed: int) -> str:
    """The minimal program as a case in the corpus format, with every framework's
    observations as its expectations (shared where the frameworks agree)."""
    f = found.finding
    case_id = f"discovered.{f.oracle.replace('-', '_')}.{f.framework}.n{number}"
    title = f"{f.framework}: {f.summary} ({f.program.describe()})"
    case = case_of(f.program, case_id, title)
    shared, overrides = split(case, found.observations)
    reasons = {fw: f"conformance discover --seed {seed}, oracle {f.oracle}: {f.summary}"
               + (f" ({'; '.join(f.details)})" if f.details else "")
               + ("" if found.known is None else f" ({found.status()})")
               if fw == f.framework else
               f"conformance discover --seed {seed}: what {fw} did with the program (another framework's finding)"
               for fw in overrides}
    lines = expect_lines(case, shared, overrides)
    out: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("reason: ") and "TODO" in stripped:
            fw = out_framework(out)
            line = line[: len(line) - len(line.lstrip())] + "reason: " + json.dumps(reasons[fw])
        out.append(line)
    for o in found.observations:
        if o.status != "ran":
            out.append(f"# {o.framework}: {o.status.replace('_', ' ')}: {o.reason}")
    return f.program.case_text(case_id, title, tuple(out))


def out_framework(lines: list[str]) -> str:
    """The framework whose override the last ``  fw:`` line opened."""
    for line in reversed(lines):
        if line.startswith("  ") and not line.startswith("    ") and line.rstrip().endswith(":"):
            return line.strip()[:-1]
    raise ValueError("no framework override opened")


def distinct(found: list[Found]) -> list[Found]:
    """The findings less those another one already stands for: same framework and kind, and
    a subset of its operations (found before that one was known)."""
    out = []
    for f in found:
        others = {g.finding.signature() for g in found if g is not f and g.finding.signature() != f.finding.signature()}
        kind, fw, ops = f.finding.signature()
        if any(k == kind and w == fw and o < ops for k, w, o in others):
            continue
        out.append(f)
    return out


def findings_page(result: Discovery) -> str:
    rate = result.programs / result.seconds if result.seconds else 0.0
    confirmed = [f for f in result.found if not f.flaky]
    lines = ["# Findings of `conformance discover`", "",
             f"Seed {result.seed}, frameworks {', '.join(result.frameworks)}: {result.programs} programs in "
             f"{result.seconds:.0f} s ({rate:.1f} programs/s), {len(confirmed)} finding(s)"
             + (f", {len(result.found) - len(confirmed)} not reproduced" if len(confirmed) < len(result.found) else "")
             + ". Each finding is the minimal program it was shrunk to; its case (with every framework's observations) "
             "is in `findings.yaml` beside this page. How the oracles work: docs/discover.md.", ""]
    lines += ["## Per framework", "",
              "Of the programs, how many each framework refused or did not run, how many it ran to the end whose "
              "values the reference model explains, the new findings on it (confirmed) and the programs that "
              "showed a known bug on it.", "",
              "| framework | programs | refused or not run | explained by the model | new findings | programs showing "
              "a known bug |", "|---|---:|---:|---:|---:|---:|"]
    for fw in result.frameworks:
        new = sum(1 for f in confirmed if f.finding.framework == fw and f.known is None)
        lines.append(f"| {fw} | {result.programs} | {result.refused(fw)} | {result.explained[fw]} | {new} | "
                     f"{result.known_by_framework[fw]} |")
    lines += ["", "## Findings", ""]
    if confirmed:
        lines += _findings_table(result, confirmed)
    else:
        lines.append("No finding.")
    flaky = [f for f in result.found if f.flaky]
    if flaky:
        lines += ["", "## Not reproduced", "",
                  "Found once, but the minimal program did not show it when run again (a timeout under load, a "
                  "framework's nondeterminism): not confirmed, not in `findings.yaml`.", ""]
        lines += _findings_table(result, flaky)
    lines += ["", "## Known bugs", ""]
    if result.triaged:
        lines += ["Programs that showed a bug already known upstream or recorded in the corpus "
                  "(conformance/discover/triage.py): the first is a finding above, with its minimal program; the "
                  "others are only counted. Precision: of the first programs a rule absorbed after its finding (up "
                  f"to {PRECISION_SAMPLE}), how many still have its shape once shrunk (one that does not is a "
                  "finding above).", "", "| known bug | programs | precision | upstream | corpus cases |",
                  "|---|---|---|---|---|"]
        for rule in KNOWN:
            if result.triaged[rule.name]:
                kept, sampled = result.precision.get(rule.name, (0, 0))
                lines.append(f"| {rule.summary} | {result.triaged[rule.name]} | "
                             + (f"{kept} of {sampled}" if sampled else "–")
                             + f" | {' '.join(rule.links)} | {', '.join(f'`{c}`' for c in rule.cases)} |")
    else:
        lines.append("No program showed a known bug.")
    lines += ["", "## What the generated programs showed", "",
              "Per view operation and framework, how many programs it was a view or a copy in (where every "
              "explanation of the framework's observations agrees), and how many programs each framework refused "
              "or could not run (an error at a step, an operation it lacks).", "",
              "| operation | " + " | ".join(result.frameworks) + " |", "|---|" + "---|" * len(result.frameworks)]
    for op in sorted({op for op, _, _ in result.decisions}):
        cells = []
        for fw in result.frameworks:
            v, c = result.decisions[(op, fw, "view")], result.decisions[(op, fw, "copy")]
            cells.append(f"view {v}, copy {c}" if v or c else "–")
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    lines.append("| (refused or not run) | " + " | ".join(str(result.refused(fw)) for fw in result.frameworks) + " |")
    lines += ["", "## Refused or not run, by reason", "",
              "Per framework, the programs it refused (by the error kind of docs/case-format.md) or did not run, "
              "in per cent of the programs.", "", "| framework | refused or not run | by reason |", "|---|---:|---|"]
    for fw in result.frameworks:
        reasons = sorted(((n, why) for (f, why), n in result.refusals.items() if f == fw), reverse=True)
        share = 100.0 * result.refused(fw) / result.programs if result.programs else 0.0
        lines.append(f"| {fw} | {share:.1f} % | " + (", ".join(f"{why} {n}" for n, why in reasons) or "–") + " |")
    examples = sorted(result.refusal_examples.items())
    if examples:
        lines += ["", "The first program refused for each reason:", ""]
        lines += [f"- {fw}, {why}: {for_markdown(text)}" for (fw, why), text in examples]
    lines += ["", "## Operations drawn", "",
              f"The programs draw from {len(result.room)} operations: those of conformance/discover/programs.py whose "
              "table entry every framework of the run with changeable arrays has (run.room). Steps of each drawn, "
              "the twins' included:", "", "| operation | vocabulary key | steps |", "|---|---|---:|"]
    for name in result.room:
        key = (VIEWS_BY_NAME[name].key if name in VIEWS_BY_NAME else WRITES_BY_NAME[name].key)
        lines.append(f"| {name} | `{key}` | {result.drawn[name]} |")
    return "\n".join(lines) + "\n"


def _findings_table(result: Discovery, found: list[Found]) -> list[str]:
    lines = ["| # | oracle | framework | program | what | status | found after |", "|---|---|---|---|---|---|---|"]
    for found_one in found:
        n = result.found.index(found_one) + 1
        f = found_one.finding
        what = f.summary + (": " + "; ".join(f.details) if f.details else "")
        lines.append(f"| {n} | {f.oracle} | {f.framework} | `{f.program.describe()}` on x of shape "
                     f"{list(f.program.shape)} | {what.replace('|', '/')} | {found_one.status()} | "
                     f"{found_one.seconds:.1f} s |")
    return lines


def write(result: Discovery, out: Path) -> list[Path]:
    """``findings.md``, ``findings.json`` and, when something was found, ``findings.yaml``
    (and ``upstream.md``, the drafts of upstream reports of the new findings) in ``out``,
    written as one step (conformance.report.outputs: each beside its place first,
    then renamed over it, so a link at a name is replaced, never written through); a
    ``findings.yaml`` or ``upstream.md`` of an earlier run goes in the same step when this
    one has none."""
    register_derived()  # a finding's steps may name derived writes (a result made elsewhere)
    numbered = [(n, found) for n, found in enumerate(result.found, 1) if not found.flaky]
    texts = [finding_case_text(found, n, result.seed) for n, found in numbered]
    cases = "".join(text if i == 0 else text.split("\n", 1)[1] for i, text in enumerate(texts))
    files = {out / "findings.md": findings_page(result), out / "findings.json": json.dumps({
        "seed": result.seed, "frameworks": result.frameworks, "programs": result.programs,
        "seconds": round(result.seconds, 3),
        "findings": [{"oracle": f.finding.oracle, "framework": f.finding.framework,
                      "program": f.finding.program.describe(), "shape": list(f.finding.program.shape),
                      "summary": f.finding.summary, "details": list(f.finding.details),
                      "seconds": round(f.seconds, 3), "reproduced": not f.flaky, "status": f.status()}
                     for f in result.found],
        "known": {rule.name: result.triaged[rule.name] for rule in KNOWN if result.triaged[rule.name]},
        "precision": {name: {"kept": kept, "sampled": sampled} for name, (kept, sampled) in result.precision.items()},
        "first_bug_seconds": None if result.first_bug is None else round(result.first_bug, 3),
        "refused": {fw: result.refused(fw) for fw in result.frameworks},
        "explained": {fw: result.explained[fw] for fw in result.frameworks},
        "known_by_framework": {fw: result.known_by_framework[fw] for fw in result.frameworks},
        "refusals": {fw: {why: n for (f, why), n in sorted(result.refusals.items()) if f == fw}
                     for fw in result.frameworks},
        "drawn": {name: result.drawn[name] for name in result.room},
    }, indent=1) + "\n"}
    drafts = [draft_report(found, n, text, result.seed) for (n, found), text in zip(numbered, texts)
              if found.known is None]
    if texts:
        files[out / "findings.yaml"] = cases
    if drafts:
        files[out / "upstream.md"] = "\n".join(
            ["# Upstream report drafts", "",
             "One per new finding, ready to file where the behaviour is a bug after a reading by hand: a title, a "
             "plain-Python reproduction that runs without the suite, what was expected and what happened, the "
             "versions. A finding that is a documented difference or a bug of the suite is not filed.", "", *drafts])
    stale = [path for path, wanted in ((out / "findings.yaml", texts), (out / "upstream.md", drafts)) if not wanted]
    return write_files(files, remove=stale)


def draft_report(found: Found, number: int, case_text: str, seed: int) -> str:
    """The draft of an upstream report of one finding: its title, the plain-Python snippet of
    its case on the framework (conformance.site.repro, generated from the parsed steps), what
    the oracle expected against what happened, and the versions."""
    f = found.finding
    loaded = load_text(case_text, "<conformance discover>", registry.vocabulary(), draft=True)
    observation = next((o for o in found.observations if o.framework == f.framework), None)
    version = observation.version if observation is not None and observation.version else "unknown"
    lines = [f"## {number}. [{f.framework} {version}] {f.summary}", "",
             f"Found by `conformance discover --seed {seed}` (oracle `{f.oracle}`, docs/discover.md), shrunk to: "
             f"`{f.program.describe()}` on an input of shape {list(f.program.shape)}.", ""]
    if loaded.cases and f.framework in repro.FRAMEWORKS:
        snippet = repro.snippet(loaded.cases[0], f.framework)
        lines += ["Reproduction" + ("" if snippet.runnable else " (a step is not spelled: see its comment)") + ":",
                  "", "```python", snippet.text.rstrip(), "```", ""]
    else:
        lines += [f"No plain-Python reproduction is written for {f.framework} yet: the case is in findings.yaml.", ""]
    lines += ["Expected (what the documented semantics of each operation give) and what happened:", ""]
    lines += [f"- {detail}" for detail in f.details] or ["- (see the summary)"]
    others = [o for o in found.observations if o.framework != f.framework and o.status == "ran"]
    if others:
        lines += ["", "The same program elsewhere: " + ", ".join(
            f"{o.framework} {o.version or ''}".strip() + (" refuses it" if o.error else " runs it") for o in others)
            + " (the observations are the case's expectations in findings.yaml)."]
    lines += ["", f"Versions: {f.framework} {version}, Python {platform.python_version()}, {platform.platform()}.", ""]
    return "\n".join(lines)
