"""``conformance new``: scaffold a case file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    new = sub.add_parser("new", help="scaffold a case file: conformance new views/unflatten")
    new.add_argument("name", help="FAMILY/NAME, e.g. views/unflatten -> cases/views/unflatten.yaml")
    new.add_argument("--root", default="cases", help="the cases folder (default: cases)")
    new.set_defaults(func=cmd_new)


def cmd_new(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.tools.scaffold import ScaffoldError, scaffold

    try:
        path = scaffold(args.name, Path(args.root))
    except ScaffoldError as exc:
        print(f"conformance new: {exc}", file=sys.stderr)
        return 2
    print(f"conformance new: wrote {path}\n"
          f"next: edit its steps, then `conformance observe {path} --write` and review the expectations, "
          f"then `conformance lint {path}` and `pytest {path}` (CONTRIBUTING.md)")
    return 0
