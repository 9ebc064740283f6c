"""A report as a format-neutral document: sections of paragraphs, tables and lists, whose
text is made of inline parts. The behaviour report's sections are built once as such a
document (:mod:`conformance.report.sections`); the Markdown and HTML renderers each write
any document.

No part holds markup: every text, the report's own words included, is escaped by the
renderer for its format (:mod:`conformance.escaping` for Markdown, ``html.escape`` for
HTML), and the only markup in a report is what a renderer writes for the structure.

Where a format cannot show something (an HTML id, the data its filters read, a hint on
hover), its renderer leaves it out; where the two formats show a thing each in its own way
(Markdown marks a behaviour with a coloured square, HTML with a class), the part says what
the thing is and each renderer chooses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

# ---- inline parts. A str is the report's own words (numbers included); a value from a
# results file or a case is never a str, but a Text or another part that says what it is.


@dataclass(frozen=True)
class Text:
    """A value, shown as written. ``limit``: where a format keeps it on one line (a Markdown
    table cell or list item), it is cut at a word to at most this many characters; HTML
    shows it whole."""

    text: str
    limit: int | None = None


@dataclass(frozen=True)
class Code:
    """A value shown as code (a case id, an operation, a field name)."""

    text: str


@dataclass(frozen=True)
class Address:
    """An http(s) address, shown as itself and clickable."""

    url: str


@dataclass(frozen=True)
class Verbatim:
    """A message of several lines as a framework wrote it: kept whole, lines and all, where
    the format can; else on one line, cut at a word to at most ``limit`` characters."""

    text: str
    limit: int


@dataclass(frozen=True)
class Place:
    """A place in the same report: a section (``heading``: its title, from which a code host
    makes a Markdown heading's anchor) or a row (no heading: a Markdown table row has no
    anchor, so there the link's text stands alone)."""

    anchor: str
    heading: str | None = None


@dataclass(frozen=True)
class RepoFile:
    """A file of the repository, by its path from the folder the case paths are relative
    to; the renderer links it from the report's folder."""

    path: str


@dataclass(frozen=True)
class Break:
    """A line break inside a table cell."""


@dataclass(frozen=True)
class CaseLabel:
    """A case in a table's first column: its id and where it is written, and, where the row
    is the case's own (the matrix), its title, tags and references; the renderer links the
    file. ``title`` None: the short form (the rows of a case listed again, e.g. a divergence)."""

    case_id: str
    file: str
    line: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    references: tuple[str, ...] = ()

    @property
    def linked(self) -> bool:
        """Whether the file is linked: a path relative to the case root is, from the report's
        folder; an absolute one (a results file of another machine) is only shown."""
        return bool(self.file) and not PurePosixPath(self.file).is_absolute()


@dataclass(frozen=True, init=False)
class Strong:
    """Parts in bold; ``anchor``: the id a page's script or test finds them by."""

    parts: Parts
    anchor: str | None

    def __init__(self, *parts: Inline, anchor: str | None = None) -> None:
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "anchor", anchor)


@dataclass(frozen=True, init=False)
class Emphasis:
    """Parts stressed (HTML ``<em>``)."""

    parts: Parts

    def __init__(self, *parts: Inline) -> None:
        object.__setattr__(self, "parts", parts)


@dataclass(frozen=True, init=False)
class Term:
    """A word named as a term rather than used (HTML ``<i>``)."""

    parts: Parts

    def __init__(self, *parts: Inline) -> None:
        object.__setattr__(self, "parts", parts)


@dataclass(frozen=True, init=False)
class Link:
    """Parts that link to a place in the report or to a file of the repository."""

    parts: Parts
    to: Place | RepoFile

    def __init__(self, *parts: Inline, to: Place | RepoFile) -> None:
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "to", to)


@dataclass(frozen=True, init=False)
class Hint:
    """Parts with a longer text shown on hover where the format can (HTML's title); else the
    parts alone."""

    parts: Parts
    hint: str

    def __init__(self, *parts: Inline, hint: str) -> None:
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "hint", hint)


@dataclass(frozen=True)
class Lines:
    """Items one under another in a table cell. ``run_on``: where a format keeps a table row
    short (Markdown), the items run on as one line, separated by semicolons."""

    items: tuple[Parts, ...]
    run_on: bool = False


@dataclass(frozen=True)
class Wording:
    """The same thing worded differently in each format, as the two reports have said it:
    kept apart so that neither report changes; making them one is a change of both reports."""

    markdown: Parts
    html: Parts


