"""A case's steps as a user's Python function: what a compiled mode compiles (issue 34).

The function is built as a syntax tree from the case's validated IR, never from its text,
with the statement forms of :mod:`conformance.run.statements` (the eager engine's), and
compiled with Python's ``compile`` from that tree (docs/security.md, "The compiled modes'
function"). It is straight-line code, as a user writes it: one statement after the other,
``with`` blocks, Python's own syntax for what the adapter's table maps to Python's own
semantics, so that a compiler sees what it would see in a user's function:

- a Python operator is its syntax (``x + y``, ``-x``, ``x[i]``, ``x[i] = v``, ``x += y``,
  ``x[i] += y``) where the table's entry is Python's operator (adapters.base.PYTHON_OPERATORS);
- a method, an attribute read or an attribute assignment is its syntax (``x.add_(1)``,
  ``x.T``, ``x.requires_grad = True``) where the table's entry says it is exactly that
  (adapters.base: ``passthrough``, ``attribute``, ``attribute_setter``);
- anything else (a function such as ``relu``, a method the adapter maps to something else,
  an immutable framework's refusal of ``x[i] = v``) is a call of the table's entry, which is
  a global of the function named after the operation (``relu(x)``, ``_view(x, 2)``).

The case's names are the function's parameters (the given tensors) and locals; the names the
builder adds start with ``_``, which no case name may (conformance.load.steps), so neither
hides the other. The function's globals are the table's entries it calls (and Python's
builtins, for the table's functions a compiler inlines); its code reads no other global.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import linecache
import types
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

from conformance.adapters.base import PYTHON_OPERATORS
from conformance.ir import Step, names_bound
from conformance.run import statements

_BINARY: Mapping[str, type[ast.operator]] = {
    "add": ast.Add, "sub": ast.Sub, "mul": ast.Mult, "truediv": ast.Div, "floordiv": ast.FloorDiv,
    "mod": ast.Mod, "pow": ast.Pow, "matmul": ast.MatMult, "and_": ast.BitAnd, "or_": ast.BitOr,
    "xor": ast.BitXor,
}
_INPLACE: Mapping[str, type[ast.operator]] = {"i" + name.rstrip("_"): node for name, node in _BINARY.items()}
_UNARY: Mapping[str, type[ast.unaryop]] = {"neg": ast.USub, "pos": ast.UAdd, "invert": ast.Invert}
_COMPARE: Mapping[str, type[ast.cmpop]] = {
    "gt": ast.Gt, "lt": ast.Lt, "ge": ast.GtE, "le": ast.LtE, "eq": ast.Eq, "ne": ast.NotEq,
}
# the constants a step may hold (conformance.load.steps refuses bytes)
_CONSTANTS = (int, float, complex, bool, str, type(None), type(Ellipsis))


@dataclass(frozen=True)
class CaseFunction:
    """The function (``function(*given)`` returns the values of ``returns``, in order), and
    its syntax tree, for showing what was compiled (``ast.unparse(tree)``)."""

    function: Callable[..., tuple[Any, ...]]
    returns: tuple[str, ...]
    tree: ast.Module

    def source(self) -> str:
        return ast.unparse(self.tree)


def syntax_of(entry: Any, key: str) -> bool:
    """Whether the table's ``entry`` for ``key`` is exactly what Python's syntax for it does."""
    kind, _, name = key.partition(":")
    if kind == "op":
        return entry is PYTHON_OPERATORS.get(key)
    return getattr(entry, "python_syntax", None) == (kind, name)


@dataclass(frozen=True)
class _InPlace:
    """An in-place operator's application, which only an augmented assignment of the same
    target can write as syntax (``x += y``); anywhere else it is the table's call."""

    op: str
    target: ast.expr
    value: ast.expr


