"""The spelling audit (issue 16; docs/adapters.md, "Spellings"): every operation-table entry of
the built-in adapters that maps a case's spelling (PyTorch's names and argument conventions)
onto a framework call of another name or another argument convention is listed in the audit
table of docs/adapters.md, and the table's claims are checked here on the real frameworks:

- an entry that calls the framework's own operation of the case's name gives what the
  framework gives for the case's spelling as a user writes it, where the framework accepts
  that spelling: the same identity and memory relation to the receiver, dtype, shape and
  values, or the same refusal (``AS_WRITTEN``). Paddle's ``x.to('float32')`` is a new copy
  although ``x.astype('float32')`` is ``x`` (the table called astype);
- where the table translates an argument convention because the framework refuses the
  case's spelling, the framework does refuse it (``REFUSED``), so that the day it accepts it
  this test says to call it as written;
- an argument that asks for a behaviour the framework's operation does not have
  (``relu(x, inplace=True)`` on Paddle) reaches the framework, whose refusal is the step's
  error, not *not applicable* (``AS_WRITTEN`` too).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, NamedTuple

import pytest
from ready_adapter import ready_adapter

from conformance import registry
from conformance.adapters.base import NUMPY_CONVERSIONS, PYTHON_OPERATORS, NotApplicable
from conformance.declared import packaged

ROOT = Path(__file__).resolve().parent.parent
# the frameworks the audit table covers. JAX's, TensorFlow's and MindSpore's adapters (issue
# 17) say what each entry calls in the entry itself; their rows of the audit are not written
# yet (docs/adapters.md says so)
FRAMEWORKS = ["numpy", "torch", "paddle", "array_api_strict"]


adapter = ready_adapter


# ---- the audit table in docs/adapters.md covers every mapping entry


AUDIT_HEADING = "### The audit"
ROW = re.compile(rf"^\| ({'|'.join(FRAMEWORKS)}) \| `([a-z_]+:[A-Za-z_0-9]+|call)` \|")


def audited() -> set[tuple[str, str]]:
    text = (ROOT / "docs" / "adapters.md").read_text(encoding="utf-8")
    section = text[text.index(AUDIT_HEADING):]
    section = section[: section.find("\n## ", 1) if "\n## " in section[1:] else len(section)]
    return {(m[1], m[2]) for line in section.splitlines() if (m := ROW.match(line))}


def kind_of_entry(key: str, op: Any) -> str:
    """What an entry is, from how it was made: ``absent``, a ``passthrough`` or ``attribute``
    of the key's own name (the framework's method or attribute, as written), or ``mapped``:
    a function of the adapter's own, which the audit must list."""
    name = key.partition(":")[2]
    if getattr(op, "not_applicable", None):
        return "absent"
    qualname = getattr(op, "__qualname__", "")
    if qualname.startswith(("passthrough.", "attribute.")) and getattr(op, "__name__", None) == name:
        return "as written"
    return "mapped"


