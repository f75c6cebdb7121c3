"""The forward op of a gradient op: where a NaN born in the backward pass is fixed.

When the tape runs inside a tf.function, the backward ops are in the same graph and traced. The first non-finite
tensor is then often made by a gradient op (`gradient_tape/norm/SqrtGrad`: 0.5 / sqrt(0) = +∞), and its creation
stack points at `tape.gradient(...)`; the line to change is the forward op it differentiates (`tf.norm(...)`: add an
epsilon). TensorFlow names gradient ops after the forward op's name scope (`gradient_tape/<scope>/<Type>Grad` under
GradientTape, `gradients/<op>_grad/...` under tf.gradients) and feeds them the forward op's output or inputs, so the
forward op is found by its data edges first and by its name second:

1. an input of the gradient op that is a forward op of the differentiated type (`SqrtGrad` reads `norm/Sqrt:0`);
2. the op named like the gradient's scope (`gradient_tape/mul/Mul` -> `mul`; `gradients/x/Log_grad/...` -> `x/Log`);
3. in that scope, the one forward op of the differentiated type, or the only forward input of the gradient op.
"""

from __future__ import annotations

from tensorboard_plugin_dbg.index.protocol import RunQueries
from tensorboard_plugin_dbg.index.state import OpEntry

_MARKERS = ("gradient_tape/", "gradients/")


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


def forward_op(run: RunQueries, graph_id: str, op: OpEntry) -> OpEntry | None:
    """The forward op that gradient op `op` differentiates, or None when neither its edges nor its name tell."""
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
    in_scope = [e for e in forward_inputs if e.op_name.startswith(scope + "/")] if scope else []
    if wanted:
        typed = [e for e in in_scope if e.op_type == wanted]
        if len(typed) == 1:
            return typed[0]
    return in_scope[0] if len(in_scope) == 1 else None


def _forward(run: RunQueries, graph_id: str, name: str) -> OpEntry | None:
    entry = run.op_entry(graph_id, name)
    return entry if entry is not None and not is_backward(entry.op_name) else None