class _Builder:
    """The primitive actions of the steps (conformance.run.statements.Forms), emitted as the
    statements of the function's body."""

    def __init__(self, ops: Mapping[str, Any]) -> None:
        self.ops = ops
        # Python's builtins, which the table's functions the compiler inlines read through this
        # frame (Dynamo: "InternalTorchDynamoError: len" without them); the function's own
        # code names none (_check)
        self.globals: dict[str, Any] = {"__builtins__": builtins}
        self.names: dict[str, str] = {}  # table key -> the global naming its entry
        self.body: list[ast.stmt] = []
        self.line = 1
        self.temporaries = 0

    # ---- helpers

    def entry(self, key: str) -> ast.Name:
        """The global that names the table's entry for ``key``."""
        if key not in self.names:
            base = "_" + (key.partition(":")[2] or key)
            name, n = base, 1
            while name in self.globals:
                n += 1
                name = f"{base}_{n}"
            self.globals[name] = self.ops[key]
            self.names[key] = name
        return ast.Name(self.names[key], ast.Load())

    def syntax(self, key: str) -> bool:
        return syntax_of(self.ops[key], key)

    def emit(self, statement: ast.stmt) -> None:
        self.body.append(statement)

    def temporary(self) -> str:
        self.temporaries += 1
        return f"_t{self.temporaries}"

    def value(self, node: Any) -> ast.expr:
        """``node`` as an expression anywhere: a slice outside a subscript is a call of
        ``slice``; an in-place operator not stored back, a call of the table's entry."""
        if isinstance(node, _InPlace):
            return self.call_entry("op:" + node.op, [self.value(node.target), node.value])
        if isinstance(node, ast.Slice):
            parts = [p if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)]
            if "slice" not in self.globals:
                self.globals["slice"] = slice
            return ast.Call(ast.Name("slice", ast.Load()), parts, [])
        if isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts):
            return ast.Tuple([self.value(e) for e in node.elts], ast.Load())
        assert isinstance(node, ast.expr), node
        return node

    def call_entry(self, key: str, args: list[ast.expr], kwargs: Sequence[tuple[str, ast.expr]] = ()) -> ast.expr:
        return ast.Call(self.entry(key), args, [ast.keyword(k, v) for k, v in kwargs])

    @staticmethod
    def _store_context(node: ast.expr) -> ast.Name | ast.Subscript | ast.Attribute:
        if isinstance(node, ast.Name):
            return ast.Name(node.id, ast.Store())
        if isinstance(node, ast.Subscript):
            return ast.Subscript(node.value, node.slice, ast.Store())
        assert isinstance(node, ast.Attribute)
        return ast.Attribute(node.value, node.attr, ast.Store())

    def assign(self, target: ast.expr, value: Any) -> None:
        """``target = value``, or ``target op= y`` where ``value`` is an in-place operator
        applied to the target itself."""
        if isinstance(value, _InPlace) and ast.dump(value.target) == ast.dump(target):
            self.emit(ast.AugAssign(self._store_context(target), _INPLACE[value.op](), value.value))
            return
        self.emit(ast.Assign([self._store_context(target)], self.value(value)))

    # ---- Forms

    def name(self, name: str) -> ast.expr:
        return ast.Name(name, ast.Load())

    def constant(self, value: Any) -> ast.expr:
        if type(value) not in _CONSTANTS:  # pragma: no cover - the loader makes no other
            raise TypeError(f"not a step's constant: {type(value).__name__}")
        return ast.Constant(value)

    def sequence(self, items: list[Any], tuple_: bool) -> ast.expr:
        if tuple_:  # an index's tuple keeps its slices: x[0, 1:]
            return ast.Tuple(list(items), ast.Load())
        return ast.List([self.value(e) for e in items], ast.Load())

    def slice(self, start: Any, stop: Any, step: Any) -> Any:
        return ast.Slice(start, stop, step)

    def operator(self, op: str, operands: list[Any]) -> Any:
        key = "op:" + op
        if self.syntax(key):
            if op == "getitem":
                obj, index = operands
                return ast.Subscript(self.value(obj), index, ast.Load())
            if op in _INPLACE:
                return _InPlace(op, self.value(operands[0]), self.value(operands[1]))
            values = [self.value(o) for o in operands]
            if op in _BINARY:
                return ast.BinOp(values[0], _BINARY[op](), values[1])
            if op in _UNARY:
                return ast.UnaryOp(_UNARY[op](), values[0])
            return ast.Compare(values[0], [_COMPARE[op]()], [values[1]])
        return self.call_entry(key, [self.value(o) for o in operands])

    def call(self, key: str, args: list[Any], kwargs: list[tuple[str, Any]]) -> ast.expr:
        values = [self.value(a) for a in args]
        keywords = [(k, self.value(v)) for k, v in kwargs]
        kind, _, name = key.partition(":")
        if self.syntax(key):
            if kind == "method":
                return ast.Call(ast.Attribute(values[0], name, ast.Load()), values[1:],
                                [ast.keyword(k, v) for k, v in keywords])
            if kind == "attr":
                return ast.Attribute(values[0], name, ast.Load())
        return self.call_entry(key, values, keywords)

    def once(self, value: Any) -> Any:
        if _pure(value):
            return value
        name = self.temporary()
        self.emit(ast.Assign([ast.Name(name, ast.Store())], self.value(value)))
        return ast.Name(name, ast.Load())

    def discard(self, value: Any) -> None:
        self.emit(ast.Expr(self.value(value)))

    def bind(self, name: str, value: Any, number: int) -> None:
        self.assign(ast.Name(name, ast.Load()), value)

    def store_item(self, obj: Any, index: Any, value: Any) -> None:
        if self.syntax("op:setitem"):
            self.assign(ast.Subscript(self.value(obj), index, ast.Load()), value)
        else:
            self.discard(self.call_entry("op:setitem", [self.value(obj), self.value(index), self.value(value)]))

    def store_attr(self, obj: Any, attr: str, value: Any) -> None:
        if self.syntax("setattr:" + attr):
            self.assign(ast.Attribute(self.value(obj), attr, ast.Load()), value)
        else:
            self.discard(self.call_entry("setattr:" + attr, [self.value(obj), self.value(value)]))

    def unpack(self, value: Any, count: int) -> list[Any]:
        names = [self.temporary() for _ in range(count)]
        self.emit(ast.Assign([ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())], self.value(value)))
        return [ast.Name(n, ast.Load()) for n in names]

    @contextmanager
    def block(self, name: str) -> Iterator[None]:
        outer, self.body = self.body, []
        yield
        inner, self.body = self.body, outer
        self.emit(ast.With([ast.withitem(ast.Call(self.entry("block:" + name), [], []))], inner or [ast.Pass()]))


