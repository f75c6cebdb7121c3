"""NaN capsule under tf.distribute (#35): real programs on two logical CPU devices (tests/programs/capsule_mirrored.py:
Keras fit, or a custom loop around strategy.run) poison one row of the global batch; no replica may apply that step,
the capsule holds the global batch bit for bit, names the replica that went non-finite and the rows each had."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

from tensorboard_plugin_dbg import capsule
from tensorboard_plugin_dbg.analysis import capsule_layers, capsule_summary
from tensorboard_plugin_dbg.capsule import distribute
from tensorboard_plugin_dbg.reader import capsule_files, capsule_words
from tests import dumps
from tests.capsule_helpers import assert_capsule_is_the_step, assert_replay_holds_no_capsule_machinery
from tests.distribute_helpers import result, run, script_output

pytestmark = pytest.mark.slow
STEPS_PER_EPOCH = 64 // 8  # capsule_mirrored.py: samples // global batch


def assert_no_replica_applied_the_step(out: str) -> None:
    """Every replica's copy of every variable (model and optimizer) bit-equal before and after the poisoned step (after
    it: at the next step's begin, or at the end when training stopped there)."""
    after = os.path.join(out, "post_step.npz")
    pre, post = (
        np.load(os.path.join(out, "pre_step.npz")),
        np.load(after if os.path.exists(after) else out + "/final.npz"),
    )
    assert sorted(pre.files) == sorted(post.files)
    assert any(k.endswith(":1") for k in pre.files)  # the second replica's copies are there
    for key in pre.files:
        assert pre[key].tobytes() == post[key].tobytes(), key


def assert_capsule_holds_the_global_batch(out: str, step: int) -> capsule.Capsule:
    c = capsule.load(os.path.join(out, "capsules"))
    assert c.step == step
    expected = np.load(os.path.join(out, "batch.npz"))
    held = sorted(c.batch.values(), key=lambda a: a.shape[-1], reverse=True)  # x (5 features), then y
    for array, name in zip(held, ("x", "y")):
        assert array.dtype == expected[name].dtype and array.tobytes() == expected[name].tobytes(), name
    pre = np.load(os.path.join(out, "pre_step.npz"))
    for name, value in c.weights.items():
        assert np.array_equal(value, pre[f"w:{name}:0"]), name
    return c


@pytest.mark.parametrize("loop", [False, True], ids=["fit", "custom_loop"])
def test_a_nan_on_the_second_replica_holds_back_every_replica(loop):
    out = run("--loop") if loop else run()
    ended = result(out)
    assert ended["ended"] == "finished" and ended["finite"] and ended["iterations"] == 3
    assert ended["warnings"] == []  # fit's replicas, traced in threads, each applied the watched optimizer
    assert_no_replica_applied_the_step(out)
    c = assert_capsule_holds_the_global_batch(out, 3)
    replicas = c.manifest["replicas"]
    assert replicas["non_finite"] == [1] and replicas["count"] == 2
    assert replicas["rows"] == {"0": [0, 4], "1": [4, 8]}  # the global batch of 8, split in order
    assert c.manifest["trigger"]["health"]["nan"] > 0
    assert capsule_words.where_text(c.manifest) == "step 3, epoch 0, batch 3, replica 1 of 2"
    if not loop:  # the device keeps the trigger step's rows only: no previous batch (it read an empty one)
        assert c.manifest["forensics"]["previous"]["why"].startswith("not kept: under tf.distribute"), c.manifest


@pytest.mark.parametrize("loop", [False, True], ids=["fit", "custom_loop"])
def test_a_replica_whose_loss_alone_is_nan_holds_back_every_replica(loop):
    """Each device decides from its copy of the all-reduced gradients (capsule/local_decision.py); a replica's loss
    reaches them only as the fold `loss * 0`: a NaN target in a loss term no gradient reaches (replica 1's row 6)
    still holds back every replica's update, and the capsule names replica 1 with each replica's rows."""
    out = run("--loss-nan", *(["--loop"] if loop else []))
    ended = result(out)
    assert ended["ended"] == "finished" and ended["finite"] and ended["iterations"] == 3
    assert_no_replica_applied_the_step(out)
    c = assert_capsule_holds_the_global_batch(out, 3)
    assert c.manifest["replicas"]["non_finite"] == [1] and c.manifest["replicas"]["rows"] == {"0": [0, 4], "1": [4, 8]}
    assert c.manifest["trigger"]["name"] == "loss", c.manifest["trigger"]
    assert [t["kind"] for t in c.manifest["trigger"]["all"]] == ["loss"]  # every gradient finite: the loss alone


