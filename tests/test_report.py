"""The behaviour report (analysis, Markdown, HTML), `conformance report` and
`conformance diff`, on hand-made results documents (no framework runs)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from results_factory import record, sample, typed

from conformance.report import analysis
from conformance.report import html as report_html
from conformance.report import markdown as report_md
from conformance.report.diff import compare, render_markdown, render_text
from conformance.resultsmodel import record_from_json
from conformance.tools.cli import main


def test_agreement_divergences_and_failures() -> None:
    report = analysis.build(typed(sample()))
    rows = {r.case_id: r for r in report.rows}
    assert rows["views.reshape.agree"].agrees is True
    assert rows["views.expand.paddle_copies"].agrees is False
    assert rows["views.expand.paddle_copies"].why == {"paddle": "Paddle's expand copies"}
    # torch fails but observed the same behaviour as paddle; numpy is not applicable
    assert rows["copies.clone.broken"].agrees is True and rows["copies.clone.broken"].failing
    assert [r.case_id for r in report.divergences] == ["views.expand.paddle_copies"]
    assert report.families["views"].text() == "50.0% (1 of 2)"
    assert report.overall.text() == "66.7% (2 of 3)"


def test_a_case_run_on_one_framework_is_not_scored() -> None:
    doc = sample()
    doc["results"] = [r for r in doc["results"] if r["case"] != "copies.clone.broken" or r["framework"] == "torch"]
    assert analysis.build(typed(doc)).families["copies"].comparable == 0


def test_float32_and_float64_renderings_of_a_value_agree() -> None:
    doc = sample()
    for r in doc["results"]:
        if r["case"] == "views.reshape.agree":
            r["observed"]["values.y"] = [2.7182817459106445] if r["framework"] == "paddle" else [2.718281828459045]
    rows = {r.case_id: r for r in analysis.build(typed(doc)).rows}
    assert rows["views.reshape.agree"].agrees is True
    for r in doc["results"]:
        if r["case"] == "views.reshape.agree" and r["framework"] == "paddle":
            r["observed"]["values.y"] = [2.7185]
    rows = {r.case_id: r for r in analysis.build(typed(doc)).rows}
    assert rows["views.reshape.agree"].agrees is False


def test_operation_classification_per_framework() -> None:
    ops = {o.operation: o.kinds for o in analysis.build(typed(sample())).operations}
    assert ops["method:reshape"] == {fw: {"view": ["views.reshape.agree"]} for fw in ("torch", "paddle", "numpy")}
    assert ops["method:expand"]["paddle"] == {"copy": ["views.expand.paddle_copies"]}
    assert ops["method:expand"]["torch"] == {"view": ["views.expand.paddle_copies"]}


def test_operation_that_raises_is_classified_as_raising() -> None:
    doc = sample()
    for r in doc["results"]:
        if r["case"] == "views.reshape.agree" and r["framework"] == "torch":
            r["behaviour"] = {"pairs": [], "error": {"at": 1, "kind": "not_contiguous_view", "type": "RuntimeError",
                                                      "message": "m"}, "warnings": []}
    ops = {o.operation: o.kinds for o in analysis.build(typed(doc)).operations}
    assert ops["method:reshape"]["torch"] == {"raises (not_contiguous_view)": ["views.reshape.agree"]}


CLASSIFIED = """\
cases:
  - id: views.index.negative
    title: x[-1] of a 2-D tensor is a row
    given:
      x: {shape: [2, 2], fill: 1.0}
    steps:
      - y = x[-1]
    expect:
      shares_memory: {y & x: true}
  - id: views.split.halves
    title: both halves of split(1) share memory with x
    given:
      x: {data: [1.0, 2.0]}
    steps:
      - a, b = x.split(1)
    expect:
      shares_memory: {a & x: true, b & x: true}
