"""pytest's conventions on case items (conformance.plugin.selection, plugin.collect): node
ids that --lf, --ff and --sw read back, markers for -m (framework, family, claim,
conformance), -k that selects a framework exactly, and -x, --junitxml, -n and node ids on
the command line. Each runs through pytester on a small corpus; runs use NumPy only."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from test_plugin import GOOD, WRONG

pytest_plugins = ["pytester"]

# a case whose id names another framework, and that checks a claim
NAMED = """\
cases:
  - id: interop.paddle_style.clone
    title: a case whose id contains the word paddle
    claims: {S3-10: related}
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x.clone()
    expect:
      shape: {y: [2]}
"""

PYTHON_TEST = "def test_plain():\n    pass\n"


@pytest.fixture
def corpus(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "interop").mkdir()
    (pytester.path / "cases" / "views" / "good.yaml").write_text(GOOD)
    (pytester.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    (pytester.path / "cases" / "interop" / "named.yaml").write_text(NAMED)
    return pytester


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and " " not in line]


# ---- node ids: --lf, --ff, --sw


def test_node_id_puts_the_framework_where_pytest_reads_parameters(corpus: pytest.Pytester) -> None:
    items, _ = corpus.inline_genitems("cases/views/good.yaml")
    item = items[0]
    assert item.nodeid == "cases/views/good.yaml::views.reshape.contiguous[numpy]"
    assert item.name == "views.reshape.contiguous[numpy]" and item.originalname == "views.reshape.contiguous"
    if hasattr(item, "id"):  # pytest 9's structured node ids: as a parametrized test's
        assert (item.id.names, item.id.params) == (("views.reshape.contiguous",), "numpy")


def test_last_failed_reruns_only_the_failed_case_item(corpus: pytest.Pytester) -> None:
    corpus.runpytest("--frameworks", "numpy").assert_outcomes(passed=3, failed=1, deselected=8)
    result = corpus.runpytest("--frameworks", "numpy", "--lf")
    result.assert_outcomes(failed=1)  # pytest's --lf leaves the others out at collection
    result.stdout.fnmatch_lines(["run-last-failure: rerun previous 1 failure*"])


def test_failed_first_runs_the_failed_case_item_first(corpus: pytest.Pytester) -> None:
    corpus.runpytest("--frameworks", "numpy")
    result = corpus.runpytest("--frameworks", "numpy", "--ff", "-v")
    result.stdout.fnmatch_lines(["run-last-failure: rerun previous 1 failure first*"])
    ran = [line.split(" ")[0] for line in result.outlines if line.startswith("cases/") and "[numpy]" in line]
    assert ran[0] == "cases/views/wrong.yaml::copies.clone.claimed_view[numpy]", ran


def test_stepwise_starts_again_at_the_failed_case_item(corpus: pytest.Pytester) -> None:
    # good.yaml runs before wrong.yaml; interop/named.yaml before both
    corpus.runpytest("--frameworks", "numpy", "--sw").assert_outcomes(passed=3, failed=1, deselected=8)
    result = corpus.runpytest("--frameworks", "numpy", "--sw")
    result.stdout.fnmatch_lines(["stepwise: skipping 3 already passed items*"])
    result.assert_outcomes(failed=1, deselected=11)


def test_last_failed_reruns_a_case_file_that_could_not_be_loaded(corpus: pytest.Pytester) -> None:
    (corpus.path / "cases" / "views" / "broken.yaml").write_text("cases:\n  - id: [unclosed\n")
    corpus.runpytest("--frameworks", "numpy").assert_outcomes(passed=3, failed=2, deselected=8)
    result = corpus.runpytest("--frameworks", "numpy", "--lf")
    result.assert_outcomes(failed=2)


# ---- -m: markers, registered


@pytest.mark.parametrize("expression, expected", [
    ("torch", ["interop.paddle_style.clone[torch]", "views.reshape.contiguous[torch]", "copies.clone.fresh[torch]",
               "copies.clone.claimed_view[torch]"]),
    ("views and numpy", ["views.reshape.contiguous[numpy]"]),  # the family views: ids views.*
    ("copies and paddle", ["copies.clone.fresh[paddle]", "copies.clone.claimed_view[paddle]"]),
    ("claim_S3_10", [f"interop.paddle_style.clone[{fw}]" for fw in ("numpy", "torch", "paddle")]),
    ("claim_S3_10(stance='related') and numpy", ["interop.paddle_style.clone[numpy]"]),
    ("claim_S3_10(stance='holds')", []),
])
def test_dash_m_selects_by_framework_family_and_claim(corpus: pytest.Pytester, expression: str,
                                                      expected: list[str]) -> None:
    result = corpus.runpytest("--collect-only", "-q", "--strict-markers", "-m", expression)
    assert [line.split("::", 1)[1] for line in collected(result)] == expected
    assert result.ret == (pytest.ExitCode.OK if expected else pytest.ExitCode.NO_TESTS_COLLECTED)


def test_dash_m_conformance_selects_the_case_items_and_no_python_test(corpus: pytest.Pytester) -> None:
    corpus.makepyfile(test_plain=PYTHON_TEST)
    result = corpus.runpytest("--collect-only", "-q", "--strict-markers", "-m", "conformance", ".", "cases")
    ids = collected(result)
    assert len(ids) == 12 and all(i.startswith("cases/") for i in ids)
    result = corpus.runpytest("--collect-only", "-q", "--strict-markers", "-m", "not conformance", ".", "cases")
    assert collected(result) == ["test_plain.py::test_plain"]


def test_an_item_that_could_not_be_loaded_keeps_the_markers_of_every_framework(corpus: pytest.Pytester) -> None:
    (corpus.path / "cases" / "views" / "broken.yaml").write_text("cases:\n  - id: [unclosed\n")
    result = corpus.runpytest("--collect-only", "-q", "-m", "torch")
    assert "cases/views/broken.yaml::<file>[load]" in collected(result)


def test_markers_are_registered_and_listed(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--markers")
    result.stdout.fnmatch_lines_random([
        "@pytest.mark.conformance: a conformance case item*",
        "@pytest.mark.numpy: conformance case items run on numpy",
        "@pytest.mark.torch: conformance case items run on torch",
        "@pytest.mark.paddle: conformance case items run on paddle",
        "@pytest.mark.views: conformance cases of the family views*",
        "@pytest.mark.interop: conformance cases of the family interop*",
        "@pytest.mark.claim_S3_02(stance): conformance cases checking claim S3-02*`a.numpy()` shares memory*",
    ])
    # --strict-markers: running the items with their markers is no error
    corpus.runpytest("--strict-markers", "--frameworks", "numpy").assert_outcomes(passed=3, failed=1, deselected=8)


def test_an_unknown_marker_is_still_refused_under_strict_markers(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--collect-only", "-q", "--strict-markers", "-m", "mxnet")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*Unknown marker(s) in '-m' expression: mxnet*"])


# ---- -k: a framework name matches exactly


@pytest.mark.parametrize("expression, expected", [
    ("paddle", ["interop.paddle_style.clone[paddle]", "views.reshape.contiguous[paddle]", "copies.clone.fresh[paddle]",
                "copies.clone.claimed_view[paddle]"]),
    ("PADDLE and reshape", ["views.reshape.contiguous[paddle]"]),  # -k is case-insensitive
    ("paddle_style", [f"interop.paddle_style.clone[{fw}]" for fw in ("numpy", "torch", "paddle")]),
    ("paddle_style and not paddle", ["interop.paddle_style.clone[numpy]", "interop.paddle_style.clone[torch]"]),
    ("clone and numpy", ["interop.paddle_style.clone[numpy]", "copies.clone.fresh[numpy]",
                         "copies.clone.claimed_view[numpy]"]),
    ("wrong", [f"copies.clone.claimed_view[{fw}]" for fw in ("numpy", "torch", "paddle")]),  # the file name
])
def test_dash_k_selects_a_framework_exactly_and_ids_by_substring(corpus: pytest.Pytester, expression: str,
                                                                 expected: list[str]) -> None:
    result = corpus.runpytest("--collect-only", "-q", "-k", expression)
    assert [line.split("::", 1)[1] for line in collected(result)] == expected


def test_dash_k_with_a_framework_leaves_python_tests_to_pytest(corpus: pytest.Pytester) -> None:
    corpus.makepyfile(test_paddle_tools=PYTHON_TEST)
    result = corpus.runpytest("--collect-only", "-q", "-k", "paddle", ".", "cases")
    ids = collected(result)
    assert "test_paddle_tools.py::test_plain" in ids and "cases/views/good.yaml::copies.clone.fresh[paddle]" in ids
    assert not [i for i in ids if i.endswith(("[numpy]", "[torch]"))]
    # and pytest's -k is back to what it was once collection is over
    assert corpus.runpytest("-k", "paddle and (", "--collect-only").ret == pytest.ExitCode.USAGE_ERROR


def test_the_private_pytest_api_for_dash_k_is_there() -> None:
    """Fails when a pytest release moves what -k's framework matching uses; -k then stays
    pytest's substring match (plugin.selection)."""
    from conformance.plugin import selection

    assert selection.Expression is not None and selection.KeywordMatcher is not None
    assert hasattr(selection.KeywordMatcher, "from_item") and hasattr(selection.Expression, "compile")


