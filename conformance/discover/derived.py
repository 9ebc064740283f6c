"""Writes drawn from the tables themselves: the in-place methods and out= forms no line of
programs.py writes.

A table entry ``method:<f>_`` is an in-place method (``t.sin_()``, ``t.atan2_(u)``): it writes
into ``t`` what the out-of-place ``<f>`` gives, elementwise. Where NumPy has a ufunc of the
same name (``np.sin``, ``np.arctan2``; NumPy's names are torch's and the array API's for
these functions) that takes float64 and gives one result, that ufunc is the write's
semantics: one tensor argument, ``t.<f>_()``; two, ``t.<f>_(u)`` with ``u`` another name
of ``t``'s shape (which may overlap ``t``, as every operand of the programs may). A boolean
result (``t.greater_(u)``, ``t.logical_not_()``) is written as 0.0 and 1.0, in ``t``'s dtype.

A function entry ``fn:<f>`` with such a ufunc (a float result) is written through its
``out=``: ``<f>(u, out=t)`` for a function of one tensor (``u`` may be ``t`` itself or overlap
it), ``<f>(t, u, out=t)`` for one of two. It is drawn on a framework whose table entry takes
``out=`` (:func:`takes_out`: its signature says so, or torch's operator schemas declare the
out= variant), so a run with Paddle draws the four its table gives ``out=`` and one with
MindSpore none.

So a new in-place entry of a table is drawn without a line of the generator, as soon as the
vocabulary has its key and NumPy a ufunc of its name (:func:`derived_writes`); a run draws
it where every framework of the run with changeable arrays has the key in its table
(conformance.discover.run.room). An entry without a ufunc of its name (``sigmoid_``,
``erf_``, ``round_``: NumPy has no ufunc of that name, or one of other semantics) is not
drawn: its semantics would have to be written, in programs.py.

What a derived write is judged on (conformance.discover.model):
- its values, to 1e-9 of their magnitude: two implementations of ``sin`` in float64 agree to
  an ulp or two, not to the bit;
- only where the values it reads are finite and at most :data:`DOMAIN` in magnitude. Beyond
  (``t.exp_()`` of 100 is 2.7e43, whose ``sin`` depends on the argument reduction of each
  library) implementations legitimately differ, so the model judges nothing of that program,
  as it judges nothing of a write into repeated memory positions;
- never its gradient: programs with a gradient draw no derived write (WriteOp.analytic is
  False), since whether a function is analytic, which the complex step needs, is not
  something a table says;
- a wrong value a derived write shows is a finding of its own kind (oracles.Finding.signature
  names the derived writes of a wrong value, as it names its views): a function computed
  otherwise than NumPy's never stands for a misplaced element.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable
from typing import Any

import numpy as np

from conformance import declared
from conformance.discover.programs import WRITES_BY_NAME, WriteOp, register_writes

# the largest magnitude a derived write's input may have for its values to be judged
DOMAIN = 1e4
_SAMPLE = np.arange(6, dtype=np.float64).reshape(2, 3) + 2.0


def ufunc_of(name: str) -> np.ufunc | None:
    """NumPy's ufunc of ``name`` with one result, which takes float64 (all its inputs) and
    gives a float or a boolean of each element: the semantics of ``<name>_``. None when
    NumPy has none, only an integer one (``gcd``, ``bitwise_and``) or a generalized one
    (``matmul``)."""
    ufunc = getattr(np, name, None)
    # a generalized ufunc (matmul: a signature over core dimensions) is not elementwise
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or ufunc.nin not in (1, 2) or ufunc.signature:
        return None
    try:
        with np.errstate(all="ignore"):
            result = ufunc(*([_SAMPLE] * ufunc.nin))
    except (TypeError, ValueError):  # no loop for float64 (bitwise_and, gcd, ldexp's float exponent)
        return None
    if not isinstance(result, np.ndarray) or result.shape != _SAMPLE.shape or result.dtype.kind not in "fb":
        return None
    return ufunc


def derived_writes(keys: Iterable[str]) -> list[WriteOp]:
    """A WriteOp for each in-place method key (``method:<f>_``) that no WriteOp of
    programs.py has and whose ``<f>`` is a NumPy ufunc (:func:`ufunc_of`), and one for each
    function key (``fn:<f>``) whose ``<f>`` is one with a float result, written through its
    ``out=`` (``<f>(u, out=t)``, ``<f>(t, u, out=t)``); sorted by key."""
    written = {op.key for op in WRITES_BY_NAME.values() if not op.derived}
    out = []
    for key in sorted(set(keys)):
        if key.startswith("method:") and key.endswith("_") and not key.endswith("__") and key not in written:
            name = key[len("method:"):-1]
            ufunc = ufunc_of(name)
            if ufunc is not None:
                out.append(_unary(name, key, ufunc) if ufunc.nin == 1 else _binary(name, key, ufunc))
        elif key.startswith("fn:"):
            name = key[len("fn:"):]
            ufunc = ufunc_of(name)
            # a boolean result into a float out= tensor is a question of its own (each
            # framework's casting rule for out=), not of where the values land
            if ufunc is not None and _result_kind(ufunc) == "f":
                out.append(_out_form(name, key, ufunc))
    return out


def _result_kind(ufunc: np.ufunc) -> str:
    """The kind of dtype ``ufunc`` gives for float64 inputs: "f" (float) or "b" (boolean)."""
    return str(ufunc.resolve_dtypes((np.dtype(np.float64),) * ufunc.nin + (None,))[-1].kind)


def _out_form(name: str, key: str, ufunc: np.ufunc) -> WriteOp:
    """``<f>(u, out=t)`` (t gets f of another name of its shape, or of itself) or, for a
    function of two, ``<f>(t, u, out=t)``."""
    def apply(v: np.ndarray, a: tuple[Any, ...], u: np.ndarray | None) -> np.ndarray:
        assert u is not None, "a write with an operand was applied without one"
        with np.errstate(all="ignore"):
            return np.asarray(ufunc(u) if ufunc.nin == 1 else ufunc(v, u), dtype=np.float64)

    if ufunc.nin == 1:
        return WriteOp(f"{name}_out", key, lambda t, a: f"{name}({a[0]}, out={t})", lambda sh: [("",)], apply,
                       analytic=False, operand=True, overwrites=True, derived=True, out=True)
    return WriteOp(f"{name}_out", key, lambda t, a: f"{name}({t}, {a[0]}, out={t})", lambda sh: [("",)], apply,
                   analytic=False, operand=True, derived=True, out=True)


def takes_out(adapter: Any, key: str) -> bool:
    """Whether a framework's table entry for ``key`` takes ``out=``: its signature names
    ``out`` (NumPy's and Paddle's entries do), or the framework is torch (or compiles torch)
    and torch's operator schemas declare an out= variant of it (conformance.declared, the
    contracts data: torch's generic entries pass every keyword on, so their signature says
    nothing)."""
    entry = adapter.ops.get(key)
    if entry is None or getattr(entry, "not_applicable", None) is not None:
        return False
    try:
        if "out" in inspect.signature(getattr(entry, "fn", entry)).parameters:
            return True
    except (TypeError, ValueError):  # a builtin without a signature
        pass
    return "torch" in (adapter.name, getattr(adapter, "compiles", None)) and key in torch_out_keys()


@functools.cache
def torch_out_keys() -> frozenset[str]:
    """The function keys torch's schemas declare an out= variant of (conformance.declared)."""
    return frozenset(key for contract in declared.packaged().of_kind("out") for key in contract.keys)


