"""The demo's buggy MLP (the package's own program), FULL_HEALTH, circular buffer off. Args: [steps] [mode]."""

import sys

from tensorboard_plugin_dbg.demo.buggy_mlp import train

if __name__ == "__main__":
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    mode = sys.argv[3] if len(sys.argv) > 3 else "FULL_HEALTH"
    train(sys.argv[1], steps=steps, tensor_debug_mode=mode, circular_buffer_size=-1)
