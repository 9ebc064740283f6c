"""``conformance coverage``: the reference lists load with every mistake located, an entry
is covered only by an applicable case that asserts what its set asks, and the committed
page and targets hold for the corpus."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from results_factory import record, sample, typed

from conformance import registry
from conformance.load.reader import Vocabulary, load_text
from conformance.model import ERROR_KINDS
from conformance.source import CaseFormatError, split
from conformance.tools import coverage
from conformance.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent

VIEWS = """\
framework: torch
set: views
title: 'Tensor Views'
source: https://github.com/pytorch/pytorch/blob/v2.13.0/docs/source/tensor_view.rst
version: "2.13.0"
target: 100
operations:
  - name: view
    keys: [method:view]
  - name: narrow
    keys: [method:narrow]
  - name: select
    keys: [method:select]
"""

INPLACE = """\
framework: torch
set: inplace
title: in-place methods
source: introspection of torch.Tensor in torch 2.13.0
version: "2.13.0"
target: 90
operations:
  - name: add_
    keys: [method:add_]
    counterparts: {paddle: add_}
  - name: share_memory_
    keys: []
    no_counterpart: for torch.multiprocessing only
"""

VOCAB = Vocabulary(frameworks=("torch", "paddle"),
                   operations={"method:view", "method:narrow", "method:add_", "method:select"}, claims=set())

CASES = """\
cases:
  - id: views.view.shares
    title: t
    given: {x: {data: [1.0, 2.0]}}
    steps:
      - y = x.view(2)
    expect: {shares_memory: {y & x: true}}
  - id: views.narrow.values_only
    title: t
    given: {x: {data: [1.0, 2.0]}}
    steps:
      - y = x.narrow(0, 0, 1)
    expect: {values: {y: [1.0]}}
  - id: inplace.add_.whole
    title: t
    given: {x: {data: [1.0, 2.0]}}
    steps:
      - v = x[:]
      - y = x.add_(1)
    expect: {same_object: {y & x: true}, shares_memory: {v & x: true}, version_change: {x: 1}}
    frameworks:
      paddle: {not_applicable: not on paddle}
