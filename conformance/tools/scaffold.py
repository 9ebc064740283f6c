"""``conformance new FAMILY/NAME``: a new case file with the required fields, the schema
modeline for editor completion, and an empty ``expect`` that lint and pytest refuse until
``conformance observe --write`` has filled it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from conformance.report.outputs import write_new_file

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*/[a-z][a-z0-9_]*$")
SCHEMA = Path(__file__).resolve().parent.parent / "data" / "case.schema.json"

TEMPLATE = """\
# yaml-language-server: $schema={schema}
# Cases for {family}/{name}. Format: docs/case-format.md; workflow: CONTRIBUTING.md.
cases:
  - id: {family}.{name}.first
    title: "TODO: one line that says what this case shows"
    tags: [{family}, {name}]
    references: []          # documentation links, upstream issues
    given:
      x: {{data: [[1.0, 2.0], [3.0, 4.0]]}}
    steps:                  # TODO: the operations under test; x.T is an example
      - y = x.T
    # `conformance observe {family}.{name}.first --write` fills this in with what each
    # framework does; review it. Lint and pytest refuse an empty expect.
    expect: {{}}
"""


class ScaffoldError(Exception):
    pass


def scaffold(spec: str, root: Path) -> Path:
    """Write ``root/FAMILY/NAME.yaml``; refuse to overwrite."""
    spec = spec.removesuffix(".yaml")
    if not NAME_PATTERN.fullmatch(spec):
        raise ScaffoldError(f"{spec!r} is not FAMILY/NAME: use lowercase words with underscores, "
                            "e.g. views/unflatten or copies/take_along_axis")
    family, name = spec.split("/")
    path = root / family / f"{name}.yaml"
    if path.exists():
        raise ScaffoldError(f"{path} already exists: add the case to it, or choose another name")
    schema = Path(os.path.relpath(SCHEMA.resolve(), path.parent.resolve())).as_posix() if SCHEMA.exists() \
        else "../../conformance/data/case.schema.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:  # never over anything at its name, a dangling link included (exists() says no to one)
        write_new_file(path, TEMPLATE.format(schema=schema, family=family, name=name))
    except FileExistsError:
        raise ScaffoldError(f"{path} already exists (or a link is at its name): add the case to it, or choose "
                            "another name") from None
    return path
