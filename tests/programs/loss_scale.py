"""Mixed precision by design: LossScaleOptimizer multiplies the loss by its scale (2**15 to begin), so the float16
gradients overflow to +/-inf in the first steps; it checks them (all finite?), skips those updates and halves the
scale until the gradients fit. Those infinities are benign: the run is clean, and says how many steps were skipped
and what the scale did. The last Dense layer's bias stays exactly as it was in the skipped steps.
Variant loop_nan: the 13th batch holds a NaN, which no loss scale explains: the forward pass is its root cause.
Args: DUMP_DIR [MODE] [VARIANT: loop | fit | loop_nan]."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], _common.arg(2, "FULL_HEALTH"))
variant = _common.arg(3, "loop")
keras = tf.keras
keras.mixed_precision.set_global_policy("mixed_float16")
keras.utils.set_random_seed(0)  # Keras 3's initializers draw from their own seed: without it the first steps may fit

rng = np.random.RandomState(0)
x = (rng.rand(128, 8) * 10).astype("float32")  # large inputs: the scaled float16 gradients overflow at first
y = rng.rand(128, 1).astype("float32")
if variant == "loop_nan":
    x[12 * 8 + 3, 5] = np.nan
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(1e-6))

applied_after: list[int] = []  # the optimizer's iterations after each step: which steps were skipped

if variant == "fit":
    model.compile(optimizer=optimizer, loss="mse")
    count = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda b, logs: applied_after.append(int(optimizer.iterations.numpy()))
    )
    model.fit(x, y, epochs=2, batch_size=8, verbose=0, callbacks=[count])
else:

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.cast(model(xb), tf.float32) - yb))
            scaled = optimizer.scale_loss(loss)
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply(grads, model.trainable_variables)
        return loss

    for step in range(16):
        train_step(x[step * 8 : step * 8 + 8], y[step * 8 : step * 8 + 8])
        applied_after.append(int(optimizer.iterations.numpy()))
steps = 2 * 16 if variant == "fit" else 16
applied = int(optimizer.iterations.numpy())
leading = next((i for i, n in enumerate(applied_after) if n > 0), len(applied_after))  # skipped before any update
print(f"steps {steps} applied {applied} scale {float(optimizer.dynamic_scale.numpy())} leading_skipped {leading}")
