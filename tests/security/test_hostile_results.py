"""Hostile results files (security issue 32). Results files are data from anyone: a pull
request can change ``releases/*/*.json``, and CI builds the changelog and the site from them.
Every command that reads them (report, site, merge, diff, changelog) reads them through one
validating reader (:func:`conformance.report.results.load_results`), driven here through the
real command line, in process:

- a document of the wrong shape (a wrong type at every field of the schema, every field
  missing, not JSON, not UTF-8, NaN, huge numbers, deep nesting, a link, a FIFO) is refused
  with exit status 2 and one message per problem naming the file and the JSON path, never a
  traceback, and nothing is written;
- a valid document whose every free string is hostile (``<script>``, ``javascript:`` links,
  Markdown links, ``../`` in ids and framework names, 400-character ids) renders: no markup
  from it in any ``.md`` (as GitHub renders it) or ``.html`` output, no file outside the
  output folder, every file name short enough for any file system;
- the validator agrees with the ``jsonschema`` package (a test dependency only) on the
  schema, apart from where it is documented to be stricter.

A canary file beside the outputs checks that nothing is written where it should not be.
"""

from __future__ import annotations

import copy
import functools
import html.parser
import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from results_factory import case_info, document, record, sample, typed_all  # noqa: E402
from site_links import check_links  # noqa: E402

from conformance.escaping import for_markdown  # noqa: E402
from conformance.load.reader import MAX_ID_LENGTH, Vocabulary, load_text  # noqa: E402
from conformance.report import changelog, results  # noqa: E402
from conformance.report.validate import Schema, SchemaError, json_path  # noqa: E402
from conformance.site import urls  # noqa: E402
from conformance.tools.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = json.loads((ROOT / "conformance" / "data" / "results.schema.json").read_text())
COMMIT = "0123456789abcdef0123456789abcdef01234567"
CANARY_TEXT = "canary: nothing may write here\n"
COMMANDS = ("report", "site", "merge", "diff", "changelog")
BUDGET = settings(max_examples=60, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                         HealthCheck.data_too_large])


# ---- documents


def full_document(version: str = "2.4.6", corpus: str = "c0ffee") -> dict[str, Any]:
    """A valid results document with every field the schema knows, optional ones included:
    every mutation below lands on a field the schema checks."""
    doc = sample()
    prod = [{"step": 1, "operation": "method:reshape", "result": "y", "input": "x"}]
    agree = doc["cases"]["views.reshape.agree"]
    agree.update(expect={"shares_memory.y.x": True, "values.y": [1.0]},
                 documentation={"paddle": {"says": "reshape returns a view", "source": "https://example.org/reshape",
                                           "contradicts": "shares_memory"}},
                 versioned={"numpy": [{"reason": "old releases copied", "not_applicable": False,
                                       "claims": {"S3-03": "does_not_hold"}, "versions": "<2.0"}]},
                 productions=prod)
    doc["environment"]["frameworks"]["numpy"]["version"] = version
    doc["environment"]["frameworks"]["torch_compile"] = {"version": "2.13.0", "devices": None}
    first = doc["results"][0]
    first.update(crash={"reason": "segfault", "culprit": ["views.reshape.agree", "torch"],
                        "tried": [["views.reshape.agree", "torch"]], "text": "crashes after views.reshape.agree"},
                 file="cases/views/c.yaml", line=3)
    first["behaviour"]["productions"] = [{"step": 1, "result": "y", "input": "x", "class": "view"}]
    first["behaviour"]["warnings"] = [{"at": 1, "message": "deprecated"}]
    first["observed"]["version_change.x"] = 1
    first["unobservable"] = ["version_change.y"]
    first["mismatches"] = [{"what": "values of y", "expected": [2.0], "observed": [1.0], "at": "c.yaml:9",
                            "step": 1, "detail": "the probe saw"}]
    first["steps"] = [{"number": 1, "text": "y = x.reshape(4)", "status": "error", "warnings": ["w"],
                       "error": {"type": "builtins.TypeError", "kind": "type_error", "message": "no"}}]
    errored = next(r for r in doc["results"] if r["outcome"] == "fail")
    errored["behaviour"]["error"] = {"at": 1, "kind": "type_error", "type": "builtins.TypeError", "message": "no"}
    doc["run"] = {"items": len(doc["results"]), "exit_status": 1, "partial": ["only some"], "corpus": corpus,
                  "corpus_items": 99, "shard": [1, 2], "date": "2026-11-24",
                  "commit": {"sha": COMMIT, "modified": False},
                  "merged_from": [{"file": "a.json", "items": 3, "shard": [1, 2], "platform": "Linux",
                                   "python": "3.11.7"}],
                  "release": {"framework": "numpy", "package": "numpy", "version": version, "installed": version}}
    return doc


