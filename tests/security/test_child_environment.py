"""The framework process imports nothing from the working folder and reads and writes
nothing relative to it (issue 32, docs/security.md "The framework process starts in an
empty folder of its own").

``python -m`` puts the working folder first on the import path, and frameworks read files
relative to it (MindSpore's loader looks for native libraries there, torch inductor's CPU
probe runs ``python -c`` in it). Run from a folder holding a planted ``numpy.py`` and
``sitecustomize.py``, the child imports neither; it runs in an empty folder of its own,
removed with it; its environment points the compilers and the temporary folder at the
run's checked cache folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance import registry
from conformance.load.reader import load_text
from conformance.run import childenv
from conformance.run import sandbox as sandbox_module
from conformance.run.caches import FOLDERS, CompilerCaches, open_caches
from conformance.run.sandbox import Sandbox, child_environment, package_only_path

CASE = """\
cases:
  - id: security.child.numpy
    title: "an ordinary case"
    given: {x: [1.0, 2.0]}
    steps:
      - y = x + 1.0
    expect: {values: {y: [2.0, 3.0]}}
"""


def _case() -> Any:
    result = load_text(CASE, "child.yaml", registry.vocabulary())
    assert not result.errors
    return result.cases[0]


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A folder (a case folder, say) with modules that write a canary when imported."""
    folder = tmp_path / "cases"
    folder.mkdir()
    canary = tmp_path / "canary"
    for name in ("numpy.py", "sitecustomize.py", "usercustomize.py"):
        (folder / name).write_text(f"open({str(canary)!r}, 'a').write({name!r} + '\\n')\n")
    return folder, canary


def test_control_python_imports_a_module_planted_in_the_working_folder(planted: tuple[Path, Path]) -> None:
    folder, canary = planted
    subprocess.run([sys.executable, "-c", "import numpy"], cwd=folder, check=False)
    assert canary.exists(), "the planted module is not live: the test below proves nothing"


