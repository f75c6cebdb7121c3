"""Query parameters: declared once per route (`Param`), parsed and validated here and nowhere else.

Rules (also served in the OpenAPI document, see `RULES`):
- Integers are plain ASCII decimal (`12`; not `+12`, ` 12`, `1_2`, `1.0`, `0x1`, Arabic-Indic digits), within the
  declared bounds. `index=-1` is a 400, never "the last item".
- An empty value (`op_type=`) is the same as leaving the parameter out, so a client can always send its filters.
- A parameter the route does not declare, or one given twice, is a 400: a typo such as `only_nonfinte=true` must not
  silently return unfiltered rows.
- Paging: `begin` <= `end`, and `end - begin` <= PAGE_CAP (1,000) or a 400 `page_too_large` naming the cap.
  An `end` (or `begin`) beyond the total is clamped to the total by the route, so a page past the end is empty.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from tensorboard_plugin_dbg.analysis.rules import mutes as mute_rules
from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.wire.types import ErrorCode

PAGE_CAP = 1000
# Largest integer a browser holds exactly (2**53 - 1): bigger ones could not have come from our client.
MAX_INT = 9007199254740991
MAX_STRING = 4096
_INT_RE = re.compile(r"-?[0-9]{1,20}")
_FLOAT_RE = re.compile(r"[0-9]{1,20}(\.[0-9]{1,20})?([eE]-?[0-9]{1,3})?")
_TRUE = ("true", "1")
_FALSE = ("false", "0")

RULES = (
    "Integers are plain ASCII decimal within the stated bounds (index=-1 is an error, not the last item). "
    "An empty value is the same as an absent parameter. Unknown or repeated parameters are rejected (400). "
    f"Pages: begin <= end and end - begin <= {PAGE_CAP} (else 400 page_too_large); "
    "begin and end beyond the total are clamped to the total."
)


@dataclasses.dataclass(frozen=True)
class Param:
    """One query parameter of one route.

    kind: 'int' | 'float' | 'str' | 'bool' | 'enum' | 'id_list' (comma-separated, non-empty items) | 'mutes' (a
    JSON array of mute objects: analysis/rules/mutes.py). For 'id_list', `maximum` caps the number of items; for
    'float' (plain decimal or scientific, `1e-7`, non-negative), `minimum`/`maximum` bound it. A 'str' with a
    `pattern` (a regular expression, anchored, served in the OpenAPI document) is a 400 when it does not match:
    `shape` says in words what it must look like.
    """

    name: str
    kind: str
    description: str
    required: bool = False
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    shape: str = ""

    def parse(self, raw: str) -> Any:
        """The typed value of a non-empty raw string, or an ApiError naming this parameter."""
        if self.kind == "int":
            return self._parse_int(raw)
        if self.kind == "bool":
            low = raw.lower()
            if low in _TRUE or low in _FALSE:
                return low in _TRUE
            raise errors.bad_parameter(f"{self.name} must be true or false (or 1 or 0), got {_show(raw)}")
        if self.kind == "enum":
            if raw in self.choices:
                return raw
            raise errors.bad_parameter(f"{self.name} must be one of {', '.join(self.choices)}; got {_show(raw)}")
        if len(raw) > MAX_STRING:
            raise errors.bad_parameter(f"{self.name} is longer than {MAX_STRING} characters")
        if self.kind == "float":
            return self._parse_float(raw)
        if self.kind == "mutes":
            try:
                return mute_rules.parse_json(raw)
            except mute_rules.MuteError as e:
                raise errors.bad_parameter(f"{self.name}: {e}") from None
        if self.kind == "id_list":
            items = raw.split(",")
            if any(not item for item in items):
                raise errors.bad_parameter(f"{self.name} must be a comma-separated list of non-empty ids")
            if self.maximum is not None and len(items) > self.maximum:
                raise errors.ApiError(
                    errors.PAGE_TOO_LARGE, f"{self.name} lists {len(items)} ids; the cap is {self.maximum} per request"
                )
            return items
        if self.pattern is not None and not re.fullmatch(self.pattern, raw):
            raise errors.bad_parameter(f"{self.name} must be {self.shape}, got {_show(raw)}")
        return raw

    def _parse_float(self, raw: str) -> float:
        if not _FLOAT_RE.fullmatch(raw):
            raise errors.bad_parameter(
                f"{self.name} must be a non-negative number such as 10 or 1e-7, got {_show(raw)}"
            )
        value = float(raw)
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise errors.bad_parameter(f"{self.name} must be within [{self.minimum}, {self.maximum}], got {raw}")
        return value

    def _parse_int(self, raw: str) -> int:
        if not _INT_RE.fullmatch(raw):
            raise errors.bad_parameter(f"{self.name} must be an integer, got {_show(raw)}")
        value = int(raw)
        if value > MAX_INT:
            raise errors.bad_parameter(f"{self.name} must be <= {MAX_INT}, got {raw}")
        low = 0 if self.minimum is None else self.minimum
        high = MAX_INT if self.maximum is None else self.maximum
        if value < low:
            raise errors.bad_parameter(f"{self.name} must be >= {low}, got {value}")
        if value > high:
            # A cap on how much one response holds is "page too large"; other bounds are plain bad values.
            code: ErrorCode = errors.PAGE_TOO_LARGE if self.name == "max_elements" else errors.BAD_PARAMETER
            raise errors.ApiError(code, f"{self.name} must be <= {high}, got {value}")
        return value


def _show(raw: str) -> str:
    return repr(raw if len(raw) <= 40 else raw[:40] + "...")


# Parsed parameters by name: each value's type is its Param's kind (int, float, bool, str, enum, id list, mutes) or
# None when absent; a handler reads the names its route declares.
Params = dict[str, Any]


def parse_params(params: Sequence[Param], args: Mapping[str, Sequence[str]], paged: bool = False) -> Params:
    """Typed values for `params` from the query `args` (name -> every value given), validated as RULES say.

    Returns every declared parameter, absent optional ones set to their default.
    """
    declared = {p.name: p for p in params}
    for name, values in args.items():
        if name not in declared:
            allowed = ", ".join(declared) or "no parameters"
            raise errors.bad_parameter(f"unknown parameter {_show(name)}; this route takes {allowed}")
        if len(values) > 1:
            raise errors.bad_parameter(f"{name} is given {len(values)} times; give it once")
    out: Params = {}
    for p in params:
        raw = (args.get(p.name) or [""])[0]
        if raw == "":
            if p.required:
                raise errors.ApiError(errors.MISSING_PARAMETER, f"missing required parameter {p.name}")
            out[p.name] = p.default
        else:
            out[p.name] = p.parse(raw)
    if paged:
        check_page(out["begin"], out["end"])
    _check_range(out, "begin_line", "end_line")
    return out


def check_page(begin: int, end: int) -> None:
    if begin > end:
        raise errors.bad_parameter(f"begin ({begin}) must be <= end ({end})")
    if end - begin > PAGE_CAP:
        raise errors.ApiError(
            errors.PAGE_TOO_LARGE, f"a page holds at most {PAGE_CAP} rows; end - begin is {end - begin}"
        )


def _check_range(values: Params, low: str, high: str) -> None:
    if values.get(low) is not None and values.get(high) is not None and values[low] > values[high]:
        raise errors.bad_parameter(f"{low} ({values[low]}) must be <= {high} ({values[high]})")


class Page(TypedDict):
    """What every page response has (wire.ts AlertsResponse, ExecutionsResponse, ...): begin, end, total."""

    begin: float
    end: float
    total: float


def clamp_page(response: Page, total: int) -> None:
    """Clamps a page response's begin/end to [0, total], whatever the index did (RULES: clamped, documented)."""
    end = min(int(response["end"]), total)
    response["end"] = end
    response["begin"] = min(int(response["begin"]), end)
