"""The ``conformance`` command: a thin face over pytest and the library functions.

    conformance run [PYTEST ARGS...]   run the corpus, write reports/results.json
    conformance list                   list the cases (id, file:line, claims)
    conformance ops                    print the operation vocabulary (Markdown)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

DEFAULT_RESULTS = Path("reports") / "results.json"


def _case_roots() -> list[str]:
    """The checkout's cases/ when run from one, else the cases shipped in the package."""
    local = Path("cases")
    if local.is_dir():
        return [str(local)]
    from conformance import plugin

    return [str(plugin.CASES_PACKAGE_DIR)]


def cmd_run(args: argparse.Namespace, extra: list[str]) -> int:
    import pytest

    results = Path(args.results)
    argv = [*(args.paths or _case_roots()), "--conformance-results", str(results), *extra]
    if args.frameworks:
        argv += ["--frameworks", args.frameworks]
    code = pytest.main(argv)
    if results.exists():
        print(f"conformance: results written to {results}")
    return int(code)


def cmd_list(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.loader import load_file

    vocab = registry.vocabulary()
    status = 0
    for root in args.paths or _case_roots():
        files = [Path(root)] if Path(root).is_file() else sorted(Path(root).rglob("*.y*ml"))
        for path in files:
            result = load_file(path, vocab)
            for case in result.cases:
                claim_text = f"  [{', '.join(case.claims)}]" if case.claims else ""
                print(f"{case.id}  {case.location}{claim_text}")
            for _, error in result.errors:
                print(error.render(), file=sys.stderr)
                status = 1
    return status


def cmd_ops(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.operations import operations_markdown

    sys.stdout.write(operations_markdown())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="conformance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the cases on every framework and write the results JSON")
    run.add_argument("paths", nargs="*", help="case files or folders (default: cases/)")
    run.add_argument("--frameworks", help="comma-separated subset, e.g. torch,numpy")
    run.add_argument("--results", default=str(DEFAULT_RESULTS), help="results JSON path")
    run.set_defaults(func=cmd_run)
    lst = sub.add_parser("list", help="list the cases")
    lst.add_argument("paths", nargs="*")
    lst.set_defaults(func=cmd_list)
    ops = sub.add_parser("ops", help="print the operation vocabulary (docs/operations.md)")
    ops.set_defaults(func=cmd_ops)
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "run":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args.func(args, extra)


if __name__ == "__main__":
    sys.exit(main())
