"""User code vs library code, for source files and stack frames.

User code is anything that is not TensorFlow, Keras, an installed package (site-packages / dist-packages), the
Python standard library, or code generated at run time (TF's autograph writes the converted function into a
temporary `__autograph_generated_file*.py`) or a pseudo-path with no file behind it (`<frozen runpy>` of
`python -m`, `<string>`, `<stdin>`, `<ipython-input-…>`; TensorFlow records it under the working directory, e.g.
`/home/me/project/<frozen runpy>`): never the user's own line, whatever the path looks like. Their frames stay in
the stacks; they are only not user code. The standard library is recognised by its install prefix (sys.base_prefix /
lib/pythonX.Y), and also by the generic shape `/lib/pythonX.Y/` so dumps written on another machine classify the
same way.
"""

from __future__ import annotations

import re
import sys
import sysconfig

_LIBRARY_PARTS = re.compile(
    r"(^|[/\\])(site-packages|dist-packages)([/\\]|$)"
    r"|(^|[/\\])(tensorflow|tensorflow_core|keras|tf_keras|tensorboard|absl|google[/\\]protobuf)[/\\]"
    r"|(^|[/\\])lib[/\\]python\d+(\.\d+)?[/\\]"
    r"|(^|[/\\])<[^/\\<>]*>$"  # a pseudo-path as the last part: <frozen runpy>, <string>, <ipython-input-1-ab>
    r"|__autograph_generated_file"
)
_STDLIB = {p for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")) if p}


def is_user_path(path: str | None) -> bool:
    """True when `path` is the user's own code."""
    if not path:
        return False
    if _LIBRARY_PARTS.search(path):
        return False
    return not any(path.startswith(p.rstrip("/\\") + "/") for p in _STDLIB | {sys.base_prefix + "/lib/"})
