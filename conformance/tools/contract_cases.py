"""The cases that check torch's declared alias contracts (``conformance contracts --write``):
``cases/contracts/torch_views.yaml`` and ``cases/contracts/torch_inplace.yaml``.

One case per (operator, input layout), for each view and in-place operator of the data
(conformance.declared) that :data:`VIEW_CALLS` / :data:`INPLACE_CALLS` give arguments for
and whose key the torch adapter's table has. The operand ``x`` is a 2x3 tensor in one of the
:data:`LAYOUTS` (contiguous; a transposed view; a slice starting at an offset; an expanded
view; a 0-d tensor; an empty one), built by steps from a base ``b`` so that the layout is
what torch made, with the same values in every layout; the other operands are contiguous
and small (a 0-d ``y`` broadcasts to every layout).

The steps and inputs are made from the data and the tables alone (``--check`` compares them
with the committed files, importing no framework); the expectations are what the
frameworks do, observed by ``conformance observe``'s machinery (``--write``), torch's shared
and every other framework's difference in an override that says it was measured. Where
torch's observation breaks what its schema declares (an in-place operator that does not
return its receiver or leaves its version counter alone; an operator of the "Tensor Views"
page whose result does not share memory with its input), the shared expectation is the
declaration, and torch's observation goes into a torch override citing the schema: a finding.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.declared import Contract, Contracts

FILES = {"view": "cases/contracts/torch_views.yaml", "inplace": "cases/contracts/torch_inplace.yaml",
         "out": "cases/contracts/torch_out.yaml"}

# name -> (what it is, the inputs, the steps that make x from them); x is 2x3 but for zero_d
# and empty, and has the values of FLOATS in every layout that has six elements
FLOATS = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]


@dataclass(frozen=True)
class Layout:
    name: str
    what: str
    given: Mapping[str, str]  # name -> its given's flow YAML
    steps: tuple[str, ...]


def _layouts(rows: list[list[Any]], dtype: str) -> dict[str, Layout]:
    cols = [list(c) for c in zip(*rows)]
    first = rows[0]
    return {
        "contiguous": Layout("contiguous", "a contiguous tensor", {"x": _data(rows, dtype)}, ()),
        "transposed": Layout("transposed", "a transposed view (x = b.t())", {"b": _data(cols, dtype)},
                             ("x = b.t()",)),
        "offset": Layout("offset", "a slice starting at an offset (x = b[1:])",
                         {"b": _data([first[::-1]] + rows, dtype)}, ("x = b[1:]",)),
        "expanded": Layout("expanded", "an expanded view (x = b.expand(2, 3), stride 0)",
                           {"b": _data([first], dtype)}, ("x = b.expand(2, 3)",)),
        "zero_d": Layout("zero_d", "a 0-d tensor", {"x": _data(first[1], dtype)}, ()),
        "empty": Layout("empty", "an empty tensor (shape [0, 3])",
                        {"x": f"{{shape: [0, 3], fill: 0, dtype: {dtype}}}"}, ()),
    }


def _data(value: Any, dtype: str) -> str:
    return f"{{data: {json.dumps(value)}, dtype: {dtype}}}"


DOMAINS = {
    "float": _layouts(FLOATS, "float32"),
    # acosh_ and arccosh_: defined from 1 on
    "from_one": _layouts([[1.1, 1.2, 1.3], [1.4, 1.5, 1.6]], "float32"),
    "int": _layouts([[1, 2, 3], [4, 5, 6]], "int64"),
}
STRIDED = ("contiguous", "transposed", "offset")  # the 2-D layouts every op with a shape argument takes
# An elementwise in-place operator runs on a transposed view only: contiguous receivers are
# the hand-written corpus's (issue 18), and a case per layout per operator would take the run
# of cases/contracts past its budget (docs/contracts.md); the operators of REPRESENTATIVE run
# on every layout.
ELEMENTWISE = ("transposed",)
EVERY_LAYOUT = STRIDED + ("expanded", "zero_d", "empty")
REPRESENTATIVE = ("add_", "mul_", "copy_", "fill_", "zero_", "abs_", "clamp_", "masked_fill_", "relu_", "celu_")


@dataclass(frozen=True)
class Call:
    """How a generated case calls an operator: ``text`` with ``x`` the operand, ``given`` the
    other operands, the layouts it is run on, the value domain of x."""

    text: str
    layouts: tuple[str, ...] = STRIDED
    given: Mapping[str, str] | None = None
    domain: str = "float"
    out_shape: tuple[int, ...] = ()  # an out= call: the shape of its result
    outs: tuple[str, ...] = ("o",)  # an out= call: its out tensors, received by r, r1, ...
    values: bool = True  # whether its values are expected (not those of a random or uninitialised result)
    sampled: Layout | None = None  # an out= call of the sampled data: its one layout


Y0 = {"y": "{data: 0.25, dtype: float32}"}  # a 0-d operand: broadcasts to every layout
Y0_INT = {"y": "{data: 3, dtype: int64}"}
ROW = {"s": "{data: [[1.0, 1.0, 1.0]], dtype: float32}", "i": "{data: [0], dtype: int64}"}
SCATTER = {"s": "{data: [[1.0, 2.0, 3.0]], dtype: float32}", "j": "{data: [[1, 0, 1]], dtype: int64}"}

# the view operators: the result r (or its pieces) of x
VIEW_CALLS: dict[str, Call] = {
    "view": Call("r = x.view(6)"),
    "reshape": Call("r = x.reshape(6)"),
    "flatten": Call("r = x.flatten()"),
    "ravel": Call("r = x.ravel()"),
    "t": Call("r = x.t()"),
    "transpose": Call("r = x.transpose(0, 1)"),
    "permute": Call("r = x.permute(1, 0)"),
    "adjoint": Call("r = x.adjoint()"),
    "movedim": Call("r = x.movedim(0, 1)"),
    "moveaxis": Call("r = x.moveaxis(0, 1)"),
    "swapaxes": Call("r = x.swapaxes(0, 1)"),
    "swapdims": Call("r = x.swapdims(0, 1)"),
    "squeeze": Call("r = x.squeeze()"),
    "unsqueeze": Call("r = x.unsqueeze(0)"),
    "unflatten": Call("r = x.unflatten(1, (3, 1))"),
    "expand": Call("r = x.expand(2, 2, 3)"),
    "broadcast_to": Call("r = x.broadcast_to((2, 2, 3))"),
    "diagonal": Call("r = x.diagonal()"),
    "linalg_diagonal": Call("r = linalg_diagonal(x)"),
    "narrow": Call("r = x.narrow(1, 1, 2)"),
    "select": Call("r = x.select(0, 1)"),
    "unfold": Call("r = x.unfold(1, 2, 1)"),
    "as_strided": Call("r = x.as_strided((2, 2), (1, 1))"),
    "split": Call("r, q = x.split(2, 1)"),
    "split_with_sizes": Call("r, q = x.split_with_sizes([1, 2], 1)"),
    "chunk": Call("r, q = x.chunk(2, 1)"),
    "tensor_split": Call("r, q = x.tensor_split(2, 1)"),
    "unbind": Call("r, q = x.unbind(0)"),
    "hsplit": Call("r, q, p = x.hsplit(3)"),
    "vsplit": Call("r, q = x.vsplit(2)"),
    "contiguous": Call("r = x.contiguous()"),
    "detach": Call("r = x.detach()"),
    "to": Call("r = x.to('float32')"),
    "conj": Call("r = x.conj()"),
    "positive": Call("r = x.positive()"),
    "resolve_conj": Call("r = x.resolve_conj()"),
    "resolve_neg": Call("r = x.resolve_neg()"),
    "view_as": Call("r = x.view_as(s)", given={"s": "{shape: [6], fill: 0, dtype: float32}"}),
    "reshape_as": Call("r = x.reshape_as(s)", given={"s": "{shape: [6], fill: 0, dtype: float32}"}),
    "expand_as": Call("r = x.expand_as(s)", given={"s": "{shape: [2, 2, 3], fill: 0, dtype: float32}"}),
    # sparse-only: torch's kernels refuse a dense (strided) tensor; the cases record the refusal
    # (observing a sparse tensor's values and memory is not supported by the probes)
    "indices": Call("r = x.indices()", ("contiguous",)),
    "values": Call("r = x.values()", ("contiguous",)),
    "coalesce": Call("r = x.coalesce()", ("contiguous",)),
    "crow_indices": Call("r = x.crow_indices()", ("contiguous",)),
    "col_indices": Call("r = x.col_indices()", ("contiguous",)),
    "ccol_indices": Call("r = x.ccol_indices()", ("contiguous",)),
    "row_indices": Call("r = x.row_indices()", ("contiguous",)),
    "pin_memory": Call("r = x.pin_memory()", ("contiguous",)),
    "mT": Call("r = x.mT"),
    "mH": Call("r = x.mH"),
    "real": Call("r = x.real"),
}

# the in-place operators: r is what the call returns
_UNARY = (
    "abs_", "absolute_", "acos_", "arccos_", "asin_", "arcsin_", "asinh_", "arcsinh_", "atan_", "arctan_", "atanh_",
    "arctanh_", "ceil_", "cos_", "cosh_", "deg2rad_", "digamma_", "erf_", "erfc_", "erfinv_", "exp_", "exp2_",
    "expm1_", "fix_", "floor_", "frac_", "i0_", "lgamma_", "log_", "log10_", "log1p_", "log2_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sgn_", "sigmoid_",
    "sign_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "zero_", "conj_physical_",
    "logical_not_", "detach_", "requires_grad_",
)
_BINARY = (
    "add_", "sub_", "subtract_", "mul_", "multiply_", "div_", "divide_", "true_divide_", "floor_divide_",
    "remainder_", "fmod_", "pow_", "float_power_", "atan2_", "arctan2_", "hypot_", "copysign_", "xlogy_",
    "heaviside_", "nextafter_", "igamma_", "igammac_", "eq_", "ne_", "not_equal_", "lt_", "less_", "le_",
    "less_equal_", "gt_", "greater_", "ge_", "greater_equal_", "logical_and_", "logical_or_", "logical_xor_",
    "copy_", "ldexp_",
)
_INTEGER = ("gcd_", "lcm_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
            "bitwise_right_shift_")

INPLACE_CALLS: dict[str, Call] = {
    **{name: Call(f"r = x.{name}()", ELEMENTWISE) for name in _UNARY},
    **{name: Call(f"r = x.{name}(y)", ELEMENTWISE, Y0) for name in _BINARY},
    **{name: Call(f"r = x.{name}(y)", ELEMENTWISE, Y0_INT, "int") for name in _INTEGER},
    "bitwise_not_": Call("r = x.bitwise_not_()", ELEMENTWISE, domain="int"),
    "acosh_": Call("r = x.acosh_()", ELEMENTWISE, domain="from_one"),
    "arccosh_": Call("r = x.arccosh_()", ELEMENTWISE, domain="from_one"),
    "fill_": Call("r = x.fill_(2.0)", ELEMENTWISE),
    "clamp_": Call("r = x.clamp_(0.2, 0.4)", ELEMENTWISE),
    "clip_": Call("r = x.clip_(0.2, 0.4)", ELEMENTWISE),
    "clamp_min_": Call("r = x.clamp_min_(0.3)", ELEMENTWISE),
    "clamp_max_": Call("r = x.clamp_max_(0.3)", ELEMENTWISE),
    "lerp_": Call("r = x.lerp_(y, 0.5)", ELEMENTWISE, Y0),
    "addcmul_": Call("r = x.addcmul_(y, y)", ELEMENTWISE, Y0),
    "addcdiv_": Call("r = x.addcdiv_(y, y)", ELEMENTWISE, Y0),
    "masked_fill_": Call("r = x.masked_fill_(m, 9.0)", ELEMENTWISE, {"m": "{data: true}"}),
    "polygamma_": Call("r = x.polygamma_(1)", ELEMENTWISE),
    "mvlgamma_": Call("r = x.mvlgamma_(1)", ELEMENTWISE),
    "cumsum_": Call("r = x.cumsum_(1)"),
    "normal_": Call("r = x.normal_()"),
    "uniform_": Call("r = x.uniform_()"),
    "bernoulli_": Call("r = x.bernoulli_(0.5)"),
    "random_": Call("r = x.random_(0, 10)"),
    "cauchy_": Call("r = x.cauchy_()"),
    "exponential_": Call("r = x.exponential_()"),
    "geometric_": Call("r = x.geometric_(0.5)"),
    "log_normal_": Call("r = x.log_normal_()"),
    "resize_as_": Call("r = x.resize_as_(s)", given={"s": "{shape: [3, 2], fill: 0, dtype: float32}"}),
    "cumprod_": Call("r = x.cumprod_(1)"),
    "renorm_": Call("r = x.renorm_(2, 0, 0.5)"),
    "tril_": Call("r = x.tril_()"),
    "triu_": Call("r = x.triu_()"),
    "fill_diagonal_": Call("r = x.fill_diagonal_(9.0)"),
    "t_": Call("r = x.t_()"),
    "transpose_": Call("r = x.transpose_(0, 1)"),
    "swapaxes_": Call("r = x.swapaxes_(0, 1)"),
    "swapdims_": Call("r = x.swapdims_(0, 1)"),
    "squeeze_": Call("r = x.squeeze_()"),
    "unsqueeze_": Call("r = x.unsqueeze_(0)"),
    "as_strided_": Call("r = x.as_strided_((2, 2), (1, 1))"),
    "index_add_": Call("r = x.index_add_(0, i, s)", given=ROW),
    "index_copy_": Call("r = x.index_copy_(0, i, s)", given=ROW),
    "index_fill_": Call("r = x.index_fill_(0, i, 9.0)", given=ROW),
    "index_reduce_": Call("r = x.index_reduce_(0, i, s, 'prod')", given=ROW),
    "index_put_": Call("r = x.index_put_((i,), s)", given=ROW),
    "scatter_": Call("r = x.scatter_(0, j, s)", given=SCATTER),
    "scatter_add_": Call("r = x.scatter_add_(0, j, s)", given=SCATTER),
    "scatter_reduce_": Call("r = x.scatter_reduce_(0, j, s, 'sum')", given=SCATTER),
    "masked_scatter_": Call("r = x.masked_scatter_(m, s)",
                            given={"m": "{data: [[true, false, true], [false, true, false]]}",
                                   "s": "{data: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype: float32}"}),
    "put_": Call("r = x.put_(k, s)", given={"k": "{data: [0, 4], dtype: int64}",
                                            "s": "{data: [7.0, 8.0], dtype: float32}"}),
    "addmm_": Call("r = x.addmm_(a, c)", given={"a": "{data: [[1.0, 0.0], [0.0, 1.0]], dtype: float32}",
                                                "c": "{data: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype: float32}"}),
    "addbmm_": Call("r = x.addbmm_(a, c)", given={"a": "{data: [[[1.0, 0.0], [0.0, 1.0]]], dtype: float32}",
                                                  "c": "{data: [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], dtype: float32}"}),
    "addr_": Call("r = x.addr_(u, w)", given={"u": "{data: [1.0, 2.0], dtype: float32}",
                                             "w": "{data: [1.0, 0.0, 1.0], dtype: float32}"}),
    # the dropouts with p = 0 (nothing dropped: the values are deterministic), training on
    "dropout_": Call("r = dropout_(x, 0.0, True)", ELEMENTWISE),
    "feature_dropout_": Call("r = feature_dropout_(x, 0.0, True)", ELEMENTWISE),
    "alpha_dropout_": Call("r = alpha_dropout_(x, 0.0, True)", ELEMENTWISE),
    "feature_alpha_dropout_": Call("r = feature_alpha_dropout_(x, 0.0, True)", ELEMENTWISE),
    # rrelu_ scales the negative elements only, by a random slope: x is positive
    "rrelu_": Call("r = rrelu_(x)", ELEMENTWISE),
    "embedding_renorm_": Call("r = embedding_renorm_(x, i, 0.5, 2.0)", given={"i": "{data: [0], dtype: int64}"}),
    "celu_": Call("r = celu_(x)", ELEMENTWISE),
    "selu_": Call("r = selu_(x)", ELEMENTWISE),
    "elu_": Call("r = elu_(x)", ELEMENTWISE),
    "hardtanh_": Call("r = hardtanh_(x)", ELEMENTWISE),
    "leaky_relu_": Call("r = leaky_relu_(x)", ELEMENTWISE),
    "threshold_": Call("r = threshold_(x, 0.3, 0.0)", ELEMENTWISE),
}


# the out= variants: x (contiguous) and the out tensor o, of the result's shape, of another
# (non-empty: torch resizes it and warns), or empty (resized without a warning)
def _out_layouts(shape: tuple[int, ...]) -> dict[str, Layout]:
    x = _data(FLOATS, "float32")
    return {
        "right_size": Layout("right_size", f"an out tensor of the result's shape {list(shape)}",
                             {"x": x, "o": f"{{shape: {list(shape)}, fill: 0, dtype: float32}}"}, ()),
        "wrong_size": Layout("wrong_size", "an out tensor of another shape, [5]",
                             {"x": x, "o": "{shape: [5], fill: 0, dtype: float32}"}, ()),
        "empty": Layout("empty", "an empty out tensor, shape [0]",
                        {"x": x, "o": "{shape: [0], fill: 0, dtype: float32}"}, ()),
    }


OUT_LAYOUTS = ("right_size", "wrong_size", "empty")
OUT_CALLS: dict[str, Call] = {
    "abs": Call("r = abs(x, out=o)", OUT_LAYOUTS, out_shape=(2, 3)),
    "exp": Call("r = exp(x, out=o)", OUT_LAYOUTS, out_shape=(2, 3)),
    "sqrt": Call("r = sqrt(x, out=o)", OUT_LAYOUTS, out_shape=(2, 3)),
    "sigmoid": Call("r = sigmoid(x, out=o)", OUT_LAYOUTS, out_shape=(2, 3)),
    "add": Call("r = add(x, y, out=o)", OUT_LAYOUTS, Y0, out_shape=(2, 3)),
    "mul": Call("r = mul(x, y, out=o)", OUT_LAYOUTS, Y0, out_shape=(2, 3)),
    "clamp": Call("r = clamp(x, 0.2, 0.4, out=o)", OUT_LAYOUTS, out_shape=(2, 3)),
    "alias_copy": Call("r = alias_copy(x, out=o)", OUT_LAYOUTS, out_shape=(2, 3)),
    "detach_copy": Call("r = detach_copy(x, out=o)", OUT_LAYOUTS, out_shape=(2, 3)),
    "t_copy": Call("r = t_copy(x, out=o)", OUT_LAYOUTS, out_shape=(3, 2)),
    "transpose_copy": Call("r = transpose_copy(x, 0, 1, out=o)", OUT_LAYOUTS, out_shape=(3, 2)),
    "permute_copy": Call("r = permute_copy(x, (1, 0), out=o)", OUT_LAYOUTS, out_shape=(3, 2)),
    "diagonal_copy": Call("r = diagonal_copy(x, out=o)", OUT_LAYOUTS, out_shape=(2,)),
    "expand_copy": Call("r = expand_copy(x, (2, 2, 3), out=o)", OUT_LAYOUTS, out_shape=(2, 2, 3)),
    "select_copy": Call("r = select_copy(x, 0, 1, out=o)", OUT_LAYOUTS, out_shape=(3,)),
    "squeeze_copy": Call("r = squeeze_copy(x, out=o)", OUT_LAYOUTS, out_shape=(2, 3)),
    "unsqueeze_copy": Call("r = unsqueeze_copy(x, 0, out=o)", OUT_LAYOUTS, out_shape=(1, 2, 3)),
    "unfold_copy": Call("r = unfold_copy(x, 1, 2, 1, out=o)", OUT_LAYOUTS, out_shape=(2, 2, 2)),
    "view_copy": Call("r = view_copy(x, (6,), out=o)", OUT_LAYOUTS, out_shape=(6,)),
    "as_strided_copy": Call("r = as_strided_copy(x, (2, 2), (1, 1), out=o)", OUT_LAYOUTS, out_shape=(2, 2)),
}


# the out= operators OUT_CALLS lacks: their calls sampled from torch (conformance/tools/out_calls.py,
# conformance/data/contracts/torch_out_calls.yaml), each on out tensors of another shape than
# its results' (5 elements, 4 where a result has 5): torch resizes them, warns, and returns them
RESULTS = ("r", "r1", "r2", "r3", "r4")


def _sampled_calls(sampled_calls: Any) -> dict[str, Call]:
    """The Calls of the sampled data (an out_calls.OutCalls)."""
    from conformance.tools.out_calls import other_size

    calls = {}
    for name, sampled in sampled_calls.calls.items():
        sizes = {o.name: other_size(o.shape) for o in sampled.outs}
        outs = {o.name: f"{{shape: [{sizes[o.name]}], fill: 0, dtype: {o.dtype}}}" for o in sampled.outs}
        shown = ", ".join(f"[{size}]" for size in sizes.values())
        layout = Layout("wrong_size", f"out tensors of other shapes than its results', {shown} (arguments from "
                                      f"{sampled.source.split(':')[0]})", {**sampled.given, **outs}, ())
        calls[name] = Call(sampled.call, ("wrong_size",), out_shape=sampled.outs[0].shape,
                           outs=tuple(o.name for o in sampled.outs), values=sampled.values, sampled=layout)
    return calls


@dataclass(frozen=True)
class Generated:
    """One case: its text (without expectations) and what it checks."""

    case_id: str
    contract: Contract
    layout: str
    text: str
    outs: tuple[str, ...] = ("o",)  # an out= case: its out tensors, received by r, r1, ...
    values: bool = True  # whether its values are expected


def _indent(lines: Sequence[str], by: str) -> list[str]:
    return [by + line for line in lines]


def skeleton(contract: Contract, call: Call, layout: Layout) -> Generated:
    """A case's id, title, tags, references, inputs and steps (no expectations)."""
    case_id = f"contracts.torch.{contract.kind}.{contract.name.lower()}.{layout.name}"  # mT: ids are lowercase
    schemas = " | ".join(o.schema for o in contract.overloads)
    title = f"{call.text.split(' = ', 1)[1]} on {layout.what}: torch declares {contract.overloads[0].schema}"
    given = {**layout.given, **(call.given or {})}
    lines = [f"  - id: {case_id}",
             f"    title: {json.dumps(title)}",
             f"    tags: [contracts, {contract.kind}, {contract.name}, {layout.name}]",
             "    references:",
             f"      - {json.dumps('torch ' + contract.kind + ' contract: ' + schemas)}",
             "    given:"]
    lines += [f"      {name}: {value}" for name, value in given.items()]
    lines.append("    steps:")
    lines += [f"      - {step}" for step in (*layout.steps, call.text)]
    return Generated(case_id, contract, layout.name, "\n".join(lines) + "\n", call.outs,
                     call.values and contract.name not in RANDOM)


