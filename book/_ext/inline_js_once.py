"""Sphinx extension: write each inline <script> into a page once.

Sphinx 7.4 (the series Jupyter Book 1 requires) writes inline scripts that extensions
add after the builder has started into every page twice (sphinx-doc/sphinx#13402,
fixed in Sphinx 8.2). sphinx-thebe's inline script declares a `const`, so the second
copy is a JavaScript SyntaxError on every page. Passing "" instead of None as the file
name of an inline script takes the path that Sphinx deduplicates."""
from sphinx.builders.html import StandaloneHTMLBuilder

_add_js_file = StandaloneHTMLBuilder.add_js_file


def _add_js_file_once(self, filename, **kwargs):
    return _add_js_file(self, filename or "", **kwargs)


def setup(app):
    StandaloneHTMLBuilder.add_js_file = _add_js_file_once
    return {"parallel_read_safe": True, "parallel_write_safe": True}
