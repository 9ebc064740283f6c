"""The report's document model (conformance/report/document.py), the behaviour report's
sections built on it (conformance/report/sections.py) and its two renderers: a section
renders to the Markdown and the HTML expected, each format shows its own wording, and
hostile text in every kind of part and cell is shown as written, read back by GitHub's
Markdown renderer and by an HTML parser."""

from __future__ import annotations

import html.parser

import pytest
from results_factory import sample, typed
from test_escaping import Html, commands_in, gfm

from conformance.report import analysis, sections
from conformance.report import html as report_html
from conformance.report import markdown as report_md
from conformance.report.document import (
    Address,
    AnyCell,
    BehaviourCell,
    Break,
    BulletList,
    CaseLabel,
    Cell,
    Code,
    Column,
    Document,
    Emphasis,
    Hint,
    Lines,
    Link,
    Paragraph,
    PerFormat,
    Place,
    RepoFile,
    Row,
    Section,
    Strong,
    Subsections,
    Table,
    Term,
    Text,
    Verbatim,
    VerdictCell,
    Wording,
    joined,
)


def document(*sections: Section) -> Document:
    return Document("Title", (Paragraph("Intro."),), sections)


def html_sections(page: str) -> str:
    """The page's sections: what follows the filters, up to the script."""
    return page.split("<span id='shown'></span></form>\n", 1)[1].split("\n<script>", 1)[0]


SECTION = Section("Results", "results", (
    Paragraph("The ", Strong("results"), " of ", Text("2"), " runs (", Code("x.view()"), ")."),
    Table((Column("case"), Column(Text("torch"), framework="torch"), Column("n", numeric=True)),
          (Row((Cell(Link(Code("a.b"), to=Place("case-a.b"))), Cell(Text("ok")), Cell("3")), data=(("case", "a.b"),)),
           Row((Cell(Text("none")), Cell("—", framework="torch"), Cell()))),
          anchor="results-table"),
    BulletList((("one ", Text("x")),), intro=(Strong("Items"), ":"))), count=2)


def test_a_section_renders_to_markdown() -> None:
    assert report_md.render_document(document(SECTION)) == (
        "# Title\n\nIntro.\n\n" + report_md.LEGEND + "\nContents: [Results](#results)\n\n"
        "## Results\n\n"
        "The **results** of 2 runs (`x.view()`).\n\n"
        "| case | torch | n |\n|---|---|---:|\n| `a.b` | ok | 3 |\n| none | — |  |\n\n"
        "**Items**:\n\n- one x\n")


def test_a_section_renders_to_html() -> None:
    page = report_html.render_document(document(SECTION))
    assert page.startswith("<!DOCTYPE html>") and "<title>Title</title>" in page
    assert "<h1>Title</h1>\n<p>Intro.</p>" in page
    # a heading that shows a count stands on its own line
    assert html_sections(page) == (
        "<h2 id='results'>Results (2)</h2>\n"
        "<p>The <b>results</b> of 2 runs (<code>x.view()</code>).</p>\n"
        "<table id='results-table'><tr><th>case</th><th data-fw='torch'>torch</th><th>n</th></tr>\n"
        "<tr data-case='a.b'><td><a href='#case-a.b'><code>a.b</code></a></td><td>ok</td><td class='num'>3</td></tr>\n"
        "<tr><td>none</td><td data-fw='torch'>—</td><td></td></tr>\n"
        "</table>\n"
        "<p><b>Items</b>:</p><ul>\n<li>one x</li>\n</ul>")


def test_subsections_and_a_heading_without_a_count() -> None:
    family = Section("views", "family-views", (Paragraph("1 case."),), group="family")
    matrix = Section("Matrix", "matrix-heading", (Subsections((family,), anchor="matrix"),))
    assert html_sections(report_html.render_document(document(matrix))) == (
        "<h2 id='matrix-heading'>Matrix</h2><div id='matrix'>\n"
        "<section class='family' id='family-views'><h3>views</h3><p>1 case.</p></section>\n"
        "</div>")
    text = report_md.render_document(document(matrix))
    assert text.endswith("Contents: [Matrix](#matrix)\n\n## Matrix\n\n### views\n\n1 case.\n")


