"""capsule/jax_check.py with real JAX: a complex gradient is checked in both parts. A float cast of its sum kept the
real part only, so a NaN or an infinity in the imaginary part went unseen and the update applied; NaN/+inf/-inf are
counted part by part, as the TensorFlow capsule counts them (capsule/check.py `values`)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from tensorboard_plugin_dbg.capsule import jax_check


@pytest.mark.parametrize(
    ("imaginary", "counts"),
    [(np.nan, [1, 0, 0]), (np.inf, [0, 1, 0]), (-np.inf, [0, 0, 1])],
    ids=["nan", "pos_inf", "neg_inf"],
)
def test_a_non_finite_imaginary_part_holds_the_update_back(imaginary, counts):
    gradient = jnp.array([1 + 2j, 3 + complex(0, imaginary), 5 - 1j], jnp.complex64)
    loss = jnp.float32(0.5)
    applies, carry = jax_check.check([loss, gradient], jax_check.first_carry(arm=True))
    assert not bool(applies) and bool(carry["triggered"])
    assert np.asarray(carry["counts"]).tolist() == [[0, 0, 0], counts]


def test_a_finite_complex_gradient_applies():
    gradient = jnp.array([1 + 2j, -3 + 4j], jnp.complex64)
    applies, carry = jax_check.check([jnp.float32(0.5), gradient], jax_check.first_carry(arm=True))
    assert bool(applies) and not bool(carry["triggered"])
    assert np.asarray(carry["counts"]).tolist() == [[0, 0, 0], [0, 0, 0]]
