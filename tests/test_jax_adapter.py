"""The JAX adapter against the real JAX (skipped where it is not installed): the probes see
shared buffers, the immutability declaration recognises JAX's refusal, the .at[] updates and
donation behave as the cases record them, DLPack aliasing is seen by behaviour."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from conformance.adapters.jax_adapter import JaxAdapter  # noqa: E402


@pytest.fixture(scope="module")
def adapter() -> JaxAdapter:
    a = JaxAdapter()
    a.setup()
    return a


def test_item_assignment_is_the_declared_refusal(adapter: JaxAdapter) -> None:
    x = jnp.arange(3.0)
    with pytest.raises(TypeError) as info:
        adapter.ops["op:setitem"](x, 0, 5.0)
    assert adapter.refused_mutation(info.value)


def test_out_argument_is_a_refused_mutation(adapter: JaxAdapter) -> None:
    x = jnp.arange(3.0)
    with pytest.raises(NotImplementedError) as info:
        adapter.ops["fn:add"](x, x, out=x)
    assert adapter.refused_mutation(info.value)


def test_inplace_methods_are_absent_with_the_counterpart(adapter: JaxAdapter) -> None:
    reason = adapter.lacks("method:add_")
    assert reason is not None and "x + y" in reason
    assert "jax.grad" in (adapter.lacks("method:backward") or "")


def test_gradients_are_functional(adapter: JaxAdapter) -> None:
    # no backward() in the table: the engine reads the step as jax.grad (conformance/run/gradients.py)
    assert not adapter.autograd and "jax.grad" in (adapter.functional_gradient or "")
    assert "grad" not in adapter.unobservable and {"requires_grad", "is_leaf"} <= adapter.unobservable
    x, k = jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])
    (gk,) = adapter.gradient(lambda x, k: (x * x * k).sum(), [x, k], [1])
    assert gk.tolist() == [1.0, 4.0]
    gx, gk = adapter.gradient(lambda x, k: x * k, [x, k], [0, 1], jnp.array([1.0, 10.0]))
    assert gx.tolist() == [3.0, 40.0] and gk.tolist() == [1.0, 20.0]
    # under jax.jit too (the jax_jit mode compiles the gradient function)
    (gx,) = jax.jit(lambda x, k: adapter.gradient(lambda x, k: (x * k).sum(), [x, k], [0]))(x, k)
    assert gx.tolist() == [3.0, 4.0]


def test_at_set_returns_a_new_buffer(adapter: JaxAdapter) -> None:
    x = jnp.array([1.0, 2.0, 3.0])
    y = adapter.ops["method:set"](adapter.ops["op:getitem"](adapter.ops["attr:at"](x), 0), 5.0)
    assert not adapter.overlaps(x, y)
    assert adapter.to_numpy(x).tolist() == [1.0, 2.0, 3.0]
    assert adapter.to_numpy(y).tolist() == [5.0, 2.0, 3.0]


def test_list_index_is_passed_as_the_array_jax_asks_for(adapter: JaxAdapter) -> None:
    x = jnp.array([1.0, 2.0, 3.0])
    assert adapter.to_numpy(adapter.ops["op:getitem"](x, [0, 2])).tolist() == [1.0, 3.0]


def test_device_put_onto_the_same_device_shares_the_buffer(adapter: JaxAdapter) -> None:
    x = jnp.array([1.0, 2.0])
    y = adapter.ops["fn:device_put"](x, "cpu")
    assert y is not x and adapter.overlaps(x, y) and adapter.same_allocation(x, y)
    assert adapter.ops["fn:device_put"](x) is x


def test_numpy_view_of_a_jax_array_is_read_only_and_overlaps(adapter: JaxAdapter) -> None:
    x = jnp.array([1.0, 2.0])
    a = np.asarray(x)
    assert not a.flags.writeable
    assert adapter.overlaps(x, a)
    with pytest.raises(TypeError):
        adapter.probe_fill(x, 7.25)  # JAX's own refusal: the behaviour probe tries the other side


def test_dlpack_into_torch_aliases_writably() -> None:
    torch = pytest.importorskip("torch")
    from conformance.kinds.relations import behaviour_overlap
    from conformance.run.probes import Probes

    adapter = JaxAdapter()
    adapter.setup()
    x = jnp.array([1.0, 2.0, 3.0])
    t = torch.from_dlpack(x)
    seen, how = behaviour_overlap(Probes(adapter), ("x", x), ("t", t))
    assert seen is True and "wrote through t" in how
    assert adapter.to_numpy(x).tolist() == [1.0, 2.0, 3.0]  # restored


def test_donation_deletes_the_input_on_cpu(adapter: JaxAdapter) -> None:
    x, y = jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])
    z = adapter.ops["fn:jit_donate_add"](x, y)
    assert x.is_deleted() and not y.is_deleted()
    assert adapter.to_numpy(z).tolist() == [4.0, 6.0]
    with pytest.raises(RuntimeError) as info:
        x + 1.0
    assert adapter.classify_error(info.value) == "other"


def test_sixty_four_bit_inputs_follow_jax_default(adapter: JaxAdapter) -> None:
    class Spec:
        dtype, requires_grad, name = "float64", False, "x"

    t = adapter.tensor_from_numpy(np.array([1.0]), Spec(), "cpu")
    assert adapter.dtype_name(t) == "float32"  # jax_enable_x64 is off by default


def test_global_state_round_trips(adapter: JaxAdapter) -> None:
    state = [s for s in adapter.global_states() if s.name == "jax.config"][0]
    saved = state.get()
    jax.config.update("jax_enable_x64", True)
    try:
        assert state.get() != saved
    finally:
        state.set(saved)
    assert state.get() == saved


def test_error_kinds(adapter: JaxAdapter) -> None:
    with pytest.raises(ValueError) as info:
        jnp.ones((2, 2)).squeeze(0)
    assert adapter.classify_error(info.value) == "shape_mismatch"
    with pytest.raises(TypeError) as info2:
        adapter.ops["fn:relu"](jnp.ones(2), inplace=True)
    assert adapter.classify_error(info2.value) == "type_error"
