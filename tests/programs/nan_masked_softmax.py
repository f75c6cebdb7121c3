"""Attention-style masking: -inf is added on purpose every step and softmax absorbs it, until a step masks a whole
row and softmax returns NaN. The line to fix is the softmax (CULPRIT); the mask line (MASK) makes the benign -inf.
Args: DUMP_DIR [MODE]."""

import _common

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))


@tf.function
def attend(scores, keep):
    bias = tf.where(keep, 0.0, float("-inf"))  # MASK
    weights = tf.nn.softmax(scores + bias, axis=-1)  # CULPRIT
    return tf.reduce_sum(weights * scores)


scores = tf.constant([[1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5]])
for step in range(6):  # step k masks the first k keys of row 1: at step 4 the whole row is masked
    keep = tf.constant([[True, True, True, False], [i >= step for i in range(4)]])
    print(step, float(attend(scores, keep)))
