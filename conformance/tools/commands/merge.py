"""``conformance merge``: join results files of shards, frameworks or machines."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import print_error

if TYPE_CHECKING:
    from conformance.resultsmodel import ResultsDocument


def add_parser(sub: Any) -> None:
    mrg = sub.add_parser("merge", help="join results files of shards, frameworks or machines into one (refuses "
                                       "files of different corpus revisions, or sharing an item)")
    mrg.add_argument("results", nargs="+", help="results JSON files (of one corpus revision, no item in two)")
    mrg.add_argument("--out", required=True, help="the merged results JSON (then: conformance report OUT)")
    mrg.set_defaults(func=cmd_merge)


def cmd_merge(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.merge import MergeError, merge
    from conformance.report.outputs import OutputError, check_file, error_text
    from conformance.report.results import ResultsFileError, load_results, write_atomically

    documents: list[tuple[str, ResultsDocument]] = []
    problems: list[str] = []
    for name in args.results:
        try:
            documents.append((name, load_results(Path(name))))
        except ResultsFileError as exc:
            problems += exc.problems
    try:
        if problems:
            raise MergeError(problems)
        merged = merge(documents)
        check_file(Path(args.out), f"the merged results file {args.out}")
    except (MergeError, OutputError) as exc:
        for line in str(exc).splitlines():
            print_error(f"conformance merge: {line}")
        return 2
    try:
        write_atomically(Path(args.out), merged)
    except OSError as exc:
        print_error(f"conformance merge: could not write {args.out}: {error_text(exc)}")
        return 3
    partial = merged.run.partial
    state = f"partial: {'; '.join(partial)}" if partial else "a full run of the corpus"
    print(for_terminal(f"conformance merge: wrote {args.out} ({merged.run.items} items from "
                       f"{len(documents)} files; {state})"))
    return 0
