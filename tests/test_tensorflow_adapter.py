"""The TensorFlow adapter against the real framework (skipped where it is not installed):
its probes see the buffer sharing TensorFlow really does, its immutability declaration
recognises TensorFlow's refusal, DLPack round trips alias, errors get their kinds."""

from __future__ import annotations

import operator

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from conformance.adapters.base import MutationRefused  # noqa: E402
from conformance.adapters.tensorflow_adapter import TensorflowAdapter  # noqa: E402


@pytest.fixture(scope="module")
def adapter() -> TensorflowAdapter:
    a = TensorflowAdapter()
    a.setup()
    return a


def test_the_buffer_address_is_dlpacks(adapter: TensorflowAdapter) -> None:
    x = tf.constant([1.0, 2.0, 3.0])
    assert adapter.layout(x).data_ptr == np.from_dlpack(x).__array_interface__["data"][0]
    assert adapter.layout(x).strides == (4,)


def test_identity_and_reshape_share_slices_of_three_floats_do_not(adapter: TensorflowAdapter) -> None:
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    assert adapter.overlaps(tf.identity(x), x)
    assert adapter.overlaps(tf.reshape(x, [2, 2]), x)
    assert not adapter.overlaps(x[1:3], x)  # not 64-byte aligned: a copy
    rows = tf.constant(np.arange(64, dtype=np.float32).reshape(4, 16))
    assert adapter.overlaps(rows[1:3], rows)  # whole rows at a 64-byte offset: shared


def test_the_behaviour_probe_writes_through_the_buffer_and_restores(adapter: TensorflowAdapter) -> None:
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.identity(x)
    before = adapter.to_numpy(x)
    adapter.probe_fill(x, 7.25)
    assert adapter.to_numpy(y).tolist() == [7.25, 7.25, 7.25]
    adapter.probe_restore(x, before)
    assert adapter.to_numpy(y).tolist() == [1.0, 2.0, 3.0]


def test_a_variable_and_its_read_value_share_until_an_assign(adapter: TensorflowAdapter) -> None:
    v = tf.Variable([1.0, 2.0, 3.0])
    r = v.read_value()
    assert adapter.overlaps(r, v)
    v.assign_add([1.0, 1.0, 1.0])
    assert not adapter.overlaps(r, v)
    assert adapter.to_numpy(r).tolist() == [1.0, 2.0, 3.0]


def test_numpy_copies_asarray_aliases_read_only(adapter: TensorflowAdapter) -> None:
    x = tf.constant([1.0, 2.0])
    assert not adapter.overlaps(x.numpy(), x)
    a = np.asarray(x)
    assert adapter.overlaps(a, x) and not a.flags.writeable


def test_dlpack_round_trip_with_numpy_aliases(adapter: TensorflowAdapter) -> None:
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    t = adapter.ops["fn:from_dlpack"](a)
    assert adapter.overlaps(t, a)
    a[0] = 10.0
    assert adapter.to_numpy(t)[0] == 10.0


def test_item_assignment_is_the_declared_refusal(adapter: TensorflowAdapter) -> None:
    x = tf.constant([1.0, 2.0])
    for key in (0, x > 1):
        with pytest.raises(TypeError) as info:
            operator.setitem(x, key, 0.0)
        assert adapter.refused_mutation(info.value)
    with pytest.raises(TypeError) as info:
        adapter.ops["fn:add"](x, x, out=x)
    assert adapter.refused_mutation(info.value)
    # a Variable's missing __setitem__ is Python's refusal of the syntax, not immutability
    with pytest.raises(TypeError) as info:
        operator.setitem(tf.Variable([1.0]), 0, 2.0)
    assert not adapter.refused_mutation(info.value) and adapter.classify_error(info.value) == "type_error"
    assert not isinstance(info.value, MutationRefused)


def test_errors_are_classified(adapter: TensorflowAdapter) -> None:
    with pytest.raises(Exception) as info:
        tf.squeeze(tf.constant([[1.0, 2.0]]), axis=1)
    assert adapter.classify_error(info.value) == "shape_mismatch"
    with pytest.raises(Exception) as info:
        tf.constant([1.0]) + tf.constant([1.0], dtype=tf.float64)
    assert adapter.classify_error(info.value) == "dtype_cast"


def test_gradient_steps_are_absent_naming_the_tape(adapter: TensorflowAdapter) -> None:
    for key in ("method:backward", "attr:grad", "block:enable_grad"):
        assert "GradientTape" in (adapter.lacks(key) or "")


def test_gradients_are_the_tape_s(adapter: TensorflowAdapter) -> None:
    # a backward() step is read as tape.gradient (conformance/run/gradients.py)
    assert not adapter.autograd and "GradientTape" in (adapter.functional_gradient or "")
    assert "grad" not in adapter.unobservable and {"requires_grad", "is_leaf"} <= adapter.unobservable
    x, k = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    (gk,) = adapter.gradient(lambda x, k: tf.reduce_sum(x * x * k), [x, k], [1])
    assert gk.numpy().tolist() == [1.0, 4.0]
    gx, gk = adapter.gradient(lambda x, k: x * k, [x, k], [0, 1], tf.constant([1.0, 10.0]))
    assert gx.numpy().tolist() == [3.0, 40.0] and gk.numpy().tolist() == [1.0, 20.0]
    # a source the loss does not depend on has no gradient (the tape's None), as torch's .grad
    (gk,) = adapter.gradient(lambda x, k: tf.reduce_sum(x), [x, k], [1])
    assert gk is None
    # no_grad: the tape stops recording what runs inside the block (outside a gradient, nothing)

    def loss(x: object, k: object) -> object:
        y = x * x  # type: ignore[operator]
        with adapter.ops["block:no_grad"]():
            z = x * 2  # type: ignore[operator]
        return tf.reduce_sum(y + z)

    (gx,) = adapter.gradient(loss, [x, k], [0])
    assert gx.numpy().tolist() == [2.0, 4.0]
    with adapter.ops["block:no_grad"]():
        assert (x * 2).numpy().tolist() == [2.0, 4.0]
    # inside tf.function too (the tensorflow_function mode compiles the gradient function)
    (gx,) = tf.function(lambda x, k: adapter.gradient(lambda x, k: tf.reduce_sum(x * k), [x, k], [0]))(x, k)
    assert gx.numpy().tolist() == [3.0, 4.0]


def test_global_states_restore_numpy_behaviour(adapter: TensorflowAdapter) -> None:
    with adapter.isolation(0):
        tf.experimental.numpy.experimental_enable_numpy_behavior()
        assert hasattr(tf.constant([1.0]), "T")
    assert not hasattr(tf.constant([1.0]), "T")


def test_clamp_with_one_bound_is_the_one_sided_counterpart_and_with_none_tensorflows_refusal(
        adapter: TensorflowAdapter) -> None:
    """torch's clamp(x, min=...) takes one bound; tf.clip_by_value takes both (a None bound is
    its ValueError), so one bound is tf.maximum / tf.minimum, and no bound is clip_by_value's
    own refusal, as it is torch's."""
    x = tf.constant([-2.0, 0.5, 3.0])
    clamp = adapter.ops["fn:clamp"]
    assert clamp(x, min=0.0).numpy().tolist() == [0.0, 0.5, 3.0]
    assert clamp(x, max=1.0).numpy().tolist() == [-2.0, 0.5, 1.0]
    assert clamp(x, -1.0, 1.0).numpy().tolist() == [-1.0, 0.5, 1.0]
    with pytest.raises(ValueError):
        clamp(x)
    with pytest.raises(ValueError):
        tf.clip_by_value(x, None, None)
