"""The TensorBoard plugin: name `dbg`, tab "Debugger", an iframe-loaded ES module plus JSON routes.

TensorBoard loads the tab as `data/plugin_entry.html?name=dbg`, which sets `<base href="plugin/dbg/">` and imports
`./index.js` (our `es_module_path`), so the bundle fetches its routes relative to `/data/plugin/dbg/`.

TensorBoard constructs every plugin at startup, so the constructor does nothing costly: the catalog of runs is made
on first use (the first `is_active()` from `/data/plugins_listing`, or the first API request), once per plugin
instance, and its background refresher started then.

The Debugger reads TensorBoard's `--logdir`, or the place its own flag `--dbg_logdir URL` names (`DbgLoader`, the
entry point, defines it): a bucket (gs://, s3://, any fsspec URL: reader/storage) when TensorBoard's own reader cannot
read it (s3:// with TensorFlow installed), or to keep dumps apart from event files.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from tensorboard.plugins import base_plugin

from tensorboard_plugin_dbg import process_tuning, static_files
from tensorboard_plugin_dbg.api.app import ApiApp
from tensorboard_plugin_dbg.index.protocol import Catalog as CatalogProtocol
from tensorboard_plugin_dbg.index.protocol import NotFound, RunQueries
from tensorboard_plugin_dbg.wire.types import Notice

PLUGIN_NAME = "dbg"
# Not "Debugger" alone: TensorBoard's own "Debugger V2" stays registered (under "Inactive"), and a bare "Debugger"
# beside it reads as the older of the two. The suffix is the plugin's name, as in the URL (#dbg).
TAB_NAME = "Debugger (dbg)"


# How long a brand-new catalog's first is_active() waits for the refresher to discover file sets (a directory walk,
# normally milliseconds), so the first plugins listing does not hide the tab; later calls never wait.
FIRST_DISCOVERY_WAIT_S = 2.0


def _default_catalog_factory(logdir: str) -> CatalogProtocol:
    # Imported here: the index pulls in numpy and the reader, which TensorBoard startup should not pay for.
    from tensorboard_plugin_dbg.analysis import alerts
    from tensorboard_plugin_dbg.index.catalog import Catalog

    # first_pass=False: the first read pass runs on the refresher thread, not in the request that made the catalog
    # (a big logdir takes seconds; meanwhile `runs` reports status.done = false and what was read so far).
    # on_complete: roles and the root cause are built before a run reports done (analysis/alerts.py: warm).
    return Catalog(logdir, refresh_interval=1.0, first_pass=False, on_complete=alerts.warm)


class NoLogdirCatalog:
    """The catalog when TensorBoard runs without `--logdir` (e.g. `--logdir_spec`): no runs, and a notice why."""

    logdir = ""

    def start(self) -> None:
        pass

    def runs(self) -> list[RunQueries]:
        return []

    def run(self, name: str) -> RunQueries:
        raise NotFound(f"no run named {name!r}: TensorBoard was started without --logdir")

    def notices(self) -> list[Notice]:
        return [
            {
                "code": "no_dump_found",
                "severity": "info",
                "message": "TensorBoard was started without --logdir; the Debugger reads tfdbg2 dumps under it.",
            }
        ]

    def has_runs(self) -> bool:
        return False

    def has_capsules(self) -> bool:
        return False


class DbgPlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext, catalog_factory: Callable[[str], Any] | None = None):
        # --dbg_logdir (DbgLoader) wins over TensorBoard's --logdir; flags is None when constructed without them
        self._asked_for = getattr(context.flags, "dbg_logdir", "") or ""
        self._logdir = self._asked_for or context.logdir or ""
        self._factory = catalog_factory or _default_catalog_factory
        self._catalog: Any = None
        self._catalog_made_at = 0.0
        self._lock = threading.Lock()
        self._api = ApiApp(self.catalog)
        process_tuning.tune()

    def catalog(self) -> CatalogProtocol:
        """The plugin's one catalog, made and started on first call (thread-safe: requests run on many threads)."""
        catalog = self._catalog
        if catalog is None:
            with self._lock:
                if self._catalog is None:
                    made = self._factory(self._logdir) if self._logdir else NoLogdirCatalog()
                    made.start()
                    process_tuning.tune()  # covers what TensorBoard made after constructing the plugins
                    self._catalog_made_at = time.monotonic()
                    self._catalog = made
                catalog = self._catalog
        return catalog

    def get_plugin_apps(self) -> dict[str, Callable[..., Any]]:
        # `/*` sends every other path under /data/plugin/dbg/ to the API app, so an unknown route is a JSON 404
        # and not TensorBoard's plain-text one; TensorBoard tries longer prefixes (`/static/`) first.
        return {
            "/index.js": static_files.serve_static,
            "/static/*": static_files.serve_static,
            "/readme": static_files.serve_readme,  # the dashboard's `?` links it
            "/*": self._api,
        }

    def is_active(self) -> bool:
        # True exactly when the logdir holds at least one run, so the tab is shown (the reference plugin's tab
        # stayed in the "inactive" menu). has_runs() is cheap; TensorBoard calls this on every plugins listing.
        if not self._logdir:
            return False
        catalog = self.catalog()
        if self._asked_for:  # the user pointed the Debugger somewhere: its tab shows, with why it is empty if it is
            return True
        if catalog.has_capsules():  # a capsule folder, replayed or not: the Debugger opens on its card
            return True
        while not catalog.has_runs():
            if time.monotonic() >= self._catalog_made_at + FIRST_DISCOVERY_WAIT_S:
                return False
            time.sleep(0.02)
        return True

    def frontend_metadata(self) -> Any:  # base_plugin.FrontendMetadata (TensorBoard ships no types)
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name=TAB_NAME, disable_reload=True)


class DbgLoader(base_plugin.TBLoader):
    """The plugin's entry point: adds `--dbg_logdir` to TensorBoard's flags, then loads DbgPlugin."""

    def define_flags(self, parser: Any) -> None:  # an argparse parser (TensorBoard ships no types)
        parser.add_argument(
            "--dbg_logdir",
            metavar="URL",
            type=str,
            default="",
            help=(
                "Debugger (dbg) plugin: read tfdbg2 dumps here instead of under --logdir: a local folder or a URL "
                '(gs://, s3://, any fsspec URL; pip install "tensorboard-plugin-dbg[gcs]" or "[s3]").'
            ),
        )

    def load(self, context: base_plugin.TBContext) -> DbgPlugin:
        return DbgPlugin(context)
