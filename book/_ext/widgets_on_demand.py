"""Sphinx extension: a page loads the widget manager when its reader reaches a widget.

myst-nb gives every page with a widget the widget manager (_static/widgets/require.js and
embed-amd.js, 3.7 MB as served, 0.9 MB gzipped) in its head, so a chapter with one widget
halfway down weighed 5.4-6.9 MB before the reader had scrolled (issue 43, item 4: at most
about 2 MB). This swaps those two scripts for _static/widgets/on-demand.js (1 kB), which
loads them, in the same order and with the same attributes, when a widget's cell comes
within a screen of the window, or before the page is printed. The widget manager draws
every widget of the page once it has loaded (it renders on load when the page is complete),
so the first widget reached brings all of them.
"""
from sphinx.builders.html._assets import _JavaScript

MANAGER = ("widgets/require.js", "widgets/embed-amd.js")
LOADER = "_static/widgets/on-demand.js"   # (a script added in the page context is not put under _static/)


def load_on_demand(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    manager = [js for js in scripts if str(js.filename).endswith(MANAGER)]
    if len(manager) != len(MANAGER):
        return
    attributes = {}
    for js in manager:
        attributes.update(js.attributes)
        scripts.remove(js)
    scripts.append(_JavaScript(LOADER, priority=manager[0].priority, **attributes))


def setup(app):
    # After myst-nb's handler (priority 500), which adds the manager to the pages with widgets.
    app.connect("html-page-context", load_on_demand, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
