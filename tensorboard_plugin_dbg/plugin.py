"""The TensorBoard plugin: name `dbg`, tab "Debugger", an iframe-loaded ES module plus JSON routes.

TensorBoard loads the tab as `data/plugin_entry.html?name=dbg`, which sets `<base href="plugin/dbg/">` and imports
`./index.js` (our `es_module_path`), so the bundle fetches its routes relative to `/data/plugin/dbg/`.
"""

from __future__ import annotations

from tensorboard.plugins import base_plugin

from tensorboard_plugin_dbg import static_files

PLUGIN_NAME = "dbg"
TAB_NAME = "Debugger"


class DbgPlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext):
        self._logdir = context.logdir or ""

    def get_plugin_apps(self):
        return {"/index.js": static_files.serve_static, "/static/*": static_files.serve_static}

    def is_active(self) -> bool:
        return True

    def frontend_metadata(self):
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name=TAB_NAME, disable_reload=True)