# ---- -x, --junitxml, -n, node ids


def test_dash_x_stops_at_the_first_failed_case_item(corpus: pytest.Pytester) -> None:
    (corpus.path / "cases" / "views" / "a_wrong.yaml").write_text(WRONG.replace("copies.clone.claimed_view",
                                                                                 "copies.clone.claimed_view_a"))
    result = corpus.runpytest("--frameworks", "numpy", "-x")
    result.assert_outcomes(passed=1, failed=1, deselected=10)  # interop/ runs first, then a_wrong.yaml
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])


def test_junitxml_has_a_testcase_per_case_item(corpus: pytest.Pytester) -> None:
    corpus.runpytest("--frameworks", "numpy", "--junitxml=out.xml")
    cases = ET.parse(corpus.path / "out.xml").getroot().iter("testcase")
    by_name = {case.get("name"): case for case in cases}
    assert sorted(by_name) == ["copies.clone.claimed_view[numpy]", "copies.clone.fresh[numpy]",
                               "interop.paddle_style.clone[numpy]", "views.reshape.contiguous[numpy]"]
    assert by_name["copies.clone.fresh[numpy]"].get("classname") == "cases.views.good.yaml"
    failure = by_name["copies.clone.claimed_view[numpy]"].find("failure")
    assert failure is not None and "values of x" in (failure.get("message") or "") + (failure.text or "")


def test_xdist_runs_the_selection_of_dash_k_and_dash_m(corpus: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    corpus.runpytest("-n", "2", "-k", "numpy").assert_outcomes(passed=3, failed=1)
    corpus.runpytest("-n", "2", "-m", "numpy and views").assert_outcomes(passed=1)


def test_verbose_output_shows_node_ids_that_select_the_item(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--frameworks", "numpy", "-v")
    result.stdout.fnmatch_lines(["cases/views/wrong.yaml::copies.clone.claimed_view[[]numpy[]] FAILED*",
                                 "*_ case copies.clone.claimed_view[[]numpy[]] _*"])
    assert "views::reshape" not in result.stdout.str()


def test_node_ids_on_the_command_line(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("cases/views/wrong.yaml::copies.clone.claimed_view[numpy]")
    result.assert_outcomes(failed=1)
    # without [framework]: the case on every framework, as for a parametrized test
    result = corpus.runpytest("--collect-only", "-q", "cases/views/good.yaml::copies.clone.fresh")
    assert collected(result) == [f"cases/views/good.yaml::copies.clone.fresh[{fw}]" for fw in ("numpy", "torch", "paddle")]  # noqa: E501
