"""``reports/behaviour.html``: one self-contained page (inline CSS and script, no network
resources) with the same content as the Markdown report and filters that work from disk.

Deterministic: the same results give the same bytes.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import PurePosixPath

from conformance.report.analysis import (
    CLASS_WORDS,
    OUTCOME_WORDS,
    VERIFIED,
    Report,
    Row,
    framework_title,
    operation_label,
    outcome_counts,
    pair_score,
    python_version,
)
from conformance.report.results import OUTCOMES, RESULTS_FORMAT_VERSION
from conformance.resultsmodel import NOT_INSTALLED

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 2rem 3rem;color:#1b1b1b}
h1{margin-top:1.2rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;width:100%}
th,td{border:1px solid #d0d0d0;padding:.3rem .45rem;vertical-align:top;text-align:left}
th{background:#f3f3f3;position:sticky;top:0}
td.num{text-align:right}
.k-same_object{background:#eadcf7}.k-view,.k-disjoint_view{background:#dbe9fb}.k-copy{background:#dcf3df}
.k-error{background:#fbdcdc}.k-none,.k-distinct_object{background:#f6f6f6}
.k-not_applicable,.k-skipped{background:#fff;color:#777}
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


def render(report: Report, link_root: str = "..") -> str:
    """The page: one self-contained file (style and script inline), each section a unit."""
    sections = (_header(report), _filters(report), _summary(report), _divergences(report, link_root),
                _findings(report, link_root), _compiled(report), _claims(report), _documentation(report),
                _operations(report), _matrix(report, link_root), _environment(report))
    return "\n".join([*(part for section in sections for part in section),
                      f"<script>{SCRIPT}</script></body></html>\n"])


def _header(report: Report) -> list[str]:
    versions = ", ".join(escape(framework_title(report, fw)) for fw in report.frameworks)
    return [
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        "<title>Cross-framework behaviour report</title>"
        f"<style>{STYLE}</style></head><body>",
        "<h1>Cross-framework behaviour report</h1>",
        f"<p>What {versions} actually do for {len(report.rows)} cases of view, copy, in-place and autograd "
        f"behaviour: {report.total_results} results (results format {RESULTS_FORMAT_VERSION}). "
        "Generated by <code>conformance report</code>.</p>",
        "<p class='legend'>" + "".join(f"<span class='k-{k}'>{escape(v)}</span>" for k, v in CLASS_WORDS.items()
                                       if k != "disjoint_view")
        + "<span class='k-error'>raises an error</span><span class='o-known_divergence'>known divergence</span>"
          "<span class='o-refused'>mutation refused (immutable arrays)</span>"
          "<span class='o-fail'>expectation did not hold</span></p>",
    ]


def _filters(report: Report) -> list[str]:
    out = ["<form id='filters' onsubmit='return false'>"]
    out += [f"<label><input type='checkbox' name='fw' value='{escape(fw)}' checked> {escape(fw)}</label>"
            for fw in report.frameworks]
    out += ["<label>family <select name='family'><option value=''>all</option>"
            + "".join(f"<option value='{escape(f)}'>{escape(f)}</option>" for f in report.families)
            + "</select></label>",
            "<label><input type='checkbox' name='divergent'> only divergences</label>",
            "<label><input type='checkbox' name='failing'> only failures</label>",
            "<span id='shown'></span></form>"]
    return out


def _summary(report: Report) -> list[str]:
    out = ["<h2 id='summary'>Summary</h2><table><tr><th>framework</th>"
           + "".join(f"<th>{escape(OUTCOME_WORDS[o])}</th>" for o in OUTCOMES) + "</tr>"]
    out += [f"<tr data-fw-row='{escape(fw)}'><td>{escape(fw)}</td>"
            + "".join(f"<td class='num'>{n}</td>" for n in numbers) + "</tr>" for fw, numbers in outcome_counts(report)]
    out += ["</table>",
            f"<p><b>Agreement</b> (share of cases that ran on at least two frameworks where all behave the same): "
            f"<b id='agreement'>{escape(report.overall.text())}</b></p>",
            "<table><tr><th>family</th><th>cases</th><th>agreement</th></tr>"]
    out += [f"<tr><td><a href='#family-{escape(family)}'>{escape(family)}</a></td><td class='num'>{score.cases}</td>"
            f"<td class='num'>{escape(score.text())}</td></tr>" for family, score in report.families.items()]
    out.append("</table>")
    out += _pairs(report)
    if report.invalid:
        out.append(f"<p><b>{len(report.invalid)} invalid case file(s) or case(s)</b> could not be run:</p><ul>")
        out += [f"<li><code>{escape(rec.nodeid)}</code>: "
                f"<pre>{escape(rec.reason)}</pre></li>" for rec in report.invalid]
        out.append("</ul>")
    return out


def _pairs(report: Report) -> list[str]:
    """Which two frameworks agree most (markdown.py's _pairs, as a table)."""
    fws = report.frameworks
    if len(fws) < 3:
        return []
    out = ["<p><b>Agreement by pair</b> (of the cases both frameworks ran, the share where they behave the same):</p>",
           "<table id='pairs-table'><tr><th></th>" + "".join(_fw_th(fw) for fw in fws) + "</tr>"]
    for a in fws:
        out.append(f"<tr><th>{escape(a)}</th>" + "".join(
            "<td></td>" if a == b else f"<td class='num'>{escape(pair_score(report, a, b).short())}</td>"
            for b in fws) + "</tr>")
    return out + ["</table>"]


def _divergences(report: Report, link_root: str) -> list[str]:
    fws, divergences = report.frameworks, report.divergences
    out = [f"<h2 id='divergences'>Divergences ({len(divergences)})</h2>",
           "<p>Cases where the frameworks do not behave the same, and why (the reasons the cases give).</p>",
           "<table id='divergence-table'><tr><th>case</th>" + "".join(_fw_th(fw) for fw in fws) + "<th>why</th></tr>"]
    for row in divergences:
        why = "".join(f"<div><b>{escape(fw)}</b>: {escape(text)}</div>" for fw, text in sorted(row.why.items()))
        out.append(_row_open(row, fws) + _case_td(row, link_root) + "".join(_cell_td(row, fw) for fw in fws)
                   + f"<td class='why'>{why}</td></tr>")
    return out + ["</table>"]


def _findings(report: Report, link_root: str) -> list[str]:
    """markdown.py's _findings, as a table."""
    fws, findings = report.frameworks, report.findings
    out = [f"<h2 id='findings'>Findings of conformance discover ({len(findings)})</h2>"]
    if not findings:
        return out + ["<p>No case comes from <code>conformance discover</code> (docs/discover.md).</p>"]
    out += ["<p>Cases that <code>conformance discover</code> found with generated programs and shrank to a minimal "
            "program (docs/discover.md): what each framework does, and why, with the oracle that caught it and "
            "whether it is documented, known upstream or new.</p>",
            "<table id='findings-table'><tr><th>case</th>" + "".join(_fw_th(fw) for fw in fws) + "<th>why</th></tr>"]
    for row in findings:
        why = "".join(f"<div><b>{escape(fw)}</b>: {escape(text)}</div>" for fw, text in sorted(row.why.items()))
        out.append(_row_open(row, fws) + _case_td(row, link_root) + "".join(_cell_td(row, fw) for fw in fws)
                   + f"<td class='why'>{why}</td></tr>")
    return out + ["</table>"]


def _compiled(report: Report) -> list[str]:
    """markdown.py's _compiled, as a table."""
    out = [f"<h2 id='compiled'>Compiled mode differs ({len(report.compiled)})</h2>"]
    if not report.modes:
        return out + ["<p>No compiled mode ran.</p>"]
    out += ["<p>Each compiled mode runs every case as one compiled function of its inputs and is compared with the "
            "eager run of the framework it compiles: the cases where what the caller sees differs, eager → compiled, "
            "and the reason the case records. A difference marked <em>(observed apart)</em> is about an "
            "intermediate the compiled function does not return (it returns what the program leaves), seen in a "
            "second compile that returns it as well.</p>",
            "<table id='modes-table'><tr><th>mode</th><th>compiles</th><th>cases both ran</th><th>the same</th>"
            "<th>differ</th></tr>"]
    for mode in report.modes:
        score = report.mode_scores.get(mode)
        if score is not None:
            out.append(f"<tr><td>{escape(mode)}</td><td>{escape(report.compiles[mode])}</td>"
                       f"<td class='num'>{score.comparable}</td><td class='num'>{score.agreeing}</td>"
                       f"<td class='num'>{score.comparable - score.agreeing}</td></tr>")
    out += ["</table>", "<table id='compiled-table'><tr><th>case</th><th>mode</th><th>eager → compiled</th>"
            "<th>why</th></tr>"]
    for row in report.compiled:
        what = "".join(f"<div>{escape(d)}</div>" for d in row.differences)
        out.append(f"<tr data-fw='{escape(row.mode)}'><td><a href='#case-{escape(row.case_id)}'>"
                   f"<code>{escape(row.case_id)}</code></a></td><td class='o-{escape(row.outcome)}'>{escape(row.mode)}"
                   f"</td><td>{what}</td><td class='why'>{escape(row.why)}</td></tr>")
    return out + ["</table>"]


def _claims(report: Report) -> list[str]:
    fws = report.frameworks
    out = ["<h2 id='claims'>Claims</h2><p>Every claim of <code>conformance/data/claims.yaml</code> with its "
           "verdict per framework from the cases that name it: it does not hold when any case shows a "
           "counterexample, and is unsettled when a case behind it fails.</p>",
           "<table id='claims-table'><tr><th>claim</th>" + "".join(_fw_th(fw) for fw in fws) + "<th>cases</th></tr>"]
    for claim in report.claims:
        cells = "".join(f"<td data-fw='{escape(fw)}' class='{VERDICT_CLASS.get(claim.verdicts[fw], '')}'>"
                        f"{escape(claim.verdicts[fw])}</td>" for fw in fws)
        cases = " ".join(f"<a href='#case-{escape(c)}'><code>{escape(c)}</code></a>" for c in claim.cases) or "none"
        out.append(f"<tr id='claim-{escape(claim.claim)}'><td><b>{escape(claim.claim)}</b> {escape(claim.text)}</td>"
                   f"{cells}<td>{cases}</td></tr>")
    return out + ["</table>"]


def _documentation(report: Report) -> list[str]:
    out = [f"<h2 id='documentation'>Documentation disagrees ({len(report.documented)})</h2>"]
    if not report.documented:
        return out + ["<p>No case records a framework's documentation saying otherwise than what it measured.</p>"]
    out += ["<p>Where a framework's own documentation says one thing and the case measured another (the case's "
            "<code>documentation:</code> field). <i>Measured</i> is the case's observation of the kind named; a case "
            "that fails there has not confirmed it.</p>",
            "<table id='documentation-table'><tr><th>framework</th><th>case</th><th>the documentation says</th>"
            "<th>measured</th><th>source</th></tr>"]
    for doc in report.documented:
        measured = ", ".join((f"<code>{escape(' & '.join(what.split('.')))}</code>: " if what else "")
                             + escape(str(value)) for what, value in doc.measured)
        measured = f"<code>{escape(doc.contradicts)}</code> {measured}"
        if doc.outcome not in VERIFIED:
            measured += f" ({escape(OUTCOME_WORDS.get(doc.outcome, doc.outcome))}: not confirmed)"
        link = f"<a href='{escape(doc.source)}'>{escape(doc.source)}</a>" if doc.source.startswith(
            ("http://", "https://")) else escape(doc.source)
        out.append(f"<tr data-fw='{escape(doc.framework)}'><td>{escape(doc.framework)}</td>"
                   f"<td><a href='#case-{escape(doc.case_id)}'><code>{escape(doc.case_id)}</code></a></td>"
                   f"<td>{escape(doc.says)}</td><td>{measured}</td><td>{link}</td></tr>")
    return out + ["</table>"]


def _operations(report: Report) -> list[str]:
    fws = report.frameworks
    out = ["<h2 id='operations'>Operation classification</h2><p>For each operation <code>y = op(x, …)</code> in "
           "the corpus, what the result is to its input per framework: <b>view</b> (shares data, another object), "
           "<b>same object</b> (the result is the input), <b>copy</b> (new data): the view / inplace / normal "
           "split of the Paddle design note, whose <i>inplace</i> is the same object. More than one kind: it "
           "depends on the input or the arguments. The kind is the relation the case confirmed at its end, or, "
           "where a later step changed whether the two share memory, what the memory probe saw right after the "
           "operation. Hover a kind for its cases.</p>",
           "<table id='operations-table'><tr><th>operation</th>" + "".join(_fw_th(fw) for fw in fws) + "</tr>"]
    for op in report.operations:
        cells = []
        for fw in fws:
            kinds = op.kinds.get(fw, {})
            inner = "<br>".join(f"<span title='{escape(', '.join(ids))}'>{escape(k)} ({len(ids)})</span>"
                                for k, ids in kinds.items()) or "—"
            cells.append(f"<td data-fw='{escape(fw)}'>{inner}</td>")
        out.append(f"<tr><td><code>{escape(operation_label(op.operation))}</code></td>{''.join(cells)}</tr>")
    return out + ["</table>"]


def _matrix(report: Report, link_root: str) -> list[str]:
    fws = report.frameworks
    out = ["<h2 id='matrix-heading'>Matrix</h2><div id='matrix'>"]
    for family, score in report.families.items():
        rows = [r for r in report.rows if r.family == family]
        out += [f"<section class='family' id='family-{escape(family)}'><h3>{escape(family)}</h3>"
                f"<p>{len(rows)} cases; agreement {escape(score.text())}.</p>",
                "<table><tr><th>case</th>" + "".join(_fw_th(fw) for fw in fws) + "</tr>"]
        out += [_row_open(row, fws, anchor=True) + _case_td(row, link_root, full=True)
                + "".join(_cell_td(row, fw) for fw in fws) + "</tr>" for row in rows]
        out.append("</table></section>")
    return out + ["</div>"]


def _environment(report: Report) -> list[str]:
    env = report.environment
    out = ["<h2 id='environment'>Environment</h2><ul>",
           f"<li>Python {escape(python_version(env))} ({escape(env.implementation)}) on "
           f"{escape(env.os)} {escape(env.machine)}</li>"]
    for fw in report.frameworks:
        info = env.frameworks.get(fw, NOT_INSTALLED)
        devices = ", ".join(info.devices or []) or "not run"
        out.append(f"<li>{escape(fw)} {escape(info.version or 'not installed')} "
                   f"(devices: {escape(devices)})</li>")
    return out + ["</ul>"]


def _fw_th(fw: str) -> str:
    return f"<th data-fw='{escape(fw)}'>{escape(fw)}</th>"


def _row_open(row: Row, fws: list[str], anchor: bool = False) -> str:
    failing = [fw for fw in fws if fw in row.cells and row.cells[fw].outcome in ("fail", "error")]
    fails = f" data-fails='{escape(json.dumps(failing))}'"
    ident = f" id='case-{escape(row.case_id)}'" if anchor else ""
    return (f"<tr{ident} data-case='{escape(row.case_id)}' data-family='{escape(row.family)}' "
            f"data-diverges='{int(row.agrees is False)}' data-failing='{int(row.failing)}'{fails}>")


def _case_td(row: Row, link_root: str, full: bool = False) -> str:
    file, line = row.info.file, row.info.line
    where = f"{escape(file)}:{escape(str(line))}"
    if file and not PurePosixPath(file).is_absolute():
        where = f"<a href='{escape(link_root)}/{escape(file)}'>{where}</a>"
    text = f"<code>{escape(row.case_id)}</code><div class='file'>{where}</div>"
    if full:
        text += f"<div>{escape(str(row.info.title))}</div>"
        tags = row.info.tags
        if tags:
            text += f"<div class='file'>tags: {escape(', '.join(tags))}</div>"
        refs = row.info.references
        if refs:
            text += "<div class='file'>refs: " + " ".join(
                f"<a href='{escape(r)}'>[{i}]</a>" if r.startswith(("http://", "https://")) else escape(r)
                for i, r in enumerate(refs, 1)) + "</div>"
    return f"<td>{text}</td>"


def _cell_td(row: Row, fw: str) -> str:
    cell = row.cells.get(fw)
    if cell is None:
        return f"<td data-fw='{escape(fw)}'>—</td>"
    text = escape(cell.words)
    if cell.outcome in ("fail", "error", "not_applicable", "skipped"):
        text += f"<div class='why'>{escape(OUTCOME_WORDS[cell.outcome])}: {escape(cell.reason)}</div>"
    return (f"<td data-fw='{escape(fw)}' data-outcome='{escape(cell.outcome)}' "
            f"class='k-{escape(cell.kind)} o-{escape(cell.outcome)}'>{text}</td>")
