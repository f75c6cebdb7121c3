"""Alignment of eager op sequences (analysis/compare/align.py): difflib for short runs, occurrences for long ones;
both keep the ops after an inserted one paired."""

from __future__ import annotations

import pytest

from tensorboard_plugin_dbg.analysis.compare import align


@pytest.mark.parametrize("repeat", [1, 4_000])  # 1: difflib; 4,000 x 5 executions: past MAX_DIFFLIB
def test_an_op_added_in_b_is_only_in_b_and_the_rest_pair(repeat):
    names_a = ["Square", "Mul", "Sqrt", "AddV2", "Sum"] * repeat
    names_b = ["Square", "Mul", "Tanh", "Sqrt", "AddV2", "Sum"] + names_a[5:]
    pairs, similarity = align.align_executions(names_a, names_b)
    assert pairs.only_b.tolist() == [2] and pairs.only_a.tolist() == []
    assert all(names_a[a] == names_b[b] for a, b in zip(pairs.a.tolist(), pairs.b.tolist()))
    assert len(pairs.a) == len(names_a) and similarity == pytest.approx(2 * len(names_a) / (2 * len(names_a) + 1))
    assert pairs.b.tolist() == sorted(pairs.b.tolist())  # in B's order


def test_function_names_lose_their_numeric_suffix():
    assert align.function_base("__inference_train_step_1234") == "train_step"
    assert align.function_base("__inference_step_12_34") == "step"
    assert align.function_base("__backward_f_5_6") == "__backward_f"
