"""`NanCapsule`: the Keras callback (one item in `model.fit(callbacks=[...])`) and the custom-loop helper.

In `fit`, `set_model` runs before Keras makes its train function; it wraps, on the instances only, the model's
`train_step` (to see the batch and read the pre-step state), `compute_loss` (to see the loss) and the `apply` of every
optimizer it holds (capsule/optimizers.py; to check the loss and gradients first and apply only when all are finite),
then drops any train function made earlier so that the next one is traced with the check. The train step stays as
compiled as the user set it (`jit_compile=True` keeps XLA): nothing in the check leaves the device. The step keeps
its batch in device variables (capsule/stash.py: the last step's, and at a trigger that batch and the one before it)
and hands nothing back; the host only notes where each call's steps were (`steps_per_execution` steps a call) and
reads the trigger counter every `check_every` steps and at the epoch's end.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import keras
import numpy as np

from . import announce, distribute, jax_watch, replica_replay, structure
from . import optimizers as watched_optimizers
from .replay_mode import ReplayMismatch
from .watch import NanCapsuleError, Watch


class NanCapsule(keras.callbacks.Callback):  # keras ships no types: its base class is Any
    """Capture the batch and the state at the first non-finite loss or gradient, before the update is applied.

    model.fit(x, y, callbacks=[NanCapsule("capsules/")])

    on_nan: "stop" (end training, the default: the step after the trigger applies nothing and ends the loop), "skip"
    (leave the update out, go on, list the batch in capsules/skipped.jsonl) or "raise" (NanCapsuleError at the next
    step's begin or the epoch's end; the host reads the device's trigger counter every check_every=16 steps and at
    each epoch's end, so that is when training stops or raises). max_capsules: capsules written per run (skip
    mode goes on listing the later ones). With a LossScaleOptimizer, gradients that overflow are its business (it
    skips those steps): only a non-finite loss triggers. tfdbg_buffer=N (off by default, costly: tfdbg2's own cost)
    runs tfdbg2 (CURT_HEALTH) with a circular buffer of N events during training and flushes it into CAPSULE/tfdbg/
    at the trigger (create the NanCapsule before the model's functions are traced). spike=F / grad_spike=F (off by
    default, F > 1): a |loss| / global gradient norm above F times the largest of the last 100 applied steps triggers
    like a NaN (capsule/spike.py). previous_batch: keep each step's batch on the device until the next, so that the
    capsule holds the batch before the trigger's too, and its per-sample loss (off by default: a copy of each batch
    every step, measured at some 3-4 % of a small MLP's step with XLA and more without, bench/README.md).

    Custom training loop (eager or inside a tf.function):

        capsule = NanCapsule("capsules/")
        capsule.watch(model, optimizer)
        @tf.function
        def train_step(x, y):
            capsule.begin_step()  # BatchNorm statistics and seed states as the step starts
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            capsule.apply_gradients(grads, model.trainable_variables, loss=loss, batch=(x, y))
        for x, y in capsule.batches(dataset, epoch=epoch):
            train_step(x, y)
    """

    def __init__(self, directory: str, on_nan: str = "stop", **options: Any) -> None:
        """options: max_capsules=1, tfdbg_buffer=0, check_every=16, spike=None, grad_spike=None (see the class)."""
        super().__init__()
        on_jax = keras.backend.backend() == "jax"  # Keras 3 on JAX: capsule/jax_watch.py
        # a Watch, or on JAX a JaxWatch (fit only: the custom-loop methods below end at its attach)
        self.capsule: Any = (jax_watch.JaxWatch if on_jax else Watch)(directory, on_nan, **options)
        # the watched train function fit ran last, and what it was traced for: the next fit with this callback runs
        # it again instead of tracing anew (a loop calling fit once per epoch paid a trace per call)
        self._kept: tuple[Any, Any] | None = None

    @property
    def captured(self) -> list[str]:
        """The capsule folders written so far."""
        return list(self.capsule.captured)

    @property
    def triggered(self) -> bool:
        """Whether a step triggered (reads the device's trigger counter now)."""
        self.capsule.poll(force=True)
        return self.capsule.triggers > 0

    # --- model.fit ------------------------------------------------------------------------------------------------

    def set_model(self, model: Any) -> None:
        super().set_model(model)
        watch = self.capsule
        if isinstance(watch, jax_watch.JaxWatch):
            return watch.set_model(model)
        _supported(model)
        watch.source = "fit"
        watch.compiled = bool(model.jit_compile)
        watch.steps_per_execution = int(getattr(model, "steps_per_execution", 1) or 1)
        watch.stash.on, watch.stash.compiled = True, watch.compiled  # the batch kept on the device (capsule/stash.py)
        watch.stash.unsized = watch.compiled  # sized at this fit's first call
        watch.stash.keep_last = bool(watch.previous_batch)  # a copy every step: opt-in (bench/README.md, #35)
        found = watched_optimizers.of_model(model)  # a custom train_step may apply optimizers of its own (a GAN)
        watch.attach(model, found[0] if len(found) == 1 else watched_optimizers.Several(found))
        _install(model, watch)
        if self._kept is not None and _same(self._kept[0], _traced_for(model)):
            model.train_function = self._kept[1]
        if watch.replay is not None:
            _replay_fit(model, watch)

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self.capsule.epoch = epoch

    # No on_train_batch_end: Keras then turns every step's logs into Python numbers (a device sync per step) and
    # gives up dispatching batch ends asynchronously. A trigger is handled at the next step's begin instead (that
    # step applies nothing: the halt flag is set in the graph) or at the epoch's end.
    def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
        self._after_trigger()
        self.capsule.batch_index = batch

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        self._after_trigger(force=True)

    def _after_trigger(self, force: bool = False) -> None:
        self.capsule.poll(force)
        if self.capsule.pending is not None and self._handle() == "stop":
            self.model.stop_training = True

    def on_train_end(self, logs: Any = None) -> None:
        if self.model.train_function is not None:
            self._kept = (_traced_for(self.model), self.model.train_function)
        _uninstall(self.model)
        if isinstance(self.capsule, jax_watch.JaxWatch):
            self.capsule.detach(self.model)
        self._after_trigger(force=True)  # the last steps' trigger counter read: a capture there is written now
        announce.into_history(self.model, self.capsule.announcements)

    def _handle(self) -> str:
        """After a step that triggered: what the loop does next ('stop', 'skip'; 'raise' raises)."""
        watch = self.capsule
        trigger, watch.pending = watch.pending, None
        if watch.on_nan == "raise":
            where = trigger.get("capsule") if trigger else None
            what = (trigger.get("text") or f"non-finite {trigger['name']}") if trigger else "non-finite ?"
            raise NanCapsuleError(f"{what}; capsule: {where}")
        return watch.on_nan

    # --- custom training loops ------------------------------------------------------------------------------------

    def watch(self, model: Any, optimizer: Any) -> None:
        """Before the loop: the model and optimizer whose state a capsule holds (restored here in replay mode)."""
        self.capsule.attach(model, optimizer)
        replay = self.capsule.replay
        if replay is not None:
            try:
                replay.restore(model, optimizer)
            except ReplayMismatch as e:
                replay.cannot(str(e))

    def begin_step(self) -> None:
        """First thing in the train step, before the forward pass (eager or inside the tf.function): reads the model's
        non-trainable variables (BatchNorm statistics, dropout seed states) as the step starts, so that the capsule
        holds the state the step started from, as in fit. Without it they are read at apply_gradients, after the
        forward pass moved them. Costs one read of those variables per step (no copy to the host)."""
        if self.capsule.model is None:
            raise RuntimeError("call NanCapsule.watch(model, optimizer) before the training loop")
        self.capsule.traced_snapshot = self.capsule.snapshot()

    def apply_gradients(self, grads: Any, variables: Any, loss: Any = None, batch: Any = None) -> Any:
        """`optimizer.apply(grads, variables)` when `loss` and every gradient are finite; else the capsule (batch: the
        step's inputs, any nesting). Returns whether the update was applied (a bool tensor)."""
        watch = self.capsule
        if watch.optimizer is None:
            raise RuntimeError("call NanCapsule.watch(model, optimizer) before the training loop")
        if not watch.optimizer.built:
            watch.optimizer.build(list(variables))  # not inside the tf.cond branch: variables are made once, here
        try:
            return watch.checked_apply(watch.optimizer.apply, grads, variables, loss, batch, fit=False)
        finally:
            watch.traced_snapshot = None  # begin_step's reads belong to this step only

    def batches(self, iterable: Iterable[Any], epoch: int | None = None) -> Iterator[Any]:
        """The loop's batches, counted; ends (stop), goes on (skip) or raises after a step that triggered. In replay
        mode: the captured batch once, then the verdict and the end of the program."""
        watch = self.capsule
        watch.epoch = epoch
        if watch.replay is not None:
            strategy = getattr(watch.model, "distribute_strategy", None)
            yield replica_replay.replay_input(strategy, watch.replay, _as_tensors(watch.replay.batch()))[0]
            watch.poll(force=True)
            watch.replay.finish()
        for index, batch in enumerate(iterable):
            watch.batch_index = index
            watch.keep_batch(batch, fit=False)
            yield batch
            watch.poll()
            if watch.pending is not None and self._handle() == "stop":
                return
        watch.poll(force=True)
        if watch.pending is not None:
            self._handle()


BATCH_KEY = "nan_capsule_batch"  # the step's batch leaves in its logs, taken out before Keras sees them
REPLAY_KEY = "nan_capsule_checked"  # replay's compiled pass: the loss and gradients, out of the compiled step


def _checked(optimizer: Any, model: Any, watch: Watch) -> Any:
    """The optimizer's `apply` (apply_gradients calls it) checked before it applies (on the instance)."""
    original_apply = optimizer.apply

    def apply(grads: Any, trainable_variables: Any = None) -> Any:
        variables = trainable_variables if trainable_variables is not None else model.trainable_variables
        loss, batch = watch.traced_loss, watch.traced_batch
        return watch.checked_apply(original_apply, grads, variables, loss, batch, fit=True, optimizer=optimizer)

    return apply


def _install(model: Any, watch: Watch) -> None:
    optimizers = watched_optimizers.of_model(model)
    original_step = model.train_step
    original_loss = model.compute_loss
    original_make = model.make_train_function
    said: list[bool] = []  # the warning that this train step applies no watched optimizer, once

    def train_step(data: Any) -> Any:
        watch.traced_batch, watch.traced_loss, watch.traced_snapshot = data, None, watch.snapshot()
        watch.applies_traced = 0
        try:
            logs = original_step(data)
        finally:
            watch.traced_batch, watch.traced_loss, watch.traced_snapshot = None, None, None
            applied, watch.applies_traced = watch.applies_traced, None
        if not applied and watch.replay is None and not said:  # never silent: updates go unchecked
            said.append(True)
            warnings.warn(
                watched_optimizers.NOT_WATCHED.format(model=model.name, names=watched_optimizers.names(optimizers)),
                RuntimeWarning,
                stacklevel=2,
            )
        replicated = distribute.replicated()
        if applied and not replicated and watch.replay is None and watch.state.counter is not None:
            watch.stash.step_end(data)  # the step's batch stays on the device
        if not isinstance(logs, dict):
            return logs
        if replicated:  # Keras reduces a replicated step's outputs: the batch is kept on the device
            return {**logs, BATCH_KEY: {}}
        compiled_pass = watch.replay is not None and not watch.replay.dumping
        if compiled_pass and watch.replay_checked is not None:  # replay's compiled pass: the checked tensors
            logs[REPLAY_KEY] = {str(i): t for i, t in enumerate(watch.replay_checked[1])}
        return logs

    def make_train_function(force: bool = False) -> Any:
        if model.train_function is not None and not force:
            return model.train_function
        original_make(force=True)
        return _unwrapping(model, watch)

    def compute_loss(*args: Any, **kwargs: Any) -> Any:
        loss = original_loss(*args, **kwargs)
        if watch.traced_batch is not None:
            watch.traced_loss = loss
        return loss

    _uninstall(model)
    for optimizer in optimizers:
        optimizer.apply = _checked(optimizer, model, watch)
    model.nan_capsule_optimizers = optimizers
    model.train_step, model.compute_loss = train_step, compute_loss
    model.make_train_function = make_train_function
    model.nan_capsule_installed = True
    model.train_function = None  # traced again, with the check


def _unwrapping(model: Any, watch: Watch) -> Any:
    """Keras's train function, wrapped: the batch taken out of the logs and kept on the host (references)."""
    inner = model.train_function

    def train_function(iterator: Any) -> Any:
        # a fit's first call, under XLA: the device's batch buffers sized from its batches (capsule/stash.py)
        iterator, steps = watch.stash.first_call(iterator, watch.steps_per_execution)
        logs = inner(iterator)
        if isinstance(logs, dict) and BATCH_KEY in logs:
            logs = dict(logs)
            leaves = logs.pop(BATCH_KEY)
            spec, names = watch.fit_batch_spec
            named = [(name, leaves[str(i)]) for i, name in enumerate(names)]
            watch.keep_batch(structure.Flat(spec, named), fit=True)
        elif watch.stash.on:  # the device keeps a trigger's batch: the host keeps where this call's steps were
            watch.keep_batch(None, fit=True, steps=steps or watch.steps_per_execution)
        return logs

    model.train_function = train_function
    return train_function


def _supported(model: Any) -> None:
    """What the watch cannot follow yet is said here, at set_model, never a silent no-op or a wrong capsule."""
    distribute.check_supported(model.distribute_strategy)


def _traced_for(model: Any) -> tuple[Any, ...]:
    """What a train function was traced against: the model, its optimizer and its compile (each compile makes new
    metric objects, its loss tracker first, which the function updates: a recompiled model must trace again)."""
    return (model, model.optimizer, model.jit_compile, *model.metrics)


def _same(kept: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    return len(kept) == len(now) and all(a is b for a, b in zip(kept, now))


def _uninstall(model: Any) -> None:
    if model is None or not getattr(model, "nan_capsule_installed", False):
        return
    pairs = [(o, "apply") for o in getattr(model, "nan_capsule_optimizers", [model.optimizer])]
    pairs += [(model, "train_step"), (model, "compute_loss"), (model, "make_train_function")]
    for owner, name in pairs:
        if name in vars(owner):
            delattr(owner, name)
    model.nan_capsule_installed = False
    model.train_function = None


def _replay_fit(model: Any, watch: Watch) -> None:
    """Inside fit's set_model: the captured state restored, the captured batch through one train step, the end."""
    import tensorflow as tf

    replay = watch.replay
    assert replay is not None
    optimizer = watch.optimizer  # model.optimizer, or every optimizer the train step applies (a GAN's own)
    missing = replay.capsule.manifest.get("batch_missing") if replay.capsule is not None else None
    if missing:  # an XLA batch its buffer could not hold (capsule/stash.py): nothing to re-run
        replay.cannot(f"the capsule holds no batch: {missing}")
    try:
        replay.restore(model, optimizer)
    except ReplayMismatch as e:
        replay.cannot(str(e))
    batch = _as_tensors(replay.batch())
    if replay.compiled_run():  # first as the run ran it: XLA-compiled, no dump (tfdbg2 cannot instrument XLA)
        outputs = replay.run_step(tf.function(model.train_step, jit_compile=True), batch, optimizer)
        checked = outputs[REPLAY_KEY]
        watch.record_compiled([np.asarray(checked[str(i)]) for i in range(len(checked))])
        try:
            replay.restore(model, optimizer)  # the forward pass moved BatchNorm statistics and seed states
        except ReplayMismatch as e:
            replay.cannot(str(e))
        model.reset_metrics()  # its loss went into the loss tracker: not a value the dumped pass should read
        replay.start_dumping()
    strategy = model.distribute_strategy  # the run's strategy and replica count where this machine has them
    batch, replicated = replica_replay.replay_input(strategy, replay, batch)
    # then un-compiled under tfdbg2 (traced after the dump began)
    step = (
        tf.function(lambda b: strategy.run(model.train_step, args=(b,)))
        if replicated
        else tf.function(model.train_step)
    )
    replay.run_step(step, batch, optimizer)
    watch.poll(force=True)
    replay.finish()


def _as_tensors(batch: Any) -> Any:
    import tensorflow as tf

    return tf.nest.map_structure(lambda v: v if v is None else tf.convert_to_tensor(v), batch)
