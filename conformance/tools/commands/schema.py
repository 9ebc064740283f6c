"""``conformance schema``: print the case-file JSON Schema for the registered frameworks."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(sub: Any) -> None:
    schema = sub.add_parser("schema", help="print the case-file JSON Schema for the registered frameworks "
                                           "(the shipped one names the built-ins only)")
    schema.set_defaults(func=cmd_schema)


def cmd_schema(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry

    sys.stdout.write(json.dumps(registry.case_schema(), indent=2, ensure_ascii=False) + "\n")
    return 0
