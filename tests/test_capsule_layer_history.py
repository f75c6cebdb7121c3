"""Per-layer history in the capsule (#36): a real Keras program (tests/programs/capsule_layer_history.py) whose layer
dense_3 has its kernel's gradient grown 50-fold a step for 4 steps before a NaN batch; the NanCapsule's ring (device
variables written by the compiled step, XLA on and off) must name dense_3/kernel first out of band, 4 steps before
the trigger, in the capsule, `report` and the card. Then the band's rule on numbers, the bound for 1,000 variables,
and a capsule written before the history existed."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tensorboard_plugin_dbg.analysis import capsule_layers, capsule_summary
from tensorboard_plugin_dbg.capsule import layer_history
from tensorboard_plugin_dbg.reader import capsule_files
from tests import dumps

GROWN, LEAD, TRIGGER = "dense_3/kernel", 4, 37  # capsule_layer_history.py's layer, growth steps and NaN step


def capsule_of(*args: str) -> tuple[str, dict]:
    out = dumps.make_dump("capsule_layer_history", *args)
    with open(os.path.join(out, "result.json")) as f:
        result = json.load(f)
    (folder,) = result["captured"]
    return folder, result


@pytest.mark.slow
@pytest.mark.parametrize("xla", [False, True], ids=["graph", "xla"])
def test_the_layer_whose_gradient_grew_is_named_first_out_of_band_with_its_lead(tmp_path, xla):
    folder, result = capsule_of(*(["--xla"] if xla else []))
    manifest = capsule_files.read_manifest(folder)
    assert manifest["step"] == TRIGGER
    entry = manifest["layer_history"]
    assert entry["recorded"] and entry["steps_kept"] == entry["ring"] == 32 and len(entry["variables"]) == 8
    names, norms, peaks = capsule_layers.history(folder, manifest)
    assert norms.shape == peaks.shape == (8, 32)
    assert not np.all(np.isfinite(norms[:, -1]))  # the trigger's step (the NaN batch) is the last row
    assert np.all(np.isfinite(norms[:, :-1])) and np.all(np.isfinite(peaks))
    measured = entry["max_abs_w_rows"]  # every 8th step (steps 8, 16, 24, 32) and the trigger's row
    assert measured == [2, 10, 18, 26, 31] and np.all(peaks[:, measured] > 0)
    repeated = [i for i in range(1, 32) if i not in measured]  # the rows between repeat the last measured one
    assert np.array_equal(peaks[:, repeated], peaks[:, [i - 1 for i in repeated]])
    first = capsule_layers.first_out_of_band(names, norms)
    assert first["variable"].endswith(GROWN) and first["lead"] == LEAD
    said = f"first out of band: {first['variable']}, {LEAD} steps before the trigger"
    command = [sys.executable, "-m", "tensorboard_plugin_dbg", "report", os.path.dirname(folder)]
    text = subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=300).stdout
    assert f"  layers: {said}" in text
    fields = capsule_summary.summary(folder, os.path.dirname(folder))["layer_history"]  # the card's
    assert fields["first"] == first["variable"] and fields["lead"] == LEAD and fields["text"].startswith(said)
    assert len(fields["grad_norm"]) == 8 and fields["grad_norm"][names.index(first["variable"])][-1 - LEAD] > 1
    if xla:  # the ring lives in the compiled step: XLA kept, no host op
        assert result["jit_compile"] is True and result["graph"]["xla"]
        assert "ResourceScatterUpdate" in result["graph"]["ops"] and "L2Loss" not in result["graph"]["ops"]
        assert not [op for op in result["graph"]["ops"] if "PyFunc" in op]


@pytest.mark.slow
def test_a_capsule_from_before_the_history_opens_and_says_it_was_not_recorded(tmp_path):
    folder, _ = capsule_of()
    old = tmp_path / "capsules" / os.path.basename(folder)
    shutil.copytree(folder, old)
    manifest = capsule_files.read_manifest(str(old))
    del manifest["layer_history"], manifest["files"]["layer_history"]
    (old / "layer_history.npz").unlink()
    (old / capsule_files.MANIFEST).write_text(json.dumps(manifest))
    card = capsule_summary.summary(str(old), str(tmp_path / "capsules"))
    assert card["status"] == "ok" and card["sample_loss"]["samples"] == 8  # the rest of the card as before
    assert card["layer_history"]["text"] == "not recorded by this capsule's version"
    assert card["layer_history"]["first"] is None and card["layer_history"]["variables"] == []


# --- the band's rule, on numbers ----------------------------------------------------------------------------------


def quiet(n: int, steps: int = 32, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.5, 1.5, size=(n, steps))


def test_the_earliest_step_out_of_band_wins_and_its_lead_is_counted_from_the_trigger():
    norms = quiet(4)
    norms[2, -6:] = [20.0, 30.0, 400.0, 1e4, 1e6, np.nan]  # 6 steps out, the last non-finite
    norms[0, -3:] = [50.0, 500.0, np.inf]  # out later
    norms[:, -1] = np.nan
    first = capsule_layers.first_out_of_band(list("abcd"), norms)
    assert (first["variable"], first["lead"]) == ("c", 5)


def test_a_tie_goes_to_the_larger_excess_and_a_nan_only_at_the_trigger_has_lead_zero():
    norms = quiet(3)
    norms[0, -3], norms[1, -3] = 20.0, 90.0
    assert capsule_layers.first_out_of_band(["a", "b", "c"], norms)["variable"] == "b"
    calm = quiet(3)
    calm[1, -1] = np.nan
    first = capsule_layers.first_out_of_band(["a", "b", "c"], calm)
    assert (first["variable"], first["lead"]) == ("b", 0)
    found = (["a", "b", "c"], calm, calm)
    said = capsule_layers.sentence(found, {})
    # one sentence, one bracket: never "(none before it) (non-finite ...)"
    assert said.startswith("first out of band: b, at the trigger itself, not before (")
    assert said.count("(") == 1 and ") (" not in said and "non-finite gradient norm vs its median" in said, said
    assert "no variable left its band" in capsule_layers.sentence((["a"], quiet(1), quiet(1)), {})


def test_an_unused_variable_and_a_short_ring_are_not_called_out_of_band():
    norms = quiet(2)
    norms[0, :] = 0.0  # no gradient ever: a zero median judges only non-finite steps
    norms[0, -2] = 1e-3
    assert capsule_layers.first_out_of_band(["unused", "b"], norms)["variable"] is None
    assert capsule_layers.first_out_of_band(["a"], quiet(1, steps=3)) is None  # too few steps for a band
    assert "too few" in capsule_layers.sentence((["a"], quiet(1, steps=3), quiet(1, steps=3)), {})


def test_a_ring_of_no_multiple_of_8_steps_measures_max_abs_w_every_8th_step_and_keeps_a_long_run_step():
    tf = pytest.importorskip("tensorflow")
    from tensorboard_plugin_dbg.capsule.layer_history import LayerHistory

    ring, weights = LayerHistory(5), [tf.Variable([1.0, -3.0])]
    for step in range(20):
        norms, due = ring.record(["w"], [tf.fill([2], float(step + 1))], weights)
        assert bool(np.isinf(due)) == (step % 8 == 0)  # the due term of the check's sum: +inf every 8th step
        if np.isinf(due):
            ring.measure()
        weights[0].assign_add([0.0, -1.0])
    ring.hold(tf.constant(0))
    groups, entry = ring.read()
    assert (entry["steps_kept"], entry["last_step"], entry["max_abs_w_every"]) == (5, 19, 8)
    assert entry["max_abs_w_rows"] == [1, 4]  # steps 15..19: step 16 measured, and the trigger's own
    assert np.allclose(groups["layer_history"]["grad_norm"][0], np.sqrt(2) * np.arange(16, 21))
    # max |w| = 3 + the steps before: measured at 8 and 16, the rows between repeating; the trigger read after 20
    assert np.allclose(groups["layer_history"]["max_abs_w"][0], [3 + 8, 3 + 16, 3 + 16, 3 + 16, 3 + 20])
    # the trigger's step beyond float32's exact integers (the state is float32): held as // 2^20 and % 2^20
    ring.seen.assign_add(5 * 2**36)
    ring.record(["w"], [tf.fill([2], 1.0)], weights)
    ring.hold(tf.constant(0))
    assert ring.read()[1]["last_step"] == 20 + 5 * 2**36


def test_the_ring_for_1000_variables_is_bounded_and_the_card_keeps_the_most_out_of_band():
    tf = pytest.importorskip("tensorflow")
    from tensorboard_plugin_dbg.capsule.layer_history import LayerHistory

    variables = [tf.Variable(tf.fill([3], float(i + 1))) for i in range(1000)]
    names = [f"layer_{i}/kernel" for i in range(1000)]
    ring = LayerHistory(8)
    for step in range(11):  # more steps than the ring holds: the last 8 kept, oldest first
        grads = [tf.fill([3], float(step + 1) * (100.0 if i == 700 and step >= 8 else 1.0)) for i in range(1000)]
        if np.isinf(ring.record(names, grads, variables)[1]):  # max |w| due (+inf): the watch's check measures it
            ring.measure()
    ring.hold(tf.constant(0))
    groups, entry = ring.read()
    held = groups["layer_history"]
    assert held["grad_norm"].shape == held["max_abs_w"].shape == (1000, 8) and entry["steps_kept"] == 8
    # two variables an XLA step may write (each costs it every call): the state, the step counter; their rows: the
    # ring and the held ring (8 bytes x K x n), max |w| every 8th step ((K / 8 + 1) x n, twice), `seen` held (2)
    assert [k for k, v in vars(ring).items() if isinstance(v, tf.Variable)] == ["state", "seen"]
    assert ring.state.shape == (2 * 8 + 2 * 2 + 1 + 2, 1001)
    assert np.allclose(held["grad_norm"][0], np.sqrt(3) * np.arange(4, 12))  # steps 3..10, norm of [s+1]*3
    assert np.allclose(held["max_abs_w"][999], 1000.0)
    first = capsule_layers.first_out_of_band(names, held["grad_norm"].astype(np.float64))
    assert (first["variable"], first["lead"]) == ("layer_700/kernel", 2)
    # the card: at most 48 rows, the first out of band among them, in the model's order
    shown = capsule_layers._shown(held["grad_norm"].astype(np.float64), first)  # noqa: SLF001 - the cap itself
    assert len(shown) == capsule_layers.CARD_VARIABLES and 700 in shown and shown == sorted(shown)


@pytest.mark.parametrize(
    "shape", [(), (10,), (256,), (256, 10), (3, 3, 16, 32), (1000, 7)], ids=lambda s: "x".join(map(str, s)) or "scalar"
)
def test_the_xla_forms_of_the_two_reductions_give_the_plain_ones(shape):
    """Under XLA the ring's reductions take another form (no elementwise op fused into a reduction, which XLA:CPU
    emits as a slow scalar loop): the same sum of squares / 2 and max |w|, non-finite values kept as they are."""
    tf = pytest.importorskip("tensorflow")

    values = np.random.default_rng(len(shape)).normal(size=shape).astype(np.float32) * 3
    compiled = tf.function(
        lambda t: (layer_history._squares_compiled(t), layer_history._largest_compiled(t)),  # noqa: SLF001
        jit_compile=True,
        autograph=False,  # plain tensor code: no autograph source written into the session's temporary folder
    )
    squares, largest = (float(v) for v in compiled(tf.constant(values)))
    assert squares == pytest.approx(float(np.sum(values.astype(np.float64) ** 2) / 2), rel=1e-5)
    assert largest == float(np.max(np.abs(values)))
    if values.size > 1:
        bad = values.copy().reshape(-1)
        bad[1] = np.inf
        assert all(np.isposinf(float(v)) for v in compiled(tf.constant(bad.reshape(shape))))
        bad[0] = np.nan
        assert all(np.isnan(float(v)) for v in compiled(tf.constant(bad.reshape(shape))))


RING_STEP = """
import tensorflow as tf, keras
from tensorboard_plugin_dbg.capsule import NanCapsule
def watched(folder, xla, ring=16):
    \"\"\"A custom loop's step under NanCapsule: the kernel's gradient 2 s, the bias's s (NaN once nan is set); SGD(0)
    keeps the weights the caller assigns.\"\"\"
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    capsule = NanCapsule(folder, layer_history=ring)
    capsule.watch(model, keras.optimizers.SGD(0.0))
    kernel, bias = model.trainable_variables
    def ring_step(s, nan):
        grads = [tf.fill(kernel.shape, 2.0 * s), tf.fill(bias.shape, s + nan)]
        return capsule.apply_gradients(grads, [kernel, bias], loss=tf.constant(1.0), batch=tf.zeros([1, 4]))
    return capsule, kernel, bias, tf.function(ring_step, jit_compile=xla, autograph=False)
