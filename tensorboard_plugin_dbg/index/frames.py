"""User code vs library code, for source files and stack frames.

User code is anything that is not TensorFlow, Keras, an installed package (site-packages / dist-packages), the
Python standard library, or code generated at run time (TF's autograph writes the converted function into a
temporary `__autograph_generated_file*.py`) or a pseudo-path with no file behind it (`<frozen runpy>` of
`python -m`, `<string>`, `<stdin>`, `<ipython-input-…>`; TensorFlow records it under the working directory, e.g.
`/home/me/project/<frozen runpy>`): never the user's own line, whatever the path looks like. Their frames stay in
the stacks; they are only not user code. The standard library is recognised by its install prefix (sys.base_prefix /
lib/pythonX.Y), and also by the generic shape `/lib/pythonX.Y/` so dumps written on another machine classify the
same way.

This plugin's own code (the NanCapsule callback that wraps Keras's train step, the replay) is library code too, in
any install: an editable install (`pip install -e`) or a checkout on PYTHONPATH has no site-packages in its paths,
and its `capsule/callback.py` would otherwise be named as the line to fix. A path is the plugin's when
`tensorboard_plugin_dbg/` is followed by one of the package's own modules or subpackages (read from the package
itself, so a user's project that happens to sit in a folder of that name is not taken for it). The demo's buggy
program (`demo/`) stays user code: it stands for the user's program.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_USER_LIKE = {"demo"}  # the demo's program stands for the user's own


def _own_parts() -> str:
    """The package's own modules and subpackages, as a regex alternation (the demo left out)."""
    names = []
    for entry in sorted(os.listdir(_PACKAGE_DIR)):
        stem, ext = os.path.splitext(entry)
        if ext == ".py" or os.path.isfile(os.path.join(_PACKAGE_DIR, entry, "__init__.py")):
            if stem not in _USER_LIKE and stem.isidentifier():
                names.append(re.escape(entry))
    return "|".join(names)


_LIBRARY_PARTS = re.compile(
    r"(^|[/\\])(site-packages|dist-packages)([/\\]|$)"
    r"|(^|[/\\])(tensorflow|tensorflow_core|keras|tf_keras|tensorboard|absl|google[/\\]protobuf)[/\\]"
    r"|(^|[/\\])lib[/\\]python\d+(\.\d+)?[/\\]"
    r"|(^|[/\\])<[^/\\<>]*>$"  # a pseudo-path as the last part: <frozen runpy>, <string>, <ipython-input-1-ab>
    r"|__autograph_generated_file"
    rf"|(^|[/\\])tensorboard_plugin_dbg[/\\]({_own_parts()})([/\\]|$)"
)
_STDLIB = {p for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")) if p}


def is_user_path(path: str | None) -> bool:
    """True when `path` is the user's own code."""
    if not path:
        return False
    if _LIBRARY_PARTS.search(path):
        return False
    return not any(path.startswith(p.rstrip("/\\") + "/") for p in _STDLIB | {sys.base_prefix + "/lib/"})
