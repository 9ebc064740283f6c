"""The layout of each operation's input, as the case's program makes it: a contiguous input, a
0-d one, or a view that a step (or a ``given`` input's ``from:``) took of another name:
transposed, sliced, strided or expanded. An operation page splits its kinds by it (does
``paddle.reshape`` copy a *transposed* input?: docs/site.md).

It is read from the steps, not measured: the layout the program writes on a framework that
has views, the same for every framework, so that one row of an operation page compares the
frameworks on one program. Where the program does not say (a reshape of a transposed view,
which a framework may copy or not), the layout is ``other view``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from conformance.ir import Const, NameTarget, Op, PyOp, Ref, SliceExpr, Step, index_kind, index_parts, productions

CONTIGUOUS = "contiguous"
ZERO_D = "0-d"
TRANSPOSED = "transposed"
SLICED = "sliced"
STRIDED = "strided"
EXPANDED = "expanded"
OTHER = "other view"
# the order an operation page lists them in
LAYOUTS = (CONTIGUOUS, ZERO_D, TRANSPOSED, SLICED, STRIDED, EXPANDED, OTHER)

# operation name (of fn:, method: or attr:) -> the layout of its result, whatever its input's
MAKES = {
    **dict.fromkeys(("T", "mT", "mH", "H", "t", "transpose", "permute", "swapaxes", "swapdims", "moveaxis",
                     "movedim", "adjoint", "matrix_transpose", "permute_dims"), TRANSPOSED),
    **dict.fromkeys(("narrow", "select", "split", "chunk", "tensor_split", "split_with_sizes", "unbind",
                     "hsplit", "vsplit", "dsplit", "real", "imag"), SLICED),
    **dict.fromkeys(("as_strided", "diagonal", "linalg_diagonal", "unfold", "view_as_real", "view_as_complex"),
                    STRIDED),
    **dict.fromkeys(("expand", "expand_as", "broadcast_to"), EXPANDED),
}
# operations whose result may be their input itself or a view of it with the same layout:
# the result keeps the input's layout
KEEPS = frozenset((
    "detach", "alias", "view_as", "positive", "conj", "resolve_conj", "resolve_neg", "to", "type", "type_as",
    "astype", "asarray", "as_tensor", "from_numpy", "numpy", "from_dlpack", "Parameter", "requires_grad_",
    "stop_gradient", "lax_stop_gradient", "identity", "asnumpy",
))
# operations that change only the shape: a contiguous input gives a contiguous result; any other
# may be copied or viewed depending on the framework, which the program does not say
RESHAPES = frozenset((
    "view", "reshape", "reshape_as", "flatten", "ravel", "unsqueeze", "squeeze", "unflatten", "expand_dims",
    "atleast_1d", "atleast_2d", "atleast_3d",
))


def _value_layout(value: Any, layouts: dict[str, str]) -> str:
    """The layout of what a step's value makes, its inputs' layouts known."""
    if isinstance(value, PyOp) and value.op == "getitem" and len(value.args) == 2:
        source = value.args[0]
        if index_kind(value.args[1]) != "basic":
            return CONTIGUOUS  # advanced indexing gathers into a new array
        parts = index_parts(value.args[1])
        slices = [p for p in parts if isinstance(p, SliceExpr)]
        if any(s.step is not None and not _is_const(s.step, 1) for s in slices):
            return STRIDED
        narrows = any(not isinstance(p, SliceExpr) and not _is_const(p, None, Ellipsis) for p in parts) or any(
            (s.start is not None and not _is_const(s.start, 0)) or s.stop is not None for s in slices)
        if narrows:
            return SLICED
        return _source_layout(source, layouts)
    if isinstance(value, Op) and value.key != "call":
        name = value.key.partition(":")[2]
        operand = value.args[0] if value.args else None
        if name in MAKES:
            return MAKES[name]
        if name in KEEPS:
            return _source_layout(operand, layouts)
        if name in RESHAPES:
            return CONTIGUOUS if _source_layout(operand, layouts) == CONTIGUOUS else OTHER
        if name == "contiguous":
            return CONTIGUOUS
    return CONTIGUOUS  # anything else computes a new array


def _is_const(e: Any, *values: Any) -> bool:
    return isinstance(e, Const) and any(e.value is v or (type(e.value) is int and e.value == v) for v in values)


def _source_layout(source: Any, layouts: dict[str, str]) -> str:
    return layouts.get(source.name, CONTIGUOUS) if isinstance(source, Ref) else CONTIGUOUS


def given_layouts(given: Iterable[Any]) -> dict[str, str]:
    """name -> layout of each ``given`` input (:class:`conformance.model.TensorSpec`): a 0-d
    input, one made ``from:`` an earlier input (the view it takes), or contiguous."""
    layouts: dict[str, str] = {}
    for spec in given:
        if spec.made_by is not None:
            layouts[spec.name] = _value_layout(spec.made_by.value, layouts)
        else:
            layouts[spec.name] = ZERO_D if tuple(spec.shape) == () else CONTIGUOUS
    return layouts


def production_layouts(given: Iterable[Any], steps: Sequence[Step]) -> dict[tuple[int, str], str]:
    """(step, input) -> the layout of that input at that step, for each production of the
    steps (:func:`conformance.ir.productions`). A name keeps the layout of its last binding:
    an in-place write (``x += 1``, ``x.add_(y)``) does not change it."""
    layouts = given_layouts(given)
    inputs_at: dict[int, set[str]] = {}  # step number -> the inputs of its productions
    for number, _, _, source in productions(steps):
        inputs_at.setdefault(number, set()).add(source)
    out: dict[tuple[int, str], str] = {}
    for flat in (s for step in steps for s in step.flat()):
        for source in inputs_at.get(flat.number, ()):
            out[(flat.number, source)] = layouts.get(source, CONTIGUOUS)
        if flat.kind == "assign" and all(isinstance(t, NameTarget) for t in flat.targets):
            made = _value_layout(flat.value, layouts)
            for target in flat.targets:
                assert isinstance(target, NameTarget)
                layouts[target.name] = made
    return out
