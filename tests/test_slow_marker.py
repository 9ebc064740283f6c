"""The ``slow`` marker of the tool's tests (tests/slow_marker.py): it says why, or the run is
refused; ``-m "not slow"`` leaves the slow ones out."""

from __future__ import annotations

import pytest

TESTS = """\
import pytest

@pytest.mark.slow(reason="compiles a graph")
def test_slow():
    pass

def test_quick():
    pass
"""


@pytest.fixture
def folder(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest("from slow_marker import pytest_collection_modifyitems  # noqa: F401\n")
    pytester.makeini("[pytest]\nmarkers =\n    slow(reason): a slow test\n")
    return pytester


def test_a_slow_mark_with_a_reason_runs_and_not_slow_leaves_it_out(folder: pytest.Pytester) -> None:
    folder.makepyfile(test_marked=TESTS)
    folder.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    result = folder.runpytest("-p", "no:cacheprovider", "-m", "not slow")
    result.assert_outcomes(passed=1, deselected=1)


@pytest.mark.parametrize("mark", ["@pytest.mark.slow", "@pytest.mark.slow(reason='  ')", "@pytest.mark.slow('why')"])
def test_a_slow_mark_without_a_reason_is_refused(folder: pytest.Pytester, mark: str) -> None:
    folder.makepyfile(test_marked=TESTS + f"\n{mark}\ndef test_unexplained():\n    pass\n")
    result = folder.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_marked.py::test_unexplained: @pytest.mark.slow needs reason=\"...\", what the "
                                 "test spends its time on (1 marks without one)"])
