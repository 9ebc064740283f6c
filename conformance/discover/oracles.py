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
* :class:`Gradient`: the gradient autograd gives is not the gradient of the values the
  framework computed. The model, with the view/copy assignment that explains the framework's
  values, is the function the framework computed; its derivative by finite differences (the
  complex step, exact to rounding for these polynomial programs: model.finite_difference_gradient)
  is the gradient every autograd documents.
* :class:`Metamorphic`: the program and its twin (a rewrite that cannot change what any step
  reads: in-place writes into unaliased tensors made out of place, clones after the last
  write; conformance.discover.programs.TWINS) hold other values or gradients, or the twin is
  refused where the program was not.
* :class:`CrossMode`: a compiled mode holds other values or gradients than its eager
  framework for the same program, where both ran it without an error. torch.compile, jax.jit
  and tf.function promise eager's values.
* :class:`Refusal`: a framework ran without an error what another refused as unsafe (an
  overlapping write, a write into a tensor saved for the backward, into a leaf), in the same
  memory situation: a compiled mode against its eager framework, or two eager frameworks
  whose view steps before the refused one were views (or copies) in both.

Programs a framework refuses (an error at a step) are not findings by themselves: refusing is documented
behaviour of many view and in-place operations (a write through an expanded or read-only
view, a view that strides cannot express).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from ruamel.yaml import YAML

from conformance.discover.model import VIEW, decision_points, explanations, finite_difference_gradient, predict
from conformance.discover.programs import SAME_VALUES, TWIN, VIEWS_BY_NAME, WRITES_BY_NAME, Program

COVERAGE = Path(__file__).resolve().parent.parent / "data" / "coverage"


@dataclass(frozen=True)
class Finding:
    oracle: str
    framework: str
    program: Program
    summary: str
    details: tuple[str, ...] = ()

    def signature(self) -> tuple[str, str, frozenset[str]]:
        """The kind (crash, gradient, metamorphic, or a wrong value), the framework and the
        operations that characterise it: a wrong value's view operations and derived writes
        (its other writes are only the probe that shows where a view reads; a derived write's
        function is NumPy's, which a framework may compute otherwise: conformance.discover.
        derived), every operation for the other kinds
        (the in-place operation autograd or the rewrite got wrong matters as much as the
        view). A finding is known when one of the same kind and framework had a subset of its
        operations: a program that adds a slice to a known bug's program shows the same bug
        (:func:`known`)."""
        kind = self.oracle if self.oracle in ("crash", "gradient", "metamorphic", "refusal") else "wrong"
        steps = self.program.steps
        ops = {s.op for s in steps if s.is_view or kind != "wrong" or WRITES_BY_NAME[s.op].derived}
        return (kind, self.framework, frozenset(ops))


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


def _names(key: str) -> list[str]:
    return key.split(".")[1:]


def parts(program: Program, values: dict[str, Any]) -> list[tuple[str, Program, dict[str, Any]]]:
    """The program and, if it has one, its twin, each with the observations of its own names
    (the twin's without their suffix): ("", program, ...), ("twin", twin, ...)."""
    own = {k: v for k, v in values.items() if not any(n.endswith(TWIN) for n in _names(k))}
    out = [("", program, own)]
    twin = program.twin_program()
    if twin is not None:
        suffixed = {k: v for k, v in values.items() if _names(k) and all(n.endswith(TWIN) for n in _names(k))}
        out.append(("twin", twin, {k.split(".")[0] + "." + ".".join(n[: -len(TWIN)] for n in _names(k)): v
                                   for k, v in suffixed.items()}))
    return out


def _label(part: str, text: str) -> str:
    return f"{part}: {text}" if part else text


