"""The JAX writer (tensorboard_plugin_dbg.jax) with real JAX on CPU: jitted programs' dumps read by the plugin.

Pairs of the same bug in TensorFlow and in JAX (tests/programs/tf_bugs.py, jax_bugs.py): `report` names the line
marked CULPRIT-<bug> for both, and the same kind of op (JAX primitives and TF op types differ in name only: the
table below). The backward-pass bugs name, in JAX, an op of the transposed (gradient) pass whose creation stack is
the forward line, and in TF the gradient op's forward op.
"""

from __future__ import annotations

import json
import os

import dumps
import numpy as np
import pytest
from jax_helpers import array as _array
from jax_helpers import cli as _cli
from jax_helpers import events as _events
from jax_helpers import program as _program

from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.writer import background

pytest.importorskip("jax")
pytestmark = pytest.mark.slow
BUGS = ("softmax_log", "sqrt_backward", "where_grad", "data_nan", "float16")
# the op kinds these bugs produce, JAX primitive -> TensorFlow op type
PACKAGE = "tensorboard_plugin_dbg"
SAME_KIND = {"log": "Log", "mul": "Mul", "dot_general": "MatMul", "div": "RealDiv"}


def _report(dump_dir: str) -> dict:
    proc = _cli("report", "--json", os.path.dirname(dump_dir))
    assert proc.returncode == 1, proc.stderr[-2000:]
    (run,) = json.loads(proc.stdout)["runs"]
    return run


def _named(run: dict) -> tuple[str, int, str]:
    """(file name, line, op type) the report tells the user to fix."""
    p = run["producer"]
    fix = p["forward"] or p
    return os.path.basename(fix["user_frame"]["path"]), fix["user_frame"]["line"], fix["op_type"]


def _culprit(program: str, bug: str) -> int:
    with open(dumps.program_path(program)) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# CULPRIT-{bug}"))


@pytest.mark.parametrize("bug", BUGS)
def test_report_names_the_same_line_and_op_for_tensorflow_and_jax(bug):
    tf_file, tf_line, tf_op = _named(_report(dumps.make_dump("tf_bugs", bug)))
    jax_run = _report(dumps.make_dump("jax_bugs", bug))
    jax_file, jax_line, jax_op = _named(jax_run)
    assert (tf_file, tf_line) == ("tf_bugs.py", _culprit("tf_bugs", bug))
    assert (jax_file, jax_line) == ("jax_bugs.py", _culprit("jax_bugs", bug))
    if bug in ("sqrt_backward", "where_grad"):  # the gradient pass: TF names the forward op, JAX the jvp/transpose op
        assert tf_op in ("Sqrt", "Log")
        assert "jvp(" in jax_run["producer"]["op_name"]
    else:
        assert SAME_KIND[jax_op] == tf_op


def _run(dump_dir: str):
    (run,) = Catalog(os.path.dirname(dump_dir)).runs()
    return run


def test_a_jax_dump_is_a_run_of_graphs_ops_executions_and_traces():
    run = _run(dumps.make_dump("jax_bugs", "where_grad"))  # jnp.where is a nested jit: graphs of their own
    info = run.info()
    assert info["tf_version"].startswith("jax ") and info["framework"] == "jax"
    assert not [n for n in info["status"]["notices"] if n["severity"] == "error"]
    c = info["counts"]
    steps = [run.execution(i, max_elements=0)["op_type"] for i in range(c["executions"])]
    assert steps.count("jit_train_step") == 2  # one per call of the jitted step; the others: eager ops (w's init)
    assert c["graphs"] >= 2 and c["ops"] > 10 and c["graph_executions"] > 2 * 8
    assert c["alerts"] > 0


HEADER = "import sys\nimport jax, jax.numpy as jnp\nfrom tensorboard_plugin_dbg.jax import enable_dump_debug_info\n"


def test_an_unwritable_logdir_fails_at_the_call(tmp_path):
    (tmp_path / "blocker").write_text("")
    proc = _program(tmp_path, HEADER + "enable_dump_debug_info(sys.argv[1])\n", str(tmp_path / "blocker" / "dump"))
    assert proc.returncode != 0
    assert "DumpWriteError: cannot write a debug dump" in proc.stderr


