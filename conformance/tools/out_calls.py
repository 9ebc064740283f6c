"""Arguments for torch's declared ``out=`` contracts, sampled from torch itself:
``conformance/data/contracts/torch_out_calls.yaml``, one call per operator that
``conformance contracts --write`` turns into a generated case (conformance/tools/contract_cases.py).

``python -m conformance.tools.out_calls --sample`` (a process of its own: it imports torch and
torch's OpInfo database) tries, for each ``out=`` operator of the contracts data
(conformance/data/contracts/torch.yaml) with a Python function spelling, in this order:

1. **its schema**: the positional arguments without a default filled by type — tensors are
   small 2x3 ones (float values from 0.1, or from 1.1 for a domain that starts at 1, or
   int64), a Scalar 0.5 (2 for integers), an int 1, an int list ``[1]``, a bool False; a
   factory (no tensor argument) takes the size ``[2, 3]``;
2. **torch's OpInfo samples** (``torch.testing._internal.common_methods_invocations.op_db``,
   the inputs torch's own tests call it with; seed 0): the smallest sample whose tensors are
   dense, real, finite, not empty, of at most :data:`MAX_ELEMENTS` elements, and whose other
   arguments are literals (no strings: a case's step takes a string only as a dtype or device),
   float values rounded to two decimals;
3. **its schema, filled otherwise** (:data:`FILLS`, in order): where neither gives a call, the
   same filling by type with tensors of other ranks and shapes (3, 2x2, 1x2x3, 2x2x2, a 2x2
   then 2x2x2 ones as addbmm takes, 1x1x2x3, 1x2x2x2, 1x2x1x2, 1x1x2x2x2; values 0.1, 0.2, ...
   or the ints 1, 2, 3, ...), int lists ``[1, 1]`` and ``[1, 1, 1]``, and a number for an
   optional Scalar (clamp's min). Only an operator the first two leave without a call tries
   them, so a call they give never changes.

A call is kept when torch runs it, without and with ``out=`` (out tensors of 5 elements, which
it resizes), and returns as many tensors as the overload writes; the first that does is kept,
finite results preferred. Whether two calls give equal results decides whether the case
expects values (a random result does not; nor an uninitialised one, an operator named
``empty...``, whose two calls may return the same garbage). Every operator left without a call
is listed with the reason the first fill and the OpInfo samples gave (a crash in another fill
keeps it). The file is data: :func:`read` checks its shape, and each call is a case step that
the loader parses against the allowlist like any other (``conformance contracts --check``
compares the generated cases with it, importing no framework).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent.parent / "data" / "contracts" / "torch_out_calls.yaml"
MAX_ELEMENTS = 130  # OpInfo's S-sized samples (5x5x5): bigger inputs make unreadable cases
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
OUT_NAMES = ("o", "o1", "o2", "o3", "o4")
RESULT_NAMES = ("r", "r1", "r2", "r3", "r4")
TENSOR_NAMES = ("x", "y", "z", "w", "u", "v", "p", "q", "s", "k", "t", "m")
DTYPES = ("float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")


def other_size(shape: Sequence[int]) -> int:
    """The element count of an out tensor of another shape than a result of ``shape``: 5,
    or 4 where the result has 5 (torch resizes it, with its warning)."""
    return 4 if math.prod(shape) == 5 else 5


class OutCallsError(Exception):
    """The data file is missing or not what --sample writes."""


@dataclass(frozen=True)
class OutTensor:
    name: str
    shape: tuple[int, ...]  # the shape of the result it receives
    dtype: str


@dataclass(frozen=True)
class OutCall:
    name: str  # the operator (conformance/data/contracts/torch.yaml)
    call: str  # the step: r = NAME(args, out=o)
    given: Mapping[str, str]  # the operands: name -> flow YAML of its input spec
    outs: tuple[OutTensor, ...]
    values: bool  # whether the result is deterministic (its values are expected)
    source: str  # where the arguments come from: the schema overload, or the OpInfo sample


@dataclass(frozen=True)
class OutCalls:
    version: str
    calls: Mapping[str, OutCall]
    left: Mapping[str, str]  # operator -> why it has no call


def read(path: Path | None = None) -> OutCalls:
    """The sampled calls (of :data:`DATA` unless given), their shape checked (the steps are
    checked where they load, as case steps)."""
    from conformance.declared import load_data

    path = DATA if path is None else path
    data = load_data(path, OutCallsError, "run python -m conformance.tools.out_calls --sample where torch is installed")
    try:
        calls = {}
        for entry in data["calls"]:
            outs = tuple(OutTensor(str(o["name"]), tuple(int(n) for n in o["shape"]), str(o["dtype"]))
                         for o in entry["outs"])
            call = OutCall(str(entry["name"]), str(entry["call"]), {str(k): str(v) for k, v in entry["given"].items()},
                           outs, bool(entry["values"]), str(entry["source"]))
            calls[call.name] = call
        left = {str(e["name"]): str(e["reason"]) for e in data["left"]}
        version = str(data["version"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise OutCallsError(f"{path}: not what --sample writes (missing or malformed {exc}): write it again with "
                            "python -m conformance.tools.out_calls --sample") from None
    for call in calls.values():
        names = [call.name, *call.given, *(o.name for o in call.outs)]
        odd = [n for n in names if not NAME.fullmatch(n)]
        if odd:
            raise OutCallsError(f"{path}: {call.name!r}: {odd[0]!r} is no identifier: write the file again with "
                                "python -m conformance.tools.out_calls --sample")
        if not call.outs or any(o.dtype not in DTYPES for o in call.outs):
            raise OutCallsError(f"{path}: {call.name}: its out tensors must be named, with a dtype of "
                                f"{', '.join(DTYPES)}")
    return OutCalls(version, calls, left)


# -- sampling (imports torch: python -m conformance.tools.out_calls --sample) ----------------

VALUES = {
    "float": ([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], [[0.7, 0.8, 0.9], [1.1, 1.2, 1.3]],
              [[1.4, 1.5, 1.6], [1.7, 1.8, 1.9]]),
    "from_one": ([[1.1, 1.2, 1.3], [1.4, 1.5, 1.6]], [[0.7, 0.8, 0.9], [1.1, 1.2, 1.3]],
                 [[1.4, 1.5, 1.6], [1.7, 1.8, 1.9]]),
    "int": ([[1, 2, 3], [4, 5, 6]], [[3, 2, 1], [2, 1, 2]], [[1, 1, 2], [2, 3, 3]]),
}


class Inexpressible(Exception):
    """An argument a case cannot write."""


def _spelling(spellings: Sequence[str]) -> str | None:
    """The function that takes out=: torch.linalg/fft/special.X, torch.X, torch.nn.functional.X."""
    for prefix in ("torch.linalg.", "torch.fft.", "torch.special.", "torch.", "torch.nn.functional."):
        for spelling in spellings:
            rest = spelling[len(prefix):]
            if spelling.startswith(prefix) and not spelling.startswith("torch.Tensor.") and NAME.fullmatch(rest):
                return spelling
    return None


def _writes(schema: str) -> int:
    return schema.split("->")[0].count("!)")


def _literal(value: Any) -> str:
    if value is None or isinstance(value, bool) or isinstance(value, int):
        return repr(value)
    if isinstance(value, str):  # a case's step takes a string only as a dtype or device name
        raise Inexpressible("a string argument")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Inexpressible("a non-finite float")
        return repr(round(value, 4))
    if isinstance(value, (tuple, list)):
        inner = [_literal(e) for e in value]
        if isinstance(value, list):
            return "[" + ", ".join(inner) + "]"
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    raise Inexpressible(f"a {type(value).__name__}")


class _Args:
    """The operands of one call, named in order, with the values torch is called with."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.given: dict[str, str] = {}
        self.names = iter(TENSOR_NAMES)

    def tensor(self, t: Any) -> tuple[str, Any]:
        torch = self.torch
        dtype = str(t.dtype).removeprefix("torch.")
        if t.layout != torch.strided or dtype not in DTYPES or t.numel() > MAX_ELEMENTS or t.dim() > 4:
            raise Inexpressible("a tensor no case writes")
        name = next(self.names, None)
        if name is None:
            raise Inexpressible("too many tensors")
        if t.numel() == 0:  # a nested empty list loses its shape ([[], []] is [2, 0] or [2, 0, 5])
            raise Inexpressible("an empty tensor")
        value = t.detach().clone()
        if t.dtype.is_floating_point and not bool(torch.isfinite(value).all()):
            raise Inexpressible("a tensor with a non-finite value")
        if t.dtype.is_floating_point:
            value = torch.round(value.to(torch.float64), decimals=2).to(t.dtype)
        data = json.dumps(value.tolist())
        self.given[name] = f"{{data: {data}}}" if dtype == "bool" else f"{{data: {data}, dtype: {dtype}}}"
        return name, value

    def any(self, v: Any) -> tuple[str, Any]:
        if isinstance(v, self.torch.Tensor):
            return self.tensor(v)
        if isinstance(v, (list, tuple)) and v and all(isinstance(e, self.torch.Tensor) for e in v):
            parts = [self.tensor(e) for e in v]
            return "[" + ", ".join(p[0] for p in parts) + "]", [p[1] for p in parts]
        if isinstance(v, self.torch.Size):
            v = tuple(v)
        return _literal(v), v


