"""A file set written by the package's own writer (no TensorFlow): tests/writer_sets.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import writer_sets  # noqa: E402

writer_sets.write(sys.argv[1])
