"""What the synthetic benchmark dump contains: source files, stack frames, the graph, and every trace's health values.

Pure description, no I/O: `bench/generate.py` turns it into protos (written by TF's DebugEventsWriter) and
`bench/record_copier.py` into raw trace records. Everything is a deterministic function of the trace index, so the
records written by TF and the records copied byte-wise agree, and a chunk can be made without knowing the others.

The program modelled is `bench/model_program.py`: a 285-layer MLP in one tf.function (`train_step`), FULL_HEALTH,
whose loss takes log(softmax). Part way through the run (`nonfinite_from`), Log's output gets -inf elements, the ops
after it in that step get NaN, and from the next step on every tensor is NaN (the weights are poisoned).
"""

from __future__ import annotations

import os
import random
import uuid
from dataclasses import dataclass, field

import numpy as np

HOST = "bench-host"
DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
RUN_ID = "6f1c2a9e-bench-0000-0000-tfdbg2synthetic"
OUTER_GRAPH_ID = "0a8d2911-df4e-4a82-8bf5-14a99982c246"
INNER_GRAPH_ID = "8b2e8323-288c-4a18-8472-a19fdac3b41b"
INNER_GRAPH_NAME = "train_step"
T0 = 1_700_000_000.0  # fixed so that a cached dump is byte-identical to a fresh one
TRACE_SPACING = 20e-6  # seconds between traces within a step
STEP_GAP = 2e-3  # extra seconds between steps
FIRST_TRACE_TIME = T0 + 10.0
DT_FLOAT, DT_RESOURCE = 1, 20
LAYERS, WIDTH, BATCH = 285, 128, 64

# TF files that appear in the stacks, with the function each frame is in (the line is found in the real text).
_TF_FILES = {
    "traceback": ("tensorflow/python/util/traceback_utils.py", "error_handler"),
    "polyfn": ("tensorflow/python/eager/polymorphic_function/polymorphic_function.py", "_call"),
    "math": ("tensorflow/python/ops/math_ops.py", None),
    "nn": ("tensorflow/python/ops/nn_ops.py", None),
    "gen_nn": ("tensorflow/python/ops/gen_nn_ops.py", None),
    "gen_math": ("tensorflow/python/ops/gen_math_ops.py", None),
    "opdef": ("tensorflow/python/framework/op_def_library.py", "_apply_op_helper"),
    "dumping": ("tensorflow/python/debug/lib/dumping_callback.py", "callback"),
}
# Op type -> (user-code snippet that creates it, TF file key, TF function) for the innermost library frames.
_OP_SITES = {
    "Placeholder": ("h = x", None, None),
    "ReadVariableOp": ("z = tf.matmul(h, w)", "math", "matmul"),
    "MatMul": ("z = tf.matmul(h, w)", "math", "matmul"),
    "BiasAdd": ("z = tf.nn.bias_add(z, b)", "nn", "bias_add"),
    "Relu": ("return tf.nn.relu(z)", "gen_nn", "relu"),
    "Softmax": ("probs = tf.nn.softmax(logits)", "gen_nn", "softmax"),
    "Log": ("log_probs = tf.math.log(probs)", "gen_math", "log"),
    "Mul": ("per_example = tf.reduce_sum(labels * log_probs, axis=1)", "math", "reduce_sum"),
    "Sum": ("per_example = tf.reduce_sum(labels * log_probs, axis=1)", "math", "reduce_sum"),
    "Mean": ("return -tf.reduce_mean(per_example)", "math", "reduce_mean"),
    "Neg": ("return -tf.reduce_mean(per_example)", "math", "reduce_mean"),
}


@dataclass
class Op:
    op_type: str
    name: str
    inputs: list[str]
    tensor_id: int
    dtype: int
    shape: tuple[int, ...]
    frame_ids: list[str] = field(default_factory=list)
    # Element fractions of an uninfected output: negative, zero (the rest is positive).
    neg_frac: float = 0.5
    zero_frac: float = 0.0

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


@dataclass
class Program:
    source_files: list[tuple[str, list[str]]]  # (path, lines), in file_index order
    frames: list[tuple[str, int, int, str]]  # (frame id, file_index, line, func)
    ops: list[Op]  # every graph_op_creation, in creation order
    traced: list[Op]  # the ops with a float output: one trace each per step, in this order
    log_index: int  # position of the Log op in `traced`


def _tf_root() -> str:
    import tensorflow  # only for the location of TF's source files

    return os.path.dirname(os.path.dirname(tensorflow.__file__))


