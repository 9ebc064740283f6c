"""``conformance lint``: check case files without running them."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from conformance.tools.commands.common import case_roots


def add_parser(sub: Any) -> None:
    lint = sub.add_parser("lint", help="check case files without running them (exit 1 on any problem)")
    lint.add_argument("paths", nargs="*", help="case files or folders (default: cases/)")
    lint.add_argument("--rules", action="store_true", help="list the rules and their codes")
    lint.set_defaults(func=cmd_lint)


def cmd_lint(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.load.folders import scan
    from conformance.rules import RULES
    from conformance.tools.lint import lint_paths

    if args.rules:
        for rule in RULES.values():
            print(f"{rule.code}  {rule.name:<20} {rule.summary}")
        return 0
    paths = args.paths or case_roots()
    missing = [p for p in paths if not os.path.lexists(p)]  # a dangling link is there: refused below
    if missing:
        print(f"conformance lint: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    files, refused = scan(paths)
    if not files and not refused:
        print(f"conformance lint: no case files (*.yaml) under {', '.join(paths)}", file=sys.stderr)
        return 2
    findings = lint_paths(paths, registry.vocabulary())
    for finding in findings:
        print(finding.render())
    print(f"conformance lint: {len(files)} file(s), {len(findings)} problem(s)", file=sys.stderr)
    return 1 if findings else 0
