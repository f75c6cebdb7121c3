#!/usr/bin/env bash
# Sets everything up, runs the bundled buggy training program (it writes a NaN dump) and opens TensorBoard on it.
# Arguments go to `python -m tensorboard_plugin_dbg.demo` (e.g. --port 6007, --logdir /tmp/somewhere).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NEED_CHROMIUM=0 NEED_NODE=0 source "$ROOT/scripts/setup.sh"
# exec: the demo is this PID, so `kill` of it reaches the demo, which ends TensorBoard with it.
exec python -m tensorboard_plugin_dbg.demo "$@"