def other_document(version: str = "1.26.4") -> dict[str, Any]:
    """A valid document to pair with a hostile one (diff, merge, changelog): other items of
    the same corpus revision, another release of the same framework."""
    doc = document({"views.other.case": case_info("views.other.case")},
                   [record("views.other.case", "numpy", pairs={("y", "x"): "view"})])
    doc["environment"]["frameworks"] = {"numpy": {"version": version, "devices": ["cpu"]}}
    doc["run"].update(corpus="c0ffee", release={"framework": "numpy", "package": "numpy", "version": version})
    return doc


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def replacements(value: Any) -> list[Any]:
    """Values of other JSON types than ``value``'s."""
    if isinstance(value, bool):
        return ["true", 1]
    if isinstance(value, (int, float)):
        return [str(value), [value]]
    if isinstance(value, str):
        return [7, {"text": value}]
    if value is None:
        return [{"x": 1}, 0]
    if isinstance(value, list):
        return [{"0": value[:1]}, "[]"]
    return [[value], 3.5]


def walk(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from walk(item, path + (i,))


def replaced(doc: dict[str, Any], path: tuple[Any, ...], value: Any = None, delete: bool = False) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    holder = out
    for part in path[:-1]:
        holder = holder[part]
    if delete:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return out


def mutations(doc: dict[str, Any]) -> list[tuple[tuple[Any, ...], str, str, dict[str, Any]]]:
    """(path, what was done, the kind of change, document) for every field: each replaced by
    values of two other types, and each key of an object deleted."""
    out = []
    for path, value in walk(doc):
        if not path:
            continue
        for other in replacements(value):
            out.append((path, f"{json_path(path)} = {json.dumps(other)[:30]}", type(other).__name__,
                        replaced(doc, path, other)))
        if isinstance(path[-1], str):
            out.append((path, f"{json_path(path)} deleted", "deleted", replaced(doc, path, delete=True)))
    return out


@functools.lru_cache(maxsize=1)
def reference_validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(SCHEMA)


def schema_valid(doc: Any) -> bool:
    """The verdict of the reference implementation (jsonschema, a test dependency only)."""
    return bool(reference_validator().is_valid(doc))


def shape(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """A path with its record indices and map keys (case ids, framework names) left out:
    the place in the schema it is at."""
    maps = ("cases", "frameworks", "overrides", "documentation", "versioned", "claims", "observed", "expect",
            "relations")
    return tuple(0 if isinstance(p, int) else "*" if i and path[i - 1] in maps else p for i, p in enumerate(path))


# ---- running the commands


class Workspace:
    """A folder with a canary file and the commands' output folders; :meth:`check` says
    what was written outside the outputs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.inputs = root / "in"
        self.inputs.mkdir()
        self.outputs = root / "out"
        self.outputs.mkdir()
        self.canary = root / "canary.txt"
        self.canary.write_text(CANARY_TEXT)
        self.other = write(self.inputs / "other.json", other_document())  # another release
        self.shard = write(self.inputs / "shard.json", other_document("2.4.6"))  # another shard of the run
        self.before = self.snapshot()

    def snapshot(self) -> dict[str, int]:
        return {str(p.relative_to(self.root)): p.lstat().st_mtime_ns for p in self.root.rglob("*")
                if not p.is_relative_to(self.outputs)}

    def argv(self, command: str, path: Path) -> list[str]:
        out = self.outputs / command
        return {"report": ["report", str(path), "--out", str(out)],
                "site": ["site", str(path), "--out", str(out), "--partial", "--releases", str(path), str(self.other)],
                "merge": ["merge", str(path), str(self.shard), "--out", str(out) + ".json"],
                "diff": ["diff", str(self.other), str(path), "--format", "md"],
                "changelog": ["changelog", str(path), str(self.other), "--out", str(out)]}[command]

    def check(self, inputs: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        assert self.canary.read_text() == CANARY_TEXT
        now = self.snapshot()
        made = sorted(set(now) - set(self.before) - set(inputs))
        assert not [m for m in made if not m.startswith("in" + os.sep)], f"written outside the outputs: {made}"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    place = Workspace(tmp_path)
    monkeypatch.chdir(place.inputs)  # a relative path that escapes lands in the workspace, where it is seen
    return place


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The command's exit status and output; an exception escaping it fails the test."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # noqa: B036 - any exception is a traceback the user would see
        pytest.fail(f"conformance {' '.join(argv)} raised {type(exc).__name__}: {exc}")
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# ---- wrong shapes: refused, with the file and the path


def test_the_full_document_is_valid_and_every_command_takes_it(work: Workspace,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    doc = full_document()
    assert schema_valid(doc)
    assert results.results_problems(doc) == ([], 0)
    path = write(work.inputs / "full.json", doc)
    for command in COMMANDS:
        code, _, err = run(work.argv(command, path), capsys)
        assert code in (0, 1), (command, err)
    work.check()


MUTATIONS = mutations(full_document())
# through the command line: one mutation of each kind at each place of the schema (the
# reader's own test takes them all)
CLI_MUTATIONS = list({(shape(path), kind): (path, what, kind, doc) for path, what, kind, doc in MUTATIONS}.values())


def test_every_field_is_mutated() -> None:
    schema_fields = {"title", "family", "versioned", "documentation", "culprit", "tried", "merged_from", "release",
                     "productions", "warnings", "mismatches", "steps", "commit", "shard", "crash"}
    mutated = {part for path, _, _, _ in MUTATIONS for part in path if isinstance(part, str)}
    assert schema_fields <= mutated
    assert len(MUTATIONS) > 1000 and len(CLI_MUTATIONS) > 400


def test_every_mutation_is_refused_by_the_reader_with_its_path_or_taken(tmp_path: Path) -> None:
    """All of them, through load_results: refused exactly when the reference validator
    refuses (or a check beyond the schema does), each problem naming the file and the path."""
    beyond = []  # refused by a check beyond the schema
    for i, (path, what, _, doc) in enumerate(MUTATIONS):
        file = write(tmp_path / f"m{i}.json", doc)
        valid = schema_valid(doc)
        try:
            results.load_results(file)
        except results.ResultsFileError as exc:
            if valid:
                beyond.append(json_path(path))
            named = "format" if path == ("format",) else json_path(path)
            assert any(named in line for line in exc.problems), (what, exc.problems)
            assert all(line.startswith(f"{file}: ") for line in exc.problems), (what, exc.problems)
            assert all(line.endswith("regenerate it with conformance run") or "rerun the suite" in line
                       for line in exc.problems), (what, exc.problems)
            assert len(exc.problems) <= results.MAX_PROBLEMS + 1
        else:
            assert valid, f"{what}: the reference validator refuses it, load_results took it"
        file.unlink()
    # a version counter's change that is not a number (the compiled-mode comparison reads it as one)
    assert beyond == ['results[0].observed["version_change.x"]'] * 2


@pytest.mark.parametrize("command", COMMANDS)
def test_a_wrong_type_or_a_missing_field_anywhere_is_refused_with_its_path(
        command: str, work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    refused = 0
    for i, (path, what, _, doc) in enumerate(CLI_MUTATIONS):
        file = write(work.inputs / f"m{i}.json", doc)
        code, out, err = run(work.argv(command, file), capsys)
        if not schema_valid(doc):  # the reference validator refuses it: so must the command
            assert code == 2, f"{what}: accepted by conformance {command}"
        if code == 2:
            refused += 1
            assert str(file) in err, what
            named = "format" if path == ("format",) else json_path(path)
            lines = [line for line in err.splitlines() if line.startswith(f"conformance {command}: ")]
            assert len(lines) == len(err.splitlines()), f"{what}: a line without the command's name: {err}"
            if not schema_valid(doc):  # else a refusal of what it says (not one release, another corpus)
                assert named in err, f"{what}: the path {named} is not named: {err}"
            assert not any(work.outputs.iterdir()), f"{what}: {command} wrote its output from a refused file"
        else:
            assert code in (0, 1), f"{what}: exit status {code}: {err}"
        file.unlink()
        for made in work.outputs.iterdir():
            shutil.rmtree(made) if made.is_dir() else made.unlink()
    assert refused > 300
    work.check()


def test_the_message_names_file_path_found_expected_and_fix(work: Workspace,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    doc = full_document()
    doc["results"][2]["outcome"] = "passed"
    doc["results"][3]["behaviour"]["pairs"] = "view"
    del doc["cases"]["views.reshape.agree"]["title"]
    doc["run"]["date"] = "24/11/2026"
    file = write(work.inputs / "bad.json", doc)
    code, _, err = run(["report", str(file), "--out", str(work.outputs / "r")], capsys)
    assert code == 2
    assert err.splitlines() == [  # in the document's order
        f"conformance report: {file}: run.date: is \"24/11/2026\"; expected a string matching ^\\d{{4}}-\\d{{2}}-"
        "\\d{2}$; regenerate it with conformance run",
        f'conformance report: {file}: cases["views.reshape.agree"].title: is missing; expected a string; '
        "regenerate it with conformance run",
        f'conformance report: {file}: results[2].outcome: is "passed"; expected one of "pass", "known_divergence", '
        '"refused", "unchecked", "fail", "error", "not_applicable", "skipped"; regenerate it with conformance run',
        f'conformance report: {file}: results[3].behaviour.pairs: is a string ("view"); expected an array (each an '
        "object with the keys a, b, class, relations); regenerate it with conformance run",
    ]
    assert not (work.outputs / "r").exists()


def test_a_reason_is_checked_against_its_outcome(work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    doc = full_document()
    failing = next(i for i, r in enumerate(doc["results"]) if r["outcome"] == "fail")
    doc["results"][failing]["reason"] = ""
    passing = next(i for i, r in enumerate(doc["results"]) if r["outcome"] == "pass")
    doc["results"][passing]["reason"] = "why"
    code, _, err = run(["diff", str(work.other), str(write(work.inputs / "r.json", doc))], capsys)
    assert code == 2
    assert f'results[{failing}].reason: is ""; expected a non-empty string (as outcome is not "pass")' in err
    assert f'results[{passing}].reason: is "why"; expected "" (as outcome is "pass")' in err


def test_problems_are_bounded_and_counted(work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    doc = full_document()
    doc["results"] = [dict(doc["results"][1], nodeid=f"n{i}", outcome=7, reason="why") for i in range(30)]
    code, _, err = run(["report", str(write(work.inputs / "many.json", doc)), "--out", str(work.outputs)], capsys)
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == results.MAX_PROBLEMS + 1
    assert all(f"results[{i}].outcome: is 7; expected one of" in lines[i] for i in range(results.MAX_PROBLEMS))
    assert lines[-1].endswith("10 more problem(s) not shown (the first 20 are above)")


def test_every_file_of_a_command_is_checked_and_all_their_problems_said(
        work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = full_document(), other_document()
    a["run"]["items"] = "3"
    b["results"][0]["steps"] = {}
    fa, fb = write(work.inputs / "a.json", a), write(work.inputs / "b.json", b)
    for argv in (["merge", str(fa), str(fb), "--out", str(work.outputs / "m.json")], ["diff", str(fa), str(fb)],
                 ["changelog", str(fa), str(fb), "--out", str(work.outputs / "c")],
                 ["site", str(fa), "--releases", str(fb), "--out", str(work.outputs / "s")]):
        code, _, err = run(argv, capsys)
        assert code == 2
        assert f"{fa}: run.items: is a string (\"3\"); expected an integer of at least 0" in err
        assert f"{fb}: results[0].steps: is an object of 0 keys; expected an array" in err
    assert not any(work.outputs.iterdir())


# ---- what is not JSON, or not a results document, or not a file


@pytest.mark.parametrize("content, says", [
    (b"", "cannot read results JSON: Expecting value"),
    (b"{not json", "cannot read results JSON: Expecting property name"),
    (b"\xff\xfe{\x00}", "not UTF-8 text (byte 0xff at offset 0)"),
    ("{\"format\": 2, \"x\": \"caf\xe9\"}".encode("latin-1"), "not UTF-8 text (byte 0xe9 at offset"),
    (b'{"format": NaN}', "NaN is not JSON"),
    (b'{"format": 2, "results": [Infinity]}', "Infinity is not JSON"),
    (b'{"format": 2, "run": {"items": ' + b"9" * 5000 + b"}}", "a number has more digits than can be read"),
    (b"[" * 100_000 + b"]" * 100_000, "nests too deeply to be read"),
    (b"[]", "(the document): is an array of 0 items; expected an object (a results document"),
    (b'"results"', "(the document): is a string"),
    (b"{}", "format: is missing"),
    (b'{"format": "2"}', 'results format "2", this tool reads format 2; rerun the suite'),
    (b'{"format": true}', "results format true, this tool reads format 2"),
    (b'{"format": 1}', "results format 1, this tool reads format 2; rerun the suite"),
], ids=["empty", "syntax", "utf16", "latin1", "nan", "infinity", "digits", "nesting", "array", "string",
        "no-format", "format-string", "format-true", "format-1"])
@pytest.mark.parametrize("command", COMMANDS)
def test_what_is_not_a_results_document(content: bytes, says: str, command: str, work: Workspace,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    file = work.inputs / "bad.json"
    file.write_bytes(content)
    code, _, err = run(work.argv(command, file), capsys)
    assert code == 2 and str(file) in err and says in err, err
    work.check()


@pytest.mark.parametrize("where, value, says", [
    (("results", 0, "observed", "values.y"), 1e400, "results[0].observed[\"values.y\"]: is a number too large to be "
                                                    "finite"),
    (("cases", "views.reshape.agree", "title"), "\ud800", 'cases["views.reshape.agree"].title: is a string that is '
                                                          "not Unicode text (a lone surrogate, \\ud800)"),
    (("results", 0, "observed", "version_change.x"), "many", 'results[0].observed["version_change.x"]: is a string '
                                                             '("many"); expected a number or null'),
    (("results", 0, "observed", "values.y"), [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],  # noqa: E501
     "nests more than 64 levels deep; expected at most 64 levels"),
    (("results", 0, "line"), 3.0, "results[0].line: is a number (3.0); expected an integer"),
    (("run", "date"), "2026-11-24\n", 'run.date: is "2026-11-24\\n"; expected a string matching'),
    (("run", "items"), True, "run.items: is true; expected an integer of at least 0"),
])
def test_what_json_schema_alone_lets_through(where: tuple[Any, ...], value: Any, says: str, work: Workspace,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    doc = replaced(full_document(), where, value)
    text = json.dumps(doc)  # 1e400 is written as Infinity; as a number of the file it is 1e400
    text = text.replace("Infinity", "1e400")
    file = work.inputs / "r.json"
    file.write_text(text, encoding="utf-8", errors="surrogatepass")
    code, _, err = run(["report", str(file), "--out", str(work.outputs / "r")], capsys)
    assert code == 2 and says in err, err


def test_a_link_is_not_followed(work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    secret = work.root / "secret.json"
    write(secret, full_document())
    link = work.inputs / "link.json"
    link.symlink_to(secret)
    for command in COMMANDS:
        code, _, err = run(work.argv(command, link), capsys)
        assert code == 2 and f"{link}: is a symbolic link; results files are read only as regular files" in err
    work.check(inputs={"secret.json"})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_a_folder_is_not_read(work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = work.inputs / "fifo.json"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    (work.inputs / "folder.json").mkdir()
    for name, kind in (("fifo.json", "a FIFO"), ("folder.json", "a folder")):
        code, _, err = run(["report", str(work.inputs / name), "--out", str(work.outputs)], capsys)
        assert code == 2 and f"it is {kind}, not a regular file" in err
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_file_too_large_is_not_read(work: Workspace, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results, "MAX_RESULTS_BYTES", 1000)
    file = write(work.inputs / "big.json", full_document())
    code, _, err = run(["diff", str(file), str(file)], capsys)
    assert code == 2 and "results files are at most 1,000 bytes" in err


def test_a_missing_file(work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["changelog", str(work.inputs / "nope.json"), "--out", str(work.outputs)], capsys)
    assert code == 2 and f"{work.inputs / 'nope.json'}: cannot read results JSON: No such file or directory" in err


# ---- valid documents, hostile strings: shown as text, never as markup


PAYLOADS = ('<script>alert("xss")</script>', "<img src=x onerror=alert(1)>", "[click](javascript:alert(1))",
            "javascript:alert(1)", "../../../canary.txt", "\x1b[31m\n::error::x\r##[set-env]", "`| **b** <b>",
            "a" * 400)


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    types = _resolve(schema).get("type")
    if types is None:
        return True
    names = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
             dict: "object"}
    return names[type(value)] in ([types] if isinstance(types, str) else types)


def hostile(value: Any, schema: dict[str, Any], f: Callable[[str], str]) -> Any:
    """``value`` with every string the schema leaves free (no enum, const or pattern), keys of
    free maps included (case ids, framework names, observed keys), passed through ``f``;
    the same string always becomes the same, so records still find their cases."""
    schema = _resolve(schema)
    if "oneOf" in schema:
        alternative = next((a for a in schema["oneOf"] if _fits(value, a)), None)
        return value if alternative is None else hostile(value, alternative, f)
    if isinstance(value, str):
        return value if {"enum", "const", "pattern"} & set(schema) else f(value)
    if isinstance(value, list):
        return [hostile(v, schema.get("items", {}), f) for v in value]
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", {})
        extra = extra if isinstance(extra, dict) else {}
        return {(k if k in props or "propertyNames" in schema else f(k)): hostile(v, props.get(k, extra), f)
                for k, v in value.items()}
    return value


def suffixed(payload: str) -> Callable[[str], str]:
    return lambda s: s + payload if s else s


def prefixed(payload: str) -> Callable[[str], str]:
    return lambda s: payload + s if s else s


def gfm(markdown: str) -> str:
    cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm (GitHub's Markdown renderer) is in the test extra")
    from cmarkgfm.cmark import Options

    return str(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))


class _Tags(html.parser.HTMLParser):
    """Every start tag with its attributes, and the text inside each script element."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def markup_problems(text: str, name: str) -> list[str]:
    """Markup in an HTML text that a results file brought: a script, an image, an event
    handler or a javascript: address from a payload (every payload's script says alert);
    the outputs' own scripts (the report's filter, the site's search) are theirs."""
    parsed = _Tags(text)
    out = [f"{name}: a script running {script[:60]!r}" for script in parsed.scripts if "alert" in script]
    for tag, attrs in parsed.tags:
        if tag == "script" and attrs.get("src") and attrs["src"].rsplit("/", 1)[-1] not in ("search.js",
                                                                                             "search-index.js"):
            out.append(f"{name}: <script src={attrs['src']!r}>")
        if tag in ("img", "iframe", "object", "embed", "base") or (tag == "meta" and "http-equiv" in attrs):
            out.append(f"{name}: <{tag} {attrs}>")
        for key, value in attrs.items():
            if key.startswith("on") and "alert" in (value or ""):
                out.append(f"{name}: <{tag} {key}={value!r}>")
            if key in ("href", "src", "action", "formaction") and \
                    re.sub(r"\s", "", value or "").lower().startswith(("javascript:", "data:", "vbscript:")):
                out.append(f"{name}: <{tag} {key}={value!r}>")
    return out


def hostile_documents(f: Callable[[str], str]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(a full run, two releases of one framework), every free string through ``f``."""
    run = hostile(full_document(), SCHEMA, f)
    run["cases"][f("views.reshape.agree")]["references"] = [f("https://example.org/x"), "javascript:alert(1)"]
    old = hostile(full_document("1.26.4"), SCHEMA, f)
    old["results"][0].update(outcome="fail", reason=f("it changed"))
    new = hostile(full_document("2.4.6"), SCHEMA, f)
    return run, old, new


@pytest.mark.parametrize("f", [suffixed(p) for p in PAYLOADS] + [prefixed(p) for p in PAYLOADS[:5]],
                         ids=[f"suffix-{i}" for i in range(len(PAYLOADS))] + [f"prefix-{i}" for i in range(5)])
def test_hostile_strings_render_as_text_everywhere(f: Callable[[str], str], work: Workspace,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run_doc, old, new = hostile_documents(f)
    for doc in (run_doc, old, new):
        assert schema_valid(doc) and results.results_problems(doc)[1] == 0
    run_file = write(work.inputs / "run.json", run_doc)
    old_file, new_file = write(work.inputs / "old.json", old), write(work.inputs / "new.json", new)
    out = work.outputs
    commands = [["report", str(run_file), "--out", str(out / "report")],
                ["site", str(run_file), "--out", str(out / "site"), "--partial", "--releases", str(old_file),
                 str(new_file)],
                ["changelog", str(old_file), str(new_file), "--out", str(out / "changelog")],
                ["merge", str(new_file), str(write(work.inputs / "other.json",
                                                   hostile(other_document("2.4.6"), SCHEMA, f))),
                 "--out", str(out / "merged.json")]]
    for argv in commands:
        code, _, err = run(argv, capsys)
        assert code == 0, (argv[0], err)
    code, diff_md, err = run(["diff", str(old_file), str(new_file), "--format", "md"], capsys)
    assert code in (0, 1), err
    assert run(["report", str(out / "merged.json"), "--out", str(out / "merged")], capsys)[0] == 0
    problems = []
    for path in sorted(out.rglob("*")):
        assert path.resolve().is_relative_to(out.resolve())
        assert len(path.name.encode()) <= 255, path
        if path.suffix == ".md":
            problems += markup_problems(gfm(path.read_text(encoding="utf-8")), str(path))
        elif path.suffix == ".html":
            text = path.read_text(encoding="utf-8")
            problems += markup_problems(text, str(path))
            assert "<script>alert" not in text.lower() and "<img src=x" not in text
    problems += markup_problems(gfm(diff_md), "diff --format md")
    assert problems == []
    broken, _ = check_links(out / "site")
    assert [b for b in broken if "javascript" in b] == []
    work.check(inputs={"in/run.json", "in/old.json", "in/new.json", "in/other.json"})


def test_the_changelog_markdown_escapes_what_release_files_say(tmp_path: Path) -> None:
    """Every string of a release file in changelog.md goes through the behaviour report's
    escaping (conformance.escaping.for_markdown, code spans for ids)."""
    attack = "<script>alert(1)</script>"
    old, new = other_document("1.26.4"), other_document("2.4.6")
    for doc in (old, new):
        doc["run"]["corpus"] = attack
        doc["cases"]["views.other.case"]["title"] = attack
    new["results"][0].update(outcome="fail", reason=attack)
    md = changelog.render_markdown(changelog.build(typed_all([("old.json", old), ("new.json", new)])))
    assert "<script" not in md.replace("`views.other.case`", "")
    assert f"corpus revision {for_markdown(attack)}." in md
    assert "&lt;script&gt;" in md and "<script" not in gfm(md)


def test_huge_numbers_that_json_can_hold_are_shown(work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    big = 10 ** 4000  # read (Python reads integers of up to 4,300 digits), never computed on
    doc = full_document()
    first = doc["results"][0]
    first.update(line=big, duration_s=1e308)
    first["steps"][0]["number"] = big
    first["observed"].update({"version_change.x": big, "values.y": [big, -1e308, 5e-324]})
    doc["cases"]["views.reshape.agree"].update(line=big)
    doc["run"].update(items=big, shard=[big, big], exit_status=-big)
    file = write(work.inputs / "big.json", doc)
    for command in COMMANDS:
        code, _, err = run(work.argv(command, file), capsys)
        assert code in (0, 1), (command, err)
    work.check(inputs={"in/big.json"})


# ---- any valid document: the commands never fail on it


def _strategy(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Documents the schema accepts, from the schema itself (strings from a hostile list)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return st.deferred(lambda: _strategy(SCHEMA["$defs"][name]))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "oneOf" in schema:
        return st.one_of([_strategy(a) for a in schema["oneOf"]])
    kind = schema.get("type", "string" if "pattern" in schema else None)
    if isinstance(kind, list):
        return st.one_of([_strategy(dict(schema, type=k)) for k in kind])
    if kind is None:
        return FREE_JSON
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum", -(2 ** 40)), max_value=2 ** 40)
    if kind == "number":
        return st.floats(min_value=schema.get("minimum", -1e300), max_value=1e300, allow_nan=False)
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(ecma(schema["pattern"]), fullmatch=True)
        return TEXTS.filter(lambda t: len(t) >= schema.get("minLength", 0))
    if kind == "array":
        low = schema.get("minItems", 0)
        return st.lists(_strategy(schema.get("items", {})), min_size=low, max_size=max(low, schema.get("maxItems", 3)))
    props, required = schema.get("properties", {}), schema.get("required", [])
    fixed = st.fixed_dictionaries({k: _strategy(props[k]) for k in required},
                                  optional={k: _strategy(v) for k, v in props.items() if k not in required})
    extra = schema.get("additionalProperties", True)
    if isinstance(extra, dict):
        names = _strategy(schema["propertyNames"]) if "propertyNames" in schema else TEXTS
        return st.tuples(fixed, st.dictionaries(names, _strategy(extra), max_size=3)).map(lambda fm: {**fm[1], **fm[0]})
    if extra is True and not props:
        return st.dictionaries(TEXTS, FREE_JSON, max_size=3)
    return fixed


def ecma(pattern: str) -> str:
    return pattern.replace("\\d", "[0-9]").removesuffix("$").removeprefix("^")


TEXTS = st.one_of(st.sampled_from(["", "x", "views.a.b", "numpy", "torch", "torch_compile", "paddle", "jax_jit",
                                   "../x", PAYLOADS[0], "javascript:alert(1)", "a" * 300, "values.y",
                                   "shares_memory.y.x", "error", "method:reshape", "index:basic", "|`*_[]"]),
                  st.text(max_size=6))
FREE_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                         | TEXTS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=3),
                         max_leaves=6)


def _linked(doc: dict[str, Any]) -> dict[str, Any]:
    """What a run writes besides the schema: a reason for every outcome but pass, records of
    the cases and frameworks the document has, counters' changes as numbers."""
    ids, names = list(doc["cases"]), ["torch", "torch_compile", "numpy", "jax", "jax_jit", "../fw"]
    for i, r in enumerate(doc["results"]):
        r["reason"] = "" if r["outcome"] == "pass" else r["reason"] or "why"
        r["observed"] = {k: (1 if k.startswith("version_change.") else v) for k, v in r["observed"].items()}
        if ids and i % 3:
            r["case"] = ids[i % len(ids)]
        if i % 4 != 3:
            r["framework"] = names[(i * 7) % len(names)]
            doc["environment"]["frameworks"].setdefault(r["framework"], {"version": "1.0", "devices": ["cpu"]})
    return doc


@given(a=_strategy(SCHEMA).map(_linked), b=_strategy(SCHEMA).map(_linked))
@settings(BUDGET, max_examples=40)
def test_any_valid_document_is_taken_by_every_command(a: dict[str, Any], b: dict[str, Any], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert schema_valid(a) and schema_valid(b)
    fa, fb = write(tmp_path / "a.json", a), write(tmp_path / "b.json", b)
    out = tmp_path / "out"
    for argv in (["report", str(fa), "--out", str(out / "r")], ["diff", str(fa), str(fb), "--format", "md"],
                 ["merge", str(fa), str(fb), "--out", str(out / "m.json")],
                 ["changelog", str(fa), str(fb), "--out", str(out / "c")],
                 ["site", str(fa), "--out", str(out / "s"), "--partial", "--releases", str(fa), str(fb)]):
        code, _, err = run(argv, capsys)
        # 2: what the command refuses of valid documents (two corpus revisions to merge, a
        # changelog of files that are not one framework's releases), said with the file
        assert code in (0, 1) or (code == 2 and (str(fa) in err or str(fb) in err)), (argv[0], err)
        shutil.rmtree(out, ignore_errors=True)


# ---- file names from ids and framework names


def test_a_case_id_of_any_length_makes_a_short_file_name(work: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    long_ids = {"views." + "a" * 400: "ascii", "views." + "é" * 300: "escaped", "views." + "a" * 194: "fits",
                "views.x/../../" * 30: "climbs"}
    doc = document({cid: case_info(cid) for cid in long_ids},
                   [record(cid, fw, pairs={("y", "x"): "view"}) for cid in long_ids for fw in ("torch", "numpy")])
    doc["environment"]["frameworks"]["../../" + "f" * 300] = {"version": "1", "devices": ["cpu"]}
    doc["results"].append(record("views." + "a" * 400, "../../" + "f" * 300))
    doc["run"]["items"] = len(doc["results"])
    code, _, err = run(["site", str(write(work.inputs / "long.json", doc)), "--out", str(work.outputs / "site"),
                        "--partial"], capsys)
    assert code == 0, err
    names = [p for p in (work.outputs / "site").rglob("*")]
    assert max(len(p.name.encode()) for p in names) <= urls.MAX_NAME + len(".html")
    assert (work.outputs / "site" / urls.case("views." + "a" * 194)).name == "views." + "a" * 194 + ".html"
    assert check_links(work.outputs / "site")[0] == []
    work.check(inputs={"in/long.json"})


@given(st.text(max_size=600))
@settings(BUDGET, max_examples=300)
def test_a_file_name_is_one_short_segment_that_cannot_climb(text: str) -> None:
    name = urls.file_name(text)
    assert 0 < len(name) <= urls.MAX_NAME and name.isascii()
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert set(name) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-~")


@given(st.lists(st.text(min_size=190, max_size=400), min_size=2, max_size=5, unique=True))
@settings(BUDGET, max_examples=100)
def test_long_names_stay_apart(texts: list[str]) -> None:
    assert len({urls.file_name(t) for t in texts}) == len(texts)


def test_the_site_writes_no_name_that_leaves_its_folder(tmp_path: Path) -> None:
    from conformance.site.output import SiteOutputError, write_site

    for name in ("../x.html", "/etc/x", "a/../../x", "a//b", "x" * 300, ""):
        with pytest.raises(SiteOutputError):
            write_site({"index.html": "ok", name: "no"}, tmp_path / "site")
        assert not (tmp_path / "site").exists() and sorted(tmp_path.iterdir()) == []


# ---- case ids: bounded by the loader


def test_the_loader_bounds_a_case_id() -> None:
    def load(case_id: str) -> Any:
        text = f"cases:\n  - id: {case_id}\n    title: t\n    given: {{x: [1.0]}}\n    steps: ['y = x * 2']\n" \
               "    expect: {values: {y: [2.0]}}\n"
        return load_text(text, "t.yaml", Vocabulary())

    longest = "views." + "a" * (MAX_ID_LENGTH - len("views."))
    assert [c.id for c in load(longest).cases] == [longest]
    refused = load(longest + "a")
    assert refused.cases == [] and len(refused.errors) == 1
    error = refused.errors[0][1]
    assert (error.code, error.location.line) == ("CF000", 2)
    assert f"is {MAX_ID_LENGTH + 1} characters long; at most {MAX_ID_LENGTH}" in error.message
    assert len(error.render()) < 500  # the id is quoted in part


def test_a_long_id_fails_lint_with_its_location(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = ROOT / "tests" / "lint_fixtures" / "CF000_id_too_long.yaml"
    assert main(["lint", str(fixture)]) == 1
    assert f"{fixture}:3:5: CF000 id 'views.aaaa" in capsys.readouterr().out


# ---- the validator against the reference implementation


def test_the_schema_compiles_and_an_unknown_keyword_is_refused() -> None:
    Schema(SCHEMA)
    for schema in ({"type": "object", "format": "email"}, {"$ref": "https://elsewhere/schema"},
                   {"type": "string", "pattern": "("}, {"type": "decimal"}):
        with pytest.raises(SchemaError):
            Schema(schema)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.sampled_from([0.5, -2.5, 1e3 + 0.25])
    | st.sampled_from(["", "x", "pass", "cpu", "view", "S3-03", "2026-11-24", COMMIT, "shares_memory", "<script>"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "at", "kind"]), inner,
                                                                max_size=3),
    max_leaves=6)
PATHS = [path for path, _ in walk(full_document()) if path]


@given(st.sampled_from(PATHS), JSON_VALUES, st.booleans())
@settings(BUDGET, max_examples=400)
def test_the_validator_agrees_with_jsonschema(path: tuple[Any, ...], value: Any, delete: bool) -> None:
    """On values without the cases it is documented to be stricter on (a whole number written
    as 2.0 for an integer, a string a pattern matches only before its final line feed)."""
    doc = replaced(full_document(), path, value, delete=delete and isinstance(path[-1], str))
    ours = results.results_schema().problems(doc)[1] == 0
    assert ours == schema_valid(doc), (json_path(path), value, results.results_schema().problems(doc)[0])


def test_the_real_results_files_are_valid() -> None:
    for path in sorted((ROOT / "releases").glob("*/*.json"))[:3]:
        assert results.load_results(path).format == 2


def test_the_validator_is_fast_enough_for_a_full_run() -> None:
    import time

    files = sorted((ROOT / "releases").glob("*/*.json"))
    if not files:
        pytest.skip("no release files in this checkout")
    doc = json.loads(files[0].read_text())
    began = time.perf_counter()
    assert results.results_problems(doc) == ([], 0)
    assert time.perf_counter() - began < 5.0  # about 0.1 s for 2 MB


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
