"""Write (or check) the behaviour reports for a results file: ``behaviour.md`` and
``behaviour.html`` in one folder."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from conformance.report import analysis
from conformance.report import html as report_html
from conformance.report import markdown as report_md
from conformance.report.outputs import read_regular_text
from conformance.report.results import write_texts_atomically
from conformance.resultsmodel import ResultsDocument

REPORT_NAMES = ("behaviour.md", "behaviour.html")


def render_all(results: ResultsDocument, out_dir: Path, case_root: Path | None = None) -> dict[Path, str]:
    """Report path -> text. Links to case files are relative from ``out_dir`` to
    ``case_root`` (the folder the case paths in the results are relative to)."""
    report = analysis.build(results)
    root = case_root if case_root is not None else Path.cwd()
    link_root = Path(os.path.relpath(root.resolve(), out_dir.resolve())).as_posix()
    return {
        out_dir / "behaviour.md": report_md.render(report, link_root),
        out_dir / "behaviour.html": report_html.render(report, link_root),
    }


def write_reports(results: ResultsDocument, out_dir: Path, case_root: Path | None = None) -> list[Path]:
    """Both reports, written together: a write that fails leaves both as they were."""
    rendered = render_all(results, out_dir, case_root)
    write_texts_atomically(rendered)
    return list(rendered)


def stale_reports(results: ResultsDocument, out_dir: Path, case_root: Path | None = None,
                  context_lines: int = 3, max_lines: int = 60) -> list[str]:
    """A message per report that differs from what the results render to (empty: up to date)."""
    problems = []
    for path, text in render_all(results, out_dir, case_root).items():
        if not os.path.lexists(path):
            problems.append(f"{path}: missing")
            continue
        try:  # never through a link (a committed link would quote its target into the CI log)
            current = read_regular_text(path)
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot be compared ({exc}); it must be the regular UTF-8 file "
                            "`conformance report` writes: regenerate it")
            continue
        if current == text:
            continue
        diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), f"{path} (committed)",
                                         f"{path} (from these results)", n=context_lines, lineterm=""))
        shown = "\n".join(line[:300] for line in diff[:max_lines])
        more = f"\n... {len(diff) - max_lines} more diff lines" if len(diff) > max_lines else ""
        problems.append(f"{path}: out of date with the corpus\n{shown}{more}")
    return problems
