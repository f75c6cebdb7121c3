"""Helpers shared by the JAX writer's tests (test_jax_*.py, test_writer.py): run the CLI or a small JAX program in a
subprocess, and read a dump's events and TensorProtos back."""

from __future__ import annotations

import os
import subprocess
import sys

import dumps
import ml_dtypes
import numpy as np

from tensorboard_plugin_dbg.reader import schema, tfrecord
from tensorboard_plugin_dbg.reader.tensor_proto import parse_tensor_proto, tensor_to_numpy

PACKAGE = "tensorboard_plugin_dbg"


def cli(*args: str) -> subprocess.CompletedProcess:
    """`python -m tensorboard_plugin_dbg ARGS...` (or `python ARGS...` when the first is a .py file)."""
    command = [sys.executable, *args] if args[0].endswith(".py") else [sys.executable, "-m", PACKAGE, *args]
    return subprocess.run(command, capture_output=True, text=True, env=dumps.env_for_tf(), timeout=180, check=False)


def program(tmp_path, body: str, *args: str) -> subprocess.CompletedProcess:
    """A JAX program's text written under tmp_path and run on the CPU."""
    script = tmp_path / "prog.py"
    script.write_text(body)
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        env=dict(dumps.env_for_tf(), JAX_PLATFORMS="cpu"),
        timeout=180,
        check=False,
    )


def events(dump_dir: str, suffix: str) -> list:
    """Every event of the dump's one file ending in `.suffix`, parsed."""
    (path,) = [os.path.join(dump_dir, f) for f in os.listdir(dump_dir) if f.endswith("." + suffix)]
    buf = np.fromfile(path, dtype=np.uint8)
    scan = tfrecord.scan(buf, 0)
    return [schema.parse_event(buf[s : s + n].tobytes()) for s, n in zip(scan.starts, scan.lengths)]


def array(proto_bytes: bytes) -> np.ndarray:
    """A TensorProto's values in its shape (bfloat16 kept as ml_dtypes.bfloat16)."""
    proto = parse_tensor_proto(proto_bytes)
    flat, dtype, shape = tensor_to_numpy(proto, raw_bfloat16=True)
    arr = flat.view(ml_dtypes.bfloat16) if dtype == "bfloat16" else flat
    return arr.reshape(shape)
