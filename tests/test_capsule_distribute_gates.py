"""The every-step path of a MirroredStrategy step on two logical CPU devices, as traced (#35, bench/README.md's timeline
of the step): what each device's decision waits on, and what waits on every device's writes. The behaviour (a NaN on any
replica holds back every replica's every write; a finite run's weights bit-equal to the run without the capsule) is
tests/test_capsule_distribute.py's."""

from __future__ import annotations

import pytest

from tests.distribute_helpers import TWO_CPUS, script_output

pytestmark = pytest.mark.slow

STEP = (
    TWO_CPUS
    + """
from tensorboard_plugin_dbg import capsule
with strategy.scope():
    tracker = keras.metrics.Mean()  # as fit's loss tracker: written before the apply, read after it
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, "relu"), keras.layers.Dense(1)])
    (optimizer := keras.optimizers.Adam(1e-3)).build(model.trainable_variables)
(watch := capsule.NanCapsule(sys.argv[1])).watch(model, optimizer)
def replica(x):
    watch.begin_step()
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x)))
        tracker.update_state(loss)
    variables = model.trainable_variables
    watch.apply_gradients(tape.gradient(loss, variables), variables, loss=loss)
    return tracker.result()
step = tf.function(lambda x: strategy.run(replica, args=(x,)), autograph=False)
ops = step.get_concrete_function(tf.TensorSpec([4, 3])).graph.get_operations()
def summed(op):  # the op types each decision's sums read
    if op.type == "Sum":
        return [op.inputs[0].op.type]
    return [t for i in op.inputs for t in summed(i.op)] if op.type in ("AddN", "Cast") else []
def gates_merge(op):  # a Merge of a Switch's sides (the gates'), not a Merge of a constant
    return op.type == "Merge" and any(i.op.type == "Identity" and i.op.inputs[0].op.type == "Switch" for i in op.inputs)
reads = [i.op for r in ops if r.type == "DivNoNan" for i in r.inputs if i.op.type == "ReadVariableOp"]
print(json.dumps({
    "result_reads_wait_on_gates": [any(gates_merge(c) for c in r.control_inputs) for r in reads],
    "decisions": [summed(op.inputs[0].op) for op in ops if op.type == "IsFinite"],
}))
"""
)


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> dict:
    """The step's graph, traced in a subprocess (logical devices are set once a process; autograph off)."""
    return script_output(STEP, str(tmp_path_factory.mktemp("gates")))


def test_each_devices_decision_sums_its_all_reduced_pack_not_each_split_gradient(traced):
    """The strategy all-reduces the gradients as one packed vector, split again after: each device's decision is one
    Sum of that reduced vector (beside the split), not a Sum of each split gradient and their AddN after it."""
    decisions = traced["decisions"]
    assert len(decisions) == 2, decisions  # one a device
    for sums in decisions:
        assert sums and all(t.startswith("CollectiveReduce") for t in sums), decisions


def test_the_steps_outputs_do_not_wait_on_every_devices_writes(traced):
    """A value written before the apply and read after it (fit's loss tracker, the step's output) waits on no gated
    write: automatic control dependencies make a Merge the last writer of every resource written before it, so the
    gates' Merge after the writes held the read back until every device's writes and the control Send from the
    others; a Merge of a constant before the apply takes that part (bench/README.md, the step's timeline)."""
    reads = traced["result_reads_wait_on_gates"]
    assert reads and not any(reads), reads
