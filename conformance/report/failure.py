"""Human-readable text for an outcome that failed: what was expected, what was observed,
where the expectation is written, and the steps with the one that did it marked."""

from __future__ import annotations

from conformance.escaping import for_terminal
from conformance.model import Case
from conformance.outcomes import ERROR, Mismatch, Outcome


def render_failure(case: Case, outcome: Outcome) -> str:
    lines = [f"{case.id}[{outcome.framework}] — {case.title}", f"  case at {case.location}"]
    if outcome.override_reason:
        lines.append(f"  {outcome.framework} override in effect: {outcome.override_reason}")
    if outcome.verdict == ERROR:  # refused while it ran: no verdict, the reason says why
        lines.append(f"  error: {outcome.reason}")
    marked = {m.step for m in outcome.mismatches if m.step}
    unbound = [m for m in outcome.mismatches if _never_bound(m)]
    # where the run stopped at an error, each expectation about a name it never bound follows
    # from that error: one line lists them, after the cause, instead of one entry each
    stopped = any(rec.error is not None for rec in outcome.steps)
    for m in outcome.mismatches:
        if stopped and m in unbound:
            continue
        where = f"  ({m.location})" if m.location else ""
        lines.append("")
        lines.append(f"  {m.what}{where}")
        lines.append(f"    expected: {m.expected}")
        lines.append(f"    observed: {m.observed}")
        if m.step:
            lines.append(f"    by step {m.step}: {outcome.steps[m.step - 1].text}")
        if m.detail:
            lines.append(f"    {m.detail}")
    if stopped and unbound:
        said = list(dict.fromkeys(f"{m.what} (line {m.location.line})" if m.location else m.what for m in unbound))
        lines.append("")
        lines.append(f"  and {len(said)} expectation(s) about names the run never bound, as it stopped at the error "
                     f"above: {', '.join(said)}")
    lines.append("")
    lines.append("  steps:")
    for rec in outcome.steps:
        mark = ">" if rec.number in marked else " "
        status = {"ok": "", "not_run": "  (not run)"}.get(rec.status, "")
        if rec.error:
            status = f"  -> raised {rec.error.type} [{rec.error.kind}]: {_first_line(rec.error.message)}"
        lines.append(f"  {mark}{rec.number:>3}  {rec.text}   # line {rec.location.line}{status}")
        for w in rec.warnings:
            lines.append(f"         warning: {_first_line(w)}")
    # case text and framework messages: printed by pytest, maybe into a CI log
    return for_terminal("\n".join(lines))


def _never_bound(m: Mismatch) -> bool:
    return isinstance(m.observed, str) and "was never bound (the run stopped at step" in m.observed


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."
