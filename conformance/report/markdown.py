"""``reports/behaviour.md``: the behaviour report as Markdown, readable on a code host.

Deterministic: the same results give the same bytes (no timings, no timestamps, sorted).
Every text of the document, each value from the results (case text, framework messages,
names, paths) and the report's own words alike, goes through :mod:`conformance.escaping`:
shown as written, never as markup.
"""

from __future__ import annotations

import re

from conformance.escaping import for_markdown, markdown_code, markdown_url
from conformance.report import sections
from conformance.report.analysis import CLASS_WORDS, Report
from conformance.report.document import (
    Address,
    AnyCell,
    BehaviourCell,
    Block,
    Break,
    BulletList,
    CaseLabel,
    Code,
    Document,
    Emphasis,
    Hint,
    Inline,
    Lines,
    Link,
    Paragraph,
    Parts,
    RepoFile,
    Section,
    Strong,
    Subsections,
    Table,
    Term,
    Text,
    Verbatim,
    VerdictCell,
)

# Colour on a code host: one square per aliasing class (and for errors and unrun items).
MARKS = {"same_object": "🟪", "view": "🟦", "disjoint_view": "🟦", "copy": "🟩", "distinct_object": "⬜",
         "error": "🟥", "none": "⬜", "not_applicable": "▫️", "skipped": "▫️", "unchecked": "▫️"}
OUTCOME_MARKS = {"fail": "❌ ", "error": "❌ ", "known_divergence": "◆ ", "refused": "⊘ "}
VERDICT_MARKS = {"holds": "✅ holds", "does not hold": "❌ does not hold", "unsettled": "⚠️ unsettled"}
LEGEND = ("Legend: " + ", ".join(f"{MARKS[k]} {v}" for k, v in CLASS_WORDS.items() if k != "disjoint_view")
          + f", {MARKS['error']} raises an error. ◆ known divergence (passes under a per-framework expectation, "
            "with a reason); ⊘ refused: the framework's arrays are immutable, and the mutation the case makes "
            "raised; ❌ the case's expectation did not hold.\n")


def render(report: Report, link_root: str = "..") -> str:
    """The behaviour report's Markdown text. ``link_root`` is the path from the report's
    folder to the folder the case file paths are relative to."""
    return render_document(sections.behaviour_report(report), link_root)


def render_document(document: Document, link_root: str = "..") -> str:
    """A document as Markdown: its title, its intro, the legend of the marks, a line of
    links to the sections (a code host shows a long file with no other way around it), and
    the sections."""
    writer = _Writer(link_root)
    lines = [f"# {for_markdown(document.title)}\n"]
    for block in document.intro:
        lines += writer.block(block, 1)
    lines += [LEGEND, _contents(document.sections)]
    for section in document.sections:
        lines += writer.section(section, 2)
    return "\n".join(lines)


def _contents(sections: tuple[Section, ...]) -> str:
    links = []
    for section in sections:
        label, anchor = for_markdown(section.label or section.title), heading_anchor(section.title)
        links.append(f"[{label}](#{anchor})" if anchor else label)
    return "Contents: " + " · ".join(links) + "\n"


def heading_anchor(title: str) -> str | None:
    """The anchor a code host gives a heading: its text in lower case, blanks as hyphens.
    Only for a title of ASCII letters, digits, ``-`` and ``_`` in words apart, whose anchor
    that is for certain; another gets no link rather than a wrong one."""
    if re.fullmatch(r"[A-Za-z0-9_-]+( [A-Za-z0-9_-]+)*", title):
        return title.lower().replace(" ", "-")
    return None


