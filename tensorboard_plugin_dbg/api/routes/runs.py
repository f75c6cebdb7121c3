"""The run list: every run under the logdir with its counts, indexing status and notices."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import run_verdict
from tensorboard_plugin_dbg.api.params import Params
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import Catalog
from tensorboard_plugin_dbg.reader import storage
from tensorboard_plugin_dbg.wire import types as wire


def runs(catalog: Catalog, p: Params) -> wire.RunsResponse:
    # Each run's summary comes from its cached root cause only (run_verdict.summary): this route is polled.
    runs: list[wire.RunInfo] = [{**r.info(), "summary": run_verdict.summary(r)} for r in catalog.runs()]
    answer: wire.RunsResponse = {"logdir": catalog.logdir, "runs": runs, "notices": catalog.notices()}
    cost = storage.cost()  # the status bar's "remote: N requests · M MiB", once a remote logdir was read
    if cost is not None:
        answer["remote_cost"] = cost
    return answer


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec("runs", "Every run under the logdir with its counts and indexing status.", (), runs, "RunsResponse"),
)
