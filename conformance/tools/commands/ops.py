"""``conformance ops``: print the operation vocabulary."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    ops = sub.add_parser("ops", help="print the operation vocabulary (docs/operations.md)",
                         description="Print, as the Markdown table of docs/operations.md, every operation a step "
                                     "may call (method, function, attribute, block, operator) and, per framework and "
                                     "compiled mode, whether its adapter's table has it ('yes'), says why not "
                                     "('n/a: ...', the counterpart if any) or does not know it ('-'). Read from the "
                                     "tables without importing any framework; `conformance regen` writes the file.")
    ops.set_defaults(func=cmd_ops)


def cmd_ops(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.tools.operations import operations_markdown

    sys.stdout.write(operations_markdown())
    return 0
