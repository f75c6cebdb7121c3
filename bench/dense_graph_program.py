"""A tf.function whose ops are densely wired and grouped in name scopes, traced and run once with FULL_HEALTH: a
neighbourhood of 8 hops around an op in the middle reaches the route's 300-node cap, so bench/layout_blocking.py can
lay out a real 300-node drawing in Chromium. 30 layers of 30 ops, each layer a scope `layer_<i>` of three scopes
`part_<j>`; each op reads 2-4 ops of the layer before (short edges that cross a lot: dagre's hard case). Args:
DUMP_DIR."""

import os
import random
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

LAYERS, PARTS, OPS = 30, 3, 10


@tf.function
def dense(x):
    rand = random.Random(7)
    previous = [tf.sin(x * float(k)) for k in range(PARTS * OPS)]
    for layer in range(LAYERS):
        current = []
        with tf.name_scope(f"layer_{layer}"):
            for part in range(PARTS):
                with tf.name_scope(f"part_{part}"):
                    for _ in range(OPS):
                        picks = rand.sample(previous, rand.randint(2, 4))
                        current.append(tf.add_n(picks))
        previous = current
    return tf.reduce_sum(tf.add_n(previous))


def main(dump_dir: str) -> None:
    tf.debugging.experimental.enable_dump_debug_info(dump_dir, tensor_debug_mode="FULL_HEALTH", circular_buffer_size=-1)
    print(float(dense(tf.ones([4]))))
    tf.debugging.experimental.disable_dump_debug_info()


if __name__ == "__main__":
    main(sys.argv[1])