def calls_for(kind: str, sampled: Any = None) -> Mapping[str, Call]:
    """The argument tables of a kind; out='s hand-written calls (every layout) over the
    sampled ones (``sampled``: the out_calls.OutCalls, read when not given)."""
    if kind == "out":
        from conformance.tools.out_calls import read

        return {**_sampled_calls(read() if sampled is None else sampled), **OUT_CALLS}
    return {"view": VIEW_CALLS, "inplace": INPLACE_CALLS}[kind]


def generate(contracts: Contracts, kind: str, table: Any) -> tuple[list[Generated], list[str]]:
    """The cases of one kind, and the operators left out with why (no argument table; the
    torch table lacks the key)."""
    from conformance.tools.out_calls import read

    made, left = [], []
    sampled = read() if kind == "out" else None  # read once: the calls and why the others have none
    calls = calls_for(kind, sampled)
    for contract in contracts.of_kind(kind):
        call = calls.get(contract.name)
        if call is None and sampled is not None:
            left.append(f"{contract.name}: no sampled call ({sampled.left.get(contract.name, 'not sampled')})")
            continue
        if call is None:
            left.append(f"{contract.name}: no argument table (conformance/tools/contract_cases.py)")
            continue
        lacking = [k for k in contract.keys if table.lacks(k) is not None]
        if contract.keys and len(lacking) == len(contract.keys):
            left.append(f"{contract.name}: the torch table lacks {', '.join(lacking)}")
            continue
        layouts = EVERY_LAYOUT if contract.name in REPRESENTATIVE else call.layouts
        if call.sampled is not None:
            made.append(skeleton(contract, call, call.sampled))
            continue
        made_of = _out_layouts(call.out_shape) if kind == "out" else DOMAINS[call.domain]
        for name in layouts:
            made.append(skeleton(contract, call, made_of[name]))
    return made, left


