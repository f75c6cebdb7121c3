"""Recording jitted JAX programs as tfdbg2 dumps the dashboard reads (`jax` is imported only when enabled).

    from tensorboard_plugin_dbg.jax import enable_dump_debug_info
    enable_dump_debug_info("/tmp/dump", tensor_debug_mode="FULL_HEALTH")

Training-side code: imports wire/, reader/ and writer/ only (tests/test_layers.py)."""

from .recorder import disable_dump_debug_info, enable_dump_debug_info

__all__ = ["disable_dump_debug_info", "enable_dump_debug_info"]
