"""The project's own DebugEvent schema (built in code, no TensorFlow) reads TF's records exactly as TF's generated
classes do; the viewer never imports TensorFlow; the user-code classifier."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import dumps
import numpy as np
import pytest

from tensorboard_plugin_dbg.index.frames import is_user_path
from tensorboard_plugin_dbg.reader import schema, tfrecord


@pytest.mark.parametrize(
    "program",
    [pytest.param(("demo",), marks=pytest.mark.slow), ("modes", "FULL_TENSOR"), ("mirrored",)],  # demo: ~5 s
    ids=str,
)
def test_every_record_round_trips_like_tf(program):
    from tensorflow.core.protobuf import debug_event_pb2

    for path in sorted(glob.glob(os.path.join(dumps.make_dump(*program), "tfdbg_events.*"))):
        with open(path, "rb") as f:
            data = f.read()
        scan = tfrecord.scan(np.frombuffer(data, np.uint8), 0)
        assert scan.next_offset == len(data) and not scan.damages
        for start, length in zip(scan.starts.tolist(), scan.lengths.tolist()):
            payload = data[start : start + length]
            ours = schema.parse_event(payload)
            theirs = debug_event_pb2.DebugEvent.FromString(payload)
            assert ours.WhichOneof("what") == theirs.WhichOneof("what")
            _assert_same_fields(ours, theirs)


def _repeated(field) -> bool:
    rep = getattr(field, "is_repeated", None)  # protobuf >= 5 dropped FieldDescriptor.label
    return bool(rep) if rep is not None else field.label == 3


def _assert_same_fields(ours, theirs) -> None:
    """Field by field (TF's FileLineCol is proto2, so bytes differ on re-serialization, values do not)."""
    for field in ours.DESCRIPTOR.fields:
        a, b = getattr(ours, field.name), getattr(theirs, field.name)
        if field.type == field.TYPE_MESSAGE:
            if _repeated(field):
                assert len(a) == len(b)
                for x, y in zip(a, b):
                    _assert_same_fields(x, y)
            else:
                _assert_same_fields(a, b)
        elif field.type == field.TYPE_BYTES and not isinstance(b, (bytes, list)) and hasattr(b, "SerializeToString"):
            assert a == b.SerializeToString(deterministic=True), field.name  # an embedded TensorProto
        elif field.type == field.TYPE_BYTES and _repeated(field) and len(b) and hasattr(b[0], "SerializeToString"):
            assert list(a) == [x.SerializeToString(deterministic=True) for x in b], field.name
        elif _repeated(field):
            assert list(a) == list(b), field.name
        else:
            assert a == b, field.name


def test_viewer_does_not_import_tensorflow():
    code = (
        "import sys, tensorboard_plugin_dbg.index.catalog as c; "
        "c.Catalog(sys.argv[1]).runs()[0].info(); "
        "print([m for m in sys.modules if m == 'tensorflow' or m.startswith('tensorflow.')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, os.path.dirname(dumps.make_dump("demo"))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=dumps.ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_parse_event_never_raises():
    assert schema.parse_event(b"\xff\xff\xff") is None
    assert schema.parse_event(b"") is not None  # an empty message is valid protobuf


@pytest.mark.parametrize(
    "path,user",
    [
        ("/home/me/project/train.py", True),
        ("/work/main/tensorboard_plugin_dbg/demo/buggy_mlp.py", True),
        ("/usr/lib/python3.11/site-packages/tensorflow/python/ops/math_ops.py", False),
        ("/opt/venv/lib/python3.10/dist-packages/keras/src/layers/core/dense.py", False),
        ("/usr/lib/python3.11/threading.py", False),
        (sys.base_prefix + "/lib/python3.11/runpy.py", False),
        ("C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Lib\\site-packages\\tensorflow\\x.py", False),
        ("<frozen runpy>", False),
        ("/home/me/project/<frozen runpy>", False),  # TF records the pseudo-path under the cwd
        ("C:\\work\\<frozen runpy>", False),
        ("/home/me/project/<string>", False),
        ("/home/me/project/<stdin>", False),
        ("<ipython-input-3-5d7c1e2a9f>", False),
        ("/home/me/<ipython-input-3-5d7c1e2a9f>", False),
        ("/home/me/project/<weird>.py", True),
        ("", False),
    ],
)
def test_user_code_classifier(path, user):
    assert is_user_path(path) is user
