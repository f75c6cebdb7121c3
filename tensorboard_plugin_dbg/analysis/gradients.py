"""The forward op of a gradient op: where a NaN born in the backward pass is fixed.

When the tape runs inside a tf.function, the backward ops are in the same graph and traced. The first non-finite
tensor is then often made by a gradient op (`gradient_tape/norm/SqrtGrad`: 0.5 / sqrt(0) = +∞), and its creation
stack points at `tape.gradient(...)`; the line to change is the forward op it differentiates (`tf.norm(...)`: add an
epsilon). TensorFlow builds a forward op's gradient under a name scope made from the forward op's own scope
(`gradient_tape/<scope>/...` under GradientTape, `gradients/<op>_grad/...` under tf.gradients), from whatever ops
its gradient function uses (`SqrtGrad`, or plain `Reciprocal` and `Mul` for `Log`), and feeds them the forward op's
inputs or outputs. So the forward op is found by the tape's naming and the data edges, never by a list of op types:

1. an input of the gradient op that is a forward op of the differentiated type (`SqrtGrad` reads `norm/Sqrt:0`);
2. the op named like the gradient's scope (`gradient_tape/mul/Mul` -> `mul`; `gradients/x/Log_grad/...` -> `x/Log`);
3. among the forward ops of that scope whose inputs or outputs the gradient op reads (directly, or through the
   gradient ops of the same scope that feed it): the one of the differentiated type, the only one, the one whose
   forward value was masked (`masked`: the tf.where trap, `gradient_tape/Reciprocal` reads `Relu:0`, which `Relu`
   made and both `Log` and `Greater` read; the log's -inf was masked), or any when they all share one stack.
"""

from __future__ import annotations

from collections.abc import Callable

from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.index.state import OpEntry

_MARKERS = ("gradient_tape/", "gradients/")
_HOPS = 3  # gradient ops of the same scope walked back to reach the forward tensors they read


def is_backward(op_name: str | None, op_type: str = "") -> bool:
    """Whether the op was made by a gradient computation (by TensorFlow's naming of gradient ops)."""
    if not op_name:
        return False
    return any(op_name.startswith(m) or f"/{m}" in op_name for m in _MARKERS)


def _scope(op_name: str) -> str:
    """The forward name scope a gradient op was made under ('' when it is at the gradient's root)."""
    for marker in _MARKERS:
        at = op_name.find(marker)
        if at == 0 or (at > 0 and op_name[at - 1] == "/"):
            rest = op_name[at + len(marker) :]
            scope = rest.rsplit("/", 1)[0] if "/" in rest else ""
            if marker == "gradients/":  # tf.gradients: gradients/<op>_grad/<name>
                scope = scope.split("_grad")[0] if "_grad" in scope else scope
            return op_name[:at] + scope
    return ""


def _parent(op_name: str) -> str:
    return op_name.rsplit("/", 1)[0] if "/" in op_name else ""


def forward_op(
    run: RunQueries, graph_id: str, op: OpEntry, masked: Callable[[OpEntry], bool] | None = None
) -> OpEntry | None:
    """The forward op that gradient op `op` differentiates, or None when neither its edges nor its name tell.
    `masked(entry)`: whether that forward op's non-finite value was absorbed in the forward pass (containment)."""
    if not is_backward(op.op_name, op.op_type):
        return None
    wanted = op.op_type[: -len("Grad")] if op.op_type.endswith("Grad") else None
    scope = _scope(op.op_name)
    forward_inputs = [e for name, _ in op.inputs if (e := _forward(run, graph_id, name)) is not None]
    for entry in forward_inputs:
        if wanted and entry.op_type == wanted:
            return entry
    named = _forward(run, graph_id, scope) if scope else None
    if named is not None:
        return named
    touched = _touched(run, graph_id, op, scope)
    if wanted:
        typed = [e for e in touched if e.op_type == wanted]
        if len(typed) == 1:
            return typed[0]
    if len(touched) == 1:
        return touched[0]
    hidden = [e for e in touched if masked is not None and masked(e)]
    if len(hidden) == 1:
        return hidden[0]
    stacks = {tuple(e.stack_frame_ids) for e in touched}
    return touched[0] if len(stacks) == 1 else None


def _touched(run: RunQueries, graph_id: str, op: OpEntry, scope: str) -> list[OpEntry]:
    """The forward ops of `scope` that made or read a forward tensor the gradient op reads: directly when it reads
    any, else through the gradient ops of the same scope that feed it (up to _HOPS back)."""
    read: set[tuple[str, int]] = set()
    frontier, seen = [op], {op.op_name}
    for _ in range(_HOPS):
        nxt = []
        for entry in frontier:
            for name, slot in entry.inputs:
                source = run.op_entry(graph_id, name)
                if source is None or name in seen:
                    continue
                seen.add(name)
                if not is_backward(name):
                    read.add((name, slot))
                elif _scope(name) == scope:
                    nxt.append(source)
        if read or not nxt:
            break
        frontier = nxt
    if not read:
        return []
    makers = {name for name, _ in read}
    out: list[OpEntry] = []
    for name in run.graph_op_names(graph_id):
        if is_backward(name) or _parent(name) != scope:
            continue
        forward = run.op_entry(graph_id, name)
        if forward is not None and (name in makers or any(inp in read for inp in forward.inputs)):
            out.append(forward)
    return out


def _forward(run: RunQueries, graph_id: str, name: str) -> OpEntry | None:
    entry = run.op_entry(graph_id, name)
    return entry if entry is not None and not is_backward(entry.op_name) else None
