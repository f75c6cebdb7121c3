"""The wire types (every JSON answer of the API) as Python types, from `api/wire_schema.json`.

Generated — do not edit; run `python scripts/gen_wire_types.py` (tests/test_contract.py fails when this file is stale).
The bottom layer: every layer may import it, it imports nothing of the package. A `<Name>Body` is `<Name>` without
the fields a layer above adds (ADDED_ABOVE in the generator: `run`, ...): what the layer below returns.
`Num` is a float that may be non-finite: Python code holds a float, the one JSON encoder spells NaN/±Inf as strings.
"""

from typing import Literal, TypeAlias

from typing_extensions import NotRequired, TypedDict

AlertRole: TypeAlias = Literal["producer", "unknown", "propagator", "contained", "expected"]


# InfNanAlert: a NaN/∞ (the index's alert list). The others are the alert rules (analysis/rules/config.py): retracing,
# output shape/dtype change across steps, a batch size that alternates (a shape change in a rhythm: train/eval batches),
# all-zero tensors, dead ReLUs, value explosion/vanishing.
AlertType: TypeAlias = Literal[
    "InfNanAlert",
    "retracing",
    "shape_change",
    "batch_alternates",
    "dtype_change",
    "all_zero",
    "dead_relu",
    "value_explosion",
    "value_vanishing",
]


class StackFrame(TypedDict):
    """wire.ts `StackFrame` (its schema definition carries no description)."""

    function: str
    host: str | None
    id: str
    is_user: bool
    line: float
    # Null while the frame's source file record has not arrived (it is resolved later, never dropped).
    path: str | None
    source_index: float


class AlertBody(TypedDict):
    """`Alert` without `index`: what the layer below returns (the one above adds `index`)."""

    # Rule findings: how many (traces of a function, consecutive steps, changes).
    count: NotRequired[float]
    # Rule findings: what was seen, in words (shapes before/after, steps all zero, what differed between traces).
    evidence: NotRequired[str]
    # Retracing: the function's name and its traces' graph ids.
    function: NotRequired[str]
    graph_id: str | None
    graph_ids: NotRequired[list[str]]
    nan: float | None
    # Counts that triggered it; null where the mode does not record them (CURT_HEALTH records only "any").
    neg_inf: float | None
    # Graph op name; for an eager execution, null.
    op_name: str | None
    op_type: str
    output_slot: float
    pos_inf: float | None
    # Root-cause classification (analysis/classify.py, containment.py); null until the analysis has run, or finite.
    # producer: its inputs were finite; unknown: some input was not recorded (a function input whose caller's tensor is
    # not in the dump, a record a circular buffer dropped); propagator: an input was already non-finite; contained: the
    # ops reading it gave finite outputs this step (a -inf mask before a softmax); expected: the same tensor was
    # contained in an earlier step.
    role: AlertRole | None
    size: float | None
    # Which list the tensor lives in.
    source: Literal["execution", "graph_execution"]
    # Index in that list.
    source_index: float
    source_line: NotRequired[str | None]
    # Rule findings only (analysis/rules/findings.py finding): the step (0-based k-th trace) it is about.
    step: NotRequired[float]
    type: AlertType | str
    # Rule findings: the user's line (the op's creation, or a retraced function's call site).
    user_frame: NotRequired[StackFrame | None]
    wall_time: float


class Alert(AlertBody):
    """wire.ts `Alert` (its schema definition carries no description)."""

    # Position in the run's wall-time ordered alert list (what begin/end page over).
    index: float


class MutedCounts(TypedDict):
    """What the request's mutes hid: in all, and per mute in request order (an alert two mutes match counts in both)."""

    by_mute: list[float]
    total: float


DebugModeName: TypeAlias = Literal[
    "NO_TENSOR",
    "CURT_HEALTH",
    "CONCISE_HEALTH",
    "FULL_HEALTH",
    "SHAPE",
    "FULL_NUMERICS",
    "FULL_TENSOR",
    "UNSPECIFIED",
]


class RuleNeed(TypedDict):
    """A rule this dump cannot judge: the modes it needs and the call that records them (analysis/rules needs())."""

    call: str
    needs: list[DebugModeName]
    rule: AlertType
    title: str


class AlertsResponseBody(TypedDict):
    """`AlertsResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    alerts: list[Alert]
    begin: float
    end: float
    muted: MutedCounts
    # Rules whose data this dump lacks (empty until the dump is read to its end).
    needs: list[RuleNeed]
    # The rules' whole-run pass is still running (or the dump is still being read): their findings come later.
    rules_pending: bool
    # Total matching the `type` filter (or all).
    total: float
    totals_by_type: dict[str, float]


class AlertsResponse(AlertsResponseBody):
    """wire.ts `AlertsResponse` (its schema definition carries no description)."""

    run: str


class AxisCounts(TypedDict):
    """Non-finite elements per index along one axis (only indices holding some; the first 1,000)."""

    count: list[float]
    index: list[float]
    truncated: bool


class CallInfoFirstNonfinite(TypedDict):
    """wire.ts `CallInfoFirstNonfinite` (its schema definition carries no description)."""

    index: float
    position: float


class CallInfo(TypedDict):
    """One tf.function call opened in Graph Execution — `index/call_queries.py:CallQueries.summary`."""

    # Its first trace with a NaN/∞ among the rows listed, and that row's position in the list; null when none.
    first_nonfinite: CallInfoFirstNonfinite | None
    # The graph it ran; null when the dump cannot name it.
    graph_id: str | None
    graph_name: str
    # The call's eager execution index.
    index: float
    op_type: str
    # Traces written while it ran (before the other filters).
    traces: float


# Which array file of a capsule: the batch (inputs, targets, sample weights), the model's variables, the optimizer's.
CapsuleArrayGroup: TypeAlias = Literal["batch", "weights", "optimizer"]


class CapsuleArrayInfo(TypedDict):
    """One batch array or variable of the capsule (what Tensor Values can open through `capsule_array`)."""

    dtype: str
    group: Literal["batch", "weights", "optimizer"]
    name: str
    shape: list[float]


class NonFinitePositions(TypedDict):
    """Where the non-finite elements are (`analysis/tensor_stats.py:_nonfinite`)."""

    # One entry per axis; null for an axis longer than 2^20.
    per_axis: list[AxisCounts | None]
    # The first 100 positions in C order, each an index tuple.
    positions: list[list[float]]
    total: float
    truncated: bool


# A float that may be non-finite.
Num: TypeAlias = float | Literal["NaN", "Infinity", "-Infinity"]


class TensorHistogram(TypedDict):
    """Histogram of the finite elements: counts[i] in [edges[i], edges[i + 1]); the non-finite counts beside it."""

    counts: list[float]
    edges: list[Num]
    nan: float
    neg_inf: float
    pos_inf: float


class TensorSlice(TypedDict):
    """Values of a numpy basic slice (`analysis/tensor_values.py:slice_values`), flattened in C order of `shape`."""

    shape: list[float]
    # The slice as parsed, one item per axis (e.g. "0,1:3,:").
    spec: str
    # Numbers (bfloat16 widened to float32), booleans, complex as "(re+imj)" text, strings as text.
    values: list[Num | bool | str]


class TensorStats(TypedDict):
    """Whole-tensor numbers (`analysis/tensor_stats.py:compute`). Classes and stats are of the values, of the modulus
    |z| for complex (`of`), none for strings (counts null). min/max/mean/std: of the finite elements."""

    count: float
    max: Num | None
    mean: Num | None
    min: Num | None
    nan: float | None
    neg: float | None
    neg_inf: float | None
    of: Literal["values", "modulus", "none"]
    pos: float | None
    pos_inf: float | None
    std: Num | None
    zero: float | None


class CapsuleArrayResponse(TypedDict):
    """One batch array or variable of a capsule as Tensor Values shows it: the same whole-array numbers and slice as a
    dumped FULL_TENSOR value (`TensorResponse`), read from the capsule's .npz."""

    # The capsule's folder relative to the logdir (its card's `path`).
    capsule: str
    dtype: str
    group: CapsuleArrayGroup
    histogram: TensorHistogram | None
    # The batch array's flattened name ('x', 'y/0', ...) or the variable's path.
    name: str
    nonfinite: NonFinitePositions | None
    shape: list[float]
    size: float
    slice: TensorSlice | None
    stats: TensorStats | None
    # The training step the capsule was captured at.
    step: float


