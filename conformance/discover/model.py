"""The reference model of strided memory: what every tensor of a program must hold.

Memory is a list of flat storages; a tensor is a storage and an index array (for each of its
elements, the position in the storage it reads). A view step applies its operation's
documented semantics (``ViewOp.index``) to its source's index array and keeps the storage; a
copy step gathers the values into a new storage. A write computes the new values of the
elements its target reads and stores them there; a write that rebinds (``v += c`` where the
framework has no in-place ``+=``) makes a new storage instead. After the program, every
tensor's values are its storage at its indices, and two tensors overlap when they read a
common position of one storage.

Which steps are views is not assumed (except that ``clone`` copies, as every framework
documents): :func:`explanations` tries every assignment of view or
copy to the view steps (and in place or rebind to the augmented assignments) and keeps those
that reproduce everything a framework was observed to hold. A framework's behaviour that no
assignment explains is one that no composition of the operations' documented semantics can
produce: a value in the wrong place, a write lost or duplicated, memory shared where no
element is. That is the model oracle; it needs no expectation written by hand, and it holds
whichever operations a framework implements as views or copies.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from conformance.discover.derived import judged
from conformance.discover.programs import VIEWS_BY_NAME, WRITES_BY_NAME, Program

VIEW, COPY, IN_PLACE, REBIND = "view", "copy", "in place", "rebind"


@dataclass(frozen=True)
class Prediction:
    values: dict[str, np.ndarray]
    overlaps: dict[tuple[str, str], bool]  # (later name, earlier name) -> share an element
    # a write into a view whose elements repeat memory positions (expand, overlapping unfold
    # windows) read its target, or gave one position two values: no documentation says what
    # is kept, so the model predicts nothing and judges nothing (torch eager refuses most)
    undefined: bool = False
    # a write autograd records into a name outside its bookkeeping with an operand inside it
    # (``d[:] = x`` with d = x.data): torch makes that name part of the graph from then on,
    # while its base's history stays as it was: one memory, two gradients, which one storage
    # of complex values cannot hold. The values are modelled; the gradient is not judged
    gradient_unmodelled: bool = False


def decision_points(program: Program) -> list[int]:
    """The steps whose semantics the model leaves open: every view step (view or copy) and
    every write that may rebind."""
    return [i for i, s in enumerate(program.steps)
            if (s.is_view and not VIEWS_BY_NAME[s.op].copies) or (not s.is_view and WRITES_BY_NAME[s.op].rebinds)]


def predict(program: Program, decisions: Mapping[int, str], data: np.ndarray | None = None) -> Prediction:
    """What every name holds after the program, with the view steps and augmented
    assignments decided as ``decisions`` says (a view where it says nothing), on the input
    ``data`` (flat; by default the program's own, Program.input_values).

    Autograd's bookkeeping is modelled for the complex step (``data`` complex): a name is
    *tracked* unless a ``detach()`` or ``.data`` view is in its chain, or it was made from
    untracked names only. Values read through an untracked name are constants (their real
    part), and a write autograd does not record (into an untracked name, or in a ``no_grad``
    block) adds a constant to what it overwrites: ``v + (f(v) - v)`` with ``f(v) - v``
    computed on real parts. So the derivative the complex step takes is the gradient with
    those writes held constant, the one autograd documents for them."""
    # data is complex for the complex step
    storages = [program.input_values() if data is None else np.asarray(data).reshape(-1).copy()]
    undefined = unmodelled = False
    tensors: dict[str, tuple[int, np.ndarray]] = {
        "x": (0, np.arange(math.prod(program.shape), dtype=np.int64).reshape(program.shape))}
    tracked = {"x": True}

    def read(name: str) -> np.ndarray:
        sid, idx = tensors[name]
        values = storages[sid][idx]
        return values if tracked[name] else _constant(values)

    for i, step in enumerate(program.steps):
        sid, idx = tensors[step.target]
        if step.is_view:
            assert step.result is not None
            view = VIEWS_BY_NAME[step.op]
            new_idx = np.asarray(view.index(idx, step.args))
            if decisions.get(i, COPY if view.copies else VIEW) == VIEW:
                tensors[step.result] = (sid, new_idx)
            else:
                storages.append(storages[sid][new_idx].reshape(-1).copy())
                tensors[step.result] = (len(storages) - 1, np.arange(new_idx.size).reshape(new_idx.shape))
            tracked[step.result] = tracked[step.target] and not view.untracked
            continue
        write = WRITES_BY_NAME[step.op]
        operand = None if step.operand is None else read(step.operand).copy()  # read whole before the write
        if write.derived and not all(judged(v) for v in (read(step.target), operand) if v is not None):
            undefined = True  # outside the domain where implementations of its function agree
        if write.creates or (write.rebinds and decisions.get(i, IN_PLACE) == REBIND):
            target, made = read(step.target), step.no_grad
            if made:  # computed under no_grad: a constant
                target, operand = _constant(target), None if operand is None else _constant(operand)
            storages.append(np.asarray(write.apply(target, step.args, operand)).reshape(-1).copy())
            tensors[step.target] = (len(storages) - 1, np.arange(idx.size).reshape(idx.shape))
            tracked[step.target] = not made and (
                tracked[step.target] or (step.operand is not None and tracked[step.operand]))
            continue
        current = storages[sid][idx]
        if not tracked[step.target] and not step.no_grad and step.operand is not None and tracked[step.operand]:
            unmodelled = True
        if tracked[step.target] and not step.no_grad:
            new_values = write.apply(current, step.args, operand)
        else:  # held constant: what it adds to what it overwrites does not depend on the input
            real, operand = _constant(current), None if operand is None else _constant(operand)
            new_values = current + (np.asarray(write.apply(real, step.args, operand)) - real)
        if _conflicting(idx, new_values, write.overwrites):
            undefined = True
        storages[sid][idx] = new_values
    values = {name: read(name) for name in tensors}
    names = program.names()
    overlaps = {}
    for a_i, a in enumerate(names):
        for b in names[:a_i]:
            (sa, ia), (sb, ib) = tensors[a], tensors[b]
            overlaps[(a, b)] = sa == sb and bool(np.intersect1d(ia.reshape(-1), ib.reshape(-1)).size)
    return Prediction(values, overlaps, undefined, unmodelled)


def _constant(values: np.ndarray) -> np.ndarray:
    """``values`` as autograd sees them outside its bookkeeping: their real part (the complex
    step's perturbation dropped), in the same dtype."""
    return np.real(values).astype(values.dtype)


def _conflicting(idx: np.ndarray, new_values: np.ndarray, overwrites: bool) -> bool:
    """Whether a write into a target whose elements repeat memory positions is one no
    documentation defines: one that reads the target (is ``v.add_(c)`` applied once per
    alias?), or one that gives a position two values."""
    flat = idx.reshape(-1)
    if np.unique(flat).size == flat.size:
        return False
    if not overwrites:
        return True
    written = np.broadcast_to(np.asarray(new_values), idx.shape).reshape(-1)
    order = np.argsort(flat, kind="stable")
    same = flat[order][1:] == flat[order][:-1]
    return bool(np.any(same & (written[order][1:] != written[order][:-1])))


def assignments(program: Program, fixed: Mapping[int, str] | None = None) -> Iterator[dict[int, str]]:
    points = decision_points(program)
    options = [([VIEW, COPY] if program.steps[i].is_view else [IN_PLACE, REBIND]) for i in points]
    for combo in itertools.product(*options):
        chosen = dict(zip(points, combo))
        if fixed and any(chosen[i] != v for i, v in fixed.items() if i in chosen):
            continue
        yield chosen


def mismatches(prediction: Prediction, observed: Mapping[str, object]) -> list[str]:
    """What an observation (values.NAME, shares_memory.A.B keys) holds that the prediction does not."""
    if prediction.undefined:
        return []
    out = []
    for name, value in prediction.values.items():
        seen = observed.get(f"values.{name}")
        if seen is None:
            continue
        got = np.asarray(seen, dtype=np.float64)
        if got.shape != value.shape or not _equal(got, value):
            out.append(f"values of {name}: model {value.tolist()}, observed {got.tolist()}")
    for (a, b), overlap in prediction.overlaps.items():
        seen = observed.get(f"shares_memory.{a}.{b}")
        if isinstance(seen, bool) and seen != overlap:
            out.append(f"shares_memory({a}, {b}): model {overlap}, observed {seen}")
    return out


def _equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal within 1e-9 of the larger of 1 and the value's magnitude (two float64
    implementations of a derived write's function agree to an ulp or two; an element in the
    wrong place is off by far more), an infinity equal to itself, NaN equal to NaN."""
    with np.errstate(invalid="ignore"):
        close = (np.abs(got - want) <= 1e-9 * np.maximum(1.0, np.abs(want))) | (got == want)
    return bool(close.all() or (close | (np.isnan(got) & np.isnan(want))).all())


def explanations(program: Program, observed: Mapping[str, object],
                 fixed: Mapping[int, str] | None = None) -> tuple[list[dict[int, str]], list[str]]:
    """Every assignment that reproduces the observation, and, when there is none, the
    mismatches of the assignment that comes closest. Remembered for the last programs: every
    oracle asks it of the same run."""
    key = (program, repr(sorted(observed.items())), None if fixed is None else tuple(sorted(fixed.items())))
    if key not in _EXPLAINED:
        if len(_EXPLAINED) >= 512:
            _EXPLAINED.pop(next(iter(_EXPLAINED)))
        _EXPLAINED[key] = _explanations(program, observed, fixed)
    found, closest = _EXPLAINED[key]
    return [dict(d) for d in found], list(closest)


_EXPLAINED: dict[tuple[object, ...], tuple[list[dict[int, str]], list[str]]] = {}


def _explanations(program: Program, observed: Mapping[str, object],
                  fixed: Mapping[int, str] | None) -> tuple[list[dict[int, str]], list[str]]:
    found, closest = [], None
    for chosen in assignments(program, fixed):
        wrong = mismatches(predict(program, chosen), observed)
        if not wrong:
            found.append(chosen)
        elif closest is None or len(wrong) < len(closest):
            closest = wrong
    return found, ([] if found else (closest or []))


def loss(prediction: Prediction, names: list[str]) -> complex:
    """The program's loss (Program.loss_text) on the model's values: every name squared
    (``v * v``, not ``|v|**2``, so that it stays analytic for the complex step)."""
    return complex(sum((k + 1) * np.sum(prediction.values[n] * prediction.values[n]) for k, n in enumerate(names)))


def finite_difference_gradient(program: Program, decisions: Mapping[int, str], step: float = 1e-30) -> np.ndarray:
    """The gradient of the program's loss with respect to its input, by finite differences
    in float64: the complex step, ``Im L(x + i h e_k) / h`` (Squire & Trapp 1998). Every
    write the model knows is a polynomial in the input (fill, setitem, add and multiply by
    constants, products of names), so the loss is analytic and the complex step gives its
    derivative to rounding, with no cancellation of the difference ``L(x + h) - L(x - h)``:
    a gradient off by more than rounding is a gradient that is wrong."""
    names = program.names()
    base = program.input_values()
    out = np.zeros_like(base)
    for k in range(base.size):
        perturbed = base.astype(np.complex128)
        perturbed[k] += 1j * step
        out[k] = loss(predict(program, decisions, perturbed), names).imag / step
    return out.reshape(program.shape)
