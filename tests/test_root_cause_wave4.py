"""Root cause, fourth round (issue #38), on dumps written by real TensorFlow: where TensorFlow's XLA, file order,
tf.data and tf.distribute would make the analysis say something false."""

from __future__ import annotations

import dumps
import pytest
from test_root_cause import culprit_line, only_run

from tensorboard_plugin_dbg.__main__ import EXIT_UNREADABLE, main
from tensorboard_plugin_dbg.analysis import report_text, run_verdict
from tensorboard_plugin_dbg.analysis.root_cause import analyze

XLA_PROGRAMS = [("xla_fit", "one_step_on_data"), ("xla_function", "step")]


@pytest.mark.parametrize("program,function", XLA_PROGRAMS, ids=[p for p, _ in XLA_PROGRAMS])
def test_a_step_compiled_by_xla_is_never_clean(program, function, capsys):
    """tfdbg2 cannot record an XLA-compiled function: the dump holds its graph and no trace of it. The report says
    so, quotes the line that turned XLA on, says how to record it, and exits 2 (cannot judge), never "clean"."""
    dump = dumps.make_dump(program)
    run = only_run(dump)
    result = analyze(run)
    assert result["status"] == "unknown", result["message"]
    message = result["message"]
    assert f"`{function}`" in message and "compiled by XLA" in message, message
    jit_line = culprit_line(program, "jit_compile=True")
    assert f"{dumps.program_path(program)}:{jit_line}" in message, message
    assert "jit_compile=False" in message and "NanCapsule" in message, message
    assert run_verdict.summary(run)["status"] == "unknown"
    code = main(["report", dump])
    text = capsys.readouterr().out
    assert code == EXIT_UNREADABLE, text
    assert "CLEAN" not in text and "compiled by XLA" in text, text


def test_a_program_that_died_before_its_first_step_is_never_clean(capsys):
    """Built the step, died before calling it: nothing non-finite, and nothing recorded about the step either."""
    dump = dumps.make_dump("died_before_step")
    run = only_run(dump)
    result = analyze(run)
    assert result["status"] == "unknown", result["message"]
    assert "`step`" in result["message"] and "died before its first call" in result["message"]
    assert "jit_compile=True" not in open(dumps.program_path("died_before_step")).read()  # no XLA claim to quote
    assert main(["report", dump]) == EXIT_UNREADABLE
    assert "CLEAN" not in capsys.readouterr().out


def test_a_clean_keras_fit_stays_clean():
    """The same model trained without XLA: every function it built ran and was traced, so clean is true there."""
    result = analyze(only_run(dumps.make_dump("keras_fit")))
    assert result["status"] == "clean", result["message"]
    assert report_text.run_section(report_text.run_result(only_run(dumps.make_dump("keras_fit")))).count("CLEAN") == 1
