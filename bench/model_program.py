"""The "user program" whose stack frames and source text the synthetic benchmark dumps point to.

It is a real, runnable deep-MLP training loop with the classic bug of the Debugger V2 tutorial (log of a softmax
output that underflows to 0), but the benchmark never runs it: `bench/generate.py` embeds this file's text as the
dump's user source file and points each synthetic op's innermost user frame at the line below that creates it, so
the source panel and the "user frame" logic are exercised on real lines.
"""

import sys

import tensorflow as tf

LAYERS = 285
WIDTH = 128
BATCH = 64


def make_weights(layers, width):
    weights = []
    for _ in range(layers):
        w = tf.Variable(tf.random.normal([width, width], stddev=0.5))
        b = tf.Variable(tf.zeros([width]))
        weights.append((w, b))
    return weights


def dense(h, w, b):
    z = tf.matmul(h, w)
    z = tf.nn.bias_add(z, b)
    return tf.nn.relu(z)


def cross_entropy(logits, labels):
    probs = tf.nn.softmax(logits)
    log_probs = tf.math.log(probs)
    per_example = tf.reduce_sum(labels * log_probs, axis=1)
    return -tf.reduce_mean(per_example)


def main(dump_dir, steps=100):
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode="FULL_HEALTH", circular_buffer_size=-1)
    weights = make_weights(LAYERS, WIDTH)
    optimizer = tf.optimizers.SGD(learning_rate=5.0)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            h = x
            for w, b in weights:
                h = dense(h, w, b)
            loss = cross_entropy(h, y)
        variables = [v for pair in weights for v in pair]
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    x = tf.random.normal([BATCH, WIDTH])
    y = tf.one_hot(tf.random.uniform([BATCH], maxval=WIDTH, dtype=tf.int32), WIDTH)
    for step in range(steps):
        loss = train_step(x, y)
        print(step, float(loss))


if __name__ == "__main__":
    main(sys.argv[1])
