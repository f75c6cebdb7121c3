"""How TensorFlow names what a dump records (one place for each rule the index and the analysis share)."""

from __future__ import annotations

import re

# Execution op types of tf.function calls: `__inference_<fn>_<n>`, and the forward/backward halves of a function
# that an eager GradientTape recorded.
FUNCTION_PREFIXES = ("__inference_", "__forward_", "__backward_")


def is_function_call(op_type: str) -> bool:
    """True when an Execution's op type is a tf.function call rather than an eager op."""
    return op_type.startswith(FUNCTION_PREFIXES)


def function_name(op_type: str) -> str:
    """The Python function's graph name of an `__inference_<name>_<n>` call (else the op type as it is)."""
    return re.sub(r"_\d+$", "", op_type.removeprefix("__inference_"))
