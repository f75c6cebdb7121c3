"""Peak memory of one capsule card (issue #37 item 4, #40 item 3) and the time of Tensor Values' scroll over a
compressed member (#37 item 5), each in a fresh process so the peak (VmHWM) is the card's own.

    .venv/bin/python bench/capsule_cards.py [--samples 1000000] [--compressed-mib 24] [--windows 5]

Prints, for a capsule whose batch holds SAMPLES samples (x: (n, 1) float32 with one NaN, y: (n,) int8): VmHWM after
the imports, after the card, and the difference; then the seconds of each `capsule_array` window over a deflated
weights member of COMPRESSED_MIB MiB (a capsule someone else wrote: NanCapsule never compresses)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np


def _hwm_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def _write(folder: str, samples: int, compressed_mib: int) -> None:
    from tensorboard_plugin_dbg.capsule import writer

    x = np.ones((samples, 1), np.float32)
    x[samples * 7 // 9, 0] = np.nan
    manifest = {"step": 1, "trigger": {"kind": "loss", "name": "loss"}, "batch_structure": {"kind": "array"}}
    manifest["batch_structure"]["name"] = "x"
    weights = {"w": np.linspace(0, 1, compressed_mib << 18, dtype=np.float32)}
    groups = {"batch": {"x": x, "y": np.zeros(samples, np.int8)}, "weights": weights, "optimizer": {}, "rng": {}}
    capsule = writer.write_capsule(folder, "cap", manifest, groups)
    path = os.path.join(capsule, "weights.npz")  # the weights deflated, as a capsule from someone else may be
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    with open(os.path.join(capsule, "manifest.json")) as f:
        m = json.load(f)
    m["files"]["weights"]["bytes"] = os.path.getsize(path)
    with open(os.path.join(capsule, "manifest.json"), "w") as f:
        json.dump(m, f)


def _card(folder: str) -> None:
    from tensorboard_plugin_dbg.analysis import capsule_summary

    before = _hwm_kib()
    card = capsule_summary.summary(os.path.join(folder, "cap"), folder)
    after = _hwm_kib()
    assert card["status"] == "ok", card
    print(
        json.dumps(
            {"hwm_before_mib": before / 1024, "hwm_after_mib": after / 1024, "card_mib": (after - before) / 1024}
        )
    )


def _scroll(folder: str, windows: int) -> None:
    from tensorboard_plugin_dbg.analysis import capsule_array

    times = []
    for i in range(windows):
        t = time.perf_counter()
        capsule_array.capsule_array(folder, "cap", "weights", "w", f"{i * 1000}:{i * 1000 + 200}", 32)
        times.append(time.perf_counter() - t)
    print(json.dumps({"window_s": [round(s, 3) for s in times], "hwm_mib": _hwm_kib() / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--compressed-mib", type=int, default=24)
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--child", choices=["card", "scroll"])
    parser.add_argument("--folder")
    args = parser.parse_args()
    if args.child == "card":
        return _card(args.folder)
    if args.child == "scroll":
        return _scroll(args.folder, args.windows)
    folder = tempfile.mkdtemp(prefix="bench-capsule-cards-")
    try:
        _write(folder, args.samples, args.compressed_mib)
        for child in ("card", "scroll"):
            command = [sys.executable, __file__, "--child", child, "--folder", folder, "--windows", str(args.windows)]
            print(child, subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip())
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
