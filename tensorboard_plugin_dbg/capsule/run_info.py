"""What a capsule's manifest and rng group record of the program that wrote it: the versions, the devices, whether
op determinism was on, TensorFlow's global generator state.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

import numpy as np


def rng_state() -> dict[str, np.ndarray]:
    """TensorFlow's global generator state (Keras layers' seed states are model variables, kept with the weights)."""
    import tensorflow as tf

    try:
        return {"tf_global_generator": tf.random.get_global_generator().state.numpy()}
    except Exception:  # noqa: BLE001 - no global generator in this context: nothing to keep
        return {}


def environment() -> dict[str, object]:
    import platform

    import keras
    import tensorflow as tf

    versions = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "tensorboard_plugin_dbg": _package_version(),
    }
    devices = [{"name": d.name, "type": d.device_type} for d in tf.config.list_logical_devices()]
    return {"versions": versions, "devices": devices, "deterministic": _op_determinism()}


def _package_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("tensorboard-plugin-dbg")
    except metadata.PackageNotFoundError:
        return "unknown"


def _op_determinism() -> bool:
    import tensorflow as tf

    try:
        return bool(tf.config.experimental.is_op_determinism_enabled())
    except AttributeError:
        return False