class _Writer:
    """Markdown of blocks and parts, with the case files linked from ``link_root``."""

    def __init__(self, link_root: str) -> None:
        self.link_root = link_root

    # Each block ends with a blank line, the Markdown that ends a paragraph, a table or a list.

    def section(self, section: Section, level: int) -> list[str]:
        lines = [f"{'#' * level} {for_markdown(section.title)}\n"]
        for block in section.blocks:
            lines += self.block(block, level)
        return lines

    def block(self, block: Block, level: int) -> list[str]:
        if isinstance(block, Paragraph):
            return [self.inline(block.parts, start=True) + "\n"]
        if isinstance(block, Table):
            return self.table(block)
        if isinstance(block, BulletList):
            intro = [self.inline(block.intro, start=True) + "\n"] if block.intro else []
            return [*intro, *(f"- {self.inline(item, start=True)}" for item in block.items), ""]
        if isinstance(block, Subsections):
            return [line for section in block.sections for line in self.section(section, level + 1)]
        return [line for shown in block.markdown for line in self.block(shown, level)]

    def table(self, table: Table) -> list[str]:
        titles = [self.inline((column.title,), in_table=True) for column in table.columns]
        return ["|" + "".join(f" {title} |" if title else " |" for title in titles),
                "|" + "".join("---:|" if column.numeric else "---|" for column in table.columns),
                *("| " + " | ".join(self.cell(cell) for cell in row.cells) + " |" for row in table.rows),
                ""]

    def cell(self, cell: AnyCell) -> str:
        if isinstance(cell, BehaviourCell):
            text = (f"{OUTCOME_MARKS.get(cell.outcome, '')}{MARKS.get(cell.kind, '')} "
                    f"{self.inline(cell.parts, in_table=True)}")
            if cell.reason:
                text += f": {self.inline(cell.reason, in_table=True)}"
            return text.strip()
        if isinstance(cell, VerdictCell):
            return VERDICT_MARKS.get(cell.verdict, for_markdown(cell.verdict))
        mark = OUTCOME_MARKS.get(cell.outcome, "") if cell.outcome else ""
        return mark + self.inline(cell.parts, in_table=True)

    def inline(self, parts: Parts, *, in_table: bool = False, start: bool = False) -> str:
        """``start``: the parts begin a line (a paragraph, a list item), where a first ``1.``
        or ``-`` would make a list; ``in_table``: inside a table cell, where ``|`` ends it."""
        out = []
        for part in parts:
            text = self.part(part, in_table, start)
            start = start and not text
            out.append(text)
        return "".join(out)

    def part(self, part: Inline, in_table: bool, start: bool) -> str:
        if isinstance(part, str):
            return for_markdown(part, line_start=start)
        if isinstance(part, Text):
            text = part.text if part.limit is None else cut_at_word(part.text, part.limit)
            return for_markdown(text, line_start=start)
        if isinstance(part, Verbatim):  # a table cell or list item is one line
            return for_markdown(cut_at_word(part.text, part.limit), line_start=start)
        if isinstance(part, Address):  # for_markdown writes it as an autolink
            return for_markdown(part.url, line_start=start)
        if isinstance(part, Code):
            return markdown_code(part.text, in_table=in_table)
        if isinstance(part, Break):
            return "<br>"
        if isinstance(part, CaseLabel):
            return self.case_label(part)
        if isinstance(part, Strong):
            return f"**{self.inline(part.parts, in_table=in_table)}**"
        if isinstance(part, (Emphasis, Term)):
            return f"*{self.inline(part.parts, in_table=in_table)}*"
        if isinstance(part, Link):
            return self.link(part, in_table)
        if isinstance(part, Hint):  # no hover in Markdown
            return self.inline(part.parts, in_table=in_table, start=start)
        if isinstance(part, Lines):  # no lines in a Markdown table cell but <br>
            return ("; " if part.run_on else "<br>").join(self.inline(item, in_table=in_table) for item in part.items)
        return self.inline(part.markdown, in_table=in_table, start=start)  # a Wording

    def link(self, link: Link, in_table: bool) -> str:
        text = self.inline(link.parts, in_table=in_table)
        if isinstance(link.to, RepoFile):
            return f"[{text}]({markdown_url(f'{self.link_root}/{link.to.path}')})"
        anchor = heading_anchor(link.to.heading) if link.to.heading is not None else None
        return f"[{text}](#{anchor})" if anchor else text

    def case_label(self, label: CaseLabel) -> str:
        where = for_markdown(f"{label.file}:{label.line}")
        if label.linked:  # to the line, as a code host shows the file
            where = f"[{where}]({markdown_url(f'{self.link_root}/{label.file}')}#L{label.line})"
        text = f"{markdown_code(label.case_id)}<br>{where}"
        if label.title is None:
            return text
        text += f"<br>{for_markdown(cut_at_word(label.title, 200))}"  # the tags are left to the case file
        if label.references:
            text += "<br>refs: " + " ".join(
                f"[{i}]({markdown_url(ref)})" if ref.startswith(("http://", "https://")) else for_markdown(ref)
                for i, ref in enumerate(label.references, 1))
        return text


def cut_at_word(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters: when longer, cut at the last blank
    that leaves it within the limit, followed by "…", so that no word, number or address is
    shown cut in two (an address cut short would link elsewhere). A first word longer than
    the limit is cut where it must be."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    head = text[: limit]
    blank = head.rfind(" ")
    head = head[:blank] if blank > 0 else head[: limit - 1]
    return head.rstrip(" ,;:") + "…"
