"""The capture of a replicated step (capsule/distribute.py) on its rare path without a `cond` around it: a lowered
`cond` puts a Switch on the decision beside each of its inputs (the capture takes every replica's loss and gradients,
the batch, the pre-step reads: 26 inputs for a three-layer MLP on two devices), and each of them waits on the decision
every step. Here the capture is one call op that takes its inputs as they are, and one Switch on the decision gates it
through a control edge (as TensorFlow 1's `cond` gated a branch op with no input: its pivot): on a step that applies,
that edge is dead, so the call is never run, and a Merge joins the two sides again.

TensorFlow is imported inside the functions that run in the training process only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def unless(go: Any, rare: Callable[[], Any]) -> Any:
    """rare() (a bool tensor) where `go` is false, else `go` (True): a bool tensor, never dead. rare() runs as a call
    op of its own (`_noinline`), so that on the common path the executor marks one op dead, not every op of it."""
    import tensorflow as tf

    def gated(go: Any) -> Any:
        off, on = tf.raw_ops.Switch(data=go, pred=go)
        taken = _called(off, rare)
        return tf.raw_ops.Merge(inputs=[tf.identity(taken), tf.identity(on)]).output

    # In a function of its own (inlined when the step runs: the same nodes): automatic control dependencies would
    # otherwise give a later write of a resource the capture only reads (an optimizer's step count, a GAN's second
    # optimizer's, the next step's in the same function) a control input from the call, dead on every step that
    # applies: that write would never run. Seen from outside, this function runs every step.
    with tf.device(go.device):  # what waits on the call (the step counter's write) waits on the decision's device
        return tf.function(gated, autograph=False)(go)


def when_not(go: Any, rare: Callable[[], Any]) -> Any:
    """rare() as one call op that runs where `go` is false, without a Merge of its own: its output is dead when `go`
    is true, so nothing may take it; the call must be created before a Merge that automatic control dependencies
    make wait on it (capsule/device_gates.py's, after every device's writes: capsule/replica_capture.py), and read
    no resource it does not write (a later write of one would wait on the dead call: see `unless`)."""
    import tensorflow as tf

    off, _ = tf.raw_ops.Switch(data=go, pred=go)
    return _called(off, rare)


def _called(off: Any, rare: Callable[[], Any]) -> Any:
    """rare() as one `_noinline` call op whose control input is the pivot `off` (dead when the decision is yes)."""
    import tensorflow as tf

    call = tf.function(rare, autograph=False, experimental_attributes={"_noinline": True})
    with tf.control_dependencies([tf.identity(off)]):  # the pivot: dead when `go` is true
        return call()
