"""Non-finite by design: a value that only finiteness checks read, in a step where no update was applied with it.

Mixed precision's `LossScaleOptimizer` multiplies the loss by a large scale, so the float16 gradients overflow to ∞
now and then; it tests them (`IsFinite` → `All`), and a `cond` applies them only when all are finite, else skips the
step and lowers the scale. Those ∞ are benign, like a mask's −∞: blaming them for the run's first NaN is wrong.

A non-finite trace row r of tensor t is **guarded** (containment.py counts it contained) when

- every op that reads t in its graph is a finiteness check (`IsFinite`, `IsNan`, `IsInf`: their bool output is not
  traced) or a conditional (`If`, `StatelessIf`) — nothing else can carry t on; and
- in r's step (from t's previous trace to its next one: a branch's traces may be written before its caller's), the
  branches of those conditionals ran (their graphs, named by TensorFlow after the cond, `<cond scope>_true_N` /
  `_false_N`, and the graphs nested in them, have traces there) and every one of their traces was finite: the
  value never reached an applied update.

A gradient op's non-finite output that no op of its graph reads (the gradient of an input nobody asked for:
TensorFlow computes it, nothing uses it) never reaches an update either, and is guarded too, in the steps a check
skipped. Only a gradient's: any other unread value may be passed to a nested tf.function, a call TensorFlow records
no op for. The containment of the ops that fed t (the gradient's MatMul whose only reader is the guarded cast) then
follows from containment.py's own rule, seeded with these rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from tensorboard_plugin_dbg.analysis import gradients, index_columns
from tensorboard_plugin_dbg.analysis.columns import RunColumns
from tensorboard_plugin_dbg.analysis.trace_lookup import Lookup
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.index.state import OpEntry

CHECK_OPS = frozenset({"IsFinite", "IsNan", "IsInf"})
COND_OPS = frozenset({"If", "StatelessIf"})
_TENSORS = 256  # distinct non-finite tensors looked at (a run that went NaN everywhere is not guarded)
_ROWS = 1 << 16  # non-finite rows looked at
_STEP = 1 << 17  # rows of one step looked through for the conditionals' branches
_NEAR = 1 << 12  # an unread gradient row this close to a checked one is of the same skipped step


@dataclass
class Guards:
    rows: np.ndarray  # int64, sorted: the guarded trace rows
    steps: int = 0  # how many steps had a guarded value (the most rows of one guarded tensor)
    step_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # that tensor's guarded rows
    conds: list[str] = field(default_factory=list)  # the conditionals that skipped them
    loss_scale: bool = False  # a conditional made by Keras's LossScaleOptimizer (by its creation stack)
    first_op: str = ""  # the op of the first row a finiteness check guarded


def _none() -> Guards:
    return Guards(np.zeros(0, np.int64))


def cached(run: RunQueries, cols: RunColumns | None = None, lookup: Lookup | None = None) -> Guards:
    """The guarded rows of the run's current version, kept in its derived-value cache (root_cause.py computes
    them with its columns; the rules ask for them when a value stayed zero)."""

    def compute() -> Guards:
        have = cols if cols is not None else index_columns.gather(run)
        if lookup is not None:
            return find(run, have, lookup)
        assert have.make_lookup is not None  # gather() always sets it
        return find(run, have, have.make_lookup())

    return run.derived.get("guards", run.version, compute)


def find(run: RunQueries, cols: RunColumns, lookup: Lookup) -> Guards:
    """The guarded rows of the run (the non-finite rows of the first _TENSORS distinct tensors only); `lookup`:
    classify's trace lookup (`after`: the next trace of a tensor)."""
    alerts = np.flatnonzero(np.asarray(cols.trace_nonfinite) == 1)[:_ROWS]
    if not len(alerts):
        return _none()
    codes = np.asarray(cols.trace_tensor[alerts], np.int64)
    _uniq, first = np.unique(codes, return_index=True)
    kinds = run.trace_arrays()["kind"]
    graphs = run.graph_entries()
    kind_graphs: list[str] | None = None  # each trace kind's graph id, made when a tensor is only checked
    readers: dict[str, dict[tuple[str, int], list[OpEntry]]] = {}
    rows_out: list[np.ndarray] = []
    conds: dict[str, None] = {}
    step_rows, loss_scale = np.zeros(0, np.int64), False
    dead: list[np.ndarray] = []  # unread gradient rows, kept only in the steps a check skipped
    for at in sorted(first.tolist())[:_TENSORS]:
        row = int(alerts[at])
        trace = run.graph_execution(row, max_elements=0)
        graph_id = trace["graph_id"]
        if graph_id not in readers:
            readers[graph_id] = _readers(run, graph_id)
        ops = readers[graph_id].get((trace["op_name"], int(trace["output_slot"])), [])
        # a gradient op's output read by nothing (the gradient of an input nobody asked for) reaches no update; any
        # other unread output may go to a call between tf.functions, which TensorFlow records no op for
        if not ops and readers[graph_id] and gradients.is_backward(trace["op_name"]):
            dead.append(alerts[codes == codes[at]])
            continue
        if not ops or any(op.op_type not in CHECK_OPS | COND_OPS for op in ops):
            continue
        if kind_graphs is None:
            kind_graphs = [run.kind_info(k)[0] for k in range(int(kinds.max()) + 1 if len(kinds) else 0)]
        branch_kinds = _branch_kinds(kind_graphs, graphs, graph_id, [op for op in ops if op.op_type in COND_OPS])
        guarded = _guarded_rows(cols, lookup, kinds, branch_kinds, alerts[codes == codes[at]], int(codes[at]))
        if len(guarded):
            rows_out.append(guarded)
            if len(guarded) > len(step_rows):
                step_rows = guarded
            for op in ops:
                if op.op_type in COND_OPS:
                    conds.setdefault(op.op_name)
                    loss_scale = loss_scale or _made_by_loss_scale(run, op)
    if not rows_out:
        return _none()
    rows_out.extend(_near(np.sort(np.concatenate(rows_out)), d) for d in dead)
    checked = run.graph_execution(int(step_rows[0]), max_elements=0)["op_name"] if len(step_rows) else ""
    return Guards(np.unique(np.concatenate(rows_out)), len(step_rows), step_rows, list(conds), loss_scale, checked)


