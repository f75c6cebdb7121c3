"""The set-up every compare end-to-end test starts from: a pair of real dumps (tests/test_compare.py's `pair`) as
runs `base` (A) and `changed` (B) of one logdir, a real `tensorboard` on it, and the dashboard showing `changed`
compared with `base`, its first divergence found."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator

from compare_helpers import pair
from e2e_page import by_testid, open_dashboard

from harness.tensorboard_process import TensorBoardProcess


@contextlib.contextmanager
def comparing(
    page, tmp_path, program: str, mode: str, viewport: tuple[int, int] | None = None, names=("base", "changed")
) -> Iterator:
    """(tb, frame) with the comparison's card drawn; `viewport` (width, height) is set before the dashboard opens;
    `names`: the runs' (baseline, changed)."""
    a, b = pair(program, mode)
    base, changed = names
    shutil.copytree(a, tmp_path / base)
    shutil.copytree(b, tmp_path / changed)
    with TensorBoardProcess(str(tmp_path)) as tb:
        if viewport is not None:
            page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
        frame = open_dashboard(page, tb)
        by_testid(frame, "run-picker").select_option(changed)
        picker = by_testid(frame, "compare-picker")
        picker.wait_for(timeout=20_000)
        picker.select_option(base)
        by_testid(frame, "compare-finding").wait_for(timeout=30_000)
        yield tb, frame
