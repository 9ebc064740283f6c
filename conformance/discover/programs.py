"""Generated programs: an input, a chain of view operations, writes through views and bases.

A :class:`Program` is data: the input's shape and a list of :class:`Step`, each an operation
from :data:`VIEW_OPS` or :data:`WRITE_OPS` with its arguments. It renders to a case in the
corpus format (:meth:`Program.case_text`), which the loader reads with the same parser and
allowlist as a hand-written case: a generated program can only call what the adapters'
tables hold. The shapes every step sees are computed here (:func:`shape_after`), so that a
generated step is always well-typed: its dimensions and indices are in range.

Each view operation carries its documented semantics as a function on an index array
(:attr:`ViewOp.index`): applied to ``arange(n).reshape(shape)`` it gives, for every element of
the result, the element of the input it reads. That is the reference model's input
(conformance.discover.model). The functions use NumPy's pure indexing and axis functions;
they never alias anything and never touch a framework.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Shape = tuple[int, ...]


@dataclass(frozen=True)
class ViewOp:
    """A view operation: how it is written, which arguments fit a shape, what it reads."""

    name: str
    key: str  # the vocabulary key the adapters' tables resolve it by
    render: Callable[[str, tuple[Any, ...]], str]  # (source name, args) -> expression
    arguments: Callable[[Shape], list[tuple[Any, ...]]]  # every argument tuple valid for a shape
    index: Callable[[np.ndarray, tuple[Any, ...]], np.ndarray]  # the documented semantics
    # a view only when the strides allow it (reshape, flatten): documented as "a view if
    # possible", so the documentation oracle does not require one
    conditional: bool = False
    # documented to copy in every framework (clone): the model does not let it be a view
    copies: bool = False
    # outside autograd's bookkeeping (detach(), .data): writes through it are not recorded,
    # and what is read through it is a constant (model.predict)
    untracked: bool = False
    # drawn on the input only (as_strided: it addresses the source's memory, not its logical
    # elements, so its documented semantics are an index function of the contiguous input alone)
    input_only: bool = False


def _dims(shape: Shape) -> range:
    return range(len(shape))


def _slices(shape: Shape) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if not shape:
        return out
    n = shape[0]
    for start in range(n):
        for stop in range(start + 1, n + 1):
            for step in (1, 2):
                if (stop - start + step - 1) // step >= 1:
                    out.append((start, stop, step))
    return out


def _slice_text(src: str, a: tuple[Any, ...]) -> str:
    start, stop, step = a
    return f"{src}[{start}:{stop}{'' if step == 1 else f':{step}'}]"


def _reshapes(shape: Shape) -> list[tuple[Any, ...]]:
    n = math.prod(shape)
    out: list[tuple[Any, ...]] = [(n,)]
    for a in range(2, n):
        if n % a == 0:
            out.append((a, n // a))
    return [s for s in out if s != shape]


def _diagonal_ok(shape: Shape) -> list[tuple[Any, ...]]:
    return [()] if len(shape) == 2 and min(shape) >= 1 else []


def _pairs(shape: Shape) -> list[tuple[Any, ...]]:
    return [(a, b) for a in _dims(shape) for b in _dims(shape) if a < b]


def _permutations(shape: Shape) -> list[tuple[Any, ...]]:
    dims = tuple(_dims(shape))
    return [p for p in itertools.permutations(dims) if p != dims] if len(shape) >= 2 else []


def _tuple(values: Sequence[Any]) -> str:
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def _expansions(shape: Shape) -> list[tuple[Any, ...]]:
    """A new leading dimension of 2, and each dimension of size 1 grown to 3."""
    out: list[tuple[Any, ...]] = [(2, *shape)] if len(shape) < 3 else []
    out += [tuple(3 if k == d else n for k, n in enumerate(shape)) for d in _dims(shape) if shape[d] == 1]
    return out


def _ceil(n: int, d: int) -> int:
    return -(-n // d)


def _chunks(shape: Shape) -> list[tuple[Any, ...]]:
    """(chunks, dim, piece), ``chunks`` dividing the dimension: an uneven chunk is torch's
    pieces of ceil(size / chunks) but NumPy's and JAX's counterpart, array_split, differs and
    Paddle refuses it, a divergence the corpus records (views.chunk.uneven), not a finding."""
    return [(n, d, k) for d in _dims(shape) for n in range(2, shape[d] + 1) if shape[d] % n == 0 for k in range(n)]


def _even_splits(shape: Shape, dim: int) -> list[tuple[Any, ...]]:
    return [(n, k) for n in range(2, shape[dim] + 1) if shape[dim] % n == 0 for k in range(n)]


def _diagonals(shape: Shape) -> list[tuple[Any, ...]]:
    """(offset, dim1, dim2) of every non-empty diagonal of a tensor of rank 2 or 3."""
    if len(shape) < 2:
        return []
    return [(o, a, b) for a in _dims(shape) for b in _dims(shape) if a != b
            for o in range(-shape[a] + 1, shape[b])]


def _strided_layouts(shape: Shape) -> list[tuple[Any, ...]]:
    """(size, stride) of as_strided views of a contiguous tensor of ``shape`` that stay inside
    its memory: ranks 1 and 2, sizes up to 3, strides 0 to 2 in elements (0 and overlapping
    windows make elements that share memory, whose writes are judged by nothing)."""
    n = math.prod(shape)
    out: list[tuple[Any, ...]] = []
    for rank in (1, 2):
        for size in itertools.product(range(1, 4), repeat=rank):
            for stride in itertools.product(range(3), repeat=rank):
                if sum((k - 1) * st for k, st in zip(size, stride)) < n:
                    out.append((size, stride))
    return out


def _strided(i: np.ndarray, a: tuple[Any, ...]) -> np.ndarray:
    """torch's as_strided(size, stride) of the contiguous input: element (j, k) reads the input's
    element at flat position j * stride[0] + k * stride[1] (its memory, in elements)."""
    size, stride = a
    positions = sum(np.indices(size)[d] * stride[d] for d in range(len(size)))
    return i.reshape(-1)[positions]


VIEW_OPS: tuple[ViewOp, ...] = (
    ViewOp("slice", "index:basic", _slice_text, _slices, lambda i, a: i[a[0]:a[1]:a[2]]),
    ViewOp("select", "index:basic", lambda s, a: f"{s}[{a[0]}]",
           lambda sh: [(k,) for k in range(sh[0])] if len(sh) >= 2 else [], lambda i, a: i[a[0]]),
    ViewOp("transpose", "method:transpose", lambda s, a: f"{s}.transpose({a[0]}, {a[1]})",
           lambda sh: [(a, b) for a in _dims(sh) for b in _dims(sh) if a < b],
           lambda i, a: np.swapaxes(i, a[0], a[1])),
    ViewOp("t", "method:t", lambda s, a: f"{s}.t()", lambda sh: [()] if len(sh) == 2 else [], lambda i, a: i.T),
    ViewOp("narrow", "method:narrow", lambda s, a: f"{s}.narrow({a[0]}, {a[1]}, {a[2]})",
           lambda sh: [(d, st, ln) for d in _dims(sh) for st in range(sh[d]) for ln in range(1, sh[d] - st + 1)],
           lambda i, a: np.take(i, range(a[1], a[1] + a[2]), axis=a[0])),
    ViewOp("unsqueeze", "method:unsqueeze", lambda s, a: f"{s}.unsqueeze({a[0]})",
           lambda sh: [(d,) for d in range(len(sh) + 1)] if len(sh) < 3 else [],
           lambda i, a: np.expand_dims(i, a[0])),
    ViewOp("squeeze", "method:squeeze", lambda s, a: f"{s}.squeeze({a[0]})",
           lambda sh: [(d,) for d in _dims(sh) if sh[d] == 1 and len(sh) > 1], lambda i, a: np.squeeze(i, a[0])),
    ViewOp("diagonal", "method:diagonal", lambda s, a: f"{s}.diagonal()", _diagonal_ok,
           lambda i, a: np.diagonal(i).copy()),
    ViewOp("view", "method:view", lambda s, a: f"{s}.view({', '.join(map(str, a))})", _reshapes,
           lambda i, a: i.reshape(a)),
    ViewOp("reshape", "method:reshape", lambda s, a: f"{s}.reshape({', '.join(map(str, a))})", _reshapes,
           lambda i, a: i.reshape(a), conditional=True),
    ViewOp("flatten", "method:flatten", lambda s, a: f"{s}.flatten()",
           lambda sh: [()] if len(sh) >= 2 else [], lambda i, a: i.reshape(-1), conditional=True),
    ViewOp("unbind", "method:unbind", lambda s, a: f"{s}.unbind({a[0]})[{a[1]}]",
           lambda sh: [(d, k) for d in _dims(sh) for k in range(sh[d])] if len(sh) >= 2 else [],
           lambda i, a: np.take(i, a[1], axis=a[0])),
    ViewOp("split", "method:split", lambda s, a: f"{s}.split({a[0]}, {a[1]})[{a[2]}]",
           lambda sh: [(size, d, k) for d in _dims(sh) for size in range(1, sh[d])
                       for k in range(-(-sh[d] // size))],
           lambda i, a: np.take(i, range(a[2] * a[0], min((a[2] + 1) * a[0], i.shape[a[1]])), axis=a[1])),
    ViewOp("detach", "method:detach", lambda s, a: f"{s}.detach()", lambda sh: [()], lambda i, a: i, untracked=True),
    ViewOp("data", "attr:data", lambda s, a: f"{s}.data", lambda sh: [()], lambda i, a: i, untracked=True),
    ViewOp("clone", "method:clone", lambda s, a: f"{s}.clone()", lambda sh: [()], lambda i, a: i, copies=True),
    # the other view, copy and identity operations of the adapters' tables, each with its
    # documented semantics on an index array (torch's documentation; NumPy's function of the
    # same name where it has one)
    ViewOp("permute", "method:permute", lambda s, a: f"{s}.permute({', '.join(map(str, a))})", _permutations,
           lambda i, a: np.transpose(i, a)),
    ViewOp("movedim", "method:movedim", lambda s, a: f"{s}.movedim({a[0]}, {a[1]})",
           lambda sh: [(a, b) for a in _dims(sh) for b in _dims(sh) if a != b],
           lambda i, a: np.moveaxis(i, a[0], a[1])),
    ViewOp("swapaxes", "method:swapaxes", lambda s, a: f"{s}.swapaxes({a[0]}, {a[1]})", _pairs,
           lambda i, a: np.swapaxes(i, a[0], a[1])),
    ViewOp("swapdims", "method:swapdims", lambda s, a: f"{s}.swapdims({a[0]}, {a[1]})", _pairs,
           lambda i, a: np.swapaxes(i, a[0], a[1])),
    ViewOp("mT", "attr:mT", lambda s, a: f"{s}.mT", lambda sh: [()] if len(sh) >= 2 else [],
           lambda i, a: np.swapaxes(i, -1, -2)),
    ViewOp("adjoint", "method:adjoint", lambda s, a: f"{s}.adjoint()", lambda sh: [()] if len(sh) >= 2 else [],
           lambda i, a: np.swapaxes(i, -1, -2)),
    # expand and broadcast_to: a view whose elements repeat memory (stride 0); writes into it
    # are refused by torch eager (an overlapping write), never by the model
    ViewOp("expand", "method:expand", lambda s, a: f"{s}.expand({', '.join(map(str, a))})", _expansions,
           lambda i, a: np.broadcast_to(i, a)),
    ViewOp("broadcast_to", "method:broadcast_to", lambda s, a: f"{s}.broadcast_to({_tuple(a)})", _expansions,
           lambda i, a: np.broadcast_to(i, a)),
    ViewOp("ravel", "method:ravel", lambda s, a: f"{s}.ravel()", lambda sh: [()] if len(sh) >= 2 else [],
           lambda i, a: i.reshape(-1), conditional=True),
    ViewOp("unflatten", "method:unflatten", lambda s, a: f"{s}.unflatten({a[0]}, {_tuple(a[1:])})",
           lambda sh: [(d, 2, sh[d] // 2) for d in _dims(sh) if sh[d] == 4] if len(sh) < 3 else [],
           lambda i, a: i.reshape(i.shape[:a[0]] + tuple(a[1:]) + i.shape[a[0] + 1:])),
    ViewOp("select_dim", "method:select", lambda s, a: f"{s}.select({a[0]}, {a[1]})",
           lambda sh: [(d, k) for d in _dims(sh) for k in range(sh[d])] if len(sh) >= 2 else [],
           lambda i, a: np.take(i, a[1], axis=a[0])),
    ViewOp("chunk", "method:chunk", lambda s, a: f"{s}.chunk({a[0]}, {a[1]})[{a[2]}]", _chunks,
           lambda i, a: np.take(i, range(a[2] * _ceil(i.shape[a[1]], a[0]),
                                         min((a[2] + 1) * _ceil(i.shape[a[1]], a[0]), i.shape[a[1]])), axis=a[1])),
    ViewOp("tensor_split", "method:tensor_split", lambda s, a: f"{s}.tensor_split({a[0]}, {a[1]})[{a[2]}]",
           lambda sh: [(n, d, k) for d in _dims(sh) for n in range(2, sh[d] + 1) for k in range(n)],
           lambda i, a: np.array_split(i, a[0], axis=a[1])[a[2]]),
    ViewOp("split_with_sizes", "method:split_with_sizes",
           lambda s, a: f"{s}.split_with_sizes([{a[0]}, {a[1]}], {a[2]})[{a[3]}]",
           lambda sh: [(n, sh[d] - n, d, k) for d in _dims(sh) for n in range(1, sh[d]) for k in (0, 1)],
           lambda i, a: np.take(i, range(0, a[0]) if a[3] == 0 else range(a[0], a[0] + a[1]), axis=a[2])),
    ViewOp("hsplit", "method:hsplit", lambda s, a: f"{s}.hsplit({a[0]})[{a[1]}]",
           lambda sh: _even_splits(sh, 1 if len(sh) >= 2 else 0), lambda i, a: np.hsplit(i, a[0])[a[1]]),
    ViewOp("vsplit", "method:vsplit", lambda s, a: f"{s}.vsplit({a[0]})[{a[1]}]",
           lambda sh: _even_splits(sh, 0) if len(sh) >= 2 else [], lambda i, a: np.vsplit(i, a[0])[a[1]]),
    ViewOp("unfold", "method:unfold", lambda s, a: f"{s}.unfold({a[0]}, {a[1]}, {a[2]})",
           lambda sh: [(d, size, step) for d in _dims(sh) for size in range(1, sh[d] + 1) for step in (1, 2)]
           if len(sh) < 3 else [],
           lambda i, a: np.take(np.lib.stride_tricks.sliding_window_view(i, a[1], axis=a[0]),
                                range(0, i.shape[a[0]] - a[1] + 1, a[2]), axis=a[0])),
    ViewOp("diagonal_of", "method:diagonal", lambda s, a: f"{s}.diagonal({a[0]}, {a[1]}, {a[2]})", _diagonals,
           lambda i, a: np.diagonal(i, a[0], a[1], a[2]).copy()),
    # documented as copies by torch, as views by NumPy (np.flip, np.rot90): either is allowed
    ViewOp("flip", "method:flip", lambda s, a: f"{s}.flip({a[0]})", lambda sh: [(d,) for d in _dims(sh)],
           lambda i, a: np.flip(i, a[0])),
    ViewOp("fliplr", "method:fliplr", lambda s, a: f"{s}.fliplr()", lambda sh: [()] if len(sh) >= 2 else [],
           lambda i, a: np.fliplr(i)),
    ViewOp("flipud", "method:flipud", lambda s, a: f"{s}.flipud()", lambda sh: [()], lambda i, a: np.flipud(i)),
    ViewOp("rot90", "method:rot90", lambda s, a: f"{s}.rot90()", lambda sh: [()] if len(sh) >= 2 else [],
           lambda i, a: np.rot90(i, 1, (0, 1))),
    # a view of the input's memory, addressed by strides (torch.Tensor.as_strided, NumPy's
    # lib.stride_tricks.as_strided in the adapter's elements, Paddle's as_strided)
    ViewOp("as_strided", "method:as_strided", lambda s, a: f"{s}.as_strided({_tuple(a[0])}, {_tuple(a[1])})",
           _strided_layouts, _strided, input_only=True),
    # a view when the tensor is contiguous already, else a copy: either is allowed
    ViewOp("contiguous", "method:contiguous", lambda s, a: f"{s}.contiguous()", lambda sh: [()], lambda i, a: i,
           conditional=True),
    ViewOp("conj", "method:conj", lambda s, a: f"{s}.conj()", lambda sh: [()], lambda i, a: i),
    ViewOp("real", "attr:real", lambda s, a: f"{s}.real", lambda sh: [()], lambda i, a: i),
    ViewOp("repeat", "method:repeat", lambda s, a: f"{s}.repeat({', '.join(map(str, a))})",
           lambda sh: [tuple(2 if k == d else 1 for k in _dims(sh)) for d in _dims(sh)],
           lambda i, a: np.tile(i, a), copies=True),
)


def _index_lists(shape: Shape) -> list[tuple[Any, ...]]:
    """(positions,) of dimension 0 for an index list: one to three positions, repeats and
    any order included (``x[[2, 0, 0]]``)."""
    if not shape:
        return []
    return [(p,) for k in (1, 2, 3) for p in itertools.product(range(shape[0]), repeat=k)]


def _list_text(positions: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, positions)) + "]"


# an index list (advanced indexing, ``x[[2, 0]]``): a copy in every framework (NumPy's and
# torch's documented advanced indexing), of the rows it names, repeated as often as named
VIEW_OPS += (ViewOp("take_rows", "index:advanced", lambda s, a: f"{s}[{_list_text(a[0])}]", _index_lists,
                    lambda i, a: i[list(a[0])], copies=True),)
VIEWS_BY_NAME = {op.name: op for op in VIEW_OPS}


@dataclass(frozen=True)
class WriteOp:
    """A write: into a name's memory (or, where the framework rebinds, into a new tensor)."""

    name: str
    key: str
    render: Callable[[str, tuple[Any, ...]], str]  # (target name, args) -> a statement
    arguments: Callable[[Shape], list[tuple[Any, ...]]]
    # (values read through the target, args, values of the operand or None) -> the values
    # written, as an array of the target's shape
    apply: Callable[[np.ndarray, tuple[Any, ...], np.ndarray | None], np.ndarray]
    rebinds: bool = False  # may rebind the name instead of writing (augmented assignment)
    # a polynomial in the values it reads (every write but clamp_): the gradient oracle's
    # complex step differentiates it exactly, so programs with a gradient may draw it
    analytic: bool = True
    # writes values that do not depend on the target's (fill_, item assignment, copy_): into
    # a view whose elements repeat memory positions it is defined when those get one value;
    # a write that reads its target there is not (applied once per alias, or once?)
    overwrites: bool = False
    # the constant its last argument is, drawn per write (generate.constant): "value" (a
    # value of its own, 100, 200, ...), "factor" (2, 3, ...), "divisor" (2, 4, ...); "" none
    constant: str = ""
    creates: bool = False  # always binds the name to a new tensor (``t = t + c``): no write
    operand: bool = False  # args[0] is a name of the target's shape the operation reads
    # the out-of-place spelling of the same values (the metamorphic oracle's rewrite)
    out_of_place: str | None = None
    # made from a table's in-place entry and NumPy's ufunc of its name (conformance.discover.
    # derived), not written here: judged on its values within a domain, never on a gradient
    derived: bool = False
    # written through a function's out= argument (``sin(u, out=t)``): drawn only on frameworks
    # whose table's function takes out= (conformance.discover.derived.takes_out)
    out: bool = False