@dataclass(frozen=True)
class Fill:
    """One way of filling a schema's arguments by type: the tensors' shapes (in order, the last
    for the rest), the int lists, and whether an optional Scalar is given a number."""

    shapes: tuple[tuple[int, ...], ...] = ((2, 3),)
    ints: tuple[int, ...] = (1,)  # an int list (a factory's size is [2, 3])
    number: bool = False  # the optional Scalars (through the first with a default) take a number, not None

    def shape(self, position: int) -> tuple[int, ...]:
        return self.shapes[min(position, len(self.shapes) - 1)]

    def label(self) -> str:
        """What it fills differently from :data:`FILL` (no colon: a case shows the text before one)."""
        parts = []
        if self.shapes != FILL.shapes:
            parts.append("tensors " + ", then ".join("x".join(map(str, s)) for s in self.shapes))
        if self.ints != FILL.ints:
            parts.append(f"int lists {list(self.ints)}")
        if self.number:
            parts.append("a number for an optional Scalar")
        return "; ".join(parts)


FILL = Fill()  # the first fill: 2x3 tensors of VALUES, int lists [1], None for an optional Scalar
# the others, in the order tried for an operator the first fill and the OpInfo samples leave
# without a call: each tensor at most 8 elements (a batched matmul's (b,n,m)x(b,m,p) made of
# equal square shapes, an input of addbmm's (n,p) before them, pools' 3-D and 4-D inputs,
# tensorinv's 1x2x1x2 whose leading and trailing dimensions hold as many elements), each
# shape with int lists of length 1, 2 and 3 (an even pad), and with a number for an optional Scalar
# (clamp needs min or max)
_SHAPES: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((2, 3),), ((3,),), ((2, 2),), ((1, 2, 3),), ((2, 2, 2),), ((2, 2), (2, 2, 2)), ((1, 1, 2, 3),),
    ((1, 2, 2, 2),), ((1, 2, 1, 2),), ((1, 1, 2, 2, 2),))