"""


def test_operation_classification_of_a_negative_index_and_of_several_results() -> None:
    """Two defects the classification had (issue 18), from case files to the table: x[-1] was
    filed under advanced indexing, and a step with several results under nothing."""
    from results_factory import document

    from conformance import registry
    from conformance.load.reader import load_text
    from conformance.report.results import case_info
    from conformance.resultsmodel import to_json

    cases = {c.id: to_json(case_info(c)) for c in load_text(CLASSIFIED, "cases/c.yaml", registry.vocabulary()).cases}
    records = [record("views.index.negative", fw, pairs={("y", "x"): "view"}) for fw in ("torch", "numpy")]
    records += [record("views.split.halves", fw, pairs={("a", "x"): "view", ("b", "x"): "view"})
                for fw in ("torch", "numpy")]
    ops = {o.operation: o.kinds for o in analysis.build(typed(document(cases, records))).operations}
    assert ops == {"index:basic": {fw: {"view": ["views.index.negative"]} for fw in ("torch", "numpy")},
                   "method:split": {fw: {"view": ["views.split.halves"]} for fw in ("torch", "numpy")}}


def test_a_production_is_what_its_step_did_not_what_a_later_step_made_of_it() -> None:
    """The third classification defect (issue 18): s = x[:, ::2] is a view, and Paddle's
    s.contiguous() then re-buffers s in place, so at the end of the case s and x are apart.
    The relation the memory probe saw right after the step classifies the indexing; where the
    two agree on sharing, the end's (confirmed by the expectations) stands."""
    from results_factory import case_info, document

    prod = [{"step": 1, "operation": "index:basic", "result": "s", "input": "x"}]
    cases = {"copies.contiguous.strided": case_info("copies.contiguous.strided", productions=prod)}
    rebuffered = record("copies.contiguous.strided", "paddle", pairs={("s", "x"): "copy"})
    rebuffered["behaviour"]["productions"] = [{"step": 1, "result": "s", "input": "x", "class": "view"}]
    stays = record("copies.contiguous.strided", "torch", pairs={("s", "x"): "view"})
    stays["behaviour"]["productions"] = [{"step": 1, "result": "s", "input": "x", "class": "view"}]
    older = record("copies.contiguous.strided", "numpy", pairs={("s", "x"): "copy"})  # no productions: the end
    ops = {o.operation: o.kinds for o in analysis.build(typed(document(cases, [rebuffered, stays, older]))).operations}
    assert ops["index:basic"] == {"paddle": {"view": ["copies.contiguous.strided"]},
                                  "torch": {"view": ["copies.contiguous.strided"]},
                                  "numpy": {"copy": ["copies.contiguous.strided"]}}


def test_claim_verdicts_use_the_per_framework_stance() -> None:
    claims = {c.claim: c for c in analysis.build(typed(sample())).claims}
    assert claims["S3-03"].verdicts == {"torch": "holds", "paddle": "does not hold", "numpy": "holds"}
    assert claims["S3-03"].evidence["paddle"] == {"does_not_hold": ["views.expand.paddle_copies"],
                                                  "holds": ["views.reshape.agree"]}
    # torch's case fails: the claim cannot be settled there
    assert claims["S3-07"].verdicts == {"torch": "unsettled", "paddle": "does not hold", "numpy": "not applicable"}
    assert claims["S4-01"].verdicts == {fw: "not run" for fw in ("torch", "paddle", "numpy")}
    assert claims["S4-01"].cases == []


def test_markdown_report_sections() -> None:
    text = report_md.render(analysis.build(typed(sample())))
    for heading in ("## Summary", "## Divergences", "## Claims", "## Operation classification", "## Matrix",
                    "### views", "### copies", "## Environment"):
        assert f"\n{heading}\n" in text
    assert text.index("## Divergences") < text.index("## Matrix")
    assert "1 case where the frameworks do not behave the same" in text
    assert ("| `views.expand.paddle_copies`<br>[cases/views/c.yaml:20](../cases/views/c.yaml#L20) | 🟦 y↔x: view "
            "| ◆ 🟩 y↔x: copy | 🟦 y↔x: view | **paddle**: Paddle's expand copies |") in text
    # claim text is shown as written: its backticks too
    assert "| **S3-03** \\`view()\\` changes shape but shares memory. | ✅ holds | ❌ does not hold | ✅ holds |" in text  # noqa: E501
    assert "| `x.expand(…)` | view (1) | copy (1) | view (1) |" in text
    assert "❌ 🟩 y↔x: copy: values of y: expected \\[2.0\\], observed \\[1.0\\]" in text
    assert "- paddle 3.3.1 (devices: cpu)" in text
    assert "**Agreement** (share of cases that ran on at least two frameworks where all behave the same): " \
           "**66.7% (2 of 3)**" in text


