"""``conformance contracts``: torch's declared alias contracts (conformance/data/contracts/torch.yaml)
against the corpus: per kind, declared, reached, and those not reached."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import case_roots, print_error


def add_parser(sub: Any) -> None:
    con = sub.add_parser("contracts", help="torch's declared alias contracts (views, in-place, out=) and how many "
                                           "the corpus reaches (docs/contracts.md)")
    con.add_argument("paths", nargs="*", help="case files or folders (default: the corpus)")
    con.set_defaults(func=cmd_contracts)


def cmd_contracts(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.tools import contracts, coverage

    try:
        declared = contracts.read()
    except contracts.ContractsError as exc:
        print_error(str(exc))
        return 2
    cases, problems = coverage.corpus_cases(args.paths or case_roots())
    if problems:  # what a corpus that does not load reaches is not measured
        for problem in problems:
            print(for_terminal(problem), file=sys.stderr)
        print("conformance contracts: fix the case files above first (conformance lint)", file=sys.stderr)
        return 2
    print(f"torch {declared.version}: {declared.source}")
    for line in contracts.summary(contracts.measure(declared, cases, registry.get_adapter("torch"))):
        print(for_terminal(line))
    return 0