class CapsuleBadWeight(TypedDict):
    """A model variable (or optimizer slot) of the capsule holding non-finite values."""

    group: Literal["weights", "optimizer"]
    name: str
    nan: float
    neg_inf: float
    pos_inf: float
    size: float


class CapsuleHealth(TypedDict):
    """Health counts of one array (the trigger, a weight)."""

    nan: float
    neg_inf: float
    pos_inf: float
    size: float


class CapsuleLayerHistory(TypedDict):
    """Per trainable variable, its gradient norm over the last K steps up to the trigger (capsule/layer_history.py)."""

    # The variable that left its band first, null when none did or nothing was recorded.
    first: str | None
    # log10 of each row's gradient norm per step, oldest first, the trigger's step last; null where non-finite.
    grad_norm: list[list[float | None]]
    # How many steps before the trigger it left its band.
    lead: float | None
    # Steps per row.
    steps: float
    # e.g. "first out of band: dense_3/kernel, 4 steps before the trigger (…)"; older capsules: "not recorded by this
    # capsule's version".
    text: str
    # Variables recorded in all (before the cap of `variables`).
    total: float
    # The heatmap's rows (at most 48: the most out of band, in the model's order).
    variables: list[str]


class CapsuleSample(TypedDict):
    """One sample (row along the first axis) of a batch array: its non-finite count, max |x| of its finite values."""

    array: str
    max_abs: float
    nonfinite: float
    sample: float


class CapsuleLossRow(TypedDict):
    """One sample's loss at the trigger."""

    loss: Num
    sample: float


class CapsuleSampleLoss(TypedDict):
    """The per-sample loss at the trigger (capsule/forensics.py wrote it; older capsules: none, `text` says so)."""

    # The previous step's batch, its per-sample loss in one sentence (older capsules: "not recorded by ...").
    previous: NotRequired[str]
    # The top rows: non-finite first, then by loss (at most 8); a non-finite loss is "NaN" / "Infinity".
    rows: list[CapsuleLossRow]
    samples: float
    # e.g. "rows 17 and 40 carry 98 % of the loss (64 samples)", "row 5 is non-finite (NaN) of 8".
    text: str


class CapsuleTrigger(TypedDict):
    """What triggered the capture: the loss, or the first non-finite gradient (named by its variable's path)."""

    health: CapsuleHealth
    kind: Literal["loss", "gradient", "unknown"]
    name: str
    # The trigger in words, as `report` prints it.
    text: str


# What the replay of a capsule found: the same step non-finite again, finite, non-finite only when compiled with XLA as
# the run ran it (the un-compiled dump stayed finite), or no replay possible.
CapsuleVerdict: TypeAlias = Literal["reproduced", "not_reproduced", "reproduced_only_under_xla", "cannot_replay"]


class CapsuleInfo(TypedDict):
    """One capsule folder: damaged ones carry `error` and nothing else of the capture."""

    arrays: NotRequired[list[CapsuleArrayInfo]]
    # Variables and optimizer slots holding non-finite values (none expected: the capture precedes the update).
    bad_weights: NotRequired[list[CapsuleBadWeight]]
    batch_index: NotRequired[float | None]
    # When the capsule was captured: its manifest's `created`, in seconds since the epoch (the clock of a dump's
    # `wall_time`); null when the manifest has none. The dashboard opens on the capsules when one is newer than every
    # run's first NaN.
    captured_time: NotRequired[float | None]
    epoch: NotRequired[float | None]
    error: NotRequired[str]
    # Per-layer history: gradient norms over the last steps, the first out of band (analysis/capsule_layers.py).
    layer_history: NotRequired[CapsuleLayerHistory]
    # The capsule's folder relative to the logdir.
    path: str
    # The command that replays this capsule (copyable).
    replay_command: NotRequired[str]
    # The run holding the replay's dump, once replayed (open it for the root cause and the line).
    replay_run: NotRequired[str | None]
    # The loss of each sample at the trigger, top rows first (analysis/capsule_rows.py card_fields).
    sample_loss: NotRequired[CapsuleSampleLoss]
    # Per sample of each batch array, the ones with non-finite values first, then by max |x| (at most 50).
    samples: NotRequired[list[CapsuleSample]]
    # Batch samples in all (before the cap of `samples`).
    samples_total: NotRequired[float]
    status: Literal["ok", "damaged"]
    step: NotRequired[float]
    trigger: NotRequired[CapsuleTrigger]
    # The replay's verdict, null before any replay.
    verdict: NotRequired[CapsuleVerdict | None]
    # The verdict in words, as `report` prints it.
    verdict_text: NotRequired[str]


