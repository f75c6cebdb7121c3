"""Streams to disk (circular_buffer_size=-1) and pauses before each step until GATE_DIR/go<step> exists, writing
GATE_DIR/ready<step> when it starts waiting. Args: DUMP_DIR GATE_DIR [steps]."""

import os
import sys
import time

import _common

tf = _common.enable(sys.argv[1], "FULL_HEALTH", -1)
gate, steps = sys.argv[2], int(_common.arg(3, "3"))


@tf.function
def f(x):
    return tf.math.log(x) * 2.0


for step in range(steps):
    open(os.path.join(gate, f"ready{step}"), "w").close()
    deadline = time.time() + 120
    while not os.path.exists(os.path.join(gate, f"go{step}")) and time.time() < deadline:
        time.sleep(0.05)
    for _ in range(40):  # enough records per step to pass TF's ~4 KiB write buffer, so the step reaches disk
        f(tf.constant([float(step), 1.0]))
open(os.path.join(gate, "finished"), "w").close()
