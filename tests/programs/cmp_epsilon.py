"""Compare pair: an epsilon dropped before a log (B: -inf where the input is 0). Args: DUMP_DIR VARIANT [MODE]."""

import _common

B = _common.arg(2, "a") == "b"
tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_HEALTH"))


@tf.function
def loss(probs):
    safe = tf.add(probs, 0.0 if B else 1e-7, name="safe")  # INJECTED
    logs = tf.math.log(safe, name="logs")
    return -tf.reduce_mean(logs, name="nll")


for _i in range(3):
    loss(tf.constant([0.0, 0.25, 0.75, 0.0]))
