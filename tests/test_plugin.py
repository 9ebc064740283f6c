"""The pytest plugin, driven through pytester: collection, selection, failure rendering,
bad files, results JSON, xdist. NumPy-only cases keep these fast."""

from __future__ import annotations

import datetime
import json
import textwrap

import pytest

from conformance import registry

pytest_plugins = ["pytester"]

GOOD = """\
cases:
  - id: views.reshape.contiguous
    title: reshape of a contiguous array shares memory
    given:
      x: {data: [1.0, 2.0, 3.0, 4.0]}
    steps:
      - y = x.reshape(2, 2)
    expect:
      shares_memory: {y & x: true}
      shape: {y: [2, 2]}
  - id: copies.clone.fresh
    title: clone copies
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x.clone()
      - y[0] = 9.0
    expect:
      values: {x: [1.0, 2.0], y: [9.0, 2.0]}
"""

WRONG = """\
cases:
  - id: copies.clone.claimed_view
    title: a wrong claim that clone shares memory
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x.clone()
      - y[0] = 9.0
    expect:
      values: {x: [9.0, 2.0]}
"""


@pytest.fixture
def corpus(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "good.yaml").write_text(GOOD)
    return pytester


def test_one_item_per_case_and_framework(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [f"cases/views/good.yaml::{case}[{fw}]"
                   for case in ("views.reshape.contiguous", "copies.clone.fresh")
                   for fw in ("numpy", "torch", "paddle")]  # the ini's conformance_frameworks


def test_no_ini_frameworks_is_every_registered_framework(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--collect-only", "-q", "-o", "conformance_frameworks=")
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [f"cases/views/good.yaml::{case}[{fw}]"
                   for case in ("views.reshape.contiguous", "copies.clone.fresh")
                   for fw in registry.BUILTIN]


def test_an_unknown_framework_in_the_ini_is_a_usage_error(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("-o", "conformance_frameworks=numpy, mxnet")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini conformance_frameworks: unknown framework(s) mxnet; known: numpy, torch, *"])


def test_frameworks_option_outside_the_projects_frameworks_is_a_usage_error(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--frameworks", "numpy,jax")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--frameworks: jax not among this project's frameworks "
                                 "(ini conformance_frameworks: numpy, torch, paddle); add them there"])


def test_dash_k_selects_a_framework(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("-k", "numpy", "-v")
    result.assert_outcomes(passed=2, deselected=4)


def test_frameworks_option_deselects_the_others(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--frameworks", "numpy")
    result.assert_outcomes(passed=2, deselected=4)


def test_unknown_framework_in_option_is_a_usage_error(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--frameworks", "numpy,mxnet")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*unknown framework(s) mxnet; known: numpy, torch, paddle, jax, tensorflow, mindspore, array_api_strict*"])


def test_a_framework_called_by_another_name_gets_a_did_you_mean(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--frameworks", "pytorch,tf,torch.compile,numpyy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--frameworks: unknown framework(s) pytorch (did you mean 'torch'?), tf (did you "
                                 "mean 'tensorflow'?), torch.compile (did you mean 'torch_compile'?), numpyy (did "
                                 "you mean 'numpy'?); known: numpy, torch, *"])


def test_yaml_outside_case_paths_is_not_collected(corpus: pytest.Pytester) -> None:
    (corpus.path / "config.yaml").write_text("not: a case file\n")
    result = corpus.runpytest("--collect-only", "-q", "--frameworks", "numpy")
    assert "config.yaml" not in result.stdout.str()


def test_failure_shows_expected_observed_location_and_step(corpus: pytest.Pytester) -> None:
    (corpus.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    result = corpus.runpytest("--frameworks", "numpy", "cases/views/wrong.yaml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*copies.clone.claimed_view?numpy?*a wrong claim that clone shares memory",
        "*case at cases/views/wrong.yaml:2",
        "*values of x  (cases/views/wrong.yaml:10)",
        "*expected: ?9.0, 2.0?",
        "*observed: ?1.0, 2.0?",
        "*steps:",
        "*1  y = x.clone()   # line 7",
    ])


def test_bad_file_fails_with_its_message_and_hides_nothing(corpus: pytest.Pytester) -> None:
    (corpus.path / "cases" / "views" / "broken.yaml").write_text(textwrap.dedent("""\
        cases:
          - id: views.broken
            title: t
            steps: ["y = x.veiw(4)"]
            given: {x: [1.0]}
            expect: {values: {y: [1.0]}}
        """))
    (corpus.path / "cases" / "views" / "syntax.yaml").write_text("cases:\n  - id: [unclosed\n")
    result = corpus.runpytest("--frameworks", "numpy")
    result.assert_outcomes(passed=2, failed=2, deselected=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*cases/views/broken.yaml:4:*unknown operation method '.veiw()'*",
        "*fix: did you mean 'view'?",
    ])
    # the error is placed at the bracket that is never closed, not where the parser gave up
    result.stdout.fnmatch_lines([
        "*cases/views/syntax.yaml:2:9: YAML syntax error: the '[' opened here is never closed",
        "*fix: close it with ']'*",
    ])


def test_duplicate_id_across_files(corpus: pytest.Pytester) -> None:
    (corpus.path / "cases" / "views" / "zz_copy.yaml").write_text(GOOD)
    result = corpus.runpytest("--frameworks", "numpy")
    result.assert_outcomes(passed=2, failed=2, deselected=4)
    result.stdout.fnmatch_lines([
        "*duplicate case id 'views.reshape.contiguous' (first defined at cases/views/good.yaml:2)*"])


def test_framework_not_installed_skips_with_reason(corpus: pytest.Pytester) -> None:
    corpus.makeconftest("""
        from conformance import registry
        def pytest_configure(config):
            registry.get_adapter("paddle").unavailable = lambda: "paddle is not installed (pip install x)"
    """)
    result = corpus.runpytest_subprocess("--frameworks", "paddle", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*paddle is not installed (pip install x)*"])


MIXED = """\
cases:
  - id: views.expand.diverges
    title: numpy has a per-framework expectation
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x.reshape(2, 1)
    expect:
      shares_memory: {y & x: false}
    frameworks:
      numpy:
        reason: NumPy reshapes a contiguous array as a view
        expect: {shares_memory: {y & x: true}}
  - id: views.absent.op
    title: an operation numpy lacks
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - y = x.clone().detach()
    expect:
      values: {y: [1.0, 2.0]}
    frameworks:
      numpy: {not_applicable: NumPy has no autograd}
"""


def validate(data: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from conformance.report.results import SCHEMA_FILE

    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = [f"{e.json_path}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(data)]
    assert errors == []


def test_results_json_has_one_record_per_item_and_follows_the_schema(corpus: pytest.Pytester) -> None:
    (corpus.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    (corpus.path / "cases" / "views" / "mixed.yaml").write_text(MIXED)
    (corpus.path / "cases" / "views" / "syntax.yaml").write_text("cases:\n  - id: [unclosed\n")
    result = corpus.runpytest("--frameworks", "numpy", "--conformance-results", "out/results.json")
    result.assert_outcomes(passed=3, failed=2, skipped=1, deselected=10)
    data = json.loads((corpus.path / "out" / "results.json").read_text())
    validate(data)
    outcomes = {(r["case"], r["framework"]): r["outcome"] for r in data["results"]}
    assert outcomes == {
        ("views.reshape.contiguous", "numpy"): "pass", ("copies.clone.fresh", "numpy"): "pass",
        ("copies.clone.claimed_view", "numpy"): "fail", ("views.expand.diverges", "numpy"): "known_divergence",
        ("views.absent.op", "numpy"): "not_applicable", ("<file>", None): "error",
    }
    by_case = {r["case"]: r for r in data["results"]}
    assert by_case["copies.clone.claimed_view"]["reason"] == "values of x: expected [9.0, 2.0], observed [1.0, 2.0]"
    assert by_case["views.expand.diverges"]["reason"] == "NumPy reshapes a contiguous array as a view"
    assert by_case["views.absent.op"]["reason"] == "NumPy has no autograd"
    assert by_case["views.reshape.contiguous"]["behaviour"]["pairs"] == [
        {"a": "y", "b": "x", "class": "view", "relations": {"shares_memory": True}}]
    assert "YAML syntax error" in by_case["<file>"]["reason"]
    assert {k: v for k, v in data["run"].items() if k not in ("corpus", "date")} == {
        "items": 6, "exit_status": 1, "corpus_items": 16, "partial": ["only numpy (--frameworks; not torch, paddle)"]}
    assert data["run"]["date"] == datetime.datetime.now(datetime.timezone.utc).date().isoformat() or \
        data["run"]["date"] < datetime.datetime.now(datetime.timezone.utc).date().isoformat()  # just after midnight
    assert "commit" not in data["run"]  # pytester's folder is no git checkout
    assert data["environment"]["frameworks"]["numpy"]["devices"] == ["cpu"]
    assert data["cases"]["views.expand.diverges"]["productions"] == [
        {"step": 1, "operation": "method:reshape", "result": "y", "input": "x", "layout": "contiguous"}]


def test_skipped_item_has_a_record_with_the_reason(corpus: pytest.Pytester) -> None:
    corpus.makeconftest("""
        from conformance import registry
        def pytest_configure(config):
            registry.get_adapter("paddle").unavailable = lambda: "paddle is not installed (pip install x)"
    """)
    corpus.runpytest_subprocess("--frameworks", "paddle", "--conformance-results", "r.json")
    records = json.loads((corpus.path / "r.json").read_text())["results"]
    assert [(r["outcome"], r["reason"]) for r in records] == [
        ("skipped", "paddle is not installed (pip install x)")] * 2


CRASHING_CONFTEST = """
    import os
    from conformance import registry

    def pytest_configure(config):
        def crash(*args, **kwargs):
            os.abort()  # a hard crash of the framework inside one case
        registry.get_adapter("numpy").ops["method:reshape"] = crash
"""


def test_xdist_merges_records_and_counts_crashed_items(corpus: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    (corpus.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    corpus.makeconftest(CRASHING_CONFTEST)
    # in process, so that the crash takes the xdist worker down (the sandbox's own crash
    # handling is tests/test_sandbox.py's)
    args = ("--frameworks", "numpy", "--conformance-results", "r.json", "--in-process")
    result = corpus.runpytest_subprocess("-n", "2", *args)
    # xdist deselects on the workers, so only the controller's counts of run items compare
    result.assert_outcomes(passed=1, failed=2)
    data = json.loads((corpus.path / "r.json").read_text())
    validate(data)
    outcomes = {r["case"]: r["outcome"] for r in data["results"]}
    assert outcomes == {"views.reshape.contiguous": "error", "copies.clone.fresh": "pass",
                        "copies.clone.claimed_view": "fail"}
    crashed = next(r for r in data["results"] if r["case"] == "views.reshape.contiguous")
    assert "crashed" in crashed["reason"] and crashed["framework"] == "numpy"
    assert data["run"]["items"] == 3


def test_xdist_gives_the_same_records_as_a_serial_run(corpus: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    (corpus.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    corpus.runpytest_subprocess("--frameworks", "numpy", "--conformance-results", "serial.json")
    corpus.runpytest_subprocess("-n", "2", "--frameworks", "numpy", "--conformance-results", "parallel.json")

    def comparable(name: str) -> list[dict]:
        records = json.loads((corpus.path / name).read_text())["results"]
        return [{k: v for k, v in r.items() if k != "duration_s"} for r in records]

    assert comparable("serial.json") == comparable("parallel.json")


BIG_INTS = """
cases:
  - id: copies.clone.big_ints
    title: "values below -2**31 and above 2**31 travel from an xdist worker like any other"
    given:
      x: {data: [-3000000000, 3000000000], dtype: int64}
    steps:
      - y = x.clone()
    expect:
      values: {y: [-3000000000, 3000000000]}
"""


def test_xdist_carries_observed_ints_beyond_32_bits(corpus: pytest.Pytester) -> None:
    # pytest-xdist's channel (execnet) cannot send an int below -2**31 (a struct.error that
    # took the worker down); the record travels as its JSON text
    pytest.importorskip("xdist")
    (corpus.path / "cases" / "views" / "big.yaml").write_text(BIG_INTS)
    result = corpus.runpytest_subprocess("-n", "2", "--frameworks", "numpy", "--conformance-results", "r.json",
                                         "cases/views/big.yaml")
    result.assert_outcomes(passed=1)
    record = json.loads((corpus.path / "r.json").read_text())["results"][0]
    assert record["observed"]["values.y"] == [-3000000000, 3000000000]


@pytest.mark.parametrize("setting, message", [
    (("--case-timeout", "-1"), "*the case timeout must be 0 (none) or positive, not -1*"),
    (("-o", "conformance_case_timeout=soon"), "*ini conformance_case_timeout: 'soon' is not a number of seconds*"),
])
def test_a_bad_case_timeout_is_a_usage_error(corpus: pytest.Pytester, setting: tuple[str, str], message: str) -> None:
    result = corpus.runpytest_subprocess(*setting, "--frameworks", "numpy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
