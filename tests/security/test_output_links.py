"""No output is written through a link (issue 32): a link planted at every path a command
writes (results, reports, partial reports, discover's three files, the locks, the journal)
pointing to a canary outside the checkout, whether the canary exists or not; after the
command the canary is as it was (or still absent) and each output is a regular file; a
lock file or journal that the command removes at its end is gone, link and all.

A checkout can commit such links (``git`` keeps symbolic links), and the person who runs the
suite owns the files they point to. conformance/report/outputs.py writes every output to a
fresh temporary file (``mkstemp``) and renames it over its place, which replaces a link;
lock files are opened with ``O_NOFOLLOW``. Folders the commands write to by default are
never links (only a folder named on the command line may be one).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from entry_points import TESTS, subprocess_env
from results_factory import sample
from test_interrupted_outputs import run_paused
from test_outputs import Checkout
from test_plugin import GOOD, WRONG

from conformance.report import outputs

CANARY = "the canary: a file of the person who runs the suite\n"


class Canaries:
    """Links planted at output paths, each to a canary of its own in a folder outside the
    checkout; half of the canaries exist, half do not (a dangling link)."""

    def __init__(self, outside: Path) -> None:
        self.outside = outside
        self.planted: dict[Path, Path] = {}

    def plant(self, *paths: Path) -> None:
        for path in paths:
            canary = self.outside / f"canary-{len(self.planted)}-{path.name}"
            if len(self.planted) % 2 == 0:
                canary.write_text(CANARY)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(canary)
            self.planted[path] = canary

    def check(self, written: list[Path]) -> None:
        """Every canary as it was; each of ``written`` a regular file; every other planted
        path gone or a regular file (never a link left behind)."""
        for number, (path, canary) in enumerate(self.planted.items()):
            if number % 2 == 0:
                assert canary.read_text() == CANARY, f"written through the link at {path}"
            else:
                assert not os.path.lexists(canary), f"created through the dangling link at {path}"
            if path in written:
                assert stat.S_ISREG(os.lstat(path).st_mode), f"{path} is not a regular file"
            else:
                assert not os.path.islink(path), f"the link at {path} was left"
        assert sorted(p.name for p in self.outside.iterdir()) == sorted(
            c.name for i, c in enumerate(self.planted.values()) if i % 2 == 0)


@pytest.fixture
def canaries() -> Iterator[Canaries]:
    with tempfile.TemporaryDirectory(prefix="conformance-canaries-") as outside:
        yield Canaries(Path(outside))


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Two case files, NumPy the project's only framework (so a run without arguments is a
    full run of the corpus)."""
    (tmp_path / "cases" / "views").mkdir(parents=True)
    (tmp_path / "cases" / "views" / "good.yaml").write_text(GOOD)
    (tmp_path / "cases" / "views" / "wrong.yaml").write_text(WRONG)
    (tmp_path / "pytest.ini").write_text("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy\n")
    return tmp_path, dict(subprocess_env(TESTS), CONFORMANCE_CACHE_DIR="off")


