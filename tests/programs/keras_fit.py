"""Keras Model.fit on a tiny dense model (GradientTape functions: empty Execution.graph_id)."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
tf.keras.utils.set_random_seed(0)  # Keras's initializers ignore tf.random.set_seed

x = np.random.RandomState(0).rand(32, 4).astype("float32")
y = (x.sum(axis=1, keepdims=True) > 2).astype("float32")
model = tf.keras.Sequential(
    [tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(1)]
)
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
