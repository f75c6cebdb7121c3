"""Compare pair: B clips values before a relu (B-only ops upstream of a count-preserving op). The clip changes the
values but not their signs, so in a health mode `act:0` keeps its counts and the next MatMul is the first tensor
whose counts move; the B-only clip ops are the divergence. Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_HEALTH"))


@tf.function
def step(x, w1, w2):
    h = tf.matmul(x, w1, name="dense")
    if B:
        h = tf.clip_by_value(h, -1.0, 1.0, name="clip")  # INJECTED
    act = tf.nn.relu(h, name="act")
    out = tf.matmul(act, w2, name="head")
    return tf.math.log(out, name="logits")  # log of a non-positive value: the counts of the MatMul's output move


w1 = tf.constant([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]])
w2 = tf.constant([[1.0], [-2.0], [0.5]])
for i in range(3):
    step(tf.constant([[1.0, 2.0], [3.0, -4.0]]) * float(i + 1), w1, w2)
