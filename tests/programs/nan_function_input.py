"""TensorFlow's tutorial bug (debug_mnist_v2.py) in small: a softmax computed by one tf.function is passed into
another, whose log of it makes the first -inf. The log's input is the second function's input placeholder, which TF
does not trace: its health is in the caller's records. Arg 3 "nested": the loss function is called from inside a
third tf.function (a graph-to-graph call) instead of eagerly. Args: DUMP_DIR [MODE] [eager|nested]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
how = _common.arg(3, "eager")


@tf.function
def model(x):
    logits = tf.stack([x * 40.0, -x * 40.0, tf.zeros_like(x)], axis=-1)
    return tf.nn.softmax(logits)


@tf.function
def loss_fn(probs, labels):
    return -tf.reduce_mean(labels * tf.math.log(probs))  # CULPRIT


@tf.function
def step(x, labels):
    return loss_fn(model(x), labels)


labels = tf.constant([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
for scale in (0.1, 1.0, 5.0):  # the softmax underflows to exact zeros at the last step
    x = tf.constant([scale, 2.0 * scale])
    print(float(step(x, labels) if how == "nested" else loss_fn(model(x), labels)))
