"""Boundary: object keys from a bucket someone else writes (docs/THREAT_MODEL.md). Keys with an empty, '.' or '..'
segment are refused by the one listing every remote reader uses (dumps and capsules), named in a notice, and the local
copy checks each path at the point of writing. The moto cases (report, capsule.load, replay's copy) are in
tests/test_capsule_remote.py."""

from __future__ import annotations

import os

import pytest

from tensorboard_plugin_dbg.index.catalog import Catalog
from tensorboard_plugin_dbg.reader import capsule_remote, file_sets, storage
from tensorboard_plugin_dbg.reader.storage import backends, listing


@pytest.mark.parametrize(
    ("rel", "unsafe"),
    [
        ("run/tfdbg_events.1.h.metadata", False),
        ("a..b/c.", False),
        ("../x", True),
        ("a/../../x", True),
        ("a/./x", True),
        ("a//x", True),
        ("/abs", True),
        ("a/b/..", True),
        ("a\0b", True),
    ],
)
def test_unsafe_keys_are_those_with_empty_dot_or_dot_dot_segments(rel, unsafe):
    assert listing.unsafe_key(rel) is unsafe


def test_the_local_copy_never_writes_outside_its_root(tmp_path):
    root = str(tmp_path / "copy")
    os.makedirs(root)
    assert capsule_remote.inside(root, "cap/manifest.json") == os.path.join(root, "cap", "manifest.json")
    for rel in ("../escaped", "cap/../../escaped", "/etc/passwd", "cap//x"):
        with pytest.raises(PermissionError, match="refused"):
            capsule_remote.inside(root, rel)
    os.symlink(str(tmp_path), os.path.join(root, "link"))  # a link inside the root pointing out of it
    with pytest.raises(PermissionError, match="outside"):
        capsule_remote.inside(root, "link/escaped")


def test_dump_keys_with_dot_dot_segments_are_a_notice_never_a_run():
    """A remote logdir whose listing holds dump files under `logdir/../other/`: no run made of them, a warning that
    names the key (the same rule as the capsules' copy)."""
    fs = backends.make_fs("memory")
    logdir = "memory://untrusted-keys/logs"
    good = f"{logdir}/run/tfdbg_events.1700000000.host.metadata"
    bad = f"{logdir}/../other/tfdbg_events.1700000001.host.metadata"
    for url in (good, bad):
        fs.pipe_file(url, b"")
    try:
        storage.forget()
        found = file_sets.find_remote_file_sets(logdir)
        assert [fs_.directory for fs_ in found] == [storage.join(storage.normalize(logdir), "run")]
        assert storage.refused_keys(logdir) == [storage.normalize(bad)]
        catalog = Catalog(logdir, first_pass=False)
        catalog.refresh()
        notices = [n for n in catalog.notices() if "refused" in n["message"]]
        assert len(notices) == 1 and "'../other/tfdbg_events.1700000001.host.metadata'" in notices[0]["message"]
        assert [r.name for r in catalog.runs()] == ["run"]
    finally:
        fs.rm("memory://untrusted-keys", recursive=True)
        storage.forget()
