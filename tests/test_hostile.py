"""Hostile case files cannot run code (docs/security.md).

Each file under tests/hostile/ is one attack, with a header saying what it attacks and the
refusal it must get::

    # attack: <what it attacks>
    # live: yaml | python          (only where the file carries a {SENTINEL} payload)
    # expect: CODE at LINE: <message fragment>

Every file is refused with exactly that code, line and message, plus a fix, by the loader,
by ``conformance lint`` (in process and as the CLI in a subprocess) and by a pytest run
(a failing ``[load]`` item, not a collection error). A payload that would create the
sentinel file ``{SENTINEL}`` gets the real path of a file in a fresh folder, which must
still be missing afterwards; a control test runs the same payloads the unsafe way
(``yaml.unsafe_load``, Python ``exec``) to show that they are live, so that a missing
sentinel means the suite refused them, not that they were broken.

Oversized inputs are measured with tracemalloc: the peak of traced memory during the load
stays under a few MB (``ru_maxrss`` is the process's high-water mark, which a test can
only raise, so it cannot show that an allocation did not happen).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import io
import os
import re
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy
import pytest
import yaml

from conformance import limits, registry
from conformance.load import steplist, steps
from conformance.load.reader import LoadResult, Vocabulary, load_file, load_text
from conformance.model import CaseFormatError
from conformance.tools.lint import lint_paths
from conformance.yamlvalues import fields, yamlsrc

pytest_plugins = ["pytester"]

HOSTILE = Path(__file__).resolve().parent / "hostile"
ROOT = Path(__file__).resolve().parent.parent
EXPECT = re.compile(r"^# expect: (CF\d{3}) at (\d+): (.+)$", re.M)
LIVE = re.compile(r"^# live: (yaml|python)$", re.M)
PLACEHOLDER = "{SENTINEL}"
PEAK_LIMIT = 4_000_000  # bytes of traced memory; reading a file alone takes 1 MB (the read buffer)


@dataclass(frozen=True)
class Hostile:
    path: Path
    code: str
    line: int
    message: str
    live: str | None  # how the payload would run if it were not refused

    @property
    def name(self) -> str:
        return self.path.stem

    def text(self, sentinel: Path) -> str:
        return self.path.read_text(encoding="utf-8").replace(PLACEHOLDER, str(sentinel / self.name))


def read_fixture(path: Path) -> Hostile:
    text = path.read_text(encoding="utf-8")
    expects = EXPECT.findall(text)
    assert len(expects) == 1, f"{path.name}: needs exactly one '# expect: CODE at LINE: message'"
    (code, line, message), = expects
    live = LIVE.search(text)
    return Hostile(path, code, int(line), message, live.group(1) if live else None)


FIXTURES = [read_fixture(p) for p in sorted(HOSTILE.glob("*.yaml"))]
LIVE_FIXTURES = [f for f in FIXTURES if f.live]


def _ids(fixtures: list[Hostile]) -> list[str]:
    return [f.name for f in fixtures]


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return registry.vocabulary()


def write_all(folder: Path, sentinel: Path) -> dict[str, Path]:
    """The fixtures with the real sentinel path in their payloads, as files in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    sentinel.mkdir(parents=True, exist_ok=True)
    written = {}
    for fixture in FIXTURES:
        target = folder / fixture.path.name
        target.write_text(fixture.text(sentinel), encoding="utf-8")
        written[fixture.name] = target
    return written


def created(sentinel: Path) -> list[str]:
    return sorted(p.name for p in sentinel.iterdir())


def peak_memory(load: Callable[[], LoadResult]) -> tuple[LoadResult, int]:
    """The result of ``load`` and the peak of traced memory (bytes) while it ran."""
    tracemalloc.start()
    try:
        result = load()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def only_error(result: LoadResult) -> CaseFormatError:
    assert not result.cases, [c.id for c in result.cases]
    assert len(result.errors) == 1, [e.render() for _, e in result.errors]
    return result.errors[0][1]


# ---- the corpus of attacks


def test_there_is_a_fixture_for_each_kind_of_attack() -> None:
    prefixes = {f.name.split("_")[0] for f in FIXTURES}
    assert prefixes == {"yaml", "step", "size"}
    assert len(FIXTURES) >= 50


