"""A NaN capsule's manifest (manifest.json) and replay verdict (replay.json), typed once, with the format version:
the training side writes them (capsule/writer.py, capsule/replay_mode.py), the viewer reads them
(reader/capsule_files.py checks what every reader relies on before these types are believed: a capsule may come from
someone else).

Every key is optional to the type checker (total=False): a newer writer adds fields, and an older reader ignores the
ones it does not know; read_manifest is what requires `step`, `trigger`, `files` and `batch_structure`. A field every
reader must understand raises FORMAT_VERSION (old readers then refuse the capsule in words)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

FORMAT = "tbdbg-nan-capsule"
FORMAT_VERSION = 1


class Health(TypedDict, total=False):
    """Element counts of a tensor: all of it, NaN, +inf, -inf."""

    size: int
    nan: int
    pos_inf: int
    neg_inf: int


class Trigger(TypedDict, total=False):
    """What made the capture: the first non-finite loss or gradient (capsule/shadow.py), or a spike rule that fired
    (capsule/spike.py: `text`, `value`, `threshold`...)."""

    kind: str  # "loss", "gradient", "loss_spike", "grad_spike", "unknown"
    name: str
    health: Health
    all: list[Trigger]  # every non-finite one of the step, the first first
    text: str
    value: float
    window_max: float
    factor: float
    threshold: float
    window: int
    capsule: str  # training side, after the capture: the folder written for it


class ArrayEntry(TypedDict):
    name: str
    dtype: str
    shape: list[int]


class FileEntry(TypedDict):
    """One `.npz` of the capsule: its file name, its size (a changed or truncated file is damage) and its arrays."""

    file: str
    bytes: int
    arrays: list[ArrayEntry]


class BatchSpec(TypedDict, total=False):
    """The batch's nesting (capsule/structure.py): an array by name, None, or a dict / tuple / list of specs."""

    kind: str  # "array", "none", "dict", "tuple", "list"
    name: str  # kind "array": the flat name in batch.npz
    items: Sequence[object]  # the children: specs, or [key, spec] pairs for a dict (checked where walked)


class Program(TypedDict, total=False):
    """How the training program was started (replay shows it and asks before running it)."""

    script: str | None
    executable: str
    argv: list[str]
    cwd: str
    env: dict[str, str]  # only capsule_files.ENV_RECORDED's names are ever applied


class Replicas(TypedDict, total=False):
    """A tf.distribute capture (capsule/distribute.py): which replicas went non-finite, each replica's rows of the
    global batch, and under MultiWorkerMirroredStrategy this worker and the other workers' capsule folders."""

    count: int
    non_finite: list[int]
    rows: dict[str, list[int]]  # replica -> [begin, end) in this capsule's batch
    rows_per_replica: list[int]
    worker: int
    workers: int
    worker_capsules: list[str]


class Manifest(TypedDict, total=False):
    format: str
    format_version: int
    created: str  # ISO time of the capture
    step: int
    epoch: int | None
    batch_index: int | None
    trigger: Trigger
    files: dict[str, FileEntry]  # group (batch, weights, optimizer, rng, forensics...) -> its file
    batch_structure: BatchSpec
    program: Program
    source: str  # "fit" or a custom loop
    on_nan: str
    compiled: bool
    loss_scale: bool
    deterministic: bool
    pre_step_state: list[str]
    versions: dict[str, str]
    devices: list[dict[str, str]]
    rules: dict[str, object]  # the spike rules' settings, shown as they are
    forensics: dict[str, object]  # what capsule/forensics.py recorded, or why not (`why`)
    layer_history: dict[str, object]  # the per-layer ring's entry: recorded, variables, steps, or why not
    replicas: Replicas  # tf.distribute: count, non_finite, rows per replica, worker(s) (capsule/distribute.py)


class CompiledPass(TypedDict):
    ran: bool
    trigger: Trigger | None


class Verdict(TypedDict, total=False):
    """replay.json: the replay's verdict ("reproduced", "not_reproduced", "reproduced_only_under_xla",
    "cannot_replay"), why, and the replayed step's own trigger."""

    verdict: str
    reason: str
    same_trigger: bool
    trigger: Trigger | None
    mode: str
    compiled: CompiledPass | None
    replicas: str | None  # how a tf.distribute capsule's batch was replayed (capsule/distribute.py)