"""


@pytest.mark.parametrize("xla", [False, True], ids=["graph", "xla"])
def test_the_ring_holds_every_steps_norms_and_max_abs_w_every_8th_step_and_exact_at_the_trigger(tmp_path, xla):
    """Every row holds its step's own gradient norms; max |w| of the weights the step starts from is measured every
    MAX_EVERY-th step (in the check's branch of that step: no conditional of its own at every step), the rows
    between repeating it, and exactly at the trigger; the manifest lists the measured rows. XLA on and off."""
    pytest.importorskip("tensorflow")
    from tensorboard_plugin_dbg.capsule.layer_history import MAX_EVERY

    scope: dict = {}
    exec(RING_STEP, scope)  # noqa: S102 - the same program the compile-count test runs in a subprocess
    capsule, kernel, bias, step = scope["watched"](str(tmp_path / "capsules"), xla)
    for s in range(20):
        kernel.assign(np.full(kernel.shape, s + 1.0, np.float32))
        bias.assign(np.full(bias.shape, -(s + 1.0) / 2, np.float32))
        applied = step(np.float32(s), np.float32(np.nan if s == 19 else 0.0))
        assert bool(applied) == (s < 19)
    groups, entry = capsule.capsule.history.read()
    held = groups["layer_history"]
    steps = np.arange(4, 20)  # the last 16 of 20, the trigger's (the bias's NaN gradient) last
    assert np.allclose(held["grad_norm"][0], np.sqrt(12) * 2.0 * steps)  # every step's own norm
    assert np.allclose(held["grad_norm"][1][:-1], np.sqrt(3) * steps[:-1]) and np.isnan(held["grad_norm"][1][-1])
    measured = steps - steps % MAX_EVERY  # the step whose max |w| a row holds: the last measured one...
    measured[-1] = steps[-1]  # ...and the trigger's own
    assert np.array_equal(held["max_abs_w"][0], measured + 1.0)
    assert np.array_equal(held["max_abs_w"][1], (measured + 1) / 2)
    assert entry["max_abs_w_every"] == MAX_EVERY and entry["max_abs_w_rows"] == [4, 12, 15]  # steps 8, 16, 19
    assert entry["steps_kept"] == 16 and entry["last_step"] == 19


def test_under_xla_the_step_with_the_ring_is_compiled_once(tmp_path):
    """max |w| every MAX_EVERY-th step: an index read from a variable must never become a slice's bound (XLA needs
    those as compile-time constants, and compiled the whole step again at every step: a Keras step of 1 ms took
    ~1 s). Counted by XLA's own dump: one module for the watched step, 12 steps run."""
    program = (
        RING_STEP
        + f"""
capsule, kernel, bias, step = watched({str(tmp_path / "capsules")!r}, True)
for s in range(12):
    kernel.assign_add(tf.ones(kernel.shape))
    step(tf.constant(float(s)), tf.constant(0.0))
"""
    )
    dumped = tmp_path / "xla"
    env = dict(dumps.env_for_tf(), XLA_FLAGS=f"--xla_dump_to={dumped}")
    subprocess.run([sys.executable, "-c", program], env=env, check=True, timeout=300, capture_output=True)
    modules = {f.split(".")[0] for f in os.listdir(dumped) if "ring_step" in f and "before_optimizations" in f}
    assert len(modules) == 1, sorted(os.listdir(dumped))


