"""One tf.function call that runs three graphs: its own, a nested tf.function it calls, and a tf.data map function
whose dataset it iterates (the map function is defined outside the call, so its graph is not the call's). Each of
the 3 calls iterates a 4-element dataset; inner's log goes -inf on the element 0. Args: DUMP_DIR."""

import _common

tf = _common.enable(__import__("sys").argv[1], "CONCISE_HEALTH")
ds = tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32) * 2.0)


@tf.function
def inner(x):
    return tf.math.log(x) + 1.0  # log(0) = -inf on the first element


@tf.function
def outer(data):
    total = tf.constant(0.0)
    for v in data:
        total += inner(v)
    return total * 0.5


for _ in range(3):
    out = outer(ds)
    shift = out - 1.0  # an eager op between calls
print(float(shift))
