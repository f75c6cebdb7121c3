"""`report` speaks the framework of the run it reads (#41 item 6): a JAX run's function is a jitted function, not a
tf.function, and the call a rule's missing mode needs is the JAX writer's, not TensorFlow's; a TensorFlow run keeps
its wording. Real dumps: tests/programs/jax_bugs.py and its TensorFlow twin tf_bugs.py (the same bug)."""

from __future__ import annotations

import os
import subprocess

import dumps
import pytest
from jax_helpers import cli as _cli
from jax_helpers import program as _program
from werkzeug.test import Client

from tests.api_helpers import make_app, ok, wait_indexed

pytest.importorskip("jax")
pytestmark = pytest.mark.slow


def _report(program: str) -> str:
    proc = _cli("report", os.path.dirname(dumps.make_dump(program, "softmax_log")))
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
    assert _program(tmp_path, NESTED, str(tmp_path / "logdir" / "dump")).returncode == 0
    proc = _cli("report", str(tmp_path / "logdir"))
    text = proc.stdout
    assert "first producer: op log_0 (log) in jit_step.inner_1 (jitted function)" in text, text
    assert "passed in as sub_0:0" in text and "3 zeros among 3 elements" in text
    assert (
        "records no op" not in text
        and f"prog.py:{NESTED.splitlines().index('    return jnp.log(x)  # CULPRIT') + 1}" in text
    )


BEFORE = """
import sys
import jax, jax.numpy as jnp
from tensorboard_plugin_dbg.jax import enable_dump_debug_info

@jax.jit
def train_step(w):
    return jnp.log(w - 1.0)

enable_dump_debug_info(sys.argv[1])
w = jnp.ones(3)
w = train_step(w)  # CALL
print(w)
"""

EAGER = """
import sys
import jax, jax.numpy as jnp
from tensorboard_plugin_dbg.jax import enable_dump_debug_info

enable_dump_debug_info(sys.argv[1])
x = jnp.array([1.0, 0.0, 2.0])
y = x * 0.5
z = jnp.log(y)  # CULPRIT
print(z.sum())
"""