MIXED = (
    HEADER
    + """
jax.config.update("jax_enable_x64", sys.argv[2] == "x64")
before = jax.jit(lambda x: x * 2)  # wrapped before: not recorded
before(jnp.ones(2))
enable_dump_debug_info(sys.argv[1])

@jax.jit
def mixed(x, n):
    return {"bf": x.astype(jnp.bfloat16) / 0, "i": n + 1, "b": x > 0, "f": jnp.sqrt(x)}

@jax.jit
def donate(x):
    return x + 1

donate = jax.jit(donate, donate_argnums=0)
out = mixed(jnp.array([1.0, -1.0]), jnp.array(3))
y = donate(jnp.ones(3))
before(jnp.ones(2))
print(out["i"], y)
"""
)


@pytest.mark.parametrize("x64", ["x64", "x32"])
def test_mixed_dtypes_donated_buffers_and_functions_wrapped_before(tmp_path, x64):
    logdir = tmp_path / "logdir"
    proc = _program(tmp_path, MIXED, str(logdir / "dump"), x64)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("wrapped by jax.jit before this call, so recorded as calls only (") == 1
    assert "<lambda> (" in proc.stderr
    # the background writer's window, said where the user reads it (the training's own stderr)
    assert f"a program killed by SIGKILL loses at most its last {background.LOST_AT_MOST} calls" in proc.stderr
    run = _run(str(logdir / "dump"))
    info = run.info()
    ex = [run.execution(i, max_elements=0) for i in range(info["counts"]["executions"])]
    jitted = [e for e in ex if e["op_type"].startswith("jit_")]  # the others: eager ops, `before`'s calls
    assert len(jitted) == 2  # mixed; donate (its inner recorded jit is a nested graph there)
    assert sum(e["op_type"] == "<lambda>" for e in ex) == 1  # `before`, wrapped before the call, called once after
    first = jitted[0]
    assert first["op_type"] == "jit_mixed"
    healths = first["outputs"]
    dtypes = sorted(h["dtype"] for h in healths if h and h.get("dtype"))
    assert dtypes == ["bfloat16", "float64" if x64 == "x64" else "float32"]
    bf = next(h for h in healths if h and h.get("dtype") == "bfloat16")
    assert (bf["pos_inf"], bf["neg_inf"]) == (1, 1)
    assert info["counts"]["alerts"] > 0
    assert np.isfinite(info["start_time"])


KILLED = (
    HEADER
    + """
import os, signal
enable_dump_debug_info(sys.argv[1])

@jax.jit
def step(w):
    return w * 2.0 - jnp.log(w)

w = jnp.ones(4)
for i in range(12):
    w = step(w)
os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no close: what the files hold is what a crash leaves
"""
)


def test_a_program_killed_mid_training_leaves_a_readable_dump(tmp_path):
    logdir = tmp_path / "logdir"
    proc = _program(tmp_path, KILLED, str(logdir / "dump"))
    assert proc.returncode == -9
    run = _run(str(logdir / "dump"))
    info = run.info()
    assert not [n for n in info["status"]["notices"] if n["severity"] == "error"]
    ops = [run.execution(i, max_elements=0)["op_type"] for i in range(info["counts"]["executions"])]
    calls = ops.count("jit_step")  # the others: eager ops (w's init)
    # calls are written off the training thread: the kill loses those still queued and those being written
    assert 12 - background.LOST_AT_MOST <= calls <= 12
    graph_id = run.execution(ops.index("jit_step"), max_elements=0)["graph_id"]
    names = [n for n in run.graph_op_names(graph_id) if n.startswith(("mul_", "log_", "sub_"))]
    per_op = {len(run.op_trace_rows(graph_id, n, 0)) for n in names}
    # every call wrote all its traces (a call's traces precede its execution: one more call's may be there)
    assert len(names) == 3 and per_op in ({calls}, {calls + 1}), (names, per_op, calls)


DONATED = (
    HEADER
    + """
enable_dump_debug_info(sys.argv[1], tensor_debug_mode="FULL_TENSOR")
step = jax.jit(lambda w: w * 0.5 + 1.0, donate_argnums=0)
w = jnp.ones(1000)
for _ in range(6):
    w = step(w)  # each output donated to the next call while the writer's thread may not have read it yet
print(float(w[0]))
"""
)


