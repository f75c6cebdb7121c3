"""A long run for the timeline: 600 steps, each an eager op, a tf.function call and another eager op. The call's
log goes -inf at a few early steps and at every step from 380 on, so the run holds more than a page (1,000) of
NaN/∞ alerts and its last alerts lie far past the first page. Every call runs the same graph and writes the same
traces, so the k-th call's traces are the k-th run of them. Args: DUMP_DIR."""

import _common

tf = _common.enable(__import__("sys").argv[1], "CONCISE_HEALTH")
STEPS = 600


@tf.function
def step(x, shift):
    y = tf.math.log(x - shift)  # CULPRIT: log(0) = -inf when shift is 1
    z = y * 2.0
    return tf.reduce_sum(z)


base = tf.constant([1.0, 2.0, 3.0])
for i in range(STEPS):
    bad = i % 50 == 13 or i >= 380
    x = base + 0.0
    s = step(x, tf.constant(1.0 if bad else 0.0))
    t = s + 1.0
print(float(t))