class CapsuleSampleRow(TypedDict):
    """One sample (first axis) of one batch array."""

    # The replay's root cause points at this sample (it holds the element named).
    marked: bool
    # Largest finite |x|; null when the sample has none.
    max_abs: float | None
    # Smallest finite element; null when the sample has none.
    min: float | None
    # Finite elements below 0.
    negatives: float
    # NaN/±∞ elements of the sample.
    nonfinite: float
    sample: float
    # Elements equal to 0.
    zeros: float


class CapsuleSamplesResponse(TypedDict):
    """A page of one batch array's per-sample table: the rows the root cause points at first, then the non-finite ones,
    then by max |x|."""

    array: str
    # Every batch array of the capsule (one table each).
    arrays: list[str]
    begin: float
    capsule: str
    end: float
    # Samples the root cause points at (0 before a replay).
    marked: float
    # The root cause's sentence that marks them, null when none does.
    marked_by: str | None
    rows: list[CapsuleSampleRow]
    # Samples of this array.
    total: float


class CapsulesResponse(TypedDict):
    """Every capsule under the logdir, first captured first."""

    capsules: list[CapsuleInfo]
    logdir: str
    # Why no card could be read (a logdir behind a URL that cannot be listed: unreachable, denied), in words.
    notice: NotRequired[str]


class CompareCounts(TypedDict):
    """wire.ts `CompareCounts` (its schema definition carries no description)."""

    divergent: float
    divergent_executions: float
    # `divergent` split: differing graph traces (what Graph Execution's "divergent only" lists) + eager executions.
    divergent_traces: float
    matched: float
    matched_executions: float
    matched_traces: float
    only_in_a: float
    only_in_b: float
    # Graph traces only run B holds (part of `only_in_b`): Graph Execution's "divergent only" lists them too.
    only_in_b_traces: float


class CompareMetric(TypedDict):
    """How two aligned tensors differ (only the fields their tensor_debug_mode can tell)."""

    bitwise_equal: NotRequired[bool]
    cosine: NotRequired[float | None]
    # Health modes: the differing counts, column -> [A, B].
    counts: NotRequired[dict[str, list[float]]]
    differs: bool
    dtype_a: NotRequired[str]
    dtype_b: NotRequired[str]
    max_abs: NotRequired[float | None]
    max_rel: NotRequired[float | None]
    mean_abs: NotRequired[float | None]
    nan_only_one_side: NotRequired[float]
    shape_a: NotRequired[list[float]]
    shape_b: NotRequired[list[float]]
    # Human sentence, e.g. "max abs 0.5, max rel 0.25, ..." or "zero 0 → 300".
    summary: str


class CompareSide(TypedDict):
    """One op of one run: a graph trace (`source` "graph", `index` into graph_executions) or an eager execution."""

    code: str | None
    # The user's innermost frame where the op was made (or the eager op ran); null when none was recorded.
    file: str | None
    # Function name without TensorFlow's numeric suffix (graph ops).
    function: str | None
    graph_id: str | None
    index: float
    line: float | None
    # The k-th trace of this (function, op, output) in its run (the k-th execution of this op type, eager).
    occurrence: float
    # Graph op name; null for an eager execution.
    op_name: str | None
    op_type: str | None
    output: float
    source: Literal["graph", "eager"]


class CompareInput(TypedDict):
    """wire.ts `CompareInput` (its schema definition carries no description)."""

    a: CompareSide | None
    b: CompareSide | None
    metric: CompareMetric | None
    # The B op's input `producer:slot`.
    name: str
    status: Literal["same", "differs", "only_in_b", "not_recorded"]


class CompareFinding(TypedDict):
    """The first divergence: the earliest tensor in B that differs while its aligned inputs do not."""

    a: CompareSide | None
    b: CompareSide | None
    inputs: list[CompareInput]
    kind: Literal["value", "op_type", "follows_from_only_in_b", "only_in_b", "only_in_a"]
    metric: CompareMetric | None
    # Ops only B runs that the difference follows from.
    only_in_b_ops: list[CompareSide]
    why: str


class CompareItem(TypedDict):
    """One differing pair, in B's order."""

    a: CompareSide
    b: CompareSide
    metric: CompareMetric
    position: float


