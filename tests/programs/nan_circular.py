"""A circular buffer smaller than the run: the true first NaN (step 2: log(0)) is dropped before exit; every later step
makes a NaN afresh, so the first one kept is a real producer but not the first. Args: DUMP_DIR [BUFFER] [STEPS]."""

import _common

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH", int(_common.arg(2, "40")))


@tf.function
def step(x):
    shifted = 3.0 - x
    return tf.math.log(shifted)  # CULPRIT


for i in range(int(_common.arg(3, "30"))):
    step(tf.constant([float(i) + 1.0, float(i) + 0.5]))
