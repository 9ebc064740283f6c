"""``conformance list``: list the cases."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import case_roots


def add_parser(sub: Any) -> None:
    lst = sub.add_parser("list", help="list the cases: id, file:line and the claims each names",
                         description="Load the case files and print one line per case: its id, where it is "
                                     "written (file:line) and the claims it names. A file that does not load prints "
                                     "every error (file:line:col and the fix) and makes the exit status 1. Nothing "
                                     "runs: no framework is imported.")
    lst.add_argument("paths", nargs="*", help="case files or folders (default: the corpus, cases/)")
    lst.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.load.folders import scan
    from conformance.load.reader import load_file
    from conformance.tools.lint import refused_finding

    vocab = registry.vocabulary()
    status = 0
    # folders are walked without following links; a refused entry is never opened
    files, refused = scan(args.paths or case_roots())
    for path, why in refused:
        print(refused_finding(path, why).render(), file=sys.stderr)
        status = 1
    for path in files:
        result = load_file(path, vocab)
        for case in result.cases:
            claim_text = f"  [{', '.join(case.claims)}]" if case.claims else ""
            print(for_terminal(f"{case.id}  {case.location}{claim_text}", multiline=False))
        for _, error in result.errors:
            print(for_terminal(error.render()), file=sys.stderr)
            status = 1
    return status
