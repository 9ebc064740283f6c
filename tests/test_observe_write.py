"""`conformance observe --write`: the observed expectations go into the case file itself,
and nothing else in it changes (comments, key order, quoting, layout); a case that already
expects something is left alone unless --force; a rewrite that would not load, or would
reformat the file, writes nothing. Run as a contributor runs it: the command in a
subprocess (the frameworks in the sandbox), then lint and pytest on the file it wrote."""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import registry
from conformance.load.reader import load_file, load_text
from conformance.run.engine import not_applicable
from conformance.tools.casewrite import Update, WriteRefused, rewrite
from conformance.tools.lint import lint_paths
from conformance.yamlvalues.yamlsrc import MAX_FILE_BYTES

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = list(registry.BUILTIN)

# the first case of cases/views/split_family.yaml as a contributor has it before observing:
# its expect empty, with comments around it, a title in single quotes
SPLIT_EXPECT = "    expect:\n      shares_memory: {a & x: true, b & x: true}\n"
BEFORE = "    # observe fills this in (a comment before expect)\n    expect: {}  # empty until observed\n\n"


def conformance(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def draft_of_split_family(tmp_path: Path) -> tuple[Path, str]:
    text = (ROOT / "cases" / "views" / "split_family.yaml").read_text()
    start, end = text.index(SPLIT_EXPECT), text.index("  - id: views.split.sizes_list")
    text = text[:start] + BEFORE + text[end:]
    title = '    title: "split(2) returns views: a write through each piece reaches the input (false for Paddle: ' \
            'split copies)"\n'
    assert title in text
    text = text.replace(title, title.replace('"', "'"))
    text = text.replace("cases:\n", "# a comment the write keeps\ncases:\n", 1)
    path = tmp_path / "split_family.yaml"
    path.write_text(text)
    return path, text


def changed_lines(old: str, new: str) -> list[str]:
    """The old file's lines that the new one removed or replaced."""
    return [line[1:] for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
            if line.startswith("-") and not line.startswith("---")]


@pytest.mark.slow(reason="observes a case on every framework, each in its framework process")
def test_write_fills_an_empty_expect_and_keeps_everything_else(tmp_path: Path) -> None:
    path, before = draft_of_split_family(tmp_path)
    proc = conformance("observe", str(path), "--write", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""  # nothing to paste: it is in the file
    assert "wrote the observed expectations of views.split.pieces_share into" in proc.stderr
    assert "overrides for paddle, torch, each with a TODO reason to replace" in proc.stderr
    # an immutable framework's refusal is its verdict, said and not written; so is not applicable
    assert f"views.split.pieces_share: jax: refused: step 2 'a[0] = 10.0' ({path}:15) raised TypeError: " \
           "JAX arrays are immutable" in proc.stderr
    assert "views.split.pieces_share: array_api_strict: not applicable: the Array API standard has no split()" \
           in proc.stderr
    # the other cases already expect something: left as they are, said once
    assert "left 10 case(s) of" in proc.stderr and "views.split.sizes_list" in proc.stderr
    after = path.read_text()
    # only the empty expect's line was replaced; every other line, comment and quote is as it was
    assert changed_lines(before, after) == ["    expect: {}  # empty until observed"]
    assert "# a comment the write keeps\ncases:\n" in after
    assert "    title: 'split(2) returns views" in after
    written = after[after.index("    # observe fills this in"):after.index("  - id: views.split.sizes_list")]
    # the majority of the frameworks that observe a version counter (Paddle, MindSpore: 0) is
    # shared, torch's 2 its own: what was observed, for the contributor to review
    assert written == (
        "    # observe fills this in (a comment before expect)\n"
        "    expect:     # empty until observed\n"
        "      shares_memory: {a & x: true, b & a: false, b & x: true}\n"
        "      same_storage: {b & a: true}\n"
        "      same_object: {a & x: false, b & x: false}\n"
        "      values: {a: [10.0, 2.0], b: [3.0, 40.0], x: [10.0, 2.0, 3.0, 40.0]}\n"
        "      version_change: {x: 0}\n"
        "    frameworks:\n"
        "      paddle:\n"
        '        reason: "TODO: why paddle differs; cite its documentation or an upstream issue"\n'
        "        expect:\n"
        "          shares_memory: {a & x: false, b & x: false}\n"
        "          same_storage: {b & a: false}\n"
        "          values: {x: [1.0, 2.0, 3.0, 4.0]}\n"
        "      torch:\n"
        '        reason: "TODO: why torch differs; cite its documentation or an upstream issue"\n'
        "        expect:\n"
        "          version_change: {x: 2}\n"
        "\n")
    # it loads; lint refuses only the TODO reasons; every item that ran passes, the others
    # are skipped with their verdict (refused, not applicable)
    assert not load_file(path, registry.vocabulary()).errors
    assert [(f.code, f.location.line) for f in lint_paths([path], registry.vocabulary())] == [("CF012", 25),
                                                                                              ("CF012", 31)]
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA",
                          f"{path}::views.split.pieces_share"], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    # refused where the framework's arrays are immutable (JAX, TensorFlow), not applicable where
    # an operation has no counterpart (array-api-strict's split); and so on each compiled mode
    # of theirs: what the registry and the adapters' tables say, for every framework there is
    case = next(c for c in load_file(path, registry.vocabulary()).cases if c.id == "views.split.pieces_share")
    skipped = [fw for fw in FRAMEWORKS if not registry.framework((registry.lineage(fw) or (fw,))[0]).mutable
               or not_applicable(case, registry.get_adapter(fw)) is not None]
    assert {"jax", "tensorflow", "array_api_strict"} <= set(skipped) and {"torch", "numpy"}.isdisjoint(skipped)
    assert f"{len(FRAMEWORKS) - len(skipped)} passed, {len(skipped)} skipped" in run.stdout


def test_a_case_that_already_expects_is_left_alone_without_force(tmp_path: Path) -> None:
    path = tmp_path / "axes.yaml"
    before = (ROOT / "cases" / "views" / "axes.yaml").read_text()
    path.write_text(before)
    case = "views.transpose.t_attribute_three_d"
    proc = conformance("observe", str(path), "--write", "--frameworks", "torch,numpy", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # nothing written
    assert f"left 4 case(s) of {path} that already expect something as they are (--force replaces" in proc.stderr
    assert path.read_text() == before
    # --force replaces the expectations of every case (nothing is merged); a hand-written reason
    # of a framework that still differs is kept inside the new TODO reason, and lint refuses it
    proc = conformance("observe", str(path), "--write", "--force", "--frameworks", "torch,numpy", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "was not observed on paddle, jax, tensorflow, mindspore, array_api_strict: run pytest on it there " \
           "before committing" in proc.stderr
    after = path.read_text()
    assert "      shape: {y: [4, 3, 2]}\n" not in after  # the hand-written shape expectation went
    assert '        reason: "TODO: why torch differs; cite its documentation or an upstream issue (the reason ' \
           'before: torch documents Tensor.T on a tensor of other than 2 dimensions as deprecated' in after
    loaded = {c.id: c for c in load_file(path, registry.vocabulary()).cases}
    assert loaded[case].overrides["torch"].expect is not None
    assert {f.code for f in lint_paths([path], registry.vocabulary())} == {"CF012"}
    assert "--force only goes with --write" in conformance("observe", str(path), "--force", cwd=tmp_path).stderr


def test_warnings_are_observed_and_written_per_framework(tmp_path: Path) -> None:
    """torch warns that `.T` of a 3-D tensor is deprecated; NumPy does not: the warning goes
    into torch's override, as an escaped regex of its start, and the case passes on both."""
    text = (ROOT / "cases" / "views" / "axes.yaml").read_text()
    start = text.index("  - id: views.transpose.t_attribute_three_d")
    case = text[start:]
    case = case[:case.index("    expect:\n")] + "    expect: {}\n"
    path = tmp_path / "t3d.yaml"
    path.write_text("cases:\n" + case)
    proc = conformance("observe", str(path), "--frameworks", "torch,numpy", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("      torch:\n        reason: \"TODO: why torch differs; cite its documentation or an upstream issue\"\n"
            "        expect:\n"
            '          warning: {at: 1, match: "UserWarning: The use of `x\\\\.T` on tensors of dimension other"}\n'
            ) in proc.stdout
    proc = conformance("observe", str(path), "--write", "--frameworks", "torch,numpy", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    loaded, = load_file(path, registry.vocabulary()).cases
    warning = loaded.expect.merged(loaded.overrides["torch"].expect).checks["warning"]
    assert (warning.at, warning.match) == (1, "UserWarning: The use of `x\\.T` on tensors of dimension other")
    assert "warning" not in loaded.expect.checks
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(path),
                          "--frameworks", "torch,numpy"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr


def test_a_rewrite_that_would_not_load_writes_nothing(tmp_path: Path) -> None:
    """The file is near the size limit of a case file: with the observed values it would
    pass it, so the suite's reader would refuse it; nothing is written, and why is said."""
    path = tmp_path / "big.yaml"
    case = ("cases:\n  - id: views.big.reshape\n    title: t\n    given: {x: {data: [1.0, 2.0, 3.0, 4.0]}}\n"
            "    steps: ['y = x.reshape(2, 2)']\n    expect: {}\n")
    text = "#" * (MAX_FILE_BYTES - len(case) - 40) + "\n" + case  # 40 bytes short of the limit
    assert not load_text(text, "big.yaml", registry.vocabulary(), draft=True).errors
    path.write_text(text)
    proc = conformance("observe", str(path), "--write", "--frameworks", "numpy", cwd=tmp_path)
    assert proc.returncode == 1
    assert "the rewritten file would not load, so nothing was written" in proc.stderr
    assert "file is larger than 1000000 bytes" in proc.stderr
    assert path.read_text() == text


CASE = """\
cases:
  - id: views.demo.w
    title: "a demo"   # a comment on the title
    given: {x: [1.0, 2.0]}
    steps: ['y = x.reshape(2)']
    expect: {}
"""


def updated(text: str, lines: list[str]) -> str:
    case = load_text(text, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    return rewrite(text, "t.yaml", [Update(case, lines, set(FRAMEWORKS))], registry.vocabulary())


def test_rewrite_refuses_what_the_reader_refuses() -> None:
    with pytest.raises(WriteRefused, match=r"would not load.*CF002.*unknown name 'z'|would not load.*'z'"):
        updated(CASE, ["expect:", "  values: {z: [1.0]}"])
    assert updated(CASE, ["expect:", "  values: {y: [1.0, 2.0]}"]).endswith(
        "    expect:\n      values: {y: [1.0, 2.0]}\n")


def test_rewrite_reads_nothing_the_suites_reader_refuses() -> None:
    hostile = CASE.replace('title: "a demo"', 'title: !!python/object/apply:os.system ["true"]')
    with pytest.raises(WriteRefused, match="has a problem, so nothing was written"):
        rewrite(hostile, "t.yaml", [], registry.vocabulary())


def test_rewrite_refuses_a_file_it_would_reformat(tmp_path: Path) -> None:
    """A layout ruamel.yaml does not give back as it was (here, the list of cases not
    indented under 'cases:') would be rewritten whole: refused, nothing written."""
    text = CASE.replace("  - id", "- id").replace("\n    ", "\n  ")
    assert not load_text(text, "t.yaml", registry.vocabulary(), draft=True).errors
    with pytest.raises(WriteRefused, match=r"t.yaml:2: ruamel.yaml would rewrite this line even with nothing changed"):
        updated(text, ["expect:", "  values: {y: [1.0, 2.0]}"])
    path = tmp_path / "flat.yaml"
    path.write_text(text)
    proc = conformance("observe", str(path), "--write", "--frameworks", "numpy", cwd=tmp_path)
    assert proc.returncode == 1 and "ruamel.yaml would rewrite this line" in proc.stderr
    assert path.read_text() == text


NO_EXPECT = """\
cases:
  - id: views.demo.a
    title: a
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.reshape(2){comment}

  # the next case
  - id: views.demo.b
    title: b
    given: {x: [1.0, 2.0]}
    steps:
      - y = x.reshape(2)
"""


@pytest.mark.parametrize("comment", ["", "  # a comment on the last step"])
def test_expect_goes_after_the_steps_of_a_case_without_one_and_the_blank_line_stays_after_the_case(
        comment: str) -> None:
    """The blank line (and the comment) after a case with no ``expect:`` belong to its last
    step in ruamel.yaml; the new ``expect`` goes between the steps and them (it was refused:
    "the rewrite would change this line too")."""
    text = NO_EXPECT.replace("{comment}", comment)
    case = load_text(text, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    out = rewrite(text, "t.yaml", [Update(case, ["expect:", "  values: {y: [1.0, 2.0]}"], set(FRAMEWORKS))],
                  registry.vocabulary())
    assert out == text.replace(f"reshape(2){comment}\n\n", f"reshape(2){comment}\n    expect:\n"
                               "      values: {y: [1.0, 2.0]}\n\n", 1)


def test_rewrite_adds_frameworks_after_expect_and_replaces_only_observed_overrides() -> None:
    text = CASE.replace("    expect: {}\n", "    expect: {}\n    frameworks:\n      numpy:\n"
                                               "        not_applicable: \"a reason of the case's own\"\n")
    case = load_text(text, "t.yaml", registry.vocabulary(), draft=True).cases[0]
    lines = ["expect:", "  values: {y: [1.0, 2.0]}", "frameworks:", "  torch:", '    reason: "TODO: why"',
             "    expect:", "      values: {y: [2.0, 2.0]}"]
    out = rewrite(text, "t.yaml", [Update(case, lines, {"torch", "numpy"})], registry.vocabulary())
    assert out == CASE.replace("    expect: {}\n", (
        "    expect:\n      values: {y: [1.0, 2.0]}\n    frameworks:\n      numpy:\n"
        "        not_applicable: \"a reason of the case's own\"\n"
        '      torch:\n        reason: "TODO: why"\n        expect:\n          values: {y: [2.0, 2.0]}\n'))


def test_new_observe_write_lint_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CONTRIBUTING's workflow with --write: scaffold, write the steps, observe into the file,
    then the case lints clean and passes, and the scaffold's comments are still there."""
    from conformance.run.engine import PASS, run
    from conformance.tools.cli import main

    root = tmp_path / "cases"
    assert main(["new", "views/flip_demo", "--root", str(root)]) == 0
    assert "`conformance observe" in capsys.readouterr().out
    path = root / "views" / "flip_demo.yaml"
    path.write_text(path.read_text().replace("      - y = x.T", "      - y = x.reshape(4)\n      - y[0] = 10.0"))
    before = path.read_text()
    assert main(["observe", str(path), "--write", "--frameworks", "numpy"]) == 0
    after = path.read_text()
    assert changed_lines(before, after) == ["    expect: {}"]
    assert after.endswith("    expect:\n      shares_memory: {y & x: true}\n      same_object: {y & x: false}\n"
                          "      values: {x: [[10.0, 2.0], [3.0, 4.0]], y: [10.0, 2.0, 3.0, 4.0]}\n")
    assert lint_paths([path], registry.vocabulary()) == []
    case = load_file(path, registry.vocabulary()).cases[0]
    assert run(case, registry.get_adapter("numpy")).verdict == PASS
