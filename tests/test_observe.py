"""The contributor workflow: `conformance new` -> `conformance observe` -> paste -> lint ->
run; and how observe splits what it saw into a shared expectation and overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_adapter import FakeAdapter

from conformance import registry
from conformance.kinds.base import shown
from conformance.load.reader import Vocabulary, load_file, load_text
from conformance.model import ResultKey
from conformance.run.engine import PASS, run
from conformance.tools.cli import main
from conformance.tools.lint import lint_paths
from conformance.tools.observe import (
    MAX_PAIR_NAMES,
    Observation,
    made_pairs,
    names_of,
    observe,
    out_pairs,
    probe_expect,
    related_pairs,
    render,
    split,
)
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
    with pytest.raises(SystemExit, match="unknown framework.s. mxnet"):
        main(["observe", "views.reshape.contiguous", "--frameworks", "mxnet"])


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


def test_a_compiled_mode_votes_for_nothing_and_differs_only_from_its_lineage() -> None:
    case = load_text(CASE, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    obs = [observation("torch", True, [5.0, 2.0]), observation("paddle", False, [1.0, 2.0], version=0),
           observation("numpy", True, [5.0, 2.0], version=None),
           # the modes of torch: one copies where torch shares, and so does the mode derived from it
           observation("torch_compile", False, [5.0, 2.0]), observation("torch_inductor", False, [5.0, 2.0]),
           # paddle's mode does what paddle does: paddle's override already says it
           observation("paddle_static", False, [1.0, 2.0], version=0),
           # three modes that copy could outvote the eager frameworks: they do not vote
           observation("jax_jit", False, [5.0, 2.0], version=None)]
    shared, overrides = split(case, obs)
    assert shared[ResultKey.parse("shares_memory.y.x")] is True
    assert overrides["torch_compile"] == keyed({"shares_memory.y.x": False})
    assert "torch_inductor" not in overrides and "paddle_static" not in overrides  # as their lineage's
    assert overrides["jax_jit"] == keyed({"shares_memory.y.x": False})
    raised = {"at": 1, "kind": "other", "type": "builtins.RuntimeError", "message": "compiler failed"}
    stopped = Observation("torch_compile", "1.0", observed={}, error=raised)
    _, overrides = split(case, [observation("torch", True, [5.0, 2.0]), stopped])
    assert overrides["torch_compile"][ResultKey("error")] == {"at": 1, "kind": "other", "torch_compile": raised}
    assert overrides["torch_compile"][ResultKey.parse("values.y")] is None  # never observed: not expected


def test_a_compiled_mode_differs_where_its_value_alone_would_not_be_written() -> None:
    # paddle_static's transpose is a dense copy ([2, 1]): alone not worth a strides line, but
    # eager Paddle's [1, 3] is expected of it, so the mode gets its own (cases/views/strides.yaml)
    case = load_text(CASE, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    eager = [Observation(fw, "1.0", observed=keyed({"strides.y": [1, 3]})) for fw in ("torch", "paddle", "numpy")]
    dense = Observation("paddle_static", "1.0", observed=keyed({"strides.y": [2, 1]}))
    same = Observation("torch_compile", "1.0", observed=keyed({"strides.y": [1, 3]}))
    shared, overrides = split(case, [*eager, dense, same])
    assert shared == keyed({"strides.y": [1, 3]})
    assert overrides == {"paddle_static": keyed({"strides.y": [2, 1]})}


def test_a_framework_that_raises_first_takes_no_entry_out_of_the_shared_expectation() -> None:
    case = load_text(CASE, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    boom = {"at": 1, "kind": "other", "type": "builtins.RuntimeError", "message": "no kernel"}
    raised = Observation("mindspore", "1.0", observed={}, error=boom)
    obs = [observation("torch", True, [5.0, 2.0]), observation("paddle", True, [5.0, 2.0]), raised]
    shared, overrides = split(case, obs)
    assert shared[ResultKey.parse("shares_memory.y.x")] is True and shared[ResultKey.parse("values.y")] == [5.0, 2.0]
    assert overrides["mindspore"][ResultKey.parse("values.y")] is None  # never observed: not expected there
    assert overrides["mindspore"][ResultKey("error")] == {"at": 1, "kind": "other", "mindspore": boom}
    assert "torch" not in overrides and "paddle" not in overrides
    # observed by half of the frameworks or fewer: written per framework, nothing shared
    shared, overrides = split(case, [observation("torch", True, [5.0, 2.0]), raised])
    assert ResultKey.parse("values.y") not in shared
    assert overrides["torch"][ResultKey.parse("values.y")] == [5.0, 2.0]


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


# --------------------------------------------------------------------------- warnings, output-output relations

SPLIT = """\
cases:
  - id: views.demo.halves
    title: t
    given: {x: [1.0, 2.0, 3.0, 4.0]}
    steps: ["a, b = x.split(2)"]
    expect: {}
