"""The whole-run analyses: the timeline minimap's alert marks, the root cause (with its report text) and the health
map. (The rules' thresholds are parameters of the alert list: lists.py.)"""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import health_map as health_map_analysis
from tensorboard_plugin_dbg.analysis import report_text, rules_report, run_verdict, timeline_marks
from tensorboard_plugin_dbg.api.params import Param, Params
from tensorboard_plugin_dbg.api.routes.shared import BEGIN, MUTES, RUN, clamped
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire


def timeline_marks_route(run: RunQueries, p: Params) -> wire.TimelineMarksResponse:
    return {"run": run.name, **timeline_marks.marks(run, p["bins"], p["mutes"] or ())}


def root_cause(run: RunQueries, p: Params) -> wire.RootCauseResponse:
    # The card's "copy as text" is the report's section for this run: one formatter (analysis/report_text.py).
    answer = run_verdict.root_cause(run, p["mutes"] or ())
    result = report_text.result_of(run, answer)
    text = rules_report.section_with_rules(run, result, p["mutes"] or ())  # as `report` says it
    return {"run": run.name, **answer, "report_text": text}


def health_map(run: RunQueries, p: Params) -> wire.HealthMapResponse:
    # a page holds at most MAX_ROWS ops (each with up to `columns` cells): clamped, as the description says
    end = min(p["end"], p["begin"] + health_map_analysis.MAX_ROWS)
    answer = health_map_analysis.health_map(
        run,
        p["begin"],
        end,
        p["columns"],
        p["step_begin"],
        p["step_end"],
        p["graph_id"],
        p["op_name"],
        p["op_contains"] or None,
    )
    return {"run": run.name, **clamped(answer)}


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "timeline_marks",
        "The timeline minimap: the run's executions in equal bins, each with its number of NaN/∞ alerts (after the "
        "mutes; a graph trace's alert counts at the tf.function call that ran it) and the alert-list index of its "
        "first one.",
        (
            RUN,
            Param(
                "bins",
                "int",
                "Most bins (fewer when the run has fewer executions).",
                default=timeline_marks.DEFAULT_BINS,
                minimum=1,
                maximum=timeline_marks.MAX_BINS,
            ),
            MUTES,
        ),
        timeline_marks_route,
        "TimelineMarksResponse",
    ),
    RouteSpec(
        "root_cause",
        "The first producer of a non-finite tensor (not hidden by a mute), its inputs and the user's line.",
        (RUN, MUTES),
        root_cause,
        "RootCauseResponse",
    ),
    RouteSpec(
        "health_map",
        "Health over time: ops (rows, NaN/∞ ones first) x steps (the k-th trace of each op), binned; per cell the "
        "non-finite count, zero fraction, shape/dtype change and the trace it stands for.",
        (
            RUN,
            BEGIN,
            Param(
                "end",
                "int",
                f"One past the last row; at most {health_map_analysis.MAX_ROWS} rows are returned (clamped).",
                required=True,
            ),
            Param(
                "columns",
                "int",
                "Most step bins.",
                default=health_map_analysis.DEFAULT_COLUMNS,
                minimum=1,
                maximum=health_map_analysis.MAX_COLUMNS,
            ),
            Param("step_begin", "int", "First step (0-based).", default=0),
            Param("step_end", "int", "One past the last step (default: the last step)."),
            Param("graph_id", "str", "With op_name: only this graph's op."),
            Param("op_name", "str", "Only this op's output slots (exact name)."),
            Param("op_contains", "str", "Only ops whose name or type holds this text (case-insensitive)."),
        ),
        health_map,
        "HealthMapResponse",
        paged=True,
    ),
)
