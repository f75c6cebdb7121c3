"""First -∞ from a custom Keras layer (log of a ReLU output that is exactly 0), trained with fit.

Args: DUMP_DIR [MODE]."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
import numpy as np
import tensorflow as tf


class LogFeatures(keras.layers.Layer):
    def call(self, x):
        return tf.math.log(x)  # CULPRIT


def main(dump_dir: str, mode: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode=mode, circular_buffer_size=-1)
    keras.utils.set_random_seed(0)
    # The bias makes every ReLU output exactly 0 for non-negative inputs: log(0) = -inf on the first batch.
    model = keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(4, activation="relu", bias_initializer=keras.initializers.Constant(-100.0)),
            LogFeatures(),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer="sgd", loss="mse")
    x = np.abs(np.random.default_rng(0).normal(size=(8, 3))).astype("float32")
    y = np.zeros((8, 1), "float32")
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "FULL_HEALTH")