def test_a_batch_every_replica_is_handed_whole_is_held_for_each_replica():
    """A custom loop handing strategy.run plain tensors gives every replica the whole global batch. The capture's
    rare path (capsule/local_decision.py `replica_flags`) counted one replica's rows for two replicas' flags and failed
    at trace time; each replica's rows are now its own copy of the batch, in replica order."""
    out = run("--loop", "--whole-batch")
    ended = result(out)
    assert ended["ended"] == "finished" and ended["finite"] and ended["iterations"] == 3
    assert_no_replica_applied_the_step(out)
    c = capsule.load(os.path.join(out, "capsules"))
    assert c.step == 3
    replicas = c.manifest["replicas"]
    assert replicas["non_finite"] == [0, 1] and replicas["rows"] == {"0": [0, 8], "1": [8, 16]}
    expected = np.load(os.path.join(out, "batch.npz"))
    x = max(c.batch.values(), key=lambda a: a.shape[-1])
    assert x.tobytes() == np.concatenate([expected["x"], expected["x"]]).tobytes()


@pytest.mark.parametrize("loop", [False, True], ids=["fit", "custom_loop"])
def test_a_finite_run_ends_with_the_weights_of_the_same_run_without_the_capsule(loop):
    """The fold adds 0 to a finite gradient: every replica's copy of every variable (model and optimizer) after a
    finite run with the capsule is bit-equal to the same run's without it."""
    extra = ["--loop"] if loop else []
    watched, plain = run("--clean", *extra), run("--clean", "--no-capsule", *extra)
    assert result(watched)["triggers"] == 0 and result(plain)["iterations"] == result(watched)["iterations"] == 16
    ours, theirs = np.load(os.path.join(watched, "final.npz")), np.load(os.path.join(plain, "final.npz"))
    assert sorted(ours.files) == sorted(theirs.files) and any(k.endswith(":1") for k in ours.files)
    for key in ours.files:
        assert ours[key].tobytes() == theirs[key].tobytes(), key


@pytest.mark.parametrize("optimizer", [(), ("--adamw",)], ids=["adam", "adamw"])
def test_skip_mode_skips_the_step_on_every_replica_and_they_never_diverge(optimizer):
    """Each device's writes are held back in a cond of that device (capsule/device_gates.py): every write the
    optimizer asks of the strategy, AdamW's weight decay included, is held back on every replica."""
    out = run("--on-nan", "skip", *optimizer)
    ended = result(out)
    assert ended["finite"] and ended["triggers"] == 2  # the poisoned row comes back in the second epoch
    assert ended["iterations"] == 2 * STEPS_PER_EPOCH - 2
    assert_no_replica_applied_the_step(out)
    assert_capsule_holds_the_global_batch(out, 3)
    final = np.load(os.path.join(out, "final.npz"))
    for key in [k for k in final.files if k.endswith(":0")]:
        assert final[key].tobytes() == final[key[:-1] + "1"].tobytes(), key
    with open(os.path.join(out, "capsules", "skipped.jsonl")) as f:
        assert [json.loads(line)["step"] for line in f] == [3, 3 + STEPS_PER_EPOCH]