"""


class FakeAdapter:
    def __init__(self, keys: set[str], absent: dict[str, str] | None = None,
                 unobservable: frozenset[str] = frozenset()) -> None:
        self.keys, self.absent, self.unobservable = keys, absent or {}, unobservable

    def lacks(self, key: str) -> str | None:
        if key in self.absent:
            return self.absent[key]
        return None if key in self.keys else f"fake has no counterpart for {key}"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def cases() -> list[Any]:
    result = load_text(CASES, "cases/t.yaml", VOCAB)
    assert not result.errors, result.errors
    return result.cases


ALL = {"method:view", "method:narrow", "method:add_", "method:select"}


def test_a_view_op_is_covered_by_an_applicable_case_asserting_an_aliasing_relation(tmp_path: Path) -> None:
    ref = coverage.read_list(write(tmp_path, "torch-views.yaml", VIEWS))
    cov = coverage.measure(ref, cases(), {"torch": FakeAdapter(ALL), "paddle": FakeAdapter({"method:view"})})
    by = {e.entry.name: e for e in cov.entries}
    assert by["view"].covered and [c.id for c in by["view"].cases] == ["views.view.shares"]
    assert by["view"].also_on == ("paddle",)
    assert not by["narrow"].covered  # a case uses it, but asserts only values
    assert by["narrow"].gap() == "no case asserts shares_memory or same_storage or same_object or recorded_view"
    assert by["select"].gap() == "no case applies"
    assert (cov.covered, len(cov.counted), cov.meets_target) == (1, 3, False)


def test_a_key_missing_or_absent_from_the_table_is_not_in_the_vocabulary(tmp_path: Path) -> None:
    ref = coverage.read_list(write(tmp_path, "torch-views.yaml", VIEWS))
    adapter = FakeAdapter({"method:narrow"}, absent={"method:view": "torch has no view(); use reshape"})
    by = {e.entry.name: e for e in coverage.measure(ref, cases(), {"torch": adapter}).entries}
    assert by["view"].gap() == "not in the vocabulary (torch has no view(); use reshape)"
    assert by["select"].gap() == "not in the vocabulary (fake has no counterpart for method:select)"


def test_an_in_place_method_needs_identity_memory_and_version_and_no_counterpart_is_not_counted(
        tmp_path: Path) -> None:
    ref = coverage.read_list(write(tmp_path, "torch-inplace.yaml", INPLACE))
    cov = coverage.measure(ref, cases(), {"torch": FakeAdapter(ALL), "paddle": FakeAdapter(ALL)})
    assert [e.entry.name for e in cov.counted] == ["add_"] and cov.percent == 100.0
    assert cov.entries[0].also_on == ()  # paddle: the case's override says not applicable
    weaker = CASES.replace(", version_change: {x: 1}", "")
    result = load_text(weaker, "cases/t.yaml", VOCAB)
    entry = coverage.measure(ref, result.cases, {"torch": FakeAdapter(ALL)}).entries[0]
    assert entry.gap() == "no case asserts version_change"
    # a framework that cannot observe versions is not asked for them
    blind = coverage.measure(ref, result.cases, {"torch": FakeAdapter(ALL, unobservable=frozenset({"version_change"}))})
    assert blind.entries[0].covered


def test_a_case_recorded_as_not_applicable_in_a_results_file_does_not_count(tmp_path: Path) -> None:
    ref = coverage.read_list(write(tmp_path, "torch-views.yaml", VIEWS))
    document = sample()
    document["results"] = [dict(record("views.view.shares", "torch", "not_applicable")),
                           dict(record("views.view.shares", "paddle"))]
    not_run = coverage.not_run_from_results(typed(document))
    entry = coverage.measure(ref, cases(), {"torch": FakeAdapter(ALL)}, not_run).entries[0]
    assert entry.gap() == "no case applies"


def test_every_mistake_of_a_list_is_reported_with_its_place(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", """\
        framework: torch
        set: copies
        title: t
        source: the docs
        version: "1"
        target: 120
        operations:
          - name: view
            keys: [view]
          - name: narrow
            keys: [method:narrow]
          - name: narrow
            keys: [method:narrow]
          - name: add_
            keys: [method:add_]
            counterparts: {paddle: add_}
            no_counterpart: none
          - keys: [method:narrow]
            titel: x
        """)
    with pytest.raises(CaseFormatError) as info:
        coverage.read_list(bad, "bad.yaml")
    messages = [e.render().splitlines()[0] for e in split(info.value)]
    assert messages == [
        "bad.yaml:2:1: unknown set 'copies'",
        "bad.yaml:4:1: 'source' must be a link (http:// or https://) or say 'introspection of ...'",
        "bad.yaml:6:1: 'target' must be a percentage 1-100, got 120",
        "bad.yaml:9:12: 'view' is not a vocabulary key",
        "bad.yaml:12:5: 'narrow' is listed twice",
        "bad.yaml:17:5: an entry with counterparts cannot say no_counterpart",
        "bad.yaml:19:5: unknown key 'titel' in an operation entry",
        "bad.yaml:18:5: an operation entry needs 'name'",
    ]


def test_a_list_without_its_fields_says_which(tmp_path: Path) -> None:
    path = write(tmp_path, "empty.yaml", "framework: torch\nset: views\n")
    with pytest.raises(CaseFormatError) as info:
        coverage.read_list(path, "empty.yaml")
    assert [e.message for e in split(info.value)] == [
        "a reference list needs 'title'", "a reference list needs 'source'", "a reference list needs 'version'",
        "a reference list needs 'operations'"]


def test_the_command_reports_bad_lists_and_checks_targets(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    lists = tmp_path / "lists"
    lists.mkdir()
    write(lists, "bad.yaml", "framework: torch\n")
    assert main(["coverage", "--lists", str(lists), str(ROOT / "cases" / "views" / "axes.yaml")]) == 2
    assert f"{lists / 'bad.yaml'}:1:1: a reference list needs 'set'" in capsys.readouterr().err
    (lists / "bad.yaml").unlink()
    permute = VIEWS.replace("select\n    keys: [method:select]", "permute\n    keys: [method:permute]")
    write(lists, "torch-views.yaml", permute)
    axes = str(ROOT / "cases" / "views" / "axes.yaml")
    assert main(["coverage", "--lists", str(lists), axes]) == 0
    out, err = capsys.readouterr()
    assert "| `permute` | `method:permute` | `views.permute.three_d_shares` | numpy, paddle," in out
    assert "torch-views: 1/3 covered (33.3 %) BELOW the target of 100 %" in err
    assert main(["coverage", "--lists", str(lists), "--check", axes]) == 1


def test_the_committed_page_is_current_and_every_list_meets_its_target() -> None:
    from corpus_cases import corpus

    lists = coverage.read_lists()
    assert {ref.framework for ref in lists} <= set(registry.BUILTIN)
    coverages = coverage.measure_all(lists, corpus())
    page = coverage.render_markdown(coverages, coverage.framework_titles())
    assert (ROOT / "docs" / "coverage.md").read_text() == page, (
        "docs/coverage.md is stale: run 'conformance regen'")
    below = [line for line in coverage.summary_lines(coverages) if "BELOW" in line or line.startswith("  ")]
    assert not below, "\n".join(below)


def test_an_operation_the_framework_lacks_is_covered_by_the_case_expecting_its_error(tmp_path: Path) -> None:
    ref = coverage.read_list(write(tmp_path, "torch-inplace.yaml", INPLACE))
    asserted = "expect: {same_object: {y & x: true}, shares_memory: {v & x: true}, version_change: {x: 1}}"
    refused = CASES.replace(asserted, "expect: {error: {at: 2, kind: unsupported_dtype}}")
    result = load_text(refused, "cases/t.yaml", VOCAB)
    assert not result.errors, result.errors
    entry = coverage.measure(ref, result.cases, {"torch": FakeAdapter(ALL)}).entries[0]
    assert entry.covered and entry.raises
    # an error at another step does not count
    other = refused.replace("at: 2", "at: 1")
    entry = coverage.measure(ref, load_text(other, "cases/t.yaml", VOCAB).cases,
                             {"torch": FakeAdapter(ALL)}).entries[0]
    assert not entry.covered
    assert entry.gap() == "no case asserts same_object, shares_memory or same_storage, version_change"


@pytest.mark.parametrize("kind", sorted(set(ERROR_KINDS) - coverage.LACKS_OPERATION))
def test_an_expected_error_of_a_kind_that_does_not_say_the_operation_is_lacking_covers_nothing(
        tmp_path: Path, kind: str) -> None:
    # a leaf that requires grad, a refused shape, a message no kind matches (other): the
    # framework has the operation and refused these arguments, so the case checks no result of it
    ref = coverage.read_list(write(tmp_path, "torch-inplace.yaml", INPLACE))
    asserted = "expect: {same_object: {y & x: true}, shares_memory: {v & x: true}, version_change: {x: 1}}"
    refused = CASES.replace(asserted, f"expect: {{error: {{at: 2, kind: {kind}}}}}")
    result = load_text(refused, "cases/t.yaml", VOCAB)
    assert not result.errors, result.errors
    entry = coverage.measure(ref, result.cases, {"torch": FakeAdapter(ALL)}).entries[0]
    assert not entry.covered and not entry.raises
    assert entry.gap() == "no case asserts same_object, shares_memory or same_storage, version_change"


def test_the_kinds_that_say_an_operation_is_lacking_are_error_kinds() -> None:
    assert coverage.LACKS_OPERATION == {"unsupported_dtype", "immutable"} <= set(ERROR_KINDS)


def test_basic_indexing_is_matched_by_the_kind_of_index_a_case_reads(tmp_path: Path) -> None:
    listed = VIEWS.replace("select\n    keys: [method:select]", "basic indexing\n    keys: [index:basic]")
    ref = coverage.read_list(write(tmp_path, "torch-views.yaml", listed))
    torch = {"torch": FakeAdapter(ALL | {"op:getitem"})}
    indexing = CASES.replace("y = x.view(2)", "y = x[1:]").replace("views.view.shares", "views.slice.shares")
    result = load_text(indexing, "cases/t.yaml", VOCAB)
    by = {e.entry.name: e for e in coverage.measure(ref, result.cases, torch).entries}
    assert [c.id for c in by["basic indexing"].cases] == ["views.slice.shares", "inplace.add_.whole"]
    assert by["basic indexing"].covered
    advanced = indexing.replace("y = x[1:]", "y = x[[0, 1]]").replace("v = x[:]", "v = x[[0]]")
    by = {e.entry.name: e for e in coverage.measure(
        ref, load_text(advanced, "cases/t.yaml", VOCAB).cases, torch).entries}
    assert by["basic indexing"].gap() == "no case applies"


def test_the_command_counts_only_what_a_results_file_ran(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import json

    from results_factory import document, record

    lists = tmp_path / "lists"
    lists.mkdir()
    permute = VIEWS.replace("select\n    keys: [method:select]", "permute\n    keys: [method:permute]")
    write(lists, "torch-views.yaml", permute)
    axes = str(ROOT / "cases" / "views" / "axes.yaml")
    results = tmp_path / "results.json"
    results.write_text(json.dumps(document({}, [record("views.permute.three_d_shares", "torch", "not_applicable")])))
    assert main(["coverage", "--lists", str(lists), "--results", str(results), axes]) == 0
    assert "| `permute` | `method:permute` | **not covered**: no case applies |" in capsys.readouterr().out
    results.write_text("{}")
    assert main(["coverage", "--lists", str(lists), "--results", str(results), axes]) == 2
    assert "format: is missing, so this is no results file this tool wrote" in capsys.readouterr().err
