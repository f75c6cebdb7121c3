"""Optional (off by default) tfdbg2 during training with a circular buffer, flushed into the capsule at the trigger:
`NanCapsule(directory, tfdbg_buffer=N)`. tfdbg2 keeps the last N execution and graph-execution-trace events in
memory and writes the rest of its dump (metadata, source files, stack frames, graphs) into a temporary folder; at the
first non-finite step the writer `enable_dump_debug_info` returned is flushed (`FlushNonExecutionFiles`,
`FlushExecutionFiles`) and the dump is copied into CAPSULE/tfdbg/, a run like any other in the dashboard.

The cost is tfdbg2's own (every op instrumented, the buffer only spares the disk): see bench/capsule.py's fourth
setting and bench/README.md. TensorFlow is imported in the training process only."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import Any

DUMP_DIR = "tfdbg"  # inside the capsule folder


class FlightRecorder:
    def __init__(self, size: int, mode: str = "CURT_HEALTH") -> None:
        import tensorflow as tf

        if size <= 0:
            raise ValueError(f"tfdbg_buffer must be a positive number of events, not {size}")
        self.dump_dir = tempfile.mkdtemp(prefix="tbdbg-flight-")
        atexit.register(shutil.rmtree, self.dump_dir, True)  # the buffer's spill folder dies with the process
        self.writer: Any = tf.debugging.experimental.enable_dump_debug_info(
            self.dump_dir, tensor_debug_mode=mode, circular_buffer_size=size
        )

    def flush_into(self, capsule_folder: str) -> str:
        """The buffered events written out and the dump copied into CAPSULE/tfdbg/ (its folder returned)."""
        self.writer.FlushNonExecutionFiles()
        self.writer.FlushExecutionFiles()
        target = os.path.join(capsule_folder, DUMP_DIR)
        shutil.copytree(self.dump_dir, target)
        return target
