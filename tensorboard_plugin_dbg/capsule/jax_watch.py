"""`NanCapsule` on Keras 3's JAX backend (`KERAS_BACKEND=jax`): capsule/callback.py hands `fit` to this watch.

`set_model` wraps, on the instances only, the model's `train_step` (Keras jits it for `fit`), the optimizer's
`stateless_apply` (to see the gradients) and the model's `_update_metrics_variables` (to see the unscaled loss at the
step's own trace level), then drops any train function made earlier. The wrapped step runs Keras's own, checks the
loss and every gradient and keeps the old trainable, non-trainable and optimizer state when any is non-finite
(capsule/jax_check.py). The train function is wrapped too: the iterator it pulls its batch from hands the step the
previous step's carry beside the batch, and keeps a reference to the batch on the host (the very arrays the step
got: a capsule holds them bit for bit); the carry comes back in the logs and is taken out before Keras sees them.

The host reads the carry's trigger counter every `check_every` steps and at the epoch's end (`fit` on JAX syncs
nothing per step either). On a trigger the update was held back from then on, so the model's state, synced from the
loop (`model.jax_state_sync()`, Keras's own way for a callback to read the state mid-epoch), is the trigger step's
pre-step state; the capsule is written from it with the format TensorFlow's capsules have (capsule/jax_capsule.py).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterator
from typing import Any

from . import announce, jax_capsule, jax_check, jax_replay, replay_mode, structure, writer
from .watch import ON_NAN

CARRY_KEY = "nan_capsule_carry"
TF_ONLY = ("tfdbg_buffer", "spike", "grad_spike")  # options the JAX watch has not got yet


class _NoStash:
    on = False  # the host keeps every step's batch (forensics.py reads this)


class JaxWatch:
    """The state of one NanCapsule on JAX (the callback reads captured, triggers, pending, on_nan, poll)."""

    def __init__(
        self, directory: str, on_nan: str = "stop", max_capsules: int = 1, check_every: int = 16, **options: Any
    ):
        if on_nan not in ON_NAN:
            raise ValueError(f"on_nan must be one of {', '.join(ON_NAN)}, not {on_nan!r}")
        if check_every < 1:
            raise ValueError(f"check_every must be a positive number of steps, not {check_every!r}")
        given = [name for name in TF_ONLY if options.get(name)]
        unknown = sorted(set(options) - set(TF_ONLY) - {"layer_history"})
        if given or unknown:
            raise ValueError(
                f"NanCapsule on the JAX backend does not take {', '.join(given + unknown)} "
                "(spike rules and the tfdbg2 buffer are TensorFlow's only so far)"
            )
        self.directory = os.path.abspath(directory)
        self.on_nan, self.max_capsules, self.check_every = on_nan, max_capsules, check_every
        self.model: Any = None
        self.optimizer: Any = None
        self.source, self.compiled = "fit", True
        self.stash = _NoStash()
        self.state = None  # no tf.distribute replicas (forensics.py asks, as it asks the TensorFlow watch)
        self.steps_per_execution = 1
        self.epoch: int | None = None
        self.batch_index: int | None = None
        self.captured: list[str] = []
        self.announcements: list[announce.Announcement] = []
        self.triggers = 0
        self.pending: Any = None
        self.host_reads = 0  # device-to-host reads of the trigger counter (tests check that they are rare)
        # (host step, epoch, batch index, batch, fit) of the steps since the last poll (forensics.py reads these),
        # and beside each the step's own carry (its trigger flag and counts)
        self.recent: list[tuple[int, Any, Any, Any, bool]] = []
        self.flags: list[jax_check.Carry] = []
        self.steps_run = self.polled_at = 0
        self.carry: jax_check.Carry | None = None
        self.layout: list[tuple[str, str]] = []  # what the step checks, in order (traced), and their sizes
        self.sizes: list[int] = []
        # the watched train function the last fit ran, and what it was made for (a fit per epoch compiles once)
        self.kept: tuple[tuple[Any, ...], Any] = ((), None)
        self.traced: structure.Tensors = {}  # the loss and gradients of the step being traced (jax_check.see)
        self.replay = jax_replay.of(replay_mode.from_env())  # replay mode: set_model replays the capsule's step

    def attach(self, model: Any, optimizer: Any) -> None:
        raise ValueError(
            "NanCapsule on the JAX backend watches model.fit only: a custom JAX training loop is your own jitted "
            "code (record it with tensorboard_plugin_dbg.jax.enable_dump_debug_info)"
        )

    # --- fit -------------------------------------------------------------------------------------------------------

    def set_model(self, model: Any) -> None:
        spe = int(getattr(model, "steps_per_execution", 1) or 1)
        if spe > 1:
            raise ValueError(
                f"NanCapsule on the JAX backend watches steps_per_execution=1 only (got {spe}): each step hands the "
                "next its trigger state"
            )
        self.model, self.optimizer = model, model.optimizer
        self.compiled = bool(model.jit_compile)
        if self.replay is not None:
            jax_replay.run(model, self.replay)  # ends the program
        if self.carry is None:
            self.carry = jax_check.first_carry(self.on_nan != "skip" or self.max_capsules > 0)
        _install(model, self)
        key, kept = self.kept
        if len(key) == len(_traced_for(model)) and all(a is b for a, b in zip(key, _traced_for(model))):
            model.train_function = kept  # the next fit runs the function compiled for the last one

    def detach(self, model: Any) -> None:
        """After fit: the instances as they were; the watched train function kept for the next fit."""
        if "train_step" in vars(model) and model.train_function is not None:
            self.kept = (_traced_for(model), model.train_function)
        _unwrap(model)

    def loss_scaled(self) -> bool:
        from keras.optimizers import LossScaleOptimizer

        return isinstance(self.optimizer, LossScaleOptimizer)

    def traced_step(self, original: Any, state: Any, fed: Any) -> Any:
        """The jitted step: Keras's own, then the check and the held-back update."""
        data, carry = fed
        self.traced.clear()
        logs, new_state = original(state, data)
        checked = jax_check.checked_of(self.model, self.traced, self.loss_scaled())
        self.traced.clear()
        if not checked:  # never silent: a custom train_step that neither applies model.optimizer nor reports a loss
            warnings.warn(NOT_SEEN.format(model=self.model.name), RuntimeWarning, stacklevel=2)
        self.layout = [(kind, name) for kind, name, _ in checked]
        self.sizes = [int(t.size) for _, _, t in checked]
        applies, carry_out = jax_check.check([t for _, _, t in checked], carry)
        kept = jax_check.held_back(applies, tuple(new_state[:3]), tuple(state[:3]))
        return {**logs, CARRY_KEY: carry_out}, (*kept, *new_state[3:])

    # --- the host side -------------------------------------------------------------------------------------------

    def fed(self, iterator: Any) -> Iterator[Any]:
        """The iterator the train function pulls from: the batch with the carry, the batch kept by reference."""
        for data in iterator:
            self.recent.append((self.steps_run, self.epoch, self.batch_index, data, True))
            yield data, self.carry

    def after_step(self, logs: Any) -> Any:
        logs = dict(logs)
        carry = logs.pop(CARRY_KEY)
        self.flags.append(carry)
        self.carry = {k: carry[k] for k in ("halt", "arm", "triggers")}
        del self.recent[: -(self.check_every + 1)]
        del self.flags[: -(self.check_every + 1)]
        self.steps_run += 1
        return logs

    def poll(self, force: bool = False) -> None:
        """Every `check_every` steps and at the epoch's end: one read of the trigger counter; on a new trigger the
        capsule, from the model's state synced now (held at the trigger step's pre-step state)."""
        if self.carry is None or (not force and self.steps_run - self.polled_at < self.check_every):
            return
        self.polled_at = self.steps_run
        seen = int(self.carry["triggers"])
        self.host_reads += 1
        if seen == self.triggers:
            return
        self.triggers = seen
        steps = list(zip(self.recent, self.flags))
        bad = [(kept, flags) for kept, flags in steps if bool(flags["triggered"])]
        if not bad:  # never silent: a trigger the host no longer holds the step of still stops or raises
            self.pending = {"kind": "unknown", "name": "?", "health": {}, "all": []}
        for count, (kept, flags) in enumerate(bad):
            trigger = jax_capsule.trigger(self.layout, self.sizes, flags["counts"])
            folder = None
            if len(self.captured) < self.max_capsules and count == 0:
                folder = jax_capsule.write(self, kept, trigger)
                self.captured.append(folder)
                trigger["capsule"] = folder
                self.announcements.append(announce.capture(folder))
            if self.on_nan == "skip":
                entry = {"step": kept[0], "epoch": kept[1], "batch_index": kept[2], "trigger": trigger["name"]}
                writer.append_skip(self.directory, dict(entry, capsule=folder))
            if count == 0:
                self.pending = trigger
        if self.on_nan == "skip":
            self._held_until_now(steps, bad)

    def _held_until_now(self, steps: list[Any], bad: list[Any]) -> None:
        """Skip mode: the steps after a trigger held their updates until this poll wrote its capsule (the state had
        to stay the trigger's pre-step state): listed as skipped, then the halt released."""
        import jax.numpy as jnp

        first = bad[0][0][0] if bad else math.inf
        for kept, flags in steps:
            if kept[0] > first and bool(flags["held"]) and not bool(flags["triggered"]):
                entry = {"step": kept[0], "epoch": kept[1], "batch_index": kept[2], "trigger": "held"}
                writer.append_skip(self.directory, dict(entry, capsule=None, why=HELD))
        assert self.carry is not None
        arm = len(self.captured) < self.max_capsules
        self.carry = dict(self.carry, halt=jnp.float32(0.0), arm=jnp.float32(1.0 if arm else 0.0))


