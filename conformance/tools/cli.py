"""The ``conformance`` command: a thin face over pytest and the library functions.

``conformance --help`` lists every command with what it does (argparse writes the list
from the commands themselves, so none is left out); ``conformance COMMAND --help`` gives a
command's options. ``conformance --version`` prints conformance's version and each
framework's found.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from conformance.escaping import for_terminal  # plain Python: the CLI still starts light

if TYPE_CHECKING:  # the CLI imports pytest and the plugin only when a command needs them
    from conformance.model import Case
    from conformance.plugin.handover import RunResults

DEFAULT_RESULTS = Path("reports") / "results.json"
DISCOVER_TIMEOUT_S = 10.0  # conformance discover's --case-timeout
# where a run that is not a full run of the corpus writes its results and reports (git-ignored)
DEFAULT_PARTIAL = Path("reports") / "partial"


def _case_roots() -> list[str]:
    """The checkout's cases/ when run from one, else the cases shipped in the package."""
    local = Path("cases")
    if local.is_dir():
        return [str(local)]
    from conformance.plugin.roots import CASES_PACKAGE_DIR

    return [str(CASES_PACKAGE_DIR)]


def cmd_run(args: argparse.Namespace, extra: list[str]) -> int:
    import pytest

    from conformance.plugin.handover import RunResults
    from conformance.plugin.progress import ProgressDisplay
    from conformance.report.outputs import Interrupts, discard_pending, linked_component

    # A full run of the corpus writes reports/; any other run (a path subset, --frameworks,
    # -k, -m, --lf, -x stopping early, ...) writes reports/partial/, unless --results or
    # --reports name where to write (README, "Partial runs").
    places = _RunPlaces(args)
    corpus = _case_roots()
    # a folder written by default, not named on the command line, is never a link: a committed
    # one would carry the outputs elsewhere (docs/security.md, "Outputs are written whole")
    defaults = ([places.results.parent, places.partial_results.parent] if not args.results else []) + \
        ([places.reports, places.partial_reports] if not args.reports else [])
    for folder in dict.fromkeys(defaults):
        link = linked_component(folder)
        if link is not None:
            _error(f"conformance: cannot write to {folder}: {link} is a symbolic link, and only a folder named on "
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
                    _error(f"conformance: {problem}")
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
                        _error(f"conformance: no case collected from {named}: give case files or folders that hold "
                               "them (*.yaml with a top-level 'cases:' list)")
                        status = int(code)
                    elif own.write_error:  # the plugin said why, and where the records are
                        status = int(code)
                    elif code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                        _error(f"conformance: the run did not complete (pytest exit status {int(code)}); "
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


WORKERS_ENV = "CONFORMANCE_WORKERS"  # conformance run's -n when none is given


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
        _error(f"conformance: {problem}")
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
        _error(f"conformance: no results written to {places.results}")
        return 1
    out_dir = places.partial_reports if own.partial else places.reports
    data = json.loads(own.text)
    try:
        reports = stage_texts(render_all(data, out_dir))
        written = reports.paths
        own.written = [p for p in (own.path, *written) if p is not None]
        commit(own.staged, reports, remove=own.journal_files())
    except OSError as exc:
        _error(f"conformance: could not write {own.path} and the reports in {out_dir}: {error_text(exc)}; nothing "
               "was replaced: the previous files are left as they were")
        kept = own.journal_text()
        if kept:
            _error(f"conformance: {kept}")
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


def _error(message: str) -> None:

    print(for_terminal(message), file=sys.stderr)


def _write_reports(data: dict, out_dir: Path) -> list[Path]:
    from conformance.report.pages import write_reports

    return write_reports(data, out_dir)


def _summary(data: dict) -> str:
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


def cmd_report(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.outputs import OutputError, check_folder, error_text, holding, reports_lock_path
    from conformance.report.pages import stale_reports
    from conformance.report.results import ResultsFileError, load_results

    try:
        data = load_results(Path(args.results))
    except ResultsFileError as exc:
        for line in exc.problems:  # one per problem, each naming the file and where in it
            _error(f"conformance report: {line}")
        return 2
    partial = (data.get("run") or {}).get("partial") or []
    if args.out is not None:
        out_dir = Path(args.out)
    else:  # the reports of a partial run never replace those of the corpus unless --out says so
        out_dir = DEFAULT_PARTIAL if partial else DEFAULT_RESULTS.parent
        if partial:
            print(for_terminal(f"conformance report: {args.results} is from a partial run "
                               f"({'; '.join(partial)}): its reports go to {out_dir} (--out names another folder)"))
    if args.check:
        problems = stale_reports(data, out_dir)
        for problem in problems:  # the diff quotes case text
            _error(problem)
        if problems:
            _error(f"conformance report: regenerate with `conformance report {args.results} --out {out_dir}` "
                   "and commit the result")
            return 1
        print(for_terminal(f"conformance report: {out_dir} is up to date"))
        return 0
    what = f"the reports in {out_dir}"
    try:
        check_folder(out_dir, what)
        with holding(reports_lock_path(out_dir), what, "conformance report"):
            written = _write_reports(data, out_dir)
    except OutputError as exc:
        _error(f"conformance report: {exc}")
        return 2
    except OSError as exc:
        _error(f"conformance report: could not write {what}: {error_text(exc)}; the previous reports are left "
               "as they were")
        return 3
    for path in written:
        print(for_terminal(f"conformance report: wrote {path}"))
    return 0


def cmd_diff(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.diff import compare, render_markdown, render_text
    from conformance.report.results import ResultsFileError, load_results

    loaded, problems = [], []
    for name in (args.old, args.new):  # the problems of both files at once
        try:
            loaded.append(load_results(Path(name)))
        except ResultsFileError as exc:
            problems += exc.problems
    if problems:
        for line in problems:
            _error(f"conformance diff: {line}")
        return 2
    old, new = loaded
    diff = compare(old, new)
    # Markdown is escaped as it is made; either way it is printed, maybe into a CI log
    sys.stdout.write(for_terminal(render_markdown(diff) if args.format == "md" else render_text(diff)))
    return 0 if diff.empty else 1


def cmd_merge(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.merge import MergeError, merge
    from conformance.report.outputs import OutputError, check_file, error_text
    from conformance.report.results import ResultsFileError, load_results, write_atomically

    documents: list[tuple[str, dict]] = []
    problems: list[str] = []
    for name in args.results:
        try:
            documents.append((name, load_results(Path(name))))
        except ResultsFileError as exc:
            problems += exc.problems
    try:
        if problems:
            raise MergeError(problems)
        merged = merge(documents)
        check_file(Path(args.out), f"the merged results file {args.out}")
    except (MergeError, OutputError) as exc:
        for line in str(exc).splitlines():
            _error(f"conformance merge: {line}")
        return 2
    try:
        write_atomically(Path(args.out), merged)
    except OSError as exc:
        _error(f"conformance merge: could not write {args.out}: {error_text(exc)}")
        return 3
    partial = merged["run"].get("partial")
    state = f"partial: {'; '.join(partial)}" if partial else "a full run of the corpus"
    print(for_terminal(f"conformance merge: wrote {args.out} ({merged['run']['items']} items from "
                       f"{len(documents)} files; {state})"))
    return 0


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
            _error(f"conformance matrix: {line}")
        return 2
    except OSError as exc:
        _error(f"conformance matrix: cannot use {envs} or {out}: {error_text(exc)}")
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


def cmd_changelog(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.changelog import NAMES, ChangelogError, build, render_html, render_markdown
    from conformance.report.outputs import OutputError, check_folder, error_text
    from conformance.report.results import ResultsFileError, load_results, write_texts_atomically

    documents, problems = [], []
    for name in args.results:  # the problems of every file at once
        try:
            documents.append((name, load_results(Path(name), remake="conformance matrix")))
        except ResultsFileError as exc:
            problems += exc.problems
    log = None
    if not problems:
        try:
            log = build(documents)
        except ChangelogError as exc:
            problems.append(str(exc))
    if log is None:
        for line in problems:
            _error(f"conformance changelog: {line}")
        return 2
    out = Path(args.out)
    texts = {out / NAMES[0]: render_markdown(log), out / NAMES[1]: render_html(log)}
    if args.check:
        def same(path: Path, text: str) -> bool:  # a committed file that is not UTF-8 is stale, not a crash
            try:
                return path.is_file() and path.read_text(encoding="utf-8") == text
            except (OSError, UnicodeDecodeError):
                return False

        stale = [str(p) for p, text in texts.items() if not same(p, text)]
        for name in stale:
            _error(f"conformance changelog: {name} is not what these results render; regenerate with "
                   f"`conformance changelog {' '.join(args.results)} --out {out}` and commit it")
        if not stale:
            print(for_terminal(f"conformance changelog: {out} is up to date"))
        return 1 if stale else 0
    try:
        check_folder(out, f"the changelog in {out}")
        write_texts_atomically(texts)
    except OutputError as exc:
        _error(f"conformance changelog: {exc}")
        return 2
    except OSError as exc:
        _error(f"conformance changelog: could not write {out}: {error_text(exc)}")
        return 3
    for path in texts:
        print(for_terminal(f"conformance changelog: wrote {path}"))
    return 0


def cmd_discover(args: argparse.Namespace, extra: list[str]) -> int:
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        print("conformance discover: it needs Hypothesis, which generates and shrinks the programs: "
              "pip install 'conformance[discover]'", file=sys.stderr)
        return 2
    from conformance.discover.run import GeneratorError, discover, write
    from conformance.report.outputs import OutputError, check_folder, error_text, linked_component
    from conformance.run.sandbox import Sandbox

    if args.seconds is None and args.programs is None:
        print("conformance discover: give a budget: --seconds N or --programs N", file=sys.stderr)
        return 2
    names = _framework_list(args.frameworks)
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
        _error(f"conformance discover: {exc}")
        return 2
    sandbox = Sandbox(args.case_timeout)
    try:
        result = discover(names, seconds=args.seconds, max_programs=args.programs, seed=args.seed, sandbox=sandbox)
    except GeneratorError as exc:
        _error(f"conformance discover: {exc}")
        return 1
    finally:
        sandbox.close()
    try:
        paths = write(result, out)
    except OSError as exc:
        _error(f"conformance discover: could not write {what}: {error_text(exc)}; the previous findings are left "
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


def cmd_site(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.changelog import ChangelogError
    from conformance.report.outputs import error_text
    from conformance.site.build import SiteError, build_site
    from conformance.site.output import SiteOutputError, check_out_dir, write_site

    out = Path(args.out)
    try:
        check_out_dir(out)
        files, summary = build_site([Path(p) for p in args.results], [Path(p) for p in args.releases or []],
                                    source_url=args.source_url, allow_partial=args.partial)
        write_site(files, out)
    except (SiteError, SiteOutputError, ChangelogError) as exc:
        for line in str(exc).splitlines():
            _error(f"conformance site: {line}")
        return 2
    except OSError as exc:
        _error(f"conformance site: could not write {out}: {error_text(exc)}; the previous site is left as it was")
        return 3
    print(for_terminal(f"conformance site: wrote {out} ({summary}); open {out / 'index.html'}"))
    if args.screenshots:
        from conformance.site.screenshots import ScreenshotError, screenshots

        try:
            shots = screenshots(out, Path(args.screenshots), op=args.screenshot_op)
        except ScreenshotError as exc:
            _error(f"conformance site: {exc}")
            return 2
        for shot in shots:
            print(for_terminal(f"conformance site: wrote {shot}"))
    return 0


def cmd_list(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.load.folders import scan
    from conformance.load.reader import load_file
    from conformance.tools.lint import refused_finding

    vocab = registry.vocabulary()
    status = 0
    # folders are walked without following links; a refused entry is never opened
    files, refused = scan(args.paths or _case_roots())
    for path, why in refused:
        print(refused_finding(path, why).render(), file=sys.stderr)
        status = 1
    for path in files:
        result = load_file(path, vocab)
        for case in result.cases:
            claim_text = f"  [{', '.join(case.claims)}]" if case.claims else ""
            print(for_terminal(f"{case.id}  {case.location}{claim_text}", multiline=False))
        for _, error in result.errors:
            print(for_terminal(error.render()), file=sys.stderr)
            status = 1
    return status


def cmd_lint(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.load.folders import scan
    from conformance.rules import RULES
    from conformance.tools.lint import lint_paths

    if args.rules:
        for rule in RULES.values():
            print(f"{rule.code}  {rule.name:<20} {rule.summary}")
        return 0
    paths = args.paths or _case_roots()
    missing = [p for p in paths if not os.path.lexists(p)]  # a dangling link is there: refused below
    if missing:
        print(f"conformance lint: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    files, refused = scan(paths)
    if not files and not refused:
        print(f"conformance lint: no case files (*.yaml) under {', '.join(paths)}", file=sys.stderr)
        return 2
    findings = lint_paths(paths, registry.vocabulary())
    for finding in findings:
        print(finding.render())
    print(f"conformance lint: {len(files)} file(s), {len(findings)} problem(s)", file=sys.stderr)
    return 1 if findings else 0


def cmd_observe(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry
    from conformance.load.reader import load_file
    from conformance.run.sandbox import Sandbox
    from conformance.tools.lint import case_files
    from conformance.tools.observe import observe, render
    from conformance.yamlvalues.fields import did_you_mean

    if args.force and not args.write:
        print("conformance observe: --force only goes with --write", file=sys.stderr)
        return 2
    vocab = registry.vocabulary()
    target = Path(args.target)
    files = [target] if target.is_file() else case_files(_case_roots())
    cases, problems, holders = [], [], set()
    for path in files:
        result = load_file(path, vocab, draft=True)
        found = [c for c in result.cases if target.is_file() or c.id == args.target]
        bad = [e for case_id, e in result.errors if target.is_file() or case_id == args.target]
        cases += [(path, c) for c in found]
        problems += bad
        if found or bad:
            holders.add(path)
    for problem in problems:
        print(for_terminal(problem.render()), file=sys.stderr)
    if not cases:
        if not problems:
            known = [c.id for path in files for c in load_file(path, vocab, draft=True).cases]
            hint = did_you_mean(args.target, known) or "give a case id (conformance list) or a case file"
            print(f"conformance observe: no case {args.target!r}; {hint}", file=sys.stderr)
        return 2
    # the eager frameworks unless named: a compiled mode is observed when --frameworks names it
    names = _framework_list(args.frameworks) if args.frameworks else registry.eager_names()
    if args.write:
        if problems:
            print(f"conformance observe: {', '.join(map(str, sorted(holders)))} has problems (above): fix them "
                  "first; nothing written", file=sys.stderr)
            return 1
        return _observe_and_write(cases, names, args)
    # the steps run in the sandbox's child process with the item timeout, as in a pytest run
    sandbox = Sandbox(args.case_timeout)
    failed = False
    try:
        for i, (_, case) in enumerate(cases):
            observations = [observe(case, registry.get_adapter(fw), sandbox) for fw in names]
            failed = failed or any(o.status == "error" for o in observations)
            # framework messages and case text in the comments, never a CI command
            sys.stdout.write(("\n" if i else "") + for_terminal(render(case, observations)))
    finally:
        sandbox.close()
    return 1 if problems or failed else 0


def _observe_and_write(cases: list[tuple[Path, Case]], names: list[str], args: argparse.Namespace) -> int:
    """``observe --write``: observe each case of one file, then write what was observed into
    that file (conformance.tools.casewrite says what is kept and when nothing is written)."""
    from conformance import registry
    from conformance.run.sandbox import Sandbox
    from conformance.tools.casewrite import Update, WriteRefused, existing, rewrite, write_file
    from conformance.tools.observe import expect_lines, observe, split

    def say(text: str) -> None:
        print(for_terminal(f"conformance observe: {text}"), file=sys.stderr)

    path = cases[0][0]
    if any(p != path for p, _ in cases):  # one id in several files (lint's CF001)
        say(f"{cases[0][1].id} is a case of several files ({', '.join(sorted({str(p) for p, _ in cases}))}): "
            "name the file to write; nothing written")
        return 1
    updates: list[Update] = []
    left: list[str] = []  # cases that already expect something
    refused, notes = 0, []
    sandbox = Sandbox(args.case_timeout)
    try:
        for _, case in cases:
            already = existing(case)
            if already and not args.force:
                if len(cases) == 1:
                    say(f"{case.id} already expects {', '.join(already)}: nothing written (--force replaces its "
                        "expectations with what is observed; nothing is merged)")
                left.append(case.id)
                continue
            observations = [observe(case, registry.get_adapter(fw), sandbox) for fw in names]
            for o in observations:
                if o.status != "ran":
                    say(f"{case.id}: {o.framework}: {o.status.replace('_', ' ')}: {o.reason}")
            broken = [o.framework for o in observations if o.status == "error"]
            ran = {o.framework for o in observations if o.status == "ran"}
            if broken or not ran:
                why = f"{', '.join(broken)} could not be observed" if broken else "no framework ran it"
                say(f"{case.id}: {why}, so its expectation would be decided without it: nothing written for it")
                refused += 1
                continue
            unseen = [o.framework for o in observations if o.status == "skipped"]
            unseen += [fw for fw in registry.eager_names() if fw not in names]
            if unseen:
                notes.append(f"{case.id} was not observed on {', '.join(unseen)}: run pytest on it there before "
                             "committing")
            shared, overrides = split(case, observations)
            before = {fw: o.reason for fw, o in case.overrides.items()
                      if fw in ran and o.expect is not None and not o.reason.startswith("TODO")}
            updates.append(Update(case, expect_lines(case, shared, overrides, before), ran, sorted(overrides)))
    finally:
        sandbox.close()
    if left and len(cases) > 1:
        say(f"left {len(left)} case(s) of {path} that already expect something as they are (--force replaces "
            f"their expectations): {', '.join(left)}")
    if not updates:
        return 1
    try:
        text = rewrite(path.read_text(encoding="utf-8"), str(path), updates, registry.vocabulary())
        write_file(path, text)
    except WriteRefused as exc:
        say(str(exc))
        return 1
    for update in updates:
        todo = f"; overrides for {', '.join(update.overrides)}, each with a TODO reason to replace (lint refuses " \
            "it, CF012)" if update.overrides else ""
        say(f"wrote the observed expectations of {update.case.id} into {path}{todo}")
    for note in notes:
        say(note)
    say("review them (what the frameworks did, not necessarily what they should do), delete what does not "
        "matter to the case, then `conformance lint` and `pytest` it")
    return 1 if refused else 0


def _framework_list(option: str | None) -> list[str]:
    from conformance import registry

    known = registry.framework_names()
    names = [n.strip() for n in option.split(",") if n.strip()] if option else known
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"conformance: unknown framework(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return names


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


def cmd_ops(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.tools.operations import operations_markdown

    sys.stdout.write(operations_markdown())
    return 0


def cmd_coverage(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.report.results import ResultsFileError, load_results
    from conformance.source import CaseFormatError, split
    from conformance.tools import coverage

    try:
        lists = coverage.read_lists(Path(args.lists) if args.lists else coverage.LISTS_FOLDER)
    except CaseFormatError as exc:
        for error in split(exc):
            print(for_terminal(error.render()), file=sys.stderr)
        return 2
    cases, problems = coverage.corpus_cases(args.paths or _case_roots())
    if problems:  # the coverage of a corpus that does not load is not measured
        for problem in problems:
            print(for_terminal(problem), file=sys.stderr)
        print("conformance coverage: fix the case files above first (conformance lint)", file=sys.stderr)
        return 2
    not_run: frozenset[tuple[str, str]] = frozenset()
    if args.results:
        try:
            not_run = coverage.not_run_from_results(load_results(Path(args.results)))
        except ResultsFileError as exc:
            _error(str(exc))
            return 2
    coverages = coverage.measure_all(lists, cases, not_run)
    sys.stdout.write(coverage.render_markdown(coverages, coverage.framework_titles()))
    for line in coverage.summary_lines(coverages):
        print(line, file=sys.stderr)
    return 1 if args.check and not all(c.meets_target for c in coverages) else 0


def version_text() -> str:
    """``conformance 0.1.0`` and a line per registered framework with the version installed
    (read from package metadata: no framework is imported)."""
    import platform

    import pytest

    from conformance import __version__, registry

    lines = [f"conformance {__version__} (Python {platform.python_version()}, pytest {pytest.__version__})"]
    names = registry.framework_names()
    width = max(len(name) for name in names) if names else 0
    for name in names:
        version = registry.get_adapter(name).version()
        lines.append(f"  {name:<{width}}  {version or 'not installed'}")
    return "\n".join(lines) + "\n"


class _Version(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        sys.stdout.write(for_terminal(version_text()))
        parser.exit(0)


def cmd_frameworks(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    print("| framework | title | version | registered | autograd | mutable | devices | DLPack export | DLPack import |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fw in registry.frameworks():
        version = registry.get_adapter(fw.name).version() or "not installed"
        where = "built-in" if fw.builtin else f"entry point ({fw.spec})"
        if not fw.loads:
            where += ": cannot be loaded"
        print(for_terminal(f"| {fw.name} | {fw.title} | {version} | {where} | {yes(fw.autograd)} | {yes(fw.mutable)} | "
                           f"{', '.join(fw.devices) or '-'} | {yes(fw.dlpack_export)} | {yes(fw.dlpack_import)} |",
                           multiline=False))
    return 0


def cmd_regen(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance.tools.regen import GENERATED, RegenError, stale

    root = Path(".")
    missing = [item.path for item in GENERATED if not (root / item.path).parent.is_dir()]
    if missing or not (root / "cases").is_dir():
        _error("run it at the root of a checkout (the folder with cases/, docs/ and conformance/data/)")
        return 2
    try:
        found = stale(root)
    except RegenError as exc:
        _error(str(exc))
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


def cmd_schema(args: argparse.Namespace, extra: list[str]) -> int:
    from conformance import registry

    sys.stdout.write(json.dumps(registry.case_schema(), indent=2, ensure_ascii=False) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    from conformance.run.sandbox import DEFAULT_TIMEOUT_S  # the item timeout; the module imports no framework

    parser = argparse.ArgumentParser(prog="conformance", description="The behaviour of array and tensor frameworks: "
                                     "in-place, view and copy semantics, case by case. `conformance COMMAND --help` "
                                     "gives a command's options.")
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print the version of conformance and of each framework found, and exit")
    sub = parser.add_subparsers(dest="command", required=True)
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
    rep = sub.add_parser("report", help="render behaviour.md and behaviour.html from a results JSON")
    rep.add_argument("results", help="results JSON written by `conformance run` or pytest --conformance-results")
    rep.add_argument("--out", default=None,
                     help=f"output folder (default: {DEFAULT_RESULTS.parent}, or {DEFAULT_PARTIAL} for the results "
                          "of a partial run)")
    rep.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if the reports in --out differ from what the results give")
    rep.set_defaults(func=cmd_report)
    dif = sub.add_parser("diff", help="what changed between two results files (exit 1 if anything did)")
    dif.add_argument("old")
    dif.add_argument("new")
    dif.add_argument("--format", choices=("text", "md"), default="text")
    dif.set_defaults(func=cmd_diff)
    mrg = sub.add_parser("merge", help="join results files of shards, frameworks or machines into one (refuses "
                                       "files of different corpus revisions, or sharing an item)")
    mrg.add_argument("results", nargs="+", help="results JSON files (of one corpus revision, no item in two)")
    mrg.add_argument("--out", required=True, help="the merged results JSON (then: conformance report OUT)")
    mrg.set_defaults(func=cmd_merge)
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
    chl = sub.add_parser("changelog", help="the behaviour changelog (changelog.md, changelog.html) from the "
                                           "results of several releases")
    chl.add_argument("results", nargs="+", help="results files, one per release (conformance matrix's)")
    chl.add_argument("--out", default="reports", help="output folder (default: reports)")
    chl.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if the changelog in --out differs from what the results give")
    chl.set_defaults(func=cmd_changelog)
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
    dsc.set_defaults(func=cmd_discover)
    site = sub.add_parser("site", help="the behaviour reference as a static site: a page per operation, case, "
                                       "claim and framework (docs/site.md)")
    site.add_argument("results", nargs="+", help="results JSON of a full run (several: the shards or frameworks of "
                                                 "one, merged as conformance merge does)")
    site.add_argument("--out", default="site", help="the site's folder, replaced whole (default: site)")
    site.add_argument("--releases", nargs="+", metavar="RESULTS",
                      help="results files of conformance matrix (releases/*/*.json): the changelog pages")
    site.add_argument("--source-url", metavar="TEMPLATE",
                      help="where a case's file is shown, e.g. "
                           "https://github.com/ORG/REPO/blob/{commit}/{path}#L{line} (default: path and line as text)")
    site.add_argument("--partial", action="store_true", help="build from the results of a partial run (the pages "
                                                             "say which cases and frameworks are missing)")
    site.add_argument("--screenshots", metavar="DIR", help="then write PNGs of the home page and an operation page "
                                                           "at 390 and 1440 px wide (Playwright and Chromium)")
    site.add_argument("--screenshot-op", default="transpose", metavar="NAME",
                      help="the operation page of the screenshots (default: transpose)")
    site.set_defaults(func=cmd_site)
    lint = sub.add_parser("lint", help="check case files without running them (exit 1 on any problem)")
    lint.add_argument("paths", nargs="*", help="case files or folders (default: cases/)")
    lint.add_argument("--rules", action="store_true", help="list the rules and their codes")
    lint.set_defaults(func=cmd_lint)
    obs = sub.add_parser("observe", help="run a case's steps on each framework and print the observed "
                                         "behaviour as expect YAML")
    obs.add_argument("target", help="a case id (searched under cases/) or a case file (every case in it)")
    obs.add_argument("--frameworks", help="comma-separated subset, e.g. torch,numpy (default: every eager framework; "
                                          "name a compiled mode, e.g. torch_compile, to observe it)")
    obs.add_argument("--case-timeout", metavar="SECONDS", type=float, default=DEFAULT_TIMEOUT_S,
                     help=f"per framework: a case running longer is stopped (default {DEFAULT_TIMEOUT_S:g}; 0 = none)")
    obs.add_argument("--write", action="store_true",
                     help="write the observed expectations into the case file (comments, order and quoting kept) "
                          "instead of printing them; a case that already expects something is left alone")
    obs.add_argument("--force", action="store_true",
                     help="with --write: replace a case's existing expectations with what is observed")
    obs.set_defaults(func=cmd_observe)
    new = sub.add_parser("new", help="scaffold a case file: conformance new views/unflatten")
    new.add_argument("name", help="FAMILY/NAME, e.g. views/unflatten -> cases/views/unflatten.yaml")
    new.add_argument("--root", default="cases", help="the cases folder (default: cases)")
    new.set_defaults(func=cmd_new)
    lst = sub.add_parser("list", help="list the cases")
    lst.add_argument("paths", nargs="*")
    lst.set_defaults(func=cmd_list)
    cov = sub.add_parser("coverage", help="how much of each framework's own list of view ops and in-place "
                                          "methods the corpus covers (Markdown; docs/coverage.md)")
    cov.add_argument("paths", nargs="*", help="case files or folders (default: the corpus)")
    cov.add_argument("--lists", help="a folder of reference lists (default: the packaged conformance/data/coverage)")
    cov.add_argument("--results", help="a results JSON: count a case on a framework only where it was not "
                                       "recorded as not applicable there")
    cov.add_argument("--check", action="store_true", help="exit 1 if a list is below its target")
    cov.set_defaults(func=cmd_coverage)
    ops = sub.add_parser("ops", help="print the operation vocabulary (docs/operations.md)")
    ops.set_defaults(func=cmd_ops)
    fws = sub.add_parser("frameworks", help="list the registered frameworks: title, version, capabilities")
    fws.set_defaults(func=cmd_frameworks)
    regen = sub.add_parser("regen", help="write every generated file of the checkout again (docs/operations.md, "
                                         "docs/coverage.md, the case schema); --check: exit 1 if one is stale")
    regen.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 naming each stale file")
    regen.set_defaults(func=cmd_regen)
    schema = sub.add_parser("schema", help="print the case-file JSON Schema for the registered frameworks "
                                           "(the shipped one names the built-ins only)")
    schema.set_defaults(func=cmd_schema)
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("run", "matrix"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args, extra)
    except BrokenPipeError:  # the reader went away (`conformance list | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