def test_the_child_imports_nothing_from_the_working_folder(planted: tuple[Path, Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    folder, canary = planted
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend("")  # as python -m pytest has it
    box = Sandbox(timeout=120, caches=CompilerCaches(tmp_path / "compilers", private=False))
    try:
        outcome = box.run(_case(), "numpy")
        child = box._children[""]
        assert child._proc is not None
        pid = child._proc.pid
        cwd = os.readlink(f"/proc/{pid}/cwd")
        environ = dict(item.split("=", 1) for item in
                       Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0") if "=" in item)
        assert os.listdir(cwd) == [], "the child's working folder is not empty"
        assert Path(cwd).stat().st_mode & 0o777 == 0o700
    finally:
        box.close()
    assert outcome.verdict == "pass", outcome.reason
    assert not canary.exists(), canary.read_text()
    assert not Path(cwd).exists(), "the child's working folder outlived it"
    assert Path(cwd).parent != folder and Path(cwd) != folder
    assert str(folder) not in environ["PYTHONPATH"].split(os.pathsep)
    for name, sub in FOLDERS.items():
        assert environ[name] == str(tmp_path / "compilers" / sub)


def test_the_checkout_itself_reaches_the_child_as_this_package_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(sandbox_module.__file__).resolve().parent.parent.parent
    monkeypatch.chdir(home)
    monkeypatch.syspath_prepend("")
    path = child_environment()["PYTHONPATH"].split(os.pathsep)
    assert path[0] == package_only_path()
    assert "" not in path and str(home) not in path[:1]
    assert sorted(os.listdir(package_only_path())) == ["conformance"]


def test_another_working_folder_never_reaches_the_childs_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend("")
    path = child_environment()["PYTHONPATH"].split(os.pathsep)
    assert "" not in path and str(tmp_path) not in path and package_only_path() not in path


def test_the_users_cache_variables_are_replaced_in_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in FOLDERS:
        monkeypatch.setenv(name, str(tmp_path / "checkout" / ".cache"))
    caches = CompilerCaches(tmp_path / "compilers", private=False)
    env = child_environment(caches)
    for name, sub in FOLDERS.items():
        assert env[name] == str(tmp_path / "compilers" / sub)


@pytest.mark.parametrize("name", sorted(childenv.PATH_VARIABLES) + ["FLAGS_mkl_dir"])
def test_a_variable_that_points_into_the_checkout_never_reaches_the_child(name: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "cases").mkdir(parents=True)
    monkeypatch.setenv(name, str(checkout / "cases" / "planted"))
    caches = open_caches([checkout])
    try:
        assert name not in child_environment(caches)
        assert f"{name}={checkout / 'cases' / 'planted'} is not passed to the framework processes" in \
            capsys.readouterr().err
    finally:
        caches.close()


def test_the_same_variable_outside_the_checkout_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{tmp_path / 'libs'}:relative::")
    monkeypatch.setenv("MS_COMPILER_CACHE_PATH", str(tmp_path / "ms"))
    caches = CompilerCaches(tmp_path / "compilers", private=False, checkouts=[tmp_path / "checkout"])
    env = child_environment(caches)
    assert env["LD_LIBRARY_PATH"] == f"{tmp_path / 'libs'}:relative::"
    assert env["MS_COMPILER_CACHE_PATH"] == str(tmp_path / "ms")


def test_an_xla_option_that_points_into_the_checkout_is_dropped_and_the_others_kept(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    environ = {"TF_XLA_FLAGS": f"--tf_xla_persistent_cache_directory={checkout}/x --tf_xla_auto_jit=2",
               "XLA_FLAGS": f"--xla_gpu_kernel_cache_file={tmp_path}/k --xla_gpu_ptx_file={checkout}/p.ptx"}
    env, notes = childenv.checked(environ, [checkout])
    assert env["TF_XLA_FLAGS"] == "--tf_xla_auto_jit=2"
    assert env["XLA_FLAGS"] == f"--xla_gpu_kernel_cache_file={tmp_path}/k"
    assert len(notes) == 2 and all("is not passed to the framework processes" in n for n in notes)


def test_an_in_process_run_restores_the_variables_it_set(pytester: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """--in-process: this process is the framework process for the run, and gets the
    compilers' variables for it, but not TMPDIR (Python keeps the first temporary folder it
    finds), and they are restored when the run ends (the private folder is gone by then)."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/the/users/own")
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    before_tmp = os.environ.get("TMPDIR")
    pytester.makefile(".yaml", case=CASE)
    result = pytester.runpytest("--frameworks", "numpy", "--in-process", "case.yaml", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == "/the/users/own"
    assert "TRITON_CACHE_DIR" not in os.environ
    assert os.environ.get("TMPDIR") == before_tmp


def test_a_variable_that_points_into_the_installation_passes_even_inside_the_checkout(tmp_path: Path) -> None:
    """MindSpore adds its own library folder to LD_LIBRARY_PATH at import; with the virtual
    environment inside the checkout (CI's .venv) that folder is inside the checkout, but the
    frameworks are loaded from there anyway: it is passed on, without a line."""
    checkout = tmp_path / "checkout"
    venv = checkout / ".venv"
    plugin = venv / "lib" / "python3.11" / "site-packages" / "mindspore" / "lib" / "plugin" / "cpu"
    environ = {"LD_LIBRARY_PATH": f"{plugin}:{checkout / 'cases'}"}
    env, notes = childenv.checked(environ, [checkout], installed=[venv])
    assert "LD_LIBRARY_PATH" not in env and len(notes) == 1  # the second element still points into it
    env, notes = childenv.checked({"LD_LIBRARY_PATH": str(plugin)}, [checkout], installed=[venv])
    assert env["LD_LIBRARY_PATH"] == str(plugin) and notes == []


@pytest.mark.parametrize("where", ["the checkout", "above the checkout"])
def test_an_installation_that_holds_the_checkout_exempts_nothing(where: str, tmp_path: Path) -> None:
    checkout = tmp_path / "prefix" / "src" / "checkout"
    installed = checkout if where == "the checkout" else tmp_path / "prefix"
    env, notes = childenv.checked({"LD_PRELOAD": str(checkout / "cases" / "x.so")}, [checkout], installed=[installed])
    assert "LD_PRELOAD" not in env and len(notes) == 1


def test_the_installation_is_this_interpreters() -> None:
    folders = childenv.installation()
    assert Path(sys.prefix).absolute() in folders
    assert any(Path(numpy_file).is_relative_to(f) for f in folders for numpy_file in [__import__("numpy").__file__])