def gradients_differ(got: Any, want: np.ndarray) -> str | None:
    """Why ``got`` (an observed gradient, None for none) is not ``want``, or None. Rounding
    allowance: 1e-9 of the largest component (the loss sums squares of values up to about
    1e8, so float64 rounding of any path stays below it)."""
    if got is None:
        return None if not np.any(want) else "no gradient"
    arr = np.asarray(got, dtype=np.float64)
    if arr.shape != want.shape:
        return f"shape {list(arr.shape)}"
    scale = max(1.0, float(np.max(np.abs(want))))
    if np.all(np.abs(arr - want) <= 1e-9 * scale):
        return None
    return "values"


class ModelConsistency(Oracle):
    name = "model"

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        if not _ran_cleanly(observed):
            return None
        for part, prog, values in parts(program, observed.values):
            found, closest = explanations(prog, values)
            if not found:
                return Finding(self.name, observed.framework, program,
                               _label(part, "no composition of the operations' documented semantics gives what "
                                      "the framework holds"), tuple(closest))
        return None


class Gradient(Oracle):
    name = "gradient"

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        if not program.grad or not _ran_cleanly(observed):
            return None
        for part, prog, values in parts(program, observed.values):
            if "grad.x0" not in values:
                continue  # no notion of a gradient
            found, _ = explanations(prog, values)
            if not found or any(p.undefined or p.gradient_unmodelled for p in (predict(prog, d) for d in found)):
                continue  # the model oracle's finding, values no documentation defines, or a gradient not modelled
            wanted = [finite_difference_gradient(prog, decisions) for decisions in found]
            why = [gradients_differ(values["grad.x0"], want) for want in wanted]
            if all(why):
                return Finding(self.name, observed.framework, program,
                               _label(part, "the gradient is not the derivative of the values the framework "
                                      f"computed ({why[0]})"),
                               (f"grad of x0: finite differences {wanted[0].tolist()}, "
                                f"framework {values['grad.x0']}",))
        return None


def _close(a: Any, b: Any) -> bool:
    """Equal to 1e-9 of the largest finite magnitude (at least 1), an infinity equal to
    itself, NaN to NaN (a derived write's ``acos_`` of 100 is NaN in both)."""
    if a is None or b is None:
        return a is b
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        return False
    finite = np.abs(x[np.isfinite(x)])
    scale = max(1.0, float(finite.max()) if finite.size else 1.0)
    with np.errstate(invalid="ignore"):
        close = (np.abs(x - y) <= 1e-9 * scale) | (x == y) | (np.isnan(x) & np.isnan(y))
    return bool(close.all())


def twin_steps(program: Program) -> set[int]:
    """The step numbers (from 1, as errors give them) of the twin's steps in the case."""
    # with a gradient each part is x = x0 * 1.0, its steps, its loss and its backward
    extra = 3 if program.grad else 0
    own = len(program.steps) + extra
    return set(range(own + 1, own + len(program.twin) + extra + 1)) if program.twin else set()


class Metamorphic(Oracle):
    name = "metamorphic"

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        if not program.twin or observed.status != "ran":
            return None
        if observed.error is not None:
            if observed.error.get("at") in twin_steps(program):
                return Finding(self.name, observed.framework, program,
                               f"the {program.relation} twin was refused where the program was not",
                               (f"{observed.error.get('type')}: {observed.error.get('message')}",))
            return None
        if program.relation not in SAME_VALUES:
            return None  # each part's values are the model's to judge
        own, twin = (values for _, _, values in parts(program, observed.values))
        differ = [f"{key}: program {own[key]}, twin {twin[key]}" for key in sorted(own.keys() & twin.keys())
                  if key.split(".")[0] in ("values", "grad") and not _close(own[key], twin[key])]
        if not differ:
            return None
        return Finding(self.name, observed.framework, program,
                       f"the {program.relation} twin holds other values or gradients than the program", tuple(differ))


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
        own = parts(program, observed.values)[0][2]
        if not fixed or not explanations(program, own)[0]:
            return None
        if explanations(program, own, fixed)[0]:
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
                  if key.split(".")[0] in ("values", "grad") and not _close(eager.values[key], observed.values[key])]
        if not differ:
            return None
        return Finding(self.name, observed.framework, program,
                       f"compiled, the program holds other values or gradients than eager {observed.compiles}",
                       tuple(differ))