def _element_indices(shape: Shape) -> list[tuple[Any, ...]]:
    return [tuple(int(k) for k in idx) for idx in np.ndindex(*shape)] if shape else [()]


def _setitem(values: np.ndarray, a: tuple[Any, ...]) -> np.ndarray:
    out = values.copy()
    out[a[0]] = a[1]
    return out


def _read(u: np.ndarray | None) -> np.ndarray:
    """The operand's values, as a write that replaces its target's reads them."""
    assert u is not None, "a write with an operand was applied without one"
    return np.array(u)


def _operand(a: tuple[Any, ...]) -> str:
    return str(a[0])


WRITE_OPS: tuple[WriteOp, ...] = (
    WriteOp("setitem", "op:setitem", lambda t, a: f"{t}[{', '.join(map(str, a[0]))}] = {a[1]:.1f}",
            lambda sh: [(idx, 0.0) for idx in _element_indices(sh)] if sh else [], lambda v, a, u: _setitem(v, a),
            constant="value", overwrites=True),
    WriteOp("fill_", "method:fill_", lambda t, a: f"{t}.fill_({a[0]:.1f})", lambda sh: [(0.0,)],
            lambda v, a, u: np.full_like(v, a[0]), constant="value", overwrites=True),
    WriteOp("add_", "method:add_", lambda t, a: f"{t}.add_({a[0]:.1f})", lambda sh: [(0.0,)],
            lambda v, a, u: v + a[0], out_of_place="add", constant="value"),
    WriteOp("mul_", "method:mul_", lambda t, a: f"{t}.mul_({a[0]:.1f})", lambda sh: [(0.0,)],
            lambda v, a, u: v * a[0], out_of_place="mul", constant="factor"),
    WriteOp("iadd", "op:iadd", lambda t, a: f"{t} += {a[0]:.1f}", lambda sh: [(0.0,)],
            lambda v, a, u: v + a[0], rebinds=True, out_of_place="add", constant="value"),
    WriteOp("imul", "op:imul", lambda t, a: f"{t} *= {a[0]:.1f}", lambda sh: [(0.0,)],
            lambda v, a, u: v * a[0], rebinds=True, out_of_place="mul", constant="factor"),
    # a product of two names (the target itself included): the write reads another tensor,
    # which may overlap the target, and its gradient depends on both
    WriteOp("mul_t", "method:mul_", lambda t, a: f"{t}.mul_({_operand(a)})", lambda sh: [("",)],
            lambda v, a, u: v * u, operand=True, out_of_place="mul_new"),
    # out-of-place: the name is bound to a new tensor, what it was bound to is untouched
    WriteOp("add", "op:add", lambda t, a: f"{t} = {t} + {a[0]:.1f}", lambda sh: [(0.0,)],
            lambda v, a, u: v + a[0], creates=True, constant="value"),
    WriteOp("mul", "op:mul", lambda t, a: f"{t} = {t} * {a[0]:.1f}", lambda sh: [(0.0,)],
            lambda v, a, u: v * a[0], creates=True, constant="factor"),
    WriteOp("mul_new", "op:mul", lambda t, a: f"{t} = {t} * {_operand(a)}", lambda sh: [("",)],
            lambda v, a, u: v * u, creates=True, operand=True),
    # the other in-place methods and operators of the tables with a constant, none, or another
    # name as operand; divisions by powers of two, so that every value stays exact
    WriteOp("sub_", "method:sub_", lambda t, a: f"{t}.sub_({a[0]:.1f})", lambda sh: [(0.0,)],
            lambda v, a, u: v - a[0], out_of_place="sub", constant="value"),
    WriteOp("div_", "method:div_", lambda t, a: f"{t}.div_({a[0]:.1f})", lambda sh: [(0.0,)],
            lambda v, a, u: v / a[0], out_of_place="div", constant="divisor"),
    WriteOp("isub", "op:isub", lambda t, a: f"{t} -= {a[0]:.1f}", lambda sh: [(0.0,)],
            lambda v, a, u: v - a[0], rebinds=True, out_of_place="sub", constant="value"),
    WriteOp("itruediv", "op:itruediv", lambda t, a: f"{t} /= {a[0]:.1f}", lambda sh: [(0.0,)],
            lambda v, a, u: v / a[0], rebinds=True, out_of_place="div", constant="divisor"),
    WriteOp("neg_", "method:neg_", lambda t, a: f"{t}.neg_()", lambda sh: [()], lambda v, a, u: -v,
            out_of_place="neg"),
    WriteOp("square_", "method:square_", lambda t, a: f"{t}.square_()", lambda sh: [()], lambda v, a, u: v * v,
            out_of_place="square"),
    # zeros whatever the target held (a NaN a derived write left included: not v * 0.0)
    WriteOp("zero_", "method:zero_", lambda t, a: f"{t}.zero_()", lambda sh: [()], lambda v, a, u: np.zeros_like(v),
            overwrites=True),
    WriteOp("clamp_", "method:clamp_", lambda t, a: f"{t}.clamp_({a[0]:.1f}, {a[1]:.1f})",
            lambda sh: [(2.0, 5.0), (3.0, 150.0)], lambda v, a, u: np.clip(v, a[0], a[1]), analytic=False),
    WriteOp("add_t", "method:add_", lambda t, a: f"{t}.add_({_operand(a)})", lambda sh: [("",)],
            lambda v, a, u: v + u, operand=True, out_of_place="add_new"),
    WriteOp("sub_t", "method:sub_", lambda t, a: f"{t}.sub_({_operand(a)})", lambda sh: [("",)],
            lambda v, a, u: v - u, operand=True, out_of_place="sub_new"),
    WriteOp("copy_", "method:copy_", lambda t, a: f"{t}.copy_({_operand(a)})", lambda sh: [("",)],
            lambda v, a, u: _read(u), operand=True, overwrites=True),
    WriteOp("addcmul_", "method:addcmul_", lambda t, a: f"{t}.addcmul_({_operand(a)}, {_operand(a)})",
            lambda sh: [("",)], lambda v, a, u: v + _read(u) * _read(u), operand=True),
    WriteOp("iadd_t", "op:iadd", lambda t, a: f"{t} += {_operand(a)}", lambda sh: [("",)],
            lambda v, a, u: v + u, rebinds=True, operand=True, out_of_place="add_new"),
    WriteOp("isub_t", "op:isub", lambda t, a: f"{t} -= {_operand(a)}", lambda sh: [("",)],
            lambda v, a, u: v - u, rebinds=True, operand=True, out_of_place="sub_new"),
    WriteOp("imul_t", "op:imul", lambda t, a: f"{t} *= {_operand(a)}", lambda sh: [("",)],
            lambda v, a, u: v * u, rebinds=True, operand=True, out_of_place="mul_new"),
    # every element of the target from another name: item assignment of a whole slice
    WriteOp("setitem_t", "op:setitem", lambda t, a: f"{t}[:] = {_operand(a)}",
            lambda sh: [("",)] if sh else [], lambda v, a, u: _read(u), operand=True, overwrites=True),
    WriteOp("sub", "op:sub", lambda t, a: f"{t} = {t} - {a[0]:.1f}", lambda sh: [(0.0,)],
            lambda v, a, u: v - a[0], creates=True, constant="value"),
    WriteOp("div", "op:truediv", lambda t, a: f"{t} = {t} / {a[0]:.1f}", lambda sh: [(0.0,)],
            lambda v, a, u: v / a[0], creates=True, constant="divisor"),
    WriteOp("neg", "op:neg", lambda t, a: f"{t} = -{t}", lambda sh: [()], lambda v, a, u: -v, creates=True),
    WriteOp("square", "op:mul", lambda t, a: f"{t} = {t} * {t}", lambda sh: [()], lambda v, a, u: v * v,
            creates=True),
    WriteOp("add_new", "op:add", lambda t, a: f"{t} = {t} + {_operand(a)}", lambda sh: [("",)],
            lambda v, a, u: v + u, creates=True, operand=True),
    WriteOp("sub_new", "op:sub", lambda t, a: f"{t} = {t} - {_operand(a)}", lambda sh: [("",)],
            lambda v, a, u: v - u, creates=True, operand=True),
)
WRITE_OPS += (
    # item assignment through an index list (``t[[2, 0, 0]] = c``): the rows it names get the
    # write's constant, a row named twice gets it twice (one value: defined)
    WriteOp("setitem_rows", "op:setitem", lambda t, a: f"{t}[{_list_text(a[0])}] = {a[1]:.1f}",
            lambda sh: [(p, 0.0) for (p,) in _index_lists(sh)] if len(sh) >= 1 else [],
            lambda v, a, u: _setitem(v, (list(a[0]), a[1])), constant="value", overwrites=True),
)
WRITES_BY_NAME = {op.name: op for op in WRITE_OPS}


