"""``conformance coverage``: the corpus against the frameworks' own lists of view ops and in-place methods."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import case_roots, print_error


def add_parser(sub: Any) -> None:
    cov = sub.add_parser("coverage", help="how much of each framework's own list of view ops and in-place "
                                          "methods the corpus covers (Markdown; docs/coverage.md)")
    cov.add_argument("paths", nargs="*", help="case files or folders (default: the corpus)")
    cov.add_argument("--lists", help="a folder of reference lists (default: the packaged conformance/data/coverage)")
    cov.add_argument("--results", help="a results JSON: count a case on a framework only where it was not "
                                       "recorded as not applicable there")
    cov.add_argument("--check", action="store_true", help="exit 1 if a list is below its target")
    cov.set_defaults(func=cmd_coverage)


def cmd_coverage(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.results import ResultsFileError, load_results
    from conformance.source import CaseFormatError, split
    from conformance.tools import coverage

    try:
        lists = coverage.read_lists(Path(args.lists) if args.lists else coverage.LISTS_FOLDER)
    except CaseFormatError as exc:
        for error in split(exc):
            print(for_terminal(error.render()), file=sys.stderr)
        return 2
    cases, problems = coverage.corpus_cases(args.paths or case_roots())
    if problems:  # the coverage of a corpus that does not load is not measured
        for problem in problems:
            print(for_terminal(problem), file=sys.stderr)
        print("conformance coverage: fix the case files above first (conformance lint)", file=sys.stderr)
        return 2
    not_run: frozenset[tuple[str, str]] = frozenset()
    if args.results:
        try:
            not_run = coverage.not_run_from_results(load_results(Path(args.results)))
        except ResultsFileError as exc:
            print_error(str(exc))
            return 2
    coverages = coverage.measure_all(lists, cases, not_run)
    sys.stdout.write(coverage.render_markdown(coverages, coverage.framework_titles()))
    for line in coverage.summary_lines(coverages):
        print(line, file=sys.stderr)
    return 1 if args.check and not all(c.meets_target for c in coverages) else 0