@pytest.mark.parametrize("loop", [False, True], ids=["fit", "custom_loop"])
def test_a_replica_with_an_empty_shard(loop):
    """65 samples in batches of 8: the last batch has one row, the first replica's; the second's shard is empty. A
    clean run never triggers on it; a NaN in that row is captured with the rows each replica had."""
    mode = ("--loop",) if loop else ()
    clean = result(run(*mode, "--samples", "65", "--clean"))
    assert clean["triggers"] == 0 and clean["captured"] == [] and clean["finite"]
    out = run(*mode, "--samples", "65", "--poison-step", "8", "--poison-row", "0")
    c = capsule.load(os.path.join(out, "capsules"))
    assert c.step == 8 and c.manifest["replicas"]["non_finite"] == [0]
    assert c.manifest["replicas"]["rows"] == {"0": [0, 1], "1": [1, 1]}
    expected = np.load(os.path.join(out, "batch.npz"))
    assert sorted(a.shape[0] for a in c.batch.values()) == [1, 1]
    assert any(a.tobytes() == expected["x"].tobytes() for a in c.batch.values())
    assert_no_replica_applied_the_step(out)


def test_strategies_the_capsule_cannot_watch_are_named():
    """TPUStrategy and ParameterServerStrategy cannot be made on this machine: their instances (uninitialised) are
    enough for the check, which reads the type."""
    import tensorflow as tf

    for kind in (tf.distribute.TPUStrategy, tf.distribute.experimental.ParameterServerStrategy):
        with pytest.raises(ValueError, match=f"supports .*MirroredStrategy.*; {kind.__name__} is not supported"):
            distribute.check_supported(object.__new__(kind))
    distribute.check_supported(tf.distribute.get_strategy())  # the default strategy: none, watched
    distribute.check_supported(tf.distribute.OneDeviceStrategy("/cpu:0"))


def test_the_watchs_device_state_is_one_copy_not_a_variable_per_replica():
    """Made under the strategy's scope, a variable is mirrored (one copy per replica, every write one per device, the
    cross-replica cond waiting on each): the watch's own state (its step counter is written every step) is made one
    plain copy (measured: bench/README.md, MirroredStrategy)."""
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        mirrored = tf.Variable(0, dtype=tf.int64, name="counter")
        with tf.variable_creator_scope(distribute._one_copy):  # noqa: SLF001 - the creator the watch's state uses
            plain = tf.Variable(tf.zeros([0], tf.float32), shape=tf.TensorShape(None), trainable=False, name="batch")
    assert isinstance(mirrored, tf.distribute.DistributedValues)  # what the state was
    assert not isinstance(plain, tf.distribute.DistributedValues)
    assert plain.shape.rank is None and not plain.trainable and plain.name.startswith("batch")
    plain.assign(tf.ones([3]))  # any shape: the batch buffers take each trigger's rows
    assert plain.numpy().tolist() == [1.0, 1.0, 1.0]


def test_each_device_decides_from_the_reduced_gradients_without_a_flag_per_replica(tmp_path):
    """Single-worker Mirrored (capsule/local_decision.py): on the every-step path each device's decision is one
    IsFinite on the sum of its reduced gradients (the loss folded in); no replica computes a flag (no per-tensor
    IsFinite/All, no one_hot of its id) for a reduce: the replicas' flags are the capture's, behind its call."""
    types = traced_step(tmp_path, devices=1)["types"]
    assert types.count("IsFinite") == 1 and "OneHot" not in types and "All" not in types, types


TRACED_STEP = """
import json, os, sys
import tensorflow as tf
DEVICES = int(sys.argv[2])
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * DEVICES)
import keras
from tensorboard_plugin_dbg import capsule
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(DEVICES)])
with strategy.scope():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(0.1)
    optimizer.build(model.trainable_variables)
watch = capsule.NanCapsule(sys.argv[1])
watch.watch(model, optimizer)
def replica(x):
    watch.begin_step()
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    batch = (x,) if DEVICES == 1 else None  # on two devices x is not split: no batch to hold
    watch.apply_gradients(grads, model.trainable_variables, loss=loss, batch=batch)
step = tf.function(lambda x: strategy.run(replica, args=(x,)), autograph=False)
graph = step.get_concrete_function(tf.TensorSpec([4, 3])).graph
ops = graph.get_operations()
halt = dict((id(e), i) for e, i in graph.captures)[id(watch.capsule.halt.handle)]
reads = [op for op in ops if op.type == "ReadVariableOp" and op.inputs[0] is halt]
library = graph.as_graph_def().library.function  # the rare path's own function (inlined when the step runs)
print(json.dumps({
    "types": [op.type for op in ops],
    "merges": [op.type for op in ops].count("Merge") + [n.op for f in library for n in f.node_def].count("Merge"),
    "on_count": sorted({op.device for op in ops for c in op.control_inputs if c.type == "ResourceScatterAdd"}),
    "read_halt": sorted({c.device for r in reads for o in r.outputs for c in o.consumers()}),
}))
"""


