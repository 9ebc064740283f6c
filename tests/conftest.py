from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

# pytester's in-process runs drop the modules they imported afterwards, and NumPy's C
# extension refuses to be imported twice in one process: import it once up front so that
# it outlives every inline run.
import numpy  # noqa: F401
import pytest

# the fake adapter lives beside the tests
sys.path.insert(0, str(Path(__file__).parent))


class _FrameworkImportOrder(importlib.abc.MetaPathFinder):
    """Several tests import frameworks into this process (the adapters' own tests, the
    spellings, the exception types), in whatever order pytest runs them, and two orders break
    a process: MindSpore 2.10 cannot be imported after Paddle 3.3.1 (ImportError: undefined
    symbol dnnl_threadpool_interop_stream_create), and Paddle's import after TensorFlow 2.21's
    crashes it (SIGSEGV). A run of cases keeps them apart (MindSpore's own sandbox child,
    TensorFlow's ``imports_first``); here, before either is imported, what must come first is
    imported first. Finds nothing itself."""

    FIRST = {"paddle": ("mindspore",), "tensorflow": ("mindspore", "paddle")}

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        for first in self.FIRST.get(name, ()):
            if first not in sys.modules and importlib.util.find_spec(first) is not None:
                importlib.import_module(first)
        return None


sys.meta_path.insert(0, _FrameworkImportOrder())

pytest_plugins = ["pytester", "chromium"]  # chromium: the browser fixture (tests/chromium.py)

# Hypothesis keeps caches (constants seen in the source, Unicode tables) in .hypothesis/ of
# the working folder: in the temporary folder instead, never the checkout.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(Path(tempfile.gettempdir()) / "conformance-hypothesis"))

# Hypothesis budgets of the fuzz tests (tests/test_fuzz.py, docs/fuzzing.md): "ci" is the
# small one of the normal run, "fuzz" the large one, `pytest tests/test_fuzz.py
# --hypothesis-profile=fuzz`. Registering loads neither: the fuzz tests use "ci" unless a
# profile is named, so other tests keep Hypothesis' defaults. ("ci" replaces Hypothesis'
# built-in profile of that name, which it loads itself when the CI variable is set.)
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the test extra is not installed: test_fuzz.py skips
    pass
else:
    settings.register_profile(
        "ci", max_examples=200, deadline=None, derandomize=False, database=None, print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    settings.register_profile("fuzz", settings.get_profile("ci"), max_examples=10_000)

# The case cache (conformance/load/cache.py) of this test session and of the pytest runs it
# starts: a folder of its own, not the user's cache.
if "CONFORMANCE_CACHE_DIR" not in os.environ:
    os.environ["CONFORMANCE_CACHE_DIR"] = tempfile.mkdtemp(prefix="conformance-test-cache-")



@pytest.fixture
def own_outcome_store(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache folder (and so a store of outcomes) of the test's own: `conformance run` reuses
    stored outcomes by default and decides those items before the run (plugin.decided), so
    what a test counts must not depend on which tests ran before it."""
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


# `conformance run` uses every core by default (pytest-xdist): the tests that start it run it
# serially, as they were written for, unless a test asks for workers itself
os.environ.setdefault("CONFORMANCE_WORKERS", "0")


# @pytest.mark.slow(reason=...) (tests/slow_marker.py)
from slow_marker import pytest_collection_modifyitems  # noqa: E402,F401
