"""Written after keras-io's "DCGAN to generate face images" example (examples/generative/dcgan_overriding_train_step
.py: a GAN model overriding `train_step`, a discriminator and a generator trained in turn), with dense layers on
small synthetic 8x8 images instead of convolutions on CelebA. The bug: the generator's loss is written by hand as
-log(D(G(z))), and the discriminator, confident early, gives exactly 0 for some fakes (its sigmoid saturates), so
the log is -inf. The line a person would change is that loss (CULPRIT: use BinaryCrossentropy(from_logits=True)).
Args: DUMP_DIR."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
keras = tf.keras
keras.utils.set_random_seed(0)
latent_dim = 4
discriminator = keras.Sequential(
    [keras.Input((64,)), keras.layers.Dense(1, kernel_initializer=keras.initializers.RandomNormal(stddev=30.0))]
)
generator = keras.Sequential([keras.Input((latent_dim,)), keras.layers.Dense(64, activation="tanh")])


class GAN(keras.Model):
    def __init__(self, discriminator, generator):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator

    def compile(self, d_optimizer, g_optimizer):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer

    def train_step(self, real_images):
        batch_size = tf.shape(real_images)[0]
        z = tf.random.normal((batch_size, latent_dim))
        with tf.GradientTape() as tape:
            d_real = tf.sigmoid(self.discriminator(real_images))
            d_fake = tf.sigmoid(self.discriminator(self.generator(z)))
            d_loss = -tf.reduce_mean(tf.math.log(d_real + 1e-7) + tf.math.log(1 - d_fake + 1e-7))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        with tf.GradientTape() as tape:
            d_fake = tf.sigmoid(self.discriminator(self.generator(z)))
            g_loss = -tf.reduce_mean(tf.math.log(d_fake))  # CULPRIT
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        return {"d_loss": d_loss, "g_loss": g_loss}


images = np.random.RandomState(0).rand(64, 64).astype("float32") * 2 - 1
gan = GAN(discriminator, generator)
gan.compile(keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3))
gan.fit(images, epochs=1, batch_size=16, verbose=0)
