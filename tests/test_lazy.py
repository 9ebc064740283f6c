"""Importing the plugin, listing adapters and collecting the whole corpus import no
framework but NumPy (torch, Paddle, JAX, TensorFlow, MindSpore, array-api-strict: every
registered adapter's module, and what they bring, jaxlib, ml_dtypes), nor ruamel.yaml (only
`conformance observe --write` uses it: cases are read by the suite's own reader), nor Jinja2
(only `conformance site` renders with it; building the site imports no framework either).
Checked in a fresh interpreter, since this test process may already have imported them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance import registry  # lists adapter classes; imports no framework

CASES = Path(__file__).resolve().parent.parent / "cases"

# every registered framework's module except NumPy's (the suite's own data is NumPy arrays)
FRAMEWORKS = tuple(registry.adapter_class(name).module for name in registry.framework_names() if name != "numpy")
HEAVY = (*FRAMEWORKS, "jaxlib", "ml_dtypes", "ruamel", "jinja2")


def test_every_framework_is_checked() -> None:
    assert set(FRAMEWORKS) >= {"torch", "paddle", "jax", "tensorflow", "mindspore", "array_api_strict"}


def run_python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_importing_plugin_and_adapters_imports_no_framework() -> None:
    out = run_python(f"""
        import sys
        import conformance.plugin, conformance.tools.cli
        from conformance import registry
        for name in registry.framework_names():
            registry.get_adapter(name).lacks("method:view")  # each adapter made, its table built
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


@pytest.mark.slow(reason="real torch and Paddle items, in fresh interpreters")
def test_running_cases_imports_no_framework_into_pytest() -> None:
    """torch and Paddle items run (and pass) in the sandbox child; the pytest process that
    collected and reported them never imports either."""
    out = run_python(f"""
        import sys, pytest

        class Probe:
            passed = {{}}

            def pytest_runtest_logreport(self, report):
                if report.when == "call" and report.passed:
                    framework = report.nodeid.rsplit("[", 1)[1].rstrip("]")
                    self.passed[framework] = self.passed.get(framework, 0) + 1

            def pytest_sessionfinish(self, session):
                self.heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)

        probe = Probe()
        code = pytest.main(["-q", "-p", "no:cacheprovider", {str(CASES / "views" / "basic.yaml")!r}], plugins=[probe])
        print("RESULT", int(code), probe.passed.get("torch", 0), probe.passed.get("paddle", 0), probe.heavy)
    """)
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT"))
    _, code, torch_passed, paddle_passed, heavy = line.split(" ", 4)
    assert code == "0"
    assert int(torch_passed) > 0 and int(paddle_passed) > 0
    assert heavy == "[]"


def test_a_framework_object_observed_as_a_value_does_not_cross_into_pytest(tmp_path: Path) -> None:
    """A NumPy object array holding a torch layer and a Paddle layer, observed as values:
    the outcome carries their type names only, so the pytest process imports neither
    framework (Paddle would also take over SIGTERM there) and the item fails normally."""
    case_file = tmp_path / "objects.yaml"
    case_file.write_text(textwrap.dedent("""\
        cases:
          - id: lazy.object_array
            title: "an object array holding a layer, observed as values"
            given: {x: [1.0]}
            steps:
              - m = ReLU()
              - y = array([m])
            expect: {values: {y: [1.0]}}
    """))
    out = run_python(f"""
        import signal, sys, pytest

        class Probe:
            def pytest_sessionfinish(self, session):
                self.heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)
                self.sigterm = signal.getsignal(signal.SIGTERM)

        probe = Probe()
        before = signal.getsignal(signal.SIGTERM)
        code = pytest.main(["-q", "-p", "no:cacheprovider", {str(case_file)!r}, "--frameworks", "torch,paddle",
                            "--rootdir", {str(tmp_path)!r}], plugins=[probe])
        print("RESULT", int(code), probe.heavy, probe.sigterm == before)
    """)
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT"))
    assert line == "RESULT 1 [] True", out
    assert "<torch.nn.modules.activation.ReLU>" in out and "<paddle.nn.layer.activation.ReLU>" in out, out


def test_building_the_site_imports_no_framework(tmp_path: Path) -> None:
    from results_factory import sample

    results = tmp_path / "results.json"
    results.write_text(json.dumps(sample()))
    out = run_python(f"""
        import sys
        from pathlib import Path
        from conformance.tools.cli import main
        assert main(["site", {str(results)!r}, "--out", {str(tmp_path / "site")!r}]) == 0
        print("jinja2" in sys.modules, sorted(m for m in {FRAMEWORKS + ("jaxlib", "ml_dtypes")!r} if m in sys.modules))
    """)
    assert out.strip().splitlines()[-1] == "True []"
