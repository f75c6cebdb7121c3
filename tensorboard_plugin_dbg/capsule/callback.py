"""`NanCapsule`: the Keras callback (one item in `model.fit(callbacks=[...])`) and the custom-loop helper.

In `fit`, `set_model` runs before Keras makes its train function; it wraps, on the instances only, the model's
`train_step` (to see the batch and read the pre-step state), `compute_loss` (to see the loss) and the optimizer's
`apply` (to check the loss and gradients first and apply only when all are finite), then drops any train function
made earlier so that the next one is traced with the check. XLA is turned off for the train step (the capture is a
`tf.py_function`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import keras

from . import announce
from .replay_mode import ReplayMismatch
from .watch import NanCapsuleError, Watch


class NanCapsule(keras.callbacks.Callback):  # keras ships no types: its base class is Any
    """Capture the batch and the state at the first non-finite loss or gradient, before the update is applied.

    model.fit(x, y, callbacks=[NanCapsule("capsules/")])

    on_nan: "stop" (end training, the default: the step after the trigger applies nothing and ends the loop), "skip"
    (leave the update out, go on, list the batch in capsules/skipped.jsonl) or "raise" (NanCapsuleError at the next
    step's begin or the epoch's end). max_capsules: capsules written per run (skip
    mode goes on listing the later ones). With a LossScaleOptimizer, gradients that overflow are its business (it
    skips those steps): only a non-finite loss triggers. tfdbg_buffer=N (off by default, costly: tfdbg2's own cost)
    runs tfdbg2 (CURT_HEALTH) with a circular buffer of N events during training and flushes it into CAPSULE/tfdbg/
    at the trigger (create the NanCapsule before the model's functions are traced).

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

    def __init__(self, directory: str, on_nan: str = "stop", max_capsules: int = 1, tfdbg_buffer: int = 0) -> None:
        super().__init__()
        self.capsule = Watch(directory, on_nan, max_capsules, tfdbg_buffer)
        # the watched train function fit ran last, and what it was traced for: the next fit with this callback runs
        # it again instead of tracing anew (a loop calling fit once per epoch paid a trace per call)
        self._kept: tuple[Any, Any] | None = None

    @property
    def captured(self) -> list[str]:
        """The capsule folders written so far."""
        return list(self.capsule.captured)

    @property
    def triggered(self) -> bool:
        return self.capsule.triggers > 0

    # --- model.fit ------------------------------------------------------------------------------------------------

    def set_model(self, model: Any) -> None:
        super().set_model(model)
        watch = self.capsule
        watch.source = "fit"
        watch.attach(model, model.optimizer)
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
        self._after_trigger()

    def _after_trigger(self) -> None:
        if self.capsule.pending is not None and self._handle() == "stop":
            self.model.stop_training = True

    def on_train_end(self, logs: Any = None) -> None:
        if self.model.train_function is not None:
            self._kept = (_traced_for(self.model), self.model.train_function)
        _uninstall(self.model)
        self._after_trigger()
        announce.into_history(self.model, self.capsule.announcements)

    def _handle(self) -> str:
        """After a step that triggered: what the loop does next ('stop', 'skip'; 'raise' raises)."""
        watch = self.capsule
        trigger, watch.pending = watch.pending, None
        if watch.on_nan == "raise":
            where = trigger.get("capsule") if trigger else None
            raise NanCapsuleError(f"non-finite {trigger['name'] if trigger else '?'}; capsule: {where}")
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
            yield _as_tensors(watch.replay.batch())
            watch.replay.finish()
        for index, batch in enumerate(iterable):
            watch.batch_index = index
            yield batch
            if watch.pending is not None and self._handle() == "stop":
                return


def _install(model: Any, watch: Watch) -> None:
    optimizer = model.optimizer
    original_apply = optimizer.apply
    original_step = model.train_step
    original_loss = model.compute_loss

    def apply(grads: Any, trainable_variables: Any = None) -> Any:
        variables = trainable_variables if trainable_variables is not None else model.trainable_variables
        return watch.checked_apply(original_apply, grads, variables, watch.traced_loss, watch.traced_batch, fit=True)

    def train_step(data: Any) -> Any:
        watch.traced_batch, watch.traced_loss, watch.traced_snapshot = data, None, watch.snapshot()
        try:
            return original_step(data)
        finally:
            watch.traced_batch, watch.traced_loss, watch.traced_snapshot = None, None, None

    def compute_loss(*args: Any, **kwargs: Any) -> Any:
        loss = original_loss(*args, **kwargs)
        if watch.traced_batch is not None:
            watch.traced_loss = loss
        return loss

    _uninstall(model)
    optimizer.apply, model.train_step, model.compute_loss = apply, train_step, compute_loss
    model.nan_capsule_installed = True
    if model.jit_compile:
        warnings.warn("NanCapsule: XLA turned off for the train step (its capture is a tf.py_function)", stacklevel=3)
        model.jit_compile = False
    model.train_function = None  # traced again, with the check


def _traced_for(model: Any) -> tuple[Any, ...]:
    """What a train function was traced against: the model, its optimizer and its compile (each compile makes new
    metric objects, its loss tracker first, which the function updates: a recompiled model must trace again)."""
    return (model, model.optimizer, model.jit_compile, *model.metrics)


def _same(kept: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    return len(kept) == len(now) and all(a is b for a, b in zip(kept, now))


def _uninstall(model: Any) -> None:
    if model is None or not getattr(model, "nan_capsule_installed", False):
        return
    for owner, name in ((model.optimizer, "apply"), (model, "train_step"), (model, "compute_loss")):
        if name in vars(owner):
            delattr(owner, name)
    model.nan_capsule_installed = False
    model.train_function = None


def _replay_fit(model: Any, watch: Watch) -> None:
    """Inside fit's set_model: the captured state restored, the captured batch through one train step, the end."""
    import tensorflow as tf

    replay = watch.replay
    assert replay is not None
    try:
        replay.restore(model, model.optimizer)
    except ReplayMismatch as e:
        replay.cannot(str(e))
    step = tf.function(model.train_step)
    step(_as_tensors(replay.batch()))
    replay.finish()


def _as_tensors(batch: Any) -> Any:
    import tensorflow as tf

    return tf.nest.map_structure(lambda v: v if v is None else tf.convert_to_tensor(v), batch)
