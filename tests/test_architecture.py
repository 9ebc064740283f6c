"""The direction of data is the direction of imports (docs/architecture.md): each module
imports, at its top, only modules of its own layer or of the layers below it, and no
modules import each other in a cycle. A lower layer reaches a higher one only through a
deferred import inside a function, each listed here with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# lower first; a module's layer is that of the longest prefix listed
LAYERS: list[tuple[str, ...]] = [
    ("conformance.model", "conformance.ir", "conformance.source", "conformance.limits", "conformance.codec",
     "conformance.escaping", "conformance.outcomes", "conformance.claims", "conformance.releases",
     "conformance.rules", "conformance.contract", "conformance.resultsmodel",
     "conformance.declared", "conformance.layouts"),
    ("conformance.yamlvalues",),  # YAML values that keep their positions
    ("conformance.kinds",),  # the assertion kinds, read with those values
    ("conformance.registry",),  # which frameworks there are, and the names case files may use
    # case files into Cases; the frameworks; what their tables' entries call
    ("conformance.load", "conformance.adapters", "conformance.spellings"),
    ("conformance.run",),  # running a case
    ("conformance.report", "conformance.site"),  # results and pages; the site, a report of many pages
    ("conformance.plugin",),  # pytest
    ("conformance.tools", "conformance.discover", "conformance.__main__"),  # the command; generated programs
]
# the package itself: its __init__ only makes the checkout's adapters/ and cases/ importable
PACKAGE = "conformance"
# (module, imported): deferred imports that go up a layer, and why
DEFERRED_UP = {
    ("conformance.registry", "conformance.adapters.base"):
        "NotApplicable, raised where a case hands a tensor to a framework that is not installed or has no "
        "fn:from_dlpack: the registry lists adapter classes without importing their modules until asked",
}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "adapters":
        parts = ["conformance", "adapters", *parts[1:]]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer(module: str) -> int:
    if module == PACKAGE:
        return 0
    best, rank = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    assert rank >= 0, module
    return rank


def imports(path: Path) -> tuple[set[str], set[str]]:
    """(imported at the top of the module, imported inside functions), conformance only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    deferred: set[str] = set()
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    inner = {id(node) for f in functions for node in ast.walk(f) if node is not f}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # 'from package import module' imports the module (the package's __init__ runs
            # too: a package whose __init__ holds code is a module of its layer like any other)
            submodules = [f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}")]
            names = submodules if len(submodules) == len(node.names) else [node.module, *submodules]
        names = [n for n in names if n.startswith("conformance") and _is_module(n)]
        if isinstance(node, ast.If) and _is_type_checking(node):
            for inner_node in ast.walk(node):
                inner.add(id(inner_node))  # for annotations only: nothing is imported at run time
        (deferred if id(node) in inner else top).update(names)
    return top, deferred


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _is_module(name: str) -> bool:
    parts = name.split(".")
    if parts[:2] == ["conformance", "adapters"]:
        path = ROOT / "adapters" / Path(*parts[2:])
    else:
        path = ROOT / Path(*parts)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def sources() -> list[Path]:
    return sorted((ROOT / "conformance").rglob("*.py")) + sorted((ROOT / "adapters").rglob("*.py"))


def graph() -> dict[str, tuple[set[str], set[str]]]:
    return {module_name(path): imports(path) for path in sources()}


def test_every_module_imports_only_its_layer_or_below_at_its_top() -> None:
    upward = [f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
              for module, (top, _) in graph().items() for target in sorted(top)
              if layer(target) > layer(module)]
    assert upward == []


def test_a_deferred_import_up_a_layer_is_listed_with_its_reason() -> None:
    found = {(module, target) for module, (_, deferred) in graph().items() for target in deferred
             if layer(target) > layer(module)}
    assert sorted(found - set(DEFERRED_UP)) == []
    assert sorted(set(DEFERRED_UP) - found) == []  # a listed reason no longer needed is removed


def test_no_modules_import_each_other_in_a_cycle() -> None:
    edges = {module: {t for t in top if t != module} for module, (top, _) in graph().items()}
    cycles = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges.get(module, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target):] + [target]) if target in path else target)
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    # a package's __init__ importing its own modules, which import the package's siblings
    # through it, is not a cycle between modules: only count cycles of distinct modules
    assert [c for c in cycles if len(set(c.split(" -> "))) > 1 and not _package_init_cycle(c)] == []


def _package_init_cycle(cycle: str) -> bool:
    modules = cycle.split(" -> ")
    return any(other.startswith(m + ".") for m in modules for other in modules)


def test_the_layers_name_every_module() -> None:
    for path in sources():
        layer(module_name(path))  # fails for a module no layer covers


def test_control_an_upward_import_at_the_top_is_found(tmp_path: Path) -> None:
    source = tmp_path / "engine_like.py"
    source.write_text("from conformance.tools import cli\n\ndef later():\n    from conformance.report import pages\n")
    top, deferred = imports(source)
    assert top == {"conformance.tools.cli"} and deferred == {"conformance.report.pages"}
    assert layer("conformance.tools.cli") > layer("conformance.run.engine") > layer("conformance.model")


def test_the_reports_read_results_and_outcomes_never_the_engine() -> None:
    """report/ and site/ render what a run recorded (the results file, conformance.outcomes):
    nothing of run/, which makes it."""
    readers = [*(ROOT / "conformance" / "report").glob("*.py"), *(ROOT / "conformance" / "site").glob("*.py")]
    reaching = sorted(f"{path.relative_to(ROOT)}: {name}" for path in readers for found in imports(path)
                      for name in found if name == "conformance.run" or name.startswith("conformance.run."))
    assert reaching == []
