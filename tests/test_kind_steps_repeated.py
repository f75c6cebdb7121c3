"""KindSteps fed blocks laid out alike (index/kind_steps.py, issue #40 item 2): a training loop's trace file read in
chunks of whole steps gives every chunk the same kinds in the same order, and the fold keeps that block's order
instead of sorting each one again. Fed that way it must answer exactly what one block of all the rows answers."""

from __future__ import annotations

import numpy as np
import pytest

from tensorboard_plugin_dbg.index import kind_steps
from tensorboard_plugin_dbg.index.kind_steps import KindSteps


def _state(steps: KindSteps) -> list[np.ndarray]:
    return [
        steps.steps,
        steps.run,
        steps.best_run,
        steps.best_run_end,
        *steps.last,
        *steps.changes,
        *steps.first_change,
    ]


@pytest.mark.parametrize("seed", range(4))
def test_blocks_of_the_same_layout_answer_like_one_block(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    n_kinds = int(rng.integers(2, 40))
    step = rng.integers(0, n_kinds, int(rng.integers(n_kinds, 3 * n_kinds))).astype(np.int32)  # kinds repeat
    per_block = int(rng.integers(1, 4))  # steps per block
    blocks = int(rng.integers(3, 12))
    layout = np.tile(step, per_block)
    # a block of another layout in the middle (a step that traced other ops), then the usual one again
    odd = rng.integers(0, n_kinds + 3, len(layout)).astype(np.int32)  # new kinds too: the state grows
    kind = np.concatenate([layout] * (blocks // 2) + [odd] + [layout] * (blocks - blocks // 2))
    n = len(kind)
    values = [rng.integers(-1, 3, n).astype(np.int64), rng.integers(-1, 2, n).astype(np.int8)]
    flag = rng.random(n) < rng.choice([0.3, 0.9])

    whole = KindSteps(None, columns=2)
    whole.add(kind, values, flag)

    sorts = {"n": 0}
    argsort = np.argsort

    def counted(*args, **kwargs):
        sorts["n"] += 1
        return argsort(*args, **kwargs)

    monkeypatch.setattr(kind_steps.np, "argsort", counted)
    fed = KindSteps(None, columns=2)
    for lo in range(0, n, len(layout)):
        hi = lo + len(layout)
        fed.add(kind[lo:hi], [v[lo:hi] for v in values], flag[lo:hi])
    # sorted: the first block, the odd one, and the first after it (the kinds grew meanwhile), no other
    assert sorts["n"] <= 3 < blocks + 1
    for got, want in zip(_state(fed), _state(whole), strict=True):
        np.testing.assert_array_equal(got, want)
