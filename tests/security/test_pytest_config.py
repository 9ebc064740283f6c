"""pytest's configuration never comes from a case folder, and no text of a case file runs
(issue 32, door 2).

A pytest configuration file planted beside cases (every name pytest reads, in the named
folder or a folder above it inside the case tree) with ``addopts = --doctest-glob=*.yaml``
made pytest run a ``>>>`` line of a case title as a doctest; with ``pythonpath = .`` and
``-p evil`` it imported a ``.py`` file beside the cases. Each test plants a canary-writing
payload in a project laid out like this repository (a ``pyproject.toml`` with
``conformance_paths = ["cases"]``) and asserts that the canary was never written and that
the refusal names the file. The controls show each payload is live when the plugin is off.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CASE = """\
cases:
  - id: views.planted.doc
    tags: [views]
    given:
      x: {{data: [1.0, 2.0]}}
    steps:
      - y = x[0:1]
    expect:
      values: {{y: [1.0]}}
    title: >-
      a case whose folded title hides a doctest line
      >>> open({canary!r}, 'w').write('doctest')
"""
INI_SECTION = {"pytest.toml": "[pytest]", ".pytest.toml": "[pytest]", "pytest.ini": "[pytest]",
               ".pytest.ini": "[pytest]", "tox.ini": "[pytest]", "setup.cfg": "[tool:pytest]",
               "pyproject.toml": "[tool.pytest.ini_options]"}
TOML = {"pytest.toml", ".pytest.toml", "pyproject.toml"}


def _config_text(name: str, addopts: str, pythonpath: str | None = None) -> str:
    section = INI_SECTION[name]
    if name in TOML:
        lines = [section, f"addopts = {addopts.split()!r}".replace("'", '"')]
        if pythonpath:
            lines.append(f'pythonpath = ["{pythonpath}"]')
    else:
        lines = [section, f"addopts = {addopts}"]
        if pythonpath:
            lines.append(f"pythonpath = {pythonpath}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "cases" / "sub").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\nconformance_paths = ["cases"]\n'
                                         'conformance_frameworks = ["numpy"]\n')
    (root / "cases" / "sub" / "doc.yaml").write_text(CASE.format(canary=str(tmp_path / "canary")))
    return root


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", *args], cwd=project, env=env, capture_output=True, text=True,
                          timeout=300)


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(project, "pytest", "-p", "no:cacheprovider", *args)


@pytest.mark.parametrize("name", list(INI_SECTION))
@pytest.mark.parametrize("where", ["sub", "."])
@pytest.mark.parametrize("target", ["cases", "cases/sub", "cases/sub/doc.yaml"])
def test_a_configuration_file_in_a_case_folder_refuses_the_run(project: Path, name: str, where: str,
                                                              target: str) -> None:
    folder = project / "cases" / where
    planted = folder / name
    planted.write_text(_config_text(name, "--doctest-glob=*.yaml"))
    if where == "sub" and target == "cases":
        pytest.skip("pytest looks for its configuration above the named folder, never below it")
    proc = _pytest(project, target)
    output = proc.stdout + proc.stderr
    assert not (project.parent / "canary").exists(), output
    assert proc.returncode == 4, output
    assert f"{planted.resolve()}: a pytest configuration file in the case folder" in output, output
    assert "Traceback" not in output, output


@pytest.mark.parametrize("name", ["pytest.ini", "setup.cfg", "pyproject.toml"])
def test_control_the_payload_runs_when_the_plugin_is_off(project: Path, name: str) -> None:
    (project / "cases" / "sub" / name).write_text(_config_text(name, "--doctest-glob=*.yaml"))
    _pytest(project, "-p", "no:conformance", "cases/sub")
    assert (project.parent / "canary").exists(), "the doctest payload is not live: the tests above prove nothing"


def test_a_case_file_is_never_collected_by_another_plugin(project: Path) -> None:
    """--doctest-glob=*.yaml given by the user (not planted): the doctest plugin still never
    sees a case file, here or named directly."""
    for target in ("cases", "cases/sub/doc.yaml"):
        proc = _pytest(project, "--doctest-glob=*.yaml", target)
        output = proc.stdout + proc.stderr
        assert not (project.parent / "canary").exists(), output
        assert "views.planted.doc[numpy]" in proc.stdout or proc.returncode in (0, 1), output
        assert "doctest" not in proc.stdout.lower().replace("doctest line", ""), output


def test_a_configuration_file_beside_case_files_outside_any_project_refuses_the_run(tmp_path: Path) -> None:
    folder = tmp_path / "downloaded"
    folder.mkdir()
    (folder / "doc.yaml").write_text(CASE.format(canary=str(tmp_path / "canary")))
    (folder / "tox.ini").write_text(_config_text("tox.ini", "--doctest-glob=*.yaml"))
    proc = _pytest(tmp_path, "downloaded")
    output = proc.stdout + proc.stderr
    assert not (tmp_path / "canary").exists(), output
    assert proc.returncode == 4 and "a pytest configuration file beside the case file" in output, output


def test_conformance_run_never_lets_pytest_read_a_planted_configuration(project: Path) -> None:
    """With pythonpath and -p, pytest imports the planted module before any plugin loads, so
    a plain pytest run can only refuse afterwards; conformance run passes -c with the
    project's configuration, so pytest never reads the planted one."""
    sub = project / "cases" / "sub"
    (sub / "pytest.ini").write_text(_config_text("pytest.ini", "-p evil --doctest-glob=*.yaml", pythonpath="."))
    (sub / "evil.py").write_text(f"open({str(project.parent / 'canary')!r}, 'w').write('plugin')\n")
    proc = _run(project, "conformance", "run", "cases/sub", "--frameworks", "numpy", "--plain")
    output = proc.stdout + proc.stderr
    assert not (project.parent / "canary").exists(), output
    assert "pytest.ini[refused]" in output and "evil.py[refused]" in output, output
    results = [p.read_text() for p in (project / "reports").rglob("results.json")]
    assert results and "views.planted.doc" in results[0], output  # the folder's cases still ran