@pytest.mark.parametrize("xla", [False, True], ids=["graph", "xla"])
def test_finite_gradients_whose_squares_overflow_are_applied_and_a_nan_gradient_is_caught(tmp_path, xla):
    """The every-step check reads the gradients' sums of squares the ring computes: a finite gradient of 1e20 (its
    square is no float32) makes that sum infinite, and the check's rare path must still apply the update, not
    capture; an infinite gradient is caught."""
    tf = pytest.importorskip("tensorflow")
    import keras

    from tensorboard_plugin_dbg.capsule import NanCapsule

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(1e-25)
    capsule = NanCapsule(str(tmp_path / "capsules"))
    capsule.watch(model, optimizer)
    capsule.capsule.compiled = xla  # the ring's XLA forms

    def train_step(big: object) -> object:
        grads = [tf.fill(v.shape, big) for v in model.trainable_variables]
        return capsule.apply_gradients(grads, model.trainable_variables, loss=tf.constant(1.0), batch=tf.zeros([1, 2]))

    step = tf.function(train_step, jit_compile=xla, autograph=False)
    before = model.trainable_variables[0].numpy()
    assert bool(step(tf.constant(1e20)))  # applied
    assert np.allclose(model.trainable_variables[0].numpy(), before - 1e-5)
    assert int(capsule.capsule.state.triggers.numpy()) == 0
    assert not bool(step(tf.constant(np.inf, tf.float32)))
    assert int(capsule.capsule.state.triggers.numpy()) == 1