HEADER = """\
# yaml-language-server: $schema=../../conformance/data/case.schema.json
# Generated by `conformance contracts --write` from torch's declared alias contracts
# (conformance/data/contracts/torch.yaml) and the argument tables of
# conformance/tools/contract_cases.py; the expectations are what the frameworks did, observed.
# Do not edit by hand: `conformance contracts --check` compares the inputs and steps with the data.
cases:
"""


def file_path(root: Path, kind: str) -> Path:
    return root / FILES[kind]


# -- observing and writing (--write) ------------------------------------------------------

# the Tensor Views page's operators that "can return either a view or new tensor" (its notes,
# conformance/data/coverage/torch-views.yaml): declared Tensor(a), and may copy
MAY_COPY = frozenset({"reshape", "reshape_as", "flatten", "contiguous"})


def must_alias() -> frozenset[str]:
    """The operators the Tensor Views page lists as views, but those it says may copy."""
    from conformance.tools import coverage

    views = coverage.read_list(coverage.LISTS_FOLDER / "torch-views.yaml")
    return frozenset(e.name for e in views.entries) - MAY_COPY


@dataclass(frozen=True)
class Finding:
    case_id: str
    schema: str
    declared: str  # what the schema declares, in words
    observed: str


def declared_checks(gen: Generated, torch_observed: Mapping[Any, Any], torch_error: Mapping[str, Any] | None,
                    aliases: frozenset[str]) -> dict[Any, Any]:
    """What the schema declares of the case's result, as expectations keyed like observe's
    (ResultKey -> value): an out= variant returns its out tensor; an in-place operator returns
    its receiver and bumps its version counter once; an operator the Tensor Views page lists
    shares memory with its input (not for an empty x, which has no element to share).
    Nothing where torch refused the call (the operator's step raised: no result)."""
    from conformance.model import ResultKey

    if torch_error is not None:
        return {}
    if gen.contract.kind == "out":
        return {ResultKey("same_object", (r, o)): True for r, o in zip(RESULTS, gen.outs)}
    if gen.contract.kind == "inplace":
        return {ResultKey("same_object", ("r", "x")): True, ResultKey("version_change", ("x",)): 1}
    if gen.contract.name in aliases and gen.layout != "empty":
        return {ResultKey("shares_memory", ("r", "x")): True}
    return {}


