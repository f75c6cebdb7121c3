"""Devices and hosts of a run: what ran where (the `devices` route, Graph Execution's device and host facets), and
the trace rows of one host for the `graph_executions` filter.

A trace's device is part of its kind (trace_queries.py), so its counts come per kind; its host is that of the file
holding its record (a multi-host run has one file set per host), read from the row's `loc` (file code << LOC_SHIFT).
An eager execution's device is its first output's (`execs["device"]`, an id into `debugged_device`) and its host
its file's. Both tables are built in blocks of rows (a few MB of temporaries at 10 M traces) once per index version.
"""

from __future__ import annotations

import numpy as np

from ..wire import types as wire
from .columns import LOC_SHIFT
from .state import RunState

_BLOCK = 1 << 16  # rows per block of the whole-run passes (~2 MB of temporaries: a fixed cost, not per trace)


class DeviceQueries:
    def __init__(self, run: RunState):
        self.run = run

    def summary(self) -> wire.DevicesResponseBody:
        """wire.ts DevicesResponse minus `run`: one entry per (device, host) that ran a traced op or an eager
        execution, with how many of each, sorted by device then host; and every host of the run."""
        run = self.run
        lengths = run.lengths()
        key = (lengths.traces, lengths.execs, len(run.kinds), len(run.files), len(run.devices))
        return run.derived.get("devices", key, lambda: self._summary(lengths.traces, lengths.execs))

    def _summary(self, n_traces: int, n_execs: int) -> wire.DevicesResponseBody:
        run = self.run
        files = len(run.files)
        counts: dict[tuple[str | None, str], list[int]] = {}
        kind_names = [k[4] or None for k in list(run.kinds.kinds)]
        kinds, locs = run.traces.view("kind", n_traces), run.traces.view("loc", n_traces)
        by_kind_file = np.zeros(len(kind_names) * files, np.int64)
        for b in range(0, n_traces, _BLOCK):
            keys = kinds[b : b + _BLOCK].astype(np.int64) * files + (locs[b : b + _BLOCK] >> LOC_SHIFT)
            by_kind_file += np.bincount(keys, minlength=len(by_kind_file))
        for code in np.flatnonzero(by_kind_file).tolist():
            entry = counts.setdefault((kind_names[code // files], run.files[code % files].host), [0, 0])
            entry[0] += int(by_kind_file[code])
        _n, execs = run.execs.snapshot()
        for b in range(0, n_execs, _BLOCK):  # device ids are TF's small sequential ids; -1: no output
            e = min(n_execs, b + _BLOCK)
            keys = (execs["device"][b:e].astype(np.int64) + 1) * files + execs["file"][b:e]
            for key, count in zip(*(a.tolist() for a in np.unique(keys, return_counts=True))):
                name = run.devices.get(key // files - 1)
                entry = counts.setdefault((name, run.files[key % files].host), [0, 0])
                entry[1] += count
        devices: list[wire.DeviceCount] = [
            {"device_name": d, "host": h, "graph_executions": g, "executions": e}
            for (d, h), (g, e) in sorted(counts.items(), key=lambda item: (item[0][0] is None, item[0]))
        ]
        return {"devices": devices, "hosts": run.hosts(), "host_facts": self._host_facts(by_kind_file, n_traces)}

    def _host_facts(self, by_kind_file: np.ndarray, n_traces: int) -> list[wire.HostFacts]:
        """Per host: its traces and its earliest non-finite trace by wall time (from the non-finite side table:
        a few rows, not a whole-run pass), and how long after the run's first one that came."""
        run = self.run
        files = len(run.files)
        per_file = by_kind_file.reshape(-1, files).sum(axis=0) if files else np.zeros(0, np.int64)
        hosts = run.hosts()
        codes = {host: [c for c, f in enumerate(run.files) if f.host == host] for host in hosts}
        best = {host: (np.inf, -1) for host in hosts}  # (wall time, row) of each host's earliest non-finite trace
        nf_all = run.trace_nf.view("row", run.lengths().trace_nf)
        locs, walls = run.traces.view("loc", n_traces), run.traces.view("wall_time", n_traces)
        for b in range(0, len(nf_all), _BLOCK):  # in blocks: half a 1 M-trace run's rows are non-finite
            nf_rows = nf_all[b : b + _BLOCK].astype(np.int64)
            nf_rows = nf_rows[nf_rows < n_traces]
            nf_codes, nf_wall = locs[nf_rows] >> LOC_SHIFT, walls[nf_rows]
            for host in hosts:
                mine = np.flatnonzero(np.isin(nf_codes, codes[host]))
                if len(mine):
                    k = int(mine[np.argmin(nf_wall[mine])])
                    if nf_wall[k] < best[host][0]:  # strictly: the first of equal times stays
                        best[host] = (float(nf_wall[k]), int(nf_rows[k]))
        facts: list[wire.HostFacts] = []
        for host in hosts:
            wall, row = best[host]
            first: wire.HostFirstNonfinite | None = None
            if row >= 0:
                first = {"index": row, "wall_time": wall, "after_first_s": 0.0}
            facts.append({"host": host, "graph_executions": int(per_file[codes[host]].sum()), "first_nonfinite": first})
        earliest = min((f["first_nonfinite"]["wall_time"] for f in facts if f["first_nonfinite"]), default=0.0)
        for f in facts:
            if f["first_nonfinite"]:
                f["first_nonfinite"]["after_first_s"] = f["first_nonfinite"]["wall_time"] - earliest
        return facts

    def kind_devices(self) -> frozenset[str]:
        """The devices of the run's trace kinds ("" for a trace recorded without one); kinds only grow, so their
        count is the key. Cheap, and built outside the derived lock like `debug_modes` (two threads may both)."""
        run = self.run
        key = len(run.kinds)
        devices = run.derived.peek("kind_devices", key)
        if devices is None:
            devices = frozenset(k[4] for k in list(run.kinds.kinds))
            run.derived.put("kind_devices", key, devices)
        return devices

    def known(self, device: str | None, host: str | None) -> bool:
        """Whether a trace may match `device` and `host` (None: any): unknown names match nothing, and need no
        whole-run pass (nor a cache entry per name a client makes up)."""
        if device is not None and device not in self.kind_devices():
            return False
        return host is None or host in self.run.hosts()

    def every_trace_on(self, device: str) -> bool:
        """Every trace kind is on `device` (a one-device run): its filter keeps every row, and costs nothing."""
        return self.kind_devices() == {device}

    def rows_on_host(self, rows: np.ndarray | None, host: str, n: int) -> np.ndarray | None:
        """The rows of `rows` (None: every row below `n`) whose record is in a file of `host`; None when that is
        every row (a one-host run: no pass at all)."""
        run = self.run
        traces = [c for c, f in enumerate(list(run.files)) if f.suffix == "graph_execution_traces"]
        codes = np.array([c for c in traces if run.files[c].host == host], np.int64)
        if len(codes) == len(traces):
            return rows
        if not len(codes):
            return np.zeros(0, np.int64)
        loc = run.traces.view("loc", n)
        if rows is not None:
            return rows[np.isin(loc[rows] >> LOC_SHIFT, codes)]
        parts = [
            np.flatnonzero(np.isin(loc[b : b + _BLOCK] >> LOC_SHIFT, codes)) + b for b in range(0, len(loc), _BLOCK)
        ]
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
