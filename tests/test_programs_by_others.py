"""Programs written after others' (#38 item 10): keras-io examples (a VAE, a transformer classifier, a GAN with its
own train_step, a training loop from scratch, a time-series LSTM), on small synthetic data of the right shapes,
each with one realistic bug. The report names the line a person would change (CULPRIT) for each."""

from __future__ import annotations

import dumps
import pytest
from run_helpers import culprit_line, only_run

from tensorboard_plugin_dbg.analysis.root_cause import analyze

# program, the op type the NaN/∞ is born in (read from the graph, not a figure TF's kernels decide)
PROGRAMS = [
    ("others_vae", "Log"),  # log(0) of a saturated sigmoid in a hand-written cross-entropy
    ("others_transformer", None),  # a -inf padding mask over a fully padded row
    ("others_gan", "Log"),  # -log(D(G(z))) with D saturated at 0
    ("others_custom_loop", "RealDiv"),  # per-feature standardisation by a zero spread
]


@pytest.mark.parametrize("program,op_type", PROGRAMS, ids=[p for p, _ in PROGRAMS])
def test_the_report_names_the_line_a_person_would_change(program, op_type):
    result = analyze(only_run(dumps.make_dump(program)))
    assert result["status"] == "found", result["message"]
    p = result["producer"]
    assert p["user_frame"]["path"].endswith(f"{program}.py"), p["user_frame"]
    assert p["user_frame"]["line"] == culprit_line(program), (p["op_name"], p["user_frame"]["line"])
    if op_type is not None:
        assert p["op_type"] == op_type, p["op_name"]
