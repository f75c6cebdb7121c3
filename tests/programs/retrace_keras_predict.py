"""Control for #38 item 4: `predict` on batches of a new size each call. Keras's `one_step_on_data_distributed`
(Keras's code) is traced again for the second size, then relaxed to any batch size (`reduce_retracing`): two
traces, none after — nothing the user need change, no retracing finding. Args: DUMP_DIR [MODE]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
for step in range(6):
    x = np.random.RandomState(step).rand(8 + step, 4).astype("float32")
    model.predict(x, verbose=0)