@pytest.mark.parametrize("ring", [32, 0], ids=["ring", "no_ring"])
def test_the_grad_spike_rule_reads_the_rings_sum_of_squares_instead_of_summing_the_gradients_again(tmp_path, ring):
    """grad_spike's global gradient norm is sqrt(2 x the ring's sum of squares / 2) when the ring is on: one L2Loss
    per gradient in the traced step (the ring's), not two; without the ring the rule sums them itself. The value is
    the global norm either way."""
    tf = pytest.importorskip("tensorflow")
    import keras

    from tensorboard_plugin_dbg.capsule import NanCapsule

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)])
    capsule = NanCapsule(str(tmp_path / "capsules"), grad_spike=10.0, layer_history=ring)
    capsule.watch(model, keras.optimizers.SGD(0.0))
    measured: dict = {}
    original = capsule.capsule.spikes.measure

    def measure(*args: object) -> object:
        spiky, values = original(*args)
        measured.update(values)
        return spiky, values

    capsule.capsule.spikes.measure = measure

    def train_step(scale: object) -> object:
        grads = [tf.fill(v.shape, scale) for v in model.trainable_variables]
        applied = capsule.apply_gradients(grads, model.trainable_variables, loss=tf.constant(1.0), batch=tf.zeros([1]))
        return applied, measured["grad_spike"][0]

    step = tf.function(train_step, autograph=False)
    ops = [op.type for op in step.get_concrete_function(tf.TensorSpec([], tf.float32)).graph.get_operations()]
    assert ops.count("L2Loss") == 2  # kernel and bias: the ring's sums, or the rule's own without the ring
    _, norm = step(tf.constant(3.0))
    assert float(norm) == pytest.approx(3.0 * np.sqrt(2 * 3 + 3), rel=1e-6)


