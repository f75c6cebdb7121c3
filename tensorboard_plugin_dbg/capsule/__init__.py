"""NaN capsule: at the first non-finite loss or gradient of a training run, the batch and the state before that step,
captured; then `python -m tensorboard_plugin_dbg replay CAPSULE -- python train.py` re-runs that one step under tfdbg2.

    from tensorboard_plugin_dbg.capsule import NanCapsule
    model.fit(x, y, callbacks=[NanCapsule("capsules/")])

    from tensorboard_plugin_dbg import capsule
    c = capsule.load("capsules/")          # numpy only: c.path, c.step, c.batch, c.weights, c.optimizer, c.manifest

Keras and TensorFlow (with KERAS_BACKEND=jax: Keras and JAX, capsule/jax_watch.py) are imported only when
`NanCapsule` is first used; `load` needs numpy alone.
"""

from __future__ import annotations

from typing import Any

from tensorboard_plugin_dbg.reader.capsule_files import Capsule, CapsuleError, load

from . import replay_mode

replay_mode.as_one_worker()  # replay of one worker's capsule: before the program makes its strategy

__all__ = ["Capsule", "CapsuleError", "NanCapsule", "NanCapsuleError", "load"]


def __getattr__(name: str) -> Any:
    if name == "NanCapsule":  # the Keras callback: imports Keras (and TensorFlow) on first use
        from .callback import NanCapsule

        return NanCapsule
    if name == "NanCapsuleError":
        from .watch import NanCapsuleError

        return NanCapsuleError
    raise AttributeError(name)