class CompareResponseBody(TypedDict):
    """`CompareResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    base: str
    begin: float
    counts: CompareCounts
    # Differing pairs [begin, end) in B's order; `total` = counts.divergent.
    divergent: list[CompareItem]
    end: float
    first_divergence: CompareFinding | None
    mode: str
    notes: list[str]
    only_in_a: list[CompareSide]
    only_in_b: list[CompareSide]
    total: float


class CompareResponse(CompareResponseBody):
    """wire.ts `CompareResponse` (its schema definition carries no description)."""

    # Run B (under suspicion) and run A (the baseline).
    run: str


class HealthConcise(TypedDict):
    """wire.ts `HealthConcise` (its schema definition carries no description)."""

    mode: Literal["CONCISE_HEALTH"]
    nan: float
    neg_inf: float
    pos_inf: float
    size: float
    tensor_id: float


class HealthCurt(TypedDict):
    """wire.ts `HealthCurt` (its schema definition carries no description)."""

    any_inf_or_nan: bool
    mode: Literal["CURT_HEALTH"]
    tensor_id: float


class HealthEmpty(TypedDict):
    """An eager output that health modes did not instrument (a non-float output): an empty TensorProto placeholder."""

    mode: Literal["EMPTY"]


class HealthFull(TypedDict):
    """wire.ts `HealthFull` (its schema definition carries no description)."""

    device_id: float
    # DataType name without the DT_ prefix, lower case: 'float32', 'float16', 'bfloat16', 'int32', ...
    dtype: str
    mode: Literal["FULL_HEALTH"]
    nan: float
    neg: float
    neg_inf: float
    pos: float
    pos_inf: float
    rank: float
    size: float
    tensor_id: float
    zero: float


class HealthFullTensor(TypedDict):
    """Summary of a FULL_TENSOR value (the values themselves come from `graph_execution` / `execution`)."""

    dtype: str
    max: Num | None
    mean: Num | None
    # Over finite elements; null when there are none or the dtype is not numeric.
    min: Num | None
    mode: Literal["FULL_TENSOR"]
    nan: float | None
    neg: float | None
    # Counts are null for non-numeric dtypes (string, bool counted as 0/1, resource ...).
    neg_inf: float | None
    pos: float | None
    pos_inf: float | None
    shape: list[float]
    size: float
    zero: float | None


class HealthNoTensor(TypedDict):
    """wire.ts `HealthNoTensor` (its schema definition carries no description)."""

    mode: Literal["NO_TENSOR"]


class HealthShape(TypedDict):
    """wire.ts `HealthShape` (its schema definition carries no description)."""

    dtype: str
    mode: Literal["SHAPE"]
    rank: float
    # The last min(rank, 6) dimensions, as recorded (TF keeps only 6).
    shape: list[float]
    # True when rank > 6 and leading dimensions were not recorded.
    shape_truncated: bool
    size: float
    tensor_id: float


class HealthUnknown(TypedDict):
    """Anything the decoder did not understand; the UI shows "unknown" and never throws."""

    mode: Literal["UNKNOWN"]
    reason: str


TensorHealth: TypeAlias = (
    HealthNoTensor
    | HealthCurt
    | HealthConcise
    | HealthFull
    | HealthShape
    | HealthFullTensor
    | HealthEmpty
    | HealthUnknown
)


class GraphExecutionRow(TypedDict):
    """wire.ts `GraphExecutionRow` (its schema definition carries no description)."""

    device_name: str | None
    graph_id: str
    health: TensorHealth
    host: str
    index: float
    op_name: str
    # Null when the op is not (yet) in the graphs file.
    op_type: str | None
    output_slot: float
    wall_time: float


class TraceDifference(TypedDict):
    """How one graph trace of run B differs from its aligned trace in run A."""

    # FULL_TENSOR: the max abs difference; null otherwise.
    magnitude: float | None
    # differs: beyond tolerance; same: within it; only_in_b: A holds no aligned trace; not_compared: nothing both runs
    # record (NO_TENSOR).
    status: Literal["differs", "same", "only_in_b", "not_compared"]
    # The whole difference in words (a tooltip).
    summary: str
    # A table cell: "=" (equal), "0.5 / 0.25" (FULL_TENSOR max abs / max rel), "NaN 0→3" (health counts), "only in B";
    # "" when not compared.
    text: str


class CompareRowsResponseBody(TypedDict):
    """`CompareRowsResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    # Run A, the baseline.
    base: str
    begin: float
    call: CallInfo | None
    # differences[i] is rows[i]'s.
    differences: list[TraceDifference]
    end: float
    rows: list[GraphExecutionRow]
    # Rows matching the filters (and, with divergent_only, differing from A).
    total: float
    unfiltered_total: float


class CompareRowsResponse(CompareRowsResponseBody):
    """Run B's graph execution traces [begin, end) under the filters, each with its difference from run A."""

    run: str


class CompareTracesResponseBody(TypedDict):
    """`CompareTracesResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    base: str
    differences: list[TraceDifference]
    indices: list[float]


class CompareTracesResponse(CompareTracesResponseBody):
    """The differences of the given graph traces of run B (Graph Structure's nodes), in the order asked."""

    run: str


class HealthDifference(TypedDict):
    """Health modes: each count both records hold, as [A, B, A − B] (the run's own tensor and device ids left out)."""

    # Fields that are not counts and differ (dtype, shape), as "A → B" text.
    changed: list[str]
    counts: dict[str, list[Num]]


class TensorDifference(TypedDict):
    """A − B over the requested slice of two FULL_TENSOR values of one shape, element by element."""

    # Full index into the tensor of that element (null with max_abs).
    argmax: list[float] | None
    # The largest finite |A − B| in the slice (null: the slice holds none).
    max_abs: Num | None
    # Elements of the slice whose difference is not finite (NaN or ∞ on one side only).
    nonfinite: float
    shape: list[float]
    # The slice as parsed (the same for A, B and A − B).
    spec: str
    # A − B per element of the slice in C order (both NaN, or the same ±∞: 0; NaN on one side: NaN).
    values: list[Num]


class TensorRef(TypedDict):
    """Which tensor: `index/tensor_queries.py:TensorRecord.describe`. graph: a graph execution trace (output = its
    slot); eager: an execution's output."""

    graph_id: str | None
    index: float
    op_name: str | None
    op_type: str | None
    output: float
    source: Literal["graph", "eager"]
    tensor_debug_mode: DebugModeName
    wall_time: float


class TensorResponseBody(TypedDict):
    """`TensorResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    dtype: str | None
    has_values: bool
    health: TensorHealth | None
    histogram: TensorHistogram | None
    nonfinite: NonFinitePositions | None
    note: str | None
    shape: list[float] | None
    size: float | None
    slice: TensorSlice | None
    stats: TensorStats | None
    tensor: TensorRef


class TensorResponse(TensorResponseBody):
    """Produced by `api/routes.py:tensor`. Without values (not FULL_TENSOR), `health` says what the mode carries and
    `note` how to record values; dtype/shape/size come from the health where it has them."""

    run: str


class CompareValuesResponseBody(TypedDict):
    """`CompareValuesResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    # The aligned tensor of run A, with the same slice; null when only B holds it.
    a: TensorResponse | None
    b: TensorResponse
    base: str
    # FULL_TENSOR with a slice and the same shape on both sides; else null (`note` says why).
    difference: TensorDifference | None
    health_difference: HealthDifference | None
    # How the whole tensors differ (the comparison's measure); null when only B holds it.
    metric: CompareMetric | None
    note: str | None
    status: Literal["paired", "only_in_b"]


class CompareValuesResponse(CompareValuesResponseBody):
    """Produced by `api/routes/compare_values.py`: B's tensor, its aligned counterpart in A, and A − B."""

    # Run B (under suspicion; the tensor asked for) and run A (the baseline).
    run: str


class DeviceCount(TypedDict):
    """Where ops ran: one device on one host, with how many of the run's records ran there."""

    # Full device name, e.g. '/job:localhost/replica:0/task:0/device:CPU:1'; null: recorded without one.
    device_name: str | None
    executions: float
    graph_executions: float
    # The host whose file set holds the records.
    host: str


class HostFirstNonfinite(TypedDict):
    """wire.ts `HostFirstNonfinite` (its schema definition carries no description)."""

    # Seconds after the first host of the run went non-finite (0 for that host).
    after_first_s: float
    # The trace's index in the run's graph execution list.
    index: float
    wall_time: float


class HostFacts(TypedDict):
    """One host of a multi-host run (file sets sharing a tfdbg_run_id): its traces and when it first went non-finite."""

    # Its earliest graph execution trace (by wall time) holding NaN/∞; null: none.
    first_nonfinite: HostFirstNonfinite | None
    graph_executions: float
    host: str


class DevicesResponseBody(TypedDict):
    """`DevicesResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    # Sorted by device name, then host; only pairs with at least one trace or execution.
    devices: list[DeviceCount]
    # Per host, sorted by host (index/device_queries.py host_facts).
    host_facts: NotRequired[list[HostFacts]]
    # Every host of the run (RunInfo.hosts).
    hosts: list[str]


