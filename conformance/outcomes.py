"""The outcome of an item (one case on one framework): its verdicts' names and the record
the engine makes of it (:class:`Outcome`: each step, what each expectation observed, what
did not hold), in one place, below the engine that makes it and the reports, the plugin
and the outcome store that read it.

The engine gives one of ``pass``, ``fail``, ``refused``, ``unchecked``, ``error``,
``not_applicable`` or ``skipped``;
the results file adds ``known_divergence`` (a pass under a per-framework override). Every
stage takes the names from here; this module imports only the model's locations and keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.model import Location, ResultKey

PASS = "pass"  # every expectation held
FAIL = "fail"  # an expectation did not hold
# the item has no verdict: the case broke one of the suite's limits while it ran
# (conformance.limits), the framework process it ran in was lost (conformance.run.sandbox),
# or its case file is not valid
ERROR = "error"
# the framework refused a mutation the case makes and does not expect to be refused: its
# arrays are immutable (JAX, TensorFlow's tf.Tensor; the adapter's Immutability declaration).
# That refusal is the framework's verdict on the case, measured (the step, the exception),
# neither a pass nor a failure of the case's expectation, which is about frameworks whose
# arrays can change
REFUSED = "refused"
# the steps ran and no expectation failed, but every expectation was about something this
# framework cannot observe (a version counter on NumPy, a recorded view on JAX): nothing was
# compared, so the item is not a pass (the reason lists what could not be observed)
UNCHECKED = "unchecked"
NOT_APPLICABLE = "not_applicable"  # the framework has no counterpart (or the case says so)
SKIPPED = "skipped"  # this environment cannot run it (framework not installed, no GPU)
# passed under a per-framework override: the framework behaves differently from the
# shared expectation, for the reason the case gives (results file and reports only)
KNOWN_DIVERGENCE = "known_divergence"

# every outcome of the results file, in the order the reports count them
OUTCOMES = (PASS, KNOWN_DIVERGENCE, REFUSED, UNCHECKED, FAIL, ERROR, NOT_APPLICABLE, SKIPPED)


@dataclass
class ErrorInfo:
    type: str  # qualified exception type name
    message: str
    kind: str  # neutral error kind


@dataclass
class StepRecord:
    number: int
    text: str
    location: Location
    status: str = "not_run"  # ok / error / not_run
    error: ErrorInfo | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class Mismatch:
    """One expectation that did not hold."""

    what: str  # e.g. "values of y", "shares_memory(y, x)"
    expected: Any
    observed: Any
    location: Location | None = None
    step: int | None = None  # the step that last bound / failed, when known
    detail: str = ""


@dataclass
class Outcome:
    case_id: str
    framework: str
    verdict: str
    reason: str = ""
    steps: list[StepRecord] = field(default_factory=list)
    observed: dict[ResultKey, Any] = field(default_factory=dict)  # what each expectation observed
    mismatches: list[Mismatch] = field(default_factory=list)
    override_reason: str | None = None
    unobservable: list[str] = field(default_factory=list)  # expectations this framework cannot observe
    # each production of the case (ir.productions: ``y = op(x)``) whose pair the expectation
    # relates, as it was right after its step, by the memory probe: {"step", "result", "input",
    # "class"} (a kinds.relations class: same_object, view or copy). The expectations are
    # checked at the end of the case, when a later step may have moved a buffer (Paddle's
    # contiguous() re-buffers its receiver in place). Empty for an outcome that checked nothing
    productions: list[dict[str, Any]] = field(default_factory=list)
    # a compiled mode's intermediates the expectations mention, which the function does not
    # return: observed in a second compile of the function that returns them as well
    # (conformance/run/compiled.py), reported apart from what the function itself returned
    observed_apart: list[str] = field(default_factory=list)


# the classes an Outcome is made of: what conformance.codec may build when the sandbox's
# parent reads one, or the outcome store an entry
OUTCOME_TYPES: tuple[type, ...] = (Outcome, StepRecord, ErrorInfo, Mismatch, Location, ResultKey)
