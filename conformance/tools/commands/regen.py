"""``conformance regen``: write every generated file of the checkout again, or check them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.tools.commands.common import print_error


def add_parser(sub: Any) -> None:
    regen = sub.add_parser("regen", help="write every generated file of the checkout again (docs/operations.md, "
                                         "docs/coverage.md, the case schema); --check: exit 1 if one is stale")
    regen.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 naming each stale file")
    regen.set_defaults(func=cmd_regen)


def cmd_regen(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.tools.regen import GENERATED, RegenError, stale

    root = Path(".")
    missing = [item.path for item in GENERATED if not (root / item.path).parent.is_dir()]
    if missing or not (root / "cases").is_dir():
        print_error("run it at the root of a checkout (the folder with cases/, docs/ and conformance/data/)")
        return 2
    try:
        found = stale(root)
    except RegenError as exc:
        print_error(str(exc))
        return 2
    for item, text in found:
        if args.check:
            print(f"conformance regen: {item.path} is not what its sources make ({item.made_by}): run "
                  "'conformance regen' and commit it", file=sys.stderr)
        else:
            (root / item.path).write_text(text, encoding="utf-8")
            print(f"conformance regen: wrote {item.path}", file=sys.stderr)
    if not found:
        print(f"conformance regen: {len(GENERATED)} generated files current", file=sys.stderr)
    return 1 if found and args.check else 0
