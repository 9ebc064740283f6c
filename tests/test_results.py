"""The results file writer: atomic replacement, and values JSON cannot hold."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conformance.plugin.coverage import run_date, suite_commit
from conformance.report import results
from conformance.resultsmodel import to_json


def test_an_interrupted_write_leaves_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "results.json"
    target.write_text('{"previous": true}\n')

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C between writing and renaming

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        results.write_atomically(target, {"format": 2, "results": []})
    assert target.read_text() == '{"previous": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no temporary file left


def test_a_complete_write_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "results.json"
    results.write_atomically(target, {"b": 1, "a": [1.5]})
    assert target.read_text() == '{\n "a": [\n  1.5\n ],\n "b": 1\n}\n'


def test_nan_and_infinities_become_strings_strict_parsers_accept() -> None:
    value = results._jsonable({"values.y": [float("nan"), float("inf"), -float("inf"), 1.0]})
    assert value == {"values.y": ["nan", "inf", "-inf", 1.0]}
    json.loads(json.dumps(value), parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


# ---- what the site cites: the shared expectation, the suite commit, the date


def test_a_case_records_its_shared_expectation_as_plain_data() -> None:
    from conformance.load.reader import Vocabulary, load_text

    loaded = load_text(textwrap.dedent("""\
        cases:
          - id: views.t.raises
            title: t
            given:
              x: {data: [1.0, 2.0]}
            steps:
              - y = x.reshape(2)
              - z = x.resize_(3, 3)
            expect:
              shares_memory: {y & x: true}
              values: {x: [1.0, 2.0]}
              error: {at: 2, kind: other}
        """), "cases/views/t.yaml", Vocabulary())
    assert loaded.errors == []
    case = loaded.cases[0]
    info = results.case_info(case)
    assert info.expect == {"error": {"at": 2, "details": {}, "kind": "other"},
                              "shares_memory.y.x": True, "values.x": [1.0, 2.0]}
    json.dumps(to_json(info))  # plain data


def test_the_suite_commit_is_the_checkouts_head_and_says_when_case_files_differ(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "a.yaml").write_text("cases: []\n")
    assert suite_commit([cases]) is None  # not a checkout
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, env=env, capture_output=True)
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert suite_commit([cases]) == {"sha": head, "modified": False}
    (tmp_path / "elsewhere.txt").write_text("not a case file")
    assert suite_commit([cases]) == {"sha": head, "modified": False}
    (cases / "b.yaml").write_text("cases: []\n")
    assert suite_commit([cases]) == {"sha": head, "modified": True}


def test_the_run_date_is_a_utc_day() -> None:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", run_date())
