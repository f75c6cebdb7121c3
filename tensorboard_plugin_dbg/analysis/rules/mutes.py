"""Mutes: alerts the user dismissed, with a reason. They are request parameters (the server keeps nothing): the
`mutes` parameter is a JSON array of objects, `report --mute` takes the same objects or `key=value,...` text.

A mute matches an alert when every field it gives matches (AND); an alert is hidden when any mute matches (OR):
- `rule`: an alert type (rules/config.py ALERT_TYPES), exact;
- `op_type`: exact (an eager execution's op type too);
- `op_name`: a glob over the whole op name (`*`, `?`, `[...]`, case-sensitive), or a regular expression when it
  starts with `re:` (searched anywhere in the name: `re:^dense_\\d+/`); eager executions have no op name, so a mute
  with `op_name` never hides them. Mutes come from others (a permalink, a request): `re:` patterns run on RE2
  (google-re2: linear time, no backreferences or lookarounds — those are refused in words), never on Python's
  backtracking `re`, where one pattern like `^(.|.)*!` held the GIL and froze every route of TensorBoard;
- `graph_id`: exact;
- `reason`: free text shown in the UI and the report (not matched).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import re2

from tensorboard_plugin_dbg.analysis.rules.config import ALERT_TYPES, NAN_INF
from tensorboard_plugin_dbg.analysis.rules.findings import kind_table
from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.wire import types as wire

MAX_MUTES = 50
MAX_PATTERN = 500
FIELDS = ("rule", "op_type", "op_name", "graph_id", "reason")


class MuteError(ValueError):
    """A mute that cannot be used (the API answers 400 with its message)."""


@dataclasses.dataclass(frozen=True)
class Mute:
    rule: str | None = None
    op_type: str | None = None
    op_name: str | None = None
    graph_id: str | None = None
    reason: str = ""
    # the compiled op_name pattern (set once in __post_init__; not part of equality or the cache key)
    _name_re: Any = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (self.rule or self.op_type or self.op_name or self.graph_id):
            raise MuteError("a mute needs at least one of rule, op_type, op_name, graph_id")
        if self.rule is not None and self.rule not in ALERT_TYPES:
            raise MuteError(f"mute rule must be one of {', '.join(ALERT_TYPES)}; got {self.rule[:40]!r}")
        if self.op_name is not None and len(self.op_name) > MAX_PATTERN:
            raise MuteError(f"mute op_name pattern is longer than {MAX_PATTERN} characters")
        object.__setattr__(self, "_name_re", _compile(self.op_name))

    def matches_op(self, op_type: str | None, op_name: str | None, graph_id: str | None) -> bool:
        """Whether the op fields match (the rule is checked by the caller)."""
        if self.op_type is not None and op_type != self.op_type:
            return False
        if self.graph_id is not None and graph_id != self.graph_id:
            return False
        name_re = self._name_re
        return name_re is None or (op_name is not None and name_re.search(op_name) is not None)

    def matches_rule(self, alert_type: str) -> bool:
        return self.rule is None or self.rule == alert_type

    def as_dict(self) -> dict[str, str | None]:  # the report's --json echo of its mutes
        return {f: getattr(self, f) for f in FIELDS}


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused pattern is the caller's MuteError, not a line on stderr


def _compile(pattern: str | None) -> Any:
    """The op_name matcher (a `search(name)` object): RE2 for `re:`, fnmatch's translation for a glob (linear by
    construction: no nested quantifiers)."""
    if pattern is None:
        return None
    if pattern.startswith("re:"):
        try:
            return re2.compile(pattern[3:], _RE2_OPTIONS)
        except re2.error as e:
            why = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
            raise MuteError(
                f"mute op_name regular expression cannot be used ({why}): `re:` runs on RE2, linear time, without "
                "backreferences or lookarounds"
            ) from None
    return re.compile(fnmatch.translate(pattern))  # fullmatch semantics: translate anchors with \Z


def from_objects(items: Any) -> tuple[Mute, ...]:
    """Mutes from decoded JSON (a list of objects with FIELDS as string values)."""
    if not isinstance(items, list):
        raise MuteError("mutes must be a JSON array of objects")
    if len(items) > MAX_MUTES:
        raise MuteError(f"at most {MAX_MUTES} mutes; got {len(items)}")
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise MuteError("each mute must be a JSON object")
        unknown = [k for k in item if k not in FIELDS]
        if unknown:
            raise MuteError(f"unknown mute field {str(unknown[0])[:40]!r}; fields: {', '.join(FIELDS)}")
        if any(v is not None and not isinstance(v, str) for v in item.values()):
            raise MuteError("mute fields must be strings")
        values = {k: (v or None) for k, v in item.items() if k != "reason"}
        out.append(Mute(**values, reason=str(item.get("reason") or "")))
    return tuple(out)


def parse_json(raw: str) -> tuple[Mute, ...]:
    try:
        items = json.loads(raw)
    except (ValueError, RecursionError):
        raise MuteError("mutes must be a JSON array of objects (it does not parse as JSON)") from None
    return from_objects(items)


def parse_text(text: str) -> Mute:
    """One mute from `report --mute`: a JSON object, or `key=value,key=value` (reason last: it may hold commas)."""
    text = text.strip()
    if text.startswith("{"):
        return parse_json("[" + text + "]")[0]
    values: dict[str, str] = {}
    rest = text
    while rest:
        key, eq, tail = rest.partition("=")
        key = key.strip()
        if not eq or key not in FIELDS:
            raise MuteError(f"--mute takes key=value pairs with keys {', '.join(FIELDS)}; got {text[:60]!r}")
        if key == "reason":
            values[key], rest = tail, ""
        else:
            value, _, rest = tail.partition(",")
            values[key] = value.strip()
    return from_objects([values])[0]


def key(mutes: Sequence[Mute]) -> tuple[tuple[str | None, ...], ...]:
    """A cache key: what the mutes hide (reasons excluded)."""
    return tuple((m.rule, m.op_type, m.op_name, m.graph_id) for m in mutes)


# ------------------------------------------------------------------------------------ what the mutes hide


def nan_masks(run: RunQueries, mutes: Sequence[Mute]) -> tuple[np.ndarray, np.ndarray]:
    """(bool[mutes, trace kinds], bool[mutes, execution op type codes]): which NaN/∞ alerts each mute hides, by
    the alert's trace kind or execution op type. Python runs per kind and per op type, never per alert."""
    graphs, names, types = kind_table(run)[1:]
    exec_types = list(run.exec_op_types)
    by_kind = np.zeros((len(mutes), len(names)), bool)
    by_exec = np.zeros((len(mutes), len(exec_types)), bool)
    for m, mute in enumerate(mutes):
        if not mute.matches_rule(NAN_INF):
            continue
        by_kind[m] = [mute.matches_op(t, n, g) for g, n, t in zip(graphs, names, types)]
        by_exec[m] = [mute.matches_op(t, None, None) for t in exec_types] if mute.graph_id is None else False
    return by_kind, by_exec


def alert_hidden(
    src: np.ndarray,
    rows: np.ndarray,
    trace_kind: np.ndarray,
    exec_type: np.ndarray,
    masks: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """bool[mutes, alerts]: which mute hides each alert (source 0 execution / 1 trace, row), vectorized."""
    by_kind, by_exec = masks
    out = np.zeros((by_kind.shape[0], len(rows)), bool)
    t, e = src == 1, src == 0
    if by_kind.shape[1] and t.any():
        out[:, t] = by_kind[:, trace_kind[rows[t]]]
    if by_exec.shape[1] and e.any():
        out[:, e] = by_exec[:, exec_type[rows[e]]]
    return out


def finding_hidden(finding: wire.AlertBody, mutes: Sequence[Mute]) -> list[int]:
    """Indices of the mutes hiding a rule finding."""
    return [
        m
        for m, mute in enumerate(mutes)
        if mute.matches_rule(finding["type"])
        and mute.matches_op(finding["op_type"], finding["op_name"], finding["graph_id"])
    ]
