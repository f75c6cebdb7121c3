"""`compare A B` (issue #27) on pairs of dumps written by real TensorFlow: each pair of tests/programs/cmp_*.py runs
one program twice, variant "a" and variant "b", which differ on the one line marked `# INJECTED`; the first
divergence must name that line on both sides. Also: a deterministic program run twice compares equal, and what
cannot be compared (different programs, different modes, a missing side) exits 2 with why."""

from __future__ import annotations

import html
import io
import os
import subprocess
import sys

import dumps
import pytest
from compare_helpers import _main, compare_json, injected_line, pair  # noqa: F401  (their old import path)

# (program, tensor_debug_mode): the injected change of each is in its docstring
PAIRS = [
    ("cmp_constant", "FULL_TENSOR"),
    ("cmp_epsilon", "FULL_HEALTH"),
    ("cmp_cast", "FULL_TENSOR"),
    ("cmp_added_op", "FULL_TENSOR"),
    ("cmp_eager", "FULL_TENSOR"),
    ("cmp_lr_step2", "FULL_TENSOR"),
    ("cmp_full_only", "FULL_TENSOR"),
    ("cmp_activation", "FULL_HEALTH"),
    ("cmp_nan_b", "FULL_HEALTH"),
    ("cmp_seed", "FULL_TENSOR"),
]


@pytest.mark.parametrize("name,mode", PAIRS)
def test_first_divergence_is_the_injected_line(name, mode):
    code, doc = compare_json(*pair(name, mode))
    assert code == 1, doc
    first = doc["first_divergence"]
    assert first is not None and first["b"] is not None
    line = injected_line(name)
    assert first["b"]["file"].endswith(f"{name}.py") and first["b"]["line"] == line, first
    assert first["b"]["op_name"] or first["b"]["op_type"]
    if first["kind"] != "follows_from_only_in_b":  # an added op has no A side at its line
        assert first["a"]["line"] == line and first["a"]["file"].endswith(f"{name}.py")
    assert doc["counts"]["divergent"] >= 1 or doc["counts"]["only_in_b"] >= 1


def test_added_op_is_listed_only_in_b():
    _code, doc = compare_json(*pair("cmp_added_op", "FULL_TENSOR"))
    assert doc["first_divergence"]["kind"] == "follows_from_only_in_b"
    assert [s["op_name"] for s in doc["only_in_b"]] == ["squash"] and doc["only_in_a"] == []
    assert doc["first_divergence"]["inputs"][0]["status"] == "only_in_b"


def test_producer_inputs_are_shown_same():
    _code, doc = compare_json(*pair("cmp_cast", "FULL_TENSOR"))
    first = doc["first_divergence"]
    assert first["metric"]["dtype_a"] == "float64" and first["metric"]["dtype_b"] == "float16"
    assert [(i["name"], i["status"]) for i in first["inputs"]] == [("grow:0", "same")]
    assert first["inputs"][0]["metric"]["bitwise_equal"] is True


def test_deterministic_program_twice_has_no_divergence():
    first = dumps.make_dump("cmp_determinism", "first", "FULL_HEALTH")
    second = dumps.make_dump("cmp_determinism", "second", "FULL_HEALTH")
    code, doc = compare_json(first, second)
    assert code == 0, doc["first_divergence"]
    assert doc["first_divergence"] is None and doc["counts"]["divergent"] == 0
    assert doc["counts"]["matched_traces"] > 0 and doc["counts"]["only_in_a"] == doc["counts"]["only_in_b"] == 0


def test_a_run_with_itself_is_bitwise_equal():
    a, _b = pair("cmp_constant", "FULL_TENSOR")
    code, doc = compare_json(a, a)
    assert code == 0 and doc["counts"]["divergent"] == 0 and doc["counts"]["matched"] > 0


def test_change_only_full_tensor_sees():
    code, doc = compare_json(*pair("cmp_full_only", "FULL_HEALTH"))
    assert code == 0 and doc["counts"]["divergent"] == 0
    assert any("FULL_TENSOR" in note for note in doc["notes"])  # says which mode would show more


def test_tolerances_move_the_verdict():
    a, b = pair("cmp_constant", "FULL_TENSOR")
    assert compare_json(a, b, "--atol", "1e9")[0] == 0  # every difference within a huge absolute tolerance
    code, doc = compare_json(a, b, "--tol", "scaled/y=1")  # the constant now within: its product still differs
    assert code == 1 and doc["first_divergence"]["b"]["op_name"] == "scaled"
    assert doc["first_divergence"]["inputs"][1]["status"] == "same"


