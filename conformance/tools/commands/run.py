"""``conformance run``: the corpus, or the case files named, through pytest; then the results
and both reports."""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.escaping import for_terminal
from conformance.resultsmodel import ResultsDocument, document_from_json
from conformance.tools.commands.common import DEFAULT_PARTIAL, DEFAULT_RESULTS, case_roots, print_error

if TYPE_CHECKING:  # a command imports pytest and the plugin only when it runs
    from conformance.plugin.handover import RunResults

WORKERS_ENV = "CONFORMANCE_WORKERS"  # conformance run's -n when none is given


def add_parser(sub: Any) -> None:
    run = sub.add_parser("run", help="run the cases on every framework and write the results JSON",
                         usage="conformance run [options] [PATHS] [PYTEST OPTIONS]", allow_abbrev=False,
                         description="Run the corpus (cases/, or the packaged one) or the case files and folders "
                                     "named, and write the results JSON and both reports. A full run of the "
                                     f"corpus writes {DEFAULT_RESULTS.parent}/; any other run (a path, --frameworks, "
                                     f"-k, -m, --lf, -x stopping early, ...) writes {DEFAULT_PARTIAL}/ instead, "
                                     "unless --results or --reports say where. Any other argument is pytest's: "
                                     "case paths, -k EXPR, -m EXPR, -x, --lf, -p NAME, -o INI=VALUE, ...")
    run.add_argument("--frameworks", help="comma-separated subset, e.g. torch,numpy")
    run.add_argument("--modes", help="eager, compiled, or eager,compiled (the default): the frameworks as they "
                                     "run eagerly, their compiled modes (torch_compile, jax_jit, ...), or both")
    run.add_argument("--results", default=None,
                     help=f"results JSON path, for any run (default: {DEFAULT_RESULTS}, or "
                          f"{DEFAULT_PARTIAL / DEFAULT_RESULTS.name} for a partial run)")
    run.add_argument("--reports", default=None,
                     help=f"folder for behaviour.md and behaviour.html, for any run (default: "
                          f"{DEFAULT_RESULTS.parent}, or {DEFAULT_PARTIAL} for a partial run)")
    run.add_argument("-n", "--numprocesses", metavar="N",
                     help="run in N worker processes (pytest-xdist), e.g. -n 2; default: every core (-n auto) "
                          "where pytest-xdist is installed; -n 0: serially, in one process")
    run.add_argument("--fresh", action="store_true",
                     help="compute every item's outcome (and store it for the next run); default: an item whose case, "
                          "code and frameworks have not changed since an earlier run takes that run's stored outcome")
    run.add_argument("--plain", action="store_true",
                     help="pytest's own output instead of the one-line progress display")
    run.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace, extra: list[str]) -> int:
    import pytest

    from conformance.plugin.handover import RunResults
    from conformance.plugin.progress import ProgressDisplay
    from conformance.report.outputs import Interrupts, discard_pending, linked_component

    # A full run of the corpus writes reports/; any other run (a path subset, --frameworks,
    # -k, -m, --lf, -x stopping early, ...) writes reports/partial/, unless --results or
    # --reports name where to write (README, "Partial runs").
    places = _RunPlaces(args)
    corpus = case_roots()
    # a folder written by default, not named on the command line, is never a link: a committed
    # one would carry the outputs elsewhere (docs/security.md, "Outputs are written whole")
    defaults = ([places.results.parent, places.partial_results.parent] if not args.results else []) + \
        ([places.reports, places.partial_reports] if not args.reports else [])
    for folder in dict.fromkeys(defaults):
        link = linked_component(folder)
        if link is not None:
            print_error(f"conformance: cannot write to {folder}: {link} is a symbolic link, and only a folder named on "
                        "the command line is written through one; remove the link, or name the folders with --results "
                        "and --reports")
            return 2
    own = RunResults()
    status = 0

    def stopped(interrupts: Interrupts) -> str:
        if own.committed:
            return for_terminal(f"conformance: stopped by {interrupts.name} after writing "
                                f"{', '.join(map(str, own.written))}", multiline=False)
        kept = own.journal_text()
        return for_terminal(f"conformance: stopped by {interrupts.name}; no results file or report was replaced"
                            + (f"; {kept}" if kept else ""), multiline=False)

    # SIGINT and SIGTERM alike end the command with one line and status 130, whenever they
    # come: the results file and the reports move into place together, with both held back
    # (outputs.commit), so the outputs are all the previous ones or all the new ones
    with Interrupts(stopped) as interrupts:
        with contextlib.ExitStack() as held:
            try:
                # the locks make the partial folder; a run that wrote nothing there leaves none
                held.callback(_remove_empty, [p for p in dict.fromkeys([places.partial_results.parent,
                                                                        places.partial_reports])
                                              if not os.path.lexists(p)])
                problem = _claim_outputs(places, held)
                # what was written beside its place and never moved there goes before the locks do
                held.callback(discard_pending)
                held.callback(own.discard)
                if problem:
                    print_error(f"conformance: {problem}")
                    status = 2
                else:
                    plugins: list[object] = [own]
                    argv = _pytest_argv(args, places, corpus, extra)
                    if sys.stdout.isatty() and not args.plain:
                        plugins.append(ProgressDisplay(sys.stdout))
                        argv += ["-p", "no:terminal"]
                    code = pytest.main([*argv, *extra], plugins=plugins)
                    if interrupts.received is not None:
                        raise KeyboardInterrupt  # pytest ended the run early; said below
                    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
                        named = ", ".join(own.args) if own.args else ", ".join(corpus)
                        print_error(f"conformance: no case collected from {named}: give case files or folders that "
                                    "hold them (*.yaml with a top-level 'cases:' list)")
                        status = int(code)
                    elif own.write_error:  # the plugin said why, and where the records are
                        status = int(code)
                    elif code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                        print_error(f"conformance: the run did not complete (pytest exit status {int(code)}); "
                                    f"the reports in {places.reports} were not updated")
                        status = int(code)
                    else:
                        status = _render_own(own, places, int(code))
            except KeyboardInterrupt:
                interrupts.hold()
                own.discard()
                discard_pending()
                status = 130
            finally:
                interrupts.hold()  # from here a signal is only noted: what is left is letting go of the locks
        if interrupts.received is not None:
            status = 130
            print(stopped(interrupts), file=sys.stderr)
    return status



