"""Alert rules, mutes and the health map (#18) on real TensorFlow dumps: each rule fires on its program with the
right op, step, count and user line, and on none of the clean programs; mutes move the root cause; the report's
rules section and exit codes; the health map's cells."""

from __future__ import annotations

import json
import sys
import time

import dumps
import numpy as np
import pytest

from tensorboard_plugin_dbg.__main__ import EXIT_NONFINITE, EXIT_WARNINGS, main
from tensorboard_plugin_dbg.analysis import alert_list, alerts, health_map, report_text, root_cause, rules
from tensorboard_plugin_dbg.analysis.rules import config, data_functions, mutes, tensor_scan
from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import health_gather


def run_of(program: str, *args: str):
    return Catalog(dumps.make_dump(program, *args)).runs()[0]


def findings(program: str, *args: str, **thresholds) -> list[dict]:
    return rules.evaluate(run_of(program, *args), config.Thresholds(**thresholds))["findings"]


def only(found: list[dict], rule: str) -> dict:
    hits = [f for f in found if f["type"] == rule]
    assert len(hits) == 1, found
    return hits[0]


def test_retracing_by_python_float():
    f = only(findings("retrace_float"), config.RETRACING)
    assert f["function"] == "scaled_sum" and f["count"] == 6 and len(f["graph_ids"]) == 6
    assert "RETRACE" in f["source_line"] and f["user_frame"]["path"].endswith("retrace_float.py")
    assert "Const (mul/y)" in f["evidence"] and "baked into each trace" in f["evidence"]


def test_retracing_by_changing_shapes():
    f = only(findings("retrace_shapes"), config.RETRACING)
    assert f["function"] == "row_norms" and f["count"] == 6
    assert "RETRACE" in f["source_line"]
    assert "input shapes/dtypes changed" in f["evidence"] and "[1, 2] -> float32 [2, 3]" in f["evidence"]


def test_retracing_threshold_is_a_parameter():
    assert not [f for f in findings("retrace_float", retrace_min=7) if f["type"] == config.RETRACING]


def test_no_retracing_finding_for_functions_tf_data_traces_itself():
    """#39: a MirroredStrategy `fit` recorded in FULL_TENSOR: tf.data's MultiDeviceIterator traces its own `_init_func`
    (and `_next_func`, `_finalize_func`, their `_remote_` twins) once per device and epoch. Main reported "_init_func
    was traced 6 times": the user cannot act on it (tf.data traces it, not their code). Told from the dump's facts:
    the frame that asked TensorFlow to trace each of them is tf.data's. A user's function retraced still is found."""
    run = run_of("nan_mirrored_fit", "FULL_TENSOR")
    entries = [(gid, name) for gid, name, _outer in run.graph_entries() if name]
    names = [name for _gid, name in entries]
    assert names.count("_init_func") >= config.Thresholds().retrace_min, names  # the case: traced that often
    found = [f for f in rules.evaluate(run)["findings"] if f["type"] == config.RETRACING]
    assert found == [], [f["evidence"] for f in found]
    by_tf_data = {name for gid, name in entries if data_functions.traced_by_tf_data(run, gid)}
    assert {"_init_func", "_next_func", "_finalize_func", "_remote_init_func"} <= by_tf_data, by_tf_data
    assert not by_tf_data & {"multi_step_on_iterator", "one_step_on_data"}, by_tf_data  # Keras's, from fit
    f = only(findings("retrace_float"), config.RETRACING)  # the user's function, traced per Python float
    assert f["function"] == "scaled_sum" and f["count"] == 6
    assert not data_functions.traced_by_tf_data(run_of("retrace_float"), f["graph_ids"][0])


def test_shape_change_mid_run():
    f = only(findings("shape_change"), config.SHAPE_CHANGE)
    assert (f["op_name"], f["op_type"], f["step"], f["count"]) == ("logits", "MatMul", 4, 1)
    assert "[8, 1] -> float32 [5, 1]" in f["evidence"] and "SHAPE CHANGE" in f["source_line"]