"""


def test_two_outputs_that_share_an_allocation_but_no_element_are_related() -> None:
    """`a, b = x.split(2)`: the halves are one allocation without an element in common, the
    fact worth writing (same_storage true, shares_memory false); each half and x are a made
    pair (view or copy, whatever it is)."""
    case = load_text(SPLIT, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    obs = observe(case, registry.get_adapter("numpy"))
    shared, overrides = split(case, [obs])
    relations = {str(k): v for k, v in shared.items() if k.kind in ("shares_memory", "same_storage", "same_object")}
    assert relations == {"shares_memory.a.x": True, "shares_memory.b.a": False, "shares_memory.b.x": True,
                         "same_storage.b.a": True, "same_object.a.x": False, "same_object.b.x": False}
    text = render(case, [obs])
    assert ("      shares_memory: {a & x: true, b & a: false, b & x: true}\n"
            "      same_storage: {b & a: true}\n"
            "      same_object: {a & x: false, b & x: false}\n") in text


def relations(fw: str, shares: bool, storage: bool) -> Observation:
    return Observation(fw, "1.0", observed=keyed({"shares_memory.b.a": shares, "same_storage.b.a": storage,
                                                  "same_object.b.a": False}))


def test_same_storage_is_written_only_where_it_says_more_than_shares_memory() -> None:
    case = load_text(SPLIT, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    # two overlapping views: same_storage says nothing more, and (b, a) is no made pair
    shared, overrides = split(case, [relations("torch", True, True), relations("numpy", True, True)])
    assert set(map(str, shared)) == {"shares_memory.b.a"} and overrides == {}
    # two copies: nothing holds, nothing is written
    assert split(case, [relations("torch", False, False)]) == ({}, {})
    # halves of one allocation on torch, copies on paddle: written with paddle's override
    shared, overrides = split(case, [relations("torch", False, True), relations("numpy", False, True),
                                     relations("paddle", False, False)])
    assert shared == keyed({"shares_memory.b.a": False, "same_storage.b.a": True})
    assert overrides == {"paddle": keyed({"same_storage.b.a": False})}


def test_above_the_pair_limit_the_steps_relations_are_probed() -> None:
    """With more than MAX_PAIR_NAMES names, the pairs observed are those the steps relate: a
    result and its source (several steps apart: a view of a view), and two results of one
    source (the halves of a split); unrelated names are not paired."""
    steps = ["y = x.view(4)", "z = y.view(2, 2)", "a, b = x.split(2)", "c = t.clone()",
             "d = t.clone()", "e = u.clone()", "f = u.clone()"]
    text = SPLIT.replace('["a, b = x.split(2)"]', json.dumps(steps)).replace(
        "given: {x: [1.0, 2.0, 3.0, 4.0]}", "given: {x: [1.0, 2.0, 3.0, 4.0], t: [1.0], u: [1.0]}")
    case = load_text(text, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    names = names_of(case)
    assert len(names) > MAX_PAIR_NAMES
    assert made_pairs(case) == {("y", "x"), ("z", "y"), ("a", "x"), ("b", "x"), ("c", "t"), ("d", "t"),
                                ("e", "u"), ("f", "u")}
    pairs = set(related_pairs(case, names))
    assert {("z", "x"), ("b", "a"), ("a", "y"), ("a", "z"), ("d", "c"), ("f", "e")} <= pairs
    assert not {("c", "x"), ("e", "c"), ("u", "t"), ("t", "x")} & pairs
    assert set(probe_expect(case).checks["same_storage"]) == pairs

    # a compiled mode observes only what its caller holds (names_only): z stays related to x
    # through y, which is left out (before, leaving a made name out raised ValueError)
    held = [n for n in names if n != "y"]
    assert ("z", "x") in related_pairs(case, held) and ("y", "x") not in related_pairs(case, held)


def test_above_the_pair_limit_each_result_is_paired_with_the_out_tensors_it_was_written_into() -> None:
    """``r, r1 = sort(x, out=(o, o1))``: the out tensors are no source of the results (x is),
    yet whether each result is its out tensor is what an out= variant declares."""
    steps = ["r, r1 = sort(x, out=(o, o1))", "c = t.clone()", "d = t.clone()", "e = u.clone()"]
    text = SPLIT.replace('["a, b = x.split(2)"]', json.dumps(steps)).replace(
        "given: {x: [1.0, 2.0, 3.0, 4.0]}",
        "given: {x: [1.0, 2.0, 3.0, 4.0], o: [0.0], o1: {data: [0], dtype: int64}, t: [1.0], u: [1.0]}")
    case = load_text(text, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    names = names_of(case)
    assert len(names) > MAX_PAIR_NAMES and ("r", "o") not in made_pairs(case)
    assert out_pairs(case) == {("r", "o"), ("r", "o1"), ("r1", "o"), ("r1", "o1")}
    pairs = set(related_pairs(case, names))
    assert {("r", "o"), ("r1", "o1"), ("r", "x")} <= pairs
    assert not {("o", "x"), ("c", "o")} & pairs  # control: an out tensor is not related to the rest


def test_a_rebound_name_is_no_made_pair() -> None:
    text = SPLIT.replace('["a, b = x.split(2)"]', '["a, b = x.split(2)", "b = a.clone()"]')
    case = load_text(text, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    assert made_pairs(case) == {("a", "x"), ("b", "a")}  # not (b, x): b is rebound


def warned(fw: str, at: int | None, message: str = "UserWarning: x.T is (deprecated) here") -> Observation:
    return Observation(fw, "1.0", observed={}, warning=None if at is None else {"at": at, "message": message})


def test_warnings_are_split_like_errors() -> None:
    case = load_text(CASE, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    # one framework warns: its override says so, with an escaped regex of the message's start
    shared, overrides = split(case, [warned("numpy", None), warned("torch", 1), warned("paddle", None)])
    assert ResultKey("warning") not in shared
    assert overrides == {"torch": {ResultKey("warning"): {"at": 1, "message": "UserWarning: x.T is (deprecated) here"}}}
    text = render(case, [warned("numpy", None), warned("torch", 1), warned("paddle", None)])
    assert '          warning: {at: 1, match: "UserWarning: x\\\\.T is \\\\(deprecated\\\\) here"}\n' in text
    # most warn alike: shared, and the one that does not gets `warning: null`
    shared, overrides = split(case, [warned("numpy", None), warned("torch", 2), warned("paddle", 2)])
    assert shared[ResultKey("warning")]["at"] == 2
    assert overrides == {"numpy": {ResultKey("warning"): None}}
    assert "          warning: null\n" in render(case, [warned("numpy", None), warned("torch", 2), warned("paddle", 2)])
    # a tie: the shared expectation is no warning
    shared, overrides = split(case, [warned("torch", 1), warned("numpy", None)])
    assert ResultKey("warning") not in shared and set(overrides) == {"torch"}


def test_observe_keeps_the_first_warning_of_the_first_step_that_warns() -> None:
    text = SPLIT.replace('["a, b = x.split(2)"]', '["y = x.clone()", "z = x.warn()", "w = z.warn()"]')
    case = load_text(text, "t.yaml", Vocabulary(), draft=True).cases[0]
    obs = observe(case, FakeAdapter())
    assert obs.warning == {"at": 2, "message": "DeprecationWarning: this op is deprecated"}
