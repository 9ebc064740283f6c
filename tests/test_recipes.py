"""The three recipes of docs/architecture.md, followed as written, each in a copy of this
checkout: add a framework, add an operation, add an assertion kind (issue 34).

Each test makes the edits its recipe lists and runs what the recipe says to run
(``conformance regen``), then asserts:

- the files the copy's git sees changed are the recipe's list, and the recipe's section of
  docs/architecture.md names each of them: a file the recipe does not name that had to
  change too (a test that lists the built-ins by hand, a generated file no command makes)
  fails it;
- ``conformance regen --check`` passes;
- the new thing works end to end: case items on it run through pytest in the copy;
- the copy's own tests that guard the recipe pass, or for a step the recipe leaves to the
  contributor (a kind's parse-error tests), fail until that step is done.

The copy imports its own package: its folder first on PYTHONPATH, with two links that put its
``adapters/`` and ``cases/`` where the editable install maps them (``conformance.adapters``,
``conformance.cases``), git-ignored in the copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow(reason="a copy of the checkout per recipe, conformance regen and pytest runs in it")

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# the copy's tests that guard the recipes (the framework lists, the schema, the generated
# files, the operators, the spellings, the kinds)
GUARDS = ["tests/test_registry.py", "tests/test_case_schema.py", "tests/test_regen.py", "tests/test_operators.py",
          "tests/test_spellings.py", "tests/test_kinds.py"]


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), "-c", "user.name=recipes", "-c", "user.email=recipes@invalid",
                           *args], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's files (tracked, and untracked ones git does not ignore), committed in a
    repository of their own; the release files stay behind (no recipe reads them)."""
    folder = tmp_path_factory.mktemp("pristine") / "checkout"
    listed = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if name.startswith("releases/") or not source.is_file() or source.is_symlink():
            continue
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, folder / name)
    (folder / "conformance" / "adapters").symlink_to("../adapters", target_is_directory=True)
    (folder / "conformance" / "cases").symlink_to("../cases", target_is_directory=True)
    _git(folder, "init", "-q")
    (folder / ".git" / "info" / "exclude").write_text("/conformance/adapters\n/conformance/cases\n")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "pristine")
    return folder