def test_shape_change_from_full_health_sizes():
    f = only(findings("shape_change", "FULL_HEALTH"), config.SHAPE_CHANGE)
    assert f["op_name"] == "logits" and "size 8 -> float32 rank 2 size 5" in f["evidence"]


def test_batch_that_alternates_train_eval_is_one_finding_with_its_sizes_and_rhythm():
    found = findings("batch_alternates")  # SHAPE: 4 batches of 64, then one of 16, three times
    f = only(found, config.BATCH_ALTERNATES)
    assert not [g for g in found if g["type"] == config.SHAPE_CHANGE], found  # not a shape change per change
    assert (f["op_name"], f["op_type"], f["count"]) == ("scores", "MatMul", 5)
    assert f["evidence"].startswith("batch size alternates: 64/16 (64 ×4 traces, then 16 ×1, 3 times in 15 traces)")
    assert "BATCH ALTERNATES" in f["source_line"]


def test_batch_that_alternates_from_full_health_sizes():
    f = only(findings("batch_alternates", "FULL_HEALTH"), config.BATCH_ALTERNATES)
    assert f["op_name"] == "scores" and f["evidence"].startswith("output size (elements) alternates: 64/16")


def test_a_rhythm_needs_the_first_size_back_and_few_sizes():
    from tensorboard_plugin_dbg.analysis.rules.batch_pattern import _rhythm

    assert _rhythm([8, 8, 8, 5], dims=True) is None  # one last partial batch: a plain shape change
    assert _rhythm([1, 2, 3, 4, 1, 2, 3, 4], dims=True) is None  # four sizes: a shape that really changes
    beat = _rhythm([32, 32, 7, 32, 32, 7], dims=True)
    assert beat is not None and (beat.sizes, beat.first_cycle, beat.cycles) == ([32, 7], [(32, 2), (7, 1)], 2)


def test_dead_relu():
    found = findings("dead_relu")
    f = only(found, config.DEAD_RELU)
    assert (f["op_name"], f["op_type"], f["step"], f["count"]) == ("hidden_relu", "Relu", 2, 6)
    assert "DEAD" in f["source_line"] and "traces 3-8 of 8" in f["evidence"]
    # the sum of a dead layer is all zero too: a consequence named under the ReLU, not a finding of its own (#38)
    assert [x["type"] for x in found] == [config.DEAD_RELU], found
    assert "all zero too, no earlier than it died: Sum (consequences of this ReLU" in f["evidence"], f["evidence"]
    assert not [f for f in findings("dead_relu", dead_steps=7) if f["type"] == config.DEAD_RELU]


def test_value_explosion_from_full_tensor_magnitudes():
    """One finding, where the growth starts (the x20 Mul): the ops it flows into (Abs, Max) and the variable read
    that hands its last value back grow with it and are named in its evidence, not found again (issue #29)."""
    (grown,) = [f for f in findings("value_explosion") if f["type"] == config.VALUE_EXPLOSION]
    assert (grown["op_name"], grown["op_type"], grown["step"], grown["count"]) == ("grown", "Mul", 3, 3)
    assert "20 at trace 1 -> 1.6e+05 at trace 4" in grown["evidence"] and "EXPLODES" in grown["source_line"]
    assert "Abs" in grown["evidence"] and "Max" in grown["evidence"]
    assert not [f for f in findings("value_explosion", growth_factor=25.0) if f["type"] == config.VALUE_EXPLOSION]


