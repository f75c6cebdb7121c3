"""Pseudo-paths (`<frozen runpy>`, `<string>`, `<stdin>`, `<ipython-input-…>`) are real stack frames but no user
source file (issue #25): a program run with `python -m` lists `<frozen runpy>` among the libraries, not as a user
file with 0 lines."""

from __future__ import annotations

import os

import dumps
from run_helpers import run_of


def _is_pseudo(path: str) -> bool:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.startswith("<") and name.endswith(">")


def test_python_m_lists_frozen_runpy_as_no_user_file():
    run = run_of(dumps.make_dump("run_as_module"))
    files = run.source_files()["files"]
    pseudo = [f for f in files if _is_pseudo(f["path"])]
    assert any(f["path"].endswith("/<frozen runpy>") for f in pseudo), [f["path"] for f in files]
    assert [f for f in pseudo if f["is_user"]] == []
    assert [f for f in files if f["is_user"] and f["line_count"] == 0] == []
    assert any(f["is_user"] and f["path"].endswith("buggy_mlp.py") for f in files)
    # The runpy frames themselves stay in the stacks (real frames), marked as library frames.
    ids = run.execution(0, max_elements=0)["stack_frame_ids"]
    frames = run.stack_frames(ids)["frames"]
    runpy_frames = [f for f in frames if f["path"] and _is_pseudo(f["path"])]
    assert runpy_frames and not any(f["is_user"] for f in runpy_frames), frames
    assert os.path.basename(frames[-1]["path"] or "") != "<frozen runpy>"
