"""What several route groups share: the run, page and list-position parameters, the mutes, and how a handler
shapes a page (`clamped`). Each handler adds the `run` name itself, first as wire.ts lists it
(`{"run": run.name, **answer}`): the index's answer (a wire type's `Body`) does not carry it."""

from __future__ import annotations

from typing import TypeVar

from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
from tensorboard_plugin_dbg.api.params import PAGE_CAP, Page, Param, clamp_page

RUN = Param("run", "str", "Run name, as listed by `runs` (RunInfo.name).", required=True)
BEGIN = Param("begin", "int", "First row of the page (0-based).", required=True)
END = Param("end", "int", f"One past the last row; end - begin <= {PAGE_CAP}; clamped to the total.", required=True)
INDEX = Param("index", "int", "0-based position in the list (>= 0; -1 is an error, not the last item).", required=True)
MUTES = Param(
    "mutes",
    "mutes",
    "Alerts to hide: a JSON array of objects {rule, op_type, op_name, graph_id, reason}: all given fields must "
    "match (op_name: a glob over the whole name, or `re:` + a regular expression searched in it); any mute hides. "
    f"At most {mute_rules.MAX_MUTES}. Applied to the list, the totals and the root cause.",
)


P = TypeVar("P", bound=Page)


def clamped(answer: P) -> P:
    """A page answer with its bounds clamped to the total (params.clamp_page)."""
    clamp_page(answer, int(answer["total"]))
    return answer
