"""The in-graph watch: one training step's loss and gradients checked before the update, the update applied only
when all are finite, and the capture (a `tf.py_function` in the other branch of a `tf.cond`, so it costs nothing
until it runs) handing the batch, loss, gradients and pre-step state to Python, which writes the capsule.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any

import numpy as np

from tensorboard_plugin_dbg.reader import capsule_files

from . import announce, forensics, replay_mode, structure, writer

ON_NAN = ("stop", "skip", "raise")
CHECK_NAME = "nan_capsule_check"  # the every-step cond (its If op keeps this name in the train step's graph)


class NanCapsuleError(RuntimeError):
    """Raised after the step (on_nan="raise") with the capsule's folder."""


class Watch:
    """The state shared by the Keras callback and the custom-loop helper (capsule/callback.py)."""

    def __init__(self, directory: str, on_nan: str = "stop", max_capsules: int = 1, tfdbg_buffer: int = 0) -> None:
        if on_nan not in ON_NAN:
            raise ValueError(f"on_nan must be one of {', '.join(ON_NAN)}, not {on_nan!r}")
        self.directory = os.path.abspath(directory)
        self.on_nan = on_nan
        self.max_capsules = max_capsules
        self.model: Any = None
        self.optimizer: Any = None
        self.epoch: int | None = None
        self.batch_index: int | None = None
        self.source = "custom_loop"
        self.captured: list[str] = []  # capsule folders written
        self.announcements: list[dict[str, Any]] = []  # what announce.py said at each capture
        self.triggers = 0  # non-finite steps seen (skip mode goes on counting)
        self.pending: dict[str, Any] | None = None  # the trigger of the last step, until handled after it
        self.halt: Any = None  # tf.Variable, +inf once stopped (else 0): later steps of one execution apply nothing
        # trace-time stash (fit): the batch and pre-step state of the train step being traced, and its loss
        self.traced_batch: Any = None
        self.traced_loss: Any = None
        self.traced_snapshot: list[tuple[str, Any]] | None = None
        self.replay = replay_mode.from_env()
        self.flight: Any = None  # flight.FlightRecorder when tfdbg_buffer > 0 (not in replay: that dumps in full)
        if self.replay is not None:
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

    def loss_scaled(self) -> bool:
        """A LossScaleOptimizer skips overflowing steps on purpose: then the gradients are not a trigger."""
        from keras.optimizers import LossScaleOptimizer

        return isinstance(self.optimizer, LossScaleOptimizer)

    def snapshot(self) -> list[tuple[str, Any]]:
        """The model's non-trainable variables (BatchNorm statistics, dropout seed states) read now, before the
        forward pass moves them: the capsule holds the state the step started from."""
        import tensorflow as tf

        names = structure.unique_names([v.path for v in self.model.variables])
        return [(n, tf.identity(v.value)) for n, v in zip(names, self.model.variables) if not v.trainable]

    # --- the checked update (graph or eager) --------------------------------------------------------------------

    def checked_apply(self, apply_fn: Any, grads: Any, variables: Any, loss: Any, batch: Any, fit: bool) -> Any:
        """apply_fn(grads, variables) when the loss and every gradient are finite, else the capture; a bool tensor:
        whether the update was applied."""
        import tensorflow as tf

        grads, variables = list(grads), list(variables)
        names = structure.unique_names(
            [getattr(v, "path", getattr(v, "name", str(i))) for i, v in enumerate(variables)]
        )
        present = [(n, g) for n, g in zip(names, grads) if g is not None]
        checked = [] if self.loss_scaled() else [_values(g) for _, g in present]
        if loss is not None:
            checked.insert(0, loss)
        spec, leaves = structure.flatten(batch, fit) if batch is not None else ({"kind": "none"}, [])
        snapshot = self.traced_snapshot or []

        def apply() -> Any:
            apply_fn(grads, variables)
            return tf.constant(True)

        def capture() -> Any:
            inputs = [tf.convert_to_tensor(leaf) for _, leaf in leaves]
            inputs += [tf.cast(loss, tf.float32) if loss is not None else tf.constant(0.0)]
            inputs += [tf.convert_to_tensor(g) for _, g in present] + [t for _, t in snapshot]
            sizes = (len(leaves), len(present))
            layout = ([n for n, _ in leaves], [n for n, _ in present], [n for n, _ in snapshot], loss is not None)
            on_trigger = functools.partial(self._on_trigger, spec, sizes, layout)
            handled = tf.py_function(on_trigger, inputs, Tout=tf.bool)
            with tf.control_dependencies([handled]):
                if self.on_nan != "skip":
                    self.halt.assign(math.inf)
                return tf.logical_not(tf.identity(handled))

        def rare() -> Any:
            """Halted, non-finite, or finite values whose sum overflowed: told apart here, off the every-step path."""
            exact = _all_finite(checked)
            return tf.cond(self.halt > 0, lambda: tf.constant(False), lambda: tf.cond(exact, apply, capture))

        go = _sum_finite(checked, self.halt)  # the halt flag is +inf: one sum says "finite and not halted"
        return _unlowered(tf.cond(go, apply, rare, name=CHECK_NAME))

    # --- Python side of the capture -----------------------------------------------------------------------------

    def _on_trigger(self, spec: Any, sizes: tuple[int, int], layout: Any, *values: Any) -> bool:
        batch_names, grad_names, snap_names, has_loss = layout
        arrays = [np.asarray(v) for v in values]  # a view of the tensor's buffer (.numpy() copies)
        n_batch, n_grads = sizes
        batch = dict(zip(batch_names, arrays[:n_batch]))
        loss = arrays[n_batch] if has_loss else None
        grads = dict(zip(grad_names, arrays[n_batch + 1 : n_batch + 1 + n_grads]))
        snapshot = dict(zip(snap_names, arrays[n_batch + 1 + n_grads :]))
        trigger = _trigger(loss, grads)
        self.triggers += 1
        self.pending = trigger
        if self.replay is not None:
            self.replay.record(trigger)
            return True
        step = int(self.optimizer.iterations.numpy())
        folder = None
        if len(self.captured) < self.max_capsules:
            folder = self._write(spec, batch, snapshot, trigger, step)
            if self.flight is not None:
                self.flight.flush_into(folder)
            self.captured.append(folder)
            trigger["capsule"] = folder
            self.announcements.append(announce.capture(folder))  # one block on stderr: what, where, how to replay
        if self.on_nan == "skip":
            entry = {"step": step, "epoch": self.epoch, "batch_index": self.batch_index, "trigger": trigger["name"]}
            writer.append_skip(self.directory, dict(entry, capsule=folder))
        return True

    def _write(
        self, spec: Any, batch: dict[str, np.ndarray], snapshot: dict[str, np.ndarray], trigger: Any, step: int
    ) -> str:
        names = structure.unique_names([v.path for v in self.model.variables])
        weights = {n: snapshot[n] if n in snapshot else _read(v) for n, v in zip(names, self.model.variables)}
        opt_names = structure.unique_names([v.path for v in self.optimizer.variables])
        optimizer = {n: _read(v) for n, v in zip(opt_names, self.optimizer.variables)}
        manifest = {
            "step": step,
            "epoch": self.epoch,
            "batch_index": self.batch_index,
            "trigger": trigger,
            "on_nan": self.on_nan,
            "source": self.source,
            "loss_scale": self.loss_scaled(),
            "batch_structure": spec,
            "pre_step_state": sorted(snapshot),  # variables read before the forward pass (the rest are unchanged)
            "program": writer.program_info(),
            **environment(),
        }
        groups = {"batch": batch, "weights": weights, "optimizer": optimizer, "rng": rng_state()}
        extra, manifest["forensics"] = forensics.at_trigger(self, spec, batch)  # per-sample loss (optional group)
        groups.update(extra)
        return writer.write_capsule(self.directory, f"capsule-step{step:09d}", manifest, groups)