FILLS: tuple[Fill, ...] = tuple(
    fill for fill in (Fill(shapes, ints, number) for shapes in _SHAPES for ints in ((1,), (1, 1), (1, 1, 1))
                      for number in (False, True)) if fill != FILL)


def _data(fill: Fill, position: int, domain: str) -> Any:
    """The values of the tensor at ``position``: :data:`VALUES` for a 2x3 one, else 0.1, 0.2, ...
    (from 1.1 for the first of a domain that starts at 1; each further tensor 0.7 higher), or
    the ints 1, 2, 3, 1, ... (non-negative)."""
    shape = fill.shape(position)
    if shape == (2, 3) and position < len(VALUES[domain]):
        return VALUES[domain][position]
    count = math.prod(shape)
    if domain == "int":
        flat: list[Any] = [(j + position) % 3 + 1 for j in range(count)]
    else:
        start = 1.1 if domain == "from_one" and position == 0 else 0.1 + 0.7 * position
        flat = [round(start + 0.1 * j, 1) for j in range(count)]
    for size in reversed(shape[1:]):
        flat = [flat[i:i + size] for i in range(0, len(flat), size)]
    return flat


def _schema_arguments(torch: Any, schema: str, domain: str, fill: Fill = FILL
                      ) -> tuple[dict[str, str], list[str], list[Any]]:
    """The positional arguments without a default filled by type (:data:`VALUES`), as ``fill``
    says (with ``fill.number`` also the positional ones through the first optional Scalar)."""
    parsed = torch._C.parse_schema(schema)
    if any(a.kwarg_only and not a.has_default_value() and not (a.alias_info and a.alias_info.is_write)
           for a in parsed.arguments):
        raise Inexpressible("a keyword-only argument without a default")
    positional = [a for a in parsed.arguments if not a.kwarg_only]
    required = [a for a in positional if not a.has_default_value()]
    if fill.number:
        scalars = [i for i, a in enumerate(positional) if str(a.type) == "Optional[number]"]
        if not scalars:
            raise Inexpressible("no optional Scalar")
        defaulted = [i for i in scalars if positional[i].has_default_value()]
        if defaulted:
            required = positional[:defaulted[0] + 1]
    given: dict[str, str] = {}
    text: list[str] = []
    values: list[Any] = []
    positions = iter(enumerate(TENSOR_NAMES[:3]))
    factory = not any(str(a.type) == "Tensor" for a in required)
    if factory and fill != FILL:
        raise Inexpressible("a factory takes no other fill")
    for a in required:
        kind = str(a.type)
        if kind == "Tensor":
            position, name = next(positions, (None, None))
            if name is None or position is None:
                raise Inexpressible("more than three tensors")
            data = _data(fill, position, domain)
            dtype = "int64" if domain == "int" else "float32"
            given[name] = f"{{data: {json.dumps(data)}, dtype: {dtype}}}"
            text.append(name)
            values.append(torch.tensor(data, dtype=getattr(torch, dtype)))
        elif kind == "number" or (kind == "Optional[number]" and fill.number):
            value: Any = 2 if domain == "int" else 0.5
            text.append(repr(value))
            values.append(value)
        elif kind in ("int", "SymInt"):
            text.append("3" if factory else "1")
            values.append(3 if factory else 1)
        elif kind in ("List[int]", "List[SymInt]"):
            ints = [2, 3] if factory else list(fill.ints)
            text.append(repr(ints))
            values.append(ints)
        elif kind == "float":
            text.append("0.5")
            values.append(0.5)
        elif kind == "bool":
            text.append("False")
            values.append(False)
        elif kind.startswith("Optional["):
            text.append("None")
            values.append(None)
        else:
            raise Inexpressible(f"an argument of type {kind}")
    return given, text, values