# entries written as a function of the adapter's own that call the framework's operation of
# the same name with the case's arguments unchanged (checked by reading them: the audit's
# "as written" rows need no line of their own)
PLAIN = {
    "torch": {"block:enable_grad", "block:no_grad", "block:inference_mode", "fn:Dropout", "fn:ELU", "fn:Hardtanh",
              "fn:LeakyReLU",
              "fn:ReLU", "fn:abs", "fn:abs_", "fn:add", "fn:cat", "fn:clamp", "fn:dropout", "fn:elu", "fn:elu_",
              "fn:exp", "fn:from_dlpack", "fn:from_numpy", "fn:hardtanh", "fn:hardtanh_", "fn:leaky_relu",
              "fn:leaky_relu_", "fn:mul", "fn:relu", "fn:relu_", "fn:sigmoid", "fn:sqrt", "fn:stack",
              "fn:take_along_dim", "fn:view_as_complex", "fn:view_as_real", "fn:where", "setattr:data",
              "setattr:requires_grad",
              # torch.<view op>_copy functions, arguments as written (issue 18)
              "fn:alias_copy", "fn:as_strided_copy", "fn:detach_copy", "fn:diagonal_copy", "fn:expand_copy",
              "fn:indices_copy", "fn:permute_copy", "fn:select_copy", "fn:split_copy", "fn:split_with_sizes_copy",
              "fn:squeeze_copy", "fn:t_copy", "fn:transpose_copy", "fn:unbind_copy", "fn:unfold_copy",
              "fn:unsqueeze_copy", "fn:values_copy", "fn:view_as_real_copy", "fn:view_copy",
              # x.real = v, x.imag = v as written (test_view_ops.py's test_set_real_imag)
              "setattr:real", "setattr:imag",
              # issue 38: torch's own functions, arguments as written
              "fn:tril", "fn:triu", "fn:slice_scatter",
              # issue 37: torch.autograd.grad, arguments and keywords as written
              "fn:autograd_grad",
              # issue 35: torch.slice_inverse, a view its schema declares, arguments as written
              "fn:slice_inverse",
              # issue 38: torch.nn.Parameter, arguments as written
              "fn:Parameter"},
    "paddle": {"block:enable_grad", "block:no_grad", "fn:abs", "fn:abs_", "fn:add", "fn:exp", "fn:from_dlpack",
               "fn:from_numpy", "fn:relu_", "fn:sigmoid", "fn:sqrt", "fn:view_as_complex", "fn:view_as_real",
               "fn:where", "fn:dropout", "fn:Dropout", "method:narrow", "method:scale", "setattr:data",
               "setattr:stop_gradient", "fn:mul", "method:astype", "method:unsqueeze", "fn:clamp", "fn:elu_",
               "fn:leaky_relu_", "setattr:real", "setattr:imag",
               # issue 38: Paddle's own functions of torch's name, arguments as written
               "fn:tril", "fn:triu", "fn:arange",
               # issue 37: paddle.autograd.grad (paddle.grad), arguments and keywords as written
               "fn:autograd_grad",
               # issue 35: the in-place forms of Paddle's operator YAML only these spellings reach
               "fn:erf_", "fn:expm1_", "fn:where_", "fn:softmax_", "fn:thresholded_relu_",
               # issue 35: views only Paddle's stride kernels declare, reached only by these spellings
               "fn:slice", "fn:strided_slice"},
    "numpy": {"fn:abs", "fn:add", "fn:exp", "fn:from_dlpack", "fn:sqrt", "fn:where", "method:conj",
              "method:copy", "method:diagonal", "method:item", "method:ravel", "method:tolist", "method:astype",
              "method:flatten", "method:take", "setattr:real", "setattr:imag",
              # NumPy's no-copy contracts (lists), its own functions with the case's arguments
              "fn:asmatrix", "fn:permute_dims", "fn:structured_to_unstructured", "fn:unstructured_to_structured",
              "setattr:shape",
              # issue 38: np.arange, arguments as written
              "fn:arange"},
    # the standard's functions of the same name, keywords as written (out= reaches them, refused)
    "array_api_strict": {"fn:abs", "fn:add", "fn:exp", "fn:sqrt", "fn:where", "fn:from_dlpack",
                         "fn:xp_from_dlpack", "fn:xp_reshape", "fn:permute_dims"},
}

# issue 35: the functions of torch's declared contracts, torch.NAME, torch.linalg / special / fft's
# function of the operator (an out= variant) or torch.nn.functional.NAME of the key's own name,
# arguments as written (adapters/torch_adapter.py, _declared_operations; those the table had before
# keep their own entries, audited as mapped where they map)
_DECLARED_ENTRIES = ("_torch_fn.", "_namespaced.", "_functional.")
PLAIN["torch"] |= {key for contract in packaged().operators for key in contract.keys if key.startswith("fn:")
                   and getattr(registry.get_adapter("torch").ops.get(key), "__qualname__", "").startswith(
                       _DECLARED_ENTRIES)}


def mapped_entries(framework: str) -> set[str]:
    a = registry.get_adapter(framework)
    shared = {**PYTHON_OPERATORS, **NUMPY_CONVERSIONS}  # the same entry in every table
    dlpack = set(registry.dlpack_conversions())  # the registry's, the same call in every table
    return {key for key, op in a.ops.items()
            if shared.get(key) is not op and key not in dlpack
            and kind_of_entry(key, op) == "mapped" and key not in PLAIN[framework]}


def test_every_mapped_entry_is_in_the_audit_table() -> None:
    rows = audited()
    expected = {(fw, key) for fw in FRAMEWORKS for key in mapped_entries(fw)}
    assert not expected - rows, f"entries that map a spelling, missing from the audit: {sorted(expected - rows)}"
    assert not rows - expected, f"audit rows of no mapping entry (or of a PLAIN one): {sorted(rows - expected)}"


# ---- what an entry gives, compared with what the framework gives for the case's spelling


