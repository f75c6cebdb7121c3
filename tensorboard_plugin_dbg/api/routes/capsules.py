"""NaN capsules (#26) under the logdir: the capsule cards (analysis/capsule_summary.py)."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import capsule_summary
from tensorboard_plugin_dbg.api.params import Params
from tensorboard_plugin_dbg.api.spec import RouteSpec
from tensorboard_plugin_dbg.index.protocol import Catalog
from tensorboard_plugin_dbg.wire import types as wire


def capsules(catalog: Catalog, p: Params) -> wire.CapsulesResponse:
    return capsule_summary.capsules(catalog)


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "capsules",
        "Every NaN capsule under the logdir: trigger, step, replay verdict and command, the batch per sample, "
        "variables holding non-finite values.",
        (),
        capsules,
        "CapsulesResponse",
    ),
)