def test_a_link_to_a_section_uses_the_anchor_of_its_heading_in_markdown_and_its_id_in_html() -> None:
    links = document(Section("S", "s", (Paragraph(
        Link(Text("views"), to=Place("family-views", heading="views")), " and ",
        Link(Text("a row"), to=Place("case-a.b")), " and ", Link(Code("f.yaml"), to=RepoFile("cases/f.yaml"))),)))
    assert "[views](#views) and a row and [`f.yaml`](up/cases/f.yaml)\n" in report_md.render_document(links, "up")
    assert ("<p><a href='#family-views'>views</a> and <a href='#case-a.b'>a row</a> and "
            "<a href='up/cases/f.yaml'><code>f.yaml</code></a></p>") in report_html.render_document(links, "up")


@pytest.mark.parametrize("title, anchor", [("Summary", "summary"), ("Compiled mode differs", "compiled-mode-differs"),
                                           ("in_place", "in_place"), ("a.b", None), ("two  blanks", None), ("", None)])
def test_the_markdown_anchor_of_a_heading(title: str, anchor: str | None) -> None:
    assert report_md.heading_anchor(title) == anchor


def test_each_format_shows_its_own_wording() -> None:
    section = Section("S", "s", (
        Paragraph("Both", Wording(markdown=(" in Markdown",), html=(" in HTML",)), "."),
        PerFormat(markdown=(Paragraph("Markdown alone"),), html=(Paragraph("HTML alone"),))))
    text = report_md.render_document(document(section))
    assert "Both in Markdown.\n\nMarkdown alone\n" in text and "HTML" not in text
    page = html_sections(report_html.render_document(document(section)))
    assert page == "<h2 id='s'>S</h2><p>Both in HTML.</p>\n<p>HTML alone</p>"


def test_cells_of_several_lines_and_hints() -> None:
    cell = Cell(Lines(((Text("a"),), (Strong(Text("b")), ": c"))), Break(), Hint(Text("view"), " (2)", hint="x, y"))
    why = Cell(Lines(((Text("a"),), (Text("b"),)), run_on=True), note=True)
    section = Section("S", "s", (Table((Column("x"), Column("why")), (Row((cell, why)),)),))
    assert "| a<br>**b**: c<br>view (2) | a; b |" in report_md.render_document(document(section))
    assert ("<tr><td><div>a</div><div><b>b</b>: c</div><br><span title='x, y'>view (2)</span></td>"
            "<td class='why'><div>a</div><div>b</div></td></tr>") in report_html.render_document(document(section))


def test_behaviour_and_verdict_cells_are_marked_in_markdown_and_classed_in_html() -> None:
    row = Row((BehaviourCell("torch", "copy", "fail", (Text("y↔x: copy"),), (Text("expected a view"),)),
               BehaviourCell("paddle", "view", "pass", (Text("y↔x: view"),)), VerdictCell("torch", "holds"),
               VerdictCell("paddle", "not run"), Cell(Text("jit"), outcome="known_divergence")))
    section = Section("S", "s", (Table(tuple(Column(c) for c in "abcde"), (row,)),))
    assert ("| ❌ 🟩 y↔x: copy: expected a view | 🟦 y↔x: view | ✅ holds | not run | ◆ jit |"
            in report_md.render_document(document(section)))
    assert ("<tr><td data-fw='torch' data-outcome='fail' class='k-copy o-fail'>y↔x: copy"
            "<div class='why'>FAIL: expected a view</div></td>"
            "<td data-fw='paddle' data-outcome='pass' class='k-view o-pass'>y↔x: view</td>"
            "<td data-fw='torch' class='v-holds'>holds</td><td data-fw='paddle' class=''>not run</td>"
            "<td class='o-known_divergence'>jit</td></tr>") in report_html.render_document(document(section))


def test_a_case_label_links_its_file_to_the_line_in_markdown_and_shows_its_tags_in_html() -> None:
    full = CaseLabel("views.a", "cases/views/a.yaml", "7", "a title", ("views",), ("https://e.org/1", "issue 3"))
    short = CaseLabel("views.b", "/abs/b.yaml", "2")
    section = Section("S", "s", (Table((Column("case"),), (Row((Cell(full),)), Row((Cell(short),)))),))
    text = report_md.render_document(document(section))
    assert ("| `views.a`<br>[cases/views/a.yaml:7](../cases/views/a.yaml#L7)<br>a title<br>refs: "
            "[1](https://e.org/1) issue 3 |\n| `views.b`<br>/abs/b.yaml:2 |") in text
    page = report_html.render_document(document(section))
    assert ("<td><code>views.a</code><div class='file'><a href='../cases/views/a.yaml'>cases/views/a.yaml:7</a></div>"
            "<div>a title</div><div class='file'>tags: views</div><div class='file'>refs: "
            "<a href='https://e.org/1'>[1]</a> issue 3</div></td>") in page
    assert "<td><code>views.b</code><div class='file'>/abs/b.yaml:2</div></td>" in page


