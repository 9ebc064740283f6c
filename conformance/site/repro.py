"""A plain Python snippet per case and framework that reproduces the case without the suite
(docs/site.md, "Reproducing a case"): the imports, the case's ``given`` as literal arrays,
its steps spelled with the framework's own API, and a ``print`` of each thing the case
checks that plain Python can show (values, shapes, identity, memory sharing, torch's version
counter).

Generated from the case's parsed steps (:mod:`conformance.ir`), never from its text: every
value of the case is written with ``repr()``, every name is one the loader accepted as an
identifier. A step is spelled only where the framework's table entry is the call as the case
writes it (a method, an attribute, Python's operator, a function that forwards its
arguments: :mod:`conformance.spellings`); an entry that translates the call is named in a
comment with what it calls, and the snippet says it cannot run as is, rather than guess the
translation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance import spellings
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
    names_read,
)
from conformance.model import DTYPES, Case, Generated, TensorSpec

# the frameworks a snippet is written for: the eager ones, and the compiled modes whose
# compiler wraps the case's function as a user writes it (paddle.jit.to_static's snippet is
# not written yet: the suite's mode runs the function in a fork of a warmed server, with
# Paddle's SOT settings, which a snippet would have to repeat)
FRAMEWORKS = ("numpy", "torch", "paddle", "jax", "tensorflow", "mindspore", "array_api_strict",
              "torch_compile", "torch_inductor", "jax_jit", "tensorflow_function", "tensorflow_xla")
# the frameworks whose arrays are immutable (their adapters' ``immutable``): they run a case's
# functional_steps where it has them (tests/test_functional_steps.py checks the list)
IMMUTABLE_ARRAYS = ("jax", "tensorflow")
# a compiled mode -> (the framework it compiles, how its snippet compiles the case's function)
COMPILED = {"torch_compile": ("torch", "torch.compile(case, backend='aot_eager')"),
            "torch_inductor": ("torch", "torch.compile(case)"),
            "jax_jit": ("jax", "jax.jit(case)"),
            "tensorflow_function": ("tensorflow", "tf.function(case)"),
            "tensorflow_xla": ("tensorflow", "tf.function(case, jit_compile=True)")}

_BINARY = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "matmul": "@", "and_": "&", "or_": "|", "xor": "^", "gt": ">", "lt": "<", "ge": ">=", "le": "<=",
           "eq": "==", "ne": "!="}
_UNARY = {"neg": "-", "pos": "+", "invert": "~"}
_AUG = {f"i{name.rstrip('_')}": symbol + "=" for name, symbol in _BINARY.items() if len(symbol) <= 2
        and name not in ("gt", "lt", "ge", "le", "eq", "ne")}

# how each framework makes a tensor of a NumPy array, as its adapter does (tensor_from_numpy)
_MAKE = {
    "numpy": "{a}",
    "torch": "torch.tensor({a}, dtype=torch.{dtype})",
    "paddle": "paddle.to_tensor({a}, dtype={dtype!r})",
    "jax": "jnp.array({a}, dtype={dtype!r})",
    "tensorflow": "tf.constant({a}, dtype=tf.{dtype})",
    "mindspore": "mindspore.tensor({a}, dtype=mindspore.{dtype})",
    "array_api_strict": "xp.asarray({a}, dtype=xp.{dtype}, copy=True)",
}
# a tensor's values as Python lists
_VALUES = {
    "numpy": "np.asarray(t).tolist()",
    "torch": "t.detach().tolist() if isinstance(t, torch.Tensor) else np.asarray(t).tolist()",
    "paddle": "t.numpy().tolist() if isinstance(t, paddle.Tensor) else np.asarray(t).tolist()",
    "jax": "np.asarray(t).tolist()",
    "tensorflow": "np.asarray(t).tolist()",
    "mindspore": "t.asnumpy().tolist() if isinstance(t, mindspore.Tensor) else np.asarray(t).tolist()",
    "array_api_strict": "np.from_dlpack(t).tolist()",
}
# memory sharing as plain Python can see it; elsewhere the suite measures it from the data
# pointers and strides, which a snippet does not repeat
_SHARES = {
    "numpy": "np.shares_memory({a}, {b})",
    "torch": "np.shares_memory(memory({a}), memory({b}))",
}


@dataclass(frozen=True)
class Snippet:
    framework: str  # the framework or compiled mode it is for (torch_compile, not torch)
    text: str
    runnable: bool  # every step spelled; False: a comment says which step is not
    printed: tuple[str, ...]  # the observation keys it prints (shares_memory.y.x, ...)


class _Unspelled(Exception):
    pass


class _Writer:
    def __init__(self, framework: str) -> None:
        self.fw = framework
        self.base = COMPILED[framework][0] if framework in COMPILED else framework  # whose names it spells
        self.table = spellings.table(framework)
        self.missing: list[str] = []

    def expr(self, e: Expr | None, index: bool = False) -> str:
        if e is None:
            return "None"
        if isinstance(e, Ref):
            return e.name
        if isinstance(e, Const):
            return "..." if e.value is Ellipsis else _py(e.value)
        if isinstance(e, Seq):
            items = [self.expr(i, index) for i in e.items]
            if e.tuple_:
                if index and items:
                    return ", ".join(items) + ("," if len(items) == 1 else "")
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            return "[" + ", ".join(items) + "]"
        if isinstance(e, SliceExpr):
            parts = ["" if p is None else self.expr(p) for p in (e.start, e.stop, e.step)]
            if index:
                return ":".join(parts[:2]) + (":" + parts[2] if e.step is not None else "")
            return "slice(" + ", ".join(p or "None" for p in parts) + ")"
        if isinstance(e, PyOp):
            return self.pyop(e)
        if isinstance(e, Op):
            return self.op(e)
        raise _Unspelled(f"an expression the generator does not know ({type(e).__name__})")

    def operand(self, e: Expr) -> str:
        text = self.expr(e)
        return f"({text})" if isinstance(e, PyOp) and e.op != "getitem" else text

    def python(self, name: str) -> None:
        spelling = self.table.get("op:" + name)
        if spelling is None or not spelling.python:
            calls = "" if spelling is None else ", ".join(spelling.calls) or (spelling.absent or "")
            raise _Unspelled(f"{self.fw}'s adapter maps Python's {name} operator ({calls or 'its own entry'})")

    def pyop(self, e: PyOp) -> str:
        self.python(e.op)
        if e.op == "getitem":
            return f"{self.operand(e.args[0])}[{self.expr(e.args[1], index=True)}]"
        if e.op in _UNARY:
            return _UNARY[e.op] + self.operand(e.args[0])
        if e.op in _BINARY:
            return f"{self.operand(e.args[0])} {_BINARY[e.op]} {self.operand(e.args[1])}"
        raise _Unspelled(f"Python's {e.op} operator")

    def arguments(self, args: tuple[Expr, ...], kwargs: tuple[tuple[str, Expr], ...]) -> str:
        return ", ".join([self.expr(a) for a in args] + [f"{k}={self.expr(v)}" for k, v in kwargs])

    def op(self, e: Op) -> str:
        kind, _, name = e.key.partition(":")
        spelling = self.table.get(e.key)
        if spelling is None:
            raise _Unspelled(f"{self.fw} has no counterpart for {e.key}")
        if spelling.absent:
            raise _Unspelled(f"{self.fw} has no counterpart for {e.key}: {spelling.absent}")
        if kind == "method" and spelling.method == name:
            return f"{self.operand(e.args[0])}.{name}({self.arguments(e.args[1:], e.kwargs)})"
        if kind == "attr" and spelling.attr == name:
            return f"{self.operand(e.args[0])}.{name}"
        if kind == "fn" and spelling.function:
            return f"{spelling.function}({self.arguments(e.args, e.kwargs)})"
        translate = TRANSLATIONS.get(self.base, {}).get(e.key) or TRANSLATIONS["*"].get(e.key)
        if translate is not None:
            text = translate(self, e.args, e.kwargs)
            if text is not None:
                return text
        calls = ", ".join(spelling.calls) or "code of its own"
        raise _Unspelled(f"{self.fw}'s adapter translates {e.key} (it calls {calls}; docs/adapters.md, "
                         "\"Spellings\"): not spelled here")

    def target(self, t: Any) -> str:
        if isinstance(t, NameTarget):
            return t.name
        if isinstance(t, ItemTarget):
            self.python("setitem")
            return f"{self.operand(t.obj)}[{self.expr(t.index, index=True)}]"
        if isinstance(t, AttrTarget):
            spelling = self.table.get("setattr:" + t.attr)
            if spelling is None or spelling.setattr_ != t.attr:
                raise _Unspelled(f"{self.fw}'s adapter translates setattr:{t.attr}")
            return f"{self.operand(t.obj)}.{t.attr}"
        raise _Unspelled("an assignment target the generator does not know")

    def step(self, s: Step, indent: str, out: list[str]) -> None:
        # (an input made ``from`` others is its assignment, numbered 0: conformance.load.inputs)
        label = f"step {s.number}" if s.number else "input"
        out.append(f"{indent}# {label}: {_comment(s.text)}" if s.kind != "block" else "")
        try:
            if s.kind == "block":
                spelling = self.table.get("block:" + (s.block or ""))
                call = spelling.calls[0] if spelling is not None and len(spelling.calls) == 1 else None
                if call is None or not call.endswith("." + (s.block or "")):
                    raise _Unspelled(f"{self.fw}'s adapter translates the {s.block} block")
                out[-1] = f"{indent}with {call}():"
                for inner in s.body:
                    self.step(inner, indent + "    ", out)
                return
            if s.kind == "assign":
                value = self.expr(s.value)
                targets = ", ".join(self.target(t) for t in s.targets)
                out.append(f"{indent}{targets} = {value}")
            elif s.kind == "augassign" and s.aug_op in _AUG:
                self.python(s.aug_op)
                if isinstance(s.targets[0], ItemTarget):
                    self.python("getitem")
                out.append(f"{indent}{self.target(s.targets[0])} {_AUG[s.aug_op]} {self.expr(s.value)}")
            elif s.kind == "expr":
                out.append(f"{indent}{self.expr(s.value)}")
            else:
                raise _Unspelled(f"a {s.kind} step")
        except _Unspelled as why:
            self.missing.append(label)
            out.append(f"{indent}# NOT SPELLED: {_comment(str(why))}")
            out.append(f"{indent}pass")


# ---- the translations the audit describes (docs/adapters.md, "Spellings"), written out for
# the arguments a case passes: (writer, args, kwargs) -> the call, or None where these
# arguments are not the form the row describes (the step is then not spelled)

Args = tuple[Expr, ...]
Kwargs = tuple[tuple[str, Expr], ...]


def _shape_of(w: _Writer, args: Args) -> str:
    """Varargs as one shape: ``(3, 2)``; a single list or tuple as it is."""
    if len(args) == 1 and isinstance(args[0], Seq):
        return w.expr(args[0])
    return "(" + ", ".join(w.expr(a) for a in args) + ("," if len(args) == 1 else "") + ")"


def _no_strings(args: Args, kwargs: Kwargs) -> bool:
    return not any(isinstance(a, Const) and isinstance(a.value, str) for a in (*args, *(v for _, v in kwargs)))


def _torch_dtype(w: _Writer, e: Expr) -> str:
    """A dtype name as the ``torch.dtype`` torch takes (``torch.float32``)."""
    if isinstance(e, Const) and isinstance(e.value, str) and e.value in DTYPES:
        return "torch." + e.value
    return w.expr(e)


def _torch_dtypes(name: str, method: bool) -> Any:
    """torch's entries that translate only a dtype name into a ``torch.dtype``."""

    def spell(w: _Writer, args: Args, kwargs: Kwargs) -> str:
        rest = args[1:] if method else args
        parts = [_torch_dtype(w, a) for a in rest] + [
            f"{k}={_torch_dtype(w, v) if k == 'dtype' else w.expr(v)}" for k, v in kwargs]
        head = f"{w.operand(args[0])}.{name}" if method else f"torch.{name}"
        return f"{head}({', '.join(parts)})"

    return spell


