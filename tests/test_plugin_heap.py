"""The plugin keeps TensorBoard's startup heap out of the garbage collector's full passes (plugin.freeze_startup_heap)."""

from __future__ import annotations

import gc

from tensorboard.plugins import base_plugin

from tensorboard_plugin_dbg.plugin import DbgPlugin, NoLogdirCatalog


def test_the_plugin_takes_the_startup_heap_out_of_the_collectors_sight(tmp_path):
    """A full collection walked TensorBoard's and TensorFlow's ~340 K startup objects with the GIL held (~200 ms,
    every request waiting). The plugin freezes what exists when it is made, and again when its catalog is."""
    made_before = [object()]  # a tracked container: frozen by the constructor
    before = gc.get_freeze_count()
    plugin = DbgPlugin(base_plugin.TBContext(logdir=str(tmp_path)), catalog_factory=lambda _: NoLogdirCatalog())
    after_init = gc.get_freeze_count()
    assert after_init > before
    made_between = [object()]  # frozen when the catalog is made
    plugin.catalog()
    assert gc.get_freeze_count() > after_init
    assert made_before and made_between  # both alive until the counts were taken
