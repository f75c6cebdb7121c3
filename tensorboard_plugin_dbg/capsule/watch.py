"""The in-graph watch (its check's ops in capsule/check.py, what the manifest records of the program in
capsule/run_info.py): one training step's loss and gradients checked before the update, the update applied only
when all are finite; the other branch of the `tf.cond` (which costs nothing until it runs) records the trigger and
the pre-step state in device variables (capsule/shadow.py) and nothing else, so the step compiles with XLA. The host
reads the trigger counter every `check_every` steps and at the epoch's end (no read per step), takes that step's
batch (kept on the device by the rare branch, capsule/stash.py, or on the host), and writes the capsule.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import Trigger

from . import announce, calls, check, distribute, forensics, replay_mode, run_info, shadow, stash, structure, writer
from . import spike as spike_rules
from .layer_history import STEPS, LayerHistory
from .spike import SpikeRules

ON_NAN = ("stop", "skip", "raise")
CHECK_NAME = "nan_capsule_check"  # the every-step cond (its If op keeps this name in the train step's graph)


class NanCapsuleError(RuntimeError):
    """Raised after the step (on_nan="raise") with the capsule's folder."""


class Watch:
    """The state shared by the Keras callback and the custom-loop helper (capsule/callback.py)."""

    # trace-time stash, one per thread (each replica of a MirroredStrategy step is traced in a thread of its own)
    traced_batch, traced_loss, traced_snapshot = distribute.PerThread(), distribute.PerThread(), distribute.PerThread()
    applies_traced = distribute.PerThread()  # fit: checked applies in the train step this thread traces

    def __init__(
        self,
        directory: str,
        on_nan: str = "stop",
        max_capsules: int = 1,
        tfdbg_buffer: int = 0,
        check_every: int = 16,
        spike: float | None = None,
        grad_spike: float | None = None,
        layer_history: int = STEPS,
        previous_batch: bool | None = None,
    ) -> None:
        if on_nan not in ON_NAN:
            raise ValueError(f"on_nan must be one of {', '.join(ON_NAN)}, not {on_nan!r}")
        self.spikes = SpikeRules(spike_rules.validated("spike", spike), spike_rules.validated("grad_spike", grad_spike))
        if check_every < 1:
            raise ValueError(f"check_every must be a positive number of steps, not {check_every!r}")
        self.check_every = check_every
        self.state = shadow.DeviceState(copy_all=on_nan == "skip")
        self.history = LayerHistory(layer_history)  # per-variable gradient norm and max |w| (#36)
        self.stash = stash.BatchStash()  # fit: the batches kept on the device
        self.previous_batch = previous_batch  # keep the last step's batch every step (None: with XLA only)
        self.steps_per_execution = 1  # fit: train steps per call of the train function
        # the host side of the last calls of the step: (first step, epoch, its batch index, batch, fit), until the
        # next poll (one entry per call: steps_per_execution steps under fit, the batch None when the device keeps it)
        self.recent: list[tuple[int, Any, Any, Any, bool]] = []
        self.steps_run = 0  # steps the host started (the device counts the same steps)
        self.polled_at = 0
        self.host_reads = 0  # device-to-host reads of the trigger counter (tests check that they are rare)
        self.compiled: bool | None = None  # XLA on for the train step (fit: model.jit_compile; a loop: its trace)
        self.directory = os.path.abspath(directory)
        self.on_nan = on_nan
        self.max_capsules = max_capsules
        self.model: Any = None
        self.optimizer: Any = None
        self.epoch: int | None = None
        self.batch_index: int | None = None
        self.source = "custom_loop"
        self.captured: list[str] = []  # capsule folders written
        self.announcements: list[announce.Announcement] = []  # what announce.py said at each capture
        self.triggers = 0  # non-finite steps seen by the host (skip mode goes on counting)
        self.pending: Trigger | None = None  # the trigger of the last step, until handled after it
        # tf.Variable, +inf once stopped (else 0): later steps of one execution apply nothing (replicated steps; one
        # device's steps keep the flag in the device state's record, capsule/shadow.py)
        self.halt: Any = None
        # trace-time stash (fit): the batch and pre-step state of the train step being traced, and its loss
        self.traced_batch = None
        self.traced_loss = None
        self.traced_snapshot = None
        # the layout of every checked apply traced (a GAN's train step applies two optimizers; the device state's
        # `held_apply` holds the index of the one whose trigger the slot holds)
        self.layouts: list[list[tuple[str, str]]] = []
        self.applies_traced = None  # fit: checked applies in the train step being traced (None: not fit)
        self.fit_batch_spec: tuple[Any, list[str]] = ({"kind": "none"}, [])
        self.replay_checked: tuple[list[tuple[str, str]], list[Any]] | None = None
        self.replay = replay_mode.from_env()
        self.flight: Any = None  # flight.FlightRecorder when tfdbg_buffer > 0 (not in replay: that dumps in full)
        if self.replay is not None:
            if not self.replay.compiled_run():  # else after the compiled pass (callback._replay_fit)
                self.replay.start_dumping()  # before anything is traced: functions traced earlier are not instrumented
        elif tfdbg_buffer:
            from .flight import FlightRecorder

            self.flight = FlightRecorder(tfdbg_buffer)

    # --- attaching ----------------------------------------------------------------------------------------------

    def attach(self, model: Any, optimizer: Any) -> None:
        import tensorflow as tf

        self.model, self.optimizer = model, optimizer
        if self.halt is None:
            with tf.init_scope():
                self.halt = tf.Variable(0.0, trainable=False, name="nan_capsule_halt")

    def loss_scaled(self, optimizer: Any = None) -> bool:
        """A LossScaleOptimizer skips overflowing steps on purpose: then the gradients are not a trigger."""
        from keras.optimizers import LossScaleOptimizer

        return isinstance(optimizer or self.optimizer, LossScaleOptimizer)

    def snapshot(self) -> list[tuple[str, Any]]:
        """The model's non-trainable variables (BatchNorm statistics, dropout seed states) read now, before the
        forward pass moves them: the capsule holds the state the step started from."""
        import tensorflow as tf

        names = structure.unique_names([v.path for v in self.model.variables])
        return [(n, tf.identity(v.value)) for n, v in zip(names, self.model.variables) if not v.trainable]

    # --- the checked update (graph, XLA-compiled or eager) --------------------------------------------------------

    def checked_apply(
        self, apply_fn: Any, grads: Any, variables: Any, loss: Any, batch: Any, fit: bool, optimizer: Any = None
    ) -> Any:
        """apply_fn(grads, variables) when the loss and every gradient are finite, else the capture into the device
        state (capsule/shadow.py); a bool tensor: whether the update was applied. Nothing here leaves the device:
        the step compiles with XLA, and the host reads the trigger counter at its own cadence (`poll`). `optimizer`:
        the one applying (fit may watch several: a GAN's own); a train step's later applies count no new step."""
        import tensorflow as tf

        applying = optimizer if optimizer is not None else self.optimizer
        if not fit:  # a custom loop: XLA on when its tf.function has jit_compile (fit: model.jit_compile)
            self.compiled = check.traced_for_xla()
        first_of_step = not self.applies_traced
        if self.applies_traced is not None:
            self.applies_traced += 1

        grads, variables = list(grads), list(variables)
        names = structure.unique_names(
            [getattr(v, "path", getattr(v, "name", str(i))) for i, v in enumerate(variables)]
        )
        present = [(n, g) for n, g in zip(names, grads) if g is not None]
        checked = [] if self.loss_scaled(applying) else [(n, check.values(g)) for n, g in present]
        if loss is not None:
            checked.insert(0, ("loss", loss))
        layout = [("loss" if i == 0 and loss is not None else "gradient", n) for i, (n, _) in enumerate(checked)]
        if self.replay is not None:
            replay_mode.build(applying, variables)  # as below: its captured state is put back once traced
        if self.replay is not None and self.replay.dumping:
            return self._replayed_check(layout, [t for _, t in checked])
        if self.replay is not None:  # the compiled pass: the checked tensors (of every apply) leave as its outputs
            kept = self.replay_checked if self.replay_checked is not None and not first_of_step else ([], [])
            self.replay_checked = (kept[0] + layout, kept[1] + [t for _, t in checked])
            return tf.constant(False)
        snapshot = dict(self.traced_snapshot or [])
        if distribute.replicated():  # every replica's check reduced before any applies (capsule/distribute.py)
            step = distribute.Apply(applying, variables, first_of_step)
            return distribute.checked_apply(
                self, apply_fn, grads, step, layout, [t for _, t in checked], snapshot, batch, fit
            )
        state = self.state
        state.layout = layout
        self.layouts.append(layout)
        apply_index = len(self.layouts) - 1
        state.pre_step_names = sorted(snapshot)
        if not applying.built:  # its variables exist before the device state copies them (skip mode)
            with tf.init_scope():
                applying.build(variables)
        state.ensure(self.model, self.optimizer)
        rules = self.spikes
        # the per-layer ring: once a step (a GAN's second apply would advance it twice); its sum of squares serves
        # the grad_spike rule's global norm too
        on = self.history.on and first_of_step
        norms, due = self.history.record(names, grads, variables, bool(self.compiled)) if on else ([], None)
        squares = tf.add_n(norms) if norms and rules.on else None
        values = [check.values(g) for _, g in present]
        spiky, measured = rules.measure(loss, values, squares) if rules.on else (None, {})

        def apply() -> Any:
            apply_fn(grads, variables)
            if rules.on:
                with tf.control_dependencies([rules.record(measured)]):
                    return tf.constant(True)
            return tf.constant(True)

        def capture() -> Any:
            free = tf.equal(state.slot.value(), 0)  # read before the slot is taken: the slot's content written with it
            stashed = self.stash.capture(batch, free, state.counter.value() - 1, state) if fit else []
            held = tf.where(free, tf.constant(apply_index, tf.int64), state.held_apply.value())
            stashed.append(state.held_apply.assign(held))
            stashed += [self.history.hold(state.slot.value())] if self.history.on else []  # the ring as it was (#36)
            with tf.control_dependencies(stashed):
                recorded = [state.capture([t for _, t in checked], snapshot, self.model, self.optimizer)]
            recorded += [rules.capture(measured)] if rules.on else []
            recorded += calls.undo_forward(self.model, snapshot)
            with tf.control_dependencies(recorded), tf.control_dependencies([state.triggers.assign_add(1)]):
                if self.on_nan != "skip":
                    state.halted.assign(1)
                return tf.constant(False)

        def measured_apply() -> Any:  # a due step of the ring's max |w| (#36): measured before the update
            with tf.control_dependencies([self.history.measure()]):
                return apply()

        def rare() -> Any:
            """Halted, non-finite, or finite values whose sum overflowed: told apart here, off the every-step path
            (and the ring's due steps: finite without the ring's due term, they measure and apply)."""
            if due is not None:
                return check.unlowered(tf.cond(finite(tensors), measured_apply, unsure))  # the taken branch alone runs
            return unsure()

        def unsure() -> Any:
            exact = check.all_finite([t for _, t in checked])
            if spiky is not None:
                exact = tf.logical_and(exact, tf.logical_not(spiky))
            return tf.cond(state.halted.value() > 0, halted, lambda: tf.cond(exact, apply, capture))

        def halted() -> Any:
            with tf.control_dependencies(calls.undo_forward(self.model, snapshot)):
                return tf.constant(False)

        tensors = [t for _, t in checked]
        if norms and len(checked) > int(loss is not None):  # the ring's sums check the gradients (#36)
            tensors = tensors[: int(loss is not None)] + norms
        with tf.control_dependencies([state.count_step()] if first_of_step else []):
            halt = tf.where(state.halted.value() > 0, math.inf, 0.0)  # +inf: one sum says "finite, not halted"

        def finite(checked_tensors: list[Any]) -> Any:
            go = check.sum_finite(checked_tensors, halt, bool(self.compiled))
            return go if spiky is None else tf.logical_and(go, tf.logical_not(spiky))

        # the ring's due term (+inf when max |w| is due, #36) joins the one sum
        return check.unlowered(tf.cond(finite(tensors + [due] * (due is not None)), apply, rare, name=CHECK_NAME))

    def record_compiled(self, arrays: list[np.ndarray]) -> None:
        """The compiled pass's checked values (host side): its trigger, if any, recorded for the verdict."""
        replay = self.replay
        assert replay is not None and self.replay_checked is not None
        layout = self.replay_checked[0]
        trigger: Any = shadow.first_bad(layout, [capsule_files.health_counts(a) for a in arrays])
        if trigger["kind"] == "unknown":
            expected = replay.capsule.trigger if replay.capsule is not None else {}
            trigger = _replayed_spike(expected, layout, arrays)
        replay.compiled_pass = True
        if trigger is not None:
            replay.record(trigger)

    def _replayed_check(self, layout: list[tuple[str, str]], checked: list[Any]) -> Any:
        """Replay: no check in the dumped step (its cond's branch functions took the loss as a Placeholder, which the
        analysis then named as the first producer) and no update; the host counts the checked tensors' NaN/inf."""
        import tensorflow as tf

        replay = self.replay
        assert replay is not None

        expected = replay.capsule.trigger if replay.capsule is not None else {}

        def record(*values: Any) -> bool:
            arrays = [np.asarray(v) for v in values]
            trigger = shadow.first_bad(layout, [capsule_files.health_counts(a) for a in arrays])
            if trigger["kind"] == "unknown":
                trigger = _replayed_spike(expected, layout, arrays)
            if trigger is not None:
                replay.record(trigger)
            return False

        return tf.py_function(record, checked, Tout=tf.bool) if checked else tf.constant(False)

    # --- the host side, at the step boundary -----------------------------------------------------------------------

    def keep_batch(self, batch: Any, fit: bool, steps: int = 1) -> None:
        """The step's batch as the host has it (device tensors or arrays: a reference, no copy; None when the device
        keeps it, capsule/stash.py), kept until the next poll: the device records which step triggered, the host
        keeps where that step was. `steps`: steps the call ran (fit's steps_per_execution; the epoch's last call may
        run fewer: the poll at the epoch's end sets the count from the device)."""
        self.recent.append((self.steps_run, self.epoch, self.batch_index, batch, fit))
        del self.recent[: -(self.check_every + 1)]
        self.steps_run += steps

    def poll(self, force: bool = False) -> None:
        """Every `check_every` steps (and at the epoch's end): one read of the device's trigger counter. On a new
        trigger the capsule is written from the device state (the pre-step variables, copied there by the step)."""
        if not force and self.steps_run - self.polled_at < self.check_every:
            return
        self.polled_at = self.steps_run
        state = self.state
        if state.triggers is None:
            return
        seen = calls.read_counts(self)  # the one device-to-host read, every check_every steps
        self.host_reads += 1
        if seen == self.triggers:
            return
        new = state.read_triggers(self.triggers, seen)
        self.triggers = seen
        for count, (device_step, held) in enumerate(new):
            if held and self.layouts:  # the layout of the apply that triggered (one read, at a held trigger only)
                state.layout = self.layouts[state.held_apply.numpy()]
            trigger = state.trigger() if held else {"kind": "unknown", "name": "?", "health": {}, "all": []}
            if held and trigger["kind"] == "unknown":
                trigger = self.spikes.trigger() or trigger
            if self.replay is not None:
                self.replay.record(trigger)
                state.release()
                continue
            kept = calls.call_of(self.recent, device_step, self.steps_per_execution)
            epoch, batch_index = (
                (kept[1], calls.batch_index(kept[2], device_step - kept[0])) if kept else (self.epoch, self.batch_index)
            )
            batch = (kept[3] if kept[3] is not None else self.stash.read(state)) if held and kept else None
            folder = None
            if held and len(self.captured) < self.max_capsules and kept is not None and batch is not None:
                step = state.step.numpy()
                folder = self._write(batch, kept[4], trigger, step, epoch, batch_index)
                if self.flight is not None:
                    self.flight.flush_into(folder)
                self.captured.append(folder)
                trigger["capsule"] = folder
                self.announcements.append(announce.capture(folder))  # one block on stderr: what, where, how to replay
                self.stash.warn_missing(folder)  # never silent: a batch its XLA buffer could not hold
            if held:
                state.release()
            if self.on_nan == "skip":
                entry = {"step": device_step, "epoch": epoch, "batch_index": batch_index, "trigger": trigger["name"]}
                writer.append_skip(self.directory, dict(entry, capsule=folder))
            if count == 0:
                self.pending = trigger

    def _write(self, batch: Any, fit: bool, trigger: Any, step: int, epoch: Any, batch_index: Any) -> str:
        if isinstance(self.state, distribute.ReplicaState):  # the replicas' rows, kept on the device at the trigger
            spec, arrays, replicas = self.state.read_batch()
        else:
            (spec, arrays), replicas = structure.arrays_of(batch, fit), None
        weights, optimizer = self.state.read_variables(self.model, self.optimizer)
        manifest = {
            "step": step,
            "epoch": epoch,
            "batch_index": batch_index,
            "trigger": trigger,
            "on_nan": self.on_nan,
            "source": self.source,
            "loss_scale": self.loss_scaled(),
            "batch_structure": spec,
            "pre_step_state": self.state.pre_step_names,  # read before the forward pass (the rest are unchanged)
            "compiled": self.compiled,
            "rules": {"non_finite": True, **self.spikes.manifest()},
            "program": writer.program_info(),
            **run_info.environment(),
        }
        if self.stash.missing is not None and not arrays:
            manifest["batch_missing"] = self.stash.missing  # replay then says it cannot (capsule/callback.py)
        if replicas is not None:
            manifest["replicas"] = replicas  # (folder_name adds the other workers' capsules to worker 0's)
        groups = {"batch": arrays, "weights": weights, "optimizer": optimizer, "rng": run_info.rng_state()}
        moved_on = weights if self.on_nan == "skip" else None  # later steps applied: the loss from the stored state
        extra, manifest["forensics"] = forensics.at_trigger(self, spec, arrays, batch, moved_on)  # per-sample loss
        groups.update(extra)
        extra, manifest["layer_history"] = self.history.read()  # the last K steps per variable (optional group)
        groups.update(extra)
        return writer.write_capsule(self.directory, distribute.folder_name(step, replicas), manifest, groups)


def _replayed_spike(expected: Trigger, layout: list[tuple[str, str]], arrays: list[np.ndarray]) -> Any:
    """A spike capsule's replay: the trigger again when the replayed value is above the capture's threshold."""
    kind = expected.get("kind")
    if kind not in ("loss_spike", "grad_spike") or not arrays:
        return None
    if kind == "loss_spike":
        value = float(np.abs(arrays[0]).astype(np.float64).max()) if layout[0][0] == "loss" else 0.0
    else:
        grads = [a for (k, _), a in zip(layout, arrays) if k == "gradient"]
        value = float(np.sqrt(sum(float(np.square(g.astype(np.float64)).sum()) for g in grads)))
    return dict(expected, value=value) if value > float(expected.get("threshold", np.inf)) else None
