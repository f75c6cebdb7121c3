"""Shared setup of the test programs: quiet TensorFlow, deterministic seeds, dump enabling."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def enable(dump_dir, mode="FULL_HEALTH", buffer_size=-1, **kwargs):
    import tensorflow as tf

    tf.random.set_seed(1)
    tf.debugging.experimental.enable_dump_debug_info(
        dump_dir, tensor_debug_mode=mode, circular_buffer_size=buffer_size, **kwargs
    )
    return tf


def arg(i, default):
    return sys.argv[i] if len(sys.argv) > i else default


def flush():
    """Flushes the dump writer's buffered files, so each step is visible to a live reader at once."""
    from tensorflow.python.debug.lib import dumping_callback

    cb = getattr(dumping_callback._state, "dumping_callback", None)
    writer = cb.get_writer() if cb is not None else None
    if writer is not None:
        writer.FlushNonExecutionFiles()
        writer.FlushExecutionFiles()