class Sample(NamedTuple):
    framework: str
    key: str
    args: tuple  # the case's arguments after the receiver (callables make tensors of the framework)
    kwargs: dict
    as_written: Callable[..., Any]  # the framework's call, as a user of it writes the case's spelling
    receiver: Callable[[Any], Any] | None = None  # makes the first argument; default: a 2x3 float32 tensor


def _fw(framework: str) -> Any:
    import importlib

    return importlib.import_module(registry.get_adapter(framework).module)


def _tensor(framework: str, values: Any, dtype: str = "float32") -> Any:
    import numpy as np

    array = np.array(values, dtype=dtype)
    if framework == "numpy":
        return array
    if framework == "torch":
        return _fw("torch").tensor(array)
    if framework == "array_api_strict":
        return _fw(framework).asarray(array)
    return _fw("paddle").to_tensor(array)


def signature(a: Any, x: Any, result: Any) -> Any:
    """A result as it relates to the receiver ``x``: identity, memory, dtype, shape, values."""
    if isinstance(result, (list, tuple)):
        return [signature(a, x, r) for r in result]
    if a.is_array(result):
        return {"is x": result is x, "shares x": bool(a.is_array(x) and a.overlaps(result, x)),
                "dtype": a.dtype_name(result), "shape": list(a.shape_of(result)),
                "values": a.to_numpy(result).tolist()}
    if a.is_array(x) or x is None:
        return {"value": type(result).__name__ if callable(result) else result}
    return {"value": type(result).__name__}


def outcome(a: Any, make: Callable[[], tuple[Any, tuple, dict]], call: Callable[..., Any]) -> Any:
    x, args, kwargs = make()
    try:
        result = call(x, *args, **kwargs)
    except NotApplicable as exc:
        return {"not applicable": str(exc)}
    except Exception as exc:
        return {"raises": type(exc).__name__}
    return signature(a, x, result)


M23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def idx(fw: str, values: Any) -> Any:
    return _tensor(fw, values, "int64")


