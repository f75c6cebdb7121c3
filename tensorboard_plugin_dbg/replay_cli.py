"""`python -m tensorboard_plugin_dbg replay CAPSULE [--mode FULL_HEALTH|FULL_TENSOR] [-- python train.py ARGS]`

Re-runs the user's program (by default the command line the capsule recorded, from the folder it was started in) in
replay mode: the NanCapsule in it turns tfdbg2 on, restores the capsule's weights and optimizer state, runs the
captured batch through one training step into CAPSULE/replay/ and ends the program. Then prints the verdict and the
replay's root cause as `report` prints it. Exit status: 0 reproduced, 1 not reproduced, 2 cannot replay (and why),
3 reproduced only under XLA (the step, compiled as the run ran it, triggered again; un-compiled under tfdbg2 it
stayed finite).
No TensorFlow in this process: the program runs in a child process.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from typing import TextIO

EXIT_REPRODUCED, EXIT_NOT_REPRODUCED, EXIT_CANNOT, EXIT_ONLY_UNDER_XLA = 0, 1, 2, 3
EXITS = {"reproduced": EXIT_REPRODUCED, "reproduced_only_under_xla": EXIT_ONLY_UNDER_XLA}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser(
        "replay",
        help="re-run the step of a NaN capsule under tfdbg2 and name the line",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("capsule", help="a capsule folder, or a folder of capsules (then the first captured)")
    replay.add_argument("--mode", choices=("FULL_HEALTH", "FULL_TENSOR"), default="FULL_HEALTH")
    replay.add_argument("program", nargs=argparse.REMAINDER, help="-- python train.py ARGS (default: as captured)")
    replay.set_defaults(handler=cmd_replay)


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    from tensorboard_plugin_dbg.analysis import capsule_text
    from tensorboard_plugin_dbg.reader import capsule_files, storage

    target = args.capsule
    if storage.is_remote(target):  # run on a local copy: the program writes its dump with local file calls
        try:
            target = _local_copy(target, out)
        except OSError as e:
            return _cannot(out, f"{args.capsule}: cannot be read ({e})")
    try:
        capsule = capsule_files.load(target)
    except capsule_files.CapsuleError as e:
        return _cannot(out, str(e))
    program = list(args.program[1:] if args.program[:1] == ["--"] else args.program)
    recorded = capsule.manifest.get("program") or {}
    cwd = None
    if not program:
        program = [recorded.get("executable") or "python", *(recorded.get("argv") or [])]
        cwd = recorded.get("cwd")
    if len(program) < 1:
        return _cannot(out, "no program to run (give it after --)")
    shutil.rmtree(os.path.join(capsule.path, capsule_files.REPLAY_DIR), ignore_errors=True)
    verdict_path = os.path.join(capsule.path, capsule_files.VERDICT)
    if os.path.exists(verdict_path):
        os.remove(verdict_path)
    env = dict(os.environ, TBDBG_CAPSULE_REPLAY=capsule.path, TBDBG_CAPSULE_REPLAY_MODE=args.mode)
    env.update({k: v for k, v in (recorded.get("env") or {}).items() if k not in os.environ})
    try:
        proc = subprocess.run(program, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as e:
        return _cannot(out, f"cannot start {program[0]}: {e}")
    verdict = capsule_files.read_verdict(capsule.path)
    if verdict is None:
        tail = "\n".join((proc.stderr or "").strip().splitlines()[-15:])
        return _cannot(
            out,
            f"the program ended (exit {proc.returncode}) without replaying the step: does it create a NanCapsule "
            f"(in fit's callbacks, or watch() and batches() in its own loop)?\n{tail}",
        )
    out.write(capsule_text.capsule_section(capsule.path))
    if verdict.get("verdict") == "cannot_replay":
        return _cannot(out, str(verdict.get("reason")))
    _print_root_cause(os.path.join(capsule.path, capsule_files.REPLAY_DIR), out)
    return EXITS.get(str(verdict.get("verdict")), EXIT_NOT_REPRODUCED)


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
    from tensorboard_plugin_dbg.reader import capsule_remote

    with capsule_remote.local_copy(url, keep=True) as local:
        out.write(
            f"replay: {url} copied to {local}; the replay dump and verdict are written there "
            "(not back into the bucket)\n"
        )
        return local


def _cannot(out: TextIO, why: str) -> int:
    out.write(f"cannot replay: {why}\n")
    return EXIT_CANNOT
