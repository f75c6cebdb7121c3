"""A hand-written training loop with two problems of unequal weight (#38 item 9, the findings' ranking): a
`tf.function` evaluation helper called with batches of changing size (retraced each call: slow, harmless), run
first, then a training step whose ReLU layer dies as a learning rate far too high drives its bias negative (the
model stops learning: the finding that matters). The report lists the dead ReLU before the retracing, whatever
their order in time. Args: DUMP_DIR [MODE]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))

x = tf.constant([[1.0, 0.5], [0.2, 0.3], [0.7, 0.1]])
w = tf.Variable([[0.5, -0.2, 0.3], [0.1, 0.4, -0.3]])
b = tf.Variable([0.5, 0.5, 0.5])


@tf.function
def evaluate(batch):
    return tf.reduce_mean(tf.matmul(batch, w))


for rows in range(1, 6):
    print(float(evaluate(tf.ones([rows, 2]))))  # RETRACE: a new batch size each call


@tf.function
def train_step():
    with tf.GradientTape() as tape:
        hidden = tf.nn.relu(tf.matmul(x, w) + b, name="hidden_relu")  # DEAD: all zero once the bias is negative
        loss = tf.reduce_sum(hidden)
    b.assign_sub(100.0 * tape.gradient(loss, b))  # a learning rate far too high drives the bias negative
    return loss


for _ in range(8):
    print(float(train_step()))