def against_torch(case: Any, observations: Sequence[Any], declared: Mapping[Any, Any],
                  lineage: Any = None, unexpected: frozenset[str] = frozenset()
                  ) -> tuple[dict[Any, Any], dict[str, dict[Any, Any]]]:
    """(shared, framework -> override): the shared expectation is torch's observation, with
    ``declared`` (what the schema declares: always written, and winning over what torch did)
    over it; each framework whose observation differs from what applies to it (the shared
    expectation under the overrides of its ``lineage``, a compiled mode's framework's), torch
    included, gets an override of its differences (an entry it did not observe, because a step
    raised first, dropped: null). ``observations`` are in registration order: a compiled mode
    after what it compiles. An empty tensor's values (``[]``, which lose its shape) are
    expected as its shape. The kinds in ``unexpected`` are neither expected nor overridden."""
    from conformance.kinds.errors import message_pattern
    from conformance.model import ResultKey
    from conformance.tools.observe import ERROR_KEY, WARNING_KEY, chosen

    ancestors = lineage or (lambda name: ())
    ran = [o for o in observations if o.status == "ran"]
    torch = next(o for o in ran if o.framework == "torch")
    keys = []
    for k in dict.fromkeys([*chosen(case, ran), *declared]):
        if k.kind in unexpected:
            continue
        if k.kind == "values" and any(_same(o.observed.get(k)) == "[]" for o in ran):
            k = ResultKey("shape", k.names)
        keys.append(k)
    reference = {**torch.observed, **declared}
    shared: dict[ResultKey, Any] = {k: reference[k] for k in keys if k in reference}
    if torch.error is not None:
        shared[ERROR_KEY] = {"at": torch.error["at"], "kind": torch.error["kind"], "torch": torch.error}
    if torch.warning is not None:
        shared[WARNING_KEY] = torch.warning
    overrides: dict[str, dict[ResultKey, Any]] = {}

    def applying(framework: str) -> dict[ResultKey, Any]:
        expected = dict(shared)
        for earlier in ancestors(framework):
            for k, v in overrides.get(earlier, {}).items():
                if v is None:
                    expected.pop(k, None)
                else:
                    expected[k] = v
        return expected

    def warned(w: Any) -> Any:
        return w and [w["at"], message_pattern(w["message"])]

    def raised(e: Any) -> Any:
        return e and [e["at"], e["kind"]]

    for o in ran:
        expected = applying(o.framework)
        mine: dict[ResultKey, Any] = {}
        for k in keys:
            if k.kind in o.unobservable:
                continue
            if k in o.observed and (k not in expected or _same(o.observed[k]) != _same(expected[k])):
                mine[k] = o.observed[k]
            elif k in expected and k not in o.observed:
                mine[k] = None
        if o is not torch:
            error = expected.get(ERROR_KEY)
            if raised(o.error) == raised(error):
                # the shared error gets its exception (an error of its lineage's override already has one)
                if o.error is not None and error is shared.get(ERROR_KEY):
                    shared[ERROR_KEY][o.framework] = o.error
            else:
                mine[ERROR_KEY] = o.error and {"at": o.error["at"], "kind": o.error["kind"], o.framework: o.error}
            if (o.error is not None and expected.get(WARNING_KEY) is not None
                    and expected[WARNING_KEY]["at"] == o.error["at"]):
                # the step that warns for torch raises here: whether it warns before raising
                # is no part of the contract, and not stable (measured: torch_compile's
                # BackendCompilerFailed after the out= resize warning in one process, without it
                # in another)
                mine[WARNING_KEY] = None
            elif warned(o.warning) != warned(expected.get(WARNING_KEY)):
                mine[WARNING_KEY] = o.warning
        if mine:
            overrides[o.framework] = mine
    return shared, overrides