def _guarded_rows(
    cols: RunColumns, lookup: Lookup, kinds: np.ndarray, branch_kinds: np.ndarray, rows: np.ndarray, code: int
) -> np.ndarray:
    """The non-finite `rows` of tensor `code` whose step ran its conds' branches, all finite."""
    # its step: from its previous trace to its next one (a branch's traces may be written before the caller's)
    same = np.full(len(rows), code, np.int64)
    starts, ends = lookup.before(same, rows), lookup.after(same, rows)
    starts = np.where(starts >= 0, starts + 1, np.maximum(rows - _STEP, 0))
    ends = np.where(ends >= 0, ends, np.minimum(rows + _STEP, len(kinds)))
    ok = [_skipped(cols, kinds, branch_kinds, s, e) for s, e in zip(starts.tolist(), ends.tolist())]
    return rows[np.asarray(ok, bool)]


def _near(checked: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The `rows` within _NEAR rows of a row a finiteness check guarded (its step)."""
    at = np.searchsorted(checked, rows)
    after = checked[np.minimum(at, len(checked) - 1)]
    before = checked[np.maximum(at - 1, 0)]
    return rows[(np.abs(after - rows) < _NEAR) | (np.abs(rows - before) < _NEAR)]


def describe(g: Guards) -> str:
    """One sentence on the skipped steps ("" when none)."""
    if not g.steps:
        return ""
    conds = ", ".join(f"`{c}`" for c in g.conds[:3]) or "a conditional"
    read = f"read only by finiteness checks (IsFinite) and {conds}, which applied no update then"
    if g.loss_scale:
        return (
            f"{g.steps:,} step(s) overflowed by design and were skipped: their {len(g.rows):,} non-finite gradient "
            f"tensor(s) were {read} (LossScaleOptimizer: it lowered its loss scale {g.steps:,} time(s), once per "
            "skipped step, until the float16 gradients fit)."
        )
    # the program's own check: the skip is harmless, but why those values were non-finite is still worth a look
    return (
        f"{g.steps:,} step(s) were skipped by a finiteness check: their {len(g.rows):,} non-finite tensor(s) were "
        f"{read}; the first was {g.first_op}, if those steps should not have been skipped."
    )


def _readers(run: RunQueries, graph_id: str) -> dict[tuple[str, int], list[OpEntry]]:
    """(op name, output slot) -> the ops of the graph that read it."""
    out: dict[tuple[str, int], list[OpEntry]] = {}
    for name in run.graph_op_names(graph_id):
        entry = run.op_entry(graph_id, name)
        for inp in entry.inputs if entry is not None else ():
            out.setdefault((inp[0], int(inp[1])), []).append(entry)  # type: ignore[arg-type]
    return out


def _branch_kinds(
    kind_graphs: list[str], graphs: list[tuple[str, str, str | None]], graph_id: str, conds: list[OpEntry]
) -> np.ndarray:
    """bool per trace kind: the kind's graph is a branch of one of `conds` (or nested in one)."""
    patterns = [re.compile(re.escape(c.op_name.replace("/", "_")) + r"_(true|false)_\d+") for c in conds]
    branch = {gid for gid, name, outer in graphs if outer == graph_id and any(p.fullmatch(name) for p in patterns)}
    grew = True
    while grew:  # the graphs nested in a branch (a cond inside the applying branch)
        more = {gid for gid, _name, outer in graphs if outer in branch and gid not in branch}
        branch |= more
        grew = bool(more)
    return np.array([g in branch for g in kind_graphs], bool)


def _skipped(cols: RunColumns, kinds: np.ndarray, branch_kinds: np.ndarray, start: int, end: int) -> bool:
    """Whether, in the step of rows [start, end), a branch of the conds ran, all finite."""
    window = np.arange(start, min(end, start + 2 * _STEP))
    in_branch = window[branch_kinds[kinds[window]]] if len(branch_kinds) else window[:0]
    return bool(len(in_branch)) and not bool(np.any(cols.trace_nonfinite[in_branch] == 1))


def _made_by_loss_scale(run: RunQueries, op: OpEntry) -> bool:
    try:
        frames = run.stack_frames(list(op.stack_frame_ids))["frames"]
    except LookupError:
        return False
    return any("loss_scale_optimizer" in (f.get("path") or "") for f in frames)
