"""The trigger step's batch kept on the device, written only in the check's rare branch: the step hands nothing back
to the host. Used by `fit` when its train step is not XLA-compiled (under XLA a variable cannot change shape and the
last batch of an epoch is shorter: there the step returns its batch with its logs, capsule/callback.py).

Why not the logs: every extra output of the train function costs its handling on the host each step (Keras wraps
the outputs in an `Optional`, reduces them per replica and maps them in Python): about 6 % of a 0.9 ms MLP step
(bench/README.md, #35), for a batch read once per run. And under `steps_per_execution=N` the train function returns
the last of its N steps' outputs only: a trigger in an inner step had no batch on the host (the capsule held the
execution's last batch, the manifest its first index).

Held: one variable per leaf of the batch (shape free, dtype of the leaf), filled with the capture slot (the first
trigger not yet written), read by the host when it writes the capsule. TensorFlow is imported in the training process
only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader.capsule_manifest import BatchSpec

from . import structure


class BatchStash:
    def __init__(self) -> None:
        self.on = False  # set by the callback: fit, train step not XLA-compiled
        self.spec: BatchSpec = {"kind": "none"}
        self.names: list[str] = []
        self.variables: list[Any] = []

    def capture(self, batch: Any, free: Any) -> list[Any]:
        """Inside the rare branch: the batch's leaves into the stash when the capture slot is `free` (a bool tensor
        read before the slot is taken: a later trigger must not overwrite the batch of the capture held)."""
        import tensorflow as tf

        if not self.on or batch is None:
            return []
        self.spec, leaves = structure.flatten(batch, fit=True)
        tensors = [tf.convert_to_tensor(leaf) for _, leaf in leaves]
        with tf.init_scope():  # made once, for the batch structure of the first trace (a new structure: new ones)
            if [v.dtype for v in self.variables] != [t.dtype for t in tensors]:
                self.variables = [
                    tf.Variable(
                        tf.zeros([0] * t.shape.rank if t.shape.rank is not None else [0], t.dtype),
                        shape=tf.TensorShape(None),
                        trainable=False,
                        name="nan_capsule_batch",
                    )
                    for t in tensors
                ]
        self.names = [name for name, _ in leaves]

        def keep() -> Any:
            with tf.control_dependencies([v.assign(t) for v, t in zip(self.variables, tensors)]):
                return tf.constant(True)

        return [tf.cond(free, keep, lambda: tf.constant(False))]

    def read(self) -> structure.Flat | None:
        """The held batch (host side, at the capsule's writing), or None when none was stashed."""
        if not self.on or not self.variables:
            return None
        return structure.Flat(self.spec, [(n, np.asarray(v.numpy())) for n, v in zip(self.names, self.variables)])
