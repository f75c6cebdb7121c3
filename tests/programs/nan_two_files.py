"""Two user files, as a real project has them: the model (its own module, with the tf.function and the log of a
softmax that underflows to zero, CULPRIT) and this training script, whose `loss = step(x)` line (STEP) makes the
model's ops through a call. The model module is written next to the dump (its text is part of this program, so the
dump cache's key covers it) and imported from there. Args: DUMP_DIR."""

import os
import sys

import _common

tf = _common.enable(sys.argv[1], "FULL_HEALTH")

MODEL = '''"""The model of tests/programs/nan_two_files.py."""

import tensorflow as tf


@tf.function
def step(x):
    probs = tf.nn.softmax(tf.stack([x * 40.0, -x * 40.0], axis=-1))
    return -tf.reduce_mean(tf.math.log(probs))  # CULPRIT
'''
code_dir = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "model_code")
os.makedirs(code_dir, exist_ok=True)
with open(os.path.join(code_dir, "nan_model.py"), "w") as f:
    f.write(MODEL)
sys.path.insert(0, code_dir)
import nan_model  # noqa: E402

for scale in (0.1, 5.0):  # the softmax underflows to an exact zero at the second step
    loss = nan_model.step(tf.constant([scale, 2.0 * scale]))  # STEP
    print(float(loss))
