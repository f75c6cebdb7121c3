"""Which aligned pairs differ: graph traces by blocks of debug vectors (health modes) or value by value
(FULL_TENSOR), eager executions output by output. Also the structural change an alignment can hide: one op key
whose op type differs (relu -> elu under one name) differs at every occurrence."""

from __future__ import annotations

import numpy as np

from tensorboard_plugin_dbg.analysis.compare.align import Pairs, TraceKeys
from tensorboard_plugin_dbg.analysis.compare.metrics import Metric, Tolerances, health_differs, tensor_metric
from tensorboard_plugin_dbg.index.protocol import ExecOutputs, RunQueries
from tensorboard_plugin_dbg.reader import debug_values, tensor_proto
from tensorboard_plugin_dbg.reader.schema import MODE_BY_NAME
from tensorboard_plugin_dbg.wire import types as wire

FULL_TENSOR, NO_TENSOR = 7, 1
BLOCK = 1 << 12  # trace rows whose vectors are read at once (the rules scan 4 K too: tensor_scan.py)


def trace_differences(
    run_a: RunQueries, run_b: RunQueries, pairs: Pairs, ka: TraceKeys, kb: TraceKeys, tol: Tolerances
) -> tuple[np.ndarray, dict[int, Metric]]:
    """(bool per pair: differs, Metric of the FULL_TENSOR pairs that differ keyed by pair position)."""
    differs = np.zeros(len(pairs.b), bool)
    metrics: dict[int, Metric] = {}
    for first in range(0, len(pairs.b), BLOCK):  # block by block: no whole-run temporary beyond `differs`
        rows_a, rows_b = pairs.a[first : first + BLOCK], pairs.b[first : first + BLOCK]
        modes_a, modes_b = ka.modes(rows_a), kb.modes(rows_b)
        part = differs[first : first + BLOCK]
        combos = np.unique(modes_a.astype(np.int16) * 16 + modes_b)
        for combo in combos.tolist():
            mode_a, mode_b = divmod(int(combo), 16)
            at = np.flatnonzero((modes_a == mode_a) & (modes_b == mode_b))
            if mode_a == mode_b == FULL_TENSOR:
                metrics.update(_full_tensor(run_a, run_b, pairs, at + first, tol, differs))
            elif NO_TENSOR not in (mode_a, mode_b):
                _ma, va = run_a.trace_vectors(rows_a[at])
                _mb, vb = run_b.trace_vectors(rows_b[at])
                part[at] |= health_differs(mode_a, mode_b, va, vb)
    return differs, metrics


def _full_tensor(
    run_a: RunQueries, run_b: RunQueries, pairs: Pairs, at: np.ndarray, tol: Tolerances, differs: np.ndarray
) -> dict[int, Metric]:
    out: dict[int, Metric] = {}
    for i in at.tolist():
        metric = graph_tensor_metric(run_a, run_b, int(pairs.a[i]), int(pairs.b[i]), tol)
        if metric is not None and metric.get("differs"):
            differs[i] = True
            out[i] = metric
    return out


def graph_tensor_metric(run_a: RunQueries, run_b: RunQueries, row_a: int, row_b: int, tol: Tolerances) -> Metric | None:
    rec_a, rec_b = run_a.tensor_record("graph", row_a), run_b.tensor_record("graph", row_b)
    if rec_a.location is None or rec_b.location is None:
        return None
    loc_b = rec_b.location
    return tensor_metric(rec_a.location, loc_b, tol.of(loc_b.dtype, rec_b.op_name))


def op_type_changes(run_a: RunQueries, run_b: RunQueries, pairs: Pairs, ka: TraceKeys, kb: TraceKeys) -> np.ndarray:
    """bool per pair: the aligned ops' types differ (decided per trace kind: no whole-run pass unless some do)."""
    types_a, types_b = _key_op_types(run_a, ka), _key_op_types(run_b, kb)
    changed = [k for k, t in types_b.items() if t and types_a.get(k) not in (None, t)]
    if not changed:
        return np.zeros(len(pairs.b), bool)
    return np.isin(kb.key[pairs.b], np.asarray(changed, np.int32))


def _key_op_types(run: RunQueries, keys: TraceKeys) -> dict[int, str | None]:
    """key code -> op type, through each trace kind of the run (kinds are few; rows are many)."""
    return {int(key): _op_type(run, kind) for kind, key in enumerate(keys.kind_key.tolist())}


def _op_type(run: RunQueries, kind: int) -> str | None:
    graph_id, op_name, _slot, _mode, _device = run.kind_info(kind)
    entry = run.op_entry(graph_id, op_name)
    return entry.op_type if entry is not None else None


def execution_differences(
    run_a: RunQueries, run_b: RunQueries, pairs: Pairs, tol: Tolerances
) -> tuple[np.ndarray, dict[int, Metric]]:
    """(bool per aligned execution: some output differs, the Metric of the first differing output). Both runs'
    outputs are read a block of executions at a time (RunQueries.execution_outputs: one read per run of
    neighbouring records, not one detail read per execution). A pair whose debug values are equal, bytes for bytes
    but for the run's own tensor and device ids, is the same without decoding them; any other pair is measured
    as execution_metric measures it (FULL_TENSOR: its values; health modes: the decoded healths)."""
    differs = np.zeros(len(pairs.b), bool)
    metrics: dict[int, Metric] = {}
    for first in range(0, len(pairs.b), BLOCK):
        rows_a, rows_b = pairs.a[first : first + BLOCK], pairs.b[first : first + BLOCK]
        outs_a, outs_b = run_a.execution_outputs(rows_a), run_b.execution_outputs(rows_b)
        for k, (oa, ob) in enumerate(zip(outs_a, outs_b)):
            if _same_values(oa, ob):
                continue
            if ob.mode == "FULL_TENSOR":
                metric = execution_metric(run_a, run_b, int(rows_a[k]), int(rows_b[k]), tol)
            else:
                metric = _first_differing_health(_healths(oa), _healths(ob))
            if metric is not None and metric.get("differs"):
                differs[first + k] = True
                metrics[first + k] = metric
    return differs, metrics


