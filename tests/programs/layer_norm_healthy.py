"""A healthy hand-written layer norm (#38 item 8): a classifier normalises its logits over each row
(`z - mean(z)`, divided by the row's spread) before the softmax cross-entropy, trained for a few steps with a
GradientTape. The gradient through the row mean (`gradient_tape/sub/Sum`: the sum over a row of the gradient of
the centred logits) is zero by construction (a softmax's gradient sums to 0 over a row, and so does the
normalisation's), so only float rounding is left (~1e-8): not a vanishing gradient. The weights' gradients are
~0.01-1. Nothing in this run deserves a finding. Args: DUMP_DIR [MODE]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_TENSOR"))
rng = np.random.RandomState(0)
x = tf.constant(rng.randn(32, 16).astype("float32"))
labels = tf.constant(rng.randint(0, 10, 32))
w = tf.Variable(rng.randn(16, 10).astype("float32") * 0.3)


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        logits = tf.matmul(x, w)
        centred = logits - tf.reduce_mean(logits, axis=-1, keepdims=True)
        normed = centred / tf.sqrt(tf.reduce_mean(tf.square(centred), axis=-1, keepdims=True) + 1e-5)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, normed))
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return loss


for _ in range(6):
    print(float(train_step()))
