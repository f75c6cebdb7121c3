"""The session's $HOME check (tests/home_hygiene.py, used by conftest's LEFT BEHIND): a tool's new configuration or
cache in the home folders is named once, under its topmost new folder; what was there before is not."""

from __future__ import annotations

import os

import home_hygiene


def _touch(path) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").close()


def test_new_configs_and_caches_in_home_are_named_once(tmp_path):
    _touch(tmp_path / ".config" / "pip" / "pip.conf")
    _touch(tmp_path / ".cache" / "pip" / "http" / "a" / "b" / "deep")
    _touch(tmp_path / "work" / "notes.txt")  # not a tool's folder: not watched
    before = home_hygiene.entries(str(tmp_path))
    _touch(tmp_path / ".keras" / "keras.json")  # Keras on import
    _touch(tmp_path / ".config" / "chromium" / "Crash Reports" / "settings.dat")  # Chromium's crash database
    _touch(tmp_path / ".cache" / "dconf" / "user")
    _touch(tmp_path / ".config" / "pip" / "other.conf")
    _touch(tmp_path / ".cache" / "pip" / "http" / "a" / "b" / "deeper")  # below DEPTH in a known folder: not listed
    _touch(tmp_path / "work" / "more.txt")
    assert home_hygiene.new_since(before, str(tmp_path)) == [
        str(tmp_path / ".cache" / "dconf"),
        str(tmp_path / ".config" / "chromium"),
        str(tmp_path / ".config" / "pip" / "other.conf"),
        str(tmp_path / ".keras"),
    ]


def test_nothing_new_is_nothing_named(tmp_path):
    _touch(tmp_path / ".keras" / "keras.json")
    before = home_hygiene.entries(str(tmp_path))
    with open(tmp_path / ".keras" / "keras.json", "w") as f:
        f.write("{}")  # rewritten, not new
    assert home_hygiene.new_since(before, str(tmp_path)) == []


def test_keras_writes_its_config_into_the_sessions_folder_not_home():
    """Keras writes keras.json on import, and TensorFlow imports it (the oracles, tf.distribute, every program a
    test runs): the session points it, and Chromium's and the XDG caches, into its own temporary folder."""
    import subprocess
    import sys
    import tempfile

    import dumps

    session = tempfile.gettempdir()
    for var in ("KERAS_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        assert os.environ[var].startswith(session + os.sep), (var, os.environ[var], session)
    before = home_hygiene.entries()
    subprocess.run([sys.executable, "-c", "import keras"], env=dumps.env_for_tf(), check=True, timeout=300)
    assert os.path.exists(os.path.join(os.environ["KERAS_HOME"], "keras.json"))
    assert not home_hygiene.new_since(before)
