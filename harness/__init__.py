"""What the tests and the benchmarks share: the real processes they drive.

- `harness.tensorboard_process.TensorBoardProcess`: a real `tensorboard` on a free loopback port (the stock command,
  or one debugger only through `harness/tb_launch.py`), timed HTTP GETs, and its memory from /proc.
- `harness.chromium`: Debian's Chromium for Playwright (never a downloaded browser) and the one set of flags.

Not part of the installed package (`pip install` ships `tensorboard_plugin_dbg` only). pytest puts the repository
root on sys.path (pyproject.toml `pythonpath`); bench scripts put it there themselves.
"""
