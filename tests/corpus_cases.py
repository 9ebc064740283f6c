"""The corpus's cases, loaded once per test process, for the tests that run every case in
this process (tests/test_error_kinds.py, tests/test_warning_order.py). A case file that does
not load fails them with its first error."""

from __future__ import annotations

import functools
from pathlib import Path

from conformance import registry
from conformance.load.reader import load_file
from conformance.model import Case

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def corpus() -> tuple[Case, ...]:
    vocab = registry.vocabulary()
    cases: list[Case] = []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        result = load_file(path, vocab, display_path=str(path.relative_to(ROOT)))
        assert not result.errors, result.errors[0][1].render()
        cases += result.cases
    return tuple(cases)
