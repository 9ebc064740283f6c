"""The contributor workflow: `conformance new` -> `conformance observe` -> paste -> lint ->
run; and how observe splits what it saw into a shared expectation and overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance import registry
from conformance.kinds.base import shown
from conformance.load.reader import load_file, load_text
from conformance.model import ResultKey
from conformance.run.engine import PASS, run
from conformance.tools.cli import main
from conformance.tools.lint import lint_paths
from conformance.tools.observe import Observation, render, split
from conformance.tools.scaffold import ScaffoldError, scaffold


def test_new_observe_paste_lint_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "cases"
    assert main(["new", "views/flip_demo", "--root", str(root)]) == 0
    path = root / "views" / "flip_demo.yaml"
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=")
    # an empty expect is refused until observed
    assert [f.code for f in lint_paths([path], registry.vocabulary())] == ["CF009"]
    path.write_text(text.replace("      - y = x.T", "      - y = x.reshape(4)\n      - y[0] = 10.0"))
    capsys.readouterr()
    assert main(["observe", str(path), "--frameworks", "numpy"]) == 0
    observed = capsys.readouterr().out
    assert "    expect:\n      shares_memory: {y & x: true}\n      same_object: {y & x: false}\n" in observed
    assert "      values: {x: [[10.0, 2.0], [3.0, 4.0]], y: [10.0, 2.0, 3.0, 4.0]}\n" in observed
    # paste it over the empty expect: the case now lints clean and passes
    path.write_text(path.read_text().replace("    expect: {}\n", observed))
    assert lint_paths([path], registry.vocabulary()) == []
    case = load_file(path, registry.vocabulary()).cases[0]
    assert run(case, registry.get_adapter("numpy")).verdict == PASS


def test_new_refuses_bad_names_and_overwrites(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="is not FAMILY/NAME"):
        scaffold("Views/x", tmp_path)
    scaffold("views/x", tmp_path)
    with pytest.raises(ScaffoldError, match="already exists"):
        scaffold("views/x", tmp_path)


def test_new_modeline_points_at_the_schema(tmp_path: Path) -> None:
    path = scaffold("views/x", tmp_path)
    modeline = path.read_text().splitlines()[0]
    target = (path.parent / modeline.split("$schema=", 1)[1]).resolve()
    assert target.name == "case.schema.json" and target.parent.name == "data"


def test_observe_an_unknown_case_suggests_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["observe", "views.reshape.contiguos"]) == 2
    assert "no case 'views.reshape.contiguos'; did you mean 'views.reshape.contiguous'?" in capsys.readouterr().err


def test_observe_an_unknown_framework() -> None:
    with pytest.raises(SystemExit, match="unknown framework.s. jax"):
        main(["observe", "views.reshape.contiguous", "--frameworks", "jax"])


CASE = """\
cases:
  - id: views.demo.split
    title: t
    claims: {S3-03: holds}
    given: {x: [1.0, 2.0]}
    steps: ["y = x.reshape(2)", "y[0] = 5.0"]
    expect: {}
"""


def keyed(observed: dict[str, Any]) -> dict[ResultKey, Any]:
    """Observations keyed as the results file writes them, typed."""
    return {ResultKey.parse(key): value for key, value in observed.items()}


def observation(fw: str, shares: bool, values_x: list[float], error: dict | None = None,
                version: int | None = 1) -> Observation:
    observed = {"shares_memory.y.x": shares, "same_object.y.x": False, "values.x": values_x, "values.y": [5.0, 2.0]}
    if version is not None:
        observed["version_change.x"] = version
    return Observation(fw, "1.0", observed=keyed(observed), error=error,
                       unobservable=frozenset() if version is not None else frozenset({"version_change"}))


def test_split_majority_is_shared_and_the_others_get_overrides() -> None:
    case = load_text(CASE, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    obs = [observation("torch", True, [5.0, 2.0]), observation("paddle", False, [1.0, 2.0], version=0),
           observation("numpy", True, [5.0, 2.0], version=None)]
    shared, overrides = split(case, obs)
    assert shared == keyed({"shares_memory.y.x": True, "same_object.y.x": False, "values.x": [5.0, 2.0],
                            "values.y": [5.0, 2.0], "version_change.x": 1})
    # numpy cannot observe version counters, so it needs no override for them
    assert overrides == {"paddle": keyed({"shares_memory.y.x": False, "values.x": [1.0, 2.0], "version_change.x": 0})}
    text = render(case, obs)
    assert '      paddle:\n        reason: "TODO: why paddle differs' in text
    assert "        claims: {S3-03: holds}  # TODO: does each claim hold on paddle?" in text


def test_split_errors_by_step_and_kind() -> None:
    case = load_text(CASE, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    boom = {"at": 2, "kind": "other", "type": "builtins.ValueError", "message": "bad (thing) here"}
    obs = [observation("torch", True, [5.0, 2.0], error=boom), observation("paddle", True, [5.0, 2.0], error=boom),
           observation("numpy", True, [5.0, 2.0])]
    shared, overrides = split(case, obs)
    assert shared[ResultKey("error")] == {"at": 2, "kind": "other", "torch": boom, "paddle": boom}
    assert overrides == {"numpy": {ResultKey("error"): None}}
    text = render(case, obs)
    assert '        torch: {type: ValueError, match: "bad \\\\(thing\\\\) here"}' in text
    assert "          error: null" in text


def test_complex_values_are_shown_in_the_case_format() -> None:
    assert shown([1 + 2j, 3.0000001 - 1j]) == {"real": [1.0, 3.0], "imag": [2.0, -1.0]}
    assert shown([[0.1 + 0j]]) == {"real": [[0.1]], "imag": [[0.0]]}


OBSERVE_FAULTS = """\
cases:
  - id: observe.{name}
    title: "a framework that {name}s while observed"
    given: {{x: [1.0, 2.0]}}
    steps:
      - y = {name}(x)
    expect: {{}}
"""


@pytest.mark.parametrize("fault, said", [("abort", "crashed with signal SIGABRT"), ("hang", "timed out after 2 s")])
def test_observe_runs_in_the_sandbox_so_a_crash_or_hang_costs_one_framework(
        tmp_path: Path, fault: str, said: str) -> None:
    """`conformance observe` runs the steps in the framework process with the item
    timeout: an aborting or hanging framework is reported for that framework, the others
    are still observed, and the command exits 1."""
    import subprocess
    import sys

    from entry_points import TESTS, register, subprocess_env

    site = tmp_path / "site"
    register(site, "probe-adapters", {"faulty": "probe_adapters.faulty:FaultyAdapter"})
    path = tmp_path / "faults.yaml"
    path.write_text(OBSERVE_FAULTS.format(name=fault))
    proc = subprocess.run([sys.executable, "-m", "conformance", "observe", str(path), "--frameworks", "faulty,numpy",
                           "--case-timeout", "2"], capture_output=True, text=True, timeout=120,
                          env=subprocess_env(site, TESTS), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    said_line = next((line for line in proc.stdout.splitlines() if "# faulty: error: " in line), "")
    assert said in said_line, proc.stdout
    assert "# numpy: not applicable: numpy has no counterpart" in proc.stdout, proc.stdout
