"""The every-step check under XLA (capsule/check.py `sum_finite(..., compiled=True)`, #35): a matrix's sum is taken as
a product with ones (XLA:CPU's full reduction of a [64, 256] gradient was a reduce-window loop, ~8x the dot's time).
It must say "not finite" for a NaN, +inf or -inf anywhere in any tensor of any rank, and "finite" otherwise; and
the compiled check holds no full reduction of a matrix (the cost it exists to avoid). Real TensorFlow, in-process,
without autograph (which would leave generated sources behind)."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tensorboard_plugin_dbg.capsule import check  # noqa: E402

SHAPES = [(64, 256), (256, 10), (3, 3, 16, 32), (256,), (), (0, 5), (4, 0), (2, 0, 3)]


def _compiled_check(shapes: list[tuple[int, ...]]):
    signature = [tf.TensorSpec(s, tf.float32) for s in shapes] + [tf.TensorSpec([], tf.float32)]

    @tf.function(jit_compile=True, autograph=False, input_signature=signature)
    def go(*args):
        return check.sum_finite(list(args[:-1]), args[-1], compiled=True)

    return go


def test_the_compiled_check_finds_every_non_finite_value_wherever_it_is():
    go = _compiled_check(SHAPES)
    rng = np.random.default_rng(0)
    clean = [rng.normal(size=s).astype(np.float32) for s in SHAPES]
    assert bool(go(*clean, np.float32(0.0)))
    assert not bool(go(*clean, np.float32(np.inf)))  # halted
    for i, shape in enumerate(SHAPES):
        if not int(np.prod(shape)):
            continue
        for bad in (np.nan, np.inf, -np.inf):
            for _ in range(3):
                tensors = [t.copy() for t in clean]
                flat = tensors[i].reshape(-1)
                flat[rng.integers(flat.size)] = bad
                assert not bool(go(*tensors, np.float32(0.0))), (shape, bad)
        both = [t.copy() for t in clean]  # +inf and -inf in one tensor: their sum is NaN, still caught
        flat = both[i].reshape(-1)
        flat[0], flat[-1] = np.inf, -np.inf
        assert not bool(go(*both, np.float32(0.0))), shape


def test_finite_values_whose_sum_overflows_read_not_finite_for_the_rare_path_to_tell_apart():
    go = _compiled_check([(64, 256)])
    huge = np.full((64, 256), 3e38, np.float32)
    assert not bool(go(huge, np.float32(0.0)))
    assert bool(check.all_finite([tf.constant(huge)]))  # the rare path's exact check: no trigger


def test_the_compiled_check_sums_a_matrix_by_a_product_not_a_full_reduction():
    go = _compiled_check([(64, 256), (256,)])
    graph = go.get_concrete_function().graph
    ops = [op for op in graph.get_operations()]
    sums = [op for op in ops if op.type == "Sum"]
    ranks = [op.inputs[0].shape.rank for op in sums]
    assert 2 not in ranks, ranks  # the matrix is reduced by a MatMul, its [256] column sums then summed
    assert any(op.type in ("MatMul", "BatchMatMulV2", "BatchMatMulV3") for op in ops)
    plain = tf.function(autograph=False)(lambda m, b, h: check.sum_finite([m, b], h))
    ops = plain.get_concrete_function(
        tf.TensorSpec((64, 256), tf.float32), tf.TensorSpec((256,), tf.float32), tf.TensorSpec([], tf.float32)
    ).graph.get_operations()
    assert not any(op.type.startswith(("MatMul", "BatchMatMul")) for op in ops)  # without XLA: one op a tensor


def test_the_compiled_check_reduces_once_per_vector_length_not_once_per_tensor():
    # XLA:CPU emits each full reduction as a kernel of its own: the column sums and vectors of one length are added
    # elementwise first (bench/README.md, #35)
    shapes = [(64, 256), (256,), (256, 256), (256,), (256, 10), (10,), ()]
    ops = _compiled_check(shapes).get_concrete_function().graph.get_operations()
    sums = [op for op in ops if op.type == "Sum"]
    assert sorted(op.inputs[0].shape.as_list()[0] for op in sums) == [10, 256], [op.inputs[0].shape for op in sums]
