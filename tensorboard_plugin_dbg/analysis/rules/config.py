"""The alert rules beyond NaN/∞: their names, the debug modes whose records they read, and their thresholds.

Every threshold has a documented default here, is a request parameter of the `alerts` and `rules` routes (declared
in api/routes/lists.py, parsed in api/params.py) and a flag of `report` (the same names with dashes).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Mapping
from typing import Any, Final

from tensorboard_plugin_dbg.reader import capsule_words
from tensorboard_plugin_dbg.wire.types import AlertType, DebugModeName

# Final: each name's type is its literal, so the wire types (AlertType) check them
NAN_INF: Final = "InfNanAlert"  # the NaN/∞ alert type (index/alert_queries.py ALERT_TYPE), as it always was
RETRACING: Final = "retracing"
SHAPE_CHANGE: Final = "shape_change"
BATCH_ALTERNATES: Final = "batch_alternates"  # a shape change that is the batch size's rhythm (train/eval)
DTYPE_CHANGE: Final = "dtype_change"
ALL_ZERO: Final = "all_zero"
DEAD_RELU: Final = "dead_relu"
VALUE_EXPLOSION: Final = "value_explosion"
VALUE_VANISHING: Final = "value_vanishing"
RULE_TYPES: tuple[AlertType, ...] = (
    RETRACING,
    SHAPE_CHANGE,
    BATCH_ALTERNATES,
    DTYPE_CHANGE,
    ALL_ZERO,
    DEAD_RELU,
    VALUE_EXPLOSION,
    VALUE_VANISHING,
)
ALERT_TYPES: tuple[AlertType, ...] = (NAN_INF, *RULE_TYPES)

# The modes whose records each rule reads (any of them will do); retracing reads graphs and executions only.
NEEDS: dict[AlertType, tuple[DebugModeName, ...]] = {
    NAN_INF: ("CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "FULL_TENSOR"),
    RETRACING: (),
    SHAPE_CHANGE: ("SHAPE", "FULL_HEALTH"),  # FULL_HEALTH records rank and size, SHAPE the dimensions too
    BATCH_ALTERNATES: ("SHAPE", "FULL_HEALTH"),
    DTYPE_CHANGE: ("SHAPE", "FULL_HEALTH"),
    ALL_ZERO: ("FULL_HEALTH",),  # the zero count: CONCISE_HEALTH records size and -inf/+inf/NaN counts only
    DEAD_RELU: ("FULL_HEALTH",),
    VALUE_EXPLOSION: ("FULL_TENSOR",),  # magnitudes: no health mode records min/max
    VALUE_VANISHING: ("FULL_TENSOR",),
}
TITLES: dict[AlertType, str] = {
    NAN_INF: "NaN/∞",
    RETRACING: "repeated function traces (retracing)",
    SHAPE_CHANGE: "output shape changed across steps",
    BATCH_ALTERNATES: "batch size alternates (train/eval batches, a last partial batch): one finding per tensor",
    DTYPE_CHANGE: "output dtype changed across steps",
    ALL_ZERO: "all-zero tensor for consecutive steps",
    DEAD_RELU: "dead ReLU (all outputs zero for consecutive steps)",
    VALUE_EXPLOSION: "values exploding (max |x| grows by a factor every step)",
    VALUE_VANISHING: "gradient vanishing (max |x| below a floor)",
}


# What each mode records of a traced tensor (tfdbg2-format.md): advice never names a mode that records only part of
# what the dump already has (a FULL_TENSOR dump is not told to re-dump in SHAPE).
_HEALTH = {"nonfinite", "size", "inf_nan_counts"}
RECORDS: dict[str, frozenset[str]] = {
    "NO_TENSOR": frozenset(),
    "CURT_HEALTH": frozenset({"nonfinite"}),
    "CONCISE_HEALTH": frozenset(_HEALTH),
    "FULL_HEALTH": frozenset(_HEALTH | {"dtype", "rank", "zero_counts", "sign_counts"}),
    "SHAPE": frozenset({"dtype", "rank", "size", "shape"}),
    "FULL_TENSOR": frozenset(_HEALTH | {"dtype", "rank", "zero_counts", "sign_counts", "shape", "values"}),
}
# The modes `replay --mode` takes (replay_cli.py), and the folder a replay writes its dump to (reader/capsule_files.py).
REPLAY_MODES = ("FULL_HEALTH", "FULL_TENSOR")


def advice(
    wanted: tuple[str, ...],
    modes: Collection[str],
    run_name: str,
    replay_dir: str,
    framework: str = "tensorflow",
    *,
    directory: str,
) -> str:
    """How to get a dump a rule can judge: the first wanted mode that records more than the dump (never one that only
    records part of it); for a capsule's replay dump (CAPSULE/replay, in `directory`), the replay command on that
    capsule's folder, as the card offers it; else why not."""
    have = frozenset().union(*(RECORDS.get(m, frozenset()) for m in modes))
    more = [m for m in wanted if not RECORDS.get(m, frozenset()) <= have]
    parent, _, last = run_name.rpartition("/")
    replayable = [m for m in more if m in REPLAY_MODES]
    if last == replay_dir and parent and replayable:
        capsule = os.path.dirname(os.path.normpath(directory))
        return f"{capsule_words.review_command(capsule)} --mode {replayable[-1]}"
    if more:
        return enable_call(more[0], framework)
    held = "/".join(sorted(modes)) or "this dump's mode"
    return f"reads {' or '.join(wanted)} records only; {held} already records all they hold (they would record less)"


def enable_call(mode: str, framework: str = "tensorflow") -> str:
    """The exact call that makes a dump with what a rule needs (from JAX: the package's own writer)."""
    if framework == "jax":
        return f'tensorboard_plugin_dbg.jax.enable_dump_debug_info(logdir, tensor_debug_mode="{mode}")'
    return (
        f'tf.debugging.experimental.enable_dump_debug_info(logdir, tensor_debug_mode="{mode}", circular_buffer_size=-1)'
    )


@dataclasses.dataclass(frozen=True)
class Thresholds:
    """Rule thresholds (hashable: part of the cache key of a run's rule findings)."""

    retrace_min: int = 5  # traces of one function; TensorFlow's own warning fires at 5 traced calls in the last 10
    dead_steps: int = 3  # consecutive steps a ReLU output is all zero
    zero_steps: int = 3  # consecutive steps any other tensor is all zero
    growth_factor: float = 10.0  # max |x| multiplied by at least this from one step to the next ...
    growth_steps: int = 3  # ... for this many consecutive steps
    vanish_floor: float = 1e-7  # a gradient's max |x| (non-zero) below this ...
    vanish_steps: int = 3  # ... for this many consecutive steps


DEFAULTS = Thresholds()
THRESHOLD_DOCS = {
    "retrace_min": "retracing: traces of one function that make an alert",
    "dead_steps": "dead_relu: consecutive steps a ReLU output is all zero",
    "zero_steps": "all_zero: consecutive steps a tensor is all zero",
    "growth_factor": "value_explosion: growth of max |x| per step",
    "growth_steps": "value_explosion: consecutive steps of that growth",
    "vanish_floor": "value_vanishing: max |x| of a gradient below this",
    "vanish_steps": "value_vanishing: consecutive steps below the floor",
}


def thresholds_from(values: Mapping[str, Any]) -> Thresholds:
    """Thresholds from parsed parameters (absent or None: the default)."""
    given = {f.name: values[f.name] for f in dataclasses.fields(Thresholds) if values.get(f.name) is not None}
    return dataclasses.replace(DEFAULTS, **given)