def _unary(name: str, key: str, ufunc: np.ufunc) -> WriteOp:
    def apply(v: np.ndarray, a: tuple[Any, ...], u: np.ndarray | None) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(ufunc(v), dtype=np.float64)

    return WriteOp(f"{name}_", key, lambda t, a: f"{t}.{name}_()", lambda sh: [()], apply, analytic=False,
                   derived=True)


def _binary(name: str, key: str, ufunc: np.ufunc) -> WriteOp:
    def apply(v: np.ndarray, a: tuple[Any, ...], u: np.ndarray | None) -> np.ndarray:
        assert u is not None, "a write with an operand was applied without one"
        with np.errstate(all="ignore"):
            return np.asarray(ufunc(v, u), dtype=np.float64)

    return WriteOp(f"{name}_", key, lambda t, a: f"{t}.{name}_({a[0]})", lambda sh: [("",)], apply, analytic=False,
                   operand=True, derived=True)


def judged(values: np.ndarray) -> bool:
    """Whether a derived write reading ``values`` is judged: all finite, at most DOMAIN."""
    real = np.real(values)
    return bool(np.isfinite(real).all() and (np.abs(real) <= DOMAIN).all())


def register(keys: Iterable[str]) -> list[str]:
    """Add the derived writes of ``keys`` to programs.WRITES_BY_NAME (once each: a second call
    adds only what is new), so that steps naming them render, run in the model and shrink as
    every other write; the names of all the derived writes registered."""
    register_writes(derived_writes(keys))
    return [name for name, op in WRITES_BY_NAME.items() if op.derived]