AS_WRITTEN: list[Sample] = [
    # Paddle: to(dtype) and the dtype the case writes as a string (the fix of issue 16)
    Sample("paddle", "method:to", ("float32",), {}, lambda x, d: x.to(d)),
    Sample("paddle", "method:to", ("float64",), {}, lambda x, d: x.to(d)),
    Sample("paddle", "method:to", ("cpu",), {}, lambda x, d: x.to(d)),
    # Paddle's own operations of the same name that also take torch's spelling: the table's
    # translation gives what the spelling gives
    Sample("paddle", "method:view", (3, 2), {}, lambda x, *s: x.view(*s)),
    Sample("paddle", "method:view", ("int32",), {}, lambda x, d: x.view(d)),
    Sample("paddle", "method:reshape", (3, 2), {}, lambda x, *s: x.reshape(*s)),
    Sample("paddle", "method:transpose", (0, 1), {}, lambda x, *d: x.transpose(*d)),
    Sample("paddle", "method:permute", (1, 0), {}, lambda x, *d: x.permute(*d)),
    Sample("paddle", "method:flatten", (0, 1), {}, lambda x, *d: x.flatten(*d)),
    Sample("paddle", "method:diagonal", (0, 0, 1), {}, lambda x, *a: x.diagonal(*a)),
    Sample("paddle", "method:squeeze", (0,), {}, lambda x, d: x.squeeze(d), lambda fw: _tensor(fw, [M23])),
    Sample("paddle", "method:expand", (2, 2, 3), {}, lambda x, *s: x.expand(*s)),
    Sample("paddle", "method:chunk", (3, 1), {}, lambda x, n, d: x.chunk(n, d)),
    Sample("paddle", "method:tensor_split", (2, 1), {}, lambda x, n, d: x.tensor_split(n, d)),
    Sample("paddle", "method:unbind", (1,), {}, lambda x, d: x.unbind(d)),
    Sample("paddle", "method:unflatten", (1, (3, 1)), {}, lambda x, d, s: x.unflatten(d, s)),
    Sample("paddle", "method:unfold", (1, 2, 1), {}, lambda x, d, s, t: x.unfold(d, s, t)),
    Sample("paddle", "method:flip", ([0],), {}, lambda x, d: x.flip(d)),
    Sample("paddle", "method:sum", (0,), {}, lambda x, d: x.sum(d)),
    Sample("paddle", "method:index_select", (1, lambda fw: idx(fw, [0, 2])), {}, lambda x, d, i: x.index_select(d, i)),
    Sample("paddle", "method:gather", (1, lambda fw: idx(fw, [[0, 1, 0], [1, 0, 1]])), {},
           lambda x, d, i: x.gather(d, i)),
    Sample("paddle", "fn:take_along_dim", (lambda fw: idx(fw, [[0, 1, 0], [1, 0, 1]]),), {"dim": 1},
           lambda x, i, dim: _fw("paddle").take_along_dim(x, i, dim=dim)),
    Sample("paddle", "fn:take_along_dim", (lambda fw: idx(fw, [[0, 1, 0], [1, 0, 1]]),), {},
           lambda x, i: _fw("paddle").take_along_dim(x, i)),
    Sample("paddle", "fn:tensor", (), {}, lambda x: _fw("paddle").tensor(x)),
    Sample("paddle", "fn:tensor", (), {"dtype": "float64"}, lambda x, dtype: _fw("paddle").tensor(x, dtype=dtype)),
    Sample("paddle", "fn:as_tensor", (), {}, lambda x: _fw("paddle").as_tensor(x)),
    Sample("paddle", "fn:cat", (), {"dim": 1}, lambda xs, dim: _fw("paddle").cat(xs, dim=dim),
           lambda fw: [_tensor(fw, M23), _tensor(fw, M23)]),
    Sample("paddle", "fn:stack", (), {"dim": 0}, lambda xs, dim: _fw("paddle").stack(xs, dim=dim),
           lambda fw: [_tensor(fw, M23), _tensor(fw, M23)]),
    Sample("paddle", "fn:clamp", (), {"min": 2.0, "max": 5.0}, lambda x, **k: _fw("paddle").clamp(x, **k)),
    Sample("paddle", "fn:zeros", (2, 3), {}, lambda x, *s: _fw("paddle").zeros(*s), lambda fw: None),
    Sample("paddle", "method:movedim", (0, 1), {}, lambda x, s, d: x.moveaxis(s, d)),
    Sample("paddle", "attr:requires_grad", (), {}, lambda x: x.requires_grad),
    Sample("paddle", "attr:real", (), {}, lambda x: x.real(), lambda fw: _tensor(fw, [1 + 2j], "complex64")),
    # Paddle's activations have no inplace parameter: the case's inplace=True reaches them
    Sample("paddle", "fn:relu", (), {"inplace": True}, lambda x, **k: _fw("paddle").nn.functional.relu(x, **k)),
    Sample("paddle", "fn:leaky_relu", (0.1,), {"inplace": True},
           lambda x, s, **k: _fw("paddle").nn.functional.leaky_relu(x, s, **k)),
    Sample("paddle", "fn:elu", (), {"inplace": True}, lambda x, **k: _fw("paddle").nn.functional.elu(x, **k)),
    Sample("paddle", "fn:hardtanh", (), {"inplace": True},
           lambda x, **k: _fw("paddle").nn.functional.hardtanh(x, **k)),
    Sample("paddle", "fn:hardtanh", (), {"min_val": -2.0, "max_val": 2.0},
           lambda x, **k: _fw("paddle").nn.functional.hardtanh(x, min=-2.0, max=2.0)),
    Sample("paddle", "fn:ReLU", (), {"inplace": True}, lambda x, **k: _fw("paddle").nn.ReLU(**k), lambda fw: None),
    Sample("paddle", "fn:LeakyReLU", (0.1,), {"inplace": True},
           lambda x, s, **k: _fw("paddle").nn.LeakyReLU(s, **k), lambda fw: None),
    Sample("paddle", "fn:ELU", (), {"inplace": True}, lambda x, **k: _fw("paddle").nn.ELU(**k), lambda fw: None),
    Sample("paddle", "fn:Hardtanh", (-2.0, 2.0), {"inplace": True},
           lambda x, a, b, **k: _fw("paddle").nn.Hardtanh(a, b, **k), lambda fw: None),
    # Paddle's own structural in-place methods (issue 18), given the case's arguments
    Sample("paddle", "method:cast_", ("float64",), {}, lambda x, d: x.cast_(d)),
    Sample("paddle", "method:flatten_", (0, 1), {}, lambda x, *d: x.flatten_(*d)),
    Sample("paddle", "method:reshape_", (3, 2), {}, lambda x, *s: x.reshape_(list(s))),
    Sample("paddle", "method:fill_diagonal_", (1.0,), {"wrap": True}, lambda x, v, **k: x.fill_diagonal_(v, **k),
           lambda fw: _tensor(fw, [[0.0] * 3] * 7)),
    # torch: a dtype name is the torch.dtype of that name (torch takes no dtype strings)
    Sample("torch", "method:to", ("float32",), {}, lambda x, d: x.to(getattr(_fw("torch"), d))),
    Sample("torch", "method:to", ("float64",), {}, lambda x, d: x.to(getattr(_fw("torch"), d))),
    Sample("torch", "method:view", ("int32",), {}, lambda x, d: x.view(getattr(_fw("torch"), d))),
    Sample("torch", "fn:zeros", (2, 3), {}, lambda x, *s: _fw("torch").zeros(*s), lambda fw: None),
    # NumPy's own operations of the same name, given the case's arguments
    Sample("numpy", "method:flatten", (1,), {}, lambda x, d: x.flatten(d)),
    Sample("numpy", "method:flatten", (), {}, lambda x: x.flatten()),
    Sample("numpy", "method:squeeze", (0,), {}, lambda x, d: x.squeeze(d), lambda fw: _tensor(fw, [M23])),
    Sample("numpy", "method:squeeze", (1,), {}, lambda x, d: x.squeeze(d)),
    Sample("numpy", "method:reshape", (3, 2), {}, lambda x, *s: x.reshape(*s)),
    Sample("numpy", "method:sum", (0,), {}, lambda x, d: x.sum(d)),
    Sample("numpy", "method:flip", ([0],), {}, lambda x, d: _fw("numpy").flip(x, d)),
    Sample("numpy", "method:broadcast_to", (2, 2, 3), {}, lambda x, *s: _fw("numpy").broadcast_to(x, s)),
    Sample("numpy", "fn:stack", (), {"dim": 1}, lambda x, dim: _fw("numpy").stack(x, dim),
           lambda fw: [_tensor(fw, M23), _tensor(fw, M23)]),
    Sample("numpy", "fn:zeros", (2, 3), {}, lambda x, *s: _fw("numpy").zeros(s), lambda fw: None),
    Sample("numpy", "method:to", ("cpu",), {}, lambda x, d: x.to_device(d)),
    Sample("numpy", "method:to", ("cuda",), {}, lambda x, d: x.to_device(d)),
]

