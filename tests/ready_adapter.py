"""The registered adapter of a framework, ready to run a case in this test's process: the
test skips where the framework is not installed, with the adapter's reason."""

from __future__ import annotations

from typing import Any

import pytest

from conformance import registry


def ready_adapter(name: str, setup: bool = True) -> Any:
    """The adapter of ``name``, set up (its framework imported and configured) unless
    ``setup`` is False; skips the test where the framework is unavailable."""
    adapter = registry.get_adapter(name)
    if adapter.unavailable():
        pytest.skip(adapter.unavailable())
    if setup:
        adapter.setup()
    return adapter
