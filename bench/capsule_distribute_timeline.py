"""When each op of a MirroredStrategy `fit` step runs (#35): no debugging against NanCapsule, the critical path.

    .venv/bin/python bench/capsule_distribute_timeline.py [--steps 30] [--rounds 4] [--program mlp] [--show 40]

The model, data and strategy of bench/capsule_distribute.py (two logical CPU devices, global batch 64), no debugging
and NanCapsule in one process: for each, the step's two partition graphs (`RunMetadata`, on while the function is
instantiated: each node's device and inputs, a `_Recv` joined to the `_Send` of the same tensor on the other device),
then --rounds turns of --steps steps each, the settings in turn, under `tf.profiler.experimental` with every op traced
(host_tracer_level=3: the executor's one event an op kernel, "name:type", start and duration). Each op's start and
end are taken relative to the start of its step (the Python thread's call of the step function). Printed: each
step's own spans (start → the all-reduce's end → the last write → the last op → the return), median over the steps;
and from the ops' median times, the critical path: from the op that ends last, back through the input (data or
control, across devices through Send/Recv) that ended last, with the gap each op waited after its last input (a
long gap: no free thread on a busy host, or an input with no event). Dead ops (the capsule's untaken side) run no
kernel and have no event.

Tracing every op costs time of its own (a few µs an op on this host): read the differences between the settings and
the shape of the path, not the absolute step time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import capsule as single  # noqa: E402 - bench/capsule.py: the programs
from capsule_distribute import dataset  # noqa: E402

SETTINGS = ("none", "capsule")
STEP_CALL = "EagerLocalExecute: __inference_multi_step_on_iterator"
# (label, op type prefix) of the step's landmarks, each device's first start and last end
PHASES = (
    ("forward", "_MklNativeFusedMatMul"),
    ("all-reduce", "CollectiveReduceV2"),
    ("decision", "IsFinite"),
    ("write", "Assign"),
    ("Send", "_Send"),
    ("Recv", "_Recv"),
    ("Merge", "Merge"),
)


def worker(kind: str, steps: int, rounds: int) -> dict[str, Any]:
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras
    from tensorflow.python.eager import context  # RunMetadata: no public name

    from tensorboard_plugin_dbg.capsule import NanCapsule

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    folder = tempfile.mkdtemp(prefix="capsule-bench-timeline-")
    logdir = tempfile.mkdtemp(prefix="capsule-bench-profile-")
    results: dict[str, Any] = {}
    try:
        runs = {}
        for setting in SETTINGS:
            keras.utils.set_random_seed(0)  # the same initial weights in every setting
            with strategy.scope():
                model, shape = single.build(kind, keras)
                model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            watching = [NanCapsule(folder)] if setting == "capsule" else []
            data = dataset(shape, tf)
            context.context().enable_run_metadata()
            model.fit(data, steps_per_epoch=2, epochs=1, verbose=0, callbacks=watching)
            graph = partition_nodes(context.context().export_run_metadata())
            context.context().disable_run_metadata()
            runs[setting] = (model, watching, data)
            results[setting] = {"graph": graph, "calls": [], "steps": []}
        for _ in range(3):
            for model, watching, data in runs.values():
                model.fit(data, steps_per_epoch=20, epochs=1, verbose=0, callbacks=watching)
        options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=3, python_tracer_level=0)
        for turn in range(rounds):  # the settings in turn, the order reversed every other round
            for setting in SETTINGS if turn % 2 == 0 else SETTINGS[::-1]:
                model, watching, data = runs[setting]
                shutil.rmtree(logdir, ignore_errors=True)
                tf.profiler.experimental.start(logdir, options=options)
                model.fit(data, steps_per_epoch=steps, epochs=1, verbose=0, callbacks=watching)
                tf.profiler.experimental.stop()
                planes = [os.path.join(d, f) for d, _, fs in os.walk(logdir) for f in fs if f.endswith(".xplane.pb")]
                found = timeline(planes[0], set(results[setting]["graph"]))
                results[setting]["calls"] += found["calls"][2:]  # the first steps start the profiler's threads
                results[setting]["steps"] += found["steps"][2:]
        return results
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(logdir, ignore_errors=True)


def partition_nodes(metadata: Any) -> dict[str, dict[str, Any]]:
    """The step's partition graphs (the function with the most nodes): name -> device index, op type, inputs."""
    largest = max(metadata.function_graphs, key=lambda f: sum(len(g.node) for g in f.partition_graphs))
    nodes: dict[str, dict[str, Any]] = {}
    for g in largest.partition_graphs:
        for n in g.node:
            tensor = n.attr["tensor_name"].s.decode() if "tensor_name" in n.attr else ""
            device = int(n.device.rsplit(":", 1)[1]) if n.device else -1
            inputs = [i.lstrip("^").split(":")[0] for i in n.input]
            nodes[n.name] = {"device": device, "op": n.op, "inputs": inputs, "tensor": tensor}
    senders = {v["tensor"]: k for k, v in nodes.items() if v["op"] == "_Send"}
    for v in nodes.values():
        if v["op"] == "_Recv" and v["tensor"] in senders:
            v["inputs"].append(senders[v["tensor"]])  # the hop across devices
    return nodes