def _np_conversion(name: str) -> Any:
    def spell(w: _Writer, args: Args, kwargs: Kwargs) -> str:
        return f"np.{name}({w.arguments(args, kwargs)})"

    return spell


def _numpy_view(w: _Writer, args: Args, kwargs: Kwargs) -> str | None:
    if kwargs or len(args) < 2 or not _no_strings(args, kwargs):
        return None  # view(dtype): not spelled
    return f"{w.operand(args[0])}.reshape({_shape_of(w, args[1:])}, copy=False)"


def _numpy_reshape(w: _Writer, args: Args, kwargs: Kwargs) -> str | None:
    return None if kwargs or len(args) < 2 else f"{w.operand(args[0])}.reshape({_shape_of(w, args[1:])})"


def _numpy_plain(template: str, arity: int) -> Any:
    def spell(w: _Writer, args: Args, kwargs: Kwargs) -> str | None:
        if kwargs or len(args) != arity:
            return None
        return template.format(*[w.operand(a) if i == 0 else w.expr(a) for i, a in enumerate(args)])

    return spell


def _numpy_expand(w: _Writer, args: Args, kwargs: Kwargs) -> str | None:
    if kwargs or len(args) < 2 or any(isinstance(a, Const) and a.value == -1 for a in args[1:]):
        return None  # -1 keeps a size: the adapter works it out
    return f"np.broadcast_to({w.expr(args[0])}, {_shape_of(w, args[1:])})"


