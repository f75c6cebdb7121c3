"""NaN born in the backward pass: the gradient of tf.norm at a zero vector (the forward pass stays finite).

The training step runs the tape inside a tf.function, so the gradient ops are traced. The line to fix is the
forward tf.norm (add an epsilon), marked CULPRIT; the tape.gradient line is marked TAPE. Args: DUMP_DIR [MODE]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
w = tf.Variable([1.0, -2.0, 2.0])


@tf.function
def train_step(target):
    with tf.GradientTape() as tape:
        distance = tf.norm(w - target)  # CULPRIT
        loss = 2.0 * distance
    grad = tape.gradient(loss, w)  # TAPE
    w.assign_sub(0.1 * grad)
    return loss


for target in ([0.0, 0.0, 0.0], [1.0, -2.0, 2.0], [0.5, 0.5, 0.5]):  # the second step reaches w == target
    w.assign([1.0, -2.0, 2.0]) if target[0] == 1.0 else None
    print(float(train_step(tf.constant(target))))
