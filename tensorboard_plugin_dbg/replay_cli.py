"""`python -m tensorboard_plugin_dbg replay CAPSULE [--mode FULL_HEALTH|FULL_TENSOR] [--yes] [-- python train.py ARGS]`

Re-runs the user's program (by default the command line the capsule recorded, from the folder it was started in) in
replay mode: the NanCapsule in it turns tfdbg2 on, restores the capsule's weights and optimizer state, runs the
captured batch through one training step into CAPSULE/replay/ and ends the program. Then prints the verdict and the
replay's root cause as `report` prints it. Exit status: 0 reproduced, 1 not reproduced, 2 cannot replay (and why),
3 reproduced only under XLA (the step, compiled as the run ran it, triggered again; un-compiled under tfdbg2 it
stayed finite).
A MultiWorkerMirroredStrategy worker's capsule is replayed in one process: the program gets no TF_CONFIG from the
caller's environment (LEFT_OUT, said before it runs), and one it sets itself is set aside when NanCapsule is imported
(capsule/replay_mode.py `as_one_worker`); one whose own replicas stayed finite leads to the capsule of the worker that
held the non-finite replica.
No TensorFlow in this process: the program runs in a child process.

Replaying a capsule RUNS THE PROGRAM IT NAMES. A capsule from someone else (a colleague's folder, a shared bucket, a
link) is someone else's code: before anything runs, replay prints the exact command, the folder and every environment
variable it adds; a recorded command (no `--`) runs only once you confirm (--yes for scripts; with no terminal and no
--yes it exits 2 with the command printed); from the manifest only the variables a NanCapsule records on purpose are
applied (TF_DETERMINISTIC_OPS, TF_ENABLE_ONEDNN_OPTS, CUDA_VISIBLE_DEVICES, PYTHONHASHSEED, TF_XLA_FLAGS). The program's
output goes to CAPSULE/replay-TIME.log (its path printed). Reading a bucket's capsules reads files someone else wrote:
keys that could name a path outside the local copy are refused. An earlier replay (CAPSULE/replay/, its verdict) is
kept until the new one has run and written its verdict.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from typing import TextIO

from tensorboard_plugin_dbg import replay_launch
from tensorboard_plugin_dbg.reader.capsule_files import Capsule
from tensorboard_plugin_dbg.reader.capsule_manifest import Manifest

MODES = ("FULL_HEALTH", "FULL_TENSOR")
CAPSULE_ENV, MODE_ENV = "TBDBG_CAPSULE_REPLAY", "TBDBG_CAPSULE_REPLAY_MODE"  # capsule/replay_mode.py reads them
LOG_TAIL = 15  # lines of the program's output shown when it ended without replaying
EXIT_REPRODUCED, EXIT_NOT_REPRODUCED, EXIT_CANNOT, EXIT_ONLY_UNDER_XLA = 0, 1, 2, 3
EXITS = {"reproduced": EXIT_REPRODUCED, "reproduced_only_under_xla": EXIT_ONLY_UNDER_XLA}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser(
        "replay",
        help="re-run the step of a NaN capsule under tfdbg2 and name the line (runs the program the capsule names)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("capsule", help="a capsule folder, or a folder of capsules (then the first captured)")
    replay.add_argument(
        "--mode", choices=MODES, default=None, help="FULL_HEALTH; FULL_TENSOR for a spike capsule (values to follow)"
    )
    replay.add_argument("--yes", action="store_true", help="run the recorded command without asking (scripts)")
    replay.add_argument("program", nargs=argparse.REMAINDER, help="-- python train.py ARGS (default: as captured)")
    replay.set_defaults(handler=cmd_replay)


# the caller's variables the program never gets: a cluster's launcher leaves TF_CONFIG set where `replay` may run, and a
# MultiWorkerMirroredStrategy made from it would wait for the other workers for ever (or reach a live cluster's)
LEFT_OUT = ("TF_CONFIG",)


@dataclasses.dataclass
class _Options:
    mode: str | None  # None: the capsule's default (_mode_for)
    yes: bool
    program: list[str]  # after `--`; empty: the recorded command


@dataclasses.dataclass
class _Plan:
    command: list[str]
    cwd: str | None
    added: dict[str, str]  # the environment variables the replay adds, shown before it runs
    removed: list[str]  # the caller's environment variables the program does not get (LEFT_OUT), shown too
    refused: list[str]  # names in the manifest's env that are never applied
    recorded: bool  # the command comes from the capsule (needs the user's confirmation)


def _options(args: argparse.Namespace) -> _Options:
    """--mode and --yes wherever they stand before `--` (`replay CAPSULE --mode M` leaves them in the REMAINDER)."""
    mode, yes, rest = args.mode, args.yes, list(args.program)
    while rest and rest[0] != "--" and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--yes":
            yes = True
        elif flag == "--mode" and rest:
            mode = rest.pop(0)
        elif flag.startswith("--mode="):
            mode = flag.split("=", 1)[1]
        else:
            raise ValueError(f"unknown option {flag} (give the program after --)")
    if mode is not None and mode not in MODES:
        raise ValueError(f"--mode must be one of {', '.join(MODES)}")
    return _Options(mode, yes, rest[1:] if rest[:1] == ["--"] else rest)


def _plan(capsule_path: str, manifest: Manifest, options: _Options) -> _Plan:
    """What will run: the command, its folder and the variables added (CapsuleError for a malformed program)."""
    from tensorboard_plugin_dbg.reader import capsule_files

    command, cwd, recorded_env = capsule_files.recorded_program(manifest)
    recorded = not options.program
    if not recorded:
        command, cwd = options.program, None
    if replay_launch.is_jax(manifest):  # Keras on JAX: through the launcher that hands the capsule the JAX writer
        command = replay_launch.launched(command)
    added = {CAPSULE_ENV: capsule_path, MODE_ENV: options.mode or _mode_for(manifest)}
    refused = sorted(k for k in recorded_env if k not in capsule_files.ENV_RECORDED)
    added.update({k: v for k, v in recorded_env.items() if k in capsule_files.ENV_RECORDED and k not in os.environ})
    return _Plan(command, cwd, added, [k for k in LEFT_OUT if k in os.environ], refused, recorded)


def _mode_for(manifest: Manifest) -> str:
    """A spike is finite: its cause is followed by the values' magnitudes (analysis/spike_cause.py), which only
    FULL_TENSOR records; a NaN's by health (FULL_HEALTH, the lighter dump)."""
    spike = (manifest.get("trigger") or {}).get("kind") in ("loss_spike", "grad_spike")
    return "FULL_TENSOR" if spike else "FULL_HEALTH"