def _same(value: Any) -> str:
    from conformance.kinds.base import shown

    return json.dumps(shown(value), sort_keys=True)


# The operators that write numbers drawn from a random generator: their values are no part of
# the alias contract, and not reproducible across runners (each item is seeded, but a compiled
# mode's runner draws for the function's intermediates too, so a view receiver's values differ
# from eager's): their cases expect no values (shares_memory, same_object and the version
# counter are the contract).
RANDOM = frozenset({"bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "normal_",
                    "random_", "uniform_"})


# (framework, operator) -> (the kind whose observation changes from run to run, why): its
# entries are dropped from that framework's override, saying so. Measured: two runs of
# cases/contracts (conformance run -n 2 --fresh) on the pinned versions disagreed with the
# observation --write made.
UNSTABLE: Mapping[tuple[str, str], tuple[str, str]] = {
    ("paddle", "igamma_"): ("values", "Paddle 3.3.1's igamma_ through a transposed view wrote other values in "
                                      "another run (some elements 1.0, then 0.0): not deterministic there"),
    ("paddle", "igammac_"): ("values", "Paddle 3.3.1's igammac_ through a transposed view wrote other values in "
                                       "another run: not deterministic there"),
    ("paddle_static", "requires_grad_"): ("warning", "paddle.jit.to_static's UserWarning \"Tensor do not have "
                                                     "'place' interface for pir\" is emitted in some runs only "
                                                     "(Paddle 3.3.1)"),
}


