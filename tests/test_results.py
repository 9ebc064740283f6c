"""The results file writer: atomic replacement, and values JSON cannot hold."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conformance.report import results


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
