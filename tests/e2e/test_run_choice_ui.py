"""End-to-end: a logdir of several runs opens on the run it settles on from its first paint (issue #30). The runs'
summaries (which run's NaN came first) arrive a second or two after the first `runs` answer; the dashboard used to
open the default of that moment (the alphabetically first, clean run), then switch to the NaN run: until then the
user saw another run's data. Now the panels say "Choosing the run to open…" until the choice is known."""

from __future__ import annotations

import os
import shutil

import dumps
from e2e_page import assert_no_console_errors, by_testid, open_dashboard, wait_text

from harness.tensorboard_process import TensorBoardProcess

# Runs in every frame from its start: in the dashboard's iframe, records at every frame what the run picker names
# and what the root-cause card and the alerts panel say, so the test sees every state that was painted.
RECORD_PAINTS = """
if (location.href.includes('plugin_entry')) {
  window.__paints = [];
  const look = () => {
    const picker = document.querySelector('[data-testid=run-picker]');
    const card = document.querySelector('[data-testid=root-cause]');
    const alerts = document.querySelector('[data-testid=panel-alerts-status]');
    const paint = [
      picker && picker.selectedIndex >= 0 ? picker.value : '',
      card ? card.textContent.slice(0, 60) : '',
      alerts && !alerts.hidden ? alerts.textContent : '',
    ].join(' | ');
    if (window.__paints.at(-1) !== paint) window.__paints.push(paint);
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}
"""


def test_first_paint_shows_the_run_it_settles_on(page, demo_dump, tmp_path):
    logdir = str(tmp_path / "logdir")
    shutil.copytree(dumps.make_dump("clean_mlp"), os.path.join(logdir, "a_clean"))
    # more runs than the indexer reads at once: some summaries come after the first `runs` answer
    for name in ("b_demo", "c_demo", "d_demo", "e_demo", "f_demo", "g_demo"):
        shutil.copytree(demo_dump, os.path.join(logdir, name))
    page.add_init_script(RECORD_PAINTS)
    with TensorBoardProcess(logdir) as tb:
        frame = open_dashboard(page, tb)
        # Ready means the chosen run: no wait for a later switch.
        assert by_testid(frame, "run-picker").input_value() == "b_demo"
        wait_text(by_testid(frame, "root-cause"), r"Root cause")
        paints = frame.evaluate("window.__paints")
        assert paints, "no paint was recorded"
        # Never the clean run's picker entry nor its "no non-finite" card, before or after the choice.
        assert not [p for p in paints if p.startswith("a_clean") or "No non-finite" in p], paints
        assert all(p.startswith(("b_demo", " |")) for p in paints), paints
        assert_no_console_errors(page)
