"""Written after keras-io's "Variational AutoEncoder" example (examples/generative/vae.py: an encoder to z_mean and
z_log_var, a Sampling layer, a decoder, and a VAE model with its own `train_step`), on small synthetic images of
the right shape (28x28x1 in [0, 1]) and smaller layers. The bug: the reconstruction loss is written by hand as a
binary cross-entropy without an epsilon, and the decoder's sigmoid saturates to exactly 0 or 1 on some pixels,
so log(0) = -inf. The line a person would change is that loss (CULPRIT). Args: DUMP_DIR."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
keras = tf.keras
keras.utils.set_random_seed(0)


class Sampling(keras.layers.Layer):
    def call(self, inputs):
        z_mean, z_log_var = inputs
        eps = tf.random.normal(tf.shape(z_mean))
        return z_mean + tf.exp(0.5 * z_log_var) * eps


latent_dim = 2
encoder_inputs = keras.Input(shape=(28, 28, 1))
x = keras.layers.Flatten()(encoder_inputs)
x = keras.layers.Dense(16, activation="relu")(x)
z_mean = keras.layers.Dense(latent_dim, name="z_mean")(x)
z_log_var = keras.layers.Dense(latent_dim, name="z_log_var")(x)
z = Sampling()([z_mean, z_log_var])
encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")
latent_inputs = keras.Input(shape=(latent_dim,))
h = keras.layers.Dense(28 * 28, kernel_initializer=keras.initializers.RandomNormal(stddev=60.0))(latent_inputs)
decoder_outputs = keras.layers.Reshape((28, 28, 1))(keras.layers.Activation("sigmoid")(h))
decoder = keras.Model(latent_inputs, decoder_outputs, name="decoder")


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder

    def train_step(self, data):
        with tf.GradientTape() as tape:
            z_mean, z_log_var, z = self.encoder(data)
            reconstruction = self.decoder(z)
            bce = data * tf.math.log(reconstruction) + (1 - data) * tf.math.log(1 - reconstruction)  # CULPRIT
            reconstruction_loss = -tf.reduce_mean(tf.reduce_sum(bce, axis=(1, 2)))
            kl_loss = -0.5 * (1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var))
            total_loss = reconstruction_loss + tf.reduce_mean(tf.reduce_sum(kl_loss, axis=1))
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        return {"loss": total_loss}


images = np.random.RandomState(0).rand(32, 28, 28, 1).astype("float32")
vae = VAE(encoder, decoder)
vae.compile(optimizer=keras.optimizers.Adam())
vae.fit(images, epochs=1, batch_size=16, verbose=0)