def test_value_vanishing_on_gradients_only():
    """One finding, the first gradient op of the chain (the gradient of the 1e-9 scaling), named by its forward
    op's line; the weights' gradient downstream is named in its evidence (issue #29)."""
    (first,) = [f for f in findings("vanishing_grad") if f["type"] == config.VALUE_VANISHING]
    assert first["op_name"].startswith("gradient_tape/")  # the 1e-9 loss itself is no gradient
    assert (first["step"], first["count"]) == (2, 3) and "< 1e-07" in first["evidence"]
    assert "VANISHES" in first["source_line"]  # the forward op's line: where the gradient's scale comes from
    assert "gradient_tape/MatMul/MatMul" in first["evidence"] and "gradient of mul (Mul)" in first["evidence"]
    assert not [f for f in findings("vanishing_grad", vanish_floor=1e-10) if f["type"] == config.VALUE_VANISHING]


@pytest.mark.parametrize(
    "program,args",
    [
        ("retrace_none", ()),
        ("clean_mlp", ("FULL_HEALTH",)),
        ("clean_mlp", ("FULL_TENSOR",)),
        ("keras_fit", ()),
        ("eager_ops", ()),
        ("nan_sqrt", ("FULL_HEALTH",)),
        ("nan_masked_softmax", ()),
    ],
)
def test_no_rule_fires_on_the_clean_and_the_nan_programs(program, args):
    """clean_mlp, retrace_none and keras_fit are clean; the NaN programs have NaN alerts but no rule finding."""
    assert findings(program, *args) == []


def test_rules_the_dump_cannot_judge_name_the_call():
    needs = {n["rule"]: n for n in rules.evaluate(run_of("shape_change"))["needs"]}  # SHAPE mode
    assert set(needs) == {"InfNanAlert", "all_zero", "dead_relu", "value_explosion", "value_vanishing"}
    assert needs["dead_relu"]["call"] == (
        'tf.debugging.experimental.enable_dump_debug_info(logdir, tensor_debug_mode="FULL_HEALTH", '
        "circular_buffer_size=-1)"
    )


class _ModesRun:  # needs() reads the run's name, folder and debug modes only
    def __init__(self, modes: list[str], name: str = "run") -> None:
        self.name, self.modes = name, modes
        self.directory = f"/logs/{name}"

    def info(self):
        return {"name": self.name, "debug_modes": self.modes}


def test_mode_advice_never_asks_for_a_mode_that_records_less():
    """Issue #40 item 13: a FULL_TENSOR dump was told to re-dump in SHAPE or FULL_HEALTH (both record less) for the
    shape and dtype rules; it is told why they are not judged, with no call that would lose records."""
    needs = {n["rule"]: n for n in rules.needs(_ModesRun(["FULL_TENSOR"]))}  # type: ignore[arg-type]
    assert {"shape_change", "dtype_change", "all_zero", "dead_relu"} <= set(needs)
    for need in needs.values():
        assert "enable_dump_debug_info" not in need["call"], need
        assert "FULL_TENSOR" in need["call"], need
    # A SHAPE dump is still told FULL_HEALTH for the zero rules: it records what SHAPE does not (zero counts).
    shape = {n["rule"]: n for n in rules.needs(_ModesRun(["SHAPE"]))}  # type: ignore[arg-type]
    assert 'tensor_debug_mode="FULL_HEALTH"' in shape["dead_relu"]["call"]


def test_a_capsule_replay_is_told_to_replay_in_full_tensor():
    replay = _ModesRun(["FULL_HEALTH"], name="capsules/capsule-step000000012/replay")
    needs = {n["rule"]: n for n in rules.needs(replay)}  # type: ignore[arg-type]
    assert needs["value_explosion"]["call"] == (  # the capsule's real folder, never a LOGDIR placeholder
        f"{sys.executable} -m tensorboard_plugin_dbg replay /logs/capsules/capsule-step000000012 --mode FULL_TENSOR"
    )


def test_batch_alternates_is_judged_with_shape_change_never_a_need_of_its_own():
    class CurtRun:  # needs() reads the run's debug modes (and its folder) only
        directory = "/logs/run"

        def info(self):
            return {"debug_modes": ["CURT_HEALTH"]}

    needed = [n["rule"] for n in rules.needs(CurtRun())]  # type: ignore[arg-type]
    assert "shape_change" in needed and "batch_alternates" not in needed