def test_long_text_is_cut_in_markdown_and_whole_in_html() -> None:
    words = "word " * 50
    section = Section("S", "s", (BulletList(((Text(words, 20), " ", Verbatim("one\ntwo " + words, 20)),)),))
    assert "- word word word word… one two word word…\n" in report_md.render_document(document(section))
    assert f"<li>{words} <pre>one\ntwo {words}</pre></li>" in report_html.render_document(document(section))


def test_a_list_item_or_paragraph_starting_with_a_value_stays_text_in_markdown() -> None:
    section = Section("S", "s", (Paragraph(Text("1. not a list")), BulletList(((Text("- not a list"), " x"),))))
    page = Html(gfm(report_md.render_document(document(section))))
    assert page.tags.count("ol") == 0 and page.tags.count("li") == 1
    assert "1. not a list" in page.all_text() and "- not a list x" in page.all_text()


def test_joined_puts_the_separator_between_items_only() -> None:
    assert joined([("a",), (Text("b"), "c")], ", ") == ("a", ", ", Text("b"), "c")
    assert joined([], ", ") == ()


# ---- hostile text, in every kind of part and cell

HOSTILE = ("<script>alert(1)</script> [click](http://evil) ![img](http://evil/i.png) __bold__ *em* | cell "
           "`tick` ' onmouseover='alert(2) ::error::x &amp;")

# (cell, how many times the Markdown shows the text, how many times the HTML does)
HOSTILE_CELLS: dict[str, tuple[AnyCell, int, int]] = {
    "text": (Cell(Text(HOSTILE)), 1, 1),
    "text cut to a length": (Cell(Text(HOSTILE, 400)), 1, 1),
    "the report's own words": (Cell(HOSTILE), 1, 1),
    "code": (Cell(Code(HOSTILE)), 1, 1),
    "strong, emphasis, term": (Cell(Strong(Text(HOSTILE)), Emphasis(Text(HOSTILE)), Term(Text(HOSTILE))), 3, 3),
    "link to a section": (Cell(Link(Text(HOSTILE), to=Place(HOSTILE, heading=HOSTILE))), 1, 1),
    "link to a file": (Cell(Link(Text(HOSTILE), to=RepoFile(HOSTILE))), 1, 1),
    "hint": (Cell(Hint(Text(HOSTILE), hint=HOSTILE)), 1, 1),
    "lines": (Cell(Lines(((Text(HOSTILE),), (Text(HOSTILE),)))), 2, 2),
    "lines run on": (Cell(Lines(((Text(HOSTILE),), (Text(HOSTILE),)), run_on=True), note=True), 2, 2),
    "verbatim": (Cell(Verbatim(HOSTILE, 400)), 1, 1),
    "wording": (Cell(Wording(markdown=(Text(HOSTILE),), html=(Text(HOSTILE),))), 1, 1),
    "a framework's cell, marked": (Cell(Text(HOSTILE), framework=HOSTILE, outcome=HOSTILE), 1, 1),
    # id, file:line, title, references (and tags in HTML)
    "case label": (Cell(CaseLabel(HOSTILE, HOSTILE, "3", HOSTILE, (HOSTILE,), (HOSTILE,))), 4, 5),
    "behaviour": (BehaviourCell(HOSTILE, HOSTILE, "fail", (Text(HOSTILE),), (Text(HOSTILE),)), 2, 2),
    "verdict": (VerdictCell(HOSTILE, HOSTILE), 1, 1),
}


def hostile_document(cell: AnyCell) -> Document:
    return document(Section("S", "s", (Table((Column("x"), Column("y")), (Row((Cell("x"), cell)),)),)))


