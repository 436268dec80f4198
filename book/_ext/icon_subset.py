"""Sphinx extension: the theme's Font Awesome script holds only the icons the site shows.

pydata-sphinx-theme loads Font Awesome 6's whole icon set on every page as one script,
_static/scripts/fontawesome.js (1.49 MB, about 2,000 icons, 95% of it their outlines); the
book shows about 20 (the menu, search, the download and launch buttons, the colour-mode
switch). Issue 43, item 4: a chapter page should weigh at most about 2 MB, and this file was
the largest on every page without widgets. When the build has finished, this rewrites the
built copy with every icon that no page, script or style sheet of the site names (as
`fa-<name>`, by its name or one of its aliases) taken out; the script's code is untouched.

An icon named only at run time under a computed name would be lost; the theme names its own
(the search dialog's `fa-xmark`, say) literally, so the scan of its scripts finds them.
"""
import re
from pathlib import Path

from sphinx.util import logging

SCRIPT = Path("_static") / "scripts" / "fontawesome.js"

# One icon of the script's tables: "name":[width,height,[unicode and alias names],"hex",path],
# the path one string or, for duotone icons, an array of strings.
ICON = re.compile(r'(?P<sep>[{,])(?P<key>"[a-z0-9-]+"|[a-z0-9_$]+):\[\d+,\d+,\[(?P<aliases>[^\]]*)\],"[0-9a-f]+",'
                  r'(?:"[^"]*"|\[(?:"[^"]*",?)*\])\]')
NAMED = re.compile(r"\bfa-([a-z0-9-]+)")


def names_used(html_root, skip):
    """Every `fa-<name>` written in the site's pages and in the theme's and Sphinx's scripts
    (_static/*.js, _static/scripts/*.js) but `skip`. The widget manager (_static/widgets) is
    left out: it draws its icons with Font Awesome 5's own font and style sheet, which names
    every icon there is, and not with this script."""
    root = Path(html_root)
    files = [p for p in root.rglob("*.html") if "_static" not in p.relative_to(root).parts]
    files += [p for p in (*root.glob("_static/*.js"), *root.glob("_static/scripts/*.js")) if p != skip]
    used = set()
    for path in files:
        used.update(NAMED.findall(path.read_text(errors="replace")))
    return used


def subset(script, used):
    """The script with the icons whose name and aliases are all outside `used` removed; and
    how many were kept and removed."""
    kept = removed = 0
    pieces, at, opened = [], 0, False   # opened: a table's first entries were removed
    for m in ICON.finditer(script):
        names = {m["key"].strip('"')} | set(re.findall(r'"([a-z0-9-]+)"', m["aliases"]))
        if names & used:
            kept += 1
            continue
        removed += 1
        pieces.append(_between(script[at:m.start()], opened))
        # An entry goes with the comma before it; the first of a table keeps its brace, and
        # the next entry kept loses its comma.
        opened = m["sep"] == "{" or (opened and not pieces[-1])
        if m["sep"] == "{":
            pieces.append("{")
        at = m.end()
    pieces.append(_between(script[at:], opened))
    return "".join(pieces), kept, removed


def _between(text, opened):
    return text[1:] if opened and text.startswith(",") else text


def trim(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    path = Path(app.outdir) / SCRIPT
    if not path.is_file():
        return
    script = path.read_text()
    trimmed, kept, removed = subset(script, names_used(app.outdir, path))
    # The source map describes the whole script: a debugger that fetched it would be misled.
    path.write_text(re.sub(r"\n//# sourceMappingURL=\S+\s*$", "\n", trimmed))
    logging.getLogger(__name__).info(f"icon_subset: {SCRIPT}: {kept} icons kept, {removed} removed, "
                                     f"{len(script) / 1e6:.2f} -> {len(trimmed) / 1e6:.2f} MB")


def setup(app):
    app.connect("build-finished", trim)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
