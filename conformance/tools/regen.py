"""``conformance regen [--check]``: every file of a checkout that the suite generates from its
own sources, written again, or with ``--check`` compared (exit 1 naming each stale file; CI
runs it). What a recipe says to regenerate is this one command:

- ``docs/operations.md``: the operation vocabulary, from the adapters' tables (``conformance ops``);
- ``docs/coverage.md``: the frameworks' own view-op and in-place lists against the corpus
  (``conformance coverage``);
- ``conformance/data/case.schema.json``: the case-file schema for editors, each mapping keyed
  by framework name listing the built-in frameworks (``registry.builtin_case_schema``), and
  its ``expect`` part the assertion kinds' own schemas (``conformance.tools.schema``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


class RegenError(Exception):
    """A generated file cannot be made: the sources it is made from have errors."""


@dataclass(frozen=True)
class Generated:
    path: str  # relative to the checkout's root
    made_by: str  # the command that prints it alone, for the messages
    render: Callable[[Path], str]  # the checkout's root -> the file's text


def _operations(root: Path) -> str:
    from conformance.tools.operations import operations_markdown

    return operations_markdown()


def _coverage(root: Path) -> str:
    from conformance.tools import coverage

    cases, problems = coverage.corpus_cases([root / "cases"])
    if problems:
        raise RegenError("docs/coverage.md is measured on the corpus, which does not load (conformance lint):\n"
                         + "\n".join(problems))
    return coverage.render_markdown(coverage.measure_all(coverage.read_lists(), cases), coverage.framework_titles())


def _case_schema(root: Path) -> str:
    from conformance import registry
    from conformance.tools.schema import generated_defs

    schema = registry.builtin_case_schema()
    # the expect part: each assertion kind's schema (conformance.tools.schema)
    schema["$defs"] = {**schema["$defs"], **generated_defs(schema, list(registry.BUILTIN))}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


GENERATED = (
    Generated("docs/operations.md", "conformance ops", _operations),
    Generated("docs/coverage.md", "conformance coverage", _coverage),
    Generated("conformance/data/case.schema.json", "conformance schema (the built-ins only)", _case_schema),
)


def stale(root: Path) -> list[tuple[Generated, str]]:
    """Each generated file whose text is not what its sources make now, with that text."""
    found = []
    for item in GENERATED:
        text = item.render(root)
        path = root / item.path
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != text:
            found.append((item, text))
    return found
