"""The array-api-strict adapter against the real library: its probes (memory sharing by
metadata and by behaviour, through the Array's private NumPy array), its mapping of the
neutral keys onto the standard's functions, DLPack, error kinds and process state."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conformance.adapters.array_api_strict_adapter import ArrayApiStrictAdapter
from conformance.adapters.base import NotApplicable
from conformance.model import TensorSpec

xp = pytest.importorskip("array_api_strict")
np = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def adapter() -> ArrayApiStrictAdapter:
    a = ArrayApiStrictAdapter()
    a.setup()
    return a


def spec(name: str = "x", values=(1.0, 2.0, 3.0), dtype: str = "float32", requires_grad: bool = False,
         kind: str = "tensor") -> TensorSpec:
    values = list(values)
    return TensorSpec(name=name, values=values, dtype=dtype, shape=(len(values),), requires_grad=requires_grad,
                      kind=kind)


def behaviour_shares(adapter: ArrayApiStrictAdapter, a, b) -> bool:
    before = adapter.to_numpy(b).copy()
    snapshot = adapter.to_numpy(a)
    adapter.probe_fill(a, adapter.sentinels(a)[0])
    try:
        return not np.array_equal(adapter.to_numpy(b), before)
    finally:
        adapter.probe_restore(a, snapshot)


def test_importing_the_adapter_imports_no_framework() -> None:
    code = ("import sys, conformance.adapters.array_api_strict_adapter as m; m.ArrayApiStrictAdapter(); "
            "print('array_api_strict' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_input_is_a_fresh_array_of_the_spec_dtype(adapter) -> None:
    x = adapter.make_input(spec(), "cpu")
    assert adapter.is_array(x) and not isinstance(x, np.ndarray)
    assert adapter.dtype_name(x) == "float32" and adapter.shape_of(x) == (3,)
    np.testing.assert_array_equal(adapter.to_numpy(x), [1.0, 2.0, 3.0])


def test_inputs_it_cannot_represent_are_not_applicable(adapter) -> None:
    with pytest.raises(NotApplicable, match="autograd"):
        adapter.make_input(spec(requires_grad=True), "cpu")
    with pytest.raises(NotApplicable, match="float16"):
        adapter.make_input(spec(dtype="float16"), "cpu")
    assert isinstance(adapter.make_input(spec(kind="ndarray", dtype="float16"), "cpu"), np.ndarray)


def test_a_slice_shares_memory_by_metadata_and_by_behaviour(adapter) -> None:
    x = adapter.make_input(spec(values=(1.0, 2.0, 3.0, 4.0)), "cpu")
    v = x[1:3]
    assert adapter.overlaps(v, x) and adapter.same_allocation(v, x)
    assert behaviour_shares(adapter, v, x)
    np.testing.assert_array_equal(adapter.to_numpy(x), [1.0, 2.0, 3.0, 4.0])  # restored
    even, odd = x[::2], x[1::2]
    assert not adapter.overlaps(even, odd) and adapter.same_allocation(even, odd)


def test_layout_is_the_private_numpy_arrays(adapter) -> None:
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    t = x.mT
    layout = adapter.layout(t)
    assert layout.data_ptr == x._array.__array_interface__["data"][0]
    assert layout.strides == (8, 24) and layout.shape == (3, 2) and layout.itemsize == 8


def test_asarray_copy_keyword(adapter) -> None:
    a = np.arange(3.0)
    shared = adapter.ops["fn:xp_asarray"](a, copy=False)
    copied = adapter.ops["fn:xp_asarray"](a, copy=True)
    assert adapter.overlaps(shared, a) and behaviour_shares(adapter, shared, a)
    assert not adapter.overlaps(copied, a) and not behaviour_shares(adapter, copied, a)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        adapter.ops["fn:xp_asarray"]([1.0, 2.0], copy=False)


def test_asarray_of_an_array_is_a_new_object_over_the_same_memory(adapter) -> None:
    x = adapter.make_input(spec(), "cpu")
    y = adapter.ops["fn:xp_asarray"](x)
    assert y is not x and adapter.overlaps(y, x)


def test_astype_copy_false_of_the_same_dtype_is_the_input(adapter) -> None:
    x = adapter.make_input(spec(), "cpu")
    assert adapter.ops["fn:xp_astype"](x, "float32", copy=False) is x
    assert adapter.ops["method:astype"](x, "float32") is not x  # copy=True by default
    assert adapter.ops["method:to"](x, "cpu") is x


def test_view_is_a_reshape_that_refuses_to_copy(adapter) -> None:
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    assert adapter.overlaps(adapter.ops["method:view"](x, 3, 2), x)
    with pytest.raises(AttributeError, match="Incompatible shape") as refused:
        adapter.ops["method:view"](x.mT, 6)
    assert adapter.classify_error(refused.value) == "not_contiguous_view"
    with pytest.raises(NotApplicable):
        adapter.ops["method:view"](x, "int32")


def test_neutral_keys_map_onto_the_standards_functions(adapter) -> None:
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    assert adapter.ops["method:transpose"](x, 0, 1).shape == (3, 2)
    assert adapter.ops["method:permute"](x, 1, 0).shape == (3, 2)
    assert adapter.ops["method:unsqueeze"](x, 0).shape == (1, 2, 3)
    assert adapter.ops["method:flatten"](x).shape == (6,)
    assert adapter.ops["method:expand"](x[0:1, :], 4, -1).shape == (4, 3)
    assert adapter.ops["method:squeeze"](adapter.ops["method:unsqueeze"](x, 0)).shape == (2, 3)
    assert adapter.ops["fn:cat"]([x, x], dim=1).shape == (2, 6)
    assert adapter.ops["method:clone"](x) is not x
    assert adapter.lacks("method:add_") and adapter.lacks("method:backward") and adapter.lacks("method:contiguous")


def test_read_only_views_refuse_the_behaviour_probe(adapter) -> None:
    x = adapter.make_input(spec(), "cpu")
    b = adapter.ops["method:expand"](x, 2, 3)
    with pytest.raises(ValueError, match="read-only"):
        adapter.probe_fill(b, 1.0)


def test_dlpack_to_and_from_numpy_shares(adapter) -> None:
    x = adapter.make_input(spec(), "cpu")
    n = np.from_dlpack(x)
    assert adapter.overlaps(n, x) and behaviour_shares(adapter, n, x)
    a = np.arange(3.0)
    y = adapter.ops["fn:from_dlpack"](a)
    assert adapter.overlaps(y, a)
    assert not adapter.overlaps(adapter.ops["fn:xp_from_dlpack"](a, copy=True), a)


def test_dlpack_round_trip_through_torch(adapter) -> None:
    torch = pytest.importorskip("torch")
    x = adapter.make_input(spec(), "cpu")
    t = torch.from_dlpack(x)
    y = xp.from_dlpack(t)
    t += 1.0
    np.testing.assert_array_equal(adapter.to_numpy(x), [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(adapter.to_numpy(y), [2.0, 3.0, 4.0])


@pytest.mark.parametrize("call, kind", [
    (lambda x: x[0], "type_error"),  # 2-D array, one index: the standard requires one per axis
    (lambda x: x[[0, 1], :], "type_error"),
    (lambda x: x.__iadd__(xp.asarray([[1.0]], dtype=xp.float64)), "dtype_cast"),
    (lambda x: x.__iadd__(1j), "dtype_cast"),
    (lambda x: xp.astype(xp.asarray([1j]), xp.float32), "dtype_cast"),
    (lambda x: xp.imag(x), "unsupported_dtype"),
    (lambda x: xp.reshape(x, [3, 2]), "type_error"),
    (lambda x: xp.add(x, x, out=x), "type_error"),
    (lambda x: xp.squeeze(x, axis=0), "shape_mismatch"),
])
def test_error_kinds(adapter, call, kind) -> None:
    x = xp.asarray(np.ones((2, 3), dtype=np.float32))
    with pytest.raises(Exception) as refused:  # the framework's refusal
        call(x)
    assert adapter.classify_error(refused.value) == kind, f"{type(refused.value).__name__}: {refused.value}"


def test_flags_are_process_state_restored_after_a_case(adapter) -> None:
    before = xp.get_array_api_strict_flags()
    with adapter.isolation(0):
        xp.set_array_api_strict_flags(api_version="2023.12", boolean_indexing=False)
        assert xp.get_array_api_strict_flags()["boolean_indexing"] is False
    assert xp.get_array_api_strict_flags() == before


def test_no_autograd_and_no_versions(adapter) -> None:
    x = adapter.make_input(spec(), "cpu")
    assert adapter.version_of(x) is None and adapter.grad(x) is None
    assert {"version_change", "grad", "requires_grad", "is_leaf"} <= adapter.unobservable
    assert adapter.exception_types == frozenset()
