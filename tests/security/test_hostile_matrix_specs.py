"""`conformance matrix SPEC...` with hostile release specs (security issue 32). A spec becomes
a requirement handed to pip or uv and each version a file name (``OUT/FRAMEWORK/VERSION.json``)
and an environment folder under ``--envs`` that is removed when stale, so the command takes a
registered framework and PEP 440 versions only, refuses anything else with a clear message
before anything runs, and every path it builds stays inside ``--out`` and ``--envs`` (a link
planted in either included). No environment is made here: the installer is never reached.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from packaging.version import InvalidVersion, Version  # noqa: E402

from conformance.tools import matrix  # noqa: E402
from conformance.tools.cli import main  # noqa: E402

BUDGET = settings(max_examples=300, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
CANARY_TEXT = "canary: nothing may write here\n"

HOSTILE = {
    "numpy==../../x": "a path is not a release",
    "numpy==1.0/../../../x": "a path is not a release",
    "numpy==..": "version '..' is not a PEP 440 version",
    "numpy==C:\\x": "a path is not a release",
    "-r": "a pip option is not a release",
    "-rrequirements.txt": "a pip option is not a release",
    "--index-url=https://evil.example/simple": "a pip option is not a release",
    "-e.": "a pip option is not a release",
    "numpy==-r": "version '-r' is not a PEP 440 version",
    "numpy==--extra-index-url": "version '--extra-index-url' is not a PEP 440 version",
    "numpy==1.0 --index-url https://evil.example": "holds a blank",
    "numpy @ file:///tmp/evil": "holds a blank",
    "numpy@file:///tmp/evil": "a URL or direct reference (@) is not a release",
    "numpy==1.0@https://evil.example/numpy.whl": "a URL or direct reference (@) is not a release",
    "https://evil.example/numpy-1.0.whl": "a URL or direct reference (@) is not a release",
    "git+https://evil.example/numpy==1.0": "a URL or direct reference (@) is not a release",
    "numpy==1.0;python_version>'3'": "an environment marker (;) is not taken",
    "numpy>=1.0": "only == pins a release",
    "numpy~=1.0": "only == pins a release",
    "numpy!=1.0": "only == pins a release",
    "numpy===1.0": "only == pins a release",
    "numpy==1.0==2.0": "only == pins a release",
    "numpy==1.0\n": "holds a blank",
    "numpy==\t1.0": "holds a blank",
    "numpy==1.0,\u00a02.0": "holds a blank",
    " numpy==1.0": "holds a blank",
    "numpy": "write PACKAGE==V1,V2",
    "numpy==": "write PACKAGE==V1,V2",
    "": "an empty release spec",
    "numpy==1.0,,2.0": "an empty version",
    "numpy[extra]==1.0": "'numpy[extra]' is no registered framework's package",
    "nonesuch==1.0": "'nonesuch' is no registered framework's package",
    "numpy==1.0.x": "is not a PEP 440 version",
    "numpy==\u0661.\u0660": "is not a PEP 440 version",  # Arabic-Indic digits
    "numpy==1.0\x00": "is not a PEP 440 version",
    "numpy==1.0$(touch${IFS}x)": "is not a PEP 440 version",
    "numpy==*": "is not a PEP 440 version",
    "numpy==1." + "0" * 80: "characters long; at most 64",
}


@pytest.mark.parametrize("spec, says", HOSTILE.items(), ids=[repr(s)[1:-1][:40] or "empty" for s in HOSTILE])
def test_a_hostile_spec_is_refused_with_why(spec: str, says: str) -> None:
    with pytest.raises(matrix.MatrixError) as raised:
        matrix.parse_releases(["numpy==2.4.6", spec])
    assert len(raised.value.problems) == 1
    (problem,) = raised.value.problems
    assert problem.startswith(repr(spec[:120]) + ": ") and says in problem, problem


def test_every_problem_is_said_at_once() -> None:
    with pytest.raises(matrix.MatrixError) as raised:
        matrix.parse_releases(["-r", "numpy==../x", "torch==2.13.0", "numpy==1.0 x"])
    assert [p.split(":")[0] for p in raised.value.problems] == ["'-r'", "'numpy==../x'", "'numpy==1.0 x'"]


@pytest.mark.parametrize("spec, releases", [
    ("numpy==1.26.4,2.0.2", [("numpy", "numpy", "1.26.4"), ("numpy", "numpy", "2.0.2")]),
    ("paddle==3.0.0", [("paddle", "paddlepaddle", "3.0.0")]),
    ("PaddlePaddle==3.3.1", [("paddle", "paddlepaddle", "3.3.1")]),
    ("torch==2.13.0+cpu", [("torch", "torch", "2.13.0+cpu")]),
    ("jax==0.9.2,0.10.0rc1", [("jax", "jax", "0.9.2"), ("jax", "jax", "0.10.0rc1")]),
    ("numpy==1!2.0.post1", [("numpy", "numpy", "1!2.0.post1")]),
    ("numpy==2.1.0.dev0", [("numpy", "numpy", "2.1.0.dev0")]),
])
def test_real_specs_are_taken(spec: str, releases: list[tuple[str, str, str]]) -> None:
    assert [(r.framework, r.package, r.version) for r in matrix.parse_releases([spec])] == releases


@given(st.text(max_size=40))
@settings(BUDGET)
def test_any_version_is_refused_or_a_plain_pep_440_one(version: str) -> None:
    try:
        (release,) = matrix.parse_releases([f"numpy=={version}"])
    except (matrix.MatrixError, ValueError):
        return
    assert release.version == version
    Version(version)  # raises InvalidVersion if not
    assert not any(c.isspace() or c in "/\\@;:<>=~*$`'\"" for c in version) and version not in (".", "..")
    out, envs = Path("/nonexistent/out"), Path("/nonexistent/envs")
    assert matrix.results_path(release, out).parent == out / "numpy"
    assert matrix.environment_path(release, envs).parent == envs


@given(st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,3}((a|b|rc)[0-9])?(\.post[0-9])?(\+[a-z0-9]{1,5})?", fullmatch=True))
@settings(BUDGET, max_examples=100)
def test_pep_440_versions_are_taken(version: str) -> None:
    try:
        Version(version)
    except InvalidVersion:
        return
    assert [r.version for r in matrix.parse_releases([f"torch=={version}"])] == [version]


# ---- the command: refused before anything is made or run


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """--out and --envs inside a work folder with a canary beside them; running a release
    or making an environment fails the test."""
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "canary.txt").write_text(CANARY_TEXT)
    monkeypatch.chdir(work)

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        pytest.fail("the matrix went on to make an environment or run a release")

    monkeypatch.setattr(matrix, "ensure_environment", forbidden)
    monkeypatch.setattr(matrix.subprocess, "run", forbidden)
    return {"root": tmp_path, "work": work, "out": work / "releases", "envs": work / "envs"}


def written(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("spec", list(HOSTILE), ids=[repr(s)[1:-1][:40] or "empty" for s in HOSTILE])
def test_the_command_refuses_a_hostile_spec_cleanly(spec: str, places: dict[str, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    before = written(places["root"])
    # after "--" even "-r" is a spec (before it, an option the command does not know is
    # pytest's, handed to the runs: never to pip)
    code = main(["matrix", "--out", str(places["out"]), "--envs", str(places["envs"]), "--", "numpy==2.4.6", spec])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err
    assert err.startswith(f"conformance matrix: {spec[:120]!r}: ")
    assert written(places["root"]) == before  # not even --envs is made
    assert (places["root"] / "canary.txt").read_text() == CANARY_TEXT


def test_a_link_in_out_cannot_send_the_results_elsewhere(places: dict[str, Path],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = places["root"] / "elsewhere"
    elsewhere.mkdir()
    places["out"].mkdir()
    (places["out"] / "numpy").symlink_to(elsewhere)
    code = main(["matrix", "numpy==2.4.6", "--out", str(places["out"]), "--envs", str(places["envs"])])
    err = capsys.readouterr().err
    assert code == 2
    assert f"conformance matrix: {places['out'] / 'numpy' / '2.4.6.json'}: outside --out ({places['out']}); " \
           "nothing is written outside it" in err
    assert list(elsewhere.iterdir()) == [] and not places["envs"].exists()


def test_a_link_in_envs_cannot_have_a_folder_elsewhere_removed(places: dict[str, Path],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    precious = places["root"] / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    places["envs"].mkdir()
    release = matrix.parse_releases(["numpy==2.4.6"])[0]
    name = f"{release.slug}-py{sys.version_info.major}.{sys.version_info.minor}"
    (places["envs"] / name).symlink_to(precious)  # a stale environment is removed whole
    code = main(["matrix", "numpy==2.4.6", "--out", str(places["out"]), "--envs", str(places["envs"])])
    assert code == 2 and "outside --envs" in capsys.readouterr().err
    assert (precious / "keep.txt").read_text() == "mine"
    with pytest.raises(matrix.MatrixError):
        matrix.environment_path(release, places["envs"])


def test_a_release_made_in_code_is_checked_too(places: dict[str, Path]) -> None:
    """run_release is public: a Release built with a hostile version never reaches a path."""
    for version in ("../../../canary", "/etc/x", "1.0/../../x", ""):
        with pytest.raises(matrix.MatrixError):
            matrix.run_release(matrix.Release("numpy", "numpy", version), places["out"], places["envs"])
    assert written(places["root"]) == ["canary.txt", "work"]


def test_a_release_that_cannot_install_writes_inside_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("could not install numpy==2.4.6 (uv exit status 1): offline")

    monkeypatch.setattr(matrix, "ensure_environment", refuse)
    out, envs = tmp_path / "out", tmp_path / "envs"
    assert main(["matrix", "numpy==2.4.6,1!2.0+local", "--out", str(out), "--envs", str(envs)]) == 1
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.json")) == \
        ["out/numpy/1!2.0+local.json", "out/numpy/2.4.6.json"]
    data = json.loads((out / "numpy" / "2.4.6.json").read_text())
    assert data["run"]["release"]["error"].startswith("could not install numpy==2.4.6")
    assert "conformance matrix: 0 of 2 releases ran" in capsys.readouterr().out