class DevicesResponse(DevicesResponseBody):
    """wire.ts `DevicesResponse` (its schema definition carries no description)."""

    run: str


# Machine-readable error codes: the constants of `api/errors.py` (its STATUS_BY_CODE gives each one's HTTP status).
ErrorCode: TypeAlias = Literal[
    "bad_parameter",
    "missing_parameter",
    "page_too_large",
    "not_found",
    "method_not_allowed",
    "not_ready",
    "internal",
]


class ErrorResponseError(TypedDict):
    """wire.ts `ErrorResponseError` (its schema definition carries no description)."""

    code: ErrorCode
    message: str


class ErrorResponse(TypedDict):
    """Produced by `api/errors.py:error_body`."""

    error: ErrorResponseError


class TensorValue(TypedDict):
    """The full value of a FULL_TENSOR tensor, flattened in row-major order, sliced by element range."""

    # Element range [begin, end) of `values` within the flattened tensor.
    begin: float
    dtype: str
    end: float
    shape: list[float]
    size: float
    # True when end - begin < size.
    truncated: bool
    # Numbers for numeric dtypes, booleans for bool, strings (UTF-8, invalid bytes replaced) for string.
    values: list[Num | bool | str]


class ExecutionDetail(TypedDict):
    """wire.ts `ExecutionDetail` (its schema definition carries no description)."""

    alert: bool
    # The device of its first output (full name; an op's outputs are on its device), null without outputs.
    device: str | None
    # The graph a function call ran, from `graph_id` or, when TF left it empty, joined by wall time; null for ops.
    graph_id: str | None
    graph_name: str | None
    host: str
    index: float
    input_tensor_ids: list[float]
    is_function: bool
    nan: float | None
    # Sum of non-finite counts over the outputs (null where unknown), and whether any output is non-finite.
    neg_inf: float | None
    num_outputs: float
    # Op type for an eager op, function name (e.g. '__inference_train_step_123') for a tf.function call.
    op_type: str
    # Device names for each output (resolved from `debugged_device`), null where unknown.
    output_devices: list[str | None]
    output_tensor_device_ids: list[float]
    output_tensor_ids: list[float]
    # One entry per output slot; HealthEmpty for an output that was not instrumented.
    outputs: list[TensorHealth]
    pos_inf: float | None
    stack_frame_ids: list[str]
    tensor_debug_mode: DebugModeName
    # FULL_TENSOR values per output (first `max_elements`), null entries otherwise.
    values: list[TensorValue | None]
    wall_time: float


class ExecutionDigest(TypedDict):
    """wire.ts `ExecutionDigest` (its schema definition carries no description)."""

    alert: bool
    # The device of its first output (full name; an op's outputs are on its device), null without outputs.
    device: str | None
    # The graph a function call ran, from `graph_id` or, when TF left it empty, joined by wall time; null for ops.
    graph_id: str | None
    host: str
    index: float
    is_function: bool
    nan: float | None
    # Sum of non-finite counts over the outputs (null where unknown), and whether any output is non-finite.
    neg_inf: float | None
    num_outputs: float
    # Op type for an eager op, function name (e.g. '__inference_train_step_123') for a tf.function call.
    op_type: str
    pos_inf: float | None
    tensor_debug_mode: DebugModeName
    wall_time: float


class ExecutionsResponseBody(TypedDict):
    """`ExecutionsResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    begin: float
    end: float
    executions: list[ExecutionDigest]
    total: float


class ExecutionsResponse(ExecutionsResponseBody):
    """wire.ts `ExecutionsResponse` (its schema definition carries no description)."""

    run: str


class FirstNan(TypedDict):
    """The first NaN/∞ of a run: its producing op and the line to fix (the forward op's for a NaN born in the backward
    pass, the dataset's for data, else the producer's own user line)."""

    file: str | None
    # Name of the producer's graph (the tf.function), null for eager ops or when unknown.
    graph_name: str | None
    line: float | None
    op_name: str | None
    op_type: str
    wall_time: float


Framework: TypeAlias = Literal["tensorflow", "jax"]


class GraphExecutionDetail(TypedDict):
    """wire.ts `GraphExecutionDetail` (its schema definition carries no description)."""

    # The eager execution (a tf.function call) whose window holds the trace: the first execution record written at or
    # after it; null past the last record. The timeline scrolls to it and marks it.
    call_index: float | None
    device_name: str | None
    # Graph ids, outermost first, ending with `graph_id`.
    graph_chain: list[str]
    graph_id: str
    graph_name: str
    health: TensorHealth
    host: str
    index: float
    op_name: str
    # Null when the op is not (yet) in the graphs file.
    op_type: str | None
    output_slot: float
    tensor_debug_mode: DebugModeName
    # For FULL_TENSOR traces: the value, sliced by the `begin`/`max_elements` parameters.
    value: TensorValue | None
    wall_time: float


class GraphExecutionsResponseBody(TypedDict):
    """`GraphExecutionsResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    begin: float
    # With the `call` filter: the tf.function call whose traces these are; null without it.
    call: CallInfo | None
    end: float
    rows: list[GraphExecutionRow]
    # Rows matching the filters.
    total: float
    # Rows in the run regardless of filters.
    unfiltered_total: float


class GraphExecutionsResponse(GraphExecutionsResponseBody):
    """wire.ts `GraphExecutionsResponse` (its schema definition carries no description)."""

    run: str


class GraphRef(TypedDict):
    """wire.ts `GraphRef` (its schema definition carries no description)."""

    graph_id: str
    name: str


class GraphInfoBody(TypedDict):
    """`GraphInfo` without `run`: what the layer below returns (the one above adds `run`)."""

    # Outermost first, ending with this graph.
    chain: list[GraphRef]
    graph_id: str
    inner_graphs: list[GraphRef]
    name: str
    op_count: float
    outer_graph_id: str | None


class GraphInfo(GraphInfoBody):
    """wire.ts `GraphInfo` (its schema definition carries no description)."""

    run: str


class HealthMapRow(TypedDict):
    """One row of the health map: an op's output slot over its steps, binned (analysis/health_map.py health_map)."""

    # Per cell: shape or dtype differs from the previous cell's.
    changed: list[bool]
    first_nonfinite_step: float | None
    graph_id: str
    # The graph's name (the tf.function's), numbered where two graphs share it ("train_step #2"): op names repeat in a
    # retraced function, the graph tells the rows apart (analysis/health_map.py graph_labels).
    graph_name: str
    kind: float
    # Per cell: traces holding NaN/∞.
    nonfinite: list[float]
    op_name: str
    op_type: str
    output_slot: float
    # How many times this output was traced (its steps).
    steps: float
    # Per cell: the graph_executions index it stands for (first non-finite, else the bin's last); -1 none.
    trace: list[float]
    # Per cell: the cell's trace's zero fraction (FULL_HEALTH), null where unknown.
    zero: list[float | None]


class HealthMapResponseBody(TypedDict):
    """`HealthMapResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    begin: float
    # Steps per cell.
    bin: float
    columns: float
    end: float
    rows: list[HealthMapRow]
    step_begin: float
    step_end: float
    # The most steps of any row.
    steps: float
    # Rows (op output slots) in all.
    total: float


