"""Oracles: each decides, from what the frameworks did with one program, whether that is a
finding. None needs an expectation written by hand; each says why it is sound.

* :class:`Crash`: the framework's process died or hung on the program (the sandbox reports
  it). A library call on valid arguments must never crash the interpreter.
* :class:`ModelConsistency`: no assignment of view or copy to the program's view steps (and of
  in place or rebind to its augmented assignments) makes the reference model reproduce what
  the framework holds (conformance.discover.model). Whatever a framework documents, its view
  operations read the elements their documented semantics name; so a value no assignment
  explains was put in the wrong place, lost or duplicated, and memory shared where the model
  has no common element is shared where nothing should be.
* :class:`DocumentedViews`: explanations exist, but none in which every operation the
  framework's documentation lists as returning a view (conformance/data/coverage/*-views.yaml,
  the operations documented as views unconditionally) is a view.
* :class:`CrossMode`: a compiled mode holds other values than its eager framework for the same
  program, where both ran it without an error. torch.compile, jax.jit and tf.function promise
  eager's values.

Programs a framework refuses (an error at a step) are not findings: refusing is documented
behaviour of many view and in-place operations (a write through an expanded or read-only
view, a view that strides cannot express).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from ruamel.yaml import YAML

from conformance.discover.model import VIEW, explanations
from conformance.discover.programs import VIEWS_BY_NAME, Program

COVERAGE = Path(__file__).resolve().parent.parent / "data" / "coverage"


@dataclass(frozen=True)
class Finding:
    oracle: str
    framework: str
    program: Program
    summary: str
    details: tuple[str, ...] = ()

    def signature(self) -> tuple[str, str, frozenset[str]]:
        """The framework, the view operations the program uses and, for a crash, the writes
        too. A finding is known when one of the same framework (and kind: crash or not) used
        a subset of its operations: a program that adds a slice to a known bug's program
        shows the same bug (:func:`known`)."""
        ops = {s.op for s in self.program.steps if s.is_view or self.oracle == "crash"}
        return ("crash" if self.oracle == "crash" else "wrong", self.framework, frozenset(ops))


def known(finding: Finding, signatures: set[tuple[str, str, frozenset[str]]]) -> bool:
    kind, framework, ops = finding.signature()
    return any(k == kind and f == framework and o <= ops for k, f, o in signatures)


@dataclass
class Observed:
    """One framework's run of a program, as conformance.tools.observe reports it."""

    framework: str
    status: str  # ran / refused / not_applicable / skipped / error
    reason: str = ""
    values: dict[str, Any] = field(default_factory=dict)  # values.NAME, shares_memory.A.B -> observed
    error: dict[str, Any] | None = None
    compiles: str | None = None  # the eager framework of a compiled mode


class Oracle:
    name: ClassVar[str]

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        raise NotImplementedError


class Crash(Oracle):
    name = "crash"

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        if observed.status != "error":
            return None
        return Finding(self.name, observed.framework, program, f"the framework process was lost: {observed.reason}")


def _ran_cleanly(observed: Observed) -> bool:
    return observed.status == "ran" and observed.error is None


class ModelConsistency(Oracle):
    name = "model"

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        if not _ran_cleanly(observed):
            return None
        found, closest = explanations(program, observed.values)
        if found:
            return None
        return Finding(self.name, observed.framework, program,
                       "no composition of the operations' documented semantics gives what the framework holds",
                       tuple(closest))


@cache
def documented_views(framework: str) -> frozenset[str]:
    """The vocabulary keys the framework's documentation lists as returning a view."""
    path = COVERAGE / f"{framework}-views.yaml"
    if not path.exists():
        return frozenset()
    doc = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    return frozenset(key for entry in doc.get("operations", []) for key in entry.get("keys", []))


class DocumentedViews(Oracle):
    name = "documented-view"

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        if not _ran_cleanly(observed):
            return None
        documented = documented_views(observed.compiles or observed.framework)
        fixed = {i: VIEW for i, s in enumerate(program.steps)
                 if s.is_view and not VIEWS_BY_NAME[s.op].conditional and VIEWS_BY_NAME[s.op].key in documented}
        if not fixed or not explanations(program, observed.values)[0]:
            return None
        if explanations(program, observed.values, fixed)[0]:
            return None
        ops = sorted({program.steps[i].op for i in fixed})
        return Finding(self.name, observed.framework, program,
                       f"documented as a view ({', '.join(ops)}), but only a copy explains what the framework holds")


class CrossMode(Oracle):
    name = "cross-mode"

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        eager = all_observed.get(observed.compiles or "")
        if observed.compiles is None or eager is None or not (_ran_cleanly(observed) and _ran_cleanly(eager)):
            return None
        differ = [f"{key}: eager {eager.values[key]}, compiled {observed.values[key]}"
                  for key in sorted(eager.values.keys() & observed.values.keys())
                  if key.startswith("values.") and eager.values[key] != observed.values[key]]
        if not differ:
            return None
        return Finding(self.name, observed.framework, program,
                       f"compiled, the program holds other values than eager {observed.compiles}", tuple(differ))


ORACLES: tuple[Oracle, ...] = (Crash(), ModelConsistency(), DocumentedViews(), CrossMode())