def _run_and_report(tmp_path, program: str) -> tuple[subprocess.CompletedProcess, str]:
    proc = _program(tmp_path, program, str(tmp_path / "logdir" / "dump"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = _cli("report", str(tmp_path / "logdir"))
    assert report.returncode == 1, report.stdout + report.stderr[-2000:]
    return proc, report.stdout


def _line(program: str, marker: str) -> int:
    return next(i for i, line in enumerate(program.splitlines(), 1) if line.endswith(marker))


def test_a_function_jitted_before_the_call_is_named_and_its_calls_recorded(tmp_path):
    """#41 item 3: train_step was wrapped before enable_dump_debug_info: stderr names it with its line, and each call
    is an execution (its outputs' health, its call site), so the -inf it makes is found at the calling line."""
    proc, text = _run_and_report(tmp_path, BEFORE)
    decorator = BEFORE.splitlines().index("def train_step(w):")  # 1-based: the @jax.jit line (co_firstlineno)
    assert "wrapped by jax.jit before this call, so recorded as calls only" in proc.stderr
    assert f"train_step ({tmp_path / 'prog.py'}:{decorator})" in proc.stderr
    assert "first producer: eager train_step" in text and "3 −∞ among 3 elements" in text
    assert f"prog.py:{_line(BEFORE, '# CALL')} in <module>" in text


def test_eager_jax_ops_are_recorded_as_executions(tmp_path):
    """#41 item 5: op-by-op jax.numpy outside jit: each op an execution, its input linked to the op that made it."""
    _, text = _run_and_report(tmp_path, EAGER)
    assert "first producer: eager log" in text and "1 −∞ among 3 elements" in text
    assert "multiply:0 (execution #" in text and "1 zero among 3 elements" in text
    assert f"prog.py:{_line(EAGER, '# CULPRIT')} in <module>" in text


CHAINED = """
import sys
import jax, jax.numpy as jnp
from tensorboard_plugin_dbg.jax import enable_dump_debug_info
enable_dump_debug_info(sys.argv[1])

@jax.jit
def step(w):
    return jnp.log(w) - 1.0

w = jnp.ones(3)
w = step(w)  # log(1) - 1 = -1
w = step(w)  # log(-1): NaN
print(w)
"""


def test_a_jitted_calls_input_is_followed_to_the_call_that_made_it(tmp_path):
    """A top-level call of a JAX jit is a function call (its execution holds the graph id): the log's input, a
    Placeholder, is the previous call's output, whose negatives the report shows (not 'records no op')."""
    _, text = _run_and_report(tmp_path, CHAINED)
    assert "first producer: op log_0 (log) in jit_step (jitted function)" in text, text
    assert "passed in by the caller from jit_step:0 (execution #" in text and "3 negative among 3 elements" in text


HOST_DATA = """
import sys
import numpy as np
import jax, jax.numpy as jnp
from tensorboard_plugin_dbg.jax import enable_dump_debug_info
enable_dump_debug_info(sys.argv[1])

@jax.jit
def step(x):
    return jnp.log(x)

print(step(np.array([1.0, 0.0], np.float32)))
"""


def test_host_data_passed_to_a_jitted_function_is_said_in_jaxs_words(tmp_path):
    _, text = _run_and_report(tmp_path, HOST_DATA)
    assert "arg_0:0 — passed in by execution #" in text and "(jitted function `jit_step`)" in text, text
    assert "Python/numpy data converted by JAX" in text and "tf.function" not in text


CONSTANT = """
import sys
import numpy as np
import jax, jax.numpy as jnp
from tensorboard_plugin_dbg.jax import enable_dump_debug_info
enable_dump_debug_info(sys.argv[1])
SCALE = np.array([1.0, -1.0, 2.0], np.float32)

@jax.jit
def step(w):
    return w * jnp.log(SCALE)  # CULPRIT

print(step(jnp.ones(3)))
"""


def test_a_jitted_functions_constant_input_is_said_in_jaxs_words(tmp_path):
    """A float32 constant closed over by a jitted function (a jaxpr constvar, op `const_0`) is not recorded by the
    JAX writer: the report says so, never "not traced by TensorFlow" nor "not a floating-point tensor"."""
    _, text = _run_and_report(tmp_path, CONSTANT)
    (line,) = [line for line in text.splitlines() if "const_0:0" in line]
    assert "the JAX writer does not record a jitted function's constants" in line, text
    assert "TensorFlow" not in line and "floating-point" not in line
    assert f"prog.py:{_line(CONSTANT, '# CULPRIT')} in step" in text


def test_the_graph_neighbourhood_of_a_jax_run_speaks_of_jaxprs_not_tensorflows_dump():
    """Graph Structure's note on a JAX run: a jaxpr has no control dependencies; TensorFlow's dump is not named."""
    app, _ = make_app(os.path.dirname(dumps.make_dump("jax_bugs", "softmax_log")))
    client = Client(app)
    wait_indexed(client)
    (run,) = ok(client, "runs")["runs"]
    producer = ok(client, "root_cause", run=run["name"])["producer"]
    answer = ok(
        client, "graph_neighborhood", run=run["name"], graph_id=producer["graph_id"], op_name=producer["op_name"]
    )
    assert answer["notes"] == ["Data edges only: a jaxpr has no control dependencies, so none are drawn."], answer


NESTED_CONSTANT = NESTED.replace("def inner(x):", "def inner(x, scale):").replace(
    "inner(w - 1.0)", "inner(w - 1.0, 2.0)"
)


def test_a_nested_jits_input_unknown_is_said_in_jaxs_words(tmp_path):
    """A Python number passed into a nested jit is inlined into the call (a literal: no op, no record), so the calling
    op records one tensor for two inputs: the input the log reads cannot be told, and the report says why in JAX's
    words — not "TensorFlow records no op for a call between tf.functions" (#41: links.py spoke TF's whatever the
    framework)."""
    assert _program(tmp_path, NESTED_CONSTANT, str(tmp_path / "logdir" / "dump")).returncode == 0
    text = _cli("report", str(tmp_path / "logdir")).stdout
    assert "first non-finite (inputs unknown): op log_0 (log) in jit_step.inner_1 (jitted function)" in text, text
    assert (
        "an input of jitted function `jit_step.inner_1`, called from inside jitted function `jit_step`: the calling "
        "op's recorded tensors do not match its 2 inputs one to one (a constant passed in, e.g. a Python number, is "
        "inlined into the call and not recorded)"
    ) in text, text
    assert "TensorFlow" not in text and "tf.function" not in text
