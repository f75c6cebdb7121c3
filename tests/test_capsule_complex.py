"""A complex variable's gradient is checked in both its parts (#36): casting a complex tensor to float32 keeps its real
part only, so a NaN in a gradient's imaginary part went unseen by the every-step check, and the check's exact path
(`is_finite`, real dtypes only) failed to trace at all. A real Keras layer with a complex64 weight, a custom loop
(tf.function, XLA on and off, the per-layer ring on and off): a finite step is applied, a step whose gradient has a
NaN imaginary part (its real part finite) is caught and not applied, its trigger names the gradient (its NaN/inf
counted in parts: a complex tensor of n values counts 2n), and the ring's norm is sqrt(sum |g|^2)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("ring", [32, 0], ids=["ring", "no_ring"])
@pytest.mark.parametrize("xla", [False, True], ids=["graph", "xla"])
def test_a_nan_in_a_complex_gradients_imaginary_part_is_caught_and_the_ring_norms_both_parts(tmp_path, xla, ring):
    tf = pytest.importorskip("tensorflow")
    import keras

    from tensorboard_plugin_dbg.capsule import NanCapsule

    class Phase(keras.layers.Layer):  # a complex weight, a real output
        def build(self, shape: tuple) -> None:
            self.w = self.add_weight(shape=(shape[-1],), dtype="complex64", initializer="ones")

        def call(self, x: object) -> object:
            return tf.math.real(tf.cast(x, tf.complex64) * self.w)

    model = keras.Sequential([keras.Input((3,)), Phase()])
    capsule = NanCapsule(str(tmp_path / "capsules"), layer_history=ring)
    capsule.watch(model, keras.optimizers.SGD(0.1))
    capsule.capsule.compiled = xla  # the ring's and the check's XLA forms

    def gradients(x: object, imaginary: object) -> tuple:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        (grad,) = tape.gradient(loss, model.trainable_variables)
        return loss, grad + tf.complex(tf.zeros_like(tf.math.real(grad)), imaginary)  # the imaginary part set

    def train_step(x: object, imaginary: object) -> object:
        loss, grad = gradients(x, imaginary)
        return capsule.apply_gradients([grad], model.trainable_variables, loss=loss, batch=x)

    step = tf.function(train_step, jit_compile=xla, autograph=False)
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
    weight = model.trainable_variables[0]
    _, first = gradients(x, tf.fill([3], 3.0))
    before = weight.numpy()
    assert bool(step(x, tf.fill([3], 3.0)))  # finite: applied
    assert np.allclose(weight.numpy(), before - 0.1 * first.numpy())
    applied = weight.numpy()
    bad = tf.constant([0.0, np.nan, 0.0], tf.float32)
    assert np.isfinite(tf.math.real(gradients(x, bad)[1]).numpy()).all()  # the real part alone is finite
    assert not bool(step(x, bad))  # caught: not applied
    assert np.array_equal(weight.numpy(), applied)
    assert int(capsule.capsule.state.triggers.numpy()) == 1
    trigger = capsule.capsule.state.trigger()  # the held trigger names the gradient; counted in parts (re, im)
    assert trigger["kind"] == "gradient" and trigger["name"] == weight.path
    assert trigger["health"] == {"nan": 1, "pos_inf": 0, "neg_inf": 0, "size": 2 * 3}
    if ring:
        groups, entry = capsule.capsule.history.read()
        norms = groups["layer_history"]["grad_norm"][0]
        assert entry["steps_kept"] == 2 and np.isnan(norms[1])
        assert np.isclose(norms[0], np.sqrt(np.sum(np.abs(first.numpy()) ** 2)), rtol=1e-5)  # |g|^2: both parts
