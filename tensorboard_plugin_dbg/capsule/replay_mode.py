"""Replay mode, in the user's own program: `python -m tensorboard_plugin_dbg replay CAPSULE -- python train.py`
sets the environment variables below; the NanCapsule in the program then turns tfdbg2 on before anything is traced,
restores the capsule's weights and optimizer state, runs the captured batch through one training step, writes the
verdict (replay.json beside the dump in CAPSULE/replay/) and ends the program."""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from tensorboard_plugin_dbg.reader import capsule_files
from tensorboard_plugin_dbg.reader.capsule_manifest import CompiledPass, Trigger, Verdict

from . import structure

CAPSULE_ENV = "TBDBG_CAPSULE_REPLAY"  # the capsule folder to replay
MODE_ENV = "TBDBG_CAPSULE_REPLAY_MODE"  # FULL_HEALTH (default) or FULL_TENSOR
MODES = ("FULL_HEALTH", "FULL_TENSOR", "CURT_HEALTH", "CONCISE_HEALTH", "SHAPE")
EXIT_DONE, EXIT_CANNOT = 0, 2
# how the replay of one worker's capsule of a MultiWorkerMirroredStrategy run was run (set by `as_one_worker`)
ONE_WORKER: list[str] = []


class Replay:
    def __init__(self, capsule_path: str, mode: str) -> None:
        self.mode = mode
        self.folder = os.path.abspath(capsule_path)
        self.capsule: capsule_files.Capsule | None = None
        self.trigger: Trigger | None = None
        self.dumping = False
        # the step re-run first as the run ran it (XLA-compiled, no dump): whether it ran, and its trigger
        self.compiled_pass = False
        self.compiled_trigger: Trigger | None = None
        self.replicas: str | None = None  # how a tf.distribute capsule's batch was replayed (capsule/distribute.py)
        try:
            self.capsule = capsule_files.load(capsule_path)
            self.folder = self.capsule.path
        except capsule_files.CapsuleError as e:
            self.cannot(str(e))
        self.dump_dir = os.path.join(self.folder, capsule_files.REPLAY_DIR)

    def start_dumping(self) -> None:
        import tensorflow as tf

        self.dumping = True
        shutil.rmtree(self.dump_dir, ignore_errors=True)
        tf.debugging.experimental.enable_dump_debug_info(
            self.dump_dir, tensor_debug_mode=self.mode, circular_buffer_size=-1
        )

    def stop_dumping(self) -> None:  # the JAX writer's in capsule/jax_replay.py
        import tensorflow as tf

        tf.debugging.experimental.disable_dump_debug_info()

    def restore(self, model: Any, optimizer: Any) -> None:
        """The capsule's weights into the model and its optimizer state into the optimizer (built if need be; several
        optimizers, a GAN's own, optimizers.Several: each is built as the step is traced, see `run_step`)."""
        assert self.capsule is not None
        if not optimizer.built and hasattr(optimizer, "build"):
            optimizer.build(model.trainable_variables)
        _assign(model.variables, self.capsule.weights, "model")
        _assign(optimizer.variables, self.capsule.optimizer, "optimizer")

    def run_step(self, step: Any, batch: Any, optimizer: Any) -> Any:
        """STEP (a tf.function) on BATCH with every optimizer holding its captured state: traced first (the trace
        builds each optimizer the step applies with the variables it applies, as the run's first trace did, see
        `build`), then all the captured optimizer state put back, none of it left out, then run."""
        assert self.capsule is not None
        step.get_concrete_function(batch)
        try:
            names = _assign(optimizer.variables, self.capsule.optimizer, "optimizer")
            left = [n for n in self.capsule.optimizer if n not in set(names)]
            if left:
                raise ReplayMismatch(
                    f"the capsule holds optimizer state the program's optimizers lack: {', '.join(left[:5])}"
                )
        except ReplayMismatch as e:
            self.cannot(str(e))
        return step(batch)

    def batch(self) -> Any:
        """The captured batch, nested as captured, tuples where lists were (tf.data stacks lists)."""
        assert self.capsule is not None
        return _tuples(self.capsule.batch_structure())

    def compiled_run(self) -> bool:
        """Whether the captured step ran XLA-compiled (tfdbg2 cannot dump that: the step is first re-run as it ran,
        without dumping, then under tfdbg2 un-compiled). A custom loop's step is its own tf.function, whose jit_compile
        the replay cannot turn off: it runs as the program says (README)."""
        manifest = self.capsule.manifest if self.capsule is not None else {}
        return bool(manifest.get("compiled")) and manifest.get("source") == "fit"  # a loop's own jit cannot be dumped

    def record(self, trigger: Trigger) -> None:
        if not self.dumping:
            self.compiled_pass = True
            self.compiled_trigger = self.compiled_trigger or trigger
        elif self.trigger is None:
            self.trigger = trigger

    def finish(self) -> None:
        """The verdict written, the dump flushed, the program ended."""
        assert self.capsule is not None
        self.stop_dumping()
        expected = self.capsule.trigger
        same = self.trigger is not None and (self.trigger["kind"], self.trigger["name"]) == (
            expected["kind"],
            expected["name"],
        )
        if same and self.trigger is not None and self.trigger.get("threshold") is not None:
            verdict = "reproduced"
            why = (
                f"the replayed {'loss' if self.trigger['kind'] == 'loss_spike' else 'global gradient norm'} "
                f"({self.trigger['value']:.3g}) is again above the rule's "
                f"threshold ({self.trigger['threshold']:.3g}); a spike is finite, so the dump holds no NaN/∞: the "
                "replay's report follows the largest values back from the loss to the batch rows or the line that "
                'made them (its "Loss spike:" sentence)'
            )
        elif same:
            verdict, why = "reproduced", "the replayed step hit the same trigger"
        elif self.trigger is not None:
            # Same batch, same state, non-finite again: the code or the data. Dumping swaps some fused kernels for
            # plain ones, which may move the first non-finite (a NaN gradient behind a finite loss, or the loss).
            verdict = "reproduced"
            why = (
                f"the replayed step went non-finite too, first at {self.trigger['name']} (captured: {expected['name']})"
            )
        else:
            verdict = "not_reproduced"
            why = (
                "the replayed step stayed finite: the NaN depended on something the capsule does not hold "
                "(non-deterministic kernels, state outside the model and optimizer) or on a transient hardware fault"
            )
        if verdict == "not_reproduced" and self.compiled_trigger is not None:
            verdict = "reproduced_only_under_xla"
            why = (
                f"the step compiled with XLA, as the run ran it, triggered again ({self.compiled_trigger['name']}); "
                "un-compiled under tfdbg2 it stayed finite: XLA's kernels differ (fusion, reassociation, "
                "fast-math), so the dump cannot show the op — try the step with jit_compile=False in the run"
            )
        elif self.compiled_pass and verdict == "reproduced" and self.compiled_trigger is None:
            why += "; the XLA-compiled step, as the run ran it, stayed finite"
        if self.replicas and ONE_WORKER:
            self.replicas += f"; {ONE_WORKER[0]}"
        if self.replicas:
            why += f"; {self.replicas}"
        compiled: CompiledPass | None = None
        if self.compiled_run():
            compiled = {"ran": self.compiled_pass, "trigger": self.compiled_trigger}
        self._write(
            {
                "verdict": verdict,
                "reason": why,
                "same_trigger": same and not (self.compiled_pass and self.compiled_trigger is None),
                "trigger": self.trigger,
                "mode": self.mode,
                "compiled": compiled,
                "replicas": self.replicas,
            }
        )
        raise SystemExit(EXIT_DONE)

    def cannot(self, reason: str) -> None:
        self._write({"verdict": "cannot_replay", "reason": reason, "trigger": None, "mode": self.mode})
        raise SystemExit(EXIT_CANNOT)

    def _write(self, verdict: Verdict) -> None:
        if os.path.isdir(self.folder):
            with open(os.path.join(self.folder, capsule_files.VERDICT), "w", encoding="utf-8") as f:
                json.dump(verdict, f, indent=1, default=str)


