"""Unit tests of the roles added for the hard cases (classify.py, containment.py) on hand-made columns: contained
and expected non-finite values, unrecorded inputs (unknown), and a call whose traces a circular buffer dropped.
The real-dump tests are test_root_cause_hard.py."""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg.analysis import buffer
from tensorboard_plugin_dbg.analysis.classify import (
    CONTAINED,
    EXPECTED,
    NONE,
    PRODUCER,
    PROPAGATOR,
    UNKNOWN,
    classify,
)
from tensorboard_plugin_dbg.analysis.columns import RunColumns


def chain_columns(steps_flags, inputs, is_input=(), exec_wall=(), exec_function=(), exec_type=()):
    """Ops 0..n-1 traced once per step in order, tensor code = op code; inputs[o] = the tensor codes op o reads."""
    n_ops = len(inputs)
    flags = np.asarray([f for step in steps_flags for f in step], np.int8)
    ops = np.tile(np.arange(n_ops), len(steps_flags))
    ptr = np.cumsum([0] + [len(i) for i in inputs])
    tensor_is_input = np.zeros(n_ops + 4, bool)
    tensor_is_input[list(is_input)] = True
    return RunColumns(
        trace_wall=np.arange(len(flags), dtype=np.float64),
        trace_op=ops,
        trace_tensor=ops,
        trace_nonfinite=flags,
        op_input_ptr=np.asarray(ptr, np.int64),
        op_input_tensor=np.asarray([t for i in inputs for t in i], np.int64),
        op_forwards=np.zeros(n_ops, bool),
        exec_wall=np.asarray(exec_wall, np.float64),
        exec_nonfinite=np.ones(len(exec_wall), np.int8),
        exec_is_function=np.asarray(exec_function, bool),
        exec_io=lambda i: ([], [0], [1]),
        op_output_ptr=np.arange(n_ops + 1, dtype=np.int64),
        op_output_tensor=np.arange(n_ops, dtype=np.int64),
        tensor_is_input=tensor_is_input,
        exec_op_type=np.asarray(exec_type, np.int64),
    )


def roles(cols):
    return classify(cols)[0].trace_role.reshape(-1, len(cols.op_forwards)).tolist()


# mask (no inputs) -> add(mask) -> softmax(add) -> loss(softmax)
MASK_CHAIN = [[], [0], [1], [2]]


def test_mask_chain_is_contained_until_softmax_breaks():
    steps = [[1, 1, 0, 0]] * 4 + [[1, 1, 1, 1]]
    got = roles(chain_columns(steps, MASK_CHAIN))
    assert got[:4] == [[CONTAINED, CONTAINED, NONE, NONE]] * 4
    # The step where softmax no longer absorbs the -inf: the mask and the add are expected, softmax produced it.
    assert got[4] == [EXPECTED, EXPECTED, PRODUCER, PROPAGATOR]


def test_a_first_step_escape_is_still_the_mask():
    """Never absorbed before: nothing to call benign, so the mask is the producer."""
    got = roles(chain_columns([[1, 1, 1, 1]], MASK_CHAIN))
    assert got == [[PRODUCER, PROPAGATOR, PROPAGATOR, PROPAGATOR]]


def test_no_traced_consumer_is_not_contained():
    """A value nobody visible reads may escape where we cannot see: not contained."""
    got = roles(chain_columns([[1, 0]] * 2, [[], []]))
    assert got == [[PRODUCER, NONE]] * 2


def test_consumer_of_a_later_step_does_not_contain():
    """op 1 reads op 0 but is traced only in the step after: the step of op 0's -inf saw no consumer."""
    cols = chain_columns([[1, 0], [0, 0]], [[], [0]])
    cols.trace_nonfinite = np.asarray([1, -1, 0, 0], np.int8)  # op 1's first record cannot tell (blind mode)
    assert roles(cols)[0][0] == PRODUCER


def test_function_input_makes_unknown_and_a_late_record_of_the_same_run_counts():
    # op 0 reads function input tensor 3 (never traced): unknown. Op 1 reads tensor 2, whose only record is written
    # after op 1's in the same run: the debug ops run beside the computation, so that record is the value op 1 read
    # (finite), and op 1 is a producer (#38: file order is not causal).
    inputs = [[3], [2], []]
    steps = [[1, 1, 0]]
    got = roles(chain_columns(steps, inputs, is_input=[3]))
    assert got == [[UNKNOWN, PRODUCER, NONE]]


def test_an_input_recorded_late_and_non_finite_makes_a_propagator():
    # op 1 reads tensor 0, written after op 1's record in the step that went bad: op 1 did not make the NaN.
    inputs = [[], [0], []]
    cols = chain_columns([[0, 0, 0], [1, 1, 0]], inputs)
    order = np.array([0, 1, 2, 4, 3, 5])  # step 1 written op 1 first, then op 0
    cols.trace_op, cols.trace_tensor, cols.trace_nonfinite = (
        cols.trace_op[order],
        cols.trace_tensor[order],
        cols.trace_nonfinite[order],
    )
    role = classify(cols)[0].trace_role
    assert role[3] == PROPAGATOR and role[4] == PRODUCER  # row 3 is op 1, row 4 op 0