# ------------------------------------------------------------------------------------------------ mutes

SENTINEL = mutes.parse_json('[{"op_name": "*sentinel*", "reason": "library NaN by design"}]')


@pytest.mark.parametrize(
    "muted",
    [
        SENTINEL,
        mutes.parse_json('[{"op_name": "re:^missing_", "reason": "r"}]'),
        (mutes.parse_text("op_name=missing_sentinel*,reason=a, b"),),
    ],
)
def test_mute_moves_the_root_cause(muted):
    run = run_of("nan_library_const")
    before = root_cause.analyze(run)
    assert before["producer"]["op_name"] == "missing_sentinel/value" and before["muted"] == 0
    after = root_cause.analyze(run, muted)
    assert after["status"] == "found" and after["producer"]["op_name"] == "user_sqrt"
    assert after["muted"] == 2 and "muted producer" in after["message"]
    assert "CULPRIT" in after["producer"]["source_line"]
    assert root_cause.analyze(run)["producer"]["op_name"] == "missing_sentinel/value"  # the unmuted cache is intact


def test_the_muted_note_names_only_the_mutes_that_skipped_something():
    run = run_of("nan_library_const")
    muted = mutes.parse_json(
        '[{"op_name": "re:^missing_", "reason": "library constant"}, {"op_type": "Nothing", "reason": "never hit"}]'
    )
    after = root_cause.analyze(run, muted)
    assert after["muted"] == 2 and "(library constant)" in after["message"]
    assert "never hit" not in after["message"], after["message"]


def test_mutes_filter_alerts_and_count_what_they_hide():
    run = run_of("nan_library_const")
    plain = alerts.alerts(run, 0, 100, wait_rules=True)
    muted = alerts.alerts(run, 0, 100, mutes=SENTINEL, wait_rules=True)
    assert plain["total"] == 8 and muted["total"] == 4 and muted["muted"] == {"total": 4, "by_mute": [4]}
    assert muted["totals_by_type"] == {"InfNanAlert": 4}
    assert not [a for a in muted["alerts"] if "sentinel" in (a["op_name"] or "")]
    producers = alerts.alerts(run, 0, 100, producers_only=True, mutes=SENTINEL, wait_rules=True)
    assert [a["op_name"] for a in producers["alerts"]] == ["user_sqrt"]


def test_mute_by_rule_hides_rule_findings():
    run = run_of("dead_relu")
    answer = alerts.alerts(
        run, 0, 10, mutes=mutes.parse_json('[{"rule": "dead_relu", "reason": "known"}]'), wait_rules=True
    )
    assert answer["alerts"] == [] and answer["muted"]["by_mute"] == [1]  # its consequence (the Sum) with it
    typed = alerts.alerts(run, 0, 10, alert_type="dead_relu", wait_rules=True)
    assert typed["total"] == 1 and typed["alerts"][0]["index"] == 0 and typed["alerts"][0]["op_name"] == "hidden_relu"


def test_a_request_never_waits_for_a_long_scan(monkeypatch):
    run = run_of("dead_relu")
    monkeypatch.setattr(alert_list, "SCAN_WAIT", 0.0)
    monkeypatch.setattr(tensor_scan, "_scan", lambda r: time.sleep(0.5) or real_scan(r))
    answer = alerts.alerts(run, 0, 10)
    assert answer["rules_pending"] and answer["total"] == 0 and answer["needs"] == []
    alert_list.start_scan(run).join()
    answer = alerts.alerts(run, 0, 10)
    assert not answer["rules_pending"] and answer["totals_by_type"] == {"dead_relu": 1}


real_scan = tensor_scan._scan


