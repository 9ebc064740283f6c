"""``conformance discover``: generate programs, run them, write what the oracles find as minimal cases."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import framework_list, print_error

DISCOVER_TIMEOUT_S = 10.0  # conformance discover's --case-timeout
MAX_JOBS = 64  # --jobs: each run is a process with a child per framework


def add_parser(sub: Any) -> None:
    dsc = sub.add_parser("discover", help="generate programs of views and writes, run them on the frameworks and "
                                          "write what the oracles find as minimal cases (docs/discover.md)")
    dsc.add_argument("--seconds", type=float, help="time budget")
    dsc.add_argument("--programs", type=int, help="program budget")
    dsc.add_argument("--seed", type=int, default=0, help="the run's seed (default 0): the same seed, the same programs")
    dsc.add_argument("--frameworks", default="torch,numpy,paddle",
                     help="comma-separated frameworks or compiled modes (default: torch,numpy,paddle)")
    dsc.add_argument("--out", default="discovered", help="where findings.md, findings.json and findings.yaml go "
                                                         "(default: discovered)")
    # a generated program runs in milliseconds: a hang (Paddle's heap corruption hangs the
    # process in glibc's abort) should cost seconds, not the corpus's minute
    dsc.add_argument("--case-timeout", metavar="SECONDS", type=float, default=DISCOVER_TIMEOUT_S,
                     help=f"per program and framework (default {DISCOVER_TIMEOUT_S:g}; 0 = none)")
    dsc.add_argument("--jobs", "-j", type=_jobs, default=1, metavar="N",
                     help="runs at once, each on its share of the seed's programs, in a process of its own "
                          "(default 1; one per core: a compiled mode's programs cost a core each)")
    dsc.set_defaults(func=cmd_discover)


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if not 1 <= jobs <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of runs from 1 to {MAX_JOBS}; give the "
                                         "number of cores to use, e.g. --jobs 2")
    return jobs


def cmd_discover(args: argparse.Namespace, extra: list[str]) -> int:
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        print("conformance discover: it needs Hypothesis, which generates and shrinks the programs: "
              "pip install 'conformance[discover]'", file=sys.stderr)
        return 2
    from conformance.discover.run import GeneratorError, discover_in_parallel, write
    from conformance.report.outputs import OutputError, check_folder, error_text, linked_component

    if args.seconds is None and args.programs is None:
        print("conformance discover: give a budget: --seconds N or --programs N", file=sys.stderr)
        return 2
    names = framework_list(args.frameworks)
    out = Path(args.out)
    what = f"the findings in {out}"
    # before the budget is spent: a folder the findings cannot go to; the default folder (as
    # conformance run's) is never a link, which a checkout could have committed there
    link = linked_component(out) if args.out == "discovered" else None
    try:
        if link is not None:
            raise OutputError(f"cannot write {what}: {link} is a symbolic link, and only a folder named on the "
                              "command line is written through one; remove the link, or name the folder it points "
                              "to with --out")
        check_folder(out, what)
    except OutputError as exc:
        print_error(f"conformance discover: {exc}")
        return 2
    try:
        result = discover_in_parallel(names, args.jobs, seconds=args.seconds, max_programs=args.programs,
                                      seed=args.seed, case_timeout=args.case_timeout)
    except GeneratorError as exc:
        print_error(f"conformance discover: {exc}")
        return 1
    try:
        paths = write(result, out)
    except OSError as exc:
        print_error(f"conformance discover: could not write {what}: {error_text(exc)}; the previous findings are left "
                    "as they were")
        return 3
    rate = result.programs / result.seconds if result.seconds else 0.0
    confirmed = [found for found in result.found if not found.flaky]
    known = sum(result.triaged.values())
    print(for_terminal(f"conformance discover: {result.programs} programs in {result.seconds:.0f} s "
                       f"({rate:.1f}/s), {len(confirmed)} finding(s)"
                       + (f", {len(result.found) - len(confirmed)} not reproduced" if len(confirmed) < len(result.found)
                          else "")
                       + f", {known} program(s) showing one of the known bugs"))
    for found in result.found:
        f = found.finding
        label = "(not reproduced) " if found.flaky else "" if found.known is None else f"(known: {found.known}) "
        print(for_terminal(f"  {label}{f.oracle} {f.framework}: "
                           f"{f.program.describe()} (x of shape {list(f.program.shape)}): {f.summary}"))
    for path in paths:
        print(for_terminal(f"conformance discover: wrote {path}"))
    return 0