def register_writes(ops: Sequence[WriteOp]) -> None:
    """Add writes made elsewhere (conformance.discover.derived) to WRITES_BY_NAME, where the
    generator draws, steps render and the model applies them; a name already there is kept
    as it is (a derived write is made again the same from the same key)."""
    for op in ops:
        WRITES_BY_NAME.setdefault(op.name, op)


def all_writes() -> tuple[WriteOp, ...]:
    """WRITE_OPS and the writes registered after them, in that order."""
    return tuple(WRITES_BY_NAME.values())


@dataclass(frozen=True)
class Step:
    op: str  # a VIEW_OPS or WRITE_OPS name
    target: str  # the name the step reads (a view's source, a write's target)
    args: tuple[Any, ...] = ()
    result: str | None = None  # the name a view binds
    no_grad: bool = False  # a write in a ``no_grad`` block: autograd does not record it

    @property
    def is_view(self) -> bool:
        return self.op in VIEWS_BY_NAME

    @property
    def operand(self) -> str | None:
        """The other name a write reads (``t.mul_(u)``)."""
        return str(self.args[0]) if not self.is_view and WRITES_BY_NAME[self.op].operand else None

    def renamed(self, suffix: str) -> Step:
        """The same step on names with ``suffix``: the metamorphic twin's copy of it."""
        args = (self.args[0] + suffix,) + self.args[1:] if self.operand is not None else self.args
        return Step(self.op, self.target + suffix, args, None if self.result is None else self.result + suffix,
                    self.no_grad)

    def label(self) -> str:
        """The step as the findings page shows it: its text, in its block."""
        return ("with no_grad: " if self.no_grad else "") + self.text()

    def text(self) -> str:
        if self.is_view:
            assert self.result is not None
            return f"{self.result} = {VIEWS_BY_NAME[self.op].render(self.target, self.args)}"
        return WRITES_BY_NAME[self.op].render(self.target, self.args)


