"""What each operation-table entry calls, in the framework's own spelling (``paddle.Tensor.reshape``,
``jnp.asarray``, ``tf.identity``), read from the entries themselves without importing a
framework: the site's search index carries them (docs/site.md, "Search"), and the case pages'
repro snippets (:mod:`conformance.site.repro`) spell their steps with them.

An entry is one of (docs/adapters.md, "Spellings"):

- ``passthrough(name)`` / ``attribute(name)`` / ``attribute_setter(name)``: the framework's
  method or attribute of the key's own name (their ``python_syntax``), ``<Array type>.<name>``;
- ``absent(reason)``: nothing (the framework has no counterpart);
- a function of the adapter's own: what it calls is read from its bytecode, following the
  module accessors the adapters import their framework through (``_torch()``, ``_jnp()``,
  ``import numpy``), attribute chains on them (``tf().experimental.numpy.reshape``), methods of
  its first argument (``x.reshape``), ``getattr(_torch(), name)`` with ``name`` a string of the
  closure, and the adapter module's own helpers it calls (one level deep, as ``_view``).

Nothing here runs an entry: reading a code object imports nothing.
"""

from __future__ import annotations

import dis
import inspect
import types
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from conformance import registry
from conformance.adapters.base import PYTHON_OPERATORS

# the accessor functions the adapters import their framework through -> how a user spells it
ACCESSORS = {
    "_torch": "torch", "_jnp": "jnp", "_jax": "jax", "_tf": "tf", "_tnp": "tnp", "_np": "np",
    "_paddle": "paddle", "_ms": "mindspore", "_load_mindspore": "mindspore", "_xp": "xp",
    "_recfunctions": "np.lib.recfunctions",
}
# ``import <module>`` inside an entry -> the spelling
IMPORTS = {"numpy": "np", "torch": "torch", "paddle": "paddle", "tensorflow": "tf", "jax": "jax",
           "mindspore": "mindspore", "array_api_strict": "xp"}
# the array type of each eager framework, for a method or attribute (``paddle.Tensor.reshape``)
ARRAY_TYPES = {
    "torch": "torch.Tensor", "paddle": "paddle.Tensor", "numpy": "np.ndarray", "jax": "jax.Array",
    "tensorflow": "tf.Tensor", "mindspore": "mindspore.Tensor", "array_api_strict": "Array",
}
# the import each framework's spelling assumes
IMPORT_LINES = {
    "torch": "import torch", "paddle": "import paddle", "numpy": "import numpy as np",
    "jax": "import jax\nimport jax.numpy as jnp", "tensorflow": "import tensorflow as tf",
    "mindspore": "import mindspore", "array_api_strict": "import array_api_strict as xp",
}
# what each compiled mode is, in the call a user writes (the adapters' docstrings say so)
COMPILERS = {
    "torch_compile": "torch.compile(fn, backend='aot_eager')",
    "torch_inductor": "torch.compile(fn) (inductor)",
    "jax_jit": "jax.jit(fn)",
    "tensorflow_function": "tf.function(fn)",
    "tensorflow_xla": "tf.function(fn, jit_compile=True) (XLA)",
    "paddle_static": "paddle.jit.to_static(fn) (SOT)",
}


@dataclass(frozen=True)
class Spelling:
    """What an entry calls: ``calls`` the framework's names (``torch.reshape``,
    ``torch.Tensor.view``), ``method``/``attr`` set where the entry is exactly ``x.<name>(...)``
    / ``x.<name>`` as a user writes it; ``absent`` the reason where the framework has none."""

    calls: tuple[str, ...] = ()
    method: str | None = None
    attr: str | None = None
    setattr_: str | None = None
    absent: str | None = None
    function: str | None = None  # a function that forwards the case's arguments unchanged: torch.<name>
    python: bool = False  # an ``op:`` entry that is Python's own operator (PYTHON_OPERATORS)


def spell(framework: str, key: str, entry: Any) -> Spelling:
    """What ``entry`` (the table's entry for ``key``) calls, in ``framework``'s spelling."""
    reason = getattr(entry, "not_applicable", None)
    if reason:
        return Spelling(absent=str(reason))
    if PYTHON_OPERATORS.get(key) is entry:
        return Spelling(python=True)
    array = ARRAY_TYPES.get(framework, "x")
    syntax = getattr(entry, "python_syntax", None)
    if isinstance(syntax, tuple) and len(syntax) == 2:
        kind, name = syntax
        if kind == "method":
            return Spelling((f"{array}.{name}",), method=name)
        if kind == "attr":
            return Spelling((f"{array}.{name}",), attr=name)
        if kind == "setattr":
            return Spelling((f"{array}.{name}",), setattr_=name)
    code = getattr(entry, "__code__", None)
    if code is None:
        return Spelling()
    found: list[str] = []
    _read(entry, array, found, depth=0)
    calls = tuple(dict.fromkeys(c for c in found if _named(c, array)))
    name = key.partition(":")[2]
    # ``lambda *args, **kwargs: getattr(_torch(), name)(*args, **kwargs)``: the call as written
    forwards = (code.co_argcount == 0 and code.co_flags & inspect.CO_VARARGS and code.co_flags & inspect.CO_VARKEYWORDS
                and len(calls) == 1 and calls[0].rpartition(".")[2] == name and not calls[0].startswith(array + "."))
    return Spelling(calls, function=calls[0] if forwards else None)


