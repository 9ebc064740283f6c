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
    what = con.add_mutually_exclusive_group()
    what.add_argument("--write", action="store_true",
                      help="generate cases/contracts/torch_views.yaml, torch_inplace.yaml and torch_out.yaml from the "
                           "data, observe them on every framework and compiled mode and write them (run at the root "
                           "of a checkout)")
    what.add_argument("--check", action="store_true",
                      help="exit 1 if those files' inputs and steps are not what the data makes (imports no framework)")
    con.add_argument("--kind", choices=("view", "inplace", "out"), action="append",
                     help="with --write: only the cases of this kind (repeatable; default: all three)")
    con.set_defaults(func=cmd_contracts)


def cmd_contracts(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.tools import contracts, coverage

    try:
        declared = contracts.read()
    except contracts.ContractsError as exc:
        print_error(str(exc))
        return 2
    if args.kind and not args.write:
        print_error("conformance contracts: --kind goes with --write")
        return 2
    if args.write or args.check:
        return _generated(declared, args.write, tuple(args.kind or contract_cases_kinds()))
    cases, problems = coverage.corpus_cases(args.paths or case_roots())
    if problems:  # what a corpus that does not load reaches is not measured
        for problem in problems:
            print(for_terminal(problem), file=sys.stderr)
        print("conformance contracts: fix the case files above first (conformance lint)", file=sys.stderr)
        return 2
    print(f"torch {declared.version}: {declared.source}")
    for line in contracts.summary(contracts.measure(declared, cases, registry.get_adapter("torch"))):
        print(for_terminal(line))
    from conformance.tools import paddle_contracts

    try:
        paddle = paddle_contracts.read()
    except paddle_contracts.PaddleContractsError as exc:
        print_error(str(exc))
        return 2
    files = ", ".join(f"{f['path']}@{f['commit'][:10]}" for f in paddle["source"]["files"])
    print(f"paddle {paddle['version']}: the inplace: and view: maps of {files}")
    for line in paddle_contracts.reach(paddle, cases):
        print(for_terminal(line))
    from conformance.tools import paddle_strided

    try:
        strided = paddle_strided.read()
    except paddle_strided.PaddleStridedError as exc:
        print_error(str(exc))
        return 2
    print(f"paddle {strided['version']}: {strided['source']}")
    for line in paddle_strided.reach(strided, cases):
        print(for_terminal(line))
    return 0


def contract_cases_kinds() -> tuple[str, ...]:
    from conformance.tools import contract_cases

    return tuple(contract_cases.FILES)


def _not_what_the_frameworks_declare(declared: Any) -> list[str]:
    """Where torch is installed (CI), the data files must be what it declares and what its
    calls sample: they are data a pull request can change, their names become entries of the
    torch adapter's table and their calls steps of the generated cases."""
    import importlib.util

    from conformance.tools import contracts, out_calls

    if importlib.util.find_spec("torch") is None:
        return []
    problems = []
    made = contracts.dump(contracts.build(contracts.introspect()))
    if made != contracts.DATA.read_text(encoding="utf-8"):
        problems.append(f"{contracts.DATA} is not what the installed torch declares (python -m "
                        "conformance.tools.contracts --introspect writes it)")
    from conformance.tools import paddle_contracts

    try:
        problems += [f"{p} (python -m conformance.tools.paddle_contracts --write writes it)"
                     for p in paddle_contracts.stale(paddle_contracts.read())]
    except paddle_contracts.PaddleContractsError as exc:  # a malformed file is a problem, not a traceback
        problems.append(str(exc))
    from conformance.tools import paddle_strided

    try:
        problems += [f"{p} (python -m conformance.tools.paddle_strided --write writes it)"
                     for p in paddle_strided.stale(paddle_strided.read())]
    except paddle_strided.PaddleStridedError as exc:
        problems.append(str(exc))
    sampled = out_calls.dump(out_calls.sample(declared))
    try:
        committed = out_calls.DATA.read_text(encoding="utf-8")
    except OSError:
        committed = ""
    if sampled != committed:
        problems.append(f"{out_calls.DATA} is not what the installed torch samples (python -m "
                        "conformance.tools.out_calls --sample writes it)")
    return problems


def _generated(declared: Any, write: bool, kinds: tuple[str, ...]) -> int:
    """--write: generate, observe and write the two case files; --check: compare them."""
    from pathlib import Path

    from conformance.tools import contract_cases

    root = Path(".")
    if not (root / "cases").is_dir():
        print_error("conformance contracts: run it at the root of a checkout (the folder with cases/)")
        return 2
    if not write:
        problems = [p for kind in contract_cases.FILES for p in contract_cases.check(root, declared, kind)]
        problems += _not_what_the_frameworks_declare(declared)
        for problem in problems:
            print_error(f"conformance contracts: {problem}: run 'conformance contracts --write' and commit it")
        return 1 if problems else 0

    def say(text: str) -> None:
        print(for_terminal(f"conformance contracts: {text}"), file=sys.stderr)

    for kind in kinds:
        try:
            written, findings = contract_cases.write(root, declared, kind, say)
        except ValueError as exc:  # the argument tables make cases that do not load: nothing written
            print_error(f"conformance contracts: {exc}")
            return 1
        say(f"wrote {written} cases to {contract_cases.FILES[kind]}")
        for finding in findings:
            print(for_terminal(f"finding: {finding.case_id}: {finding.schema} declares {finding.declared}; "
                               f"torch: {finding.observed}"))
    return 0
