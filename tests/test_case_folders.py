"""A pull request that only adds entries under a case folder runs no code through pytest's
own file handling, and cannot hang collection or lint, or lead them elsewhere, through
links (docs/security.md, "Case folders hold only case files").

Each hole has a hostile tree, built in a temporary folder (git does not keep links, pipes
and modes reliably), beside two valid case files: ``cases/views/good.yaml`` and a
YAML/Python polyglot (``POLYGLOT``), a valid, lint-clean case file that is also a Python
module whose import creates a sentinel file. Every hole is refused with its own CF010
finding or ``<name>[refused]`` item at ``file:1:1``, by ``lint_paths``, the ``conformance
lint`` and ``conformance list`` commands and a pytest run; the valid cases still give their
results, and no sentinel file appears. Control tests show each payload is live: imported
the unsafe way (``runpy``), or by plain pytest with this plugin disabled
(``-p no:conformance``), it creates its sentinel; reading a pipe or ``/dev/stdin`` the
unsafe way blocks; walking two links to a parent folder does not end.

Every subprocess gets as standard input a pipe that is never written (nor closed), so that
whatever reads ``/dev/stdin`` would block until the timeout.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import runpy
import signal
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from _pytest import runner
from _pytest.config import PytestPluginManager
from test_plugin import GOOD

from conformance import registry
from conformance.load.folders import CODE
from conformance.load.reader import Vocabulary, load_file, read_case_file
from conformance.plugin import guard
from conformance.tools.lint import lint_paths

pytest_plugins = ["pytester"]

TIMEOUT = 120  # seconds a subprocess may take before it counts as hung (a busy machine is slow)
GOOD_CASES = 2  # in GOOD
# a tree with no pytest.ini runs on every registered framework; --frameworks numpy deselects the rest
OTHER_FRAMEWORKS = len(registry.framework_names()) - 1

# A flow mapping whose values YAML reads as plain strings and Python as expressions: a valid
# case file (lint finds nothing in it) and a Python module that creates {sentinel} when
# imported. Linked to as conftest.py or test_*.py, pytest alone would import it.
POLYGLOT = (
    '{"cases": [{"id": "%(case_id)s", "title": "a case file that is also Python", '
    '"given": {"x": [1.0, 2.0]}, "steps": ["y = x.clone()"], "expect": {"shape": {"y": [2]}}, '
    '"references": [__import__("pathlib").Path(r"%(sentinel)s").touch() or "x"]}]}\n'
)
PYTHON = 'import pathlib\npathlib.Path(r"{sentinel}").touch()\n\n\ndef test_payload():\n    pass\n'
DOCTEST = 'A doctest file, which pytest collects by default as test*.txt:\n\n' \
          '>>> import pathlib; pathlib.Path(r"{sentinel}").touch()\n'


@dataclass
class Tree:
    """A hostile tree: ``root`` holds pytest.ini and cases/; payloads write to ``sentinels``."""

    root: Path
    sentinels: Path
    outside: Path  # a folder elsewhere on the machine, holding a test file with a payload
    refused: list[str]  # the refused entries, relative to root
    valid: int = GOOD_CASES  # valid cases in the tree

    @property
    def cases(self) -> Path:
        return self.root / "cases"

    def created(self) -> list[str]:
        return sorted(p.name for p in self.sentinels.iterdir())

    def polyglot(self, relative: str, name: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        case_id = "views.polyglot." + re.sub(r"\W", "_", name)
        path.write_text(POLYGLOT % {"case_id": case_id, "sentinel": self.sentinels / name})
        self.valid += 1
        return path

    def python(self, relative: str, name: str, text: str = PYTHON) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(sentinel=self.sentinels / name))
        return path

    def link(self, relative: str, target: str | Path) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
        return path


def make_tree(root: Path, elsewhere: Path) -> Tree:
    (root / "cases" / "views").mkdir(parents=True, exist_ok=True)
    (root / "cases" / "views" / "good.yaml").write_text(GOOD)
    (root / "pytest.ini").write_text("[pytest]\nconformance_paths = cases\n"
                                     "conformance_frameworks = numpy, torch, paddle\n")
    sentinels, outside = elsewhere / "sentinels", elsewhere / "outside"
    sentinels.mkdir(parents=True)
    outside.mkdir()
    (outside / "test_outside.py").write_text(PYTHON.format(sentinel=sentinels / "outside"))
    return Tree(root, sentinels, outside, [])


# ---- the holes: each builds its entries and names the ones refused


def conftest_link_in_subfolder(t: Tree) -> None:
    t.polyglot("cases/poly/polyglot.yaml", "conftest_link_in_subfolder")
    t.link("cases/poly/conftest.py", "polyglot.yaml")
    t.refused += ["cases/poly/conftest.py"]


def conftest_link_in_root(t: Tree) -> None:
    t.polyglot("cases/polyglot.yaml", "conftest_link_in_root")
    t.link("cases/conftest.py", "polyglot.yaml")
    t.refused += ["cases/conftest.py"]


def conftest_file(t: Tree) -> None:
    t.python("cases/views/conftest.py", "conftest_file")
    t.refused += ["cases/views/conftest.py"]


def python_test_file(t: Tree) -> None:
    t.python("cases/views/test_evil.py", "python_test_file")
    t.refused += ["cases/views/test_evil.py"]


def python_test_link(t: Tree) -> None:
    t.polyglot("cases/poly/polyglot.yaml", "python_test_link")
    t.link("cases/views/test_evil.py", "../poly/polyglot.yaml")
    t.refused += ["cases/views/test_evil.py"]


def init_file(t: Tree) -> None:
    t.python("cases/views/__init__.py", "init_file")
    t.refused += ["cases/views/__init__.py"]


def doctest_file(t: Tree) -> None:
    t.python("cases/views/test_notes.txt", "doctest_file", DOCTEST)
    t.refused += ["cases/views/test_notes.txt"]


def loop_pair(t: Tree) -> None:
    t.link("cases/loop/a", "b")
    t.link("cases/loop/b", "a")
    t.refused += ["cases/loop/a", "cases/loop/b"]


def parent_links(t: Tree) -> None:
    # two links to the folder above: a walk that follows them branches twice per level,
    # 2^40 folders before the kernel's limit of links in a path stops it
    t.link("cases/x/up", "..")
    t.link("cases/y/up", "..")
    t.refused += ["cases/x/up", "cases/y/up"]


def link_outside(t: Tree) -> None:
    t.link("cases/elsewhere", t.outside)
    t.refused += ["cases/elsewhere"]


def link_to_machine_root(t: Tree) -> None:
    t.link("cases/machine", "/")
    t.refused += ["cases/machine"]


def link_to_stdin(t: Tree) -> None:
    t.link("cases/views/stdin.yaml", "/dev/stdin")
    t.refused += ["cases/views/stdin.yaml"]


def fifo(t: Tree) -> None:
    os.mkfifo(t.root / "cases" / "views" / "pipe.yaml")
    t.refused += ["cases/views/pipe.yaml"]


def link_to_case_file(t: Tree) -> None:
    t.link("cases/views/again.yaml", "good.yaml")
    t.link("cases/views/gone.yaml", "no-such-file.yaml")
    t.refused += ["cases/views/again.yaml", "cases/views/gone.yaml"]


def other_file(t: Tree) -> None:
    (t.root / "cases" / "views" / "README.md").write_text("# notes\n")
    t.refused += ["cases/views/README.md"]


HOLES: dict[str, Callable[[Tree], None]] = {f.__name__: f for f in (
    conftest_link_in_subfolder, conftest_link_in_root, conftest_file, python_test_file, python_test_link, init_file,
    doctest_file, loop_pair, parent_links, link_outside, link_to_machine_root, link_to_stdin, fifo,
    link_to_case_file, other_file)}
# the holes whose payload plain pytest runs (the controls below)
PYTHON_HOLES = ["conftest_link_in_subfolder", "conftest_link_in_root", "conftest_file", "python_test_file", "python_test_link",  # noqa: E501
                "doctest_file", "link_outside"]


def build(hole: str, root: Path, elsewhere: Path) -> Tree:
    tree = make_tree(root, elsewhere)
    HOLES[hole](tree)
    return tree


def build_all(root: Path, elsewhere: Path) -> Tree:
    tree = make_tree(root, elsewhere)
    for make in HOLES.values():
        if make is not python_test_link:  # the same entry as python_test_file
            make(tree)
    return tree


@pytest.fixture
def never_written() -> Iterator[int]:
    """The read end of a pipe whose write end stays open and silent: standard input that
    blocks whoever reads it."""
    read, write = os.pipe()
    yield read
    os.close(read)
    os.close(write)


def run_pytest(pytester: pytest.Pytester, stdin: int, *args: str, timeout: float = TIMEOUT) -> pytest.RunResult:
    return pytester.run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, stdin=stdin,
                        timeout=timeout)


def run_conformance(cwd: Path, stdin: int, *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *args], cwd=cwd, stdin=stdin,
                          capture_output=True, text=True, timeout=timeout)


class Hang(BaseException):
    pass


@pytest.fixture
def time_limit() -> Iterator[Callable[[float], None]]:
    """Arm an alarm: an in-process read that blocks (a pipe) raises Hang instead."""
    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang("no answer: it blocked")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    yield lambda seconds: signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return registry.vocabulary()


def refused_lines(text: str) -> list[str]:
    """The ``path:1:1: CF010`` findings of ``conformance lint`` / ``list`` output."""
    return sorted(m.group(1) for m in re.finditer(rf"^(\S+):1:1: {CODE} ", text, re.M))


# ---- the payloads are live


def test_control_the_polyglot_is_a_valid_case_file_and_live_python(tmp_path: Path, vocabulary: Vocabulary) -> None:
    tree = make_tree(tmp_path / "root", tmp_path)
    path = tree.polyglot("cases/views/polyglot.yaml", "polyglot")
    result = load_file(path, vocabulary)
    assert [c.id for c in result.cases] == ["views.polyglot.polyglot"] and result.errors == []
    assert lint_paths([path], vocabulary) == []  # nothing to see as a case file
    assert tree.created() == []
    runpy.run_path(str(path))  # the control: imported as Python, as pytest imports a conftest.py
    assert tree.created() == ["polyglot"]


@pytest.mark.parametrize("hole", PYTHON_HOLES)
def test_control_plain_pytest_runs_the_payload(hole: str, pytester: pytest.Pytester, tmp_path: Path,
                                               never_written: int) -> None:
    tree = build(hole, pytester.path, tmp_path)
    run_pytest(pytester, never_written, "-p", "no:conformance")
    assert tree.created() == ["outside" if hole == "link_outside" else hole]


def test_control_plain_pytest_imports_a_package_init(pytester: pytest.Pytester, tmp_path: Path,
                                                     never_written: int) -> None:
    # an __init__.py makes its folder a package, which pytest imports before the first item
    # in it runs (a case item, before this plugin collected case folders itself)
    tree = build("init_file", pytester.path, tmp_path)
    (tree.cases / "views" / "test_harmless.py").write_text("def test_nothing():\n    pass\n")
    run_pytest(pytester, never_written, "-p", "no:conformance")
    assert tree.created() == ["init_file"]


def test_control_two_links_to_a_parent_folder_do_not_end_a_plain_walk(
        pytester: pytest.Pytester, tmp_path: Path, never_written: int) -> None:
    build("parent_links", pytester.path, tmp_path)
    with pytest.raises(pytester.TimeoutExpired):
        run_pytest(pytester, never_written, "-p", "no:conformance", "--collect-only", "-q", timeout=4)


@pytest.mark.parametrize("hole", ["link_to_stdin", "fifo"])
def test_control_reading_the_entry_the_unsafe_way_blocks(hole: str, tmp_path: Path, never_written: int) -> None:
    tree = build(hole, tmp_path / "root", tmp_path)
    code = f"print('reading', flush=True); open({str(tree.root / tree.refused[0])!r}, 'rb').read(1)"
    with pytest.raises(subprocess.TimeoutExpired) as hung:
        subprocess.run([sys.executable, "-c", code], stdin=never_written, capture_output=True, timeout=2)
    assert hung.value.output == b"reading\n"  # it got as far as the read, and stayed there


# ---- reading a case file: never a link, never a pipe or device


@pytest.mark.parametrize("hole", ["link_to_case_file", "fifo"])
def test_load_file_refuses_links_and_pipes_at_once(hole: str, tmp_path: Path, vocabulary: Vocabulary,
                                                   time_limit: Callable[[float], None]) -> None:
    tree = build(hole, tmp_path / "root", tmp_path)
    time_limit(10)
    for entry in tree.refused:
        result = load_file(tree.root / entry, vocabulary, display_path=entry)
        assert result.cases == [] and len(result.errors) == 1
        error = result.errors[0][1]
        assert (error.location.file, error.location.line, error.location.column) == (entry, 1, 1)
        assert re.search(r"cannot read file: it is (a symbolic link|a named pipe)", error.message), error.message


def test_read_case_file_names_what_it_refuses(tmp_path: Path, time_limit: Callable[[float], None]) -> None:
    (tmp_path / "case.yaml").write_text("cases: []\n")
    (tmp_path / "link.yaml").symlink_to("case.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe.yaml")
    time_limit(10)
    assert read_case_file(tmp_path / "case.yaml") == b"cases: []\n"
    for name in ("link.yaml", "zero.yaml"):
        with pytest.raises(OSError, match="it is a symbolic link, and links are never followed"):
            read_case_file(tmp_path / name)
    with pytest.raises(OSError, match=r"it is a named pipe \(FIFO\), not a regular file"):
        read_case_file(tmp_path / "pipe.yaml")
    with pytest.raises(OSError, match="it is a character device, not a regular file"):
        read_case_file("/dev/null")
    with pytest.raises(OSError, match="it is a folder, not a regular file"):
        read_case_file(tmp_path)


def test_read_case_file_refuses_dev_stdin_without_reading_it(tmp_path: Path, never_written: int) -> None:
    code = ("from conformance.load.reader import read_case_file\n"
            "try:\n    read_case_file('/dev/stdin')\nexcept OSError as exc:\n    print(exc)\n")
    run = subprocess.run([sys.executable, "-c", code], stdin=never_written, capture_output=True, text=True,
                         timeout=TIMEOUT)
    assert run.stdout.startswith("it is a symbolic link"), run.stdout + run.stderr


# ---- lint, list and pytest refuse every hole, and keep the valid cases


@pytest.mark.parametrize("hole", HOLES)
def test_lint_paths_refuses_the_hole(hole: str, tmp_path: Path, vocabulary: Vocabulary,
                                     time_limit: Callable[[float], None]) -> None:
    tree = build(hole, tmp_path / "root", tmp_path)
    time_limit(30)
    findings = lint_paths([tree.cases], vocabulary)
    assert sorted((f.code, f.location.file, f.location.line, f.location.column) for f in findings) == \
        sorted((CODE, str(tree.root / entry), 1, 1) for entry in tree.refused)
    assert all("case folders hold only *.yaml case files" in f.message and f.hint for f in findings)
    assert tree.created() == []


@pytest.mark.parametrize("hole", HOLES)
def test_pytest_run_refuses_the_hole(hole: str, pytester: pytest.Pytester, tmp_path: Path,
                                     never_written: int) -> None:
    tree = build(hole, pytester.path, tmp_path)
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process", "-rf")
    # one failing item per refused entry, not a collection error; the valid cases still run
    result.assert_outcomes(passed=tree.valid, failed=len(tree.refused), deselected=2 * tree.valid)
    for entry in tree.refused:
        name = entry.rsplit("/", 1)[1]
        result.stdout.fnmatch_lines([f"{entry}:1:1: * case folders hold only [*].yaml case files *", "  fix: *",
                                     f"FAILED {entry}::{name}[[]refused[]]*"])
    assert tree.created() == []


def test_conformance_lint_and_list_refuse_every_hole(tmp_path: Path, never_written: int) -> None:
    tree = build_all(tmp_path / "root", tmp_path)
    lint = run_conformance(tree.root, never_written, "lint")
    assert lint.returncode == 1, lint.stderr
    assert refused_lines(lint.stdout) == sorted(tree.refused)
    assert re.findall(r"^\S+:\d+:\d+: (CF\d+)", lint.stdout, re.M) == [CODE] * len(tree.refused)
    listing = run_conformance(tree.root, never_written, "list")
    assert listing.returncode == 1
    assert refused_lines(listing.stderr) == sorted(tree.refused)
    assert len(listing.stdout.splitlines()) == tree.valid
    assert tree.created() == []


@pytest.mark.parametrize("hole", ["link_to_stdin", "fifo", "link_to_case_file"])
def test_conformance_lint_and_list_refuse_a_named_entry(hole: str, tmp_path: Path, never_written: int) -> None:
    tree = build(hole, tmp_path / "root", tmp_path)
    for entry in tree.refused:
        lint = run_conformance(tree.root, never_written, "lint", entry)
        assert (lint.returncode, refused_lines(lint.stdout)) == (1, [entry]), lint.stdout + lint.stderr
        listing = run_conformance(tree.root, never_written, "list", entry)
        assert (listing.returncode, refused_lines(listing.stderr)) == (1, [entry])


def test_conformance_run_refuses_every_hole_and_reports_the_rest(pytester: pytest.Pytester, tmp_path: Path,
                                                                 never_written: int) -> None:
    tree = build_all(pytester.path, tmp_path)
    run = pytester.run(sys.executable, "-m", "conformance", "run", "--frameworks", "numpy", stdin=never_written,
                       timeout=TIMEOUT)
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    # one framework: a partial run, in reports/partial/
    records = json.loads((pytester.path / "reports" / "partial" / "results.json").read_text())["results"]
    refused = {r["file"]: r for r in records if r["nodeid"].endswith("[refused]")}
    assert sorted(refused) == sorted(tree.refused)
    assert all(r["outcome"] == "error" and r["line"] == 1 for r in refused.values())
    assert sum(r["outcome"] == "pass" for r in records) == tree.valid
    assert "invalid case file(s)" in (pytester.path / "reports" / "partial" / "behaviour.md").read_text()
    assert tree.created() == []


def test_a_link_to_the_machine_root_is_not_walked(pytester: pytest.Pytester, tmp_path: Path,
                                                  never_written: int) -> None:
    # collection and lint of a tree holding a link to / end at once (a walk of the machine
    # would take minutes and import every test_*.py on it)
    tree = build("link_to_machine_root", pytester.path, tmp_path)
    result = run_pytest(pytester, never_written, "--collect-only", "-q", timeout=30)
    assert result.ret == 0 and "cases/machine::machine[refused]" in result.stdout.str()
    assert len([line for line in result.outlines if "::" in line]) == 1 + 3 * tree.valid
    lint = run_conformance(tree.root, never_written, "lint", timeout=30)
    assert refused_lines(lint.stdout) == ["cases/machine"]


# ---- conftest.py: never imported from a case folder, initial or not


@pytest.mark.parametrize("args", [["cases"], ["cases/poly"], ["cases/poly/polyglot.yaml"]], ids=" ".join)
def test_conftest_in_a_case_folder_is_never_imported(args: list[str], pytester: pytest.Pytester, tmp_path: Path,
                                                     never_written: int) -> None:
    # named on the command line, a case folder's conftest.py (and those of the folders
    # above it, up to the case root) are initial conftests, imported before collection
    tree = make_tree(pytester.path, tmp_path)
    conftest_link_in_subfolder(tree)
    conftest_link_in_root(tree)
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process", *args)
    result.stdout.fnmatch_lines_random(["FAILED cases/conftest.py::conftest.py[[]refused[]]*",
                                        "FAILED cases/poly/conftest.py::conftest.py[[]refused[]]*"])
    assert result.parseoutcomes()["failed"] == 2
    assert tree.created() == []
    run_pytest(pytester, never_written, "-p", "no:conformance", "--collect-only", *args)  # the control
    assert tree.created() == ["conftest_link_in_root", "conftest_link_in_subfolder"]


def test_a_conftest_outside_the_case_folders_still_loads(pytester: pytest.Pytester, tmp_path: Path,
                                                         never_written: int) -> None:
    tree = build("conftest_file", pytester.path, tmp_path)
    pytester.makeconftest(f"def pytest_configure(config):\n    open(r'{tree.sentinels / 'root_conftest'}', 'w')\n")
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process")
    result.assert_outcomes(passed=GOOD_CASES, failed=1, deselected=2 * GOOD_CASES)
    assert tree.created() == ["root_conftest"]


def test_the_guard_is_installed_on_this_pytest(pytester: pytest.Pytester) -> None:
    """Fails when a pytest release changes what the conftest guard wraps: then the guard
    refuses every run that has a conftest.py in a case folder (below), and needs updating."""
    assert guard.intercepts(PytestPluginManager)
    # every conftest import goes through _loadconftestmodules: the initial ones ...
    assert "_loadconftestmodules" in PytestPluginManager._set_initial_conftests.__code__.co_names
    # ... and those of each folder as it is collected
    assert "_loadconftestmodules" in inspect.getsource(runner.pytest_make_collect_report)
    config = pytester.parseconfigure()
    assert config.pluginmanager._importconftest.__name__ == "guarded_importconftest"


class _LoaderOnly:
    def _loadconftestmodules(self, path: Path) -> None:
        pass


class _NotCalled:
    def _loadconftestmodules(self, path: Path) -> None:
        self._import_conftest_module(path)

    def _import_conftest_module(self, path: Path) -> None:
        pass

    def _importconftest(self, conftestpath: Path) -> None:
        pass


class _Intercepted:
    def _loadconftestmodules(self, path: Path) -> None:
        self._importconftest(path)

    def _importconftest(self, conftestpath: Path) -> None:
        pass


@pytest.mark.parametrize("manager", [_LoaderOnly, _NotCalled])
def test_without_the_private_api_the_guard_refuses_the_run(manager: type, tmp_path: Path) -> None:
    assert not guard.intercepts(manager) and guard.intercepts(_Intercepted)

    def config() -> Any:
        return types.SimpleNamespace(stash=pytest.Stash(), pluginmanager=manager(),
                                     getini=lambda name: [tmp_path / "cases"])

    (tmp_path / "cases" / "views").mkdir(parents=True)
    guard.install(config())  # no conftest.py in a case folder: nothing to refuse
    (tmp_path / "cases" / "views" / "conftest.py").symlink_to("/dev/stdin")
    with pytest.raises(pytest.UsageError, match=r"views/conftest.py: a conftest.py in a case folder; .* refused"):
        guard.install(config())


def test_without_the_private_api_a_pytest_run_is_refused(pytester: pytest.Pytester, tmp_path: Path,
                                                         never_written: int) -> None:
    tree = build("conftest_link_in_subfolder", pytester.path, tmp_path)
    pytester.makepyfile(older_pytest="from _pytest.config import PytestPluginManager\n"
                                     "del PytestPluginManager._importconftest\n")
    result = run_pytest(pytester, never_written, "-p", "older_pytest", "cases")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: */cases/poly/conftest.py: a conftest.py in a case folder; *"])
    assert tree.created() == []


# ---- a folder named on the command line (pytest's convention: it is collected)


def named_tree(hole: str | None, tmp_path: Path) -> Tree:
    """A hostile tree outside the pytest project (no pytest.ini: the folder is named on
    the command line, not configured)."""
    tree = make_tree(tmp_path / "elsewhere", tmp_path)
    (tree.root / "pytest.ini").unlink()
    if hole is not None:
        HOLES[hole](tree)
    return tree


def test_a_named_folder_of_case_files_is_collected(pytester: pytest.Pytester, tmp_path: Path,
                                                   never_written: int) -> None:
    tree = named_tree(None, tmp_path)
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process", str(tree.cases))
    result.assert_outcomes(passed=GOOD_CASES, deselected=OTHER_FRAMEWORKS * GOOD_CASES)
    # a sub-folder, and the folder given relative to the current one
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process",
                        os.path.relpath(tree.cases / "views", pytester.path))
    result.assert_outcomes(passed=GOOD_CASES, deselected=OTHER_FRAMEWORKS * GOOD_CASES)


# the holes whose entries are no Python file: the named folder is a case folder, and refuses them
NAMED_HOLES = [hole for hole in HOLES if hole not in ("conftest_file", "python_test_file", "init_file")]


@pytest.mark.parametrize("hole", NAMED_HOLES)
def test_a_named_case_folder_refuses_the_hole(hole: str, pytester: pytest.Pytester, tmp_path: Path,
                                              never_written: int) -> None:
    tree = named_tree(hole, tmp_path)
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process", "-rf", str(tree.cases))
    result.assert_outcomes(passed=tree.valid, failed=len(tree.refused), deselected=OTHER_FRAMEWORKS * tree.valid)
    for entry in tree.refused:
        name = entry.rsplit("/", 1)[1]
        result.stdout.fnmatch_lines([f"FAILED *{entry}::{name}[[]refused[]]*"])
    assert tree.created() == []


@pytest.mark.parametrize("hole", ["conftest_file", "python_test_file", "init_file"])
def test_a_named_folder_with_python_is_a_python_folder_and_says_why(hole: str, pytester: pytest.Pytester,
                                                                    tmp_path: Path, never_written: int) -> None:
    # pytest's convention for a folder of Python tests; its *.yaml files are not cases,
    # and a run that collects nothing from it says why
    tree = named_tree(hole, tmp_path)
    python = tree.root / tree.refused[0]
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process", str(tree.cases))
    assert "good.yaml" not in result.stdout.str()
    if hole != "python_test_file":  # nothing collected: said
        assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
        result.stdout.fnmatch_lines([(f"conformance: nothing collected from {tree.cases}: it holds Python files "
                                      f"({python}) as well as case files, so it is no case folder *--case-folders*")])
    # --case-folders: a case folder whatever it holds; the Python file is refused, never imported
    for created in tree.sentinels.iterdir():
        created.unlink()
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process", "--case-folders",
                        str(tree.cases))
    result.assert_outcomes(passed=tree.valid, failed=1, deselected=OTHER_FRAMEWORKS * tree.valid)
    assert tree.created() == []


def test_a_named_folder_of_python_tests_with_yaml_fixtures_still_runs_its_tests(pytester: pytest.Pytester,
                                                                                never_written: int) -> None:
    # as this repository's tests/ (case files among its fixtures): pytest collects its tests
    folder = pytester.path / "suite"
    (folder / "fixtures").mkdir(parents=True)
    (folder / "fixtures" / "case.yaml").write_text(GOOD)
    (folder / "conftest.py").write_text("import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 42\n")
    (folder / "test_it.py").write_text("def test_it(answer):\n    assert answer == 42\n")
    result = run_pytest(pytester, never_written, "suite")
    result.assert_outcomes(passed=1)
    assert "conformance: nothing collected" not in result.stdout.str()


def test_a_named_folder_of_other_yaml_is_not_a_case_folder(pytester: pytest.Pytester, never_written: int) -> None:
    (pytester.path / "config").mkdir()
    (pytester.path / "config" / "service.yaml").write_text("name: web\nreplicas: 2\n")
    result = run_pytest(pytester, never_written, "config")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines([("conformance: nothing collected from */config: none of the *.yaml files read "
                                  "in it (the first 20) looks like a case file*")])


def test_a_named_folder_without_case_files_says_so(pytester: pytest.Pytester, never_written: int) -> None:
    (pytester.path / "mycases").mkdir()
    (pytester.path / "mycases" / "case.yaml.txt").write_text(GOOD)
    result = run_pytest(pytester, never_written, "mycases")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines([("conformance: nothing collected from */mycases: it holds no case file (*.yaml "
                                  "or *.yml; *")])


def test_the_project_folder_named_on_the_command_line_is_no_case_folder(pytester: pytest.Pytester, tmp_path: Path,
                                                                        never_written: int) -> None:
    # `pytest .` in a checkout: the folder of pytest.ini holds the case folders, it is not one
    tree = make_tree(pytester.path, tmp_path)
    result = run_pytest(pytester, never_written, "--frameworks", "numpy", "--in-process", ".")
    result.assert_outcomes(passed=tree.valid, deselected=2 * tree.valid)


def test_conformance_run_makes_every_named_folder_a_case_folder(tmp_path: Path, never_written: int) -> None:
    tree = named_tree("conftest_file", tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    run = run_conformance(work, never_written, "run", "--plain", "--frameworks", "numpy", str(tree.cases))
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, run.stdout + run.stderr
    records = json.loads((work / "reports" / "partial" / "results.json").read_text())["results"]
    assert sorted(r["outcome"] for r in records) == ["error"] + ["pass"] * tree.valid
    assert tree.created() == []