# the case's spelling, which the framework refuses (so the table translates the convention)
REFUSED: list[Sample] = [
    Sample("paddle", "method:broadcast_to", (2, 2, 3), {}, lambda x, *s: x.broadcast_to(*s)),
    Sample("paddle", "method:resize_", (3, 2), {}, lambda x, *s: x.resize_(*s)),
    Sample("paddle", "method:split", (2,), {"dim": 1}, lambda x, s, **k: x.split(s, **k)),
    Sample("paddle", "method:index_fill_", (0, lambda fw: idx(fw, [0]), -1.0), {},
           lambda x, d, i, v: x.index_fill_(d, i, v)),
    Sample("paddle", "method:fill_diagonal_", (1.0, True), {}, lambda x, v, w: x.fill_diagonal_(v, w),
           lambda fw: _tensor(fw, [[0.0] * 3] * 7)),
    Sample("paddle", "method:flatten_", (), {"start_dim": 0, "end_dim": 1}, lambda x, **k: x.flatten_(**k)),
    Sample("paddle", "method:reshape_", (3, 2), {}, lambda x, *s: x.reshape_(*s)),
    Sample("paddle", "method:scatter_reduce_",
           (0, lambda fw: idx(fw, [[0, 1, 0]]), lambda fw: _tensor(fw, [[1.0, 1.0, 1.0]]), "sum"),
           {}, lambda x, d, i, src, r: x.scatter_reduce_(d, i, src, r)),
    Sample("paddle", "method:flip", (), {"dims": [0]}, lambda x, **k: x.flip(**k)),
    Sample("paddle", "method:movedim", (0, 1), {}, lambda x, s, d: x.movedim(s, d)),
    Sample("paddle", "fn:hardtanh", (), {"min_val": -2.0}, lambda x, **k: _fw("paddle").nn.functional.hardtanh(x, **k)),
    Sample("torch", "method:to", ("float32",), {}, lambda x, d: x.to(d)),
    Sample("numpy", "method:view", (3, 2), {}, lambda x, *s: x.view(*s)),
    Sample("numpy", "fn:zeros", (2, 3), {}, lambda x, *s: _fw("numpy").zeros(*s), lambda fw: None),
    # issue 38: NumPy's tril / triu take k, not torch's diagonal; Paddle's slice_scatter takes
    # axes / starts / ends / strides lists, not torch's dim / start / end / step
    Sample("numpy", "fn:tril", (), {"diagonal": 1}, lambda x, **k: _fw("numpy").tril(x, **k)),
    Sample("numpy", "fn:triu", (), {"diagonal": 1}, lambda x, **k: _fw("numpy").triu(x, **k)),
    Sample("paddle", "fn:slice_scatter", (lambda fw: _tensor(fw, [[1.0, 1.0, 1.0]]),), {"dim": 0, "start": 1},
           lambda x, src, **k: _fw("paddle").slice_scatter(x, src, **k)),
    Sample("paddle", "method:backward", (), {"gradient": None}, lambda x, **k: x.backward(**k),
           lambda fw: _fw("paddle").to_tensor(1.0, stop_gradient=False) * 2),
    # the standard's Array has no such methods; its functions take a shape tuple / the axes
    Sample("array_api_strict", "method:reshape", (3, 2), {}, lambda x, *s: x.reshape(*s)),
    Sample("array_api_strict", "method:reshape", (3, 2), {}, lambda x, *s: _fw("array_api_strict").reshape(x, list(s))),
    Sample("array_api_strict", "method:squeeze", (), {}, lambda x: x.squeeze()),
    Sample("array_api_strict", "method:squeeze", (), {}, lambda x: _fw("array_api_strict").squeeze(x, axis=None)),
]