TWIN = "_m"  # the suffix of the metamorphic twin's names


@dataclass(frozen=True)
class Program:
    """An input of ``shape`` and ``steps``. With ``grad``, the input requires grad (``x0``;
    the steps work on ``x = x0 * 1.0``, a tensor autograd lets them write), and the program
    ends with a loss over every name (:meth:`loss_text`) and its backward. With ``twin``, the
    case also runs the twin's steps on a copy of the input (names with ``_m``): a rewrite of
    ``steps`` that must hold the same values and gradient (``relation`` says which;
    conformance.discover.oracles.Metamorphic)."""

    shape: Shape
    steps: tuple[Step, ...] = field(default_factory=tuple)
    grad: bool = False
    twin: tuple[Step, ...] = ()
    relation: str = ""

    def names(self) -> list[str]:
        return list(dict.fromkeys(["x"] + [s.result for s in self.steps if s.result is not None]))

    def twin_program(self) -> Program | None:
        return Program(self.shape, self.twin, self.grad) if self.twin else None

    def input_values(self) -> np.ndarray:
        """The input's elements, flat: 2, 3, 4, ... Distinct, so that a value in the wrong
        place shows where it came from; none is 0 or 1, so that no product with an element
        (``t *= u``, ``t.square_()``) leaves what it multiplies as it was and hides its step."""
        return np.arange(math.prod(self.shape), dtype=np.float64) + 2.0

    def given_data(self) -> Any:
        return self.input_values().reshape(self.shape).tolist()

    def loss_text(self, suffix: str = "") -> str:
        """``loss = (x * x).sum() + (v1 * v1).sum() * 2.0 + ...``: every name squared, with
        a weight of its own, so that the gradient tells elements and names apart."""
        terms = [f"({n}{suffix} * {n}{suffix}).sum()" + ("" if k == 0 else f" * {k + 1:.1f}")
                 for k, n in enumerate(self.names())]
        return f"loss{suffix} = " + " + ".join(terms)

    def _root(self, suffix: str = "") -> str:
        return ("x0" if self.grad else "x") + suffix

    def statements(self) -> list[str]:
        """The case's steps, as texts (their blocks left out: :meth:`step_lines`)."""
        return [text for text, _ in self._statements()]

    def step_lines(self) -> list[str]:
        """The case's ``steps:`` entries, a write under no_grad in a block of its own."""
        return [f"      - no_grad:\n          - {text}" if no_grad else f"      - {text}"
                for text, no_grad in self._statements()]

    def _statements(self) -> list[tuple[str, bool]]:
        """The case's steps: the program's (with ``grad``, then its loss and backward), then
        its twin's on names with ``_m`` (and the twin's loss and backward). The program
        finishes before the twin starts, so that an error the program meets anywhere comes
        before every twin step: a twin step is refused only where the whole program ran."""
        out = [("x = x0 * 1.0", False)] if self.grad else []
        out += [(s.text(), s.no_grad) for s in self.steps]
        twin = self.twin_program()
        if self.grad:
            # with a twin, the first backward keeps its graph: a compiled mode compiles both
            # parts into one function, whose one backward graph the second backward needs
            # again (torch.compile's AOTAutograd: "backward through the graph a second time")
            out += [(self.loss_text(), False),
                    ("loss.backward()" if twin is None else "loss.backward(retain_graph=True)", False)]
        if twin is not None:
            out += [(f"x{TWIN} = x0{TWIN} * 1.0", False)] if self.grad else []
            out += [(s.renamed(TWIN).text(), s.no_grad) for s in self.twin]
            if self.grad:
                out += [(twin.loss_text(TWIN), False), (f"loss{TWIN}.backward()", False)]
        return out

    def case_text(self, case_id: str, title: str, expect_lines: Sequence[str] = ("expect: {}",)) -> str:
        """One case in the corpus format (a document with ``cases:``)."""
        requires = ", requires_grad: true" if self.grad else ""
        given = [f"      {self._root(suffix)}: {{data: {self.given_data()}, dtype: float64{requires}}}"
                 for suffix in ([""] + ([TWIN] if self.twin else []))]
        lines = ["cases:", f"  - id: {case_id}", f"    title: {_quoted(title)}", "    tags: [discovered]",
                 "    given:", *given, "    steps:", *self.step_lines()]
        lines += ["    " + line for line in expect_lines]
        return "\n".join(lines) + "\n"

    def describe(self) -> str:
        text = "; ".join(s.label() for s in self.steps)
        if self.grad:
            text = f"x = x0 * 1.0 (x0 requires grad); {text}; {self.loss_text()}; loss.backward()"
        if self.twin:
            text += f" | twin ({self.relation}): " + "; ".join(s.label() for s in self.twin)
        return text


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def shape_after(program: Program) -> dict[str, Shape]:
    """The shape of every name after the program's view steps (writes keep shapes)."""
    shapes: dict[str, Shape] = {"x": program.shape}
    for step in program.steps:
        if step.is_view:
            index = np.zeros(shapes[step.target], dtype=np.int64)
            assert step.result is not None
            shapes[step.result] = VIEWS_BY_NAME[step.op].index(index, step.args).shape
    return shapes


