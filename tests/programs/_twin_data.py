"""The batches of tests/programs/tf_bugs.py and jax_bugs.py: the same data for both twins of each bug (the second
batch triggers it)."""

import numpy as np


def batches(bug):
    if bug == "softmax_log":
        return [np.array([[1.0, 2.0, 3.0]], np.float32), np.array([[100.0, -100.0, 300.0]], np.float32)]
    if bug in ("sqrt_backward", "where_grad"):
        return [np.array([1.0, 1.0, 1.0], np.float32), np.array([1.0, 0.0, 1.0], np.float32) * (bug == "where_grad")]
    if bug == "data_nan":
        return [np.ones((2, 3), np.float32), np.array([[1.0, np.nan, 2.0], [0.0, 1.0, 1.0]], np.float32)]
    return [np.array([1.0, 100.0, 2.0], np.float32), np.array([1.0, 300.0, 2.0], np.float32)]
