"""An adapter's table entry takes every keyword the framework's own function takes (docs/adapters.md,
"An entry takes every call the framework's own function takes"): an entry named after the
framework function it calls (``method:reshape`` calling ``np.ndarray.reshape``) that drops one of
its keywords makes a call the framework accepts an error of the suite (``x.reshape(6,
copy=False)``; issue 38). Checked against the framework function's own signature, where the
framework gives one (``inspect.signature``): NumPy, JAX and array-api-strict; torch's against
its Python signature where it has one (torch.einsum, torch.nn.functional.elu) and its operator
schemas where it is a builtin (``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)``).
TensorFlow's, Paddle's and MindSpore's tables are not checked yet.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

from conformance import registry, spellings

# the frameworks whose functions carry a signature inspect can read
FRAMEWORKS = ("numpy", "jax", "array_api_strict")
# the spelling's module or array type -> (module, attribute) to import it from
MODULES = {"np": ("numpy", None), "np.lib.recfunctions": ("numpy.lib.recfunctions", None),
           "jnp": ("jax.numpy", None), "jax": ("jax", None),
           "xp": ("array_api_strict", None), "np.ndarray": ("numpy", "ndarray"), "jax.Array": ("jax", "Array"),
           "Array": ("array_api_strict", "Array")}
# keywords an entry leaves out on purpose, each with why
NOT_TAKEN = {
    # `like=` makes the result another library's array type (NEP 35): no case's step has one
    *((fw, key, "like") for fw in FRAMEWORKS for key in ("fn:array", "fn:asarray", "fn:frombuffer")),
    # method:split is torch's split, pieces of a size along dim (docs/adapters.md, "Spellings"),
    # not NumPy's cut points: NumPy's keywords would mean something else there
    *((fw, "method:split", name) for fw in ("numpy", "jax") for name in ("indices_or_sections", "axis")),
}


def resolve(call: str) -> Any:
    """The framework object a spelling names (``np.ndarray.reshape``, ``jnp.flip``)."""
    for prefix in sorted(MODULES, key=len, reverse=True):
        if call.startswith(prefix + "."):
            module, attribute = MODULES[prefix]
            obj = importlib.import_module(module)
            if attribute:
                obj = getattr(obj, attribute)
            for part in call[len(prefix) + 1:].split("."):
                obj = getattr(obj, part)
            return obj
    raise LookupError(call)


def compared(framework: str) -> list[tuple[str, Any, Any]]:
    """(key, entry, the framework function) for each entry of ``framework``'s table that is a
    function of the adapter's own calling exactly one framework function of the key's name."""
    adapter = registry.get_adapter(framework)
    out = []
    for key, entry in sorted(adapter.ops.items()):
        spelling = spellings.spell(framework, key, entry)
        if (spelling.python or spelling.absent or spelling.method or spelling.attr or spelling.setattr_
                or spelling.function or len(spelling.calls) != 1):
            continue  # the framework's own method, or a translation the audit describes
        call = spelling.calls[0]
        if call.rpartition(".")[2] != key.partition(":")[2]:
            continue
        try:
            own = inspect.signature(resolve(call))
        except (LookupError, AttributeError, ValueError, TypeError):
            continue  # no signature to read (a builtin without one)
        out.append((key, entry, own))
    return out


def missing_keywords(framework: str, key: str, entry: Any, own: inspect.Signature) -> list[str]:
    """The keywords ``own`` takes that ``entry`` does not: by name, or through ``**kwargs``.
    The first parameter of each (the array, the receiver) is positional in every call."""
    theirs = inspect.signature(entry).parameters
    if any(p.kind is p.VAR_KEYWORD for p in theirs.values()):
        return []
    keywords = [p for p in list(own.parameters.values())[1:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return [p.name for p in keywords if p.name not in theirs and (framework, key, p.name) not in NOT_TAKEN]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_entry_named_after_a_framework_function_takes_its_keywords(framework: str) -> None:
    pytest.importorskip(framework)
    checked = compared(framework)
    assert len(checked) >= 10, [key for key, _, _ in checked]  # the check reaches the table
    assert {key: missing for key, entry, own in checked
            if (missing := missing_keywords(framework, key, entry, own))} == {}


# TorchScript's overloads on Python numbers and lists (aten::add.int(int a, int b)), which no
# call of the Python API reaches, name their arguments so
SCRIPT_ONLY = frozenset({"a", "b", "t", "l", "n"})


def torch_keywords(call: str) -> list[str] | None:
    """The keywords torch's own function takes after its first argument: from its operator
    schemas (aten::NAME, every overload a Python call reaches), or from its Python signature
    (torch.nn.functional); None when torch declares neither."""
    torch = pytest.importorskip("torch")
    name = call.rpartition(".")[2]
    owner = torch.nn.functional if call.startswith("torch.nn.functional.") else torch
    try:  # a Python function of torch's (torch.einsum, torch.nn.functional.elu)
        parameters = list(inspect.signature(getattr(owner, name)).parameters.values())[1:]
    except (ValueError, TypeError, AttributeError):  # a builtin: its schemas
        pass
    else:
        return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    schemas = [s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")
               if not SCRIPT_ONLY & {a.name for a in s.arguments}]
    if not schemas:
        return None
    # a method has no out= (the out= variant is the function's: torch.rot90(x, out=o))
    method = call.startswith("torch.Tensor.")
    return sorted({a.name for s in schemas for a in s.arguments[1:] if not (method and a.name == "out")})


def test_a_torch_entry_named_after_a_torch_function_takes_its_keywords() -> None:
    """torch's builtins have no signature inspect reads; their operator schemas name every
    argument (``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)``)."""
    pytest.importorskip("torch")
    adapter = registry.get_adapter("torch")
    checked, missing = 0, {}
    for key, entry in sorted(adapter.ops.items()):
        spelling = spellings.spell("torch", key, entry)
        if (spelling.python or spelling.absent or spelling.method or spelling.attr or spelling.setattr_
                or spelling.function or len(spelling.calls) != 1):
            continue
        call = spelling.calls[0]
        if call.rpartition(".")[2] != key.partition(":")[2] or not call.startswith("torch."):
            continue
        keywords = torch_keywords(call)
        theirs = inspect.signature(entry).parameters
        if keywords is None or any(p.kind is p.VAR_KEYWORD for p in theirs.values()):
            continue
        checked += 1
        lacking = [k for k in keywords if k not in theirs and ("torch", key, k) not in NOT_TAKEN]
        if lacking:
            missing[key] = lacking
    assert checked >= 10  # the check reaches the table
    assert missing == {}
