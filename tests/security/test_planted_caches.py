"""A compiler cache planted in the checkout is never read (issue 32, door 1).

torch inductor imports the ``.py`` files it finds in ``TORCHINDUCTOR_CACHE_DIR`` at the
path it computes for a graph, and unpickles its FX graph entries; the path does not depend
on where the folder is, so a tree prepared anywhere works once committed. These tests build
that tree for a real case (a first run into a folder of the test's own), poison every file
of it (each ``.py`` writes a canary first; each other file becomes a pickle that writes one),
and plant it where a pull request can: the old default ``.conformance-cache/`` and a
``CONFORMANCE_CACHE_DIR`` inside the checkout. The control shows the poisoned tree is live:
a framework process pointed straight at it writes the canary.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance import registry
from conformance.load.reader import load_text
from conformance.run.caches import FOLDERS, CompilerCaches, open_caches
from conformance.run.sandbox import Sandbox

pytest.importorskip("torch")

pytestmark = pytest.mark.slow(reason="builds a case's real inductor cache (a C++ compile) and runs it in "
                                     "framework processes")

CASE = """\
cases:
  - id: security.planted.inductor
    title: "a graph inductor compiles and caches"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x + 1.0
    expect: {values: {y: [2.0, 3.0]}}
"""


class _Canary:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (exec, (f"open({str(self.path)!r}, 'w').write('pickle')",))


def _case() -> Any:
    result = load_text(CASE, "planted.yaml", registry.vocabulary())
    assert not result.errors
    return result.cases[0]


def _run(caches: CompilerCaches, cwd: Path) -> Any:
    before = os.getcwd()
    os.chdir(cwd)
    box = Sandbox(timeout=300, caches=caches)
    try:
        return box.run(_case(), "torch_inductor")
    finally:
        box.close()
        os.chdir(before)


def _poison(tree: Path, canary: Path) -> int:
    poisoned = 0
    for path in tree.rglob("*"):
        if not path.is_file():
            continue
        if path.suffix == ".py":
            path.write_text(f"open({str(canary)!r}, 'w').write('py')\n" + path.read_text())
        elif path.suffix not in (".so", ".lock", ".cpp", ".h"):
            path.write_bytes(pickle.dumps(_Canary(canary)))
        else:
            continue
        poisoned += 1
    return poisoned


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The compilers' cache tree of a real run of CASE, every file poisoned, and its canary."""
    root = tmp_path_factory.mktemp("made") / "compilers"
    for sub in FOLDERS.values():
        (root / sub).mkdir(parents=True)
    outcome = _run(CompilerCaches(root, private=False), root.parent)
    assert outcome.verdict == "pass", outcome.reason
    canary = tmp_path_factory.mktemp("canary") / "ran"
    assert _poison(root / "torchinductor", canary) > 0
    return root, canary


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "checkout"
    (folder / "cases").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def test_control_a_framework_process_pointed_at_the_poisoned_tree_runs_it(poisoned: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    root, canary = poisoned
    copy = tmp_path / "compilers"
    shutil.copytree(root, copy)
    _run(CompilerCaches(copy, private=False), tmp_path)
    assert canary.exists(), "the poisoned cache was not read: the payload is not live, so the tests below prove nothing"
    canary.unlink()


PLACES = ["ci-cache", ".cache", ".conformance-cache"]


def _planted(root: Path, checkout: Path, place: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The poisoned tree at ``place`` in the checkout, and the variables that name it."""
    shutil.copytree(root, checkout / place / "compilers")
    # the old default (inductor's folder under .conformance-cache/) and a CI setting inside the checkout
    shutil.copytree(root / "torchinductor", checkout / ".conformance-cache" / "torchinductor", dirs_exist_ok=True)
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", place)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(checkout / ".conformance-cache" / "torchinductor"))


@pytest.mark.parametrize("place", PLACES)
def test_a_cache_folder_inside_the_checkout_is_refused(poisoned: tuple[Path, Path], checkout: Path, place: str,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _planted(poisoned[0], checkout, place, monkeypatch)
    caches = open_caches([checkout])
    try:
        assert caches.private, "a compilers' cache inside the checkout must be refused"
        assert caches.note is not None and "inside the checkout" in caches.note
        assert f"is inside the checkout {checkout}" in capsys.readouterr().err
        env = caches.environment()
        # every variable a framework process reads its compilers' caches from: the private folder
        assert set(FOLDERS) <= set(env)
        for name in FOLDERS:
            assert Path(env[name]).is_relative_to(caches.root) and not Path(env[name]).is_relative_to(checkout)
    finally:
        caches.close()
    assert not caches.root.exists(), "the private folder outlived the run"


def test_a_refused_cache_folder_is_never_read_by_a_real_run(poisoned: tuple[Path, Path], checkout: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A compile in a framework process with the caches refused, every place above planted
    (the one the variables name, .conformance-cache/): the canary stays unwritten. One run,
    not one per place: the test above shows that each place gives the same private folder."""
    root, canary = poisoned
    canary.unlink(missing_ok=True)
    for place in PLACES[:-1]:
        shutil.copytree(root, checkout / place / "compilers")
    _planted(root, checkout, PLACES[-1], monkeypatch)
    caches = open_caches([checkout])
    try:
        assert caches.private
        outcome = _run(caches, checkout)
    finally:
        caches.close()
    assert outcome.verdict == "pass", outcome.reason
    assert not canary.exists(), "a planted compiler cache was read"
    assert not caches.root.exists(), "the private folder outlived the run"


def test_the_users_own_cache_variables_are_replaced(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "mine"))
    caches = open_caches()
    try:
        env = caches.environment()
        assert not caches.private
        for name, sub in FOLDERS.items():
            assert env[name] == str(tmp_path / "mine" / "compilers" / sub)
        assert env["TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE"] == "0"
        assert oct((tmp_path / "mine" / "compilers").stat().st_mode & 0o777) == oct(0o700)
    finally:
        caches.close()


@pytest.mark.parametrize("setting", ["off", "0", ""])
def test_switched_off_gives_a_private_folder_never_one_named_off(setting: str, monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", setting)
    caches = open_caches()
    try:
        assert caches.private and caches.note is None
        assert not (tmp_path / "off").exists()
    finally:
        caches.close()
    assert not caches.root.exists()
