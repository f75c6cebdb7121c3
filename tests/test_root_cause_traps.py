"""Root cause, third round (issue #29), on dumps written by real TensorFlow: a NaN born in a backward pass built
from plain ops (the tf.where trap), said with honest causal words. Each program marks the lines the analysis must
name; the tests read them from the program."""

from __future__ import annotations

import os

import dumps
import pytest
from test_root_cause import culprit_line, only_run

from tensorboard_plugin_dbg.analysis import report_text
from tensorboard_plugin_dbg.analysis.root_cause import analyze

WHERE_CASES = [
    ("log", "FIX-log", "TAPE-tape"),
    ("div", "FIX-div", "TAPE-tape"),
    ("tf_gradients", "FIX-log", "TAPE-graph"),
]


def _line_of(frame, program):
    assert frame is not None
    assert os.path.realpath(frame["path"]) == os.path.realpath(dumps.program_path(program))
    return frame["line"]


@pytest.mark.parametrize("variant,fix,tape", WHERE_CASES, ids=[c[0] for c in WHERE_CASES])
def test_where_trap_names_the_where_line_as_fix_and_the_gradient_line_as_during(variant, fix, tape):
    run = only_run(dumps.make_dump("nan_where_grad", "FULL_HEALTH", variant))
    result = analyze(run)
    assert result["status"] == "found", result["message"]
    p = result["producer"]
    assert p["op_name"].startswith(("gradient_tape/", "gradients/")), p["op_name"]
    assert _line_of(p["forward"]["user_frame"], "nan_where_grad") == culprit_line("nan_where_grad", f"# {fix}")
    assert _line_of(p["user_frame"], "nan_where_grad") == culprit_line("nan_where_grad", f"# {tape}")
    why = p["forward"]["why"]
    assert why and why.count(". ") == 0 and "masked" in why and "gradient" in why, why
    assert why in result["message"]
    text = report_text.run_section(report_text.run_result(run))
    fix_at = f"fix {dumps.program_path('nan_where_grad')}:{culprit_line('nan_where_grad', f'# {fix}')}"
    during_at = f"during {dumps.program_path('nan_where_grad')}:{culprit_line('nan_where_grad', f'# {tape}')}"
    assert fix_at in text and during_at in text and text.index(fix_at) < text.index(during_at)
    assert why in text


def test_skip_claims_no_link_without_a_data_path():
    """The masked -inf of the log never flows into the gradient op that made the NaN (it reads the log's input):
    the skip must not say the gradient op 'turned it into' the NaN."""
    result = analyze(only_run(dumps.make_dump("nan_where_grad", "FULL_HEALTH", "log")))
    (skip,) = result["skipped"]
    assert skip["op_type"] == "Log" and "turned it into" not in skip["description"], skip["description"]
    assert "contained" in skip["description"]


def test_skip_keeps_the_link_when_the_data_path_exists():
    """The mask's -inf flows through add into the Softmax that broke: there the link is true and said."""
    result = analyze(only_run(dumps.make_dump("nan_masked_softmax")))
    (skip,) = result["skipped"]
    assert "until Softmax turned it into a NaN/∞" in skip["description"], skip["description"]