class Elements(html.parser.HTMLParser):
    """Every start tag with its attributes, and the cells of each table row."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.starts: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self._depth = 0
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.starts.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append("")
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        self._depth -= tag in ("td", "th")

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.rows[-1][-1] += data


ATTRIBUTES = {"lang", "charset", "name", "content", "id", "onsubmit", "type", "value", "checked", "class", "href",
              "title", "data-fw", "data-outcome", "data-case"}


@pytest.mark.parametrize("kind", HOSTILE_CELLS)
def test_hostile_text_in_markdown_is_shown_as_written(kind: str) -> None:
    cell, shown, _ = HOSTILE_CELLS[kind]
    markdown = report_md.render_document(hostile_document(cell))
    page = Html(gfm(markdown))
    assert {"script", "img"} & set(page.tags) == set(), page.tags
    assert page.tags.count("td") == 2  # the | in the text did not split the cell
    assert page.all_text().count(HOSTILE) == shown, page.all_text()
    for href, text in page.links:  # the anchor of a heading, a file of the repository, or an address shown
        assert href.startswith(("#", "../")) or href == text, (href, text)
    assert commands_in(markdown) == []


@pytest.mark.parametrize("kind", HOSTILE_CELLS)
def test_hostile_text_in_html_is_shown_as_written(kind: str) -> None:
    cell, _, shown = HOSTILE_CELLS[kind]
    page = report_html.render_document(hostile_document(cell))
    elements = Elements(page)
    tags = [tag for tag, _ in elements.starts]
    assert tags.count("script") == 1 and "img" not in tags  # the page's own script only
    assert {name for _, attributes in elements.starts for name in attributes} <= ATTRIBUTES
    assert len(elements.rows[-1]) == 2
    assert elements.rows[-1][1].count(HOSTILE) == shown, elements.rows[-1][1]
    # what an attribute holds stays in it, whole
    for tag, attributes in elements.starts:
        for name, value in attributes.items():
            if name in ("data-fw", "data-outcome", "title", "id"):
                assert value == HOSTILE or HOSTILE not in (value or ""), (tag, name, value)


def test_hostile_titles_anchors_and_filter_data_in_html() -> None:
    family = Section(HOSTILE, HOSTILE, (Paragraph(Text(HOSTILE)),), group=HOSTILE)
    section = Section(HOSTILE, HOSTILE, (
        Table((Column(Text(HOSTILE), framework=HOSTILE),), (Row((Cell(Text(HOSTILE)),), anchor=HOSTILE,
                                                                data=(("case", HOSTILE),)),), anchor=HOSTILE),
        Subsections((family,), anchor=HOSTILE)), count=1)
    doc = Document(HOSTILE, (Paragraph(Address("https://example.org/a'onmouseover='alert(3)")),), (section,),
                   frameworks=(HOSTILE,), families=(HOSTILE,))
    page = report_html.render_document(doc)
    elements = Elements(page)
    assert {name for _, attributes in elements.starts for name in attributes} <= ATTRIBUTES
    assert [tag for tag, _ in elements.starts].count("script") == 1
    ids = [attributes["id"] for _, attributes in elements.starts if "id" in attributes]
    assert ids.count(HOSTILE) == 5  # the section, the table, the row, the subsections' whole, the subsection
    assert ("a", {"href": "https://example.org/a'onmouseover='alert(3)"}) in elements.starts
    # the page's title and heading, the framework and the family to filter by, the section's heading, the
    # column, the cell, the subsection's heading and its text
    assert Html(page).all_text().count(HOSTILE) == 9

    markdown = report_md.render_document(doc)
    gfm_page = Html(gfm(markdown))
    assert {"script", "img"} & set(gfm_page.tags) == set()
    # the title, the section in the contents and its heading, the column, the cell, the subsection's heading and
    # its text
    assert gfm_page.all_text().count(HOSTILE) == 7
    assert commands_in(markdown) == []


# ---- the behaviour report's sections


def test_the_behaviour_report_has_its_sections_in_order_in_both_formats() -> None:
    report = analysis.build(typed(sample()))
    doc = sections.behaviour_report(report)
    assert [(s.title, s.anchor, s.count) for s in doc.sections] == [
        ("Summary", "summary", None), ("Divergences", "divergences", 1),
        ("Findings of conformance discover", "findings", 0), ("Compiled mode differs", "compiled", 0),
        ("Claims", "claims", None), ("Documentation disagrees", "documentation", 0),
        ("Operation classification", "operations", None), ("Matrix", "matrix-heading", None),
        ("Environment", "environment", None)]
    assert doc.frameworks == ("torch", "paddle", "numpy") and doc.families == ("copies", "views")
    text, page = report_md.render(report), report_html.render(report)
    assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == [s.title for s in doc.sections]
    headings = [start.split("'", 2)[1] for start in page.split("<h2 id=")[1:]]
    assert headings == [s.anchor for s in doc.sections]
    assert report_md.render_document(doc) == text and report_html.render_document(doc) == page
