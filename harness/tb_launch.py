"""Start TensorBoard with exactly one of the two debuggers loaded (or neither), then behave like `tensorboard`.

    python harness/tb_launch.py {dbg,debugger-v2,none} --logdir DIR --host 127.0.0.1 --port N ...

Why: both plugins load in a stock `tensorboard`, and both start reading the dump on first use (ours on the first
`/data/plugins_listing`, the reference on its first route call). A process measured for one system must not pay
for the other's reader in CPU or memory, so each benchmark process keeps TensorBoard's other built-in plugins and
drops the competitor. `none` keeps neither: the idle baseline for RSS.
"""

import sys

from absl import app
from tensorboard import default, main_lib, program
from tensorboard.plugins.debugger_v2 import debugger_v2_plugin


def plugins_for(which: str) -> list:
    static = [p for p in default.get_static_plugins() if p is not debugger_v2_plugin.DebuggerV2Plugin]
    if which == "debugger-v2":
        return default.get_static_plugins()
    if which == "dbg":
        from tensorboard_plugin_dbg.plugin import DbgLoader  # --dbg_logdir included

        return static + [DbgLoader]
    return static


def main() -> None:
    which = sys.argv.pop(1)
    main_lib.global_init()
    tensorboard = program.TensorBoard(plugins=plugins_for(which))
    app.run(tensorboard.main, flags_parser=tensorboard.configure)


if __name__ == "__main__":
    main()
