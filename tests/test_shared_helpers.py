"""Tests share helpers through helper modules (run_helpers.py, compare_helpers.py, e2e/e2e_page.py, ...), never by
importing another test file: a test module imported by others runs its module-level set-up for them, hides which
helpers are shared, and one test's rename breaks another's collection (issue #40 item 8: 41 files did)."""

from __future__ import annotations

import os
import re

TESTS = os.path.dirname(os.path.abspath(__file__))
_IMPORT = re.compile(r"^\s*(?:from\s+(?:tests\.)?test_\w+\s+import|import\s+(?:tests\.)?test_\w+)", re.M)


def test_no_test_module_imports_another():
    offenders = []
    for folder, _dirs, files in os.walk(TESTS):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    found = _IMPORT.findall(f.read())
                offenders += [f"{os.path.relpath(path, TESTS)}: {line.strip()}" for line in found]
    assert offenders == [], "import the helper module instead:\n" + "\n".join(offenders)
