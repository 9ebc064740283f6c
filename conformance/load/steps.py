"""Step text -> step IR, through ``ast`` and an allowlist.

A step reads like one line of Python (``y = x.add_(1)``, ``x[1:] = 0``, ``x += 1``,
``y.sum().backward()``), but it is never executed as Python. It is parsed with
:func:`ast.parse` and only the constructs below are accepted; every call and attribute
becomes an operation-table key (``method:add_``, ``fn:relu``, ``attr:T``) that an adapter
must define. Names starting with ``_`` (and so every dunder) are refused outright.
"""

from __future__ import annotations

import ast
import functools
import re

from conformance.ir import (
    AttrTarget,
    Const,
    Expr,
    ItemTarget,
    NameTarget,
    Op,
    PyOp,
    Ref,
    Seq,
    SliceExpr,
    Step,
    Target,
)
from conformance.source import CaseFormatError, Location

MAX_STEP_CHARS = 500
# the fix for a refused construct that has no more specific one
STEP_FORMS = "write the step with the accepted forms only (see 'steps' in docs/case-format.md)"

BINARY = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul",
    ast.BitAnd: "and_", ast.BitOr: "or_", ast.BitXor: "xor",
}
INPLACE = {k: "i" + v.rstrip("_") for k, v in BINARY.items()}
UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}
COMPARE = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
BLOCKS = ("no_grad", "enable_grad", "inference_mode")

_REFUSED = {
    ast.Lambda: "lambda", ast.IfExp: "a conditional expression", ast.BoolOp: "'and' / 'or'",
    ast.Dict: "a dict literal", ast.Set: "a set literal", ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension", ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression", ast.JoinedStr: "an f-string",
    ast.NamedExpr: "':='", ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield",
    ast.Starred: "'*' unpacking",
}


