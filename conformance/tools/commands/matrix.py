"""``conformance matrix``: run the corpus on each release of a framework, each in an environment of its own."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from conformance.escaping import for_terminal
from conformance.tools.commands.common import print_error


def add_parser(sub: Any) -> None:
    mat = sub.add_parser("matrix", help="run the corpus on each release of a framework, each in an environment "
                                        "of its own, one results file per release",
                         usage="conformance matrix PACKAGE==V1,V2,... [...] [options] [PYTEST OPTIONS]")
    mat.add_argument("releases", nargs="+", help="e.g. numpy==1.26.4,2.0.2,2.4.6 paddlepaddle==3.0.0,3.3.1 "
                                                 "(a registered framework's package, or its name)")
    mat.add_argument("--out", default="releases", help="results folder: OUT/FRAMEWORK/VERSION.json (default: "
                                                       "releases)")
    mat.add_argument("--envs", default=os.path.join(".conformance", "envs"),
                     help="where the environments are made and kept (default: .conformance/envs)")
    mat.add_argument("--installer", choices=("auto", "uv", "pip"), default="auto",
                     help="uv when installed (auto, the default), or venv + pip")
    mat.add_argument("--modes", default="eager", help="eager (default), compiled, or eager,compiled")
    mat.add_argument("-j", "--jobs", type=int, default=1, help="releases run at once (default 1)")
    mat.add_argument("-n", "--numprocesses", metavar="N", help="pytest-xdist workers within each release's run")
    mat.set_defaults(func=cmd_matrix)


def cmd_matrix(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.outputs import error_text
    from conformance.tools import matrix

    out, envs = Path(args.out), Path(args.envs)
    try:
        releases = matrix.parse_releases(args.releases)
        matrix.check_places(releases, out, envs)  # every file and environment inside --out and --envs
        envs.mkdir(parents=True, exist_ok=True)
        runs = matrix.run_matrix(releases, out, envs, jobs=args.jobs, installer=args.installer, modes=args.modes,
                                 numprocesses=args.numprocesses, pytest_args=list(extra))
    except matrix.MatrixError as exc:
        for line in exc.problems:
            print_error(f"conformance matrix: {line}")
        return 2
    except OSError as exc:
        print_error(f"conformance matrix: cannot use {envs} or {out}: {error_text(exc)}")
        return 2
    failed = 0
    for done in matrix.sorted_releases(runs):
        r = done.release
        env = f"environment {done.env_seconds:.1f} s ({done.env_state})"
        if done.error:
            failed += 1
            state = f"did not run: {done.error.splitlines()[0][:300]}"
        else:
            state = ", ".join(f"{n} {o}" for o, n in sorted(done.counts.items()))
        print(for_terminal(f"conformance matrix: {r.framework} {r.version}: {env}, run {done.run_seconds:.1f} s; "
                           f"{state}; {done.results}", multiline=False))
    print(for_terminal(f"conformance matrix: {len(runs) - failed} of {len(runs)} releases ran; "
                       f"then: conformance changelog {out}/*/*.json --out reports"))
    return 1 if failed else 0