def _read(variable: Any) -> np.ndarray:
    """A Keras variable's value as numpy without the copy `.numpy()` makes (the read is a fresh tensor already:
    nothing else writes to it)."""
    value = getattr(variable, "value", variable)
    return np.asarray(value.read_value() if hasattr(value, "read_value") else value)


def _sum_finite(tensors: list[Any], halt: Any) -> Any:
    """The every-step check, one reduction per tensor (each op costs its dispatch on the step's critical path): a
    sum is NaN or infinite when any value is, and finite values make a non-finite sum only by overflowing, which
    `_all_finite` then tells apart on the rare path. `halt` (0, or +inf once stopped) joins the same sum."""
    import tensorflow as tf

    sums = [tf.cast(tf.reduce_sum(t), tf.float32) if t.dtype != tf.float32 else tf.reduce_sum(t) for t in tensors]
    return tf.math.is_finite(tf.add_n([*sums, halt.value()]))


def _all_finite(tensors: list[Any]) -> Any:
    import tensorflow as tf

    checks = [tf.reduce_all(tf.math.is_finite(t)) for t in tensors]
    return tf.reduce_all(tf.stack(checks)) if checks else tf.constant(True)


def _unlowered(result: Any) -> Any:
    """Keep the check's `If` op a function call instead of lowering it to Switch/Merge: one Switch in a train step's
    graph moves TensorFlow's executor off its fast path for graphs without control flow, for every op of the step
    (about +10-20 % step time on a small MLP). TensorFlow itself keeps conds unlowered this way
    (`execute_fn_for_device`); there is no public switch for it, hence the op attribute."""
    from tensorflow.core.framework import attr_value_pb2

    op = getattr(result, "op", None)  # None when eager: the cond ran at once, nothing to lower
    if op is not None and op.type == "Identity":
        op = op.inputs[0].op
    if op is not None and op.type in ("If", "StatelessIf"):
        op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))  # noqa: SLF001 - see above
    return result


def _values(grad: Any) -> Any:
    return grad.values if hasattr(grad, "values") and hasattr(grad, "indices") else grad  # IndexedSlices


def _trigger(loss: np.ndarray | None, grads: dict[str, np.ndarray]) -> dict[str, Any]:
    """The first non-finite of the step (the loss, else the first gradient in the variables' order), and all."""
    bad = []
    for kind, name, value in [("loss", "loss", loss)] + [("gradient", n, g) for n, g in grads.items()]:
        if value is None:
            continue
        if np.issubdtype(value.dtype, np.inexact) and np.isfinite(value).all():
            continue  # one pass for the finite ones (most of them), the three counts for the bad
        health = capsule_files.health_counts(value)
        if health["nan"] or health["pos_inf"] or health["neg_inf"]:
            bad.append({"kind": kind, "name": name, "health": health})
    if not bad:  # the check saw a non-finite value that a dense copy does not show (cannot happen in practice)
        return {"kind": "unknown", "name": "?", "health": {}, "all": []}
    return dict(bad[0], all=bad)


def rng_state() -> dict[str, np.ndarray]:
    """TensorFlow's global generator state (Keras layers' seed states are model variables, kept with the weights)."""
    import tensorflow as tf

    try:
        return {"tf_global_generator": tf.random.get_global_generator().state.numpy()}
    except Exception:  # noqa: BLE001 - no global generator in this context: nothing to keep
        return {}


def environment() -> dict[str, Any]:
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