def _read_lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def _line_in_function(lines: list[str], func: str) -> int:
    """1-based line of the first `return` inside `def func` (a real line of that function), else its def line."""
    for i, text in enumerate(lines):
        if text.lstrip().startswith(f"def {func}("):
            for j in range(i + 1, min(len(lines), i + 400)):
                if lines[j].lstrip().startswith("return "):
                    return j + 1
            return i + 1
    return 1


def build_program() -> Program:
    rnd = random.Random(1234)  # deterministic uuids

    def new_id() -> str:
        return str(uuid.UUID(int=rnd.getrandbits(128), version=4))

    user_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_program.py")
    files: list[tuple[str, list[str]]] = [(user_path, _read_lines(user_path))]
    file_index: dict[str, int] = {"user": 0}
    root = _tf_root()
    for key, (rel, _) in _TF_FILES.items():
        file_index[key] = len(files)
        files.append((os.path.join(root, rel), _read_lines(os.path.join(root, rel))))

    frames: list[tuple[str, int, int, str]] = []
    frame_by_site: dict[tuple[int, int, str], str] = {}

    def frame(key: str, line: int, func: str) -> str:
        site = (file_index[key], line, func)
        if site not in frame_by_site:
            frame_by_site[site] = new_id()
            frames.append((frame_by_site[site], *site))
        return frame_by_site[site]

    user = files[0][1]

    def user_line(snippet: str) -> int:
        return next(i + 1 for i, t in enumerate(user) if snippet in t)

    def tf_frame(key: str, func: str) -> str:
        return frame(key, _line_in_function(files[file_index[key]][1], func), func)

    def enclosing_user_function(line: int) -> str:
        for i in range(line - 1, -1, -1):
            if user[i].lstrip().startswith("def "):
                return user[i].split("def ", 1)[1].split("(", 1)[0]
        return "<module>"

    def stack(op_type: str) -> list[str]:
        """Outermost first: <module> -> main -> train_step -> layer function -> TF internals -> dumping callback."""
        snippet, lib_key, lib_func = _OP_SITES[op_type]
        ids = [
            frame("user", user_line("main(sys.argv[1])"), "<module>"),
            frame("user", user_line("loss = train_step(x, y)"), "main"),
            tf_frame("traceback", "error_handler"),
            tf_frame("polyfn", "_call"),
        ]
        if snippet not in ("h = x",):
            caller = (
                "h = dense(h, w, b)"
                if op_type in ("ReadVariableOp", "MatMul", "BiasAdd", "Relu")
                else "loss = cross_entropy(h, y)"
            )
            ids.append(frame("user", user_line(caller), "train_step"))
        line = user_line(snippet)
        ids.append(frame("user", line, enclosing_user_function(line)))
        if lib_key:
            ids += [tf_frame("traceback", "error_handler"), tf_frame(lib_key, lib_func)]
        ids += [tf_frame("opdef", "_apply_op_helper"), tf_frame("dumping", "callback")]
        return ids

    ops: list[Op] = []
    next_tensor = [100]

    def add(op_type, name, inputs, dtype, shape, neg=0.5, zero=0.0) -> str:
        op = Op(op_type, name, inputs, next_tensor[0], dtype, shape, stack(op_type), neg, zero)
        next_tensor[0] += 1
        ops.append(op)
        return name + ":0"

    h = add("Placeholder", "x", [], DT_FLOAT, (BATCH, WIDTH))
    y = add("Placeholder", "y", [], DT_FLOAT, (BATCH, WIDTH))
    for layer in range(LAYERS):
        scope = "dense" if layer == 0 else f"dense_{layer}"
        w_res = add("Placeholder", f"{scope}/MatMul/ReadVariableOp/resource", [], DT_RESOURCE, ())
        w = add("ReadVariableOp", f"{scope}/MatMul/ReadVariableOp", [w_res], DT_FLOAT, (WIDTH, WIDTH))
        z = add("MatMul", f"{scope}/MatMul", [h, w], DT_FLOAT, (BATCH, WIDTH))
        b_res = add("Placeholder", f"{scope}/BiasAdd/ReadVariableOp/resource", [], DT_RESOURCE, ())
        b = add("ReadVariableOp", f"{scope}/BiasAdd/ReadVariableOp", [b_res], DT_FLOAT, (WIDTH,), 0.3, 0.4)
        z = add("BiasAdd", f"{scope}/BiasAdd", [z, b], DT_FLOAT, (BATCH, WIDTH))
        h = add("Relu", f"{scope}/Relu", [z], DT_FLOAT, (BATCH, WIDTH), 0.0, 0.5)
    probs = add("Softmax", "Softmax", [h], DT_FLOAT, (BATCH, WIDTH), 0.0, 0.0)
    logp = add("Log", "Log", [probs], DT_FLOAT, (BATCH, WIDTH), 1.0, 0.0)
    prod = add("Mul", "mul", [y, logp], DT_FLOAT, (BATCH, WIDTH), 0.01, 0.99)
    per_example = add("Sum", "Sum", [prod], DT_FLOAT, (BATCH,), 1.0, 0.0)
    mean = add("Mean", "Mean", [per_example], DT_FLOAT, (), 1.0, 0.0)
    add("Neg", "Neg", [mean], DT_FLOAT, (), 0.0, 0.0)
    traced = [op for op in ops if op.op_type != "Placeholder"]
    log_index = next(i for i, op in enumerate(traced) if op.op_type == "Log")
    return Program(files, frames, ops, traced, log_index)


