"""``reports/behaviour.html``: one self-contained page (inline CSS and script, no network
resources) with the same content as the Markdown report and filters that work from disk.

Deterministic: the same results give the same bytes. Every text of the document goes
through ``html.escape``: a value with its quotes too (the same escape serves in text and in
a single-quoted attribute), the report's own words as they are typed.
"""

from __future__ import annotations

from html import escape

from conformance.report import sections
from conformance.report.analysis import CLASS_WORDS, OUTCOME_WORDS, Report
from conformance.report.document import (
    Address,
    AnyCell,
    BehaviourCell,
    Block,
    Break,
    BulletList,
    CaseLabel,
    Code,
    Column,
    Document,
    Emphasis,
    Hint,
    Inline,
    Lines,
    Link,
    Paragraph,
    Parts,
    Place,
    Row,
    Section,
    Strong,
    Subsections,
    Table,
    Term,
    Text,
    Verbatim,
    VerdictCell,
)

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 2rem 3rem;color:#1b1b1b}
h1{margin-top:1.2rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;width:100%}
th,td{border:1px solid #d0d0d0;padding:.3rem .45rem;vertical-align:top;text-align:left}
th{background:#f3f3f3;position:sticky;top:0}
td.num{text-align:right}
.k-same_object{background:#eadcf7}.k-view,.k-disjoint_view{background:#dbe9fb}.k-copy{background:#dcf3df}
.k-error{background:#fbdcdc}.k-none,.k-distinct_object{background:#f6f6f6}
.k-not_applicable,.k-skipped,.k-unchecked{background:#fff;color:#777}
.o-fail,.o-error{outline:3px solid #c62828;outline-offset:-3px}
.o-known_divergence::before{content:"\\25C6 ";color:#8a5a00}
.o-refused::before{content:"\\2298 ";color:#555}
.why{font-size:12px;color:#444}.file{font-size:12px;color:#555}
.v-holds{background:#dcf3df}.v-does-not-hold{background:#fbdcdc}.v-unsettled{background:#fff1c2}
#filters{position:sticky;top:0;background:#fff;padding:.5rem 0;border-bottom:1px solid #ccc;z-index:2}
#filters label{margin-right:1rem}
.hidden-row{display:none}
.legend span{display:inline-block;padding:0 .4rem;margin-right:.3rem;border:1px solid #ccc}
code{font-size:12px}
"""

# Filters: framework columns, family, only divergences, only failures. Rows carry
# data-family / data-diverges / data-failing / data-fails (a JSON list of the frameworks it
# fails on, so that no framework name is ever part of an attribute's name or a selector's
# syntax); cells carry data-fw, and
# per-framework rows (the summary) data-fw-row.
SCRIPT = """
(function(){
  var form=document.getElementById('filters');
  function apply(){
    var fws=[].slice.call(form.querySelectorAll('input[name=fw]'));
    var shownFw=fws.filter(function(b){return b.checked}).map(function(b){return b.value});
    var family=form.querySelector('select[name=family]').value;
    var onlyDiv=form.querySelector('input[name=divergent]').checked;
    var onlyFail=form.querySelector('input[name=failing]').checked;
    fws.forEach(function(b){
      var v=CSS.escape(b.value);
      document.querySelectorAll('[data-fw="'+v+'"],[data-fw-row="'+v+'"]').forEach(function(c){
        c.hidden=!b.checked});
    });
    var shown=0,total=0;
    document.querySelectorAll('tr[data-case]').forEach(function(r){
      var failsOn=JSON.parse(r.getAttribute('data-fails')||'[]');
      var fails=shownFw.some(function(fw){return failsOn.indexOf(fw)>=0});
      var ok=(family===''||r.getAttribute('data-family')===family)&&
             (!onlyDiv||r.getAttribute('data-diverges')==='1')&&(!onlyFail||fails);
      r.classList.toggle('hidden-row',!ok);
      if(r.closest('#matrix')){total++;if(ok)shown++;}
    });
    document.querySelectorAll('section.family').forEach(function(s){
      s.hidden=!s.querySelector('tr[data-case]:not(.hidden-row)');
    });
    document.getElementById('shown').textContent=shown+' of '+total+' cases shown';
  }
  form.addEventListener('change',apply);
  apply();
})();
"""

VERDICT_CLASS = {"holds": "v-holds", "does not hold": "v-does-not-hold", "unsettled": "v-unsettled"}
LEGEND = ("<p class='legend'>" + "".join(f"<span class='k-{k}'>{escape(v)}</span>" for k, v in CLASS_WORDS.items()
                                         if k != "disjoint_view")
          + "<span class='k-error'>raises an error</span><span class='o-known_divergence'>known divergence</span>"
            "<span class='o-refused'>mutation refused (immutable arrays)</span>"
            "<span class='o-fail'>expectation did not hold</span></p>")


def render(report: Report, link_root: str = "..") -> str:
    """The behaviour report's page; ``link_root`` as for the Markdown report."""
    return render_document(sections.behaviour_report(report), link_root)


def render_document(document: Document, link_root: str = "..") -> str:
    """A document as one self-contained page (style and script inline): its title, its
    intro, the legend of the colours, the filters, and the sections."""
    writer = _Writer(link_root)
    title = escape(document.title)
    lines = ["<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
             "<meta name='viewport' content='width=device-width,initial-scale=1'>"
             f"<title>{title}</title><style>{STYLE}</style></head><body>",
             f"<h1>{title}</h1>"]
    for block in document.intro:
        lines += writer.block(block, 1)
    lines += [LEGEND, *_filters(document)]
    for section in document.sections:
        lines += writer.section(section, 2)
    lines.append(f"<script>{SCRIPT}</script></body></html>\n")
    return "\n".join(lines)


def _filters(document: Document) -> list[str]:
    return ["<form id='filters' onsubmit='return false'>",
            *(f"<label><input type='checkbox' name='fw' value='{escape(fw)}' checked> {escape(fw)}</label>"
              for fw in document.frameworks),
            "<label>family <select name='family'><option value=''>all</option>"
            + "".join(f"<option value='{escape(f)}'>{escape(f)}</option>" for f in document.families)
            + "</select></label>",
            "<label><input type='checkbox' name='divergent'> only divergences</label>",
            "<label><input type='checkbox' name='failing'> only failures</label>",
            "<span id='shown'></span></form>"]


class _Writer:
    """HTML of blocks and parts, with the case files linked from ``link_root``."""

    def __init__(self, link_root: str) -> None:
        self.link_root = link_root

    def section(self, section: Section, level: int) -> list[str]:
        """A top section under its heading; a section under another, a <section> element
        (the filters hide a family's whole section). The page's source keeps the line breaks
        it has always had: a heading that shows a count stands on a line of its own, another
        is followed on its line by what the section begins with."""
        title = escape(section.title) + (f" ({section.count})" if section.count is not None else "")
        lines = [line for block in section.blocks for line in self.block(block, level)]
        if level <= 2:
            heading = f"<h2 id='{escape(section.anchor)}'>{title}</h2>"
        else:
            group = f" class='{escape(section.group)}'" if section.group else ""
            heading = f"<section{group} id='{escape(section.anchor)}'><h{level}>{title}</h{level}>"
            lines = [*lines[:-1], (lines[-1] if lines else "") + "</section>"]
        if section.count is None and lines:
            lines[0] = heading + lines[0]
        else:
            lines.insert(0, heading)
        return lines

    def block(self, block: Block, level: int) -> list[str]:
        if isinstance(block, Paragraph):
            return [f"<p>{self.inline(block.parts)}</p>"]
        if isinstance(block, Table):
            return self.table(block)
        if isinstance(block, BulletList):
            intro = f"<p>{self.inline(block.intro)}</p>" if block.intro else ""
            return [f"{intro}<ul>", *(f"<li>{self.inline(item)}</li>" for item in block.items), "</ul>"]
        if isinstance(block, Subsections):
            ident = f" id='{escape(block.anchor)}'" if block.anchor else ""
            return [f"<div{ident}>", *(line for section in block.sections for line in self.section(section, level + 1)),
                    "</div>"]
        return [line for shown in block.html for line in self.block(shown, level)]

    def table(self, table: Table) -> list[str]:
        ident = f" id='{escape(table.anchor)}'" if table.anchor else ""
        head = "".join(f"<th{_framework(column.framework)}>{self.inline((column.title,))}</th>"
                       for column in table.columns)
        return [f"<table{ident}><tr>{head}</tr>", *(self.row(row, table.columns) for row in table.rows), "</table>"]

    def row(self, row: Row, columns: tuple[Column, ...]) -> str:
        ident = f" id='{escape(row.anchor)}'" if row.anchor else ""
        data = "".join(f" data-{name}='{escape(value)}'" for name, value in row.data)
        return f"<tr{ident}{data}>" + "".join(self.cell(c, column) for c, column in zip(row.cells, columns)) + "</tr>"

    def cell(self, cell: AnyCell, column: Column) -> str:
        if isinstance(cell, BehaviourCell):
            why = (f"<div class='why'>{escape(OUTCOME_WORDS[cell.outcome])}: {self.inline(cell.reason)}</div>"
                   if cell.reason else "")
            return (f"<td data-fw='{escape(cell.framework)}' data-outcome='{escape(cell.outcome)}' "
                    f"class='k-{escape(cell.kind)} o-{escape(cell.outcome)}'>{self.inline(cell.parts)}{why}</td>")
        if isinstance(cell, VerdictCell):
            return (f"<td data-fw='{escape(cell.framework)}' class='{VERDICT_CLASS.get(cell.verdict, '')}'>"
                    f"{escape(cell.verdict)}</td>")
        tag = "th" if cell.header else "td"
        style = ("why" if cell.note else f"o-{escape(cell.outcome)}" if cell.outcome
                 else "num" if column.numeric and cell.parts else "")  # an empty cell needs no alignment
        attributes = _framework(cell.framework) + (f" class='{style}'" if style else "")
        return f"<{tag}{attributes}>{self.inline(cell.parts)}</{tag}>"

    def inline(self, parts: Parts) -> str:
        return "".join(self.part(part) for part in parts)

    def part(self, part: Inline) -> str:
        if isinstance(part, str):  # no quote in text needs escaping
            return escape(part, quote=False)
        if isinstance(part, Text):
            return escape(part.text)
        if isinstance(part, Verbatim):
            return f"<pre>{escape(part.text)}</pre>"
        if isinstance(part, Address):
            return f"<a href='{escape(part.url)}'>{escape(part.url)}</a>"
        if isinstance(part, Code):
            return f"<code>{escape(part.text)}</code>"
        if isinstance(part, Break):
            return "<br>"
        if isinstance(part, CaseLabel):
            return self.case_label(part)
        if isinstance(part, Strong):
            ident = f" id='{escape(part.anchor)}'" if part.anchor else ""
            return f"<b{ident}>{self.inline(part.parts)}</b>"
        if isinstance(part, Emphasis):
            return f"<em>{self.inline(part.parts)}</em>"
        if isinstance(part, Term):
            return f"<i>{self.inline(part.parts)}</i>"
        if isinstance(part, Link):
            href = (f"#{escape(part.to.anchor)}" if isinstance(part.to, Place)
                    else f"{escape(self.link_root)}/{escape(part.to.path)}")
            return f"<a href='{href}'>{self.inline(part.parts)}</a>"
        if isinstance(part, Hint):
            return f"<span title='{escape(part.hint)}'>{self.inline(part.parts)}</span>"
        if isinstance(part, Lines):
            return "".join(f"<div>{self.inline(item)}</div>" for item in part.items)
        return self.inline(part.html)  # a Wording

    def case_label(self, label: CaseLabel) -> str:
        where = escape(f"{label.file}:{label.line}")
        if label.linked:
            where = f"<a href='{escape(self.link_root)}/{escape(label.file)}'>{where}</a>"
        text = f"<code>{escape(label.case_id)}</code><div class='file'>{where}</div>"
        if label.title is None:
            return text
        text += f"<div>{escape(label.title)}</div>"
        if label.tags:
            text += f"<div class='file'>tags: {escape(', '.join(label.tags))}</div>"
        if label.references:
            text += "<div class='file'>refs: " + " ".join(
                f"<a href='{escape(ref)}'>[{i}]</a>" if ref.startswith(("http://", "https://")) else escape(ref)
                for i, ref in enumerate(label.references, 1)) + "</div>"
        return text


def _framework(fw: str | None) -> str:
    """The attribute of a framework's column, by which the filters hide it."""
    return f" data-fw='{escape(fw)}'" if fw is not None else ""
