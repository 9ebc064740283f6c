"""`conformance site`: the pages it builds from hand-made results (no framework runs), what
each says, that every link resolves, that the same results give the same bytes, and the
message of every input it refuses. The pages in a real browser: test_site_browser.py."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from results_factory import document, record, sample, typed
from site_links import check_links

from conformance import declared
from conformance.site import pages, urls
from conformance.site.build import render_site
from conformance.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def site_sample() -> dict[str, Any]:
    """The report's sample, with what a current run records besides: the date, the commit,
    the expectations, the steps, a documentation finding and a compiled mode."""
    doc = sample()
    doc["run"].update(date="2026-11-24", commit={"sha": COMMIT, "modified": False}, corpus="c0ffee")
    doc["cases"]["views.reshape.agree"]["expect"] = {"shares_memory.y.x": True, "values.y": [1.0]}
    doc["cases"]["views.expand.paddle_copies"]["expect"] = {"shares_memory.y.x": True}
    doc["cases"]["views.expand.paddle_copies"]["documentation"] = {
        "paddle": {"says": "expand returns a view", "source": "https://example.org/paddle/expand",
                   "contradicts": "shares_memory"}}
    for r in doc["results"]:
        if r["outcome"] != "not_applicable":
            r["steps"] = [{"number": 1, "text": "y = x.reshape(4)", "status": "ok", "warnings": [], "error": None}]
    doc["cases"]["views.expand.paddle_copies"]["tags"] = ["views", "discovered"]  # as conformance discover's
    doc["environment"]["frameworks"]["torch_compile"] = {"version": "2.13.0", "devices": ["cpu"]}
    doc["results"].append(record("views.reshape.agree", "torch_compile", pairs={("y", "x"): "view"}))
    doc["results"].append(record("views.expand.paddle_copies", "torch_compile", pairs={("y", "x"): "copy"}))
    doc["results"].sort(key=lambda r: r["nodeid"])
    doc["run"]["items"] = len(doc["results"])
    return doc


def release(version: str, outcome_of_agree: str) -> dict[str, Any]:
    """A results file of one numpy release (conformance matrix)."""
    doc = sample()
    # views.expand.paddle_copies is in no release file: its page shows no release history
    doc["results"] = [r for r in doc["results"]
                      if r["framework"] == "numpy" and r["case"] != "views.expand.paddle_copies"]
    for r in doc["results"]:
        if r["case"] == "views.reshape.agree" and outcome_of_agree == "copy":
            r.update(record("views.reshape.agree", "numpy", pairs={("y", "x"): "copy"}))
    doc["environment"]["frameworks"]["numpy"]["version"] = version
    doc["run"].update(corpus="c0ffee", release={"framework": "numpy", "package": "numpy", "version": version})
    return doc


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of the sample and two numpy releases, built once by the command."""
    folder = tmp_path_factory.mktemp("site")
    (folder / "results.json").write_text(json.dumps(site_sample()))
    (folder / "1.26.4.json").write_text(json.dumps(release("1.26.4", "copy")))
    (folder / "2.4.6.json").write_text(json.dumps(release("2.4.6", "view")))
    assert main(["site", str(folder / "results.json"), "--out", str(folder / "site"), "--releases",
                 str(folder / "1.26.4.json"), str(folder / "2.4.6.json"), "--source-url",
                 "https://example.org/repo/blob/{commit}/{path}#L{line}"]) == 0
    return folder / "site"