def trace_wall_times(index: np.ndarray, steps_len: int) -> np.ndarray:
    return FIRST_TRACE_TIME + index * TRACE_SPACING + (index // steps_len) * STEP_GAP


def health_counts(program: Program, first_step: int, steps: int, bad_trace: int) -> dict[str, np.ndarray]:
    """FULL_HEALTH counts for `steps` whole steps starting at `first_step`: arrays of shape (steps, traced ops).

    The first Log trace at or after trace index `bad_trace` gets -inf; the ops after it in that step get NaN; every
    op of every later step is all-NaN. A deterministic jitter of the trace index keeps the finite counts varied.
    """
    n_ops = len(program.traced)
    size = np.array([op.size for op in program.traced], dtype=np.int64)[None, :]
    neg_frac = np.array([op.neg_frac for op in program.traced])[None, :]
    zero_frac = np.array([op.zero_frac for op in program.traced])[None, :]
    step = np.arange(first_step, first_step + steps, dtype=np.int64)[:, None]
    index = step * n_ops + np.arange(n_ops, dtype=np.int64)[None, :]
    jitter = ((index * 2654435761) % 1000) / 25000.0 - 0.02  # +-2 % of the elements
    neg = np.clip(np.rint(size * np.clip(neg_frac + jitter * (neg_frac * (1 - neg_frac) > 0), 0, 1)), 0, size)
    zero = np.clip(np.rint(size * np.clip(zero_frac - jitter * (zero_frac * (1 - zero_frac) > 0), 0, 1)), 0, size - neg)
    ninf = np.zeros_like(neg)
    nan = np.zeros_like(neg)
    bad_step = bad_trace // n_ops + (1 if bad_trace % n_ops > program.log_index else 0)
    if step[0, 0] <= bad_step < step[-1, 0] + 1:
        row = bad_step - first_step
        ninf[row, program.log_index] = 3
        after = np.arange(n_ops) > program.log_index
        nan[row, after] = np.minimum(3, size[0, after])
    poisoned = (step > bad_step)[:, 0]
    nan[poisoned, :] = np.broadcast_to(size, nan[poisoned].shape)
    broken = ninf + nan
    neg = np.where(poisoned[:, None], 0, np.maximum(neg - broken, 0))
    zero = np.where(poisoned[:, None], 0, np.minimum(zero, size - neg - broken))
    pos = size - neg - zero - broken
    shape = (steps, n_ops)
    return {
        "ninf": ninf.astype(np.float64),
        "pinf": np.zeros(shape),
        "nan": nan.astype(np.float64),
        "neg": neg.astype(np.float64),
        "zero": zero.astype(np.float64),
        "pos": pos.astype(np.float64),
    }


def debug_vectors(program: Program, counts: dict[str, np.ndarray]) -> np.ndarray:
    """The 11-element FULL_HEALTH vectors, shape (steps, traced ops, 11), float64."""
    steps, n_ops = counts["nan"].shape
    out = np.empty((steps, n_ops, 11), dtype=np.float64)
    out[:, :, 0] = [op.tensor_id for op in program.traced]
    out[:, :, 1] = -1.0
    out[:, :, 2] = [op.dtype for op in program.traced]
    out[:, :, 3] = [len(op.shape) for op in program.traced]
    out[:, :, 4] = [op.size for op in program.traced]
    for k, name in enumerate(("ninf", "pinf", "nan", "neg", "zero", "pos")):
        out[:, :, 5 + k] = counts[name]
    return out
