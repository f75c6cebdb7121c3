"""NaN capsules (#26) under the logdir: the capsule cards (analysis/capsule_summary.py), and one batch array or
variable of a capsule for Tensor Values (analysis/capsule_array.py), sliced like a dumped tensor."""

from __future__ import annotations

from tensorboard_plugin_dbg.analysis import (
    capsule_array,
    capsule_cards_remote,
    capsule_sample_table,
    capsule_summary,
    run_verdict,
    tensor_slices,
    tensor_values,
)
from tensorboard_plugin_dbg.api import errors
from tensorboard_plugin_dbg.api.params import Param, Params
from tensorboard_plugin_dbg.api.routes import tensors
from tensorboard_plugin_dbg.api.routes.shared import BEGIN, END
from tensorboard_plugin_dbg.api.routes.tensors import NPY
from tensorboard_plugin_dbg.api.spec import Binary, RouteSpec
from tensorboard_plugin_dbg.index.protocol import Catalog
from tensorboard_plugin_dbg.reader import capsule_files, storage, tensor_content
from tensorboard_plugin_dbg.wire import types as wire

# the `tensor` route's slice and bins parameters, the same rules for a capsule's arrays
_TENSOR_PARAMS = {p.name: p for r in tensors.ROUTES if r.name == "tensor" for p in r.params}
ARRAY = (
    Param("capsule", "str", "The capsule's folder relative to the logdir (a `capsules` card's `path`).", required=True),
    Param(
        "group",
        "enum",
        "Which file: the batch, the model's weights, the optimizer's state.",
        required=True,
        choices=capsule_array.GROUPS,
    ),
    Param(
        "name",
        "str",
        "The batch array's name (`x`, `y/0`, ...) or the variable's path (`capsules` lists them).",
        required=True,
    ),
    _TENSOR_PARAMS["slice"],
    _TENSOR_PARAMS["bins"],
)


def capsules(catalog: Catalog, p: Params) -> wire.CapsulesResponse:
    if capsule_cards_remote.is_remote(catalog.logdir):
        return capsule_cards_remote.capsules(catalog)
    return capsule_summary.capsules(catalog)


def array(catalog: Catalog, p: Params) -> wire.CapsuleArrayResponse:
    try:
        return capsule_array.capsule_array(catalog.logdir, p["capsule"], p["group"], p["name"], p["slice"], p["bins"])
    except tensor_slices.SliceError as exc:
        raise errors.ApiError(errors.PAGE_TOO_LARGE if exc.too_large else errors.BAD_PARAMETER, str(exc)) from exc


def array_npy(catalog: Catalog, p: Params) -> Binary:
    loc, filename = capsule_array.npy(catalog.logdir, p["capsule"], p["group"], p["name"])
    return Binary(
        tensor_values.npy_stream(loc), tensor_content.npy_bytes(loc), filename, NPY, {"X-Dbg-Dtype": loc.dtype}
    )


def capsule_samples(catalog: Catalog, p: Params) -> wire.CapsuleSamplesResponse:
    """A page of one batch array's per-sample table; once replayed, the rows its root cause points at marked."""
    folder = capsule_array.capsule_folder(catalog.logdir, p["capsule"])
    replay = storage.relpath(storage.join(folder, capsule_files.REPLAY_DIR), catalog.logdir)
    name = next((r.name for r in catalog.runs() if r.name == replay or r.name.startswith(replay + "#")), None)
    producer = run_verdict.root_cause(catalog.run(name), ())["producer"] if name else None
    answer = capsule_sample_table.page(catalog.logdir, p["capsule"], p["array"], p["begin"], p["end"], producer)
    return answer


ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "capsules",
        "Every NaN capsule under the logdir: trigger, step, replay verdict and command, the batch per sample, "
        "variables holding non-finite values.",
        (),
        capsules,
        "CapsulesResponse",
    ),
    RouteSpec(
        "capsule_array",
        "One batch array or variable of a NaN capsule, read from its .npz where it lies: dtype, shape, whole-array "
        "stats, histogram, non-finite positions and a slice of values (as `tensor` answers for a dumped value).",
        ARRAY,
        array,
        "CapsuleArrayResponse",
        not_found="unknown capsule or array name, or a damaged capsule file",
    ),
    RouteSpec(
        "capsule_samples",
        "One batch array of a NaN capsule per sample (x and y apart): non-finite count, min and max |x| over the "
        "finite values, negatives, zeros; the rows the replay's root cause points at first, then the bad ones, then "
        "by max |x|. Paged.",
        (
            ARRAY[0],
            Param("array", "str", "The batch array's name (`x`, `y`, `x/features`, ...).", required=True),
            BEGIN,
            END,
        ),
        capsule_samples,
        "CapsuleSamplesResponse",
        paged=True,
        not_found="unknown capsule or batch array, or a damaged capsule file",
    ),
    RouteSpec(
        "capsule_array.npy",
        "A batch array or variable of a NaN capsule as a .npy file, streamed from its .npz where it lies: the npz "
        "member's bytes (bfloat16: its raw 16-bit words, dtype <u2; the X-Dbg-Dtype header and the file name say "
        "bfloat16).",
        ARRAY[:3],
        array_npy,
        None,
        content_type=NPY,
        not_found="unknown capsule or array name, or a damaged capsule file",
    ),
)
