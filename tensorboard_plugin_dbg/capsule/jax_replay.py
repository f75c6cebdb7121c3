"""Replay of a capsule from Keras 3 on JAX, in the user's own program: `python -m tensorboard_plugin_dbg replay
CAPSULE` runs the program through its launcher (tensorboard_plugin_dbg/replay_jax.py), which hands this module the
JAX writer's `enable_dump_debug_info`/`disable_dump_debug_info` (the capsule imports wire/, reader/ and writer/
only, not the JAX writer). At `fit`'s `set_model` the NanCapsule restores the capsule's weights and optimizer state,
starts the JAX writer into CAPSULE/replay/, runs Keras's own train step once on the captured batch under a `jax.jit`
made then (so it is recorded, its ops and lines included), counts the loss's and gradients' NaN/inf on the host,
writes the verdict (capsule/replay_mode.py) and ends the program.

The replayed step has no check in it (the capsule's machinery is never the answer): the batch's leaves are the
jitted function's inputs in the capsule's order (the analysis reads their values from batch.npz), the model's and
optimizer's state is closed over. JAX compiles that one step as the run compiled its own (XLA, with the writer's
counts added), so there is no separate compiled pass."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_files

from . import jax_check, replay_mode, shadow, structure

# the JAX writer's calls ("enable", "disable"), handed in by the replay launcher before the program runs
WRITER: dict[str, Callable[..., object]] = {}
NO_WRITER = (
    "a capsule from Keras on JAX replays through `python -m tensorboard_plugin_dbg replay CAPSULE` with a Python "
    "command (python train.py ... or python -m module ...): its launcher starts the JAX writer"
)


class JaxReplay(replay_mode.Replay):
    def start_dumping(self) -> None:
        if "enable" not in WRITER:
            self.cannot(NO_WRITER)
        self.dumping = True
        shutil.rmtree(self.dump_dir, ignore_errors=True)
        WRITER["enable"](self.dump_dir, tensor_debug_mode=self.mode, circular_buffer_size=-1)

    def stop_dumping(self) -> None:
        if "disable" in WRITER:
            WRITER["disable"]()

    def compiled_run(self) -> bool:
        return False  # the writer records inside the compiled step: one pass is the run's compiled one


def of(replay: replay_mode.Replay | None) -> JaxReplay | None:
    return None if replay is None else JaxReplay(replay.folder, replay.mode)


def run(model: Any, replay: JaxReplay) -> None:
    """The captured step, replayed under the JAX writer; then the verdict and the end of the program."""
    import jax
    from keras.optimizers import LossScaleOptimizer

    try:
        replay.restore(model, model.optimizer)
    except replay_mode.ReplayMismatch as e:
        replay.cannot(str(e))
    leaves, tree = jax.tree_util.tree_flatten(replay.batch())
    groups = (model.trainable_variables, model.non_trainable_variables, model.optimizer.variables)
    state = tuple([v.value for v in group] for group in (*groups, model.metrics_variables))
    traced: structure.Tensors = {}
    layout: list[tuple[str, str]] = []  # what the step's last outputs are (names: set as it traces)
    original_step = model.train_step
    loss_scaled = isinstance(model.optimizer, LossScaleOptimizer)

    def train_step(*batch: Any) -> Any:  # named as fit's step is (jit_train_step in the dump)
        logs, _ = original_step(state, jax.tree_util.tree_unflatten(tree, list(batch)))
        checked = jax_check.checked_of(model, traced, loss_scaled)
        layout[:] = [(kind, name) for kind, name, _ in checked]
        return logs, [t for _, _, t in checked]

    jax_check.see(model, traced)
    replay.start_dumping()
    try:
        _, values = jax.jit(train_step)(*leaves)  # jax.jit now: the recording jit
    finally:
        jax_check.unsee(model)
    found = shadow.first_bad(layout, [capsule_files.health_counts(np.asarray(v)) for v in values])
    if found["kind"] != "unknown":
        replay.record(found)
    replay.finish()