def _pure(node: Any) -> bool:
    """Evaluating ``node`` twice is evaluating it once: names and constants, and sequences
    and slices of them."""
    if node is None or isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_pure(e) for e in node.elts)
    if isinstance(node, ast.Slice):
        return all(_pure(p) for p in (node.lower, node.upper, node.step))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):  # -1
        return isinstance(node.operand, ast.Constant)
    return False


def build(steps: Sequence[Step], ops: Mapping[str, Any], inputs: Sequence[str], outputs: Sequence[str],
          name: str = "case") -> CaseFunction:
    """The function of ``inputs`` whose body is ``steps``, returning the values of those of
    ``outputs`` that an input or a step binds (:attr:`CaseFunction.returns`)."""
    builder = _Builder(ops)
    statements.run(steps, builder)
    bound = set(inputs) | {n for step in steps for s in step.flat() for n in names_bound(s)}
    returns = tuple(n for n in outputs if n in bound)
    builder.emit(ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in returns], ast.Load())))
    parameters = ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in inputs], vararg=None, kwonlyargs=[],
                               kw_defaults=[], kwarg=None, defaults=[])
    definition = ast.FunctionDef(name=name, args=parameters, body=builder.body, decorator_list=[], returns=None)
    tree = ast.Module([definition], [])
    _check(tree, set(builder.globals) - {"__builtins__"})
    _numbered(definition, 1)
    source = ast.unparse(tree)
    # the source, for what reads a function's lines: tracebacks, a compiler's messages,
    # TensorFlow's AutoGraph (which refuses a function whose source it cannot find). The text
    # is the tree's own, and its lines are the tree's line numbers (tests/test_case_function.py)
    filename = f"<conformance function {hashlib.sha256(source.encode()).hexdigest()[:16]}>"
    lines = [line + "\n" for line in source.splitlines()]
    linecache.cache[filename] = (len(source), None, lines, filename)
    code = compile(tree, filename, "exec")
    function_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    function = types.FunctionType(function_code, builder.globals, name)
    return CaseFunction(function, returns, tree)


def _numbered(statement: ast.stmt, line: int) -> int:
    """Each statement on the line ``ast.unparse`` writes it on (the definition on line 1, then
    one line for each statement and each ``with``): the next free line."""
    for node in ast.walk(statement):
        if isinstance(node, (ast.expr, ast.arg, ast.keyword)):
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = 0
    statement.lineno, statement.col_offset, statement.end_col_offset = line, 0, 0
    following = line + 1
    for inner in getattr(statement, "body", ()):
        following = _numbered(inner, following)
    statement.end_lineno = following - 1
    return following


# what the builder makes, and nothing else: the tree is checked before it is compiled
_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AugAssign, ast.Expr, ast.With,
    ast.withitem, ast.Pass, ast.Name, ast.Constant, ast.Tuple, ast.List, ast.Slice, ast.Subscript, ast.Attribute,
    ast.Call, ast.keyword, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Load, ast.Store, ast.operator, ast.unaryop,
    ast.cmpop,
)


def _check(tree: ast.Module, entries: set[str]) -> None:
    """Only the builder's node types; every name read is one of the function's parameters,
    one it binds, or one of ``entries`` (the table's entries in its globals), never a builtin;
    no name or attribute starting with two underscores: what the function can reach is its
    inputs and the table's entries it names."""
    local = {a.arg for node in ast.walk(tree) if isinstance(node, ast.arguments) for a in node.args}
    local |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise TypeError(f"the case's function holds a {type(node).__name__}")  # pragma: no cover
        for text in (getattr(node, "id", None), getattr(node, "attr", None), getattr(node, "arg", None)):
            if isinstance(text, str) and text.startswith("__"):
                raise ValueError(f"the case's function names {text!r}")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local | entries:
            raise ValueError(f"the case's function reads {node.id!r}, which is neither its own nor the table's")