def traced_step(tmp_path, devices: int) -> dict:
    """A custom loop's step under MirroredStrategy on DEVICES logical CPUs, traced in a subprocess (logical devices
    are set once a process; autograph off): its op types and where the counter's write and `halt`'s reads go."""
    return script_output(TRACED_STEP, str(tmp_path), str(devices))


def test_on_two_devices_no_device_waits_on_the_others_merge_counter_or_halt(tmp_path):
    """Two logical devices, single-worker Mirrored: the held-back writes end in one Merge for all devices (a Merge per
    device was chained after the one before it by automatic control dependencies: a control Send each way every step),
    the step counter's write gates the first device's capture only, and `halt` is read on the first device only
    (folded into its replica's gradient), never sent to the second for its decision."""
    found = traced_step(tmp_path, devices=2)
    assert found["merges"] == 3, found  # the gates' one, the rare path's (in its function), device_gates.settled's
    assert found["on_count"] and not any(d.endswith("CPU:1") for d in found["on_count"]), found
    assert found["read_halt"] and not any(d.endswith("CPU:1") for d in found["read_halt"]), found


def gated_step(strategy, apply_fn, go: bool) -> list[str]:
    """One step under STRATEGY whose apply_fn (in each replica) is gated on GO by device_gates (autograph off: no
    generated sources left behind); the types of the step's ops."""
    import tensorflow as tf

    from tensorboard_plugin_dbg.capsule import device_gates

    def replica() -> None:
        decide = lambda s: device_gates.gated_apply(s, apply_fn, (), (), tf.constant(go), lambda: None)  # noqa: E731
        tf.distribute.get_replica_context().merge_call(decide)

    step = tf.function(lambda: strategy.run(replica), autograph=False)
    step()
    return [op.type for op in step.get_concrete_function().graph.get_operations()]


def test_device_gates_hold_back_the_optimizers_writes_and_refuse_one_they_cannot_hold():
    """The optimizer's writes (its variable, slots and step counter: all through strategy.extended.update) happen
    only when the decision says so; a write past the strategy (a plain variable assigned in the replica) would happen
    whatever the decision: the trace refuses it, naming the op, rather than apply a non-finite step silently."""
    import keras
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        weight = keras.Variable([1.0, 2.0])
        optimizer = keras.optimizers.SGD(0.5, momentum=0.9)
        optimizer.build([weight])
    apply = lambda grads, variables: optimizer.apply([tf.constant([1.0, 1.0])], [weight])  # noqa: E731
    gated_step(strategy, apply, go=False)
    assert weight.numpy().tolist() == [1.0, 2.0] and int(optimizer.iterations.numpy()) == 0
    types = gated_step(strategy, apply, go=True)
    assert weight.numpy().tolist() == [0.5, 1.5] and int(optimizer.iterations.numpy()) == 1
    # one Switch on the decision per device gates the writes: no cond, no Switch beside each of their inputs (Merges:
    # the gates' one, and device_gates.settled's before the apply)
    assert types.count("Switch") == 1 and types.count("Merge") == 2 and "If" not in types and "StatelessIf" not in types
    plain = tf.Variable(0.0)  # made outside the strategy's scope: written in place by the replica
    past = lambda grads, variables: plain.assign_add(1.0)  # noqa: E731
    with pytest.raises(RuntimeError, match="cannot hold back this optimizer's update under MirroredStrategy: Assign"):
        gated_step(strategy, past, go=False)
    assert plain.numpy() == 0.0