def timeline(path: str, names: set[str]) -> dict[str, Any]:
    """Per step: each op's (start, end) in µs from the step call's start; the step call's length."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2  # the profiler's own format

    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    ps = 1e-6
    calls, ops = [], []
    for line in plane.lines:
        for e in line.events:
            name = plane.event_metadata[e.metadata_id].name
            start = (line.timestamp_ns * 1000 + e.offset_ps) * ps
            if name.startswith(STEP_CALL):
                calls.append((start, start + e.duration_ps * ps))
            elif ":" in name and name.rsplit(":", 1)[0] in names:
                ops.append((start, start + e.duration_ps * ps, name.rsplit(":", 1)[0]))
    calls.sort()
    steps: list[dict[str, list[float]]] = [{} for _ in calls]
    for start, end, name in ops:
        for i, (a, b) in enumerate(calls):
            if a <= start <= b:
                steps[i].setdefault(name, [start - a, end - a])
                break
    return {"calls": [b - a for a, b in calls], "steps": steps}


def medians(result: dict[str, Any]) -> dict[str, tuple[float, float]]:
    steps = result["steps"]
    names = {n for s in steps for n in s}
    out = {}
    for n in names:
        seen = [s[n] for s in steps if n in s]
        if len(seen) >= len(steps) // 2:  # ops that run every step (not a dead side's)
            out[n] = (statistics.median(v[0] for v in seen), statistics.median(v[1] for v in seen))
    return out


def landmarks(result: dict[str, Any]) -> dict[str, float]:
    """Medians over the steps of each step's spans (µs): from the call's start to the all-reduce's end (the later
    device), from there to the last write (and to the later device's decision), to the last op, to the return."""
    graph = result["graph"]
    marks: dict[str, list[float]] = {}
    for call, step in zip(result["calls"], result["steps"]):
        ends: dict[str, float] = {"call returns": call, "last op ends": max(e for _, e in step.values())}
        for device in (0, 1):
            for label, op in (
                ("all-reduce ends", "CollectiveReduceV2"),
                ("decided", "IsFinite"),
                ("written", "Assign"),
            ):
                found = [
                    e for n, (_, e) in step.items() if graph[n]["device"] == device and graph[n]["op"].startswith(op)
                ]
                if found:
                    ends[f"{label} CPU:{device}"] = max(found)
        reduced = max(ends.pop(f"all-reduce ends CPU:{d}") for d in (0, 1))
        written = max(ends.pop(f"written CPU:{d}") for d in (0, 1))
        decided = [ends.pop(f"decided CPU:{d}") for d in (0, 1) if f"decided CPU:{d}" in ends]
        spans = {
            "start → all-reduced (the later device)": reduced,
            "all-reduced → written (the later device)": written - reduced,
        }
        if decided:
            spans["  of which: all-reduced → decided (the later device)"] = max(decided) - reduced
        spans["written → last op ends"] = ends["last op ends"] - written
        spans["last op ends → call returns"] = ends["call returns"] - ends["last op ends"]
        spans["call"] = ends["call returns"]
        for label, value in spans.items():
            marks.setdefault(label, []).append(value)
    return {label: statistics.median(values) for label, values in marks.items()}


def critical_path(graph: dict[str, dict[str, Any]], times: dict[str, tuple[float, float]]) -> list[tuple[str, float]]:
    """From the op that ends last, back through the timed input that ended last ((name, wait before it started))."""

    def timed_inputs(name: str, seen: set[str]) -> list[str]:
        found = []
        for i in graph[name]["inputs"]:
            if i in seen or i not in graph:
                continue
            seen.add(i)
            found += [i] if i in times else timed_inputs(i, seen)
        return found

    node = max(times, key=lambda n: times[n][1])
    path = []
    while True:
        inputs = timed_inputs(node, {node})
        last = max(inputs, key=lambda n: times[n][1], default=None)
        path.append((node, times[node][0] - (times[last][1] if last else 0.0)))
        if last is None or times[last][1] > times[node][0] + 1.0:
            break
        node = last
    return path[::-1]


def report(setting: str, result: dict[str, Any], show: int) -> None:
    graph, times = result["graph"], medians(result)
    calls = result["calls"]
    last_end = max(e for _, e in times.values())
    print(
        f"\n== {setting}: step call {statistics.median(calls):.0f} µs (median of {len(calls)}), ops timed {len(times)}"
    )
    print(f"   last op ends at {last_end:.0f} µs; the call returns {statistics.median(calls) - last_end:.0f} µs later")
    for label, op in PHASES:
        for device in (0, 1):
            mine = [times[n] for n in times if graph[n]["op"].startswith(op) and graph[n]["device"] == device]
            if mine:
                first, last = min(s for s, _ in mine), max(e for _, e in mine)
                print(f"   {label:10} CPU:{device} n={len(mine):3} first starts {first:7.0f}, last ends {last:7.0f} µs")
    print("   spans (median over the steps of each step's own):")
    for label, value in landmarks(result).items():
        print(f"   {value:7.0f} µs  {label}")
    print("   critical path (start, end µs, waited after its last input):")
    path = critical_path(graph, times)
    for name, waited in path[-show:]:
        start, end = times[name]
        node = graph[name]
        print(f"   {start:7.0f} {end:7.0f} {waited:+6.0f}  CPU:{node['device']} {node['op']:22} {name[-70:]}")


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        print(json.dumps(worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=30, help="steps profiled a turn")
    p.add_argument("--rounds", type=int, default=4, help="turns of each setting, alternated")
    p.add_argument("--program", default="mlp")
    p.add_argument("--show", type=int, default=40, help="the last N ops of each critical path")
    p.add_argument("--save", help="the raw results as JSON here")
    args = p.parse_args()
    command = [sys.executable, __file__, "--worker", args.program, str(args.steps), str(args.rounds)]
    proc = subprocess.run(command, capture_output=True, text=True, env=single.env(), check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    for setting in SETTINGS:
        report(setting, results[setting], args.show)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