class _RunPlaces:
    """Where ``conformance run`` writes: the results and reports of a full run, and of a
    partial one (the same places when --results / --reports name them)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.results = Path(args.results) if args.results else DEFAULT_RESULTS
        self.reports = Path(args.reports) if args.reports else DEFAULT_RESULTS.parent
        self.partial_results = self.results if args.results else DEFAULT_PARTIAL / DEFAULT_RESULTS.name
        self.partial_reports = self.reports if args.reports else DEFAULT_PARTIAL



def _claim_outputs(places: _RunPlaces, held: contextlib.ExitStack) -> str | None:
    """Before anything runs: every location can be written, and no other run is writing to
    it; each stays locked (in ``held``) until the reports are written. The plugin takes the
    results locks again in this process (counted, not waited for). Why not, or None."""
    from conformance.report.outputs import (
        OutputError,
        check_file,
        check_folder,
        holding,
        lock_path,
        reports_lock_path,
    )

    results = list(dict.fromkeys([places.results, places.partial_results]))
    folders = list(dict.fromkeys([places.reports, places.partial_reports]))
    try:
        for path in results:
            check_file(path, f"the results file {path}")
        for folder in folders:
            check_folder(folder, f"the reports in {folder}")
        for path in results:
            held.enter_context(holding(lock_path(path), f"the results file {path}", "conformance run"))
        for folder in folders:
            held.enter_context(holding(reports_lock_path(folder), f"the reports in {folder}", "conformance run"))
    except OutputError as exc:
        return str(exc)
    return None



def _pytest_argv(args: argparse.Namespace, places: _RunPlaces, corpus: list[str], extra: list[str]) -> list[str]:
    """pytest's own arguments pass through untouched, in their order (paths, -k EXPR, -p
    NAME, -o INI=VALUE, ...): the corpus is pytest's testpaths, which it collects when no
    path is named; the corpus folders and every folder named are case folders
    (--case-folders), whatever the ini file of the checkout says."""
    argv = ["-o", "conformance_paths=" + " ".join(shlex.quote(p) for p in corpus),
            "-o", "testpaths=" + " ".join(shlex.quote(glob.escape(p)) for p in corpus),
            "--case-folders", "--conformance-results", str(places.results)]
    if places.partial_results != places.results:
        argv += ["--conformance-partial-results", str(places.partial_results)]
    if not any(a == "--rootdir" or a.startswith("--rootdir=") for a in extra):
        argv += ["--rootdir", os.getcwd()]  # testpaths apply only from the rootdir
    argv += _configuration_argv(corpus, extra)
    if args.frameworks:
        argv += ["--frameworks", args.frameworks]
    if args.modes:
        argv += ["--modes", args.modes]
    # items whose inputs did not change keep their stored outcomes (run.store); --fresh
    # computes every item, and stores what it gives for the next run
    argv += ["--conformance-refresh" if args.fresh else "--conformance-reuse"]
    workers = args.numprocesses if args.numprocesses is not None else default_workers()
    if workers is not None:
        argv += ["-n", workers]
    return argv



def default_workers() -> str | None:
    """``conformance run``'s workers when -n is not given: $CONFORMANCE_WORKERS if set, else
    every core (pytest-xdist's ``auto``) where pytest-xdist is installed and there is more
    than one core; None (in pytest's own process) otherwise. ``-n 0`` runs serially."""
    import importlib.util

    if importlib.util.find_spec("xdist") is None:
        return None
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured:
        return configured
    return "auto" if (os.cpu_count() or 1) > 1 else None



def _configuration_argv(corpus: list[str], extra: list[str]) -> list[str]:
    """``-c FILE``: pytest's configuration is the one found from the working folder upward
    (or the one given with -c), never one pytest would find beside the paths named, which
    a pull request that adds case files could plant (conformance.plugin.configfile). A
    configuration file in a case folder ends the command (status 2) before pytest reads it:
    pytest acts on its ``-p`` and ``pythonpath`` before any plugin could refuse it."""
    from conformance.plugin import configfile

    explicit = None
    for i, arg in enumerate(extra):
        if arg in ("-c", "--config-file", "--inifile") and i + 1 < len(extra):
            explicit = extra[i + 1]
        elif arg.startswith(("--config-file=", "--inifile=")):
            explicit = arg.split("=", 1)[1]
        elif arg.startswith("-c") and len(arg) > 2:
            explicit = arg[2:]
    cwd = Path(os.getcwd())
    chosen, problem = configfile.project_configuration(cwd, explicit, [cwd / p for p in corpus])
    if problem is not None:
        print_error(f"conformance: {problem}")
        raise SystemExit(2)
    return [] if explicit is not None else ["-c", chosen]



def _render_own(own: RunResults, places: _RunPlaces, code: int) -> int:
    """The reports of this run's own results, as its plugin wrote them (never whatever the
    file holds by now), and the summary. The results file (written beside its place by the
    plugin) and both reports move into place as one step, and the run's journal goes."""
    import pytest

    from conformance.report.outputs import commit, error_text
    from conformance.report.pages import render_all
    from conformance.report.results import stage_texts

    if own.text is None or own.staged is None:
        print_error(f"conformance: no results written to {places.results}")
        return 1
    out_dir = places.partial_reports if own.partial else places.reports
    data = document_from_json(json.loads(own.text))
    try:
        reports = stage_texts(render_all(data, out_dir))
        written = reports.paths
        own.written = [p for p in (own.path, *written) if p is not None]
        commit(own.staged, reports, remove=own.journal_files())
    except OSError as exc:
        print_error(f"conformance: could not write {own.path} and the reports in {out_dir}: {error_text(exc)}; nothing "
                    "was replaced: the previous files are left as they were")
        kept = own.journal_text()
        if kept:
            print_error(f"conformance: {kept}")
        return int(pytest.ExitCode.INTERNAL_ERROR)  # not to be taken for failing cases
    print(for_terminal(_summary(data)))
    if own.partial:
        print(for_terminal(f"conformance: not a full run of the corpus ({'; '.join(own.partial)})"))
    print(for_terminal(f"conformance: wrote {own.path}, " + ", ".join(str(p) for p in written)))
    if own.partial and out_dir != places.reports:
        print(for_terminal(f"conformance: the reports in {places.reports} were left as they were: only a full run "
                           "of the corpus (no path, -k, -m, --frameworks, --lf, ... ) updates them; "
                           "--results and --reports write elsewhere"))
    return code



def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()  # only when empty
        except OSError:
            pass



def _summary(data: ResultsDocument) -> str:
    from conformance.report.analysis import build, outcome_counts
    from conformance.report.results import OUTCOMES

    report = build(data)
    lines = []
    rows = outcome_counts(report)
    # one column of counts for the frameworks that ran, whatever their names' length
    width = max([8, *(len(fw) for fw, numbers in rows if any(numbers))])
    for fw, numbers in rows:
        counts = ", ".join(f"{n} {o}" for o, n in zip(OUTCOMES, numbers) if n)
        lines.append(f"  {fw:<{width}} {counts or 'nothing ran'}")
    lines.append(f"  agreement {report.overall.text()}; {len(report.divergences)} divergent cases")
    return "\n".join(lines)