def _unstable(gen: Generated, shared: Mapping[Any, Any], overrides: dict[str, dict[Any, Any]],
              reasons: dict[str, str], ran: set[str]) -> None:
    """Drop, in the override of each framework of :data:`UNSTABLE` for this operator, what
    changes from run to run there."""
    from conformance.tools.observe import WARNING_KEY

    for (fw, name), (kind, why) in UNSTABLE.items():
        if name != gen.contract.name or fw not in ran:
            continue
        mine = overrides.setdefault(fw, {})
        if kind == "warning":
            mine[WARNING_KEY] = None
        else:
            for k in [*shared, *mine]:
                if k.kind == kind:
                    mine[k] = None
        reasons[fw] = reasons[fw].rstrip(".") + f"; its {kind} are not expected: {why}."


def measured_reason(framework: str, version: str | None) -> str:
    return (f"Measured on {framework} {version} by conformance contracts --write: it differs there from "
            "what torch does (the shared expectation), entry by entry as below.")


# the upstream issues found about a finding (search of pytorch/pytorch's issues), cited in its reason
UPSTREAM: Mapping[str, str] = {
    name: "https://github.com/pytorch/pytorch/issues/126755 (related: the dropouts' in-place forms return "
          "their input unchanged when there is nothing to drop)"
    for name in ("dropout_", "feature_dropout_", "alpha_dropout_", "feature_alpha_dropout_")
}


