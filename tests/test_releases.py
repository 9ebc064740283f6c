"""Release history (issue 20): versioned overrides (loader, lint, engine), --shard and
conformance merge (the union of the shards is the unsharded run, item for item), the
matrix's environments and its results for a release that cannot run, and the changelog."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from fake_adapter import FakeAdapter
from results_factory import case_info, document, record, typed_all
from test_plugin import GOOD, WRONG

from conformance.load.reader import Vocabulary, load_text
from conformance.releases import release_matches, specifier_problem
from conformance.report import changelog
from conformance.report.merge import MergeError, merge
from conformance.resultsmodel import Commit
from conformance.run.engine import FAIL, PASS, run
from conformance.tools import matrix
from conformance.tools.cli import main

pytest_plugins = ["pytester"]

VERSIONED = """\
cases:
  - id: t.versioned
    title: test
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.add_(1)
    expect:
      values: {x: [2.0, 3.0]}
    frameworks:
      fake:
        - versions: "<2.0"
          reason: before 2.0 it added 2 (release note)
          expect: {values: {x: [3.0, 4.0]}}
        - versions: ">=2.0,<2.2"
          reason: 2.0 and 2.1 added 3
          expect: {values: {x: [4.0, 5.0]}}
"""


class ReleasedFake(FakeAdapter):
    def __init__(self, release: str) -> None:
        super().__init__()
        self.release = release

    def version(self) -> str | None:
        return self.release


def load(text: str) -> Any:
    return load_text(text, "t.yaml", Vocabulary(frameworks=("fake",)))


# ---- specifiers


@pytest.mark.parametrize("spec, version, matches", [
    ("<2.0", "1.26.4", True), ("<2.0", "2.0.0", False), (">=2.13", "2.13.0+cpu", True),
    ("==2.13.0", "2.13.0+cpu", True), (">=3.1", "3.1.0rc1", False), (">=3.1.0rc1", "3.1.0rc1", True),
    (">=3.0,<3.2", "3.1.1", True), (">=3.0,<3.2", "3.2.0", False), ("<2.0", "not-a-version", False),
])
def test_a_release_matches_a_specifier_set_as_pep_440_orders_it(spec: str, version: str, matches: bool) -> None:
    assert release_matches(spec, version) is matches


@pytest.mark.parametrize("spec, problem", [
    ("", "is empty"), ("2.0", "is not a PEP 440 version specifier"), ("abc", "is not a PEP 440"),
    ("===1.0", "uses '==='"),
])
def test_a_bad_specifier_says_what_is_wrong(spec: str, problem: str) -> None:
    assert problem in (specifier_problem(spec) or "")


# ---- loader and lint


def test_versioned_overrides_are_read_in_order_and_the_engine_picks_by_release() -> None:
    result = load(VERSIONED)
    assert not result.errors
    case = result.cases[0]
    assert [o.versions for o in case.versioned["fake"]] == ["<2.0", ">=2.0,<2.2"]
    assert "fake" not in case.overrides  # no unversioned one: later releases take the shared expectation
    assert run(case, ReleasedFake("1.26.4")).verdict == FAIL  # expects 3, 4 (the old release's behaviour)
    outcome = run(case, ReleasedFake("2.1.0"))
    assert outcome.verdict == FAIL and outcome.mismatches[0].expected == "[4.0, 5.0]"
    assert run(case, ReleasedFake("2.2.0")).verdict == PASS
    assert run(case, FakeAdapter()).verdict == PASS  # the installed numpy 2.x, no versioned override matches


def test_a_versioned_override_replaces_the_unversioned_one_on_its_releases() -> None:
    text = VERSIONED.replace('''        - versions: ">=2.0,<2.2"
          reason: 2.0 and 2.1 added 3
          expect: {values: {x: [4.0, 5.0]}}''', '''        - reason: the current release adds 1 (restated)
          expect: {values: {x: [2.0, 3.0]}, shares_memory: {y & x: true}}''')
    case = load(text).cases[0]
    assert case.overrides["fake"].versions == ""
    assert len(case.overrides_for("fake", (), "1.0")) == 1 and case.overrides_for("fake", (), "1.0")[0].versions
    assert case.overrides_for("fake", (), "2.0")[0].versions == ""
    assert case.overrides_for("fake")[0].versions == ""  # release unknown: the unversioned one


@pytest.mark.parametrize("versions, message, fix", [
    ("2.0", "versions is the number 2.0, not a version specifier", 'write a quoted specifier such as ">=2.0"'),
    ('"2.0"', "versions '2.0' is not a PEP 440 version specifier", 'a bare version is no specifier: write "==2.0"'),
    ('"newer"', "versions 'newer' is not a PEP 440", "write a PEP 440 specifier set such as"),
    ("[1, 2]", "versions must be a string", "write e.g."),
])
def test_a_bad_versions_value_is_refused_where_it_is_written(versions: str, message: str, fix: str) -> None:
    text = VERSIONED.replace('versions: "<2.0"', f"versions: {versions}")
    result = load(text)
    (_, error), = result.errors
    rendered = error.render()
    assert "t.yaml:11:" in rendered and message in rendered and fix in rendered and "CF021" in repr(error.code)


def test_two_unversioned_overrides_and_an_empty_list_are_refused() -> None:
    text = VERSIONED.replace('versions: "<2.0"\n          reason', 'reason').replace(
        'versions: ">=2.0,<2.2"\n          reason', 'reason')
    (_, error), = load(text).errors
    assert "a second override for 'fake' without 'versions'" in error.render() and "t.yaml:13:" in error.render()
    empty = textwrap.dedent(VERSIONED[:VERSIONED.index("      fake:")]) + "      fake: []\n"
    (_, error), = load(empty).errors
    assert "'frameworks.fake' is an empty list" in error.render()


def test_lint_reports_bad_versions_with_their_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cases" / "t" / "v.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(VERSIONED.replace("id: t.versioned", "id: t.v.versioned").replace("fake:", "numpy:")
                    .replace('versions: "<2.0"', 'versions: "<<2"'))
    assert main(["lint", str(path.parent)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:11:" in out and "CF021" in out


# ---- shards and merge


@pytest.fixture
def corpus(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    (pytester.path / "cases" / "views").mkdir(parents=True)
    (pytester.path / "cases" / "views" / "good.yaml").write_text(GOOD)
    (pytester.path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    return pytester


def _records(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "duration_s"} for r in json.loads(path.read_text())["results"]]


def test_the_union_of_the_shards_is_the_unsharded_run_item_for_item(corpus: pytest.Pytester) -> None:
    corpus.runpytest_subprocess("--conformance-results", "full.json")
    shards = []
    for k in (1, 2, 3):
        result = corpus.runpytest_subprocess("--conformance-results", f"s{k}.json", "--shard", f"{k}/3")
        assert "shard" not in result.stderr.str()
        data = json.loads((corpus.path / f"s{k}.json").read_text())
        assert data["run"]["shard"] == [k, 3] and any("shard" in p for p in data["run"]["partial"])
        shards.append(str(corpus.path / f"s{k}.json"))
    assert all(_records(Path(s)) for s in shards)  # each shard ran something (9 items, 3 shards)
    assert main(["merge", *shards, "--out", str(corpus.path / "merged.json")]) == 0
    merged, full = json.loads((corpus.path / "merged.json").read_text()), json.loads((corpus.path / "full.json")
                                                                                      .read_text())
    assert _records(corpus.path / "merged.json") == _records(corpus.path / "full.json")
    assert merged["cases"] == full["cases"] and "partial" not in merged["run"]  # a full run again
    assert merged["run"]["corpus"] == full["run"]["corpus"]
    assert [s["shard"] for s in merged["run"]["merged_from"]] == [[1, 3], [2, 3], [3, 3]]


def test_shard_refuses_a_bad_value(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest_subprocess("--shard", "4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "write K/N with 1 <= K <= N" in result.stderr.str()


def _doc(corpus_rev: str, records: list[dict[str, Any]], numpy: str = "2.4.6") -> dict[str, Any]:
    doc = document({"t.a": case_info("t.a"), "t.b": case_info("t.b")}, records)
    doc["environment"]["frameworks"]["numpy"]["version"] = numpy
    doc["run"].update(corpus=corpus_rev, corpus_items=4)
    return doc


def test_merge_refuses_other_revisions_shared_items_and_two_releases_naming_each_file() -> None:
    a = _doc("aaaa", [record("t.a", "numpy"), record("t.b", "numpy")])
    b = _doc("bbbb", [record("t.a", "numpy")], numpy="1.26.4")
    with pytest.raises(MergeError) as raised:
        merge(typed_all([("a.json", a), ("b.json", b)]))
    problems = raised.value.problems
    assert any("different corpus revisions" in p and "a.json: aaaa" in p and "b.json: bbbb" in p for p in problems)
    assert any("1 item(s) in both a.json and b.json" in p for p in problems)
    assert any("numpy 2.4.6 in a.json but 1.26.4 in b.json" in p for p in problems)
    del b["run"]["corpus"]
    with pytest.raises(MergeError, match="b.json: no corpus revision"):
        merge(typed_all([("a.json", a), ("b.json", b)]))


def test_a_merge_that_misses_items_says_how_many_and_of_which_frameworks() -> None:
    a = _doc("aaaa", [record("t.a", "numpy")])
    b = _doc("aaaa", [record("t.a", "torch")])
    merged = merge(typed_all([("a.json", a), ("b.json", b)]))
    assert merged.run.items == 2
    assert merged.run.partial == ("2 of the corpus's 4 items are in none of the merged files (items per "
                                        "framework merged: numpy 1, torch 1)",)


def test_a_merge_keeps_the_last_date_and_the_commit_all_files_share() -> None:
    a = _doc("aaaa", [record("t.a", "numpy")])
    b = _doc("aaaa", [record("t.a", "torch")])
    a["run"].update(date="2026-11-20", commit={"sha": "a" * 40, "modified": False})
    b["run"].update(date="2026-11-21", commit={"sha": "a" * 40, "modified": True})
    merged = merge(typed_all([("a.json", a), ("b.json", b)]))
    assert merged.run.date == "2026-11-21"
    assert merged.run.commit == Commit(sha="a" * 40, modified=True)
    b["run"]["commit"] = {"sha": "b" * 40, "modified": False}
    assert merge(typed_all([("a.json", a), ("b.json", b)])).run.commit is None  # no one commit is the source
    del a["run"]["date"], b["run"]["date"]
    assert merge(typed_all([("a.json", a), ("b.json", b)])).run.date is None


# ---- the matrix


def test_releases_are_parsed_by_package_or_framework_name() -> None:
    releases = matrix.parse_releases(["numpy==1.26.4,2.0.2", "paddle==3.0.0"])
    assert [(r.framework, r.package, r.version) for r in releases] == [
        ("numpy", "numpy", "1.26.4"), ("numpy", "numpy", "2.0.2"), ("paddle", "paddlepaddle", "3.0.0")]
    assert matrix.requirements(releases[2])[:3] == ["paddlepaddle==3.0.0", "setuptools", "numpy"]
    assert matrix.requirements(matrix.Release("jax", "jax", "0.9.2"))[0] == "jax[cpu]==0.9.2"
    with pytest.raises(matrix.MatrixError) as raised:
        matrix.parse_releases(["numpy", "nonesuch==1.0", "numpy==1.0,,"])
    text = str(raised.value)
    assert "'numpy': write PACKAGE==V1,V2" in text and "'nonesuch' is no registered framework's package" in text
    assert "an empty version" in text


def test_a_release_that_cannot_be_installed_gets_a_results_file_with_the_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("could not install numpy==9.9.9 (uv exit status 1): no version of numpy==9.9.9")

    monkeypatch.setattr(matrix, "ensure_environment", refuse)
    done = matrix.run_release(matrix.Release("numpy", "numpy", "9.9.9"), tmp_path, tmp_path / "envs")
    assert done.env_state == "failed" and "no version of numpy==9.9.9" in (done.error or "")
    data = json.loads((tmp_path / "numpy" / "9.9.9.json").read_text())
    assert data["run"]["release"]["error"].startswith("could not install numpy==9.9.9")
    assert data["results"] == [] and data["run"]["partial"]
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parent.parent / "conformance" / "data" / "results.schema.json").read_text())
    jsonschema.validate(data, schema)


def test_a_child_in_another_environment_sees_this_package_and_that_environments_frameworks(
        corpus: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """CONFORMANCE_CHILD_PYTHON: the child's path is this package (through a link) and its
    own site-packages; here the other environment is this one's interpreter, so the items
    run as they do without it, and the versions are the ones the child reports."""
    import numpy

    corpus.runpytest_subprocess("--conformance-results", "here.json", "--frameworks", "numpy")
    monkeypatch.setenv("CONFORMANCE_CHILD_PYTHON", sys.executable)
    corpus.runpytest_subprocess("--conformance-results", "child.json", "--frameworks", "numpy")
    assert _records(corpus.path / "child.json") == _records(corpus.path / "here.json")
    frameworks = json.loads((corpus.path / "child.json").read_text())["environment"]["frameworks"]
    assert frameworks["numpy"]["version"] == numpy.__version__
    assert frameworks["torch"]["version"] is None  # not run: only a child would know


# ---- the changelog


def _release(version: str, records: list[dict[str, Any]], error: str | None = None) -> dict[str, Any]:
    doc = _doc("aaaa", records, numpy=version)
    doc["run"]["release"] = {"framework": "numpy", "package": "numpy", "version": version,
                             "installed": None if error else version, **({"error": error} if error else {})}
    return doc


def test_the_changelog_shows_each_change_between_consecutive_releases_side_by_side() -> None:
    old = _release("1.26.4", [record("t.a", "numpy", "fail", error=(1, "type_error", "TypeError"),
                                     reason="step 1 raised"), record("t.b", "numpy", pairs={("y", "x"): "view"})])
    mid = _release("2.0.2", [record("t.a", "numpy", pairs={("y", "x"): "copy"}),
                             record("t.b", "numpy", pairs={("y", "x"): "view"})])
    new = _release("2.4.6", [record("t.a", "numpy", pairs={("y", "x"): "copy"}),
                             record("t.b", "numpy", pairs={("y", "x"): "view"})])
    broken = _release("3.0.0", [], error="could not install numpy==3.0.0")
    log = changelog.build(typed_all([("new.json", new), ("old.json", old), ("broken.json", broken), ("mid.json", mid)]))
    assert [c.version for c in log.frameworks["numpy"]] == ["1.26.4", "2.0.2", "2.4.6", "3.0.0"]
    first, second, third = log.steps["numpy"]
    assert [(c.case, c.kind) for c in first.changes] == [("t.a", "new pass")]
    assert "error: type_error at step 1 (TypeError) → none" in first.changes[0].details
    assert second.changes == [] and third.not_compared == "3.0.0: could not install numpy==3.0.0"
    md = changelog.render_markdown(log)
    assert "### numpy 1.26.4 → 2.0.2" in md and "### numpy 2.0.2 → 2.4.6\n\nNone of the corpus's behaviours changed." \
        in md and "Not compared: 3.0.0: could not install numpy==3.0.0" in md
    html = changelog.render_html(log)
    shuffled = [("mid.json", mid), ("old.json", old), ("new.json", new), ("broken.json", broken)]
    assert html == changelog.render_html(changelog.build(typed_all(shuffled)))  # deterministic
    with pytest.raises(changelog.ChangelogError, match="numpy 2.0.2 is in both mid.json and again.json"):
        changelog.build(typed_all([("mid.json", mid), ("again.json", mid)]))


def test_an_outcome_that_changed_with_the_same_observations_shows_the_error_message_that_did() -> None:
    # JAX 0.8.3 -> 0.9.2: the same ValueError at the same step, another wording, which a
    # versioned expectation matches: the step shows the two messages, not a bare outcome
    old_record = record("t.a", "numpy", "known_divergence", error=(4, "other", "ValueError"), reason="r")
    new_record = record("t.a", "numpy", error=(4, "other", "ValueError"))
    new_record["behaviour"]["error"]["message"] = "Buffer has been deleted or donated."
    log = changelog.build(typed_all([("old.json", _release("0.8.3", [old_record])),
                           ("new.json", _release("0.9.2", [new_record]))]))
    (step,) = log.steps["numpy"]
    assert step.changes[0].details == ["error message: 'boom' → 'Buffer has been deleted or donated.'"]


def test_changelog_check_fails_on_a_stale_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = []
    for version in ("1.26.4", "2.4.6"):
        path = tmp_path / f"{version}.json"
        path.write_text(json.dumps(_release(version, [record("t.a", "numpy")])))
        files.append(str(path))
    out = tmp_path / "out"
    assert main(["changelog", *files, "--out", str(out)]) == 0
    assert main(["changelog", *files, "--out", str(out), "--check"]) == 0
    (out / "changelog.md").write_text("stale\n")
    assert main(["changelog", *files, "--out", str(out), "--check"]) == 1
    assert "changelog.md is not what these results render" in capsys.readouterr().err


def _groups_log() -> changelog.Changelog:
    """Two numpy releases where t.a's aliasing changes, t.b's API appears, t.c's goes and t.d
    stops being skipped; t.e is skipped on both (an interop item)."""
    cases = {c: case_info(c) for c in ("t.a", "t.b", "t.c", "t.d", "t.e")}

    def release_doc(version: str, records: list[dict[str, Any]]) -> dict[str, Any]:
        doc = document(cases, records)
        doc["environment"]["frameworks"]["numpy"]["version"] = version
        doc["run"].update(corpus="aaaa", release={"framework": "numpy", "package": "numpy", "version": version,
                                                  "installed": version})
        return doc

    old = release_doc("1.26.4", [record("t.a", "numpy", pairs={("y", "x"): "view"}),
                                 record("t.b", "numpy", "not_applicable", reason="np.unstack arrives in 2.1"),
                                 record("t.c", "numpy", pairs={("y", "x"): "copy"}),
                                 record("t.d", "numpy", "skipped"), record("t.e", "numpy", "skipped")])
    new = release_doc("2.0.2", [record("t.a", "numpy", pairs={("y", "x"): "copy"}),
                                record("t.b", "numpy", pairs={("y", "x"): "view"}),
                                record("t.c", "numpy", "not_applicable", reason="removed in 2.0"),
                                record("t.d", "numpy"), record("t.e", "numpy", "skipped")])
    return changelog.build(typed_all([("old.json", old), ("new.json", new)]))


def test_the_changelog_groups_behaviour_changes_apart_from_apis_that_appeared_or_went() -> None:
    log = _groups_log()
    (step,) = log.steps["numpy"]
    assert {g: [c.case for c in cs] for g, cs in step.groups().items()} == {
        changelog.BEHAVIOUR: ["t.a"], changelog.APPEARED: ["t.b"], changelog.REMOVED: ["t.c"],
        changelog.OTHER: ["t.d"]}
    assert changelog.counts_words(step) == "1 behaviour changed, 1 API appeared, 1 API removed, 1 other outcome change"
    md = changelog.render_markdown(log)
    assert "| numpy | 1.26.4, 2.0.2 | 1 of 1 | 4 | 1 | 1 | 1 | 1 |" in md
    sections = [line for line in md.splitlines() if line.startswith("#### ")]
    assert sections == ["#### behaviour changed (1)", "#### API appeared (1)", "#### API removed (1)",
                        "#### other outcome change (1)"]
    appeared = md[md.index("#### API appeared"):md.index("#### API removed")]
    assert "`t.b`" in appeared and "not_applicable → pass" in appeared and "`t.a`" not in appeared
    html = changelog.render_html(log)
    assert '<h4 id="numpy-1-26-4-2-0-2-api-appeared">API appeared (1)</h4>' in html
    assert "<td>1</td><td>1</td><td>1</td><td>1</td></tr>" in html  # the summary's counts per group