Inline = (str | Text | Code | Address | Verbatim | Break | CaseLabel | Strong | Emphasis | Term | Link | Hint | Lines
          | Wording)
Parts = tuple[Inline, ...]


def joined(items: list[Parts], separator: Inline) -> Parts:
    """The items' parts one after the other, with ``separator`` between two items."""
    out: list[Inline] = []
    for i, item in enumerate(items):
        if i:
            out.append(separator)
        out.extend(item)
    return tuple(out)


# ---- table cells


@dataclass(frozen=True, init=False)
class Cell:
    """A table cell. ``framework``: the cell is in that framework's column (the HTML page
    hides it with the framework); ``outcome``: the cell is marked with an item's outcome;
    ``note``: the cell holds the reasons (HTML shows them smaller); ``header``: the cell
    heads its row."""

    parts: Parts
    framework: str | None
    outcome: str | None
    note: bool
    header: bool

    def __init__(self, *parts: Inline, framework: str | None = None, outcome: str | None = None,
                 note: bool = False, header: bool = False) -> None:
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "framework", framework)
        object.__setattr__(self, "outcome", outcome)
        object.__setattr__(self, "note", note)
        object.__setattr__(self, "header", header)


@dataclass(frozen=True)
class BehaviourCell:
    """A case on a framework: what it did (``parts``), coloured by its aliasing ``kind``
    (an ``analysis.Cell.kind``) and marked with its ``outcome``; ``reason``: why it did not
    pass or run, when that is shown (empty: not shown)."""

    framework: str
    kind: str
    outcome: str
    parts: Parts
    reason: Parts = ()


@dataclass(frozen=True)
class VerdictCell:
    """A claim's verdict on a framework (one of ``analysis.CLAIM_VERDICTS``), coloured."""

    framework: str
    verdict: str


AnyCell = Cell | BehaviourCell | VerdictCell

# ---- blocks


@dataclass(frozen=True, init=False)
class Paragraph:
    parts: Parts

    def __init__(self, *parts: Inline) -> None:
        object.__setattr__(self, "parts", parts)


@dataclass(frozen=True)
class Column:
    """A table's column: its title; ``numeric``: its cells are numbers, aligned right;
    ``framework``: a framework's column (the HTML page hides it with the framework)."""

    title: Inline = ""
    numeric: bool = False
    framework: str | None = None


@dataclass(frozen=True)
class Row:
    """A table row. ``anchor``: its id (a link to a case lands on its matrix row); ``data``:
    (name, value) pairs the HTML page's filters read, each name the report's own (a format
    without filters leaves them out)."""

    cells: tuple[AnyCell, ...]
    anchor: str | None = None
    data: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Table:
    """A table; ``anchor``: its id (the HTML page's script and tests find it by)."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    anchor: str | None = None


@dataclass(frozen=True)
class BulletList:
    """Items of a bullet list, after the sentence that leads into them (``intro``)."""

    items: tuple[Parts, ...]
    intro: Parts = ()


@dataclass(frozen=True)
class PerFormat:
    """Blocks that differ between the formats, as the two reports have shown them (see
    :class:`Wording`)."""

    markdown: tuple[Block, ...]
    html: tuple[Block, ...]


@dataclass(frozen=True)
class Subsections:
    """Sections under the one this block is in, together; ``anchor``: the id of the whole
    (the HTML page's script counts the rows shown in it)."""

    sections: tuple[Section, ...]
    anchor: str | None = None


Block = Paragraph | Table | BulletList | PerFormat | Subsections


@dataclass(frozen=True)
class Section:
    """A section under its title. ``anchor``: its id (a Markdown heading's anchor is made
    from its title by the code host); ``count``: how many things it lists, where the
    heading says it (the Markdown report says it in the text); ``label``: its name in a
    list of contents, when shorter than its title; ``group``: what sections of one kind are
    found by (the HTML page's filter hides a family's section whose rows it all hides)."""

    title: str
    anchor: str
    blocks: tuple[Block, ...] = ()
    count: int | None = None
    label: str | None = None
    group: str | None = None


@dataclass(frozen=True)
class Document:
    """A report: its title, the blocks before the first section, the sections, and what a
    reader may filter its tables by (the frameworks' columns, the families' sections)."""

    title: str
    intro: tuple[Block, ...]
    sections: tuple[Section, ...]
    frameworks: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