@pytest.mark.parametrize(
    "text", ["", "{}", '[{"reason": "only a reason"}]', '[{"rule": "nope"}]', '[{"op_name": "re:("}]', "[1]"]
)
def test_bad_mutes_are_errors(text):
    with pytest.raises(mutes.MuteError):
        mutes.parse_json(text)


# ------------------------------------------------------------------------------------------------ report


def test_report_warnings_only_exit_and_sections(capsys):
    code = main(["report", dumps.make_dump("dead_relu")])
    out = capsys.readouterr().out
    assert code == EXIT_WARNINGS == 3
    assert "dead_relu: op hidden_relu (Relu)" in out and "dead_relu.py:19" in out
    assert "not judged: value_explosion needs tensor_debug_mode=FULL_TENSOR" in out


def test_mute_moves_the_report_text(capsys):
    """The one formatter (analysis/report_text.py): `report --mute` text and the root_cause route's `report_text`
    name the producer left after the mutes and say how many were muted; a run whose every producer is muted is not
    counted as holding NaN/∞."""
    run = run_of("nan_library_const")
    text = report_text.run_section(report_text.run_result(run, SENTINEL))
    assert "user_sqrt" in text and "muted: 2 producer alert(s) skipped by a mute" in text
    code = main(["report", dumps.make_dump("nan_library_const"), "--mute", "op_name=*sentinel*,reason=lib"])
    out = capsys.readouterr().out
    assert code == EXIT_NONFINITE and "first producer: op user_sqrt" in out and "muted: 2 producer" in out
    assert out.rstrip().splitlines()[-1] == "1 run: 1 holds NaN/∞ (exit 1)", out
    every = (*SENTINEL, *mutes.parse_json('[{"op_name": "user_*", "reason": "r"}]'))
    assert not report_text.holds_nonfinite(report_text.run_result(run, every))


def test_report_json_and_mute(capsys):
    code = main(["report", dumps.make_dump("nan_library_const"), "--json", "--mute", "op_name=*sentinel*,reason=lib"])
    doc = json.loads(capsys.readouterr().out)
    assert code == EXIT_NONFINITE and doc["mutes"][0]["reason"] == "lib"
    assert doc["runs"][0]["producer"]["op_name"] == "user_sqrt" and doc["runs"][0]["muted"] == 2
    code = main(["report", dumps.make_dump("retrace_float"), "--json", "--retrace-min", "3"])
    doc = json.loads(capsys.readouterr().out)
    assert code == EXIT_WARNINGS and doc["runs"][0]["rules"]["totals"] == {"retracing": 1}


def test_report_bad_mute_is_unreadable_input(capsys):
    assert main(["report", dumps.make_dump("dead_relu"), "--mute", "colour=red"]) == 2


# ------------------------------------------------------------------------------------------------ health map


def test_health_map_nan_rows_first_and_cells():
    run = run_of("nan_library_const")
    m = health_map.health_map(run, 0, 50, columns=10)
    assert m["steps"] == 2 and m["columns"] == 2 and m["bin"] == 1
    first = m["rows"][0]
    assert first["op_name"] == "missing_sentinel/value" and first["nonfinite"] == [1, 1]
    sqrt = next(r for r in m["rows"] if r["op_name"] == "user_sqrt")
    assert sqrt["nonfinite"] == [0, 1] and sqrt["first_nonfinite_step"] == 1
    assert sqrt["zero"][0] == 1.0  # sqrt of [0, 0, 0] in the clean first step
    detail = run.graph_execution(sqrt["trace"][1], max_elements=0)
    assert detail["op_name"] == "user_sqrt" and detail["health"]["nan"] == 2
    one = health_map.health_map(run, 0, 10, op_name="user_sqrt")
    assert [r["op_name"] for r in one["rows"]] == ["user_sqrt"] and one["total"] == 1