def _with_jax(doc: dict, outcome: str, **kwargs: object) -> dict:
    """The sample with a fourth framework, jax, on every case."""
    doc["environment"]["frameworks"]["jax"] = {"version": "0.10.2", "devices": ["cpu"]}
    for case_id in doc["cases"]:
        doc["results"].append(record(case_id, "jax", outcome, **kwargs))  # type: ignore[arg-type]
    return doc


def test_a_refusal_is_a_behaviour_of_its_own() -> None:
    """A refused item (immutable arrays) is a behaviour: its cell says so, it counts in the
    agreement (it differs from frameworks that make the mutation), and a claim whose cases
    are all refused on a framework gets that verdict."""
    doc = _with_jax(sample(), "refused", error=(1, "immutable", "TypeError"),
                    reason="refused: step 1 'y[0] = 5.0' (c.yaml:3) raised TypeError: JAX arrays are immutable")
    report = analysis.build(typed(doc))
    assert report.frameworks[-1] == "jax"
    rows = {r.case_id: r for r in report.rows}
    assert rows["views.reshape.agree"].agrees is False  # jax refused what the others did
    assert rows["views.reshape.agree"].cells["jax"].words == "raises TypeError (immutable) at step 1"
    assert dict(analysis.outcome_counts(report))["jax"][analysis.OUTCOMES.index("refused")] == 3
    claims = {c.claim: c for c in report.claims}
    assert claims["S3-03"].verdicts["jax"] == "refused"
    text = report_md.render(report)
    assert "| jax | 0 | 0 | 3 | 0 |" in text
    assert "⊘ 🟥 raises TypeError (immutable) at step 1" in text
    assert "⊘ refused: the framework's arrays are immutable" in text
    assert "o-refused" in report_html.render(report)


def test_agreement_by_pair() -> None:
    """The pairs matrix: for two frameworks, the share of the cases both ran where they
    behave the same (the same comparison as the agreement, on two)."""
    doc = _with_jax(sample(), "pass", pairs={("y", "x"): "view"})
    report = analysis.build(typed(doc))
    assert analysis.pair_score(report, "torch", "paddle").text() == "66.7% (2 of 3)"
    assert analysis.pair_score(report, "paddle", "torch").text() == "66.7% (2 of 3)"
    # numpy is not applicable on copies.clone.broken: two cases in common
    assert analysis.pair_score(report, "numpy", "jax").text() == "100.0% (2 of 2)"
    assert analysis.pair_score(report, "torch", "jax").short() == "67% of 3"
    text = report_md.render(report)
    assert "| | torch | paddle | numpy | jax |" in text
    assert "| torch |  | 67% of 3 | 100% of 2 | 67% of 3 |" in text
    page = report_html.render(report)
    assert "id='pairs-table'" in page and "<td class='num'>67% of 3</td>" in page


def test_no_pairs_matrix_for_two_frameworks() -> None:
    doc = sample()
    doc["results"] = [r for r in doc["results"] if r["framework"] != "numpy"]
    del doc["environment"]["frameworks"]["numpy"]
    assert "Agreement by pair" not in report_md.render(analysis.build(typed(doc)))


def test_markdown_escapes_table_syntax() -> None:
    doc = sample()
    doc["cases"]["views.reshape.agree"]["title"] = "a | b <script>"
    text = report_md.render(analysis.build(typed(doc)))
    assert "a \\| b &lt;script&gt;" in text


