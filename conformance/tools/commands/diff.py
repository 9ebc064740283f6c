"""``conformance diff``: what changed between two results files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import print_error


def add_parser(sub: Any) -> None:
    dif = sub.add_parser("diff", help="what changed between two results files (exit 1 if anything did)",
                         description="Compare two results files (conformance run's, or a release's from "
                                     "conformance matrix) item by item: cases added and removed, items run in only "
                                     "one, and each item whose outcome or compared behaviour changed (aliasing "
                                     "classes, the error kind and step, observed values), with what it was and what "
                                     "it is. Exit status 0: nothing changed; 1: something did; 2: a file could not "
                                     "be read.")
    dif.add_argument("old", help="the earlier results file")
    dif.add_argument("new", help="the later results file")
    dif.add_argument("--format", choices=("text", "md"), default="text",
                     help="text for a terminal (default), md for a pull request or a changelog")
    dif.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.diff import compare, render_markdown, render_text
    from conformance.report.results import ResultsFileError, load_results

    loaded, problems = [], []
    for name in (args.old, args.new):  # the problems of both files at once
        try:
            loaded.append(load_results(Path(name)))
        except ResultsFileError as exc:
            problems += exc.problems
    if problems:
        for line in problems:
            print_error(f"conformance diff: {line}")
        return 2
    old, new = loaded
    diff = compare(old, new)
    # Markdown is escaped as it is made; either way it is printed, maybe into a CI log
    sys.stdout.write(for_terminal(render_markdown(diff) if args.format == "md" else render_text(diff)))
    return 0 if diff.empty else 1