TRANSLATIONS: dict[str, dict[str, Any]] = {
    "*": {"fn:asarray": _np_conversion("asarray"), "fn:array": _np_conversion("array")},  # NUMPY_CONVERSIONS
    "torch": {
        **{"method:" + m: _torch_dtypes(m, True) for m in ("view", "to")},
        **{"fn:" + f: _torch_dtypes(f, False) for f in ("tensor", "as_tensor", "zeros", "ones", "empty")},
    },
    "numpy": {
        "method:view": _numpy_view,
        "method:reshape": _numpy_reshape,
        "method:clone": _numpy_plain("{0}.copy()", 1),
        "method:contiguous": _numpy_plain("np.ascontiguousarray({0})", 1),
        "method:t": None,  # x.T for at most 2 dimensions: the adapter decides from the shape
        "method:transpose": _numpy_plain("np.swapaxes({0}, {1}, {2})", 3),
        "method:swapaxes": _numpy_plain("np.swapaxes({0}, {1}, {2})", 3),
        "method:unsqueeze": _numpy_plain("np.expand_dims({0}, {1})", 2),
        "method:expand": _numpy_expand,
        "fn:tensor": _numpy_plain("np.array({0})", 1),
    },
}


def _comment(text: str) -> str:
    """Text of the case in a comment: one line (a newline would end the comment)."""
    return " ".join(str(text).split())


