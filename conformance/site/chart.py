"""The home page's chart, drawn as inline SVG (no script, no font or image fetched): for each
family of cases and each framework, the share of the family's cases in which the framework
behaves as most frameworks do; and each family's agreement score (all frameworks the same).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from conformance.report import analysis
from conformance.report.analysis import Report
from conformance.site import urls

LABEL_W, CELL_W, CELL_H, HEAD_H, SCORE_W = 80, 44, 26, 92, 62


@dataclass
class Share:
    with_most: int = 0
    compared: int = 0

    @property
    def percent(self) -> float | None:
        return None if not self.compared else 100.0 * self.with_most / self.compared


def shares(report: Report) -> dict[tuple[str, str], Share]:
    """(family, framework) -> of the family's cases the framework ran with at least one other,
    in how many it is in the largest group of frameworks that behave alike (a tie: the group
    of the framework first in the columns' order)."""
    out: dict[tuple[str, str], Share] = {}
    for row in report.rows:
        groups = analysis.behaviour_groups(row, report.frameworks)
        if sum(len(g) for g in groups) < 2:
            continue
        for group in groups:
            for fw in group:
                share = out.setdefault((row.family, fw), Share())
                share.compared += 1
                share.with_most += group is groups[0]
    return out


def _fill(percent: float | None) -> str:
    if percent is None:
        return "#d9d9d9"
    return f"hsl({round(percent * 1.2)},62%,{round(78 + percent * 0.08)}%)"  # red (0%) to green (100%)


def agreement_chart(report: Report, page: str = "index.html") -> str:
    """The chart as an ``<svg>`` element; links are relative to ``page``."""
    data = shares(report)
    fws, families = report.frameworks, list(report.families)
    width = LABEL_W + CELL_W * len(fws) + SCORE_W
    height = HEAD_H + CELL_H * len(families) + 6
    out = [f"<svg class='chart' viewBox='0 0 {width} {height}' width='{width}' height='{height}' role='img' "
           "aria-labelledby='chart-title chart-desc' xmlns='http://www.w3.org/2000/svg'>",
           "<title id='chart-title'>Frameworks by family: how often each behaves as most frameworks do</title>",
           "<desc id='chart-desc'>One row per family of cases, one column per framework; each cell gives the share "
           "of the family's cases in which the framework behaves as the largest group of frameworks does. The last "
           "column is the family's agreement: the share of cases in which all frameworks behave the same.</desc>"]
    for i, fw in enumerate(fws):
        x = LABEL_W + CELL_W * i + CELL_W / 2
        out.append(f"<a href='{escape(urls.relative(page, urls.framework(fw)))}'><text class='head' "
                   f"transform='translate({x:.0f},{HEAD_H - 8}) rotate(-45)'>{escape(fw)}</text></a>")
    x = LABEL_W + CELL_W * len(fws) + 8
    out.append(f"<text class='head' transform='translate({x + 4},{HEAD_H - 8}) rotate(-45)'>all agree</text>")
    for j, family in enumerate(families):
        y = HEAD_H + CELL_H * j
        out.append(f"<a href='{escape(urls.relative(page, urls.family(family)))}'><text class='label' x='{LABEL_W - 8}'"
                   f" y='{y + CELL_H / 2 + 5:.0f}' text-anchor='end'>{escape(family)}</text></a>")
        for i, fw in enumerate(fws):
            share = data.get((family, fw), Share())
            p = share.percent
            text = "—" if p is None else f"{p:.0f}%"
            tip = (f"{fw} on {family}: no case compared" if p is None else
                   f"{fw} on {family}: behaves as most frameworks do in {share.with_most} of {share.compared} cases")
            out.append(f"<rect x='{LABEL_W + CELL_W * i + 1}' y='{y + 1}' width='{CELL_W - 2}' height='{CELL_H - 2}' "
                       f"rx='3' fill='{_fill(p)}'><title>{escape(tip)}</title></rect>"
                       f"<text class='cell' x='{LABEL_W + CELL_W * i + CELL_W / 2:.0f}' y='{y + CELL_H / 2 + 5:.0f}' "
                       f"text-anchor='middle'>{text}</text>")
        score = report.families[family]
        p = score.percent
        out.append(f"<rect x='{x}' y='{y + 1}' width='{SCORE_W - 12}' height='{CELL_H - 2}' rx='3' "
                   f"fill='{_fill(p)}'><title>{escape(family)}: {escape(score.text())}</title></rect>"
                   f"<text class='cell' x='{x + (SCORE_W - 12) / 2:.0f}' y='{y + CELL_H / 2 + 5:.0f}' "
                   f"text-anchor='middle'>{'—' if p is None else f'{p:.0f}%'}</text>")
    out.append("</svg>")
    return "".join(out)
