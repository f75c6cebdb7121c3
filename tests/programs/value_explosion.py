"""Values that explode: a state multiplied by 20 every step (a recurrence with a gain far above 1), recorded in
FULL_TENSOR mode so the magnitudes are in the dump. Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    state = tf.Variable([0.5, -0.25, 1.0])

    @tf.function
    def step():
        grown = tf.multiply(state, 20.0, name="grown")  # EXPLODES: x20 per step
        state.assign(grown)
        return tf.reduce_max(tf.abs(grown))

    for _ in range(6):
        print(float(step()))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_TENSOR")