# the framework's operation of the case's name means something else at the case's arguments
# (so the table calls the counterpart of the case's meaning): the two give different results
OTHER_MEANING: list[Sample] = [
    Sample("numpy", "method:transpose", (0, 1), {}, lambda x, *d: x.transpose(*d)),
    Sample("numpy", "method:nonzero", (), {}, lambda x: x.nonzero()),
    # issue 38: NumPy's repeat(2) repeats each element (torch's repeat_interleave); torch's tiles
    Sample("numpy", "method:repeat", (2,), {}, lambda x, n: x.repeat(n)),
    Sample("paddle", "method:split", (1,), {}, lambda x, s: x.split(s)),
    # Paddle's transpose_ takes torch's two dimensions without an error, and does not swap them
    Sample("paddle", "method:transpose_", (0, 1), {}, lambda x, *d: x.transpose_(*d)),
]


def _make(sample: Sample) -> Callable[[], tuple[Any, tuple, dict]]:
    fw = sample.framework

    def make() -> tuple[Any, tuple, dict]:
        x = sample.receiver(fw) if sample.receiver else _tensor(fw, M23)
        args = tuple(a(fw) if callable(a) else a for a in sample.args)
        return x, args, dict(sample.kwargs)

    return make


def _id(sample: Sample) -> str:
    shown = [repr(a) if not callable(a) else "<tensor>" for a in sample.args]
    shown += [f"{k}={v!r}" for k, v in sample.kwargs.items()]
    return f"{sample.framework}-{sample.key}({', '.join(shown)})"


@pytest.mark.parametrize("sample", AS_WRITTEN, ids=_id)
def test_entry_gives_what_the_spelling_gives(sample: Sample) -> None:
    a = adapter(sample.framework)
    entry = a.ops[sample.key]

    def table(x: Any, *args: Any, **kwargs: Any) -> Any:
        # a constructor (zeros, a layer) has no receiver: the sample makes None for it
        return entry(*args, **kwargs) if x is None else entry(x, *args, **kwargs)

    got, want = outcome(a, _make(sample), table), outcome(a, _make(sample), sample.as_written)
    assert got == want, f"the table's {sample.key} gives {got}, the framework's own spelling {want}"


@pytest.mark.parametrize("sample", REFUSED, ids=_id)
def test_the_spelling_the_table_translates_is_refused(sample: Sample) -> None:
    a = adapter(sample.framework)
    got = outcome(a, _make(sample), sample.as_written)
    assert "raises" in got, (f"{sample.framework} now accepts the case's spelling of {sample.key} ({got}): call it as "
                             "written in the table, and update the audit in docs/adapters.md")


@pytest.mark.parametrize("sample", OTHER_MEANING, ids=_id)
def test_the_same_name_means_something_else(sample: Sample) -> None:
    a = adapter(sample.framework)
    entry = a.ops[sample.key]
    got, want = outcome(a, _make(sample), entry), outcome(a, _make(sample), sample.as_written)
    assert got != want, (f"{sample.framework}'s own {sample.key.partition(':')[2]} now gives the case's meaning "
                         f"({got}): call it as written in the table, and update the audit in docs/adapters.md")
