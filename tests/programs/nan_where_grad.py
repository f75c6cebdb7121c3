"""The tf.where trap: `tf.where(z > 0, tf.math.log(z), 0)` is finite forward (the where masks log(0) = -inf), but
the gradient of the log is 1/z * 0 = inf * 0 = NaN where z is 0, and the where passes that NaN on to the weights.
The backward pass is plain ops (Reciprocal, Mul, Select...) under gradient_tape/... or gradients/..., not a `...Grad`
op. The line to fix is the where line (FIX-<variant>); the gradient line is marked TAPE-tape / TAPE-graph.
Variant guarded: the step applies the gradient only when it is finite (the NaN never reaches the weights).
Args: DUMP_DIR [MODE] [VARIANT: log | div | tf_gradients | guarded]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
variant = _common.arg(3, "log")
w = tf.Variable([1.0, 2.0, 0.5])


def forward(z):
    if variant == "div":  # 1 / z masked: its gradient -1 / z**2 * 0 = NaN at z == 0
        return tf.where(z > 0, 1.0 / z, 0.0)  # FIX-div
    return tf.where(z > 0, tf.math.log(z), 0.0)  # FIX-log


def gradient(loss, tape):
    if variant == "tf_gradients":  # graph-mode tf.gradients: its ops are named gradients/<op>_grad/...
        return tf.gradients(loss, w)[0]  # TAPE-graph
    return tape.gradient(loss, w)  # TAPE-tape


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        z = tf.nn.relu(w * x)
        loss = tf.reduce_sum(forward(z))
    grad = gradient(loss, tape)
    if variant == "guarded":  # the program's own check: apply only finite gradients
        tf.cond(tf.reduce_all(tf.math.is_finite(grad)), lambda: w.assign_sub(0.1 * grad), lambda: w.assign(w))
    else:
        w.assign_sub(0.1 * grad)
    return loss


for step in range(3):  # step 1 feeds a zero: relu(0) = 0, log(0) masked forward, NaN backward
    x = tf.constant([1.0, 0.0 if step == 1 else 1.0, 1.0])
    print(step, float(train_step(x)), w.numpy())