def test_donated_outputs_of_calls_written_off_thread_keep_every_calls_values(tmp_path):
    dump = tmp_path / "logdir" / "dump"
    proc = _program(tmp_path, DONATED, str(dump))
    assert proc.returncode == 0 and "failed" not in proc.stderr, proc.stderr[-3000:]
    by_op: dict[str, list[float]] = {}
    for e in _events(str(dump), "graph_execution_traces"):
        t = e.graph_execution_trace
        by_op.setdefault(t.op_name.split("_")[0], []).append(float(_array(t.tensor_proto)[0]))
    w, want = 1.0, []
    for _ in range(6):
        w = w * 0.5 + 1.0
        want.append(w)
    assert by_op["add"] == want
    calls = [e.execution for e in _events(str(dump), "execution") if e.execution.op_type.startswith("jit_")]
    assert [float(_array(c.tensor_protos[0])[0]) for c in calls] == want


def _host_counts(row, mode: str, size: int):
    """HealthCounts from a row of instrument.in_graph_counts (CURT_HEALTH's flag stands in the `nan` count)."""
    from tensorboard_plugin_dbg.writer import summaries

    r = [int(v) for v in row]
    if mode == "CURT_HEALTH":
        return summaries.HealthCounts(size, 0, 0, r[0], 0, 0, 0)
    if mode == "CONCISE_HEALTH":
        return summaries.HealthCounts(size, r[0], r[1], r[2], 0, 0, 0)
    return summaries.HealthCounts(size, *r)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_in_graph_counts_equal_numpys(dtype):
    import jax
    import jax.numpy as jnp

    from tensorboard_plugin_dbg.jax import instrument
    from tensorboard_plugin_dbg.writer import summaries

    mixed = [[-np.inf, -2.0, 0.0, -0.0], [np.nan, 3.5, np.inf, np.nan]]
    # each mode's counts differ by formula (CURT_HEALTH counts finite and non-NaN elements only): a tensor with
    # every kind, one all finite, one whose only bad element is +inf, one whose only one is NaN
    finite, one_inf, one_nan = [[1.0, -2.0, 0.0, 3.0]] * 2, [[1.0, np.inf, 0.0, 3.0]] * 2, [[1.0, np.nan, 0.0, 3.0]] * 2
    for x in (mixed, finite, one_inf, one_nan):
        arr = jnp.asarray(np.array(x, np.float32)).astype(dtype)
        want = summaries.counts_of(np.asarray(arr))
        for mode in instrument.COUNT_WIDTH:
            row = np.asarray(jax.jit(lambda a, m=mode: instrument.in_graph_counts(a, m))(arr))
            rows = np.asarray(jax.jit(lambda a, m=mode: instrument.in_graph_counts(a.reshape(1, -1), m, True))(arr))
            for got in (_host_counts(row, mode, 8), _host_counts(rows[0], mode, 8)):
                full = summaries.debug_vector("FULL_HEALTH", 1, dtype, (2, 4), want)
                assert summaries.debug_vector(mode, 1, dtype, (2, 4), got).tolist() == (
                    summaries.debug_vector(mode, 1, dtype, (2, 4), want).tolist()
                ), (mode, full)


def test_compare_of_two_jax_runs_of_one_program_matches_every_tensor(tmp_path):
    """Op and graph names (nested graphs included) are stable from run to run, so compare aligns all of them."""
    for run in ("a", "b"):
        proc = _cli(dumps.program_path("jax_bugs"), str(tmp_path / run), "where_grad", "FULL_TENSOR")
        assert proc.returncode == 0, proc.stderr[-2000:]
    proc = _cli("compare", "--json", str(tmp_path / "a"), str(tmp_path / "b"))
    counts = json.loads(proc.stdout)["counts"]
    assert counts["matched_traces"] > 10 and counts["matched_executions"] >= 2  # the steps, and the eager ops
    assert (counts["divergent"], counts["only_in_a"], counts["only_in_b"]) == (0, 0, 0)