@pytest.mark.parametrize("fixture", FIXTURES, ids=_ids(FIXTURES))
def test_fixture_states_its_attack(fixture: Hostile) -> None:
    text = fixture.path.read_text(encoding="utf-8")
    assert text.startswith("# attack: ")
    # a payload can only be shown dead if it is shown live too, and the other way round
    assert (PLACEHOLDER in text) == (fixture.live is not None)


@pytest.mark.parametrize("fixture", LIVE_FIXTURES, ids=_ids(LIVE_FIXTURES))
def test_control_the_payload_runs_when_read_the_unsafe_way(fixture: Hostile, tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    sentinel.mkdir()
    text = fixture.text(sentinel)
    if fixture.live == "yaml":
        # the reader the suite must never use (the static test below keeps it out of the sources)
        yaml.unsafe_load(text)
    else:
        namespace: dict[str, Any] = {"os": os, "subprocess": subprocess, "sys": sys, "importlib": importlib,
                                     "builtins": builtins, "np": numpy, "x": [1.0, 2.0]}
        case = yaml.safe_load(text)["cases"][0]
        made = [f"{name} = {spec['from']}" for name, spec in (case.get("given") or {}).items()
                if isinstance(spec, dict) and "from" in spec]
        for step in [*made, *case["steps"]]:
            try:
                exec(step, namespace)  # noqa: S102 - the control: what running the step as Python would do
            except Exception:  # noqa: BLE001 - the payload runs before the step fails, if it fails
                pass
        for value in namespace.values():
            if isinstance(value, io.IOBase):
                value.close()
    assert created(sentinel) == [fixture.name]


def test_security_doc_lists_every_fixture_and_the_limits_in_the_code() -> None:
    doc = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert [f.name for f in FIXTURES if f"`{f.name}`" not in doc] == []
    bounds = {"yamlsrc.MAX_FILE_BYTES": yamlsrc.MAX_FILE_BYTES, "yamlsrc.MAX_DEPTH": yamlsrc.MAX_DEPTH,
              "yamlsrc.MAX_NUMBER_CHARS": yamlsrc.MAX_NUMBER_CHARS, "limits.MAX_ELEMENTS": limits.MAX_ELEMENTS,
              "fields.MAX_DIMS": fields.MAX_DIMS, "steplist.MAX_STEPS": steplist.MAX_STEPS,
              "steps.MAX_STEP_CHARS": steps.MAX_STEP_CHARS}
    rows = {name: next((line for line in doc.splitlines() if line.endswith(f"| `{name}` |")), "")
            for name in bounds}
    assert [name for name, value in bounds.items() if f"| {value:,}" not in rows[name]] == []


# ---- refused by the loader, lint, the CLI and a pytest run


@pytest.mark.parametrize("fixture", FIXTURES, ids=_ids(FIXTURES))
def test_fixture_is_refused_at_load_with_its_code_line_and_fix(
        fixture: Hostile, tmp_path: Path, vocabulary: Vocabulary) -> None:
    sentinel = tmp_path / "sentinel"
    sentinel.mkdir()
    path = tmp_path / fixture.path.name
    path.write_text(fixture.text(sentinel), encoding="utf-8")
    error = only_error(load_file(path, vocabulary, display_path="cases/hostile.yaml"))
    assert (error.code, error.location.file, error.location.line) == (fixture.code, "cases/hostile.yaml", fixture.line)
    assert fixture.message in error.message
    assert error.location.column >= 1
    assert error.hint, "the refusal must say how to fix it"
    if fixture.live is None:  # (a payload's message holds the sentinel's path, of any length)
        assert len(error.render()) < 400  # an oversized input is not repeated in its own message
    assert created(sentinel) == []


def test_lint_reports_each_fixture_once(tmp_path: Path, vocabulary: Vocabulary) -> None:
    sentinel = tmp_path / "sentinel"
    written = write_all(tmp_path / "cases", sentinel)
    findings = lint_paths([tmp_path / "cases"], vocabulary)
    got = sorted((Path(f.location.file).stem, f.code, f.location.line) for f in findings)
    assert got == sorted((f.name, f.code, f.line) for f in FIXTURES)
    messages = {Path(f.location.file).stem: f.message for f in findings}
    assert [f.name for f in FIXTURES if f.message not in messages[f.name]] == []
    assert all(f.hint for f in findings)
    assert len(written) == len(FIXTURES) and created(sentinel) == []


def test_lint_cli_in_a_subprocess(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    write_all(tmp_path / "cases", sentinel)
    run = subprocess.run([sys.executable, "-m", "conformance", "lint", "cases"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    for fixture in FIXTURES:
        assert re.search(rf"^cases/{fixture.path.name}:{fixture.line}:\d+: {fixture.code} ", run.stdout, re.M), \
            fixture.name
    assert f"{len(FIXTURES)} file(s), {len(FIXTURES)} problem(s)" in run.stderr
    assert created(sentinel) == []


def test_pytest_run_fails_one_load_item_per_fixture(pytester: pytest.Pytester) -> None:
    sentinel = pytester.path / "sentinel"
    write_all(pytester.path / "cases" / "hostile", sentinel)
    pytester.makeini("[pytest]\nconformance_paths = cases\nconformance_frameworks = numpy, torch, paddle\n")
    result = pytester.runpytest("-rf", "-p", "no:cacheprovider")
    # refused cases are failing items, not collection errors that would stop the run
    result.assert_outcomes(failed=len(FIXTURES))
    output = result.stdout.str()
    for fixture in FIXTURES:
        nodeid = f"cases/hostile/{fixture.path.name}::"
        assert re.search(rf"^FAILED {re.escape(nodeid)}\S+\[load\]", output, re.M), fixture.name
        location = f"cases/hostile/{fixture.path.name}:{fixture.line}:"
        assert any(location in line and fixture.message in line for line in result.outlines), fixture.name
    assert created(sentinel) == []


# ---- oversized inputs: refused without allocating what they describe


SIZE_FIXTURES = [f for f in FIXTURES if f.name.startswith("size_")]


@pytest.mark.parametrize("fixture", SIZE_FIXTURES, ids=_ids(SIZE_FIXTURES))
def test_oversized_fixture_is_refused_in_little_memory(fixture: Hostile, vocabulary: Vocabulary) -> None:
    result, peak = peak_memory(lambda: load_file(fixture.path, vocabulary))
    assert only_error(result).code == fixture.code
    assert peak < PEAK_LIMIT, f"{peak / 1e6:.1f} MB"


def _case_text(given: str = "{x: [1.0]}", steps_text: str = "[y = x + 1]") -> str:
    return (f"cases:\n  - id: hostile.size.generated\n    title: t\n    given: {given}\n"
            f"    steps: {steps_text}\n    expect: {{shape: {{x: [1]}}}}\n")


# text far over the byte limit, each a way of writing something huge
OVER_THE_BYTE_LIMIT = {
    "a million steps": _case_text(steps_text="[" + ", ".join(["y = x + 1"] * 1_000_000) + "]"),
    "a million-element nested list": _case_text(given="{x: [" + ", ".join(["[" + "1.0, " * 999 + "1.0]"] * 1000) + "]}"),  # noqa: E501
    "a 2 MB step": _case_text(steps_text="['y = x" + " + x" * 500_000 + "']"),
    "2 MB of title": "cases:\n  - id: a.b\n    title: '" + "a" * 2_000_000 + "'\n",
}


@pytest.mark.parametrize("text", OVER_THE_BYTE_LIMIT.values(), ids=OVER_THE_BYTE_LIMIT.keys())
def test_text_over_the_byte_limit_is_refused_before_it_is_parsed(
        text: str, tmp_path: Path, vocabulary: Vocabulary) -> None:
    assert len(text) > yamlsrc.MAX_FILE_BYTES
    # load_text applies the same byte limit as load_file (the limit is in yamlsrc.parse)
    result, peak = peak_memory(lambda: load_text(text, "cases/big.yaml", vocabulary))
    error = only_error(result)
    assert (error.location.line, error.message) == (1, f"file is larger than {yamlsrc.MAX_FILE_BYTES} bytes")
    assert peak < PEAK_LIMIT
    path = tmp_path / "big.yaml"
    path.write_text(text, encoding="utf-8")
    result, peak = peak_memory(lambda: load_file(path, vocabulary))
    assert only_error(result).message == error.message
    assert peak < PEAK_LIMIT


def test_a_huge_file_is_not_read_whole(tmp_path: Path, vocabulary: Vocabulary) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as stream:
        stream.write(b"cases:\n  - id: a.b\n    given: {x: [[[")
        stream.truncate(4 << 30)  # a sparse 4 GiB file: no disk used, but reading it whole would be 4 GiB
    result, peak = peak_memory(lambda: load_file(path, vocabulary))
    assert only_error(result).message == f"file is larger than {yamlsrc.MAX_FILE_BYTES} bytes"
    assert peak < PEAK_LIMIT


def test_step_limit_is_checked_before_any_step_is_parsed(monkeypatch: pytest.MonkeyPatch,
                                                         vocabulary: Vocabulary) -> None:
    # as many steps as a quick test affords, under the byte limit so that the step limit,
    # not the file size, refuses them
    count = 10_000
    text = _case_text(steps_text="[" + ", ".join(["y = x + 1"] * count) + "]")
    assert len(text) < yamlsrc.MAX_FILE_BYTES

    def parse_step_must_not_run(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a step was parsed before the step count was checked")

    monkeypatch.setattr(steplist, "parse_step_uses", parse_step_must_not_run)
    error = only_error(load_text(text, "cases/steps.yaml", vocabulary))
    assert error.message == f"a case has at most {steplist.MAX_STEPS} steps ({count} given)"
    assert error.location.line == 5


def test_a_long_step_is_refused_before_python_parses_it(monkeypatch: pytest.MonkeyPatch,
                                                        vocabulary: Vocabulary) -> None:
    text = _case_text(steps_text="['y = x" + " + x" * 10_000 + "']")  # 40 kB of step, under the byte limit

    def ast_parse_must_not_run(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the over-long step reached ast.parse")

    monkeypatch.setattr(steps.ast, "parse", ast_parse_must_not_run)
    result, peak = peak_memory(lambda: load_text(text, "cases/long.yaml", vocabulary))
    error = only_error(result)
    assert f"a step is at most {steps.MAX_STEP_CHARS} characters" in error.message
    assert len(error.message) < 200 and peak < PEAK_LIMIT


def test_an_integer_written_with_100000_digits_is_refused_unconverted(vocabulary: Vocabulary) -> None:
    digits = "1" + "0" * 100_000  # 10**100000, past Python's 4300-digit conversion limit
    result, peak = peak_memory(lambda: load_text(_case_text(given=f"{{x: [{digits}]}}"), "cases/int.yaml",
                                                    vocabulary))
    error = only_error(result)
    assert error.message == f"a number written with 100001 characters (at most {yamlsrc.MAX_NUMBER_CHARS})"
    assert error.location.line == 4 and peak < PEAK_LIMIT


@pytest.mark.parametrize("opening", ["[", "{a: "], ids=["lists", "mappings"])
def test_nesting_is_refused_at_the_depth_limit_not_by_recursion(opening: str, vocabulary: Vocabulary) -> None:
    depth = 100_000  # far past Python's recursion limit
    closing = "]" if opening == "[" else "}"
    text = _case_text(given="{x: " + opening * depth + "1" + closing * depth + "}")
    error = only_error(load_text(text, "cases/deep.yaml", vocabulary))  # (the memory: size_deep_* fixtures)
    assert error.message == f"YAML nesting deeper than {yamlsrc.MAX_DEPTH} levels"
    assert error.location.line == 4


# ---- no eval, exec or unsafe loading in the sources

# Calls that would run or import what they are given. Checked in the syntax tree rather than
# by grep, so that methods of the same name (the engine's ``self.eval``, a layer's
# ``.eval()``) and words in strings and comments are not mistaken for them.
FORBIDDEN_CALLS = {
    "eval", "exec", "compile", "__import__", "importlib.import_module", "importlib.__import__",
    "yaml.load", "yaml.load_all", "yaml.unsafe_load", "yaml.unsafe_load_all", "yaml.full_load",
    "yaml.full_load_all", "pickle.load", "pickle.loads", "marshal.load", "marshal.loads",
    "runpy.run_path", "runpy.run_module",
}
# 'from X import name' of the same functions, which would hide them behind a plain name
FORBIDDEN_IMPORTS = {call.rpartition(".")[::2] for call in FORBIDDEN_CALLS if "." in call}
SAFE_YAML_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"}
# (file, function, call): the uses that are not case text, each with the reason
ALLOWED = {
    ("conformance/registry.py", "_load", "importlib.import_module"):
        "imports an adapter named by the built-in table or an installed package's entry point, "
        "never by a case file",
    ("adapters/base.py", "setup", "importlib.import_module"):
        "imports the modules an adapter class declares in its imports_first (adapter code), never a "
        "name from a case file",
    ("conformance/run/function.py", "build", "compile"):
        "compiles a syntax tree the suite builds from a case's validated IR (never text), after "
        "checking every node and name it holds: the compiled modes' function (docs/security.md)",
    ("conformance/tools/casewrite.py", "rewrite", "yaml.load"):
        "ruamel.yaml's round-trip loader (typ='rt': it builds no Python object from a tag) re-reads, "
        "for `observe --write` only, a case file the suite's own reader has already loaded without a "
        "problem, to write it back; the result is loaded again by that reader",
    ("conformance/tools/casewrite.py", "_update_case", "yaml.load"):
        "the same round-trip loader reading the YAML observe itself rendered",
}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def forbidden_uses(source: str) -> Iterator[tuple[str, int, str]]:
    """(function, line, call) for each forbidden call or import in ``source``."""
    tree = ast.parse(source)
    functions = {id(n): f.name for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (node.module, alias.name) in FORBIDDEN_IMPORTS:
                    yield functions.get(id(node), "<module>"), node.lineno, f"from {node.module} import {alias.name}"
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name not in FORBIDDEN_CALLS:
            continue
        if name in ("yaml.load", "yaml.load_all"):
            loader_arg = next((k.value for k in node.keywords if k.arg == "Loader"),
                              node.args[1] if len(node.args) > 1 else None)
            if loader_arg is not None and (_dotted(loader_arg) or "").rpartition(".")[2] in SAFE_YAML_LOADERS:
                continue
        yield functions.get(id(node), "<module>"), node.lineno, name


def source_files() -> list[Path]:
    return sorted((ROOT / "conformance").rglob("*.py")) + sorted((ROOT / "adapters").rglob("*.py"))


def test_no_eval_exec_or_unsafe_loading_in_the_sources() -> None:
    found = []
    for path in source_files():
        rel = path.relative_to(ROOT).as_posix()
        for function, line, call in forbidden_uses(path.read_text(encoding="utf-8")):
            if (rel, function, call) not in ALLOWED:
                found.append(f"{rel}:{line} in {function}(): {call}")
    assert found == []


def test_every_allowed_use_still_exists() -> None:
    # an exception that no longer matches anything is removed, so it cannot cover a new use
    present = {(path.relative_to(ROOT).as_posix(), function, call)
               for path in source_files() for function, _, call in forbidden_uses(path.read_text(encoding="utf-8"))}
    assert sorted(set(ALLOWED) - present) == []


@pytest.mark.parametrize("source, found", [
    ("eval(text)", "eval"),
    ("def f(t):\n    exec(t)", "exec"),
    ("compile(t, 'f', 'exec')", "compile"),
    ("__import__(name)", "__import__"),
    ("importlib.import_module(name)", "importlib.import_module"),
    ("yaml.load(text)", "yaml.load"),
    ("yaml.load(text, Loader=yaml.Loader)", "yaml.load"),
    ("yaml.load(text, yaml.UnsafeLoader)", "yaml.load"),
    ("yaml.unsafe_load(text)", "yaml.unsafe_load"),
    ("yaml.full_load(text)", "yaml.full_load"),
    ("pickle.loads(data)", "pickle.loads"),
    ("from pickle import loads", "from pickle import loads"),
    ("from importlib import import_module", "from importlib import import_module"),
    ("yaml.load(text, Loader=yaml.SafeLoader)", None),
    ("yaml.safe_load(text)", None),
    ("self.eval(expr)", None),
    ("layer.eval()", None),
    ("x = 'eval(' + 'exec('  # eval(text)", None),
])
def test_the_source_check_finds_what_it_looks_for(source: str, found: str | None) -> None:
    assert [call for _, _, call in forbidden_uses(source)] == ([found] if found else [])