# the refusals that say a program is unsafe (docs/case-format.md, "Error kinds"): an in-place
# write into memory another element of the write reads, into a tensor autograd saved for the
# backward, into a leaf that requires grad
UNSAFE = frozenset({"overlapping_write", "modified_saved_tensor", "inplace_on_leaf"})


def refused_step(program: Program, error: dict[str, Any]) -> int | None:
    """The index in ``program.steps`` of the step an error was at, len(steps) for the loss or
    its backward, None for a step of the twin (or no step)."""
    at = error.get("at")
    if not isinstance(at, int) or at in twin_steps(program):
        return None
    index = at - (2 if program.grad else 1)
    return index if index >= 0 else None


def decided(program: Program, values: dict[str, Any]) -> dict[int, str] | None:
    """What every step the model leaves open was (a view or a copy, an augmented assignment
    in place or a rebinding: model.decision_points), where every explanation of ``values``
    agrees on all of them; None where they do not (or none explains them)."""
    found, _ = explanations(program, values)
    points = decision_points(program)
    if not found or any(len({f.get(i) for f in found}) != 1 for i in points):
        return None
    return {i: found[0][i] for i in points if i in found[0]}


class Refusal(Oracle):
    """Refusal consistency (DeepREL's oracle, on refusals): a framework ran without an error
    a program another refused as unsafe (UNSAFE) in the same memory situation. A compiled
    mode and its eager framework are always in the same situation: torch.compile promises
    eager's behaviour, and running what eager refuses as unsafe (a write through an expanded
    view) is how its silent wrong values show. Two eager frameworks are in the same situation
    when every view step before the refused step was a view, or a copy, in both, and every
    augmented assignment wrote in place, or rebound, in both (the model's explanations of
    what each held, agreeing): the refused write then reads and writes the same memory on
    both. A compiled mode refusing what eager runs is not judged (compilers
    document refusals of their own)."""

    name = "refusal"

    def check(self, program: Program, observed: Observed, all_observed: dict[str, Observed]) -> Finding | None:
        if not _ran_cleanly(observed):
            return None
        for other in all_observed.values():
            if (other.framework == observed.framework or other.status != "ran" or other.error is None
                    or other.error.get("kind") not in UNSAFE):
                continue
            if observed.compiles is not None:
                if other.framework != observed.compiles:
                    continue
            elif other.compiles is not None or not self._same_situation(program, other, observed):
                continue
            at = other.error.get("at")
            # the oracles before this one found nothing: where the model defines the program,
            # the runner's values (and gradient) are the documented ones, and the refusal may
            # be the refuser's caution rather than the runner's bug; the summary says which
            own = parts(program, observed.values)[0][2]
            found, _ = explanations(program, own)
            defined = bool(found) and not any(predict(program, d).undefined for d in found)
            how = ("to the values the documented semantics give" + (" and their gradient" if program.grad else "")
                   if defined else "a write whose result no documentation defines")
            return Finding(self.name, observed.framework, program,
                           f"runs, {how}, what {other.framework} refuses as unsafe ({other.error.get('kind')}, "
                           f"at step {at})",
                           (f"{other.framework}: {other.error.get('type')}: {other.error.get('message')}",))
        return None

    @staticmethod
    def _same_situation(program: Program, refuser: Observed, runner: Observed) -> bool:
        assert refuser.error is not None
        index = refused_step(program, refuser.error)
        if index is None:
            return False
        own = parts(program, runner.values)[0][2]
        before = Program(program.shape, program.steps[:index], program.grad)
        theirs = decided(before, parts(program, refuser.values)[0][2])
        ours = decided(program, own)
        return theirs is not None and ours is not None and all(ours.get(i) == d for i, d in theirs.items())


ORACLES: tuple[Oracle, ...] = (Crash(), ModelConsistency(), DocumentedViews(), Gradient(), Metamorphic(), CrossMode(),
                               Refusal())
