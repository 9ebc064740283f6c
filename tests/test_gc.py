"""The GC pause and freeze of collection (conformance.plugin, pytest_collection) belong to
sessions that collect case items: a pytest run of another project in the same environment
keeps its GC as it was (issue 16: 42,339 objects frozen in a one-test project)."""

from __future__ import annotations

import pytest
from test_plugin import GOOD

pytest_plugins = ["pytester"]

# what the GC looks like when the items run (after collection, before the first item)
PROBE = """\
import gc, json

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    with open("gc.json", "w") as out:
        json.dump({"frozen": gc.get_freeze_count(), "enabled": gc.isenabled()}, out)
"""

ONE_TEST = """\
import gc


def test_the_gc_is_as_python_left_it():
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()
"""


def gc_state(pytester: pytest.Pytester, *args: str) -> dict:
    import json

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    return json.loads((pytester.path / "gc.json").read_text())


def test_another_project_keeps_its_gc(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one=ONE_TEST)
    pytester.makeconftest(PROBE)
    assert gc_state(pytester) == {"frozen": 0, "enabled": True}


def test_a_session_that_collects_cases_freezes_what_it_collected(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "good.yaml").write_text(GOOD)
    pytester.makeconftest(PROBE)
    state = gc_state(pytester, "--frameworks", "numpy", "cases")
    assert state["enabled"] and state["frozen"] > 1000, state


def test_a_case_folder_named_beside_python_tests_freezes_too(pytester: pytest.Pytester) -> None:
    (pytester.path / "cases").mkdir()
    (pytester.path / "cases" / "good.yaml").write_text(GOOD)
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    pytester.makeconftest(PROBE)
    state = gc_state(pytester, "--frameworks", "numpy", "test_one.py", "cases")
    assert state["enabled"] and state["frozen"] > 1000, state