def test_the_rare_path_runs_only_on_no_and_kills_nothing_after_it():
    """The capture's path (capsule/rare_path.py): one Switch on the decision gates one call op through a control
    edge, its inputs taken as they are (no Switch beside each). It runs on "no" only, and an op after it in the step
    on a resource it writes still runs on "yes" (the call's dead edge never reaches it)."""
    import tensorflow as tf

    from tensorboard_plugin_dbg.capsule import rare_path

    ran, x, read = tf.Variable(0), tf.Variable([1.0, 2.0]), tf.Variable(5)

    def step(go):
        doubled = x.read_value() * 2  # an input of the rare path

        def rare():
            with tf.control_dependencies([ran.assign_add(read.read_value()), x.assign(doubled)]):
                return tf.constant(False)

        noted = rare_path.unless(go, rare)
        # after it: a write of a variable it writes, and one of a variable it only reads (automatic control
        # dependencies gave that write a control input from the call, dead on "yes": before, it never ran there)
        with tf.control_dependencies([ran.assign_add(10), read.assign_add(100)]):
            return tf.identity(noted)

    f = tf.function(step, autograph=False)
    assert bool(f(tf.constant(True))) and int(ran.numpy()) == 10 and x.numpy().tolist() == [1.0, 2.0]
    assert int(read.numpy()) == 105
    assert not bool(f(tf.constant(False))) and int(ran.numpy()) == 125 and x.numpy().tolist() == [2.0, 4.0]
    assert int(read.numpy()) == 205
    graph = f.get_concrete_function(tf.constant(True)).graph
    types = [n.op for fn in graph.as_graph_def().library.function for n in fn.node_def]
    assert types.count("Switch") == 1 and "If" not in types and "StatefulPartitionedCall" in types


@pytest.mark.parametrize("replicas", [None, "1", {"non_finite": "1", "count": 2}, {"non_finite": [1, "x"], "count": 2}])
def test_a_replicas_entry_that_is_not_what_the_capsule_writes_is_left_out(replicas):
    assert capsule_words.where_text({"step": 3, "replicas": replicas}) == "step 3"


def test_the_replicas_of_a_multi_worker_capsule_are_said():
    replicas = {"non_finite": [3], "count": 4, "worker": 0, "workers": 2}
    text = capsule_words.where_text({"step": 3, "replicas": replicas})
    assert text == "step 3, replica 3 of 4 (this capsule: worker 0 of 2)"


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def two_workers(tmp_path) -> str:
    """capsule_mwms.py's two workers on loopback, into TMP_PATH; their ports."""
    ports = ",".join(map(str, free_ports(2)))
    program = dumps.program_path("capsule_mwms")
    procs = [
        subprocess.Popen(
            [sys.executable, program, str(tmp_path), str(i), ports],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dumps.env_for_tf(),
        )
        for i in range(2)
    ]
    outputs = [p.communicate(timeout=240)[0].decode(errors="replace") for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    return ports


def test_two_workers_skip_the_same_step_and_each_writes_its_capsule(tmp_path):
    """MultiWorkerMirroredStrategy, two worker processes on loopback, skip mode, the NaN in worker 1's rows: both
    skip that step (each worker's variables bit-equal before and after it, equal across workers at the end), both
    write a capsule with the worker in its name, worker 0's names the other's, and `report` shows one event."""
    two_workers(tmp_path)
    results = [json.loads((tmp_path / f"worker{i}" / "result.json").read_text()) for i in range(2)]
    assert results[0]["iterations"] == results[1]["iterations"] == results[0]["steps"] - 2  # step 3 of each epoch
    finals = [np.load(tmp_path / f"worker{i}" / "final.npz") for i in range(2)]
    for i in range(2):
        pre, post = (np.load(tmp_path / f"worker{i}" / f"{n}_step.npz") for n in ("pre", "post"))
        assert all(pre[k].tobytes() == post[k].tobytes() for k in pre.files)
        assert all(finals[0][k].tobytes() == finals[1][k].tobytes() for k in pre.files)
    folders = sorted(os.listdir(tmp_path / "capsules"))
    assert folders == ["capsule-step000000003-worker0", "capsule-step000000003-worker1", "skipped.jsonl"]
    first, second = (capsule.load(str(tmp_path / "capsules" / f)) for f in folders[:2])
    assert first.manifest["replicas"]["worker_capsules"] == ["capsule-step000000003-worker1"]
    assert first.manifest["trigger"]["kind"] == "other_worker" and second.manifest["trigger"]["kind"] == "loss"
    for held, index in ((first, 0), (second, 1)):
        assert held.manifest["replicas"]["non_finite"] == [1] and held.manifest["replicas"]["worker"] == index
        assert held.batch["0"].tobytes() == np.load(tmp_path / f"worker{index}" / "batch.npz")["x"].tobytes()
    report = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", str(tmp_path / "capsules")],
        capture_output=True,
        text=True,
        env=dumps.env_for_tf(),
    ).stdout
    assert report.count("one event, 2 workers' capsules of the same step:") == 1, report
    event = report.split("one event, 2 workers' capsules of the same step:\n", 1)[1]
    assert event.startswith(f"capsule {tmp_path / 'capsules' / folders[0]}\n"), report
    assert f"\n\ncapsule {tmp_path / 'capsules' / folders[1]}\n" in event, report
    card = capsule_summary.summary(first.path, str(tmp_path))
    assert card["trigger"]["text"].endswith("(this capsule: worker 0 of 2; with capsule-step000000003-worker1)")


