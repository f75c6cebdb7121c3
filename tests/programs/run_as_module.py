"""The demo's buggy MLP run the way `python -m PACKAGE.MODULE` runs a program: through runpy, whose stack frames
name the pseudo-file `<frozen runpy>` (TensorFlow records it as CWD/<frozen runpy>, a file with no lines). One step.
Args: DUMP_DIR."""

import runpy
import sys

if __name__ == "__main__":
    sys.argv = ["buggy_mlp", sys.argv[1], "--steps", "1"]
    runpy.run_module("tensorboard_plugin_dbg.demo.buggy_mlp", run_name="__main__", alter_sys=True)
