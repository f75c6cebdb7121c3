"""Written after keras-io's "Writing a training loop from scratch" guide (guides/writing_a_training_loop_from_
scratch.py: a Keras model, an optimizer, a loss function, a `tf.function` train_step over a tf.data dataset), on
small synthetic MNIST-shaped data (784 features, 10 classes). The bug: the inputs are standardised per feature
with statistics computed by hand, and a feature that is constant in the training set (a border pixel, always 0)
has a standard deviation of 0: 0/0 = NaN. The line a person would change is that division (CULPRIT).
Args: DUMP_DIR."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
keras = tf.keras
keras.utils.set_random_seed(0)
rng = np.random.RandomState(0)
x_train = rng.rand(64, 784).astype("float32")
x_train[:, :28] = 0.0  # the top row of pixels is always blank
y_train = rng.randint(0, 10, 64)
mean, std = tf.reduce_mean(x_train, axis=0), tf.math.reduce_std(x_train, axis=0)
model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(10)])
optimizer = keras.optimizers.SGD(learning_rate=1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(16)


@tf.function
def train_step(x, y):
    x = (x - mean) / std  # CULPRIT
    with tf.GradientTape() as tape:
        loss_value = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    return loss_value


for x_batch, y_batch in train_dataset:
    train_step(x_batch, y_batch)