def test_conformance_run_from_inside_a_case_folder_refuses_before_pytest_starts(project: Path) -> None:
    sub = project / "cases" / "sub"
    (sub / "pytest.ini").write_text(_config_text("pytest.ini", "-p evil", pythonpath="."))
    (sub / "evil.py").write_text(f"open({str(project.parent / 'canary')!r}, 'w').write('plugin')\n")
    proc = _run(sub, "conformance", "run", ".", "--frameworks", "numpy", "--plain")
    output = proc.stdout + proc.stderr
    assert not (project.parent / "canary").exists(), output
    assert proc.returncode == 2, output
    assert f"{sub.resolve() / 'pytest.ini'}: a pytest configuration file in the case folder" in output, output


def test_control_plain_pytest_imports_a_planted_plugin_before_any_plugin_can_refuse(project: Path) -> None:
    """What no plugin can stop, and docs/security.md says: pytest acts on -p and pythonpath
    of the file it settled on before it loads plugins. The run is still refused."""
    sub = project / "cases" / "sub"
    (sub / "pytest.ini").write_text(_config_text("pytest.ini", "-p evil", pythonpath="."))
    (sub / "evil.py").write_text(f"open({str(project.parent / 'canary')!r}, 'w').write('plugin')\n")
    proc = _pytest(project, "cases/sub")
    assert (project.parent / "canary").exists()
    assert proc.returncode == 4 and "a pytest configuration file in the case folder" in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", list(INI_SECTION) + ["conftest.py", "__init__.py", "evil.pth"])
def test_lint_refuses_every_configuration_and_code_file_in_a_case_folder(project: Path, name: str) -> None:
    (project / "cases" / "sub" / name).write_text("[pytest]\n" if name not in TOML else "[pytest]\n")
    proc = _run(project, "conformance", "lint", "cases")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"cases/sub/{name}:1:1: CF010" in proc.stdout, proc.stdout
    if name in INI_SECTION:
        assert "a pytest configuration file" in proc.stdout, proc.stdout