def _tensors(torch: Any, result: Any, count: int) -> list[Any]:
    results = [result] if isinstance(result, torch.Tensor) else list(result) if isinstance(result, tuple) else []
    if len(results) != count or not all(isinstance(r, torch.Tensor) for r in results):
        raise Inexpressible(f"it does not return {count} tensor(s)")
    return results


def _tried(torch: Any, name: str, fn: Any, given: Mapping[str, str], text: list[str], args: list[Any],
           kwargs: Mapping[str, Any], count: int, source: str) -> tuple[tuple[bool, int], dict[str, Any]]:
    """The call's entry, with its preference (finite first, then smaller); raises if torch
    does not run it, with and without out=."""
    first = _tensors(torch, fn(*args, **kwargs), count)
    second = _tensors(torch, fn(*args, **kwargs), count)
    outs = [torch.empty(other_size(r.shape), dtype=r.dtype) for r in first]
    _tensors(torch, fn(*args, **kwargs, out=outs[0] if count == 1 else tuple(outs)), count)
    if any(r.numel() == 0 for r in first):
        raise Inexpressible("an empty result")
    dtypes = [str(r.dtype).removeprefix("torch.") for r in first]
    if any(d not in DTYPES for d in dtypes):
        raise Inexpressible("a result of dtype " + ", ".join(dtypes))
    # an uninitialised result (empty, empty_like, ...) can repeat the same garbage: never expected
    deterministic = "empty" not in name and all(
        torch.equal(a, b) or (a.is_floating_point() and torch.allclose(a, b, equal_nan=True))
        for a, b in zip(first, second))
    finite = all(not r.is_floating_point() or bool(torch.isfinite(r).all()) for r in first)
    out = OUT_NAMES[0] if count == 1 else "(" + ", ".join(OUT_NAMES[:count]) + ")"
    entry = {
        "name": name,
        "call": f"{', '.join(RESULT_NAMES[:count])} = {name}({', '.join([*text, f'out={out}'])})",
        "given": dict(given),
        "outs": [{"name": OUT_NAMES[i], "shape": list(r.shape), "dtype": d}
                 for i, (r, d) in enumerate(zip(first, dtypes))],
        "values": bool(deterministic),
        "source": source,
    }
    size = sum(v.numel() for v in args if isinstance(v, torch.Tensor))
    return (not finite, size), entry