def _py(value: Any) -> str:
    """A value of the case as Python source: ``repr()``, but a NaN or an infinity (whose repr,
    ``nan``, is no Python expression) as ``float('nan')``."""
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_py(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({repr(value)!r})" if value == value else "float('nan')"
    if isinstance(value, complex) and not (math.isfinite(value.real) and math.isfinite(value.imag)):
        return f"complex({_py(value.real)}, {_py(value.imag)})"
    return repr(value)


def _literal(spec: TensorSpec) -> str:
    dtype = spec.dtype if spec.dtype != "bfloat16" else "float32"
    if isinstance(spec.values, Generated):
        n = math.prod(spec.shape)
        base = (f"np.full({n}, {_py(spec.values.fill)}, dtype={dtype!r})" if spec.values.rule == "fill"
                else f"np.arange({n}).astype({dtype!r})")
    else:
        base = f"np.array({_py(spec.values)}, dtype={dtype!r})"
    if spec.imag is not None:
        base = f"np.asarray({base} + 1j * np.array({_py(spec.imag)}, dtype={dtype!r})).astype({spec.dtype!r})"
    literal = f"{base}.reshape({tuple(spec.shape)!r})"
    return f"aligned({literal}, {spec.align})" if spec.align else literal


# an input's ``align: N`` (adapters.base.aligned_copy), written out
_ALIGNED = ["def aligned(a, n):  # a copy of a whose buffer starts on a multiple of n bytes",
            "    raw = np.empty(a.nbytes + n, dtype=np.uint8)",
            "    start = -raw.ctypes.data % n",
            "    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)",
            "    out[...] = a",
            "    return out", ""]


def runs_functional_steps(framework: str) -> bool:
    """Whether a framework or compiled mode runs a case's functional_steps (its arrays, or
    those of the framework it compiles, are immutable)."""
    return COMPILED.get(framework, (framework, ""))[0] in IMMUTABLE_ARRAYS


def snippet(case: Case, framework: str) -> Snippet:
    """The snippet of ``case`` on ``framework`` (one of :data:`FRAMEWORKS`)."""
    w = _Writer(framework)
    mode = framework
    framework, wrapper = COMPILED.get(mode, (mode, ""))
    case = case.program_for(framework in IMMUTABLE_ARRAYS)  # the steps that framework runs
    imports = ["import numpy as np"] if framework != "numpy" else []
    imports += spellings.IMPORT_LINES[framework].splitlines()
    lines = [f"# {case.id} on {mode}: {_comment(case.title)}",
             "# generated from the case's steps by conformance (docs/site.md); runs without the suite",
             *dict.fromkeys(imports), "", f"def values(t):\n    return {_VALUES[framework]}", ""]
    if framework == "torch":  # the memory a tensor addresses, as NumPy sees it
        lines[-1:-1] = ["", "def memory(t):", "    return t.detach().numpy() if isinstance(t, torch.Tensor) else t"]
    if any(spec.align for spec in case.given):
        lines += _ALIGNED
    for spec in case.given:
        if spec.made_by is not None:  # ``from: "b[1:3]"``: made from earlier inputs, as a step is
            w.step(spec.made_by, "", lines)
            continue
        a = _literal(spec)
        if spec.kind == "ndarray" or framework == "numpy":
            lines.append(f"{spec.name} = {a}")
        else:
            lines.append(f"{spec.name} = {_MAKE[framework].format(a=a, dtype=spec.dtype)}")
        if not spec.writeable:
            if framework == "numpy" or spec.kind == "ndarray":
                lines.append(f"{spec.name}.flags.writeable = False")
            else:
                w.missing.append(f"input {spec.name}")
                lines.append(f"# NOT SPELLED: input {spec.name} is read-only, which only a NumPy array can be")
        if spec.requires_grad:
            if framework == "torch" and spec.kind != "ndarray":
                lines.append(f"{spec.name}.requires_grad_(True)")
            elif framework == "paddle" and spec.kind != "ndarray":
                lines.append(f"{spec.name}.stop_gradient = False")
            else:
                w.missing.append(f"input {spec.name}")
                lines.append(f"# NOT SPELLED: input {spec.name} requires grad, which {framework} has no way to say")
    # the framework's own tensors (an input made ``from`` NumPy inputs only is a NumPy array)
    ndarrays: set[str] = set()
    for spec in case.given:
        if spec.kind == "ndarray" if spec.made_by is None else \
                all(ref.name in ndarrays for ref in names_read(spec.made_by)):
            ndarrays.add(spec.name)
    inputs = [s.name for s in case.given if s.name not in ndarrays]
    versions = framework == "torch" and bool(inputs)
    if versions:
        lines.append("start = {" + ", ".join(f"{n!r}: {n}._version" for n in inputs) + "}")
    lines.append("")
    if wrapper or case.calls > 1:
        # a compiled mode compiles the steps as a function; a program called more than once
        # (calls:) is that function called again on the same inputs, eager or compiled
        returns = _returned(case)
        params = [spec.name for spec in case.given]
        lines.append(f"def case({', '.join(params)}):")
        for s in case.steps:
            w.step(s, "    ", lines)
        lines.append(f"    return {', '.join(returns) + ',' if returns else '()'}")
        called = "case"
        if wrapper:
            lines += ["", f"compiled = {wrapper}"]
            called = "compiled"
        else:
            lines.append("")
        call = f"{called}({', '.join(params)})"
        # the earlier calls' results are dropped: each call is given the caller's own inputs
        lines += [f"{call}  # call {n} of {case.calls}" for n in range(1, case.calls)]
        last = f"  # call {case.calls} of {case.calls}" if case.calls > 1 else ""
        lines.append(f"{', '.join(returns) + ',' if returns else '_'} = {call}{last}")
    else:
        for s in case.steps:
            w.step(s, "", lines)
    lines.append("")
    printed: list[str] = []
    for kind, entries in case.expect.checks.items():
        if not isinstance(entries, dict):
            lines.append(f"# the case checks {kind}: see the case page")
            continue
        for names in entries:
            if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
                continue
            key = ".".join((kind, *names))
            text = _check(framework, kind, names, set(inputs) if versions else set())
            if text is None:
                lines.append(f"# the case checks {key}: not printed here")
                continue
            lines.append(f"print({key!r}, {text})")
            printed.append(key)
    if w.missing:
        lines.insert(2, f"# CANNOT RUN AS IS: {', '.join(w.missing)} not spelled (see below)")
    return Snippet(mode, "\n".join(lines) + "\n", not w.missing, tuple(printed))


def _returned(case: Case) -> list[str]:
    """What the compiled function returns: what the program leaves (conformance.ir.results_of,
    as the suite's function returns), then the other names the expectations mention that a
    step binds (the suite observes those from a second compile that returns them as well)."""
    from conformance.ir import names_bound, results_of

    left = list(results_of(case.steps))
    bound = {n for step in case.steps for s in step.flat() for n in names_bound(s)}
    mentioned = [n for entries in case.expect.checks.values() if isinstance(entries, dict)
                 for names in entries if isinstance(names, tuple) for n in names]
    return left + [n for n in dict.fromkeys(mentioned) if n in bound and n not in left]


def _check(framework: str, kind: str, names: tuple[str, ...], versioned: set[str]) -> str | None:
    if kind == "values" and len(names) == 1:
        return f"values({names[0]})"
    if kind == "shape" and len(names) == 1:
        return f"list({names[0]}.shape)"
    if kind == "same_object" and len(names) == 2:
        return f"{names[0]} is {names[1]}"
    if kind == "shares_memory" and len(names) == 2 and framework in _SHARES:
        return _SHARES[framework].format(a=names[0], b=names[1])
    if kind == "version_change" and len(names) == 1 and names[0] in versioned:
        return f"{names[0]}._version - start[{names[0]!r}]"
    if len(names) != 1:
        return None
    n = names[0]
    if kind == "dtype" and framework in ("numpy", "torch"):
        return f"str({n}.dtype).removeprefix('torch.')"
    if framework == "torch" and kind in ("requires_grad", "is_leaf"):
        return f"{n}.{kind}"
    if framework == "torch" and kind == "grad":
        return f"None if {n}.grad is None else values({n}.grad)"
    return None


def snippets(case: Case) -> list[Snippet]:
    return [snippet(case, fw) for fw in FRAMEWORKS]


def load_cases(files: Iterable[str], root: Path | None = None) -> dict[str, Case]:
    """The cases of the results' case files, read from this checkout (``root``, the folder
    holding ``cases/``): a named file that is not one of the checkout's case files (outside
    ``cases/``, missing, refused there) or that does not load is left out (its cases get no
    snippet). Loading a case file runs nothing of it.

    The names come from a results file, which is data from anywhere: none is handed to the
    file system (a name may be too long for it, or lead elsewhere). The checkout's case
    files are listed (:func:`conformance.load.folders.walk`: real folders only, never a
    link), and a name is only looked up among their paths, ``cases/<...>.yaml``."""
    from conformance import registry
    from conformance.load.folders import walk
    from conformance.load.reader import load_file

    wanted = set(files)
    root = (root or Path(__file__).resolve().parent.parent.parent).resolve()
    listed = {path.relative_to(root).as_posix(): path for path, problem in walk(root / "cases") if problem is None}
    vocabulary = registry.vocabulary()
    cases: dict[str, Case] = {}
    for name in sorted(wanted & listed.keys()):
        for case in load_file(listed[name], vocabulary).cases:
            cases.setdefault(case.id, case)
    return cases