class HealthMapResponse(HealthMapResponseBody):
    """analysis/health_map.py health_map: ops (NaN/∞ first) x step bins."""

    run: str


class LineOp(TypedDict):
    """wire.ts `LineOp` (its schema definition carries no description)."""

    # Made directly by this line (not through a call it makes).
    direct: bool
    # graph_executions index of its first trace with -inf, +inf or NaN; null when none.
    first_nonfinite: float | None
    graph_id: str
    graph_name: str
    nonfinite_traces: float
    op_name: str
    op_type: str
    # TensorFlow recorded its health: a trace in a mode that counts NaN/∞ (not NO_TENSOR or SHAPE). Function-input
    # placeholders, for one, are never traced.
    traced: bool


class LineOpsResponseBody(TypedDict):
    """`LineOpsResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    begin: float
    direct: float
    end: float
    index: float
    line: float
    nonfinite: float
    # Non-finite ones first, then direct ones, each group in creation order.
    rows: list[LineOp]
    # Ops listed at this line; `direct` and `nonfinite` count among them.
    total: float


class LineOpsResponse(LineOpsResponseBody):
    """wire.ts `LineOpsResponse` (its schema definition carries no description)."""

    run: str


class NeighborhoodEdge(TypedDict):
    """wire.ts `NeighborhoodEdge` (its schema definition carries no description)."""

    # The edge crosses a function boundary (a caller's tensor into a function input, a call into its graph).
    cross_graph: bool
    source: str
    source_slot: float
    target: str
    target_slot: float


class NeighborhoodNode(TypedDict):
    """One node of the graph around an op (analysis/neighborhood.py neighborhood)."""

    # Hops from the focused op: negative upstream, positive downstream.
    depth: float
    device: str | None
    execution_index: NotRequired[float]
    graph_id: str | None
    health: TensorHealth | None
    # `graph_id:op_name` for an op, `exec:N` for the eager execution a function input came from.
    id: str
    kind: Literal["op", "execution"]
    # For a function input: where its value came from, or why that cannot be known.
    link: NotRequired[str]
    more_down: float
    # Edges not followed (the hop limit or the node cap).
    more_up: float
    # On a path from the root cause's producer to the focused op.
    on_path: bool
    op_name: str | None
    op_type: str
    output_slot: NotRequired[float]
    role: AlertRole | None
    # The op's trace of the focused step (graph_executions index); null when the op has none.
    trace_index: float | None


class NeighborhoodResponseBody(TypedDict):
    """`NeighborhoodResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    direction: Literal["up", "down", "both"]
    edges: list[NeighborhoodEdge]
    graph_id: str
    hops: float
    near: float | None
    nodes: list[NeighborhoodNode]
    # What the picture cannot show (no control edges in a dump).
    notes: list[str]
    op_name: str
    # The node cap was reached: some edges end in a `more` count.
    truncated: bool


class NeighborhoodResponse(NeighborhoodResponseBody):
    """wire.ts `NeighborhoodResponse` (its schema definition carries no description)."""

    run: str


# Every notice code the backend sends. Problems with the dump's files come from `index/run_status.py` and
# `index/catalog.py` (unreadable folders, failed refresh passes); the explanations of an empty panel from
# `index/run_status.py`, and `no_dump_found` from `index/catalog.py` and `plugin.py`.
NoticeCode: TypeAlias = Literal[
    "damaged_record",
    "refresh_failed",
    "unreadable_file",
    "missing_file",
    "partial_record",
    "circular_buffer",
    "no_tensor_mode",
    "eager_only",
    "no_dump_found",
    "capsules",
    "scanning",
    "no_graph_executions",
    "no_executions",
    "still_indexing",
]


class Notice(TypedDict):
    """A problem or explanation shown to the user (status line, empty-panel reason)."""

    code: NoticeCode
    # Path relative to the run's directory, when the notice is about one file.
    file: NotRequired[str]
    message: str
    # Byte offset in that file.
    offset: NotRequired[float]
    severity: Literal["error", "warning", "info"]


class OpSummary(TypedDict):
    """wire.ts `OpSummary` (its schema definition carries no description)."""

    graph_id: str
    num_outputs: float
    op_name: str
    op_type: str


class TraceIndices(TypedDict):
    """Trace indices of one op output (or of the whole op), capped."""

    # Number of traces.
    count: float
    # Up to 1,000 indices into graph_executions: the nearest to `near` when given, else the first.
    indices: list[float]


class OpConsumer(TypedDict):
    """wire.ts `OpConsumer` (its schema definition carries no description)."""

    # Input slot of the consumer.
    input_slot: float
    op: OpSummary | None
    op_name: str
    traces: TraceIndices


class OpInfoConsumersItem(TypedDict):
    """wire.ts `OpInfoConsumersItem` (its schema definition carries no description)."""

    consumers: list[OpConsumer]
    output_slot: float


class OpInput(TypedDict):
    """wire.ts `OpInput` (its schema definition carries no description)."""

    # Null when the producing op is not in the graph (should not happen, but dumps can be partial).
    op: OpSummary | None
    op_name: str
    # Output slot of the producing op.
    output_slot: float
    # Input slot of the focused op.
    slot: float
    # Traces of that producing op's output slot. count 0 means "not traced" (e.g. a function-input Placeholder).
    traces: TraceIndices


class OpInfoBody(TypedDict):
    """`OpInfo` without `run`: what the layer below returns (the one above adds `run`)."""

    # One entry per output slot, each listing its consumers.
    consumers: list[OpInfoConsumersItem]
    device_name: str | None
    graph_chain: list[GraphRef]
    graph_id: str
    host: str | None
    inputs: list[OpInput]
    num_outputs: float
    op_name: str
    op_type: str
    output_tensor_ids: list[float]
    stack_frame_ids: list[str]
    # Traces of this op (all output slots).
    traces: TraceIndices


class OpInfo(OpInfoBody):
    """wire.ts `OpInfo` (its schema definition carries no description)."""

    run: str


class RemoteCost(TypedDict):
    """What reading a remote logdir (gs://, s3://, any fsspec URL) cost this process so far: storage.cost()."""

    # bytes the ranged reads fetched
    bytes: float
    # ranged reads
    gets: float
    # size lookups of objects no listing covered
    heads: float
    # listing requests (the service answers 1,000 objects a page)
    lists: float


class RootCauseData(TypedDict):
    """The data carried the NaN (analysis/producer.py _data): which batch and, with FULL_TENSOR, where."""

    # 0-based: the iterator op's run that handed it out; null when no iterator output after it held the NaN.
    batch: float | None
    # The NaN was born inside a tf.data function (a map's division): the producer's line is the one to fix, and the
    # pipeline's line (source_op, user_frame) is context, the dataset it was made in. False: the data came in with it.
    born_in_pipeline: bool
    note: str
    # Index tuples of the first non-finite elements; null when the mode records no values.
    positions: list[list[float]] | None
    source_line: str | None
    # The pipeline's first dataset op (e.g. TensorSliceDataset) and the user's line that made it.
    source_op: str | None
    user_frame: StackFrame | None


class RootCauseForward(TypedDict):
    """The forward op a gradient op differentiates (analysis/gradients.py forward_op): the line to fix."""

    op_name: str
    op_type: str
    source_line: str | None
    user_frame: StackFrame | None
    # One sentence on why the gradient broke where the forward pass did not (the tf.where trap: the forward value was
    # masked, its derivative was not); absent when there is nothing to add.
    why: NotRequired[str]


class RootCauseInput(TypedDict):
    """wire.ts `RootCauseInput` (its schema definition carries no description)."""

    # Human sentence, e.g. "probs:0 — 1 zero among 1,000 elements" or "not traced by TensorFlow".
    description: str
    # The eager execution whose output it was (an eager input, or what the caller passed into a function input).
    execution_index: float | None
    # Non-finite as in earlier runs where its consumers absorbed it (not what broke this op).
    expected: NotRequired[bool]
    # Index of that trace in graph_executions; null when not traced.
    graph_execution_index: float | None
    # Its most recent health before the producer ran; null when not traced.
    health: TensorHealth | None
    # Not recorded, but known not to matter (not a floating-point tensor) or followed to the caller's tensor.
    linked: NotRequired[bool]
    op_name: str
    op_type: str | None
    output_slot: float
    # Input slot of the producer op.
    slot: float
    # False when TF did not trace that tensor (e.g. a function-input Placeholder, a gradient graph).
    traced: bool


class RootCauseProducerBody(TypedDict):
    """`RootCauseProducer` without `graph_name`, `device`: what the layer below returns (the one above adds
    `graph_name`, `device`)."""

    alert: Alert
    # A NaN capsule's replay (analysis/capsule_inputs.py): its inputs are the captured batch, and this sentence says
    # what it held, e.g. "the NaN came with the batch: x[5, 3] (sample 5, batch 3 of epoch 1)" or "Log at train.py:23
    # received x[5, 3] = -2.0 (batch 3 of epoch 1)". Absent outside a capsule's replay.
    capsule_batch: NotRequired[str]
    # Set when an input pipeline's op handed out the first non-finite tensor.
    data: RootCauseData | None
    # Set when the producer is a gradient op: the forward op, whose line is the one to fix.
    forward: RootCauseForward | None
    graph_id: str | None
    inputs: list[RootCauseInput]
    # False when the inputs' health cannot be known (CURT_HEALTH, untraced inputs, eager inputs).
    inputs_known: bool
    # Which loss an anonymous loss op is (analysis/loss_name.py), e.g. "the loss: `mse`, given to compile() at
    # train.py:16 — model.compile(...)". Absent when the producer is not Keras's compiled loss.
    loss: NotRequired[str]
    op_name: str | None
    op_type: str
    output_health: TensorHealth
    # e.g. "overflow of float16's range (its largest finite value is 65504)"; null otherwise.
    overflow: str | None
    # producer: its inputs were recorded finite; unknown: some input was not recorded (see its description).
    role: Literal["producer", "unknown"]
    # 0-based: how many times this op (or eager op type) ran before.
    run_number: float
    # Text of the user frame's line, when the source file is in the dump.
    source_line: str | None
    stack_frame_ids: list[str]
    # The producer is a JAX op whose body the writer did not trace (analysis/loop_iterations.py): a while loop's output
    # holding the NaN while its traced iterations were finite ("the NaN appeared in iterations 101–150 of this while
    # loop, which are not traced (...)"), or a shard_map, whose body is not recorded. Absent otherwise.
    untraced_body: NotRequired[str]
    # Innermost frame in user code (not TensorFlow, Keras, site-packages, the standard library).
    user_frame: StackFrame | None


class RootCauseProducer(RootCauseProducerBody):
    """wire.ts `RootCauseProducer` (its schema definition carries no description)."""

    # Where it ran: the trace's device, or the execution's first output's (full name); null when not recorded.
    device: str | None
    # Name of `graph_id`'s graph (the tf.function), from `analysis/run_verdict.py`; null when unknown.
    graph_name: str | None


class RootCauseSkip(TypedDict):
    """A contained non-finite source the analysis skipped (analysis/explain.py skipped)."""

    description: str
    graph_execution_index: float
    op_name: str
    op_type: str
    # How many of its runs were contained before the root cause.
    runs: float
    source_line: str | None
    user_frame: StackFrame | None


class RootCauseResponseBody(TypedDict):
    """`RootCauseResponse` without `run`, `report_text`: what the layer below returns (the one above adds `run`,
    `report_text`)."""

    contained: float
    # A circular buffer dropped earlier records: the producer is the first non-finite tensor kept.
    first_kept: bool
    # One sentence for the user, including what cannot be known.
    message: str
    # Producers hidden by the request's mutes that came before the one shown (or all of them when none is left).
    muted: float
    producer: RootCauseProducer | None
    # Alert counts by role (producers include the unknowns; contained include the expected).
    producers: float
    propagators: float
    # Contained non-finite sources passed over on the way to the producer.
    skipped: list[RootCauseSkip]
    # clean: no non-finite tensor; clean_so_far: none in what was read, but the run is not fully read yet
    # (`analysis/run_verdict.py:root_cause`); reading: the run is being read and the analysis has not seen the rows the
    # header counts yet; found: a producer was identified; unknown: non-finite seen, cause unknowable.
    status: Literal["clean", "clean_so_far", "reading", "found", "unknown"]


class RootCauseResponse(RootCauseResponseBody):
    """wire.ts `RootCauseResponse` (its schema definition carries no description)."""

    # This run's section of the headless report, word for word (`analysis/report_text.py:run_section`): what the card's
    # "copy as text" copies.
    report_text: str
    run: str


class RunCounts(TypedDict):
    """wire.ts `RunCounts` (its schema definition carries no description)."""

    alerts: float
    alerts_by_type: dict[str, float]
    executions: float
    graph_executions: float
    graphs: float
    ops: float
    source_files: float
    stack_frames: float


class RunStatus(TypedDict):
    """wire.ts `RunStatus` (its schema definition carries no description)."""

    bytes_read: float
    bytes_total: float
    # True once a refresh pass has read every file to its end (it turns false again when files grow).
    done: bool
    # Wall time of the last completed refresh pass, null before the first.
    last_refresh: float | None
    notices: list[Notice]


class RunSummary(TypedDict):
    """One run's line in the runs overview. indexing: not fully read; analyzing: read, root cause not built yet."""

    first_nan: FirstNan | None
    # How many alert rules found something (default thresholds), once the rules were evaluated; absent before.
    rule_findings: NotRequired[float]
    status: Literal["indexing", "analyzing", "clean", "found", "unknown"]


class RunInfoBody(TypedDict):
    """`RunInfo` without `summary`: what the layer below returns (the one above adds `summary`)."""

    counts: RunCounts
    debug_modes: list[DebugModeName]
    # Which framework wrote the run, from its metadata: 'jax' for dumps of `tensorboard_plugin_dbg.jax` (whose
    # tf_version reads `jax <version>`), else 'tensorflow'. Made by `index/run_index.py:framework_of`.
    framework: Framework
    hosts: list[str]
    # Directory relative to the logdir (for a dump directly in the logdir: the logdir's folder name, or '.' when a sub-
    # folder has that name), plus '#<run id prefix>' when one directory holds several run ids. Stable: use it as the
    # `run` parameter.
    name: str
    start_time: float | None
    status: RunStatus
    tf_version: str | None
    tfdbg_run_id: str | None


class RunInfo(RunInfoBody):
    """wire.ts `RunInfo` (its schema definition carries no description)."""

    # Added by `api/routes.py:runs` from `analysis/run_verdict.py:summary` (cached values only, never computed).
    summary: RunSummary


class RunsResponse(TypedDict):
    """wire.ts `RunsResponse` (its schema definition carries no description)."""

    logdir: str
    # Logdir-level notices, e.g. 'no_dump_found' with where it looked.
    notices: list[Notice]
    # Present once the process has read a remote logdir.
    remote_cost: NotRequired[RemoteCost]
    runs: list[RunInfo]


class SourceFileRef(TypedDict):
    """wire.ts `SourceFileRef` (its schema definition carries no description)."""

    host: str
    index: float
    # True for the user's code (not TensorFlow, Keras, site-packages or the standard library).
    is_user: bool
    line_count: float
    path: str


class SourceFileResponseBody(TypedDict):
    """`SourceFileResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    # 1-based, inclusive.
    begin_line: float
    end_line: float
    host: str
    index: float
    line_count: float
    lines: list[str]
    # 1-based lines of this file at which some op was created (graph ops and eager executions).
    op_lines: list[float]
    path: str


