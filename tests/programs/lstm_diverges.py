"""A time-series LSTM as keras-io's forecasting examples build it, trained with a learning rate far too high
(#38 item 9): SGD at lr=1e4 makes the loss grow step over step until it overflows. Synthetic data of the right
shapes (a noisy sine, windows of 10 steps, the next value as target) stands in for the weather data.
The line a person would change is the optimizer's (CULPRIT). Args: DUMP_DIR [MODE]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
tf.keras.utils.set_random_seed(0)
rng = np.random.RandomState(0)
series = np.sin(np.arange(200) / 8.0) + 0.1 * rng.randn(200)
windows = np.stack([series[i : i + 10] for i in range(96)])[..., None].astype("float32")
targets = series[10:106, None].astype("float32")
model = tf.keras.Sequential([tf.keras.Input((10, 1)), tf.keras.layers.LSTM(8), tf.keras.layers.Dense(1)])
model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=1e4), loss="mse")  # CULPRIT
model.fit(windows, targets, batch_size=16, epochs=2, shuffle=False, verbose=0)