def conformance(project: tuple[Path, dict[str, str]], *args: str) -> subprocess.CompletedProcess[str]:
    root, env = project
    return subprocess.run([sys.executable, "-m", "conformance", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


def test_conformance_run_of_the_corpus(project: tuple[Path, dict[str, str]], canaries: Canaries) -> None:
    root = project[0]
    reports, partial = root / "reports", root / "reports" / "partial"
    written = [reports / "results.json", reports / "behaviour.md", reports / "behaviour.html"]
    canaries.plant(*written, reports / "results.json.lock", reports / "behaviour.lock",
                   partial / "results.json.journal", partial / "results.json.lock", partial / "behaviour.lock")
    proc = conformance(project, "run", "--plain")
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout + proc.stderr
    canaries.check(written)
    assert "partial" not in json.loads((reports / "results.json").read_text())["run"]  # a full run


def test_conformance_run_partial(project: tuple[Path, dict[str, str]], canaries: Canaries) -> None:
    root = project[0]
    reports, partial = root / "reports", root / "reports" / "partial"
    written = [partial / "results.json", partial / "behaviour.md", partial / "behaviour.html"]
    canaries.plant(*written, partial / "results.json.journal", partial / "results.json.lock",
                   partial / "behaviour.lock", reports / "results.json.lock", reports / "behaviour.lock")
    proc = conformance(project, "run", "--plain", "-k", "reshape")
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout + proc.stderr
    canaries.check(written)


def test_pytest_conformance_results(project: tuple[Path, dict[str, str]], canaries: Canaries) -> None:
    root, env = project
    written = [root / "r.json"]
    canaries.plant(*written, root / "r.json.lock", root / "r.json.journal")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "cases", "--conformance-results",
                           "r.json"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout + proc.stderr
    canaries.check(written)


def test_a_journal_kept_after_a_failed_write(tmp_path: Path, canaries: Canaries) -> None:
    checkout = Checkout(tmp_path)
    journal = tmp_path / "reports" / "partial" / "results.json.journal"
    canaries.plant(journal)
    proc = run_paused(checkout, "no room for the results", "conformance run", "--frameworks", "numpy", sig=None)
    assert proc.returncode == pytest.ExitCode.INTERNAL_ERROR, proc.stdout + proc.stderr
    canaries.check([journal])  # the journal the run keeps: a file of its own, in place of the link
    assert json.loads(journal.read_text().splitlines()[0])["journal"] == 1
    # and turning it into results writes in place of a link too
    target = tmp_path / "reports" / "partial" / "results.json"
    canaries.plant(target)
    proc = subprocess.run([sys.executable, "-m", "conformance.report.journal", str(journal)], cwd=tmp_path,
                          env=checkout.env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    canaries.check([journal.parent / "results.json"])
    assert not os.path.lexists(journal)


def test_conformance_report(project: tuple[Path, dict[str, str]], canaries: Canaries) -> None:
    root = project[0]
    (root / "r.json").write_text(json.dumps(sample()))
    out = root / "out"
    written = [out / "behaviour.md", out / "behaviour.html"]
    canaries.plant(*written, out / "behaviour.lock")
    proc = conformance(project, "report", "r.json", "--out", "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    canaries.check(written)


def test_conformance_merge(project: tuple[Path, dict[str, str]], canaries: Canaries) -> None:
    root = project[0]
    data = sample()
    data["run"]["corpus"] = "0123456789abcdef"  # merge joins only files that say their corpus revision
    (root / "r.json").write_text(json.dumps(data))
    canaries.plant(root / "merged.json")
    proc = conformance(project, "merge", "r.json", "--out", "merged.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    canaries.check([root / "merged.json"])


def test_conformance_discover(project: tuple[Path, dict[str, str]], canaries: Canaries) -> None:
    pytest.importorskip("hypothesis")
    root = project[0]
    out = root / "discovered"
    pages = [out / "findings.md", out / "findings.json"]
    canaries.plant(*pages, out / "findings.yaml")
    proc = conformance(project, "discover", "--programs", "2", "--frameworks", "numpy")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    canaries.check(pages)  # findings.yaml: nothing found, so the planted name is removed with the run's pages
    assert not os.path.lexists(out / "findings.yaml")
    assert json.loads((out / "findings.json").read_text())["programs"] >= 1


@pytest.mark.parametrize("command, folder", [
    (["run", "--plain", "-k", "reshape"], "reports/partial"),
    (["run", "--plain"], "reports"),
    (["discover", "--programs", "2", "--frameworks", "numpy"], "discovered"),
])
def test_a_default_output_folder_that_is_a_link_is_refused(project: tuple[Path, dict[str, str]],
                                                           canaries: Canaries, command: list[str],
                                                           folder: str) -> None:
    root = project[0]
    (root / folder).parent.mkdir(parents=True, exist_ok=True)
    (root / folder).symlink_to(canaries.outside, target_is_directory=True)
    proc = conformance(project, *command)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{folder} is a symbolic link, and only a folder named on the command line is written through one" \
        in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(canaries.outside.iterdir()) == []
    # named on the command line, the same link is the user's choice
    if command[0] == "run":
        proc = conformance(project, *command, "--results", f"{folder}/results.json", "--reports", folder)
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        assert sorted(p.name for p in canaries.outside.iterdir()) == ["behaviour.html", "behaviour.md", "results.json"]


def test_a_link_planted_at_a_temporary_files_name_is_not_followed(tmp_path: Path, canaries: Canaries,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # the names mkstemp will try first, known in advance (as if guessed), each a planted link:
    # O_CREAT | O_EXCL refuses an existing name, a link included, and it tries the next
    names = iter(["aaaaaaaa", "bbbbbbbb", "cccccccc"])
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    canaries.plant(tmp_path / ".results.json.aaaaaaaa.tmp", tmp_path / ".results.json.bbbbbbbb.tmp")
    outputs.write_files({tmp_path / "results.json": "new\n"})
    assert (tmp_path / "results.json").read_text() == "new\n"
    assert all(os.path.islink(path) for path in canaries.planted)  # left alone: not the command's
    canaries.planted.clear()
    assert [p.name for p in canaries.outside.iterdir()] == ["canary-0-.results.json.aaaaaaaa.tmp"]
    assert (canaries.outside / "canary-0-.results.json.aaaaaaaa.tmp").read_text() == CANARY


def test_a_lock_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "results.json.lock").mkdir()
    with pytest.raises(outputs.OutputError, match="its lock file .* is not a regular file; remove it"):
        outputs.acquire(tmp_path / "results.json.lock", "the results file", "test")
    os.mkfifo(tmp_path / "behaviour.lock")
    with pytest.raises(outputs.OutputError, match="is not a regular file"):
        outputs.acquire(tmp_path / "behaviour.lock", "the reports", "test")


def test_a_new_file_is_never_written_through_a_dangling_link(tmp_path: Path, canaries: Canaries) -> None:
    canaries.plant(tmp_path / "new.yaml")
    with pytest.raises(FileExistsError):
        outputs.write_new_file(tmp_path / "new.yaml", "cases: []\n")
    assert os.path.islink(tmp_path / "new.yaml") and list(canaries.outside.iterdir()) == [
        canaries.planted[tmp_path / "new.yaml"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.yaml"]
    outputs.write_new_file(tmp_path / "other.yaml", "cases: []\n")
    assert (tmp_path / "other.yaml").read_text() == "cases: []\n"