def _same_values(a: ExecOutputs, b: ExecOutputs) -> bool:
    """Equal debug values, decided on the serialized protos: FULL_TENSOR's bytes equal (tensor_metric's hash
    path), a health vector's bytes equal past the ids it starts with (the tensor id; FULL_HEALTH's device id too),
    which _health_dict_metric does not compare. False only means "decode and measure"."""
    if a.mode != b.mode or len(a.protos) != len(b.protos):
        return False
    if a.mode == "FULL_TENSOR":
        return a.protos == b.protos
    skip = 16 if a.mode == "FULL_HEALTH" else 8  # float64 ids at the vector's start
    return all(_vector_tail(pa, skip) == _vector_tail(pb, skip) is not None for pa, pb in zip(a.protos, b.protos))


def _vector_tail(proto: bytes | None, skip: int) -> bytes | None:
    """The float64 debug vector's bytes after `skip` (TF writes it as DT_DOUBLE tensor_content), else None."""
    if proto is None:
        return None
    parsed = tensor_proto.parse_tensor_proto(proto)
    if parsed is None or parsed.dtype != 2 or len(parsed.tensor_content) < skip:
        return None
    return bytes(parsed.tensor_content[skip:])


def _healths(outs: ExecOutputs) -> list[wire.TensorHealth]:
    mode = MODE_BY_NAME[outs.mode]
    return [debug_values.decode_debug_value(mode, proto, eager=True) for proto in outs.protos]


def execution_metric(run_a: RunQueries, run_b: RunQueries, ea: int, eb: int, tol: Tolerances) -> Metric | None:
    """The first differing output of two aligned executions (None: all outputs the same or none recorded)."""
    da, db = run_a.execution(ea, max_elements=0), run_b.execution(eb, max_elements=0)
    if db["tensor_debug_mode"] != "FULL_TENSOR":
        return _first_differing_health(da["outputs"], db["outputs"])
    if len(da["outputs"]) != len(db["outputs"]):
        return _count_changed(len(da["outputs"]), len(db["outputs"]))
    for out in range(len(db["outputs"])):
        ra, rb = run_a.tensor_record("eager", ea, out), run_b.tensor_record("eager", eb, out)
        if ra.location is None or rb.location is None:
            continue
        metric = tensor_metric(ra.location, rb.location, tol.of(rb.location.dtype, db["op_type"]))
        if metric.get("differs"):
            return {**metric, "summary": f"output {out}: {metric.get('summary')}"}
    return None


def _first_differing_health(outs_a: list[wire.TensorHealth], outs_b: list[wire.TensorHealth]) -> Metric | None:
    """The first output whose health differs (health modes), as one execution's Metric; None when none does."""
    if len(outs_a) != len(outs_b):
        return _count_changed(len(outs_a), len(outs_b))
    for out, (ha, hb) in enumerate(zip(outs_a, outs_b)):
        metric = _health_dict_metric(dict(ha), dict(hb))
        if metric.get("differs"):
            return {**metric, "summary": f"output {out}: {metric.get('summary')}"}
    return None


def _count_changed(n_a: int, n_b: int) -> Metric:
    return {"differs": True, "summary": f"{n_a} → {n_b} outputs"}


def _health_dict_metric(ha: dict[str, object], hb: dict[str, object]) -> Metric:
    """Differences between two wire.ts TensorHealth dicts (the tensor id is a run's own numbering), on what both
    modes record when they differ (metrics.common_level)."""
    if ha.get("mode") != hb.get("mode"):
        ha, hb = _common_health(ha, hb), _common_health(hb, ha)
    counts: dict[str, list[float]] = {}
    text = []
    for field in sorted((set(ha) | set(hb)) - {"tensor_id", "device_id"}):
        x, y = ha.get(field), hb.get(field)
        if x != y and not (isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y)):
            text.append(f"{field} {x} → {y}")
            if isinstance(x, (int, float)) and isinstance(y, (int, float)):
                counts[field] = [float(x), float(y)]
    return {"differs": bool(text), "counts": counts, "summary": ", ".join(text) or "same"}


_NONFINITE_FIELDS = ("nan", "neg_inf", "pos_inf")


def _common_health(h: dict[str, object], other: dict[str, object]) -> dict[str, object]:
    """`h` reduced to what `other`'s mode records too: CURT_HEALTH's flag, or CONCISE_HEALTH's counts."""
    if "CURT_HEALTH" in (h.get("mode"), other.get("mode")):
        if h.get("mode") == "CURT_HEALTH":
            return {"any_inf_or_nan": h.get("any_inf_or_nan")}
        return {"any_inf_or_nan": any(float(h.get(f) or 0) > 0 for f in _NONFINITE_FIELDS)}  # type: ignore[arg-type]
    return {f: h.get(f) for f in ("size", *_NONFINITE_FIELDS)}
