"""Reading a decoded debug value (wire.ts `TensorHealth`): is it non-finite, and one sentence about it.

Every debug mode records something different, so each sentence says what the mode cannot know rather than guessing
(CURT_HEALTH only knows "any NaN/∞", CONCISE_HEALTH knows counts of NaN/∞ but not zeros or signs, SHAPE and
NO_TENSOR record no values at all).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Modes whose records say whether a tensor is finite.
FINITENESS_MODES = frozenset({"CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "FULL_NUMERICS", "FULL_TENSOR"})
# Modes whose records also say how many zeros / negatives there were: what explains a log, a sqrt or a division.
VALUE_MODES = frozenset({"FULL_HEALTH", "FULL_TENSOR"})


def is_nonfinite(health: Mapping[str, Any] | None) -> bool | None:
    """True / False, or None where the record cannot tell (SHAPE, NO_TENSOR, an empty or unknown record)."""
    if not health:
        return None
    mode = health.get("mode")
    if mode == "CURT_HEALTH":
        return bool(health.get("any_inf_or_nan"))
    if mode in ("CONCISE_HEALTH", "FULL_HEALTH", "FULL_TENSOR"):
        counts = [health.get(k) for k in ("neg_inf", "pos_inf", "nan")]
        if all(c is None for c in counts):  # FULL_TENSOR of a non-numeric dtype: it cannot hold NaN or ∞
            return False if mode == "FULL_TENSOR" else None
        return any((c or 0) > 0 for c in counts)
    return None


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _nonfinite_parts(h: Mapping[str, Any]) -> list[str]:
    parts = []
    if h.get("nan"):
        parts.append(f"{int(h['nan']):,} NaN")
    if h.get("neg_inf"):
        parts.append(f"{int(h['neg_inf']):,} −∞")
    if h.get("pos_inf"):
        parts.append(f"{int(h['pos_inf']):,} +∞")
    return parts


def _fmt(x: Any) -> str:
    if isinstance(x, str):  # a non-finite Num already spelled for the wire
        return x
    return f"{float(x):.6g}"


def describe(health: Mapping[str, Any] | None) -> str:
    """What a tensor's record says, e.g. "finite; 1 zero among 1,280 elements" (no tensor name)."""
    if not health:
        return "no record"
    mode = health.get("mode")
    if mode in ("FULL_HEALTH", "FULL_TENSOR"):
        size = health.get("size")
        among = f" among {_plural(int(size), 'element')}" if size is not None else ""
        if health.get("nan") is None and mode == "FULL_TENSOR":
            return f"non-numeric {health.get('dtype', '?')} tensor{among}"
        bad = _nonfinite_parts(health)
        if bad:
            return "already non-finite: " + ", ".join(bad) + among
        facts = []
        if health.get("zero"):
            facts.append(_plural(int(health["zero"]), "zero"))
        if health.get("neg"):
            facts.append(f"{int(health['neg']):,} negative")
        text = "finite; " + (", ".join(facts) if facts else "no zero or negative element") + among
        if mode == "FULL_TENSOR" and health.get("min") is not None:
            text += f" (min {_fmt(health['min'])}, max {_fmt(health['max'])})"
        return text
    if mode == "CONCISE_HEALTH":
        among = f" among {_plural(int(health.get('size') or 0), 'element')}"
        bad = _nonfinite_parts(health)
        if bad:
            return "already non-finite: " + ", ".join(bad) + among
        return f"finite{among}; CONCISE_HEALTH records no zeros or signs, so which values caused it cannot be known"
    if mode == "CURT_HEALTH":
        if health.get("any_inf_or_nan"):
            return "already non-finite (CURT_HEALTH records no counts)"
        return "no NaN or ∞; CURT_HEALTH records nothing else, so its values (zeros, signs, size) cannot be known"
    if mode == "SHAPE":
        shape = "×".join(str(d) for d in health.get("shape", []))
        return f"{health.get('dtype', '?')} [{shape}]; SHAPE mode records no values, so its health cannot be known"
    if mode == "NO_TENSOR":
        return "computed; NO_TENSOR mode records no values, so its health cannot be known"
    if mode == "EMPTY":
        return "not instrumented (not a floating-point tensor)"
    return f"unreadable record ({health.get('reason', 'unknown')})"


def values_known(health: Mapping[str, Any] | None) -> bool:
    """Whether the record says enough about the values to explain a NaN (counts of zeros and negatives)."""
    return health is not None and health.get("mode") in VALUE_MODES and health.get("nan") is not None


def describe_output(health: Mapping[str, Any] | None) -> str:
    """The non-finite part of a producer's output, e.g. "1,280 −∞ among 1,280 elements"."""
    if not health:
        return "non-finite"
    mode = health.get("mode")
    if mode == "CURT_HEALTH":
        return "NaN or ∞ (CURT_HEALTH records no counts)"
    parts = _nonfinite_parts(health)
    size = health.get("size")
    among = f" among {_plural(int(size), 'element')}" if size is not None else ""
    return (", ".join(parts) if parts else "non-finite") + among
