"""``conformance changelog``: the behaviour changelog from the results of several releases."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import print_error


def add_parser(sub: Any) -> None:
    chl = sub.add_parser("changelog", help="the behaviour changelog (changelog.md, changelog.html) from the "
                                           "results of several releases")
    chl.add_argument("results", nargs="+", help="results files, one per release (conformance matrix's)")
    chl.add_argument("--out", default="reports", help="output folder (default: reports)")
    chl.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if the changelog in --out differs from what the results give")
    chl.set_defaults(func=cmd_changelog)


def cmd_changelog(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.changelog import NAMES, ChangelogError, build, render_html, render_markdown
    from conformance.report.outputs import OutputError, check_folder, error_text
    from conformance.report.results import ResultsFileError, load_results, write_texts_atomically

    documents, problems = [], []
    for name in args.results:  # the problems of every file at once
        try:
            documents.append((name, load_results(Path(name), remake="conformance matrix")))
        except ResultsFileError as exc:
            problems += exc.problems
    log = None
    if not problems:
        try:
            log = build(documents)
        except ChangelogError as exc:
            problems.append(str(exc))
    if log is None:
        for line in problems:
            print_error(f"conformance changelog: {line}")
        return 2
    out = Path(args.out)
    texts = {out / NAMES[0]: render_markdown(log), out / NAMES[1]: render_html(log)}
    if args.check:
        def same(path: Path, text: str) -> bool:  # a committed file that is not UTF-8 is stale, not a crash
            try:
                return path.is_file() and path.read_text(encoding="utf-8") == text
            except (OSError, UnicodeDecodeError):
                return False

        stale = [str(p) for p, text in texts.items() if not same(p, text)]
        for name in stale:
            print_error(f"conformance changelog: {name} is not what these results render; regenerate with "
                        f"`conformance changelog {' '.join(args.results)} --out {out}` and commit it")
        if not stale:
            print(for_terminal(f"conformance changelog: {out} is up to date"))
        return 1 if stale else 0
    try:
        check_folder(out, f"the changelog in {out}")
        write_texts_atomically(texts)
    except OutputError as exc:
        print_error(f"conformance changelog: {exc}")
        return 2
    except OSError as exc:
        print_error(f"conformance changelog: could not write {out}: {error_text(exc)}")
        return 3
    for path in texts:
        print(for_terminal(f"conformance changelog: wrote {path}"))
    return 0
