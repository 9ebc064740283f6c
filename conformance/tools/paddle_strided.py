"""Paddle's stride (view) kernels as data (issue 35): the operators for which the installed
Paddle registers a CPU kernel of the ``STRIDED`` layout, with the Python spellings that return
that operator's result, written to ``conformance/data/contracts/paddle_strided.yaml``.

Paddle's operator YAML declares only four views (``view: (x -> out)``, read by
conformance/tools/paddle_contracts.py); its other views are declared in C++ by the stride
kernels (``paddle/phi/kernels/stride``, ``PD_REGISTER_KERNEL...(transpose, STRIDED, ...)``),
which compute an output that shares its input's allocation with new dims, strides and offset
(``out->ResetHolder(input.Holder())``). The installed Paddle lists them:
``paddle.base.core._get_registered_phi_kernels('all')`` maps each kernel name to its keys,
``(CPU, STRIDED, float32)`` among them, so nothing is read from a file a pull request can
change, and ``conformance contracts --check`` compares the committed data with the installed
Paddle (:func:`stale`).

A kernel is **the kernel of a Python-callable operator**: its own name where ``paddle._C_ops``
has it (``transpose``), else its name less ``_strided`` (``split_strided`` is the strided kernel
of ``split``). Its **spellings** are the public functions of ``paddle.Tensor``, ``paddle`` and
``paddle.nn.functional`` whose source, in the installed Paddle, returns that operator applied
to the function's first parameter: ``return _C_ops.transpose(x, perm)``, or ``out =
_C_ops.reshape(x, shape)`` ... ``return out``. A function that calls the operator on something
else (``pinv`` transposes a computed matrix) or returns something computed from its result
(``diagflat`` flattens, then returns ``diag``) is not a spelling. A kernel no public function
reaches that way (``index_select_strided``, the ``*_with_xshape`` forms of the legacy static
graph) is excluded with the reason. The commands::

    python -m conformance.tools.paddle_strided --write   # writes the data file (imports paddle)
    python -m conformance.tools.paddle_strided --reach   # registered, spelled, reached by cases/
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import yaml

from conformance.declared import PADDLE_STRIDED_DATA
from conformance.tools.paddle_contracts import NAME, SPELLING, installed, keys, print_reach

DATA = PADDLE_STRIDED_DATA
LAYOUT = "(CPU, STRIDED,"  # the prefix of a CPU stride kernel's key in the registry
SOURCE = ("introspection of paddle.base.core._get_registered_phi_kernels('all') in paddle {version}: the "
          "kernels with a (CPU, STRIDED, dtype) key, less the _grad kernels; spellings: the public functions "
          "of paddle.Tensor, paddle and paddle.nn.functional whose source returns the kernel's operator "
          "(paddle._C_ops) applied to their first parameter")
COMMENT = ("# Paddle's stride (view) kernels: made by python -m conformance.tools.paddle_strided --write "
           "(the definition: its docstring); do not edit by hand\n")


class PaddleStridedError(Exception):
    """The data file is missing or not what --write writes."""


def _body(definition: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, less those of the functions defined inside it."""
    for child in ast.iter_child_nodes(definition):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield child
            yield from _body(child)


