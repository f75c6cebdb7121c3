"""A program whose dump grows while the dashboard watches (circular_buffer_size=-1: events stream to disk).

Args: DUMP_DIR GATE_DIR [steps]. Before each step it writes GATE_DIR/ready<step> and waits for GATE_DIR/go<step>.
Steps are clean until the last one, which takes the log of a zero (−∞), so the test sees rows first and an alert
later, without a reload. After each step the writer is flushed so the events reach disk now, not at exit.
"""

import os
import sys
import time

import _common

tf = _common.enable(sys.argv[1], "FULL_HEALTH", -1)
gate, steps = sys.argv[2], int(_common.arg(3, "3"))


@tf.function
def step_fn(x):
    y = tf.nn.softmax(x * 3.0, name="live_probs")
    return tf.reduce_sum(tf.math.log(y, name="live_log"))


for step in range(steps):
    open(os.path.join(gate, f"ready{step}"), "w").close()
    deadline = time.time() + 120
    while not os.path.exists(os.path.join(gate, f"go{step}")) and time.time() < deadline:
        time.sleep(0.05)
    # The last step underflows the softmax to exactly 0, so its log is -inf: the alert appears live.
    scale = 1.0 if step < steps - 1 else 1000.0
    step_fn(tf.constant([[1.0, 2.0, 3.0]]) * scale)
    _common.flush()
open(os.path.join(gate, "finished"), "w").close()
