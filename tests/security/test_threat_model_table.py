"""docs/security.md names, for each class of attack and each door, the test that proves it
is closed: every test it names exists (a file, and the function where one is named), so the
table cannot promise a test that was renamed or removed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?")


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_test_the_threat_model_names_exists() -> None:
    text = (ROOT / "docs" / "security.md").read_text()
    named = NAMED.findall(text)
    assert len(named) > 20, "the table names its tests as `tests/...py` or `tests/...py::function`"
    missing = []
    for file, function in named:
        path = ROOT / file
        if not path.is_file():
            missing.append(file)
        elif function and function not in _functions(path):
            missing.append(f"{file}::{function}")
    assert not missing, f"docs/security.md names tests that do not exist: {sorted(set(missing))}"


def test_every_security_test_file_is_named_in_the_threat_model() -> None:
    text = (ROOT / "docs" / "security.md").read_text()
    unnamed = [p.name for p in sorted((ROOT / "tests" / "security").glob("test_*.py"))
               if f"tests/security/{p.name}" not in text and p.name != Path(__file__).name]
    assert not unnamed, f"tests/security/ files the threat model does not list: {unnamed}"
