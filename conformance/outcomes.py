"""The outcome of an item (one case on one framework): its names, in one place.

The engine gives one of ``pass``, ``fail``, ``refused``, ``error``, ``not_applicable`` or
``skipped``;
the results file adds ``known_divergence`` (a pass under a per-framework override). Every
stage takes the names from here; this module imports nothing.
"""

from __future__ import annotations

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
NOT_APPLICABLE = "not_applicable"  # the framework has no counterpart (or the case says so)
SKIPPED = "skipped"  # this environment cannot run it (framework not installed, no GPU)
# passed under a per-framework override: the framework behaves differently from the
# shared expectation, for the reason the case gives (results file and reports only)
KNOWN_DIVERGENCE = "known_divergence"

# every outcome of the results file, in the order the reports count them
OUTCOMES = (PASS, KNOWN_DIVERGENCE, REFUSED, FAIL, ERROR, NOT_APPLICABLE, SKIPPED)
