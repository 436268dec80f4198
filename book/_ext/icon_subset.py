"""Sphinx extension: the theme's Font Awesome script holds only the icons the site shows.

pydata-sphinx-theme loads Font Awesome 6's whole icon set on every page as one script,
_static/scripts/fontawesome.js (1.49 MB, about 2,000 icons, 95% of it their outlines); the
book shows about 20 (the menu, search, the download and launch buttons, the colour-mode
switch). A chapter page should weigh at most about 2 MB, and this file was the
largest on every page without widgets. When the build has finished, this rewrites the
built copy with every icon that no page, script or style sheet of the site names (as
`fa-<name>`, by its name or one of its aliases) taken out; the script's code is untouched.

An icon named only at run time under a computed name would be lost; the theme names its own
(the search dialog's `fa-xmark`, say) literally, so the scan of its scripts finds them.

The theme's style sheet also draws a few icons with Font Awesome's fonts (the breadcrumbs'
chevrons, the admonitions' bells, the GitHub mark: its --pst-icon-* variables), so a page
loaded fa-solid-900.woff2 and fa-brands-400.woff2, 0.27 MB of about 2,000 glyphs. Those fonts
are cut the same way (fontTools, which matplotlib installs): each keeps the glyphs of the
characters the site's style sheets put in a `content` (an icon class's only if the site
names the icon), and is written as WOFF (zlib; fontTools writes WOFF2 only with brotli,
which the book does not install), which the style sheet's @font-face now names first.
"""
import re
from pathlib import Path

from sphinx.util import logging

SCRIPT = Path("_static") / "scripts" / "fontawesome.js"
THEME_CSS = Path("_static") / "styles" / "pydata-sphinx-theme.css"
WEBFONTS = "../vendor/fontawesome/webfonts/"    # as the style sheet names them
# An icon class's rule in the theme's style sheet: .fa-bars:before,.fa-navicon:before{content:"\f0c9"}
ICON_RULE = re.compile(r'(?P<names>(?:\.fa-[a-z0-9-]+:{1,2}before,?)+)\{content:"(?P<char>[^"]*)"\}')
# A character of Font Awesome's (Unicode's private use areas), written as itself or escaped.
PRIVATE = re.compile(r"\\([0-9a-fA-F]{4,6})|([\ue000-\uf8ff\U000f0000-\U0010ffff])")
FONT_FACE = re.compile(r'src:url\(' + re.escape(WEBFONTS) + r'(?P<name>[a-z0-9-]+)\.woff2\) format\("woff2"\)')

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


def characters(text):
    """Font Awesome's characters in a piece of CSS."""
    found = set()
    for escaped, raw in PRIVATE.findall(text):
        code = int(escaped, 16) if escaped else ord(raw)
        if 0xE000 <= code <= 0xF8FF or code >= 0xF0000:
            found.add(code)
    return found


def characters_used(html_root, used):
    """The characters the site's style sheets draw with Font Awesome's fonts: every one in
    their rules but the icon classes' (.fa-<name>:before), and those of the classes whose
    icon the site names."""
    root = Path(html_root)
    codes = set()
    for path in [*root.glob("_static/*.css"), *root.glob("_static/styles/*.css")]:
        css = path.read_text(errors="replace")
        for m in ICON_RULE.finditer(css):
            if set(re.findall(r"\.fa-([a-z0-9-]+):", m["names"])) & used:
                codes |= characters(m["char"])
        codes |= characters(ICON_RULE.sub("", css))
    return codes


def cut_fonts(html_root, used):
    """The theme's Font Awesome fonts cut to the characters used, as WOFF beside them, and
    the style sheet pointed at those; (fonts cut, bytes before, bytes after)."""
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont
    root = Path(html_root)
    css_path = root / THEME_CSS
    if not css_path.is_file():
        return 0, 0, 0
    css = css_path.read_text()
    codes = characters_used(root, used)
    folder = (css_path.parent / WEBFONTS).resolve()
    count = before = after = 0
    for name in sorted(set(FONT_FACE.findall(css))):
        source = folder / f"{name}.ttf"
        if not source.is_file():
            continue
        font = TTFont(source)
        keep = codes & set(font.getBestCmap() or {})
        options = ft_subset.Options()
        options.flavor = "woff"
        options.layout_features = ["*"]
        subsetter = ft_subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(keep))
        subsetter.subset(font)
        target = folder / f"{name}.woff"
        font.flavor = "woff"
        font.save(target)
        count += 1
        before += (folder / f"{name}.woff2").stat().st_size if (folder / f"{name}.woff2").is_file() else 0
        after += target.stat().st_size
    css = FONT_FACE.sub(lambda m: f'src:url({WEBFONTS}{m["name"]}.woff) format("woff")', css)
    css_path.write_text(css)
    return count, before, after


def trim_fonts(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    count, before, after = cut_fonts(app.outdir, names_used(app.outdir, None))
    logging.getLogger(__name__).info(f"icon_subset: {count} Font Awesome fonts cut to the characters the "
                                     f"style sheets draw, {before / 1e6:.2f} -> {after / 1e6:.3f} MB (WOFF)")


def setup(app):
    app.connect("build-finished", trim)
    app.connect("build-finished", trim_fonts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