def test_markdown_shows_dunder_names_literally_and_keeps_them_in_addresses() -> None:
    doc = sample()
    doc["cases"]["views.expand.paddle_copies"]["overrides"]["paddle"]["reason"] = (
        "paddle.Tensor defines no __iadd__ (https://example.org/api/tf/Tensor#__getitem__)")
    text = report_md.render(analysis.build(typed(doc)))
    assert "paddle.Tensor defines no \\_\\_iadd\\_\\_ (<https://example.org/api/tf/Tensor#__getitem__>)" in text
    page = _gfm_text(text)
    assert "paddle.Tensor defines no __iadd__ (https://example.org/api/tf/Tensor#__getitem__)" in page


def _gfm_text(markdown: str) -> str:
    from test_escaping import Html, gfm

    return Html(gfm(markdown)).all_text()


def test_long_reasons_are_cut_at_a_word_boundary() -> None:
    assert report_md.cut_at_word("short enough", 20) == "short enough"
    assert report_md.cut_at_word("one two three four", 12) == "one two…"
    assert report_md.cut_at_word("a list, of words", 9) == "a list…"  # no dangling comma
    assert report_md.cut_at_word("see https://example.org/a/long/address", 30) == "see…"
    assert report_md.cut_at_word("unbreakableword", 6) == "unbre…"
    doc = sample()
    reason = "word " * 100 + "https://example.org/a/long/address/that/would/be/cut"
    doc["cases"]["views.expand.paddle_copies"]["overrides"]["paddle"]["reason"] = reason
    text = report_md.render(analysis.build(typed(doc)))
    why = text.split("**paddle**: ", 1)[1].split(" |", 1)[0]
    assert why.endswith("word…") and len(why) <= 400 and "https" not in why


def test_the_claims_section_names_the_claims_file_of_the_repository() -> None:
    text = report_md.render(analysis.build(typed(sample())))
    assert "seed-claims" not in text
    assert "[`conformance/data/claims.yaml`](../conformance/data/claims.yaml)" in text
    assert (Path(__file__).resolve().parent.parent / "conformance/data/claims.yaml").is_file()


def test_reports_have_no_timings_so_same_results_give_same_bytes() -> None:
    doc = sample()
    other = copy.deepcopy(doc)
    for r in other["results"]:
        r["duration_s"] = 42.0
    other["environment"]["platform"] = "Linux-another-kernel"
    other["environment"]["python"] = "3.11.9"
    other["run"]["exit_status"] = 1
    for render in (report_md.render, report_html.render):
        assert render(analysis.build(typed(doc))) == render(analysis.build(typed(other)))


def test_html_is_self_contained() -> None:
    html = report_html.render(analysis.build(typed(sample())))
    assert html.startswith("<!DOCTYPE html>")
    for remote in ("<link", "src=", "@import", "url("):
        assert remote not in html
    assert "<script>" in html and "<style>" in html
    assert "data-case='views.expand.paddle_copies'" in html and "data-diverges='1'" in html


def test_html_escapes_case_text() -> None:
    doc = sample()
    doc["cases"]["views.reshape.agree"]["title"] = "<img src=x onerror=alert(1)>"
    html = report_html.render(analysis.build(typed(doc)))
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


# ---- conformance report