@pytest.fixture
def checkout(pristine: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "checkout"
    shutil.copytree(pristine, folder, symlinks=True)
    return folder


def run_in(folder: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["PYTHONPATH"] = str(folder)
    proc = subprocess.run([sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, f"{args}: {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def changed(folder: Path) -> set[str]:
    """The files git sees changed or added in the copy."""
    return {line[3:] for line in _git(folder, "status", "--porcelain", "--untracked-files=all").splitlines()}


def recipe_text(heading: str) -> str:
    """The section of docs/architecture.md under ``heading`` (to the next heading of its level or above)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    level = heading.split(" ", 1)[0]
    start = text.index(heading + "\n")
    ends = [m.start() for m in re.finditer(r"^#{1,%d} " % len(level), text[start + len(heading):], re.M)]
    return text[start:start + len(heading) + (ends[0] if ends else len(text))]


def edit(path: Path, anchor: str, insert: str) -> None:
    """Put ``insert`` after the line holding ``anchor`` (which must be there once)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(anchor) == 1, f"{anchor!r} in {path}"
    at = text.index("\n", text.index(anchor)) + 1
    path.write_text(text[:at] + insert + text[at:], encoding="utf-8")


def test_the_copy_imports_its_own_package(checkout: Path) -> None:
    proc = run_in(checkout, "-c", "import conformance, conformance.adapters.base as b, conformance.plugin.roots as r; "
                                  "print(conformance.__file__); print(b.__file__); print(r.CASES_PACKAGE_DIR)")
    for line in proc.stdout.splitlines():
        assert Path(line).is_relative_to(checkout), line


# ---------------------------------------------------------------------------- a framework

TOY_ADAPTER = '''\
"""Toy: NumPy under another name, added by tests/test_recipes.py as the framework recipe says."""

from conformance.adapters.numpy_adapter import NumpyAdapter


class ToyAdapter(NumpyAdapter):
    name = "toy"
    title = "Toy"
    report_rank = 95
    overrides_from = "numpy"  # NumPy's case overrides apply to its items, then its own
'''


def test_the_framework_recipe(checkout: Path) -> None:
    (checkout / "adapters" / "toy_adapter.py").write_text(TOY_ADAPTER)
    edit(checkout / "conformance" / "registry.py", '"array_api_strict": "conformance.adapters.',
         '    "toy": "conformance.adapters.toy_adapter:ToyAdapter",\n')
    run_in(checkout, "-m", "conformance", "regen")
    run_in(checkout, "-m", "conformance", "regen", "--check")
    touched = {"adapters/toy_adapter.py": "adapters/<name>_adapter.py", "conformance/registry.py": "registry.BUILTIN",
               "docs/operations.md": "docs/operations.md", "docs/coverage.md": "docs/coverage.md",
               "conformance/data/case.schema.json": "conformance/data/case.schema.json"}
    assert changed(checkout) == set(touched)
    recipe = recipe_text("### Adding a framework")
    assert [written for written in touched.values() if written not in recipe] == []

    schema = json.loads((checkout / "conformance" / "data" / "case.schema.json").read_text())
    assert "toy" in json.dumps(schema)
    # its items run, through pytest, as NumPy's do: the same outcome for every case of a file
    run_in(checkout, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--frameworks", "numpy,toy",
           "cases/views/basic.yaml", "cases/interop/numpy_bridge.yaml", "--conformance-results", "out.json",
           check=False)
    records = json.loads((checkout / "out.json").read_text())["results"]
    by = {(r["case"], r["framework"]): r["outcome"] for r in records}
    toy = {case: outcome for (case, fw), outcome in by.items() if fw == "toy"}
    assert toy and toy == {case: outcome for (case, fw), outcome in by.items() if fw == "numpy"}
    assert "fail" not in toy.values() and "error" not in toy.values(), toy
    run_in(checkout, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "no:randomly", *GUARDS)


# ---------------------------------------------------------------------------- an operation

FLIPLR_CASE = """\
cases:
  - id: views.fliplr.is_a_view
    title: "np.fliplr returns a view of its input"
    given: {x: [[1.0, 2.0], [3.0, 4.0]]}
    steps:
      - y = fliplr(x)
    expect:
      shares_memory: {y & x: true}
      values: {y: [[2.0, 1.0], [4.0, 3.0]]}
"""


def test_the_operation_recipe(checkout: Path) -> None:
    edit(checkout / "adapters" / "numpy_adapter.py", '"method:ravel": lambda x, *a, **kw: x.ravel(*a, **kw),',
         '            "fn:fliplr": lambda x: np().fliplr(x),\n')
    # an entry of the adapter's own that calls the operation of the same name, arguments as written
    spellings = checkout / "tests" / "test_spellings.py"
    text = spellings.read_text()
    plain_numpy = '"method:flatten", "method:take",'
    assert text.count(plain_numpy) == 1
    spellings.write_text(text.replace(plain_numpy, plain_numpy + ' "fn:fliplr",'))
    (checkout / "cases" / "views" / "fliplr.yaml").write_text(FLIPLR_CASE)
    run_in(checkout, "-m", "conformance", "lint", "cases")
    run_in(checkout, "-m", "conformance", "regen")
    run_in(checkout, "-m", "conformance", "regen", "--check")
    touched = {"adapters/numpy_adapter.py": "adapters/<name>_adapter.py", "docs/operations.md": "docs/operations.md",
               "cases/views/fliplr.yaml": "cases/<family>/", "docs/coverage.md": "docs/coverage.md",
               "tests/test_spellings.py": "tests/test_spellings.py"}
    # docs/coverage.md counts the corpus's cases: it changes where the new case reaches a listed operation
    assert changed(checkout) - {"docs/coverage.md"} == set(touched) - {"docs/coverage.md"}
    recipe = recipe_text("### Adding an operation")
    assert [written for written in touched.values() if written not in recipe] == []
    assert "| `fliplr()` | yes |" in (checkout / "docs" / "operations.md").read_text()

    # NumPy runs it; an adapter whose table lacks the key makes its item not applicable
    run_in(checkout, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--frameworks", "numpy,torch",
           "cases/views/fliplr.yaml", "--conformance-results", "out.json")
    records = {r["framework"]: r for r in json.loads((checkout / "out.json").read_text())["results"]}
    assert records["numpy"]["outcome"] == "pass", records["numpy"]
    assert records["torch"]["outcome"] == "not_applicable" and "fn:fliplr" in records["torch"]["reason"]
    run_in(checkout, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "no:randomly", *GUARDS)


# ---------------------------------------------------------------------------- an assertion kind

NUMEL_KIND = '''

class Numel(TensorKind):
    """How many elements a tensor has (added by tests/test_recipes.py)."""

    name = "numel"
    description = "Tensor -> its number of elements."
    probed = "always"
    observe_order = 9

    def parse_value(self, value: Any, loc: Location, text: str) -> Any:
        if type(value) is not int or value < 0:
            raise CaseFormatError(loc, f"'numel' must be a non-negative integer, got {fields.kind_of(value)}")
        return value

    def value_schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": 0}

    def observe(self, obj: Any, run: Checking) -> Any:
        count = 1
        for size in run.adapter.shape_of(obj):
            count *= size
        return count
'''

NUMEL_CASE = """\
cases:
  - id: views.numel.slice
    title: "a slice has the elements it selects"
    given: {x: [1.0, 2.0, 3.0]}
    steps:
      - y = x[0:2]
    expect:
      numel: {y: 2, x: 3}
"""


def test_the_assertion_kind_recipe(checkout: Path) -> None:
    kinds = checkout / "conformance" / "kinds"
    properties = (kinds / "properties.py").read_text()
    for name in ("Any", "Location", "CaseFormatError", "fields", "TensorKind", "Checking"):
        assert re.search(rf"\b{name}\b", properties.split("\nclass ", 1)[0]), f"properties.py imports {name}"
    (kinds / "properties.py").write_text(properties + NUMEL_KIND)
    edit(kinds / "__init__.py", "    VersionChange(),", "    Numel(),\n")
    text = (kinds / "__init__.py").read_text()
    (kinds / "__init__.py").write_text(re.sub(r"(from conformance\.kinds\.properties import \(?)", r"\1Numel, ",
                                              text, count=1))
    (checkout / "cases" / "views" / "numel.yaml").write_text(NUMEL_CASE)
    run_in(checkout, "-m", "conformance", "regen")
    run_in(checkout, "-m", "conformance", "regen", "--check")
    schema = (checkout / "conformance" / "data" / "case.schema.json").read_text()
    assert '"numel"' in schema

    # step 5, its tests: until its parse errors have a row, the kinds' tests say so
    before = run_in(checkout, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/test_kinds.py", check=False)
    assert before.returncode == 1 and "test_every_kind_has_its_parse_errors_tested" in before.stdout
    edit(checkout / "tests" / "test_kinds.py", "PARSE_ERRORS = [",
         "    ('numel', '{y: -1}', 15, 'CF000',\n"
         "     \"'numel' must be a non-negative integer, got a number (-1)\", None),\n")
    # and a use in a valid schema fixture (the schema and the loader agree on every key of the format)
    edit(checkout / "tests" / "schema_fixtures" / "valid" / "full_case.yaml", "      shape: {y: [4], x: [2, 2]}",
         "      numel: {y: 4}\n")
    # step 4, its docs: a row in the expect table of docs/case-format.md
    edit(checkout / "docs" / "case-format.md", "| `values` |", "| `numel` | `{y: 2}` | how many elements y has |\n")

    touched = {"conformance/kinds/properties.py": "conformance/kinds/",
               "conformance/kinds/__init__.py": "conformance/kinds/__init__.py",
               "conformance/data/case.schema.json": "conformance/data/case.schema.json",
               "docs/case-format.md": "docs/case-format.md", "tests/test_kinds.py": "tests/test_kinds.py",
               "tests/schema_fixtures/valid/full_case.yaml": "tests/schema_fixtures/valid/",
               "cases/views/numel.yaml": "conformance run", "docs/coverage.md": "conformance regen"}
    assert changed(checkout) - {"docs/coverage.md"} == set(touched) - {"docs/coverage.md"}
    recipe = recipe_text("## Adding an assertion kind")
    assert [written for written in touched.values() if written not in recipe] == []
    assert "conformance regen" in recipe_text("### The files to touch")

    run_in(checkout, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--frameworks", "numpy,torch",
           "cases/views/numel.yaml", "--conformance-results", "out.json")
    records = {r["framework"]: r for r in json.loads((checkout / "out.json").read_text())["results"]}
    for framework in ("numpy", "torch"):
        assert records[framework]["outcome"] == "pass", records[framework]
        assert records[framework]["observed"]["numel.y"] == 2
    run_in(checkout, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "no:randomly", *GUARDS)