def as_one_worker() -> None:
    """Replay of one worker's capsule of a MultiWorkerMirroredStrategy run: the run's cluster (TF_CONFIG) set aside
    before the program makes its strategy (NanCapsule is imported first), so the strategy forms no cluster (the other
    workers are not running: its first collective would wait for them for ever) and the replay runs the offending
    replica's rows in this one process (capsule/replica_replay.py `replay_input`); the verdict says so."""
    path = os.environ.get(CAPSULE_ENV)
    if not path or ONE_WORKER:
        return
    try:
        part = capsule_files.load(path).manifest.get("replicas") or {}
    except capsule_files.CapsuleError:
        return  # the Replay says why
    workers = int(part.get("workers", 1))
    if workers > 1:  # TF_CONFIG: one the program set itself (`replay` passes the caller's on to no program)
        os.environ.pop("TF_CONFIG", None)
        ONE_WORKER.append(
            f"run as one process: TF_CONFIG (worker {part.get('worker')} of a {workers}-worker cluster) set aside, "
            "the other workers not started"
        )


def from_env() -> Replay | None:
    path = os.environ.get(CAPSULE_ENV)
    if not path:
        return None
    mode = os.environ.get(MODE_ENV, "FULL_HEALTH")
    return Replay(path, mode if mode in MODES else "FULL_HEALTH")


def build(optimizer: Any, variables: list[Any]) -> None:
    """An optimizer the replayed step applies, made as the run made it at its first trace (capsule/watch.py builds it
    with the variables it applies): its captured state is put back once the step is traced (`Replay.run_step`)."""
    import tensorflow as tf

    if not optimizer.built:
        with tf.init_scope():
            optimizer.build(variables)


def _assign(variables: Any, arrays: capsule_files.Arrays, what: str) -> list[str]:
    """The captured arrays into the program's variables of the same names (every one of them); the names."""
    names = structure.unique_names([v.path for v in variables])
    missing = [n for n in names if n not in arrays]
    if missing:
        raise ReplayMismatch(f"the program's {what} has variables the capsule lacks: {', '.join(missing[:5])}")
    for name, variable in zip(names, variables):
        if tuple(variable.shape) != arrays[name].shape:
            raise ReplayMismatch(f"{name}: shape {tuple(variable.shape)} in the program, {arrays[name].shape} captured")
        variable.assign(arrays[name])
    return names


class ReplayMismatch(Exception):
    """The program's model or optimizer is not the one captured."""


def _tuples(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_tuples(v) for v in value)
    return value
