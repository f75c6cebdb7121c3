"""Five classic bugs in a TensorFlow training step (twins of tests/programs/jax_bugs.py). The line `report` must name
is marked CULPRIT-<bug>. Args: DUMP_DIR [BUG (float16)] [MODE]."""

import sys

import _common
import _twin_data

tf = _common.enable(sys.argv[1], _common.arg(3, "FULL_HEALTH"))
bug = sys.argv[2] if len(sys.argv) > 2 else "float16"


def softmax_log(w, x):
    probs = tf.nn.softmax(tf.matmul(x, w))
    return -tf.reduce_mean(tf.math.log(probs))  # CULPRIT-softmax_log


def sqrt_backward(w, x):
    norm = tf.sqrt(tf.reduce_sum((w * x) ** 2))  # CULPRIT-sqrt_backward
    return norm


def where_grad(w, x):
    z = w * x  # zero where x is zero: log(0) is masked forward, inf * 0 = NaN backward
    return tf.reduce_sum(tf.where(z > 0, tf.math.log(z), 0.0))  # CULPRIT-where_grad


def data_nan(w, x):
    pred = tf.matmul(x, w)  # CULPRIT-data_nan
    return tf.reduce_mean(pred * pred)


def float16(w, x):
    half = tf.cast(w * x, tf.float16)
    squared = half * half  # CULPRIT-float16
    return tf.reduce_sum(tf.cast(squared, tf.float32))


LOSS = {"softmax_log": softmax_log, "sqrt_backward": sqrt_backward, "where_grad": where_grad, "data_nan": data_nan}
LOSS["float16"] = float16
w = tf.Variable(tf.ones(3) if bug not in ("softmax_log", "data_nan") else tf.constant([[1.0, -1.0]] * 3))


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        loss = LOSS[bug](w, x)
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


for x in _twin_data.batches(bug):
    print(float(train_step(tf.constant(x))))