def _show(plan: _Plan, out: TextIO) -> None:
    out.write("replay: runs this program (the capsule names it: run only what you trust)\n")
    out.write(f"  command: {shlex.join(plan.command)}\n  folder: {plan.cwd or os.getcwd()}\n")
    for name, value in plan.added.items():
        out.write(f"  adds: {name}={value}\n")
    for name in plan.removed:
        out.write(f"  removes: {name} (the replay runs as one process: it joins no cluster)\n")
    if plan.refused:
        names = ", ".join(plan.refused)
        out.write(f"  not applied (the manifest names them, a NanCapsule never records them): {names}\n")


def _confirmed(out: TextIO) -> bool:
    """The user's yes to a recorded command, asked on the terminal; no terminal: not confirmed (and why)."""
    if not sys.stdin.isatty():
        out.write("replay: not run: a command recorded in a capsule runs only once confirmed (run again with --yes)\n")
        return False
    out.write("Run it? [y/N] ")
    out.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    from tensorboard_plugin_dbg.reader import capsule_files, storage

    try:
        options = _options(args)
    except ValueError as e:
        return _cannot(out, str(e))
    target = args.capsule
    if storage.is_remote(target):  # run on a local copy: the program writes its dump with local file calls
        try:
            target = _local_copy(target, out)
        except OSError as e:
            return _cannot(out, f"{args.capsule}: cannot be read ({e})")
    try:
        capsule = _offending_worker(capsule_files.load(target), out)
        plan = _plan(capsule.path, capsule.manifest, options)
    except capsule_files.CapsuleError as e:
        return _cannot(out, str(e))
    _show(plan, out)
    if plan.recorded and not options.yes and not _confirmed(out):
        return EXIT_CANNOT
    return _run_and_judge(capsule.path, plan, out)


def _offending_worker(capsule: Capsule, out: TextIO) -> Capsule:
    """A MultiWorkerMirroredStrategy worker's capsule whose own replicas stayed finite (trigger `other_worker`): the
    capsule of the worker that held the first non-finite replica instead (same step, its folder beside this one),
    said; this one when that one cannot be read."""
    from tensorboard_plugin_dbg.reader import capsule_files

    part = capsule.manifest.get("replicas") or {}
    bad, count, workers = part.get("non_finite") or [], int(part.get("count", 0)), int(part.get("workers", 1))
    name = os.path.basename(capsule.path)
    if capsule.trigger.get("kind") != "other_worker" or not bad or workers < 2 or count < workers:
        return capsule
    worker = int(bad[0]) // (count // workers)
    sibling = os.path.join(os.path.dirname(capsule.path), re.sub(r"-worker\d+$", f"-worker{worker}", name))
    try:
        found = capsule_files.load(sibling)
    except capsule_files.CapsuleError as e:
        out.write(f"replay: replica {bad[0]} went non-finite on worker {worker}, whose capsule cannot be read ({e})\n")
        return capsule
    out.write(f"replay: {name}'s replicas stayed finite at the capture; replaying {found.path}: it holds replica ")
    out.write(f"{bad[0]}, the one that went non-finite\n")
    return found


