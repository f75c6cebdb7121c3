"""The bundled buggy training program: the classic bug of the Debugger V2 tutorial.

A small MLP written with low-level TensorFlow APIs classifies scikit-learn's digits (8x8 images shipped inside
scikit-learn, so nothing is downloaded). Its hand-written cross-entropy takes ``tf.math.log(probs)`` of softmax
outputs inside a ``@tf.function``: once a softmax output underflows to exactly 0, ``log`` yields -inf, and
``labels * -inf`` for a zero label yields NaN, which then spreads through the gradients into the weights.

The learning rate and the initial weight scale are deliberately large so that the bug shows in the first few steps,
deterministically (fixed seeds).
"""

from __future__ import annotations

import argparse
import os


def load_digits():
    """Returns (images float32 [N, 64] in [0, 1], one-hot labels float32 [N, 10])."""
    import numpy as np
    from sklearn.datasets import load_digits as sk_load_digits

    digits = sk_load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    return images, labels


def train(
    dump_dir: str | None,
    steps: int = 20,
    tensor_debug_mode: str = "FULL_HEALTH",
    circular_buffer_size: int = -1,
    batch_size: int = 128,
    learning_rate: float = 2.5,
    hidden_units: int = 64,
    seed: int = 1234,
    init_stddev: float = 0.3,
) -> list[float]:
    """Trains the buggy MLP for `steps` steps, writing a tfdbg2 dump to `dump_dir` when given.

    Returns the loss of every step (NaN once the bug has struck).
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    images, labels = load_digits()  # first: without scikit-learn, fail before the dump is started
    if dump_dir:
        tf.debugging.experimental.enable_dump_debug_info(
            dump_dir,
            tensor_debug_mode=tensor_debug_mode,
            circular_buffer_size=circular_buffer_size,
        )

    tf.random.set_seed(seed)
    init = tf.random.normal
    w1 = tf.Variable(init([64, hidden_units], stddev=init_stddev), name="w1")
    b1 = tf.Variable(tf.zeros([hidden_units]), name="b1")
    w2 = tf.Variable(init([hidden_units, 10], stddev=init_stddev), name="w2")
    b2 = tf.Variable(tf.zeros([10]), name="b2")
    variables = [w1, b1, w2, b2]

    def model(x):
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1, name="hidden")
        logits = tf.add(tf.matmul(hidden, w2), b2, name="logits")
        return tf.nn.softmax(logits, name="probs")

    def cross_entropy(probs, labels):
        # THE BUG: log(0) is -inf once a softmax output underflows; 0 * -inf is NaN.
        return -tf.reduce_mean(tf.reduce_sum(labels * tf.math.log(probs), axis=1))  # BUG: log of softmax

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            probs = model(x)
            loss = cross_entropy(probs, y)
        grads = tape.gradient(loss, variables)
        for var, grad in zip(variables, grads):
            var.assign_sub(learning_rate * grad)
        return loss

    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(2048, seed=seed).batch(batch_size)
    losses: list[float] = []
    step = 0
    while step < steps:
        for x, y in dataset:
            if step >= steps:
                break
            losses.append(float(train_step(x, y)))
            step += 1
    if dump_dir:
        tf.debugging.experimental.disable_dump_debug_info()
    return losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train the buggy MLP and write a tfdbg2 dump.")
    parser.add_argument("dump_dir")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--tensor-debug-mode", default="FULL_HEALTH")
    parser.add_argument("--circular-buffer-size", type=int, default=-1)
    args = parser.parse_args(argv)
    losses = train(args.dump_dir, args.steps, args.tensor_debug_mode, args.circular_buffer_size)
    print("losses:", " ".join(f"{x:.4g}" for x in losses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
