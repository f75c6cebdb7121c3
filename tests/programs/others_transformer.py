"""Written after keras-io's "Text classification with Transformer" example (examples/nlp/text_classification_with_
transformer.py: token and position embeddings, a TransformerBlock, global average pooling, a softmax head), on
small synthetic token ids of the right shape (sequences of 16 ids from a vocabulary of 50, 0 = padding) and a
smaller model. The bug: the block masks padded keys by hand with -inf before the softmax, and one sequence is all
padding, so its attention row is softmax(-inf, ..., -inf) = NaN. The line a person would change is the mask's
(CULPRIT: use a large negative number, or skip fully padded rows). Args: DUMP_DIR."""

import _common
import numpy as np

tf = _common.enable(__import__("sys").argv[1], "FULL_HEALTH")
keras = tf.keras
keras.utils.set_random_seed(0)
maxlen, vocab, embed_dim = 16, 50, 8


class TokenAndPositionEmbedding(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.token_emb = keras.layers.Embedding(vocab, embed_dim)
        self.pos_emb = keras.layers.Embedding(maxlen, embed_dim)

    def call(self, x):
        return self.token_emb(x) + self.pos_emb(tf.range(maxlen))


class TransformerBlock(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.q = keras.layers.Dense(embed_dim)
        self.k = keras.layers.Dense(embed_dim)
        self.v = keras.layers.Dense(embed_dim)
        self.ffn = keras.layers.Dense(embed_dim, activation="relu")
        self.norm = keras.layers.LayerNormalization(epsilon=1e-6)

    def call(self, x, ids):
        scores = tf.matmul(self.q(x), self.k(x), transpose_b=True) / embed_dim**0.5
        padded = tf.cast(tf.equal(ids, 0), tf.float32)[:, None, :]
        scores = tf.where(padded > 0, -np.inf, scores)  # CULPRIT
        attended = tf.matmul(tf.nn.softmax(scores, axis=-1), self.v(x))
        return self.norm(x + self.ffn(attended))


ids = keras.Input(shape=(maxlen,), dtype="int32")
h = TransformerBlock()(TokenAndPositionEmbedding()(ids), ids)
out = keras.layers.Dense(2, activation="softmax")(keras.layers.GlobalAveragePooling1D()(h))
model = keras.Model(ids, out)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
rng = np.random.RandomState(0)
x_train = rng.randint(1, vocab, (32, maxlen))
x_train[:, 12:] = 0  # padding at the end of every sequence
x_train[21] = 0  # an empty review: all padding
y_train = rng.randint(0, 2, 32)
model.fit(x_train, y_train, batch_size=8, epochs=1, verbose=0)