def text_of(path: Path) -> str:
    """The page's text without its tags, blanks collapsed."""
    raw = re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))
    text = " ".join(raw.replace("&#39;", "'").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").split())
    return re.sub(r" ([,:;.)])", r"\1", text)


# ---- the URL scheme


def test_every_page_has_its_stable_address(built: Path) -> None:
    for page in ("index.html", "search.html", "search-index.js", "style.css", "ops/index.html", "ops/reshape.html",
                 "ops/expand.html", "cases/index.html", "cases/views.reshape.agree.html",
                 "cases/views.expand.paddle_copies.html", "cases/copies.clone.broken.html", "families/views.html",
                 "claims/index.html", "claims/S3-03.html", "claims/S4-01.html", "frameworks/index.html",
                 "frameworks/paddle.html", "frameworks/torch_compile.html", "divergences.html", "findings.html",
                 "discovered.html", "compiled.html", "changelog/index.html", "changelog/numpy.html",
                 ".conformance-site"):
        assert (built / page).is_file(), page


def test_names_become_safe_file_names() -> None:
    assert urls.op(urls.operation_name("method:reshape")) == "ops/reshape.html"
    assert urls.operation_name("fn:reshape") == urls.operation_name("method:reshape")
    assert urls.operation_name("attr:T") == urls.operation_name("method:t") == "t"  # one page on any file system
    assert urls.operation_name("index:basic") == "index-basic" and urls.operation_name("call") == "call"
    assert urls.case("views.view.contiguous") == "cases/views.view.contiguous.html"
    assert urls.file_name("../x") == "_..~2f~x" and urls.file_name("we\"ird'fw") == "we~22~ird~27~fw"
    assert urls.file_name("") == "_" and urls.file_name("a~b") == "a~7e~b"


# ---- what the pages say


def test_the_operation_page_shows_each_framework_and_the_cases_behind_each_cell(built: Path) -> None:
    page = text_of(built / "ops/expand.html")
    assert "view on torch, numpy" in page and "copy on paddle" in page
    html = (built / "ops/expand.html").read_text()
    # paddle's cell links to its evidence: the case, at paddle's observation, with what was observed
    assert "href='#method~3a~expand-paddle'" in html.replace('"', "'")
    evidence = html.split('id="method~3a~expand-paddle"', 1)[1].split("</details>", 1)[0]
    assert 'href="../cases/views.expand.paddle_copies.html#paddle"' in evidence
    assert "<code>shares_memory: false</code>" in evidence and "<b>copy</b>" in evidence


def test_the_operation_page_splits_each_variant_by_its_inputs_layout_with_the_compiled_modes_as_columns(
        tmp_path: Path) -> None:
    """Does paddle.reshape copy a transposed input? One row per layout of the input (the
    productions' ``layout``), one column per framework and compiled mode; each framework's own
    spelling; a framework's documentation where a case measured otherwise."""
    doc = site_sample()
    doc["cases"]["views.expand.paddle_copies"]["productions"][0]["layout"] = "transposed"
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert main(["site", str(tmp_path / "r.json"), "--out", str(tmp_path / "site")]) == 0
    html = (tmp_path / "site/ops/expand.html").read_text()
    table = html.split('id="method~3a~expand-layouts"', 1)[1].split("</table>", 1)[0]
    header = re.findall(r'<th scope="col">([^<]+)</th>', table)
    assert header == ["input", "torch", "paddle", "numpy", "torch_compile"]
    (line,) = re.findall(r"<tr><th scope=\"row\">transposed</th>(.*?)</tr>", table)
    assert [re.sub(r"<[^>]+>|\s+", " ", cell).split() for cell in re.findall(r"<td>(.*?)</td>", line)] == [
        ["view", "1"], ["copy", "1"], ["view", "1"], ["copy", "1"]]
    # the summary grid has the compiled mode as a row of its own, under the eager frameworks
    grid = html.split('id="summary"', 1)[1].split("</table>", 1)[0]
    assert '<tr class="mode"><th scope="row"><a href="../frameworks/torch_compile.html">torch_compile</a>' in grid
    page = text_of(tmp_path / "site/ops/expand.html")
    assert "torch calls torch.Tensor.expand" in page and "Compiled torch: torch calls torch.Tensor.expand" in page
    assert ("Its documentation says: “expand returns a view” views.expand.paddle_copies measured otherwise "
            "(source: https://example.org/paddle/expand)") in page
    # a results file written before the layout was recorded: its row says so
    assert "not recorded" in text_of(tmp_path / "site/ops/reshape.html")


def test_the_operation_page_shows_what_torchs_schema_declares_beside_what_each_framework_does(built: Path) -> None:
    page = text_of(built / "ops/expand.html")
    version = declared.packaged().version
    assert (f"torch {version} declares in its operator schema that its result is a view of self: "
            "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)") in page
    # an operator no schema declares aliasing for says nothing of the kind
    assert "declares in its operator schema" not in text_of(built / "ops/index.html")
    words = pages.declared_contracts(declared.packaged())
    assert [d["words"] for d in words["method:add_"]] == ["it writes into and returns"]
    assert [(d["kind"], d["argument"]) for d in words["fn:add"]] == [("out", "out")]


def test_the_operation_page_shows_what_paddle_declares_in_its_operator_yaml_and_its_stride_kernels(
        built: Path) -> None:
    version, _ = declared.paddle_packaged()
    page = text_of(built / "ops/reshape.html")
    assert (f"paddle {version} declares with a CPU stride kernel that its result is a view of input: "
            "paddle/phi/kernels/stride: reshape") in page
    assert (f"paddle {version} declares in its operator YAML that its result is a view of x: "
            "op reshape, view: (x -> out)") in page
    assert "paddle/phi/kernels/stride" not in text_of(built / "ops/expand.html")  # Paddle's expand copies
    words = pages.declared_contracts(declared.packaged(), declared.paddle_packaged())
    assert ("paddle", "input") in [(d["framework"], d["argument"]) for d in words["attr:real"]]  # a method there
    assert [d["framework"] for d in words["fn:slice"]] == ["paddle"]


def test_the_case_page_shows_steps_expectations_and_every_observation(built: Path) -> None:
    path = built / "cases/views.expand.paddle_copies.html"
    page, html = text_of(path), path.read_text()
    assert "y = x.reshape(4)" in page  # the steps
    assert "shares_memory.y.x true" in page  # the expectation
    for fw in ("torch", "paddle", "numpy", "torch_compile"):
        assert f'id="{fw}"' in html
    assert "Why it differs: Paddle's expand copies" in page
    assert "The documentation says: “expand returns a view”" in page
    assert f'href="https://example.org/repo/blob/{COMMIT}/cases/views/c.yaml#L20"' in html  # file and line
    assert "the frameworks differ: torch, numpy: y↔x: view paddle: y↔x: copy" in page  # eager ones
    assert 'href="../claims/S3-03.html"' in html and 'href="../ops/reshape.html"' in html


def test_the_claim_page_gives_each_frameworks_verdict_and_its_cases(built: Path) -> None:
    page = text_of(built / "claims/S3-03.html")
    assert "<code>view()</code> changes shape but shares memory." in (built / "claims/S3-03.html").read_text()
    assert "view() changes shape but shares memory." in page  # the claim's `code` as code
    assert re.search(r"paddle ✗ does not hold does not hold does not hold: views\.expand\.paddle_copies", page), page
    assert "torch ✓ holds holds holds: views.reshape.agree, views.expand.paddle_copies" in page


def test_the_framework_page_says_what_is_peculiar_about_it(built: Path) -> None:
    page = text_of(built / "frameworks/paddle.html")
    assert "Alone in its behaviour (1)" in page
    assert "paddle: y↔x: copy; the others (torch, numpy): y↔x: view" in page
    mode = text_of(built / "frameworks/torch_compile.html")
    assert "A compiled mode of torch" in mode and "y↔x: view → copy" in mode


def test_the_home_page_has_the_chart_the_claims_and_the_divergences(built: Path) -> None:
    html = (built / "index.html").read_text()
    assert html.count("<svg") == 1 and "<title id='chart-title'>" in html
    assert "views: 50.0% (1 of 2)" in html  # the family's agreement, in the chart's cell title
    page = text_of(built / "index.html")
    assert "S3-03" in page and "views.expand.paddle_copies" in page
    assert "numpy 1.26.4 → 2.4.6: 1 item(s) changed" in page  # the newest release changes
    assert "torch_compile torch 1 of 2 1" in page  # the compiled mode against eager


def test_every_page_says_the_date_the_commit_and_the_versions(built: Path) -> None:
    for path in built.rglob("*.html"):
        page = text_of(path)
        assert f"results of 2026-11-24 · suite commit {COMMIT[:12]} · corpus revision c0ffee" in page, path
        assert "torch 2.13.0 · paddle 3.3.1 · numpy 2.4.6 · torch_compile 2.13.0" in page, path


def test_the_changelog_pages_show_each_step_between_releases(built: Path) -> None:
    page = text_of(built / "changelog/numpy.html")
    assert "1.26.4 → 2.4.6" in page and "views.reshape.agree" in page and "y↔x: copy" in page


def test_a_case_page_shows_the_outcome_per_release_and_since_when_linked_to_the_changelog(built: Path) -> None:
    html = (built / "cases/views.reshape.agree.html").read_text()
    page = text_of(built / "cases/views.reshape.agree.html")
    assert "Across releases" in page and "numpy 1.26.4: pass · 2.4.6: pass" in page
    assert "since 2.4.6: behaviour changed (1.26.4 → 2.4.6: pass → pass); y↔x: copy → view" in page
    href = "../changelog/numpy.html#numpy-1.26.4-2.4.6-views.reshape.agree"
    assert f'<a href="{href}">since 2.4.6</a>' in html
    assert '<li id="numpy-1.26.4-2.4.6-views.reshape.agree">' in (built / "changelog/numpy.html").read_text()
    # the same outcome on both releases, joined; a case in no release file: nothing
    assert "numpy 1.26.4–2.4.6: not applicable the same on every release" in text_of(
        built / "cases/copies.clone.broken.html")
    other = (built / "cases/views.expand.paddle_copies.html").read_text()
    assert 'id="releases"' not in other and "Across releases" not in other


def test_an_operation_page_lists_the_release_changes_of_its_cases(built: Path) -> None:
    page = text_of(built / "ops/reshape.html")
    assert "Across releases" in page
    assert "numpy since 2.4.6: behaviour changed in 1 case: views.reshape.agree" in page
    assert '<a href="../changelog/numpy.html#numpy-1.26.4-2.4.6-views.reshape.agree">' in (
        built / "ops/reshape.html").read_text()
    assert "Across releases" not in (built / "ops/expand.html").read_text()  # its case is in no release file


def test_the_release_history_of_a_case_groups_its_changes(tmp_path: Path) -> None:
    from test_releases import _groups_log

    history = pages.release_history(_groups_log())
    assert set(history) == {"t.a", "t.b", "t.c", "t.d"}  # t.e: skipped on every release
    (b,) = history["t.b"]
    assert [(s["first"], s["last"], s["words"]) for s in b["segments"]] == [
        ("1.26.4", "1.26.4", "not applicable"), ("2.0.2", "2.0.2", "pass")]
    (change,) = b["changes"]
    assert (change["edge"], change["group"]) == ("since 2.0.2", "API appeared")
    assert change["path"] == "changelog/numpy.html#numpy-1.26.4-2.0.2-t.b"
    assert [(c["edge"], c["group"]) for c in history["t.c"][0]["changes"]] == [("until 1.26.4", "API removed")]
    assert [c["group"] for c in history["t.a"][0]["changes"]] == ["behaviour changed"]
    assert pages.release_history(None) == {}


def test_the_changelog_pages_count_each_group(built: Path) -> None:
    page = text_of(built / "changelog/numpy.html")
    assert "1.26.4 → 2.4.6 (1 behaviour changed)" in page and "behaviour changed (1)" in page
    index = text_of(built / "changelog/index.html")
    assert "behaviour changed API appeared API removed other outcome change" in index
    assert "numpy 1.26.4, 2.4.6 1 of 1 1 1 0 0 0" in index


def test_the_search_index_names_cases_operations_claims_families_and_frameworks(built: Path) -> None:
    text = (built / "search-index.js").read_text()
    first, operation_words = text.splitlines()
    entries = json.loads(first.removeprefix("window.SEARCH_INDEX=").removesuffix(";"))
    kinds = {(e[0], e[1]): e[3] for e in entries}
    assert kinds[("case", "views.reshape.agree")] == "cases/views.reshape.agree.html"
    assert kinds[("operation", "reshape")] == "ops/reshape.html"
    assert kinds[("claim", "S3-07")] == "claims/S3-07.html"
    assert kinds[("family", "copies")] == "families/copies.html"
    assert kinds[("framework", "torch_compile")] == "frameworks/torch_compile.html"
    assert kinds[("release", "numpy 1.26.4")] == "changelog/numpy.html"
    # the names people use (issue 38): each framework's spelling of an operation, what a
    # compiled mode is, the versions, the reasons' words
    by_name = {(e[0], e[1]): e for e in entries}
    api = by_name[("operation", "reshape")][5]
    assert "paddle.Tensor.reshape" in api and "torch.Tensor.reshape" in api and "tf.reshape" in api
    assert "torch.compile(" in by_name[("framework", "torch_compile")][5]
    assert "2.13.0" in by_name[("framework", "torch_compile")][2]
    assert by_name[("case", "views.expand.paddle_copies")][6] == "paddle's expand copies"
    assert operation_words.startswith("window.SEARCH_OPERATION_WORDS=") and "torch.compile" in operation_words


# ---- the site as a whole


def test_every_link_of_the_site_resolves(built: Path) -> None:
    broken, external = check_links(built)
    assert broken == []
    assert set(external) == {"https://example.org/doc", "https://example.org/paddle/expand",
                             f"https://example.org/repo/blob/{COMMIT}/cases/views/c.yaml#L1",
                             f"https://example.org/repo/blob/{COMMIT}/cases/views/c.yaml#L20",
                             f"https://example.org/repo/blob/{COMMIT}/cases/copies/c.yaml#L1"}


def test_no_page_loads_anything_from_the_network(built: Path) -> None:
    for path in built.rglob("*.html"):
        html = path.read_text()
        assert not re.search(r"""(src|href)=["'](https?:)?//[^"']*\.(css|js|png|svg|woff2?)""", html), path
        assert "@import" not in html and "url(" not in html
    assert "url(" not in (built / "style.css").read_text()


def test_the_same_results_give_the_same_bytes() -> None:
    doc = site_sample()
    other = copy.deepcopy(doc)
    for r in other["results"]:
        r["duration_s"] = 42.0  # timings are not shown
    other["results"].reverse()  # nor does the order of the records matter
    assert render_site(typed(doc)) == render_site(typed(other))


def test_results_written_before_dates_commits_and_expectations_were_recorded() -> None:
    files = render_site(typed(sample()))  # no run.date, run.commit, cases.expect
    home, case = files["index.html"], files["cases/views.reshape.agree.html"]
    assert "results date not recorded · suite commit not recorded · corpus revision not recorded" in home
    assert "Not in these results (written before results files recorded expectations)" in case
    assert "<code>cases/views/c.yaml</code> line 1" in case  # no source address without --source-url


def test_a_source_address_that_needs_a_commit_is_left_out_without_one() -> None:
    from conformance.site.pages import source_link

    info = typed(sample()).cases["views.reshape.agree"]
    info = dataclasses.replace(info, file="cases/views/c.yaml", line=7)
    assert source_link("https://x.org/{commit}/{path}#L{line}", info, None) is None
    assert source_link("https://x.org/main/{path}#L{line}", info, None) == "https://x.org/main/cases/views/c.yaml#L7"


def test_case_text_is_shown_as_text() -> None:
    doc = site_sample()
    doc["cases"]["views.reshape.agree"]["title"] = "<script>alert(1)</script> <img src=x> __iadd__"
    doc["claims"]["S3-03"] = "<b>bold</b> `<i>` claim"
    doc["claims"]["S3-07"] = "an `unpaired backtick <b>"
    files = render_site(typed(doc))
    for name, text in files.items():
        if name.endswith(".html"):
            assert "<script>alert" not in text and "<img" not in text and "<b>bold" not in text, name
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x&gt; __iadd__" in files["cases/views.reshape.agree.html"]
    assert "&lt;b&gt;bold&lt;/b&gt; <code>&lt;i&gt;</code> claim" in files["claims/S3-03.html"]
    assert "an `unpaired backtick &lt;b&gt;" in files["claims/S3-07.html"]
    assert "<\\/script>" in files["search-index.js"]  # the index cannot close the script element that loads it


def test_several_results_files_are_merged(tmp_path: Path) -> None:
    doc = site_sample()
    doc["run"]["corpus_items"] = doc["run"]["items"]
    a = copy.deepcopy(doc)
    a["results"] = [r for r in doc["results"] if r["framework"] == "torch"]
    b = copy.deepcopy(doc)
    b["results"] = [r for r in doc["results"] if r["framework"] != "torch"]
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert main(["site", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--out", str(tmp_path / "s")]) == 0
    assert render_site(typed(doc))["cases/views.reshape.agree.html"] == \
        (tmp_path / "s/cases/views.reshape.agree.html").read_text()


# ---- what it refuses, and how it says so


def run_site(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["site", *args])
    return code, capsys.readouterr().err


def test_a_missing_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_site(capsys, str(tmp_path / "nope.json"), "--out", str(tmp_path / "s"))
    assert code == 2
    assert f"conformance site: {tmp_path / 'nope.json'}: cannot read results JSON" in err
    assert "conformance run writes reports/results.json" in err
    assert not (tmp_path / "s").exists()


def test_a_results_file_of_another_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "old.json").write_text(json.dumps({"format": 1}))
    code, err = run_site(capsys, str(tmp_path / "old.json"), "--out", str(tmp_path / "s"))
    assert code == 2 and "results format 1, this tool reads format 2; rerun the suite" in err


def test_the_results_of_a_partial_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = site_sample()
    doc["run"]["partial"] = ["only numpy (--frameworks; not torch, paddle)"]
    (tmp_path / "p.json").write_text(json.dumps(doc))
    code, err = run_site(capsys, str(tmp_path / "p.json"), "--out", str(tmp_path / "s"))
    assert code == 2
    assert "the results of a partial run (only numpy (--frameworks; not torch, paddle))" in err
    assert "build it from a full run (conformance run, or conformance merge of every shard), or pass --partial" in err
    assert main(["site", str(tmp_path / "p.json"), "--out", str(tmp_path / "s"), "--partial"]) == 0
    assert "These results are of a partial run: only numpy" in (tmp_path / "s/index.html").read_text()


def test_an_output_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_text(json.dumps(site_sample()))
    (tmp_path / "out").write_text("a file")
    code, err = run_site(capsys, str(tmp_path / "r.json"), "--out", str(tmp_path / "out"))
    assert code == 2 and f"{tmp_path / 'out'}: not a folder (the site is a folder of pages)" in err
    assert (tmp_path / "out").read_text() == "a file"


def test_an_output_folder_with_other_things_in_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_text(json.dumps(site_sample()))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("mine")
    code, err = run_site(capsys, str(tmp_path / "r.json"), "--out", str(tmp_path / "docs"))
    assert code == 2 and "the folder is not empty and is not a site conformance wrote (no .conformance-site" in err
    assert (tmp_path / "docs" / "notes.md").read_text() == "mine"


def test_a_rebuild_replaces_the_previous_site_whole(tmp_path: Path) -> None:
    doc = site_sample()
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert main(["site", str(tmp_path / "r.json"), "--out", str(tmp_path / "s")]) == 0
    assert (tmp_path / "s/cases/copies.clone.broken.html").is_file()
    doc["results"] = [r for r in doc["results"] if r["case"] != "copies.clone.broken"]
    del doc["cases"]["copies.clone.broken"]
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert main(["site", str(tmp_path / "r.json"), "--out", str(tmp_path / "s")]) == 0
    assert not (tmp_path / "s/cases/copies.clone.broken.html").exists()  # no page left over
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "s"]  # nothing left beside it


def test_a_source_address_without_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_text(json.dumps(site_sample()))
    code, err = run_site(capsys, str(tmp_path / "r.json"), "--out", str(tmp_path / "s"), "--source-url",
                         "https://example.org/{sha}/{file}")
    assert code == 2 and "unknown placeholder(s) {file}, {sha}; write an address with {path}" in err
    code, err = run_site(capsys, str(tmp_path / "r.json"), "--out", str(tmp_path / "s"), "--source-url",
                         "../{path}")
    assert code == 2 and "not an http(s) address" in err


def test_a_release_file_that_is_not_one_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_text(json.dumps(site_sample()))
    two = document(sample()["cases"], sample()["results"])  # every framework: no one release
    (tmp_path / "two.json").write_text(json.dumps(two))
    code, err = run_site(capsys, str(tmp_path / "r.json"), "--out", str(tmp_path / "s"), "--releases",
                         str(tmp_path / "two.json"))
    assert code == 2 and "not the results of one framework's release" in err


# ---- the real corpus's site


def test_the_site_of_the_real_corpus_is_the_same_twice_and_has_no_broken_link(tmp_path: Path) -> None:
    """On a real run's results: CONFORMANCE_SITE_RESULTS (.ci/run sets it to its run's file),
    else reports/results.json of the last local conformance run."""
    results = Path(os.environ.get("CONFORMANCE_SITE_RESULTS") or ROOT / "reports" / "results.json")
    if not results.is_file():
        pytest.skip(f"{results} not there: conformance run writes it (in CI, .ci/run runs this test on its run)")
    from conformance.site.build import load_inputs
    from conformance.site.output import write_site

    document, _ = load_inputs([results], [], allow_partial=True)
    files = render_site(document)
    assert render_site(document) == files  # byte-identical
    write_site(files, tmp_path / "site")
    broken, _ = check_links(tmp_path / "site")
    assert broken == []


def test_screenshots_of_an_operation_without_a_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_text(json.dumps(site_sample()))
    code, err = run_site(capsys, str(tmp_path / "r.json"), "--out", str(tmp_path / "s"), "--screenshots",
                         str(tmp_path / "shots"), "--screenshot-op", "nonesuch")
    assert code == 2
    assert f"{tmp_path / 's' / 'ops' / 'nonesuch.html'}: no page for the operation 'nonesuch'" in err
    assert not (tmp_path / "shots").exists()


def test_the_cases_conformance_discover_found_have_a_page_and_a_place_on_the_home_page(built: Path) -> None:
    page = (built / "discovered.html").read_text(encoding="utf-8")
    assert "1 case that <code>conformance discover</code> found" in page
    assert 'href="cases/views.expand.paddle_copies.html"' in page
    home = (built / "index.html").read_text(encoding="utf-8")
    assert 'id="discovered"' in home and 'href="discovered.html"' in home


def test_a_case_page_shows_the_functional_steps_the_immutable_frameworks_ran() -> None:
    """A case with functional_steps (this checkout's autograd.nonleaf.view_inplace_grad): its
    steps are the mutable frameworks' records; JAX's, which ran the functional steps, are shown
    apart under their heading, naming the frameworks that ran them."""
    case_id = "autograd.nonleaf.view_inplace_grad"
    doc = site_sample()
    doc["cases"][case_id] = {**doc["cases"]["views.reshape.agree"], "file": "cases/autograd/grad_modes.yaml",
                             "family": "autograd", "title": "a write through a view of a non-leaf"}
    doc["environment"]["frameworks"]["jax"] = {"version": "0.10.2", "devices": ["cpu"]}

    def ran(framework: str, texts: list[str]) -> dict[str, Any]:
        r = record(case_id, framework)
        r["steps"] = [{"number": n, "text": t, "status": "ok", "warnings": [], "error": None}
                      for n, t in enumerate(texts, 1)]
        return r

    in_place = ["x = a * 1", "v = x[0:2]", "v.mul_(two)", "x.sum().backward()"]
    functional = ["x = a * 1", "v = x[0:2] * two", "x = cat([v, x[2:]])", "x.sum().backward()"]
    doc["results"] += [ran("jax", functional), ran("torch", in_place), ran("paddle", in_place)]
    doc["results"].sort(key=lambda r: r["nodeid"])
    page = render_site(typed(doc))[f"cases/{case_id}.html"]
    steps, apart = page.split("Without in-place writes")
    assert "v.mul_(two)" in steps and "x = cat([v, x[2:]])" not in steps
    assert "x = cat([v, x[2:]])" in apart and "v.mul_(two)" not in apart.split("</ol>")[0]
    assert "jax ran the case's <code>functional_steps</code> instead" in apart
    plain = render_site(typed(site_sample()))["cases/views.reshape.agree.html"]
    assert "Without in-place writes" not in plain


def test_a_case_called_more_than_once_says_so_beside_its_steps(tmp_path: Path) -> None:
    """calls: 2 (docs/case-format.md, "Calling the program again"), read from the checkout's
    case file: the page lists the steps of both calls, numbered on, and says why."""
    from results_factory import case_info

    doc = site_sample()
    case_id = "compiled.calls.inplace_write_accumulates"
    doc["cases"][case_id] = dict(case_info(case_id), file="cases/compiled/calls.yaml", operations=["method:add_"])
    steps = [{"number": n, "text": "x.add_(k)", "status": "ok", "warnings": [], "error": None} for n in (1, 2)]
    doc["results"] += [dict(record(case_id, fw), steps=steps) for fw in ("numpy", "paddle", "torch")]
    doc["results"].sort(key=lambda r: r["nodeid"])
    doc["run"]["items"] = len(doc["results"])
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert main(["site", str(tmp_path / "r.json"), "--out", str(tmp_path / "site")]) == 0
    page = text_of(tmp_path / "site" / urls.case(case_id))
    assert "x.add_(k) x.add_(k) The steps are a function of the inputs called 2 times on the same inputs" in page
    assert "called 2 times" not in text_of(tmp_path / "site/cases/views.reshape.agree.html")