def returned_operators(function: Callable[..., Any]) -> set[str]:
    """The ``_C_ops`` operators ``function`` returns applied to its first parameter (``return
    _C_ops.OP(x, ...)``, a name bound to such a call and returned; ``input = x`` makes ``input``
    the parameter too; ``*args`` is the first parameter of a function that has no other).
    None where another return gives another ``_C_ops`` result (``pinv`` returns a transposed
    view of an empty ``x``, else a product of its SVD: no spelling of ``transpose``). A return
    of anything else (the parameter itself, the static graph's output variable) is neither."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(function))))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return set()
    definition = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if definition is None:
        return set()
    arguments = definition.args
    first = (arguments.posonlyargs + arguments.args)[0].arg if arguments.posonlyargs + arguments.args else (
        arguments.vararg.arg if arguments.vararg else None)
    if first is None:
        return set()
    names = {first} | {target.id for node in _body(definition) if isinstance(node, ast.Assign)
                       and isinstance(node.value, ast.Name) and node.value.id == first
                       for target in node.targets if isinstance(target, ast.Name)}

    def operator(node: ast.AST | None) -> tuple[str, bool] | None:
        """(OP, whether applied to the first parameter) of a ``_C_ops.OP(...)`` call, or
        ("=NAME", True) of a call ``NAME(x, ...)`` / ``paddle.NAME(x=x)`` of the first parameter."""
        if not isinstance(node, ast.Call):
            return None
        head = node.args[0] if node.args else (node.keywords[0].value if node.keywords else None)
        if isinstance(head, ast.Starred):
            head = head.value
        mine = isinstance(head, ast.Name) and head.id in names
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            if node.func.value.id == "_C_ops":
                return node.func.attr, mine
            if node.func.value.id == "paddle" and mine:
                return "=" + node.func.attr, True
        if isinstance(node.func, ast.Name) and mine:
            return "=" + node.func.id, True
        return None

    bound: dict[str, set[tuple[str, bool]]] = {}
    for node in _body(definition):
        if isinstance(node, ast.Assign) and (call := operator(node.value)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, set()).add(call)
    returned: set[tuple[str, bool]] = set()
    for node in _body(definition):
        if isinstance(node, ast.Return):
            if call := operator(node.value):
                returned.add(call)
            elif isinstance(node.value, ast.Name):
                returned |= bound.get(node.value.id, set())
    if not all(mine for _op, mine in returned):
        return set()
    return {op for op, _mine in returned}


def spellings_by_operator(modules: Sequence[tuple[str, Any]]) -> dict[str, list[str]]:
    """operator -> the public spellings (``paddle.Tensor.N``, ``paddle.N``,
    ``paddle.nn.functional.N``) that return it (:func:`returned_operators`), directly or through
    another public function of ``paddle`` they return (``view_as_real`` returns ``as_real(x)``,
    ``narrow`` returns ``paddle.as_strided(x, ...)``)."""
    returns: dict[str, set[str]] = {}
    for shown, module in modules:
        for name in sorted(dir(module)):
            function = getattr(module, name, None)
            if not name.startswith("_") and callable(function):
                returns[f"{shown}.{name}"] = returned_operators(function)
    resolved = {spelling: {op for op in ops if not op.startswith("=")} for spelling, ops in returns.items()}
    for _ in range(len(returns)):  # through delegations to a fixpoint (none is deeper than a few calls)
        grown = False
        for spelling, ops in returns.items():
            for delegate in (op[1:] for op in ops if op.startswith("=")):
                more = resolved.get(f"paddle.{delegate}", set()) - resolved[spelling]
                if more:
                    resolved[spelling] |= more
                    grown = True
        if not grown:
            break
    found: dict[str, list[str]] = {}
    for spelling in sorted(resolved):
        for op in sorted(resolved[spelling]):
            found.setdefault(op, []).append(spelling)
    return found


def build(kernels: Iterable[str], operators: Callable[[str], bool], spelled: Mapping[str, Sequence[str]],
          version: str) -> dict[str, Any]:
    """The data file's document. ``kernels``: the registered CPU stride kernels' names;
    ``operators``: whether ``paddle._C_ops`` has a name; ``spelled``: :func:`spellings_by_operator`."""
    kept, excluded = [], []
    for kernel in sorted(set(kernels)):
        op = kernel if operators(kernel) else kernel.removesuffix("_strided")
        if not operators(op):
            excluded.append({"name": kernel, "reason": f"no operator of paddle._C_ops is named {kernel}"
                             + (f" or {op}" if op != kernel else "") + " (a kernel C++ dispatches to)"})
        elif not spelled.get(op):
            excluded.append({"name": kernel, "reason": f"no public function of paddle.Tensor, paddle or "
                             f"paddle.nn.functional returns _C_ops.{op} of its first parameter"})
        else:
            kept.append({"name": kernel, "operator": op, "spellings": list(spelled[op])})
    return {"framework": "paddle", "version": version, "source": SOURCE.format(version=version),
            "kernels": kept, "excluded": excluded}


def introspect() -> dict[str, Any]:
    """The document, from the installed Paddle (imports it)."""
    import paddle
    from paddle.base import core

    registry = core._get_registered_phi_kernels("all")  # type: ignore[attr-defined]  # a pybind function, no stub
    kernels = [name for name, registered in registry.items()
               if not name.endswith("_grad") and any(str(key).startswith(LAYOUT) for key in registered)]
    version, modules = installed()
    return build(kernels, lambda name: callable(getattr(paddle._C_ops, name, None)),
                 spellings_by_operator(modules), version)


def dump(document: Mapping[str, Any]) -> str:
    return COMMENT + yaml.safe_dump(dict(document), sort_keys=False, width=1 << 16, allow_unicode=True)


def read(path: Path | None = None) -> dict[str, Any]:
    """The committed data, its shape checked (its spellings become vocabulary keys a
    measurement looks up, never table entries)."""
    from conformance.declared import load_data

    path = DATA if path is None else path
    document = load_data(path, PaddleStridedError, "run python -m conformance.tools.paddle_strided --write where "
                                                   "paddle is installed")
    try:
        for kernel in document["kernels"]:
            if (not NAME.fullmatch(str(kernel["name"])) or not NAME.fullmatch(str(kernel["operator"]))
                    or not all(SPELLING.fullmatch(str(s)) for s in kernel["spellings"])):
                raise PaddleStridedError(f"{path}: kernel {kernel['name']!r}: identifiers and paddle spellings "
                                         "(paddle.N, paddle.Tensor.N, paddle.nn.functional.N) are required: write "
                                         "it again with python -m conformance.tools.paddle_strided --write")
        str(document["version"])
        list(document["excluded"])
    except (KeyError, TypeError) as exc:
        raise PaddleStridedError(f"{path}: not what --write writes (missing or malformed {exc})") from None
    return dict(document)


def reach(document: Mapping[str, Any], cases: Sequence[Any]) -> list[str]:
    """Registered, with a spelling, reached by ``cases`` on the paddle adapter (a case that
    calls a spelling and asserts sharing or identity of its result, conformance.tools.coverage),
    and each kernel not reached with why."""
    from conformance import registry
    from conformance.adapters.paddle_adapter import INPLACE_ELEMENTWISE_ALIASES as aliases
    from conformance.source import Location
    from conformance.tools import coverage

    mine = list(document["kernels"])

    def entry_keys(kernel: Mapping[str, Any]) -> tuple[str, ...]:
        # paddle.Tensor.real is a method where torch's is an attribute: the table's attr:real calls it
        found = keys(kernel, aliases)
        return found + tuple("attr:" + k.split(":", 1)[1] for k in found if k.startswith("method:"))

    reference = coverage.ReferenceList(
        path=str(DATA), framework="paddle", set="views", title="Paddle's CPU stride kernels",
        source="PaddlePaddle/Paddle", version=str(document["version"]),
        entries=tuple(coverage.Entry(name=k["name"], keys=entry_keys(k), location=Location(str(DATA), 1, 1))
                      for k in mine))
    measured = coverage.measure(reference, cases, {"paddle": registry.get_adapter("paddle")})
    gaps = [(k, m) for k, m in zip(mine, measured.entries) if not m.covered]
    lines = [f"stride kernels: {len(mine) + len(document['excluded'])} registered for CPU, {len(mine)} with a "
             f"Python spelling, {len(mine) - len(gaps)} reached by the corpus"]
    lines += [f"  {k['name']} ({', '.join(entry_keys(k))}): {m.gap()}" for k, m in gaps]
    return lines


def stale(document: Mapping[str, Any]) -> list[str]:
    """Where Paddle is installed, how the committed data differs from what it registers and
    spells, in words; empty where Paddle is not installed or nothing differs."""
    import importlib.util

    if importlib.util.find_spec("paddle") is None:
        return []
    made = introspect()
    problems = []
    if str(document["version"]) != made["version"]:
        problems.append(f"{DATA}: made on paddle {document['version']}, the installed one is {made['version']}")
    for part in ("kernels", "excluded"):
        committed = {k["name"]: k for k in document[part]}
        installed = {k["name"]: k for k in made[part]}
        for name in sorted(set(committed) | set(installed)):
            if committed.get(name) != installed.get(name):
                problems.append(f"{DATA}: {part} {name}: {installed.get(name)} on the installed paddle, not "
                                f"{committed.get(name)}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in (["--write"], ["--reach"]):
        print("usage: python -m conformance.tools.paddle_strided --write | --reach", file=sys.stderr)
        return 2
    if args == ["--reach"]:
        return print_reach(lambda cases: reach(read(), cases))
    from conformance.report.outputs import write_files

    document = introspect()
    DATA.parent.mkdir(parents=True, exist_ok=True)
    write_files({DATA: dump(document)})
    print(f"{len(document['kernels']) + len(document['excluded'])} CPU stride kernels, "
          f"{len(document['kernels'])} with a Python spelling, {len(document['excluded'])} excluded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