def test_without_xla_the_ring_adds_five_ops_to_the_every_step_graph_and_no_switch(tmp_path):
    """Without XLA each op of the step is a dispatch on its critical path: the ring adds to the every-step graph its
    sums of squares (in place of the check's own sums of the gradients), one stack and one scatter of them, the step
    counted and read in one op (`ResourceCountUpTo`), the row and the due term's gather; nothing else (no read and
    add of the counter), and no Switch (which would take TensorFlow's executor off its fast path)."""
    tf = pytest.importorskip("tensorflow")
    import keras

    from tensorboard_plugin_dbg.capsule import NanCapsule

    def step_ops(ring: int) -> collections.Counter:
        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)])
        capsule = NanCapsule(str(tmp_path / f"capsules{ring}"), layer_history=ring)
        capsule.watch(model, keras.optimizers.SGD(0.0))

        def train_step(scale: object) -> object:
            grads = [tf.fill(v.shape, scale) for v in model.trainable_variables]
            return capsule.apply_gradients(grads, model.trainable_variables, loss=tf.constant(1.0), batch=tf.zeros([1]))

        graph = tf.function(train_step, autograph=False).get_concrete_function(tf.TensorSpec([], tf.float32)).graph
        kept = [op.type for op in graph.get_operations() if op.type not in ("Const", "Identity", "Placeholder")]
        return collections.Counter(kept)  # placeholders: the captured variables

    with_ring, without = step_ops(32), step_ops(0)
    added = with_ring - without
    removed = without - with_ring
    assert added == collections.Counter(
        {"L2Loss": 2, "ResourceCountUpTo": 1, "FloorMod": 1, "GatherV2": 1, "Pack": 1, "ResourceScatterUpdate": 1}
    )
    assert removed == collections.Counter({"Sum": 2})  # the check sums the ring's sums of squares instead
    assert "Switch" not in with_ring and with_ring["If"] == 1
