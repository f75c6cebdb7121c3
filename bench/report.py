"""The side-by-side markdown table: one row per figure, ours vs the reference, ratio, target and pass/fail."""

from __future__ import annotations

import statistics
from collections.abc import Callable


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "median": statistics.median(values) if values else None,
        "p95": pct(values, 0.95),
        "max": max(values) if values else None,
    }


def _fmt(v, unit: str) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if unit == "ms":
        return f"{v * 1000:.1f} ms" if v < 10 else f"{v:.1f} s"
    if unit == "s":
        return f"{v:.2f} s"
    if unit == "MiB":
        return f"{v / 2**20:,.0f} MiB"
    if unit == "B":
        return f"{v:,.0f} B"
    if unit == "/s":
        return f"{v / 1e6:.2f} M/s" if v >= 1e5 else f"{v:,.0f}/s"
    if unit == "fps":
        return f"{v:.1f} fps"
    if unit == "int":
        return f"{v:,}"
    return f"{v}"


class Table:
    """Rows of (metric, ours, reference, ratio, target, verdict)."""

    def __init__(self, ours_label: str, ref_label: str):
        self.head = ["metric", ours_label, ref_label, "ratio", "target", "pass"]
        self.rows: list[list[str]] = []
        self.failures: list[str] = []

    def add(
        self,
        metric: str,
        ours,
        ref,
        unit: str,
        lower_is_better: bool = True,
        target: str = "",
        check: Callable[[], bool | None] | None = None,
    ) -> None:
        ratio = "—"
        if isinstance(ours, (int, float)) and isinstance(ref, (int, float)) and ours > 0 and ref > 0:
            r = ref / ours if lower_is_better else ours / ref
            ratio = f"{r:.1f}× {'better' if r >= 1 else 'worse'}"
        verdict = ""
        if target:
            try:
                ok = check() if check else None
            except (TypeError, ZeroDivisionError):
                ok = None
            verdict = "n/a" if ok is None else ("PASS" if ok else "FAIL")
            if ok is False:
                self.failures.append(metric)
        self.rows.append([metric, _fmt(ours, unit), _fmt(ref, unit), ratio, target, verdict])

    def note(self, metric: str, ours: str, ref: str) -> None:
        self.rows.append([metric, ours, ref, "", "", ""])

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.head) + " |", "|" + "---|" * len(self.head)]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in self.rows]
        return "\n".join(lines)