def test_overlapping_runs_pair_each_reader_with_its_own_input_by_rank():
    """tf.data runs a map function's calls in parallel: two runs' readers can reach the file before either run's
    input (CI's dump of nan_mirrored_data: GatherV2, GatherV2, args_1, args_1). Each run computes the input once and
    the reader once (as many traces of each), so the n-th reader read the n-th input: the first reader was fed the
    NaN (a propagator), never "no trace of it before this op ran (a circular buffer ...)" (unknown)."""
    inputs = [[], [0]]
    cols = chain_columns([[1, 1], [1, 0]], inputs)  # run A: input NaN, reader NaN; run B: input NaN, reader finite
    order = np.array([1, 3, 0, 2])  # written: reader A, reader B, input A, input B
    cols.trace_op, cols.trace_tensor, cols.trace_nonfinite = (
        cols.trace_op[order],
        cols.trace_tensor[order],
        cols.trace_nonfinite[order],
    )
    role = classify(cols)[0].trace_role
    assert role[0] == PROPAGATOR, role.tolist()  # reader A read input A (row 2), NaN
    assert role[2] == PRODUCER, role.tolist()


def test_an_overlapping_run_whose_input_is_ambiguous_is_not_given_an_earlier_runs_input():
    """#39: two overlapping runs, both readers NaN, written before both inputs, one input finite and one NaN: which
    input the first reader read cannot be told, so it stays unpaired (unknown), and it is not given the input's
    trace of the run before either (finite: "its inputs were finite" was a guess), which the earlier reader read."""
    inputs = [[], [0]]
    cols = chain_columns([[0, 0], [0, 1], [1, 1]], inputs)  # run 0 finite; runs A, B: inputs finite / NaN
    order = np.array([0, 1, 3, 5, 2, 4])  # run 0, then reader A, reader B, input A, input B
    cols.trace_op, cols.trace_tensor, cols.trace_nonfinite = (
        cols.trace_op[order],
        cols.trace_tensor[order],
        cols.trace_nonfinite[order],
    )
    role = classify(cols)[0].trace_role
    assert role[2] == UNKNOWN, role.tolist()
    # nor is the second reader given the first input by position ("the input's next trace, before the op's next"):
    # the first reader waits for that trace too, and the ranks' answer is ambiguous as well
    assert role[3] == UNKNOWN, role.tolist()


def test_overlapping_runs_with_unequal_counts_are_not_paired():
    """When the reader and its input were not traced as often (an input outside a loop, a ring that cut a run in
    two), ranks say nothing: the reader's input stays unpaired (unknown)."""
    inputs = [[], [0]]
    cols = chain_columns([[0, 1], [1, 0]], inputs)
    order = np.array([1, 3, 2])  # reader A, reader B, input B: input A was dropped
    cols.trace_op, cols.trace_tensor, cols.trace_nonfinite = (
        cols.trace_op[order],
        cols.trace_tensor[order],
        cols.trace_nonfinite[order],
    )
    assert classify(cols)[0].trace_role[0] == UNKNOWN


def test_never_traced_non_input_tensor_is_not_unknown():
    """A tensor traced nowhere and not a function input is not a float (health modes trace floats only)."""
    got = roles(chain_columns([[1]], [[5]]))
    assert got == [[PRODUCER]]


def test_calls_that_lost_their_traces_are_counted_and_not_candidates():
    # Three calls of one function (type 0): the first two have no trace in their window; the third has two.
    cols = chain_columns([[0, 1]], [[], [0]], exec_wall=[-3.0, -2.0, 1.5], exec_function=[1, 1, 1], exec_type=[0, 0, 0])
    assert buffer.dropped_calls(cols) == 2
    cls, _ = classify(cols)
    assert cls.exec_traces_gone.tolist() == [True, True, False]
    assert cls.first_producer(cols) == ("graph_execution", 1)


def test_rows_with_no_finite_row_within_reach_are_not_looked_at(monkeypatch):
    """The skip that makes an all-NaN run cheap: a chain whose finite end lies beyond the reach is not contained
    (and with the reach covering it, the same chain is)."""
    from tensorboard_plugin_dbg.analysis import containment

    steps = [[1, 1, 0, 0]] * 2
    assert roles(chain_columns(steps, MASK_CHAIN))[0][:2] == [CONTAINED, CONTAINED]
    monkeypatch.setattr(containment, "_REACH", 1)  # softmax's finite row is 2 rows after the mask's, 1 after add's
    assert roles(chain_columns(steps, MASK_CHAIN))[0][:2] == [PRODUCER, CONTAINED]
