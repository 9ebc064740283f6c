"""``conformance ops``: print the operation vocabulary."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    ops = sub.add_parser("ops", help="print the operation vocabulary (docs/operations.md)")
    ops.set_defaults(func=cmd_ops)


def cmd_ops(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.tools.operations import operations_markdown

    sys.stdout.write(operations_markdown())
    return 0
