"""The ``slow`` marker of the tool's own tests: ``@pytest.mark.slow(reason="...")`` marks a
test that takes seconds, not milliseconds, and says what it spends them on.
``pytest -n auto -m "not slow" tests/`` is the quick loop (CONTRIBUTING.md); the README's
command and CI run them all. A slow mark without a reason is refused at collection."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    missing = [item.nodeid for item in items for mark in item.iter_markers("slow")
               if not (isinstance(mark.kwargs.get("reason"), str) and mark.kwargs["reason"].strip())]
    if missing:
        raise pytest.UsageError(f"{missing[0]}: @pytest.mark.slow needs reason=\"...\", what the test spends its "
                                f"time on ({len(missing)} marks without one)")