def test_health_map_op_filter_matches_name_or_type_in_any_case():
    run = run_of("nan_library_const")
    every = health_map.health_map(run, 0, 50, columns=10)["rows"]
    for needle in ("SQRT", "sentinel", "Const"):
        got = health_map.health_map(run, 0, 50, columns=10, op_contains=needle)
        want = [r for r in every if needle.lower() in (r["op_name"] + "\n" + r["op_type"]).lower()]
        assert 0 < len(want) < len(every)  # the needle picks some ops, not all
        assert [r["kind"] for r in got["rows"]] == [r["kind"] for r in want] and got["total"] == len(want)


def test_health_map_rows_name_their_graph_numbered_where_names_repeat():
    """Issue #40 item 11: a retraced function repeats its op names; each row names its graph, and two graphs of one
    name are numbered in the dump's order."""
    run = run_of("retrace_float")
    rows = health_map.health_map(run, 0, 200, columns=10)["rows"]
    graphs_of: dict[str, set[str]] = {}
    for r in rows:
        graphs_of.setdefault(r["op_name"], set()).add(r["graph_id"])
    repeated = next(name for name, ids in graphs_of.items() if len(ids) > 1)
    twins = [r for r in rows if r["op_name"] == repeated]
    assert len({r["graph_name"] for r in twins}) == len({r["graph_id"] for r in twins}) > 1
    order = [gid for gid, _name, _outer in run.graph_entries()]
    for r in twins:
        name = run.graph(r["graph_id"])["name"]
        same_name = [gid for gid in order if run.graph(gid)["name"] == name]
        assert r["graph_name"] == f"{name} #{same_name.index(r['graph_id']) + 1}", r


def test_health_map_shape_change_and_bins():
    m = health_map.health_map(run_of("shape_change"), 0, 10, columns=2)
    logits = next(r for r in m["rows"] if r["op_name"] == "logits")
    assert m["bin"] == 3 and m["columns"] == 2 and logits["changed"] == [False, True]


# ------------------------------------------------------------------------------------------------ the scan, unit


def test_zero_runs_and_changes_per_kind():
    from tensorboard_plugin_dbg.index.kind_steps import KindSteps

    starts = np.array([0, 4, 7])
    kind = np.array([0, 0, 0, 0, 1, 1, 1], np.int32)  # rows in kind order: positions are rows
    z = np.array([1, 1, 0, 1, 0, 1, 1], bool)  # kind 0: runs 2, 1; kind 1: run 2 (not joined across kinds)
    sig = np.array([5, 5, 6, 6, 6, -1, 7])  # kind 0: one change at 2; kind 1: unknown in between, no change
    steps = KindSteps(starts, columns=1)
    for lo, hi in ((0, 3), (3, 5), (5, 7)):  # fed in blocks: runs and last values carried across them
        steps.add(kind[lo:hi], [sig[lo:hi]], z[lo:hi])
    assert steps.best_run.tolist() == [2, 2] and steps.best_run_end.tolist() == [1, 6]
    assert steps.changes[0].tolist() == [1, 0] and steps.first_change[0].tolist() == [2, -1]
    assert steps.steps.tolist() == [4, 3]


@pytest.mark.parametrize("program,args", [("dead_relu", ()), ("shape_change", ()), ("nan_library_const", ())])
def test_scan_vectors_equal_the_full_decode(program, args):
    """The scan's per-kind layout (kind_vectors) reads exactly the elements the full decode reads."""
    run = run_of(program, *args)
    rows = np.arange(len(run.trace_arrays()["kind"]))
    modes, full = run.trace_vectors(rows)
    modes2, summary = run.trace_vectors(rows, summary=True)
    assert (modes == modes2).all()
    for mode, elements in health_gather.SUMMARY_ELEMENTS.items():
        sel = modes == mode
        assert np.array_equal(full[sel][:, elements], summary[sel][:, elements], equal_nan=True)
    assert np.isfinite(summary[np.isin(modes, (4, 5))][:, 2]).all()
