"""Importing the plugin, listing adapters and collecting the whole corpus import neither
torch nor paddle. Checked in a fresh interpreter, since this test process may already
have imported them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

CASES = Path(__file__).resolve().parent.parent / "cases"
HEAVY = ("torch", "paddle")


def run_python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_importing_plugin_and_adapters_imports_no_framework() -> None:
    out = run_python(f"""
        import sys
        import conformance.plugin, conformance.cli
        from conformance import registry
        from conformance.adapters import torch_adapter, paddle_adapter, numpy_adapter
        ops = registry.known_operations()
        assert "method:add_" in ops
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_collecting_the_corpus_imports_no_framework() -> None:
    out = run_python(f"""
        import sys, pytest

        class Probe:
            def pytest_collection_finish(self, session):
                self.count = len(session.items)
                self.heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)

        probe = Probe()
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", {str(CASES)!r}], plugins=[probe])
        print("RESULT", int(code), probe.count, probe.heavy)
    """)
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT"))
    _, code, count, heavy = line.split(" ", 3)
    assert code == "0"
    assert int(count) > 0
    assert heavy == "[]"