def _run_and_judge(folder: str, plan: _Plan, out: TextIO) -> int:
    """Runs the plan (its output into a log), then the verdict; an earlier replay is restored when no verdict came."""
    from tensorboard_plugin_dbg.analysis import capsule_text
    from tensorboard_plugin_dbg.reader import capsule_files

    log = os.path.join(folder, time.strftime("replay-%Y%m%d-%H%M%S.log"))
    out.write(f"  output: {log}\n")
    out.flush()
    earlier = _set_aside(folder)
    try:
        with open(log, "wb") as sink:
            proc = subprocess.run(
                plan.command,
                env={**{k: v for k, v in os.environ.items() if k not in plan.removed}, **plan.added},
                cwd=plan.cwd,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                check=False,
            )
    except OSError as e:
        _restore(earlier)
        return _cannot(out, f"cannot start {plan.command[0]}: {e}")
    verdict = capsule_files.read_verdict(folder)
    if verdict is None:
        _restore(earlier)
        return _cannot(
            out,
            f"the program ended (exit {proc.returncode}) without replaying the step: does it create a NanCapsule "
            f"(in fit's callbacks, or watch() and batches() in its own loop)? (earlier replay kept)\n{_tail(log)}",
        )
    _discard(earlier)
    out.write(capsule_text.capsule_section(folder))
    if verdict.get("verdict") == "cannot_replay":
        return _cannot(out, str(verdict.get("reason")))
    _print_root_cause(os.path.join(folder, capsule_files.REPLAY_DIR), out)
    return EXITS.get(str(verdict.get("verdict")), EXIT_NOT_REPRODUCED)


def _tail(log: str) -> str:
    with open(log, "rb") as f:
        f.seek(max(0, os.fstat(f.fileno()).st_size - 64 * 1024))
        lines = f.read().decode("utf-8", "replace").strip().splitlines()
    return "\n".join(lines[-LOG_TAIL:])


def _set_aside(folder: str) -> list[tuple[str, str]]:
    """The earlier replay's dump and verdict, renamed aside (restored if the new replay gives no verdict)."""
    from tensorboard_plugin_dbg.reader import capsule_files

    moved = []
    for name in (capsule_files.REPLAY_DIR, capsule_files.VERDICT):
        path = os.path.join(folder, name)
        if os.path.lexists(path):
            aside = os.path.join(folder, f".{name}.earlier")
            _remove(aside)  # left by a replay that was killed: the one in place is newer
            os.replace(path, aside)
            moved.append((path, aside))
    return moved


def _restore(moved: list[tuple[str, str]]) -> None:
    for path, aside in moved:
        _remove(path)
        os.replace(aside, path)


def _discard(moved: list[tuple[str, str]]) -> None:
    for _path, aside in moved:
        _remove(aside)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def _print_root_cause(dump_dir: str, out: TextIO) -> None:
    """The replay's root cause, as `report` prints it."""
    from tensorboard_plugin_dbg.analysis import report_text
    from tensorboard_plugin_dbg.index.catalog import Catalog

    try:
        runs = Catalog(dump_dir).runs()
    except OSError as e:
        out.write(f"replay dump: cannot be read ({e})\n")
        return
    if not runs:
        out.write("replay dump: none written\n")
    for run in runs:
        out.write("\nreplay " + report_text.run_section(report_text.run_result(run)))


def _local_copy(url: str, out: TextIO) -> str:
    """A local copy of the capsule(s) at URL, kept: the replay writes its dump and verdict there, not back into the
    bucket (copy CAPSULE/replay/ up yourself to see it beside the capsule)."""
    from tensorboard_plugin_dbg.reader import capsule_remote, storage

    with capsule_remote.local_copy(url, keep=True) as local:
        refused = storage.refused_notice(url)
        if refused:
            out.write(f"replay: notice: {refused}\n")
        out.write(
            f"replay: {url} copied to {local}; the replay dump and verdict are written there "
            "(not back into the bucket)\n"
        )
        return local


def _cannot(out: TextIO, why: str) -> int:
    out.write(f"cannot replay: {why}\n")
    return EXIT_CANNOT