ONE_WORKER = (
    "replayed replica 1's rows (0..4 of the batch) on one device: the run had 2 replicas over 2 workers, this program "
    "has 1; run as one process: TF_CONFIG (worker 1 of a 2-worker cluster) set aside, the other workers not started"
)


@pytest.mark.parametrize("index", [1, 0])
def test_replay_of_a_worker_capsule_runs_the_offending_workers_rows_as_one_process(tmp_path, index):
    """Before, `replay` of a MultiWorkerMirrored capsule ran the program as that worker again: its strategy waited
    for ever for the other worker. Now the program runs as one process (the run's TF_CONFIG set aside), on the rows of
    the worker that held the non-finite replica (worker 0's capsule, whose replicas stayed finite, leads to worker 1's
    capsule, and `replay` says so), the verdict says how it ran and the report names the program's line."""
    ports = two_workers(tmp_path / "run")
    capsules = tmp_path / "run" / "capsules"
    folder = str(capsules / f"capsule-step000000003-worker{index}")
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", folder, "--", sys.executable]
    command += [dumps.program_path("capsule_mwms"), str(tmp_path / "out"), str(index), ports]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=180)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text
    replayed = str(capsules / "capsule-step000000003-worker1")
    if index == 0:
        assert f"replaying {replayed}: it holds replica 1, the one that went non-finite" in text, text
        assert capsule_files.read_verdict(folder) is None
    verdict = capsule_files.read_verdict(replayed)
    assert verdict["verdict"] == "reproduced" and verdict["replicas"] == ONE_WORKER, verdict
    assert ONE_WORKER in text and "logged = tf.math.log(features + 1.0)  # CULPRIT" in text, text
    assert_replay_holds_no_capsule_machinery(replayed, text)