def sample_one(torch: Any, opinfos: Mapping[str, Sequence[Any]], contract: Any,
               before_other_fills: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The entry of one out= operator; raises Inexpressible with the reason it has none.
    ``before_other_fills`` is told that reason before the other fills are tried (a crash there
    then keeps it)."""
    spelling = _spelling(contract.spellings)
    if spelling is None:
        raise Inexpressible("no function spelling takes out= (" + ", ".join(contract.spellings) + ")")
    fn: Any = torch
    for part in spelling.split(".")[1:]:
        fn = getattr(fn, part)
    last = "no overload's schema is filled by type, and no OpInfo sample runs"
    refused = ""  # why torch refused the last call filled from a schema
    unfinished: dict[str, Any] | None = None  # a schema call whose result is not finite
    for overload in contract.overloads:
        count = _writes(overload.schema)
        for domain in ("float", "from_one", "int"):
            try:
                given, text, args = _schema_arguments(torch, overload.schema, domain)
            except Inexpressible:
                break  # the same for every domain
            try:
                rank, entry = _tried(torch, contract.name, fn, given, text, args, {}, count,
                                     "its schema: " + overload.schema)
            except Exception as exc:  # noqa: BLE001 - any refusal means: not this argument set
                refused = f"{spelling}({', '.join(text)}, out=...) raises {_first_line(exc)}"
                continue
            if not rank[0]:
                return entry
            unfinished = unfinished or entry
    best: tuple[tuple[bool, int], dict[str, Any]] | None = None
    opname = spelling.removeprefix("torch.")
    counts = {_writes(o.schema) for o in contract.overloads}
    for info in opinfos.get(opname, ()) or opinfos.get(contract.name, ()):
        for dtype in (torch.float32, torch.int64, torch.bool):
            if dtype not in info.supported_dtypes("cpu"):
                continue
            torch.manual_seed(0)
            try:
                samples = list(info.sample_inputs("cpu", dtype))[:40]
            except Exception:  # noqa: BLE001 - a sample generator that needs what this build lacks
                continue
            for smp in samples:
                for count in counts:
                    try:
                        args_ = _Args(torch)
                        parts = [args_.any(v) for v in (smp.input, *smp.args)]
                        named = {k: args_.any(v) for k, v in smp.kwargs.items()}
                        text = [p[0] for p in parts] + [f"{k}={t}" for k, (t, _) in named.items()]
                        rank, entry = _tried(torch, contract.name, fn, args_.given, text, [p[1] for p in parts],
                                             {k: v for k, (_, v) in named.items()}, count,
                                             f"torch's OpInfo sample of {info.name} ({dtype})")
                    except Exception as exc:  # noqa: BLE001
                        last = f"no OpInfo sample is expressible and runs (the last: {_first_line(exc)})"
                        continue
                    if best is None or rank < best[0]:
                        best = (rank, entry)
            if best is not None:
                break
        if best is not None:
            break
    if best is None and unfinished is not None:
        return unfinished
    if best is None:
        schema = refused or "no overload's schema is filled by type"
        reason = (f"{schema}; {last}" if opinfos.get(opname) or opinfos.get(contract.name) else
                  f"{schema}; it has no OpInfo")
        if before_other_fills is not None:
            before_other_fills(reason)
        other = _other_fills(torch, contract, fn)
        if other is not None:
            return other
        raise Inexpressible(reason)
    return best[1]


def _other_fills(torch: Any, contract: Any, fn: Any) -> dict[str, Any] | None:
    """The call of the first other fill (:data:`FILLS`, in order; then the overloads, then the
    domains) that torch runs, one with finite results preferred; None if none runs. Tried only
    where the first fill and the OpInfo samples give no call, so no call they give changes."""
    unfinished: dict[str, Any] | None = None
    tried: set[tuple[str, str, str]] = set()
    for fill in FILLS:
        for overload in contract.overloads:
            count = _writes(overload.schema)
            for domain in ("float", "from_one", "int"):
                try:
                    given, text, args = _schema_arguments(torch, overload.schema, domain, fill)
                except Inexpressible:
                    break  # the same for every domain
                key = (overload.schema, json.dumps(text), json.dumps(given, sort_keys=True))
                if key in tried:  # another fill that fills this overload alike
                    continue
                tried.add(key)
                try:
                    rank, entry = _tried(torch, contract.name, fn, given, text, args, {}, count,
                                         f"its schema ({fill.label()}): {overload.schema}")
                except Exception:  # noqa: BLE001 - any refusal means: not this argument set
                    continue
                if not rank[0]:
                    return entry
                unfinished = unfinished or entry
    return unfinished


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:100] if lines else ''}"


def _child(start: int) -> None:
    """Sample the out= operators from the ``start``-th on, printing each one's entry (or why it
    has none) as a JSON line as soon as it is known: a call that crashes torch (some
    schema-filled calls of internal operators do) ends only this process."""
    import warnings

    warnings.simplefilter("ignore")
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    from conformance.declared import packaged

    opinfos: dict[str, list[Any]] = {}
    for info in op_db:
        for name in (info.name, *(a.name for a in info.aliases or ())):
            opinfos.setdefault(name, []).append(info)
    print(MARK + json.dumps({"version": torch.__version__.split("+")[0]}), flush=True)
    for contract in packaged().of_kind("out")[start:]:
        def pending(reason: str, name: str = contract.name) -> None:
            print(MARK + json.dumps({"pending": {"name": name, "reason": reason}}), flush=True)

        try:
            line = {"call": sample_one(torch, opinfos, contract, pending)}
        except Exception as exc:  # noqa: BLE001 - the reason is recorded
            line = {"left": {"name": contract.name, "reason": str(exc)}}
        print(MARK + json.dumps(line), flush=True)


MARK = "@@out_calls@@"


def sample(contracts: Any) -> dict[str, Any]:
    """Every out= operator's entry, sampled in child processes (a crash costs one operator,
    recorded with the signal)."""
    import subprocess

    names = [c.name for c in contracts.of_kind("out")]
    calls: list[dict[str, Any]] = []
    left: list[dict[str, Any]] = []
    version = ""
    pending: dict[str, Any] = {}  # the operator whose other fills are being tried, and why the first gave no call
    while len(calls) + len(left) < len(names):
        start = len(calls) + len(left)
        done = subprocess.run([sys.executable, "-m", "conformance.tools.out_calls", "--child", str(start)],
                              capture_output=True, text=True, timeout=3600)
        for line in done.stdout.splitlines():
            if not line.startswith(MARK):
                continue
            found = json.loads(line[len(MARK):])
            version = found.get("version", version)
            pending = found.get("pending", pending)
            if "call" in found:
                calls.append(found["call"])
            elif "left" in found:
                left.append(found["left"])
        if done.returncode != 0 and len(calls) + len(left) < len(names):
            crashed = names[len(calls) + len(left)]
            if pending.get("name") == crashed:  # a call of another fill crashed: why the first gave none
                reason = f"{pending['reason']}; a call of another fill ends the process (exit status {done.returncode})"
            else:
                reason = (f"a call filled from its schema ends the process (exit status {done.returncode}): torch "
                          "crashes on it")
            left.append({"name": crashed, "reason": reason})
        if not version:
            raise RuntimeError("torch could not be sampled here:\n" + done.stderr[-2000:])
    return {"framework": "torch", "version": version,
            "source": "python -m conformance.tools.out_calls --sample (schemas filled by type; torch's OpInfo "
                      "samples)", "calls": calls, "left": left}


def dump(document: Mapping[str, Any]) -> str:
    head = ("# the arguments of torch's out= contracts, made by python -m conformance.tools.out_calls --sample "
            "(conformance/tools/out_calls.py); do not edit by hand\n")
    return head + yaml.safe_dump(dict(document), sort_keys=False, width=120, allow_unicode=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "--child" and args[1].isdigit():
        _child(int(args[1]))
        return 0
    if args != ["--sample"]:
        print("usage: python -m conformance.tools.out_calls --sample  (writes " + str(DATA) + ")", file=sys.stderr)
        return 2
    from conformance.declared import packaged
    from conformance.report.outputs import write_files

    document = sample(packaged())
    write_files({DATA: dump(document)})
    print(f"out=: {len(document['calls'])} operators with a call, {len(document['left'])} without")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