def write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_report_command_writes_both_files_and_check_detects_staleness(tmp_path: Path, capsys) -> None:
    results = write(tmp_path / "r.json", sample())
    out = tmp_path / "reports"
    assert main(["report", str(results), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["behaviour.html", "behaviour.md"]
    assert main(["report", str(results), "--out", str(out), "--check"]) == 0
    changed = sample()
    next(r for r in changed["results"] if r["case"] == "views.reshape.agree")["behaviour"]["pairs"][0]["class"] = "copy"
    assert main(["report", str(write(tmp_path / "new.json", changed)), "--out", str(out), "--check"]) == 1
    err = capsys.readouterr().err
    assert f"{out / 'behaviour.md'}: out of date with the corpus" in err
    assert "regenerate with `conformance report" in err


def test_report_command_refuses_other_formats(tmp_path: Path, capsys) -> None:
    results = write(tmp_path / "r.json", {"format": 1, "results": []})
    assert main(["report", str(results)]) == 2
    assert "results format 1, this tool reads format 2; rerun the suite" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["report", str(tmp_path / "bad.json")]) == 2
    assert "cannot read results JSON" in capsys.readouterr().err


# ---- conformance diff


def test_diff_of_identical_runs_is_empty() -> None:
    doc = sample()
    other = copy.deepcopy(doc)
    for r in other["results"]:
        r["duration_s"] = 9.0
    diff = compare(typed(doc), typed(other))
    assert diff.empty and render_text(diff).endswith("no changes\n")


def test_diff_reports_exactly_the_changed_case() -> None:
    old = sample()
    new = copy.deepcopy(old)
    for r in new["results"]:
        if r["case"] == "views.reshape.agree" and r["framework"] == "paddle":
            r.update(record("views.reshape.agree", "paddle", "fail", pairs={("y", "x"): "copy"},
                            observed={"values.y": [1.0]}, reason="shares_memory(y, x): expected True"))
    new["environment"]["frameworks"]["paddle"]["version"] = "3.4.0"
    diff = compare(typed(old), typed(new))
    assert [(c.case, c.framework, c.kind) for c in diff.changes] == [("views.reshape.agree", "paddle", "new failure")]
    assert diff.changes[0].details == ["y↔x: view → copy"]
    text = render_text(diff)
    assert "paddle 3.3.1 → 3.4.0" in text
    assert ("new failures (1):\n  views.reshape.agree[paddle]: pass → fail\n    was: y↔x: view\n"
            "    now: y↔x: copy (fail: shares_memory(y, x): expected True)\n    y↔x: view → copy") in text
    md = render_markdown(diff)
    assert ("| `views.reshape.agree` | paddle | new failure: pass → fail | y↔x: view | "
            "y↔x: copy (fail: shares_memory(y, x): expected True) | y↔x: view → copy |") in md


def test_diff_reports_new_passes_value_changes_and_added_removed_cases() -> None:
    old = sample()
    new = copy.deepcopy(old)
    for r in new["results"]:
        if r["case"] == "copies.clone.broken" and r["framework"] == "torch":
            r["outcome"], r["reason"] = "pass", ""
        if r["case"] == "views.reshape.agree" and r["framework"] == "numpy":
            r["observed"]["values.y"] = [5.0]
    del new["cases"]["views.expand.paddle_copies"]
    new["results"] = [r for r in new["results"] if r["case"] != "views.expand.paddle_copies"]
    new["cases"]["views.new.case"] = copy.deepcopy(old["cases"]["views.reshape.agree"])
    new["results"].append(record("views.new.case", "torch"))
    diff = compare(typed(old), typed(new))
    assert diff.added == ["views.new.case"] and diff.removed == ["views.expand.paddle_copies"]
    kinds = {(c.case, c.framework): (c.kind, c.details) for c in diff.changes}
    assert kinds == {("copies.clone.broken", "torch"): ("new pass", []),
                     ("views.reshape.agree", "numpy"): ("behaviour changed", ["values.y: [1.0] → [5.0]"])}


def test_diff_command_exit_status_and_markdown(tmp_path: Path, capsys) -> None:
    a = write(tmp_path / "a.json", sample())
    assert main(["diff", str(a), str(a)]) == 0
    changed = sample()
    changed["results"][0]["outcome"] = "error"
    changed["results"][0]["reason"] = "crashed"
    b = write(tmp_path / "b.json", changed)
    capsys.readouterr()
    assert main(["diff", str(a), str(b), "--format", "md"]) == 1
    assert capsys.readouterr().out.startswith("# Behaviour changes\n")


@pytest.mark.parametrize("missing", ["old", "new"])
def test_diff_of_a_missing_file_says_so(tmp_path: Path, capsys, missing: str) -> None:
    a = write(tmp_path / "a.json", sample())
    args = [str(tmp_path / "nope.json"), str(a)] if missing == "old" else [str(a), str(tmp_path / "nope.json")]
    assert main(["diff", *args]) == 2
    assert "nope.json: cannot read results JSON" in capsys.readouterr().err


DOCUMENTED = """\
cases:
  - id: views.reshape.transposed_input
    title: reshape of a transposed input copies
    given:
      x: {shape: [2, 3], arange: true}
    steps:
      - t = x.transpose(0, 1)
      - y = t.reshape(6)
    expect:
      shares_memory: {y & t: false}
    documentation:
      paddle:
        says: "the output Tensor shares data with the input"
        source: https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/reshape_en.html
        contradicts: shares_memory
"""


def test_documentation_disagreements_are_listed_with_what_was_measured() -> None:
    """A case's documentation: field reaches the results and both reports, with the observed
    value of the kind it names and whether the case confirmed it there."""
    from results_factory import document

    from conformance import registry
    from conformance.load.reader import load_text
    from conformance.report.results import case_info
    from conformance.resultsmodel import to_json

    (case,) = load_text(DOCUMENTED, "cases/c.yaml", registry.vocabulary()).cases
    cases = {case.id: to_json(case_info(case))}
    assert cases[case.id]["documentation"] == {"paddle": {
        "says": "the output Tensor shares data with the input", "contradicts": "shares_memory",
        "source": "https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/reshape_en.html"}}
    records = [record(case.id, fw, pairs={("y", "t"): "copy"}) for fw in ("torch", "paddle")]
    report = analysis.build(typed(document(cases, records)))
    (doc,) = report.documented
    assert (doc.framework, doc.case_id, doc.measured, doc.outcome) == (
        "paddle", case.id, [("y.t", False)], "pass")
    md = report_md.render(report)
    assert ("| paddle | `views.reshape.transposed_input` | the output Tensor shares data with the input | "
            "`shares_memory` `y & t`: False | "
            "<https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/reshape_en.html> |") in md
    assert "<h2 id='documentation'>Documentation disagrees (1)</h2>" in report_html.render(report)
    failing = [record(case.id, "paddle", "fail", pairs={("y", "t"): "view"}, reason="shares_memory")]
    (doc,) = analysis.build(typed(document(cases, failing))).documented
    assert doc.outcome == "fail"
    assert "(FAIL: not confirmed)" in report_md.render(analysis.build(typed(document(cases, failing))))
    assert "No case records" in report_md.render(analysis.build(typed(sample())))


def test_a_documented_refusal_that_does_not_happen_shows_the_steps_error_or_none() -> None:
    from results_factory import document

    from conformance import registry
    from conformance.load.reader import load_text
    from conformance.report.results import case_info
    from conformance.resultsmodel import to_json

    text = DOCUMENTED.replace("contradicts: shares_memory", "contradicts: error")
    (case,) = load_text(text, "cases/c.yaml", registry.vocabulary()).cases
    cases = {case.id: to_json(case_info(case))}
    quiet = record(case.id, "paddle", pairs={("y", "t"): "copy"})
    (doc,) = analysis.build(typed(document(cases, [quiet]))).documented
    assert doc.measured == [("", "no error")]
    raised = record(case.id, "paddle", error=(2, "type_error", "builtins.TypeError"))
    (doc,) = analysis.build(typed(document(cases, [raised]))).documented
    assert doc.measured == [("", "raises TypeError (type_error) at step 2")]
    assert "| `error` raises TypeError (type_error) at step 2 |" in report_md.render(
        analysis.build(typed(document(cases, [raised]))))


def test_cases_that_conformance_discover_found_have_a_section_of_their_own() -> None:
    doc = sample()
    assert "No case comes from `conformance discover`" in report_md.render(analysis.build(typed(doc)))
    doc["cases"]["views.expand.paddle_copies"]["tags"].append("discovered")
    report = analysis.build(typed(doc))
    assert [r.case_id for r in report.findings] == ["views.expand.paddle_copies"]
    text = report_md.render(report)
    section = text[text.index("## Findings of conformance discover"):text.index("## Compiled mode differs")]
    assert "1 case that `conformance discover` found" in section
    assert "| ◆ 🟩 y↔x: copy |" in section and "**paddle**: Paddle's expand copies" in section
    page = report_html.render(report)
    assert "<h2 id='findings'>Findings of conformance discover (1)</h2>" in page
    assert page.index("id='findings-table'") < page.index("id='compiled'")


def test_a_compiled_difference_about_an_intermediate_says_it_was_observed_apart() -> None:
    # the compiled function returns what the program leaves; w (an intermediate) came from
    # the second compile that returns it as well (conformance/run/compiled.py)
    eager = {"observed": {"same_object.w.v": True, "values.y": [1.0], "values.x": [1.0]}}
    compiled = {"observed_apart": ["w"], "observed": {"same_object.w.v": False, "values.y": [2.0], "values.x": [1.0]}}
    eager_record = record("c.d", "torch", observed=eager["observed"])
    compiled_record = record("c.d", "torch_compile", "known_divergence", observed=compiled["observed"])
    compiled_record["observed_apart"] = compiled["observed_apart"]
    assert analysis.compiled_differences(record_from_json(eager_record), record_from_json(compiled_record)) == [
        "same_object.w.v: True → False (observed apart)", "values.y: [1.0] → [2.0]"]


def test_an_unchecked_item_is_counted_apart_shows_why_and_is_not_scored() -> None:
    doc = sample()
    for r in doc["results"]:
        if r["case"] == "views.reshape.agree" and r["framework"] == "numpy":
            r.update(outcome="unchecked", reason="nothing compared: version_change of y: numpy has no version change",
                     observed={}, behaviour={"pairs": [], "error": None, "warnings": []})
    report = analysis.build(typed(doc))
    (row,) = [r for r in report.rows if r.case_id == "views.reshape.agree"]
    assert row.cells["numpy"].words == "nothing compared (unobservable)"
    assert row.agrees is True  # torch and paddle, the two that compared something
    counts = dict(analysis.outcome_counts(report))["numpy"]
    assert counts[analysis.OUTCOMES.index("unchecked")] == 1
    text = report_md.render(report)
    assert "nothing compared: version_change of y: numpy has no version change" in text


def test_the_gradient_table_counts_the_cases_that_take_or_expect_a_gradient() -> None:
    """Of the cases with a backward() or autograd_grad step, or a grad expectation, how many ran
    on each framework (passed, held under an override, refused or failed) and how many are not
    applicable; the other cases are not counted, and without such a case there is no table."""
    doc = sample()
    assert "Gradients" not in report_md.render(analysis.build(typed(doc)))
    doc["cases"]["autograd.a.backward"] = {**doc["cases"]["views.reshape.agree"],
                                           "operations": ["method:backward", "method:mul"], "family": "autograd"}
    doc["cases"]["autograd.a.expects"] = {**doc["cases"]["views.reshape.agree"], "family": "autograd",
                                          "expect": {"grad.x": [1.0]}}
    doc["results"] += [record("autograd.a.backward", "torch"), record("autograd.a.backward", "paddle", "fail"),
                       record("autograd.a.backward", "numpy", "not_applicable"),
                       record("autograd.a.expects", "torch", "known_divergence"),
                       record("autograd.a.expects", "paddle", "skipped"),
                       record("autograd.a.expects", "numpy", "not_applicable")]
    report = analysis.build(typed(doc))
    assert analysis.gradient_reach(report) == [("torch", 2, 2, 0), ("paddle", 2, 1, 0), ("numpy", 2, 0, 2)]
    text = report_md.render(report)
    assert "| torch | 2 | 2 | 100% | 0 |" in text and "| numpy | 2 | 0 | 0% | 2 |" in text
    assert "id='gradients-table'" in report_html.render(report)
