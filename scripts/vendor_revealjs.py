"""Re-vendor reveal.js into book/_static/revealjs/, reproducibly.

The slides (scripts/build_slides.py) are served with the site and load nothing from
another host: reveal.js comes from the site's own copy, as MathJax does (see
book/_static/revealjs/README.md). This script fetches one pinned release with the npm
client (`npm pack`, from the npm registry), checks the tarball against the pinned SHA-512
(the registry's `dist.integrity`), and replaces book/_static/revealjs/ with exactly the
files the decks load:

- dist/reveal.js, dist/reveal.css: reveal.js itself (UMD: it sets window.Reveal);
- dist/theme/white.css and the Source Sans Pro fonts it imports, as WOFF only (every
  browser that runs reveal.js 5 reads WOFF; the font sheet is rewritten to name only
  those files, so that no request goes to a file that is not there);
- plugin/notes/notes.js: the speaker view (the answers of the questions for the room);
- LICENSE (MIT) and the fonts' LICENSE (SIL OFL), as the licences ask.

Usage:  python scripts/vendor_revealjs.py            (needs npm on PATH)
To move to another release, change VERSION and INTEGRITY (npm view reveal.js@X dist.integrity).
"""
import re
import sys
from pathlib import Path

import vendoring

VERSION = "5.2.1"
INTEGRITY = "sha512-r7//6mIM5p34hFiDMvYfXgyjXqGRta+/psd9YtytsgRlrpRzFv4RbH76TXd2qD+7ZPZEbpBDhdRhJaFgfQ7zNQ=="
FONTS = "dist/theme/fonts/source-sans-pro/"
# Paths inside the tarball (under package/) -> paths under book/_static/revealjs/.
KEEP = {"dist/reveal.js": "dist/reveal.js", "dist/reveal.css": "dist/reveal.css",
        "dist/theme/white.css": "dist/theme/white.css", "plugin/notes/notes.js": "plugin/notes/notes.js",
        "LICENSE": "LICENSE", FONTS + "LICENSE": FONTS + "LICENSE",
        FONTS + "source-sans-pro.css": FONTS + "source-sans-pro.css"}
KEEP_FONTS = re.compile(re.escape(FONTS) + r"[\w-]+\.woff$")

DEST = vendoring.ROOT / "book" / "_static" / "revealjs"


def woff_only(css):
    """The font sheet with each @font-face's sources cut down to its WOFF file."""
    def face(m):
        woff = re.search(r"url\((['\"]?)([^)'\"]+\.woff)\1\)", m.group(0))
        body = re.sub(r"\s*src:[^;]*;", "", m.group(1))
        return f"@font-face {{{body}\n    src: url('{woff.group(2)}') format('woff');\n}}"
    out, n = re.subn(r"@font-face\s*\{([^}]*)\}", face, css)
    if not n:
        sys.exit("source-sans-pro.css: no @font-face found")
    return out


def main():
    files = vendoring.fetch("reveal.js", VERSION, INTEGRITY,
                            lambda name: KEEP.get(name) or (name if KEEP_FONTS.match(name) else None))
    vendoring.require(files, KEEP.values(), "the WOFF fonts")
    sheet = FONTS + "source-sans-pro.css"
    files[sheet] = woff_only(files[sheet].decode()).encode()
    named = {Path(u).name for u in re.findall(r"url\('([^')]+)'\)", files[sheet].decode())}
    if named != {Path(t).name for t in files if t.endswith(".woff")}:
        sys.exit(f"{sheet} names {sorted(named)}, not the WOFF files kept")
    vendoring.replace(DEST, files, f"reveal.js {VERSION}")


if __name__ == "__main__":
    main()