def write_value(k: int) -> float:
    """The constant of the k-th write: distinct from every input element and every other
    write, so that a value in the wrong place shows which write put it there."""
    return 100.0 * (k + 1)


# ---- the metamorphic twins: rewrites that must not change values or gradients


class Lineage:
    """Which names may share memory as the steps run, counting every view operation as a
    view (whichever a framework makes a copy only aliases less): a view joins its source's
    lineage, a clone or a name bound to a new tensor starts one of its own."""

    def __init__(self) -> None:
        self._of: dict[str, int] = {"x": 0}
        self._fresh = 1

    def view(self, step: Step) -> None:
        assert step.result is not None
        if VIEWS_BY_NAME[step.op].copies:
            self.rebind(step.result)
        else:
            self._of[step.result] = self._of[step.target]

    def rebind(self, name: str) -> None:
        self._of[name], self._fresh = self._fresh, self._fresh + 1

    def aliased(self, name: str) -> bool:
        """Whether another name may share ``name``'s memory now."""
        return any(n != name and line == self._of[name] for n, line in self._of.items())

    def same(self, a: str, b: str) -> bool:
        """Whether names ``a`` and ``b`` may share memory now (a name and itself do)."""
        return self._of[a] == self._of[b]


def out_of_place_twin(program: Program) -> tuple[Step, ...]:
    """``program`` with every in-place write into a tensor nothing else aliases rewritten
    out of place (``t.add_(c)`` → ``t = t + c``), or () when there is none. A tensor is
    unaliased when no other name shares its :class:`Lineage`: writing it in place or binding
    the name to the new values then differ in nothing any later step or the loss can read."""
    lineage = Lineage()
    steps, changed = [], False
    for step in program.steps:
        if step.is_view:
            lineage.view(step)
            steps.append(step)
            continue
        write = WRITES_BY_NAME[step.op]
        # a write under no_grad stays in place: out of place, it would bind the name to a
        # constant, not keep the name's graph with a constant added
        unaliased = not lineage.aliased(step.target) and not step.no_grad
        if write.creates or (unaliased and write.out_of_place):
            lineage.rebind(step.target)
        if unaliased and write.out_of_place:
            steps.append(Step(write.out_of_place, step.target, step.args))  # never a no_grad write: see above
            changed = True
        else:
            steps.append(step)
    return tuple(steps) if changed else ()


