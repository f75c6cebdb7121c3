"""`report` speaks the framework of the run it reads (#41 item 6): a JAX run's function is a jitted function, not a
tf.function, and the call a rule's missing mode needs is the JAX writer's, not TensorFlow's; a TensorFlow run keeps
its wording. Real dumps: tests/programs/jax_bugs.py and its TensorFlow twin tf_bugs.py (the same bug)."""

from __future__ import annotations

import os
import subprocess
import sys

import dumps
import pytest

pytest.importorskip("jax")
pytestmark = pytest.mark.slow


def _report(program: str) -> str:
    dump = dumps.make_dump(program, "softmax_log")
    proc = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", os.path.dirname(dump)],
        capture_output=True,
        text=True,
        env=dumps.env_for_tf(),
        timeout=180,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    return proc.stdout


def test_a_jax_run_is_reported_in_jaxs_words():
    text = _report("jax_bugs")
    assert "in jit_train_step (jitted function)" in text
    assert "tf.function" not in text and "tf.debugging" not in text
    not_judged = [line for line in text.splitlines() if line.startswith("not judged:")]
    assert not_judged and all(
        'tensorboard_plugin_dbg.jax.enable_dump_debug_info(logdir, tensor_debug_mode="FULL_TENSOR"' in line
        for line in not_judged
    )


def test_a_tensorflow_run_keeps_tensorflows_words():
    text = _report("tf_bugs")
    assert "(tf.function)" in text and "jitted function" not in text
    assert "tensorboard_plugin_dbg.jax" not in text


NESTED = """
import sys
import jax, jax.numpy as jnp
from tensorboard_plugin_dbg.jax import enable_dump_debug_info
enable_dump_debug_info(sys.argv[1])

@jax.jit
def inner(x):
    return jnp.log(x)  # CULPRIT

@jax.jit
def step(w):
    return inner(w - 1.0).sum()

print(step(jnp.ones(3)))
"""


def test_a_nested_jits_input_is_followed_to_the_tensor_its_caller_passed_in(tmp_path):
    """The first -inf is made inside a nested jit from the zeros its caller passed in: the caller's op is in the
    JAX dump, so the input's health is known and the log is the producer (not 'inputs unknown')."""
    script = tmp_path / "prog.py"
    script.write_text(NESTED)
    env = dict(dumps.env_for_tf(), JAX_PLATFORMS="cpu")
    run = [sys.executable, str(script), str(tmp_path / "logdir" / "dump")]
    assert subprocess.run(run, env=env, capture_output=True, timeout=180, check=False).returncode == 0
    proc = subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_dbg", "report", str(tmp_path / "logdir")],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    text = proc.stdout
    assert "first producer: op log_0 (log) in jit_step.inner_1 (jitted function)" in text, text
    assert "passed in as sub_0:0" in text and "3 zeros among 3 elements" in text
    assert (
        "records no op" not in text
        and f"prog.py:{NESTED.splitlines().index('    return jnp.log(x)  # CULPRIT') + 1}" in text
    )
