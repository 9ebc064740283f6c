"""``conformance report``: render the reports from a results file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import DEFAULT_PARTIAL, DEFAULT_RESULTS, print_error

if TYPE_CHECKING:
    from conformance.resultsmodel import ResultsDocument


def add_parser(sub: Any) -> None:
    rep = sub.add_parser("report", help="render behaviour.md and behaviour.html from a results JSON")
    rep.add_argument("results", help="results JSON written by `conformance run` or pytest --conformance-results")
    rep.add_argument("--out", default=None,
                     help=f"output folder (default: {DEFAULT_RESULTS.parent}, or {DEFAULT_PARTIAL} for the results "
                          "of a partial run)")
    rep.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if the reports in --out differ from what the results give")
    rep.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.outputs import OutputError, check_folder, error_text, holding, reports_lock_path
    from conformance.report.pages import stale_reports
    from conformance.report.results import ResultsFileError, load_results

    try:
        data = load_results(Path(args.results))
    except ResultsFileError as exc:
        for line in exc.problems:  # one per problem, each naming the file and where in it
            print_error(f"conformance report: {line}")
        return 2
    partial = data.run.partial or ()
    if args.out is not None:
        out_dir = Path(args.out)
    else:  # the reports of a partial run never replace those of the corpus unless --out says so
        out_dir = DEFAULT_PARTIAL if partial else DEFAULT_RESULTS.parent
        if partial:
            print(for_terminal(f"conformance report: {args.results} is from a partial run "
                               f"({'; '.join(partial)}): its reports go to {out_dir} (--out names another folder)"))
    if args.check:
        problems = stale_reports(data, out_dir)
        for problem in problems:  # the diff quotes case text
            print_error(problem)
        if problems:
            print_error(f"conformance report: regenerate with `conformance report {args.results} --out {out_dir}` "
                        "and commit the result")
            return 1
        print(for_terminal(f"conformance report: {out_dir} is up to date"))
        return 0
    what = f"the reports in {out_dir}"
    try:
        check_folder(out_dir, what)
        with holding(reports_lock_path(out_dir), what, "conformance report"):
            written = _write_reports(data, out_dir)
    except OutputError as exc:
        print_error(f"conformance report: {exc}")
        return 2
    except OSError as exc:
        print_error(f"conformance report: could not write {what}: {error_text(exc)}; the previous reports are left "
                    "as they were")
        return 3
    for path in written:
        print(for_terminal(f"conformance report: wrote {path}"))
    return 0



def _write_reports(data: ResultsDocument, out_dir: Path) -> list[Path]:
    from conformance.report.pages import write_reports

    return write_reports(data, out_dir)