NOT_SEEN = (
    "NanCapsule: {model}'s train_step neither applied model.optimizer through stateless_apply nor updated the loss "
    "tracker (Keras's JAX train step does both): nothing is checked and no capsule will be written"
)
HELD = "held back from the trigger until the host's next poll wrote the capsule (the pre-step state it holds)"


def _unwrap(model: Any) -> None:
    for name in ("train_step", "make_train_function"):
        if name in vars(model):
            delattr(model, name)
    jax_check.unsee(model)
    model.train_function = None


def _traced_for(model: Any) -> tuple[Any, ...]:
    """What a train function was made for: the model, its optimizer, its compile (new metric objects each time)."""
    return (model, model.optimizer, model.jit_compile, *model.metrics)


def _install(model: Any, watch: JaxWatch) -> None:
    _unwrap(model)  # a fit that ended in an exception left its wrappers: never wrapped twice
    original_step = model.train_step
    original_make = model.make_train_function
    jax_check.see(model, watch.traced)

    def train_step(state: Any, fed: Any) -> Any:
        return watch.traced_step(original_step, state, fed)

    def make_train_function(force: bool = False) -> Any:
        if model.train_function is not None and not force:
            return model.train_function
        original_make(force=True)
        inner = model.train_function

        def train_function(state: Any, iterator: Any) -> Any:
            logs, state = inner(state, watch.fed(iterator))
            return watch.after_step(logs), state

        model.train_function = train_function
        return train_function

    model.train_step, model.make_train_function = train_step, make_train_function
    model.train_function = None  # made again, with the check