class _Parser:
    def __init__(self, text: str, location: Location, defined: set[str]) -> None:
        self.text = text
        self.location = location
        self.defined = defined
        # what the step uses, noted while its IR is built (walking the IR again for them
        # was a tenth of the cost of loading a case)
        self.reads: set[str] = set()
        self.operations: set[str] = set()
        self.strings: set[str] = set()  # string constants: names (dtypes, devices) the loader checks

    def fail(self, node: ast.AST | None, message: str, hint: str | None = None) -> CaseFormatError:
        col = self.location.column
        offset, lineno = getattr(node, "col_offset", None), getattr(node, "lineno", 1)
        if offset is not None:
            # point into the step text; the YAML column is where the text starts
            line = self.text.splitlines()[lineno - 1] if self.text else ""  # col_offset counts bytes
            col = self.location.column + len(line.encode("utf-8")[:offset].decode("utf-8", "ignore"))
        # an over-long step is not repeated whole in its own error message
        shown = self.text if len(self.text) <= MAX_STEP_CHARS else self.text[:60] + "..."
        return CaseFormatError(
            Location(self.location.file, self.location.line, col),
            f"in step {shown!r}: {message}", hint or STEP_FORMS,
        )

    # ---- statements

    def statement(self, number: int) -> Step:
        if len(self.text) > MAX_STEP_CHARS:
            raise self.fail(None, f"a step is at most {MAX_STEP_CHARS} characters",
                            "split it into several steps")
        try:
            module = _parse_python(self.text)
        except SyntaxError as exc:
            raise self.fail(None, f"not a valid step: {exc.msg}",
                            "write one Python-like statement, e.g. 'y = x.add_(1)'") from None
        if len(module.body) != 1:
            raise self.fail(None, "a step must be exactly one statement",
                            "put each statement in its own list item")
        stmt = module.body[0]
        step = functools.partial(Step, number=number, text=self.text, location=self.location)
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                raise self.fail(stmt, "chained assignment 'a = b = ...' is not supported",
                                "assign one name per step")
            written = stmt.targets[0]
            targets: tuple[Target, ...]
            unpack = isinstance(written, (ast.Tuple, ast.List))
            if isinstance(written, (ast.Tuple, ast.List)):
                targets = tuple(self.name_target(t) for t in written.elts)
            else:
                targets = (self.target(written),)
            return step(kind="assign", targets=targets, value=self.expr(stmt.value), unpack=unpack)
        if isinstance(stmt, ast.AugAssign):
            op = INPLACE.get(type(stmt.op))
            if op is None:
                raise self.fail(stmt, "this augmented assignment operator is not supported")
            target = self.target(stmt.target)
            if isinstance(target, NameTarget):
                self.reads.add(target.name)
            elif isinstance(target, AttrTarget):
                self.operations.add("attr:" + target.attr)
            return step(kind="augassign", targets=(target,), value=self.expr(stmt.value), aug_op=op)
        if isinstance(stmt, ast.Expr):
            return step(kind="expr", value=self.expr(stmt.value))
        raise self.fail(stmt, f"'{type(stmt).__name__}' statements are not allowed in a step",
                        "use an assignment, an augmented assignment or an operation call")

    def name_target(self, node: ast.AST) -> NameTarget:
        if not isinstance(node, ast.Name):
            raise self.fail(node, "only plain names can be unpacked into", "e.g. 'a, b = x.chunk(2)'")
        self.check_name(node, node.id)
        return NameTarget(node.id)

    def target(self, node: ast.AST) -> Target:
        if isinstance(node, ast.Name):
            return self.name_target(node)
        if isinstance(node, ast.Subscript):
            return ItemTarget(self.expr(node.value), self.index(node.slice))
        if isinstance(node, ast.Attribute):
            self.check_name(node, node.attr)
            self.operations.add("setattr:" + node.attr)
            return AttrTarget(self.expr(node.value), node.attr)
        raise self.fail(node, "cannot assign to this", "assign to a name, x[...] or x.attribute")

    # ---- expressions

    def check_name(self, node: ast.AST, name: str) -> None:
        if name.startswith("_"):
            raise self.fail(node, f"names starting with '_' are not allowed ({name!r})",
                            "cases may only use public operation names and their own tensors")

    def expr(self, node: ast.AST) -> Expr:
        if type(node) in _REFUSED:
            raise self.fail(node, f"{_REFUSED[type(node)]} is not allowed in a step")
        if isinstance(node, ast.Name):
            self.check_name(node, node.id)
            self.reads.add(node.id)
            return Ref(node.id)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bytes):
                raise self.fail(node, "bytes literals are not allowed")
            if isinstance(node.value, str):
                self.strings.add(node.value)
            return Const(node.value)
        if isinstance(node, (ast.List, ast.Tuple)):
            return Seq(tuple(self.expr(e) for e in node.elts), tuple_=isinstance(node, ast.Tuple))
        if isinstance(node, ast.UnaryOp):
            if type(node.op) not in UNARY:
                raise self.fail(node, "'not' is not allowed in a step")
            return PyOp(UNARY[type(node.op)], (self.expr(node.operand),))
        if isinstance(node, ast.BinOp):
            if type(node.op) not in BINARY:
                raise self.fail(node, "this operator is not supported")
            operands = (self.expr(node.left), self.expr(node.right))
            # Python evaluates these itself, before any framework sees them: '%s' % x formats,
            # 10 ** 10 ** 10 and [0] * 10 ** 9 would hang or exhaust memory
            if any(isinstance(o, Const) and isinstance(o.value, str) for o in operands):
                raise self.fail(node, "a string cannot be an operand of an operator",
                                "strings are operation arguments only, e.g. x.to('float64')")
            if all(_constant(o) for o in operands) and BINARY[type(node.op)] not in ("add", "sub"):
                raise self.fail(node, "an operator between constants is not allowed (no tensor takes part)",
                                "write the resulting value; only complex literals such as 1.0 + 2.0j combine constants")
            return PyOp(BINARY[type(node.op)], operands)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1 or type(node.ops[0]) not in COMPARE:
                raise self.fail(node, "only one comparison (<, <=, >, >=, ==, !=) is allowed",
                                "use 'same_object' in expect to compare identities")
            return PyOp(COMPARE[type(node.ops[0])],
                        (self.expr(node.left), self.expr(node.comparators[0])))
        if isinstance(node, ast.Subscript):
            return PyOp("getitem", (self.expr(node.value), self.index(node.slice)))
        if isinstance(node, ast.Attribute):
            self.check_name(node, node.attr)
            self.operations.add("attr:" + node.attr)
            return Op("attr:" + node.attr, (self.expr(node.value),))
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.fail(node, f"'{type(node).__name__}' is not allowed in a step")

    def call(self, node: ast.Call) -> Op:
        args = tuple(self.expr(a) for a in node.args)
        kwargs = []
        for kw in node.keywords:
            if kw.arg is None:
                raise self.fail(node, "'**' unpacking is not allowed in a step")
            self.check_name(node, kw.arg)
            kwargs.append((kw.arg, self.expr(kw.value)))
        func = node.func
        if isinstance(func, ast.Attribute):
            self.check_name(func, func.attr)
            return self.op("method:" + func.attr, (self.expr(func.value),) + args, tuple(kwargs))
        if isinstance(func, ast.Name):
            self.check_name(func, func.id)
            if func.id in self.defined:  # calling a value the case made, e.g. a layer
                self.reads.add(func.id)
                return self.op("call", (Ref(func.id),) + args, tuple(kwargs))
            return self.op("fn:" + func.id, args, tuple(kwargs))
        return self.op("call", (self.expr(func),) + args, tuple(kwargs))

    def op(self, key: str, args: tuple[Expr, ...], kwargs: tuple[tuple[str, Expr], ...]) -> Op:
        self.operations.add(key)
        return Op(key, args, kwargs)

    def index(self, node: ast.AST) -> Expr:
        if isinstance(node, ast.Slice):
            return SliceExpr(*(None if part is None else self.expr(part)
                               for part in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return Seq(tuple(self.index(e) for e in node.elts), tuple_=True)
        return self.expr(node)


@functools.lru_cache(maxsize=4096)
def _parse_python(text: str) -> ast.Module:
    """``ast.parse``, once per distinct step text: steps such as 'y = x.clone()' recur across
    a corpus, and parsing is most of a step's cost. The tree is only read, never changed."""
    return ast.parse(text, mode="exec")


def _constant(expr: Expr) -> bool:
    """A value written in the step itself, with no tensor or operation in it."""
    if isinstance(expr, Const):
        return True
    if isinstance(expr, Seq):
        return all(_constant(e) for e in expr.items)
    return isinstance(expr, PyOp) and all(_constant(a) for a in expr.args)


def parse_step_uses(text: str, number: int, location: Location,
                    defined: set[str]) -> tuple[Step, set[str], set[str], set[str]]:
    """Parse one step's text: the step, the names it reads, the operation-table keys it
    needs and the strings it passes (the sets of :func:`names_read`, :func:`operations_of`
    and :func:`strings_of`, noted while parsing rather than found by walking the IR).
    ``defined`` holds the names bound before it (a call of a defined name calls that value,
    e.g. a layer; otherwise it is a function operation)."""
    parser = _Parser(text, location, defined)
    step = parser.statement(number)
    return step, parser.reads, parser.operations, parser.strings


_IDENTIFIERS = re.compile(r"\s*\(?\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*,?\s*\)?\s*")
_TARGET_START = re.compile(r"\s*[A-Za-z_]\w*\s*[\[.]")  # x[...] = ..., x.attr = ...: binds no name


def names_assigned(text: str) -> set[str] | None:
    """The names a step that could not be parsed would have bound, as far as its text tells
    (so that the mistake is not reported again at each later use of them), or None when
    the text cannot tell. Python's own parser first (the step may be valid Python that the
    allowlist refuses, ``y = lambda: x``), else the names left of its first ``=``
    (``y = x.view(4`` binds ``y``; ``x.add_(1`` binds nothing)."""
    try:
        if len(text) > MAX_STEP_CHARS:  # (an over-long step never reaches Python's parser)
            raise ValueError(text[:60])
        module = ast.parse(text, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    else:
        names: set[str] = set()
        for node in ast.walk(module):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        return names
    left = _left_of_assignment(text)
    if left is None:  # no assignment: an expression binds nothing
        return set()
    written = _IDENTIFIERS.fullmatch(left)
    if written:
        return {name.strip() for name in written.group(1).split(",")}
    if _TARGET_START.match(left) or left.rstrip()[-1:] in "+-*/%@&|^<>":  # x[0] = ..., x += ...
        return set()
    return None


def _left_of_assignment(text: str) -> str | None:
    """What is left of the step's first ``=`` outside brackets that is not part of ``==``,
    ``!=``, ``<=``, ``>=`` (an augmented ``+=`` keeps its operator on the left), or None."""
    depth = 0
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == "=" and depth == 0:
            if text[i + 1:i + 2] == "=" or text[i - 1:i] in ("=", "!", "<", ">"):
                continue
            return text[:i]
    return None
