"""Helpers of the tests under tf.distribute (#35): the Mirrored program's output folder, its result, and scripts run on
two logical CPU devices in a subprocess (logical devices are set once a process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests import dumps


def run(*args: str) -> str:
    """The output folder of tests/programs/capsule_mirrored.py ARGS (made once, cached like the dumps)."""
    return dumps.make_dump("capsule_mirrored", *args)


def result(out: str) -> dict:
    with open(os.path.join(out, "result.json")) as f:
        return json.load(f)


# the head of a script under MirroredStrategy on two logical CPU devices (set once a process: hence a subprocess)
TWO_CPUS = """
import json, sys
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import keras
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
"""


def script_output(script: str, *args: str) -> dict:
    """The JSON that SCRIPT (a TensorFlow program, run in a subprocess) prints last."""
    code = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=dumps.env_for_tf(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert code.returncode == 0, code.stderr[-3000:]
    return json.loads(code.stdout.strip().splitlines()[-1])