# attribute reads an entry makes along the way (a shape, a dtype), not what it calls
_INCIDENTAL = {"shape", "ndim", "dtype", "size", "name", "itemsize", "element_size", "get_strides", "strides"}


def _named(call: str, array: str) -> bool:
    last = call.rpartition(".")[2]
    return call != array and not last.startswith("_") and last not in _INCIDENTAL and ".dtype." not in call


def _resolve(func: types.FunctionType, name: str) -> Any:
    code = func.__code__
    if name in code.co_freevars and func.__closure__ is not None:
        try:
            return func.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:  # an empty cell
            return None
    return func.__globals__.get(name)


def _read(func: Any, array: str, found: list[str], depth: int) -> None:
    if not isinstance(func, types.FunctionType):
        return
    code = func.__code__
    receiver = code.co_varnames[0] if code.co_argcount else None
    locals_: dict[str, str] = {}  # a local bound to an imported module
    chain: list[str] | None = None
    getattr_next = False
    pending_import: str | None = None
    for ins in dis.get_instructions(code):
        op, val = ins.opname, ins.argval
        if op == "IMPORT_NAME":
            pending_import = IMPORTS.get(str(val).split(".")[0])
            continue
        if op in ("STORE_FAST", "STORE_NAME") and pending_import:
            locals_[str(val)] = pending_import
            pending_import = None
            continue
        pending_import = None
        if op in ("LOAD_ATTR", "LOAD_METHOD") and chain is not None:
            chain.append(str(val))
            continue
        if op in ("PRECALL", "CALL", "PUSH_NULL", "CACHE", "KW_NAMES") and chain is not None and len(chain) == 1:
            continue  # the accessor's own call: _torch()
        if chain is not None and getattr_next and op in ("LOAD_DEREF", "LOAD_CONST", "LOAD_FAST"):
            name = _resolve(func, str(val)) if op != "LOAD_CONST" else val
            if isinstance(name, str):
                chain.append(name)
            getattr_next = False
        if chain is not None and len(chain) > 1:
            found.append(".".join(chain))
        chain = None
        if op in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_FAST", "LOAD_NAME"):
            name = str(val)
            if op == "LOAD_FAST" and name in locals_:
                chain = [locals_[name]]
                continue
            if op == "LOAD_FAST" and name == receiver:
                chain = [array]
                continue
            target = _resolve(func, name) if op != "LOAD_FAST" else None
            if name == "getattr" and target is None:
                getattr_next = True
                continue
            accessor = getattr(target, "__name__", None)
            if callable(target) and accessor in ACCESSORS:
                chain = [ACCESSORS[accessor]]
                continue
            if getattr_next and accessor not in ACCESSORS:
                getattr_next = False
            if (depth < 1 and isinstance(target, types.FunctionType) and target.__module__ == func.__module__
                    and accessor not in ACCESSORS):
                _read(target, array, found, depth + 1)
    if chain is not None and len(chain) > 1:
        found.append(".".join(chain))


@lru_cache(maxsize=None)
def table(framework: str) -> dict[str, Spelling]:
    """Every key of ``framework``'s operation table -> its spelling. Builds the adapter's table,
    which imports no framework (conformance.registry)."""
    adapter = registry.get_adapter(framework)
    ops = getattr(adapter, "ops", None) or {}
    spelled_as = registry.compiles(framework) or framework  # a compiled mode: its framework's names
    return {key: spell(spelled_as, key, entry) for key, entry in sorted(ops.items())}


def eager_frameworks() -> list[str]:
    return [fw for fw in registry.eager_names() if fw in ARRAY_TYPES]


def search_words(key: str) -> str:
    """Every eager framework's spelling of ``key``, as ``frameworks spellings; ...``, the
    frameworks that spell it alike together (for search)."""
    by_calls: dict[str, list[str]] = {}
    for fw in eager_frameworks():
        spelling = table(fw).get(key)
        if spelling is not None and spelling.calls:
            calls = " ".join(long for call in spelling.calls for long in _with_module(call))
            by_calls.setdefault(calls, []).append(fw)
    return "; ".join(" ".join(fws) + " " + calls for calls, fws in by_calls.items())


# the short module names the spellings use, and the modules they stand for
MODULES = {"np": "numpy", "jnp": "jax.numpy", "tf": "tensorflow", "tnp": "tensorflow.experimental.numpy",
           "xp": "array_api_strict"}


def _with_module(call: str) -> list[str]:
    """``jnp.asarray`` and ``jax.numpy.asarray``: the spelling and the module's full name."""
    head, dot, rest = call.partition(".")
    return [call, MODULES[head] + dot + rest] if head in MODULES and dot else [call]