# what a framework's refusal found, with the upstream issues found about it (a search of the
# project's issues), appended to the reason of the override that records it: (framework, a
# regex searched in the error's type and message) -> words
UPSTREAM_OF_ERRORS: Mapping[tuple[str, str], str] = {
    (compiled, r"BackendCompilerFailed: expand: "): (
        "Finding: eager torch resizes an out= tensor of another shape (with its warning) and "
        "torch.compile fails to compile the same call. Related upstream: "
        "https://github.com/pytorch/pytorch/issues/110699 (torch.compile fails on index_select with out=), "
        "https://github.com/pytorch/pytorch/pull/182349 (empty(..., out=) not resized under torch.compile)")
    for compiled in ("torch_compile", "torch_inductor")
}


def upstream_of_error(framework: str, error: Mapping[str, Any] | None) -> str:
    """The words of :data:`UPSTREAM_OF_ERRORS` for a framework's recorded error, or ''."""
    import re

    if not error:
        return ""
    text = f"{error.get('type', '')}: {error.get('message', '')}"
    return next((words for (fw, pattern), words in UPSTREAM_OF_ERRORS.items()
                 if fw == framework and re.search(pattern, text)), "")


def finding_reason(gen: Generated, version: str | None) -> str:
    schemas = " | ".join(o.schema for o in gen.contract.overloads)
    upstream = UPSTREAM.get(gen.contract.name)
    return (f"Finding: torch {version} breaks the contract its schema declares ({schemas}): measured by "
            "conformance contracts --write; the shared expectation is the declaration, this override what "
            "torch does." + (f" Upstream: {upstream}." if upstream else " No upstream issue found."))