class SourceFileResponse(SourceFileResponseBody):
    """wire.ts `SourceFileResponse` (its schema definition carries no description)."""

    run: str


class SourceFilesResponseBody(TypedDict):
    """`SourceFilesResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    files: list[SourceFileRef]


class SourceFilesResponse(SourceFilesResponseBody):
    """wire.ts `SourceFilesResponse` (its schema definition carries no description)."""

    run: str


class SourceLineCount(TypedDict):
    """One line that created graph ops."""

    # Of those, made directly here (the rest through a call this line makes).
    direct: float
    line: float
    # Of those, ops with a non-finite output in some trace.
    nonfinite: float
    # Graph ops listed at this line.
    ops: float


class SourceLineCountsResponseBody(TypedDict):
    """`SourceLineCountsResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    index: float
    lines: list[SourceLineCount]
    # Sum of `ops` over the lines.
    total_ops: float


class SourceLineCountsResponse(SourceLineCountsResponseBody):
    """wire.ts `SourceLineCountsResponse` (its schema definition carries no description)."""

    run: str


class StackFramesResponseBody(TypedDict):
    """`StackFramesResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    frames: list[StackFrame]


class StackFramesResponse(StackFramesResponseBody):
    """wire.ts `StackFramesResponse` (its schema definition carries no description)."""

    run: str


