"""Sphinx extension: a page loads the widget manager when its reader reaches a widget.

myst-nb gives every page with a widget the widget manager (_static/widgets/require.js and
embed-amd.js, 3.7 MB as served, 0.9 MB gzipped) in its head, so a chapter with one widget
halfway down weighed 5.4-6.9 MB before the reader had scrolled (a page should weigh at
most about 2 MB). This swaps those two scripts for _static/widgets/on-demand.js (1 kB), which
loads them, in the same order and with the same attributes, when a widget's cell comes
within a screen of the window, or before the page is printed. The widget manager draws
every widget of the page once it has loaded (it renders on load when the page is complete),
so the first widget reached brings all of them.

The widgets' state (every model, with every state of every switch drawn at build time: up to
0.5 MB of a page, chapter 1's thread maps) goes the same way: it is written beside the page
(<page>.widgets.json) and its script in the page left empty, with the file's name in
data-src; on-demand.js fetches it into the script before the manager reads it.
"""
import os
from pathlib import Path

from sphinx.builders.html._assets import _JavaScript

MANAGER = ("widgets/require.js", "widgets/embed-amd.js")
LOADER = "_static/widgets/on-demand.js"   # (a script added in the page context is not put under _static/)
STATE_TYPE = "application/vnd.jupyter.widget-state+json"
STATE_SUFFIX = ".widgets.json"


def move_state(app, pagename, scripts):
    """The page's widget state into <page>.widgets.json beside the page; its script keeps
    the file's name (data-src, relative to the page)."""
    for i, js in enumerate(scripts):
        if js.filename or js.attributes.get("type") != STATE_TYPE or not js.attributes.get("body"):
            continue
        path = Path(app.outdir) / (pagename + STATE_SUFFIX)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(js.attributes["body"], encoding="utf-8")
        attributes = {k: v for k, v in js.attributes.items() if k != "body"}
        attributes["data-src"] = os.path.basename(pagename) + STATE_SUFFIX
        scripts[i] = _JavaScript(None, priority=js.priority, **attributes)


def load_on_demand(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    manager = [js for js in scripts if str(js.filename).endswith(MANAGER)]
    if len(manager) != len(MANAGER):
        return
    move_state(app, pagename, scripts)
    attributes = {}
    for js in manager:
        attributes.update(js.attributes)
        scripts.remove(js)
    scripts.append(_JavaScript(LOADER, priority=manager[0].priority, **attributes))


def setup(app):
    # After myst-nb's handler (priority 500), which adds the manager to the pages with widgets.
    app.connect("html-page-context", load_on_demand, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
