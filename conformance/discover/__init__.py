"""Discovery (``conformance discover``): generated programs over the vocabulary, run on every
framework, judged by oracles that need no hand-written expectation, and each finding shrunk
to a minimal program written as a case (docs/discover.md).

programs: the operations, their documented semantics on index arrays, a program as a case;
generate: the Hypothesis strategies; model: the reference model of strided memory;
oracles: what counts as a finding, and why; run: the loop, the shrinking, what is written.
"""
