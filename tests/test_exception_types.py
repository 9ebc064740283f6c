"""Each built-in adapter's ``exception_types`` (the exception classes its framework
defines, by qualified name) is what the framework really defines once imported: checked in
a fresh interpreter per framework, which imports it the way the sandbox does (the adapter's
setup), so that the loader's check of ``error.<framework>.type`` (CF013) neither refuses a
name the framework can raise nor accepts one it cannot."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from conformance import registry
from conformance.registry import BUILTIN_EXCEPTIONS

# every exception class defined in the framework's package, warnings aside, after the
# adapter imported it; named as the engine records a step's exception type
DEFINED = """
import json, sys
from conformance import registry
adapter = registry.get_adapter(sys.argv[1])
adapter.setup()
package = adapter.module
found, stack = set(), [BaseException]
while stack:
    for cls in stack.pop().__subclasses__():
        if cls not in found:
            found.add(cls)
            stack.append(cls)
print(json.dumps(sorted({f"{c.__module__}.{c.__qualname__}" for c in found
                         if (c.__module__ == package or c.__module__.startswith(package + "."))
                         and not issubclass(c, Warning)})))
"""


@pytest.mark.parametrize("name", list(registry.BUILTIN))
def test_declared_exception_types_are_what_the_framework_defines(name: str) -> None:
    adapter = registry.adapter_class(name)
    if importlib.util.find_spec(adapter.module) is None:
        pytest.skip(f"{name} is not installed")
    run = subprocess.run([sys.executable, "-c", DEFINED, name], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    defined = set(json.loads(run.stdout.strip().splitlines()[-1]))
    declared = set(adapter.exception_types)
    assert (sorted(defined - declared), sorted(declared - defined)) == ([], []), \
        f"update {name}'s adapter: exception_types (missing, stale)"


def test_the_vocabulary_gives_each_declared_framework_its_names_and_the_builtins() -> None:
    names = registry.vocabulary().exception_types
    assert names is not None and set(names) == set(registry.BUILTIN)
    torch = names["torch"]
    assert {"RuntimeError", "ValueError", "torch.OutOfMemoryError", "OutOfMemoryError", "_LinAlgError"} <= torch
    assert BUILTIN_EXCEPTIONS <= names["numpy"] and "_UFuncOutputCastingError" in names["numpy"]
    assert "RuntimeErorr" not in torch