class TensorInput(TypedDict):
    """wire.ts `TensorInput` (its schema definition carries no description)."""

    description: str
    # e.g. "shifted:0" or "Sub:0 (execution #19)".
    name: str
    slot: float
    # The latest recorded tensor of this input before the op ran; null when none was recorded.
    tensor: TensorRef | None


class TensorInputsResponseBody(TypedDict):
    """`TensorInputsResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    inputs: list[TensorInput]
    tensor: TensorRef


class TensorInputsResponse(TensorInputsResponseBody):
    """Produced by `api/routes.py:tensor_inputs`: the data inputs of the tensor's op."""

    run: str


class TimelineMarksResponseBody(TypedDict):
    """`TimelineMarksResponse` without `run`: what the layer below returns (the one above adds `run`)."""

    # Trace alerts written after the last execution record (a call still running, or whose record was lost).
    after_last: float
    # Visible NaN/∞ alerts in all.
    alerts: float
    # NaN/∞ alerts per bin, after the mutes (a graph trace's alert at the call that ran it).
    counts: list[float]
    # Bin i holds executions [edges[i], edges[i + 1]).
    edges: list[float]
    # The run's eager executions (the timeline's length).
    executions: float
    # Alert-list index of each bin's first alert; -1 when the bin has none.
    first_alert: list[float]


class TimelineMarksResponse(TimelineMarksResponseBody):
    """wire.ts `TimelineMarksResponse` (its schema definition carries no description)."""

    run: str