@pytest.mark.parametrize(
    "which,why",
    [("programs", "different_programs"), ("modes", "different_modes"), ("eager_vs_graph", "different_programs")],
)
def test_what_cannot_be_compared_exits_2(which, why):
    a, _ = pair("cmp_constant", "FULL_TENSOR")
    b = {
        "programs": dumps.make_dump("cmp_cast", "a", "FULL_TENSOR"),
        "modes": dumps.make_dump("cmp_full_only", "a", "FULL_HEALTH"),
        "eager_vs_graph": dumps.make_dump("cmp_eager", "a", "FULL_TENSOR"),
    }[which]
    if which == "modes":
        a, _ = pair("cmp_full_only", "FULL_TENSOR")
    code, doc = compare_json(a, b)
    assert code == 2 and doc["first_divergence"] is None
    assert doc["error"]["code"] == why and doc["error"]["message"]


def test_unreadable_side_exits_2(tmp_path):
    a, _ = pair("cmp_constant", "FULL_TENSOR")
    for b in (str(tmp_path / "missing"), str(tmp_path)):  # no folder; a folder without a dump
        code, doc = compare_json(a, b)
        assert code == 2 and doc["error"]["code"] == "unreadable", doc
    assert compare_json(a, a, "--tol", "nonsense")[1]["error"]["message"].startswith("--tol")


def test_html_pages_are_self_contained(tmp_path):
    a, b = pair("cmp_nan_b", "FULL_HEALTH")
    page = tmp_path / "compare.html"
    assert _main(io.StringIO(), ["compare", a, b, "--html", str(page)]) == 1
    text = page.read_text()
    assert "First change in counts" in text and f"cmp_nan_b.py:{injected_line('cmp_nan_b')}" in text
    name_a, name_b = (html.escape(os.path.basename(p.rstrip("/"))) for p in (a, b))
    # the sides by run name and role, never by a letter that collides with a run named A or B (#39 item 6)
    assert f"<h3>baseline {name_a}</h3>" in text and f"<h3>changed {name_b}</h3>" in text
    assert "<h3>A</h3>" not in text and "only in B" not in text
    assert "tf.subtract(x, 2.5 if B else 0.5, name=&quot;centered&quot;)" in text  # the code, escaped
    assert "<script" not in text and "http://" not in text and "https://" not in text and "src=" not in text
    report_page = tmp_path / "report.html"
    assert _main(io.StringIO(), ["report", b, "--html", str(report_page)]) == 1  # B takes sqrt of negatives
    assert "root" in report_page.read_text() and "<script" not in report_page.read_text()


def test_cli_runs_without_tensorflow():
    a, b = pair("cmp_eager", "FULL_TENSOR")
    code = (
        "import sys, runpy; sys.argv = ['tensorboard_plugin_dbg', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('tensorboard_plugin_dbg', run_name='__main__')\n"
        "finally:\n    assert 'tensorflow' not in sys.modules, 'compare imported TensorFlow'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "compare", a, b], cwd=dumps.ROOT, capture_output=True, text=True,
        timeout=300, env=dumps.env_for_tf(), check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert f"cmp_eager.py:{injected_line('cmp_eager')}" in proc.stdout and "AssertionError" not in proc.stderr
    name_a, name_b = (os.path.basename(p.rstrip("/")) for p in (a, b))
    assert proc.stdout.startswith(f"compare changed {name_b} vs baseline {name_a} (FULL_TENSOR)"), proc.stdout
    assert f"    baseline {name_a}: " in proc.stdout and f"    changed {name_b}: " in proc.stdout
    assert " A=" not in proc.stdout and "only in B" not in proc.stdout


def test_mixed_health_modes_compare_what_both_record():
    a = dumps.make_dump("cmp_nan_b", "a", "FULL_HEALTH")
    b = dumps.make_dump("cmp_nan_b", "b", "CURT_HEALTH")
    code, doc = compare_json(a, b)
    assert code == 1 and doc["mode"] == "FULL_HEALTH vs CURT_HEALTH"
    first = doc["first_divergence"]
    # CURT_HEALTH records only "any NaN/∞": the first tensor it can tell apart is the square root's NaN, and the
    # note says which mode would show more (the sign change at the injected line)
    assert first["b"]["op_name"] == "root" and first["metric"]["counts"] == {"inf/nan": [0, 1]}
    assert any("FULL_HEALTH" in note and "different health modes" in note for note in doc["notes"])


def test_a_run_still_being_written_is_refused():
    from tensorboard_plugin_dbg.analysis.compare import comparison
    from tensorboard_plugin_dbg.index.catalog import Catalog

    a, b = pair("cmp_nan_b", "FULL_HEALTH")
    run_a, run_b = Catalog(a).runs()[0], Catalog(b).runs()[0]
    run_b.done = False  # as the refresher leaves it while the dump grows
    with pytest.raises(comparison.CompareError) as refused:
        comparison.compare(run_a, run_b)
    assert refused.value.code == "run_not_ready"
    assert refused.value.message == f"changed run {run_b.name} is still being written: compare it when done"
