"""One deterministic training program (op determinism, fixed seeds): two runs must compare equal.
Args: DUMP_DIR RUN_LABEL [MODE] (the label only tells the two runs apart)."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(3, "FULL_HEALTH"))
tf.keras.utils.set_random_seed(3)
tf.config.experimental.enable_op_determinism()

w1 = tf.Variable(tf.random.normal([8, 16], seed=1))
w2 = tf.Variable(tf.random.normal([16, 1], seed=2))
xs = tf.random.normal([32, 8], seed=3)
ys = tf.random.normal([32, 1], seed=4)


@tf.function
def train(x, y):
    with tf.GradientTape() as tape:
        h = tf.nn.relu(tf.matmul(x, w1))
        loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) - y))
    g1, g2 = tape.gradient(loss, [w1, w2])
    w1.assign_sub(0.01 * g1)
    w2.assign_sub(0.01 * g2)
    return loss


for _ in range(5):
    train(xs, ys)