def test_replay_with_tf_config_in_the_callers_environment_reaches_no_worker(tmp_path):
    """`replay` run where the cluster's launcher left TF_CONFIG set (here: worker 1 of a cluster whose worker 0 is a
    socket this test listens on), of a program that makes its strategy from that environment before it imports
    NanCapsule: the replay's program gets no TF_CONFIG, so it forms no cluster (before, it waited for worker 0 for ever)
    and nothing connects to the other worker's address; it replays the non-finite replica's rows as one process."""
    ports = two_workers(tmp_path / "run")
    folder = str(tmp_path / "run" / "capsules" / "capsule-step000000003-worker1")
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(8)
    other.setblocking(False)
    cluster = [f"127.0.0.1:{other.getsockname()[1]}", f"127.0.0.1:{free_ports(1)[0]}"]
    launched = {"cluster": {"worker": cluster}, "task": {"type": "worker", "index": 1}}
    env = {**dumps.env_for_tf(), "TF_CONFIG": json.dumps(launched)}
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", folder, "--", sys.executable]
    command += [dumps.program_path("capsule_mwms"), str(tmp_path / "out"), "1", ports, "--strategy-first"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        text = proc.communicate(timeout=150)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the replay and the program it runs (which waits for the cluster): nothing left
        proc.communicate()
        pytest.fail("replay hung: its program waited for the cluster named by the caller's TF_CONFIG")
    try:
        with pytest.raises(BlockingIOError):
            other.accept()  # no connection came to the other worker's address
    finally:
        other.close()
    assert proc.returncode == 0, text
    assert "removes: TF_CONFIG" in text, text  # said before the program runs, beside the variables it adds
    verdict = capsule_files.read_verdict(folder)
    assert verdict["verdict"] == "reproduced" and verdict["replicas"] == ONE_WORKER, verdict
    assert "logged = tf.math.log(features + 1.0)  # CULPRIT" in text, text


ONE = "this program has 1"


def replay(tmp_path, run_args: tuple[str, ...], program_args: tuple[str, ...]) -> tuple[int, str, str]:
    """`replay` of a copy of capsule_mirrored RUN_ARGS's capsule, the program run with PROGRAM_ARGS."""
    folder = tmp_path / "capsules"
    shutil.copytree(os.path.join(run(*run_args), "capsules"), folder)
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "replay", str(folder), "--", sys.executable]
    command += [dumps.program_path("capsule_mirrored"), str(tmp_path / "out"), *program_args]
    proc = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300)
    return proc.returncode, proc.stdout + proc.stderr, str(folder)


@pytest.mark.parametrize(
    ("loop", "one_device", "says"),
    [
        (False, False, "replayed under MirroredStrategy with 2 replicas, each with its captured rows"),
        (
            True,
            True,
            "replayed replica 1's rows (4..8 of the batch) on one device: the run had 2 replicas, this program has 1",
        ),
    ],
    ids=["fit_two_replicas", "loop_one_device"],
)
def test_replay_of_a_mirrored_capsule_says_how_it_ran_and_names_the_users_line(tmp_path, loop, one_device, says):
    """With the run's devices, the step runs under the strategy, each replica on its rows (the culprit op found on the
    second replica's device); without them, the offending replica's rows on one device."""
    mode = ("--loop",) if loop else ()
    code, text, folder = replay(tmp_path, mode, mode + (("--one-device",) if one_device else ()))
    assert code == 0, text
    verdict = capsule_files.read_verdict(capsule.load(folder).path)
    assert verdict["verdict"] == "reproduced" and verdict["replicas"] == says
    assert "replay: reproduced" in text and says in text
    assert "return tf.sqrt(x)  # CULPRIT" in text and "capsule_mirrored.py:" in text
    assert ("device:CPU:1" in text) != one_device  # replica 1's device when replayed under the strategy
    assert_replay_holds_no_capsule_machinery(folder, text)


def test_a_loss_spike_under_mirrored_is_the_global_steps_and_no_replica_applies_it():
    """capsule_spike.py --mirrored: targets 1000x too large in batch 110 (no NaN), spike=10: the rule reads the global
    step's loss (the replicas' shares summed), the capsule holds that batch and the state before it."""
    out = dumps.make_dump("capsule_spike", "--mirrored")
    assert json.loads(open(os.path.join(out, "result.json")).read())["steps"] == 110
    c = assert_capsule_is_the_step(out, 110)
    assert c.manifest["trigger"]["kind"] == "loss_spike" and c.manifest["replicas"]["non_finite"] == []
    assert c.manifest["trigger"]["value"] > c.manifest["trigger"]["threshold"]


@pytest.mark.parametrize("loop", [False, True], ids=["fit", "custom_loop"])
def test_the_per_layer_history_is_said_not_recorded_under_tf_distribute(loop):
    """The distribute path keeps no per-layer ring: `report` says so in those words, never that a custom loop forgot
    checked_apply (the capsule came from Keras `fit`, or from a loop that did call it)."""
    folder = os.path.join(run("--loop") if loop else run(), "capsules")
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "report", folder]
    text = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=180).stdout
    (line,) = [s.strip() for s in text.splitlines() if s.strip().startswith("layers:")]
    assert line == f"layers: {capsule_layers.NOT_UNDER_DISTRIBUTE}", text
    assert "tf.distribute" in line and "checked_apply" not in line and "custom loop" not in line