def case_text(gen: Generated, case: Any, observations: Sequence[Any], aliases: frozenset[str],
              findings: list[Finding]) -> str:
    """The case with its expectations: the skeleton, ``expect:`` and ``frameworks:``."""
    from conformance.tools.observe import expect_lines

    torch = next(o for o in observations if o.framework == "torch")
    declared = declared_checks(gen, torch.observed, torch.error, aliases)
    from conformance import registry

    unexpected = frozenset() if gen.values else frozenset({"values"})
    shared, overrides = against_torch(case, observations, declared, registry.lineage, unexpected)
    reasons = {o.framework: measured_reason(o.framework, o.version) for o in observations}
    if "torch" in overrides:  # torch does not do what its schema declares
        reasons["torch"] = finding_reason(gen, torch.version)
        for k, v in overrides["torch"].items():
            findings.append(Finding(gen.case_id, gen.contract.overloads[0].schema, f"{k}: {declared.get(k)}", f"{v}"))
    for o in observations:
        found = upstream_of_error(o.framework, o.error) if o.framework in overrides else ""
        if found:
            reasons[o.framework] = reasons[o.framework].rstrip(".") + ". " + found + "."
    _unstable(gen, shared, overrides, reasons, {o.framework for o in observations if o.status == "ran"})
    lines = expect_lines(case, shared, {})
    for fw in sorted(overrides):
        body = expect_lines(case, overrides[fw], {})
        lines += ([] if "frameworks:" in lines else ["frameworks:"]) + [
            f"  {fw}:", f"    reason: {json.dumps(reasons[fw])}", "    expect:"] + ["    " + line
                                                                                     for line in body[1:]]
    return gen.text + "".join(f"    {line}\n" for line in lines)


def skeleton_file(generated: Sequence[Generated]) -> str:
    """The file without expectations: what --check compares (and what --write observes)."""
    return HEADER + "\n".join(g.text + "    expect: {}\n" for g in generated)


def write(root: Path, contracts: Contracts, kind: str, say: Any) -> tuple[int, list[Finding]]:
    """Observe each generated case of ``kind`` on every framework and write the file.
    Returns the number of cases written and torch's findings."""
    from conformance import registry
    from conformance.load.reader import load_text
    from conformance.run.sandbox import Sandbox
    from conformance.tools.observe import observe

    generated, left = generate(contracts, kind, registry.get_adapter("torch"))
    if left:
        say(f"{kind}: {len(left)} operators left out: " + "; ".join(left[:20])
            + (f"; and {len(left) - 20} more" if len(left) > 20 else ""))
    vocabulary = registry.vocabulary()
    path = file_path(root, kind)
    loaded = load_text(skeleton_file(generated), str(path), vocabulary, draft=True)
    if loaded.errors:
        raise ValueError("the generated cases do not load:\n" + "\n".join(e.render() for _, e in loaded.errors))
    by_id = {case.id: case for case in loaded.cases}
    aliases = must_alias()
    findings: list[Finding] = []
    texts = []
    sandbox = Sandbox(60.0)
    try:
        for gen in generated:
            case = by_id[gen.case_id]
            # every framework, compiled modes too, in registration order (a compiled mode after
            # what it compiles, whose override applies to it first)
            observations = [observe(case, registry.get_adapter(fw), sandbox) for fw in registry.framework_names()]
            torch = next(o for o in observations if o.framework == "torch")
            if torch.status != "ran":
                say(f"{gen.case_id}: torch {torch.status}: {torch.reason}; left out")
                continue
            for o in observations:
                if o.status == "error":
                    say(f"{gen.case_id}: {o.framework} could not be observed ({o.reason}); its items will say so")
            texts.append(case_text(gen, case, observations, aliases, findings))
    finally:
        sandbox.close()
    text = HEADER + "\n".join(texts)
    check = load_text(text, str(path), vocabulary)
    if check.errors:
        raise ValueError("the written cases do not load:\n" + "\n".join(e.render() for _, e in check.errors))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return len(texts), findings


def check(root: Path, contracts: Contracts, kind: str) -> list[str]:
    """How the committed file differs from what the data and the tables make (its cases' ids,
    titles, tags, references, inputs and steps; not the observed expectations), in words;
    empty when it does not. Imports no framework."""
    from conformance import registry
    from conformance.load.reader import load_text

    path = file_path(root, kind)
    generated, _ = generate(contracts, kind, registry.get_adapter("torch"))
    made = load_text(skeleton_file(generated), str(path), registry.vocabulary(), draft=True)
    try:
        committed = load_text(path.read_text(encoding="utf-8"), str(path), registry.vocabulary(), draft=True)
    except OSError:
        return [f"{FILES[kind]} is missing"]
    if committed.errors:
        return [f"{FILES[kind]} does not load: {committed.errors[0][1].render()}"]

    def shape(case: Any) -> tuple[Any, ...]:
        given = tuple(dataclasses.replace(spec, location=None) for spec in case.given)  # not where it is written
        return (case.title, tuple(case.tags), tuple(case.references), given,
                tuple(step.text for step in case.steps))

    ours = {c.id: shape(c) for c in made.cases}
    theirs = {c.id: shape(c) for c in committed.cases}
    problems = [f"{FILES[kind]}: {i} is not in the file" for i in ours if i not in theirs]
    problems += [f"{FILES[kind]}: {i} is not what the data makes (delete it)" for i in theirs if i not in ours]
    problems += [f"{FILES[kind]}: {i}: its inputs or steps are not what the data makes" for i in ours
                 if i in theirs and ours[i] != theirs[i]]
    return problems