def clone_twin(program: Program) -> tuple[Step, ...]:
    """``program`` with a ``clone()`` after every view made after its last write, or () when
    there is none. Nothing writes after those views, so whether they share memory with their
    source can change no value; and autograd differentiates a clone as the identity."""
    last_write = max((i for i, s in enumerate(program.steps) if not s.is_view), default=-1)
    steps: list[Step] = []
    for i, step in enumerate(program.steps):
        steps.append(step)
        if i > last_write and step.is_view and not VIEWS_BY_NAME[step.op].copies:
            assert step.result is not None
            steps.append(Step("clone", step.result, (), step.result))
    return tuple(steps) if len(steps) > len(program.steps) else ()


# two spellings of one in-place write (a method and its augmented assignment, copy_ and item
# assignment of the whole): a framework must run both or refuse both
SPELLINGS = {"add_": "iadd", "mul_": "imul", "sub_": "isub", "div_": "itruediv", "add_t": "iadd_t",
             "mul_t": "imul_t", "sub_t": "isub_t", "copy_": "setitem_t"}
SPELLINGS.update({b: a for a, b in list(SPELLINGS.items())})


def spelling_twin(program: Program) -> tuple[Step, ...]:
    """``program`` with every write that has another spelling (SPELLINGS) written in it, or
    () when none has. The values may differ where a framework's augmented assignment rebinds
    (Paddle's ``+=``), which the model explains; what must not differ is whether it runs
    (conformance.discover.oracles.Metamorphic compares only that for this twin)."""
    steps = tuple(Step(SPELLINGS[s.op], s.target, s.args, s.result, s.no_grad) if s.op in SPELLINGS else s
                  for s in program.steps)
    return steps if steps != program.steps else ()


TWINS = {"out-of-place": out_of_place_twin, "clone": clone_twin, "spelling": spelling_twin}
# the twins whose values the program's must equal (the spelling twin's may differ: see there)
SAME_VALUES = frozenset({"out-of-place", "clone"})
