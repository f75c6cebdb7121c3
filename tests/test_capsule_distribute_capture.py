"""NaN capsule under MirroredStrategy (#35): the capture of a replicated step on each device
(capsule/replica_capture.py). Each device stages its own replica's values behind its own decision, and the host joins
them: no value of device 1 crosses to device 0 on a finite step, and the capsule is the one the first device's single
capture wrote (the flags path, an optimizer that clips, keeps that capture: its capsule is the reference, bit for
bit)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tensorboard_plugin_dbg import capsule
from tests.distribute_helpers import TWO_CPUS, result, run, script_output

pytestmark = pytest.mark.slow

PARTITIONS = (
    TWO_CPUS
    + """
import collections
import numpy as np
from tensorflow.python.eager import context
from tensorboard_plugin_dbg.capsule import NanCapsule
with strategy.scope():
    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
x = np.random.default_rng(0).normal(size=(32, 6)).astype("float32")
y = np.random.default_rng(1).integers(0, 3, size=32)
data = tf.data.Dataset.from_tensor_slices((x, y)).batch(16).repeat()
callbacks = [NanCapsule(sys.argv[1])] if sys.argv[2] == "capsule" else []
context.context().enable_run_metadata()
model.fit(data, steps_per_epoch=2, epochs=1, verbose=0, callbacks=callbacks)
metadata = context.context().export_run_metadata()
context.context().disable_run_metadata()
sends = collections.Counter()
for graph in (g for f in metadata.function_graphs for g in f.partition_graphs):
    for node in graph.node:
        if node.op == "_Send":
            to = node.attr["recv_device"].s.decode().rsplit(":", 2)[-2:]
            control = "/ctrl/" in node.input[0]
            came = node.device.rsplit(":", 2)[-2:]
            sends[f"{':'.join(came)}>{':'.join(to)}>{'control' if control else node.input[0]}"] += 1
print(json.dumps(sends))
"""
)


def sends(tmp_path, setting: str) -> dict[str, int]:
    """The Sends of a Keras fit step under MirroredStrategy on two logical CPUs (its partition graphs, RunMetadata on
    while the step is instantiated), as 'from>to>the tensor sent' ('control' for a control edge): count."""
    return script_output(PARTITIONS, str(tmp_path), setting)


def test_no_value_of_the_second_device_is_sent_to_the_first_on_a_finite_step(tmp_path):
    """The capture took the second replica's loss, gradients and batch leaves on the first device: each a Send every
    step, its call dead or not. Now the only tensors the second device sends the first are those the step without
    the capsule sends (control edges aside: no value)."""
    plain, watched = sends(tmp_path, "none"), sends(tmp_path, "capsule")
    values = {k for k in plain if k.startswith("CPU:1>CPU:0>") and not k.endswith(">control")}
    assert values, plain  # the step's own (the replica's loss for the logs)
    assert {k for k in watched if k.startswith("CPU:1>CPU:0>") and not k.endswith(">control")} == values, watched


def staged_devices(out: str) -> int:
    return result(out)["staged_devices"]


def assert_same_capsule(out: str, reference: str) -> capsule.Capsule:
    """The capsule of OUT (each device's capture, joined) holds what REFERENCE's (one capture on the first device)
    holds, bit for bit: the batch's rows in replica order, the replicas' flags and rows, the trigger's health counts
    of every replica's loss and gradients, the pre-step weights."""
    staged = [staged_devices(d) for d in (out, reference)]
    assert staged == [2, 0]  # each device's capture, against the first device's alone
    ours, theirs = capsule.load(os.path.join(out, "capsules")), capsule.load(os.path.join(reference, "capsules"))
    assert ours.step == theirs.step == 3
    assert ours.manifest["replicas"] == theirs.manifest["replicas"]
    assert ours.manifest["trigger"] == theirs.manifest["trigger"]
    assert sorted(ours.batch) == sorted(theirs.batch)
    for name, array in ours.batch.items():
        assert array.dtype == theirs.batch[name].dtype and array.tobytes() == theirs.batch[name].tobytes(), name
    assert sorted(ours.weights) == sorted(theirs.weights)
    for name, array in ours.weights.items():
        assert array.tobytes() == theirs.weights[name].tobytes(), name
    return ours


def held_x(c: capsule.Capsule) -> np.ndarray:
    return max(c.batch.values(), key=lambda a: a.shape[-1])  # x (5 features), not y


@pytest.mark.parametrize("loop", [False, True], ids=["fit", "custom_loop"])
@pytest.mark.parametrize("row,replica", [(2, 0), (6, 1)], ids=["replica0", "replica1"])
def test_each_devices_capture_joined_is_the_capsule_one_capture_wrote(loop, row, replica):
    args = ["--poison-row", str(row), *(["--loop"] if loop else [])]
    out = run(*args)
    ours = assert_same_capsule(out, run(*args, "--clipvalue"))
    assert held_x(ours).tobytes() == np.load(os.path.join(out, "batch.npz"))["x"].tobytes()  # the global batch's rows
    replicas = ours.manifest["replicas"]
    assert replicas["non_finite"] == [replica] and replicas["rows"] == {"0": [0, 4], "1": [4, 8]}
    health = ours.manifest["trigger"]["health"]
    assert health["nan"] > 0 and health["size"] % 2 == 0  # both replicas' values counted


def test_a_batch_every_replica_is_handed_whole_is_joined_as_one_capture_held_it():
    out = run("--loop", "--whole-batch")
    ours = assert_same_capsule(out, run("--loop", "--whole-batch", "--clipvalue"))
    assert ours.manifest["replicas"]["rows"] == {"0": [0, 8], "1": [8, 16]}
    x = np.load(os.path.join(out, "batch.npz"))["x"]
    assert held_x(ours).tobytes() == np.concatenate([x, x]).tobytes()  # the whole batch, once for each replica


@pytest.mark.parametrize("flags_path", [False, True], ids=["each_device", "flags_path"])
@pytest.mark.parametrize("loop", [False, True], ids=["fit", "custom_loop"])
def test_a_second_trigger_before_the_host_reads_the_first_leaves_the_first_ones_rows(loop, flags_path):
    """skip mode: steps 3 and 5 poisoned, both before the host's first poll (every 16 steps). The capsule is step
    3's: its rows and flags were those of the last trigger (step 5's, written at each trigger while the slot held step
    3's health counts); each device's staging is now written while its slot is free only, as the health counts, and
    so are the first device's rows and flags on the flags path (an optimizer that clips)."""
    extra = [*(["--loop"] if loop else []), *(["--clipvalue"] if flags_path else [])]
    out = run("--on-nan", "skip", "--poison-also", "5", *extra)
    assert result(out)["staged_devices"] == (0 if flags_path else 2)
    assert result(out)["triggers"] == 4  # steps 3 and 5 of each of the two epochs
    c = capsule.load(os.path.join(out, "capsules"))
    assert c.step == 3 and c.manifest["replicas"]["non_finite"] == [1]
    expected = np.load(os.path.join(out, "batch.npz"))  # step 3's global batch
    assert held_x(c).tobytes() == expected["x"].tobytes()
