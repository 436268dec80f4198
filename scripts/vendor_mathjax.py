"""Re-vendor MathJax 3 into book/_static/mathjax/, reproducibly.

The site serves its own copy of MathJax so that math is typeset offline (see
book/_static/mathjax/README.md). This script fetches one pinned release with the npm
client (`npm pack`, from the npm registry), checks the tarball against the pinned
SHA-512 (the registry's `dist.integrity`), and replaces book/_static/mathjax/ with
exactly the files the pages load:

- es5/tex-chtml.js: the TeX input + CommonHTML output component (with the menu);
- es5/output/chtml/fonts/woff-v2/*.woff: the fonts CommonHTML asks for, relative to
  that script ([mathjax]/output/chtml/fonts/woff-v2);
- the same MathJax in parts, under parts/, for the site's pages, which load it only when a
  formula comes near the window (book/_static/mathjax-on-demand.js): startup.js (the loader),
  core.js, input/tex.js, output/chtml.js, output/chtml/fonts/tex.js and a11y/assistive-mml.js,
  0.75 MiB where tex-chtml.js is 1.1 MiB (its context menu, ui/menu.js, is 0.4 MiB of it);
  they take their fonts from the woff-v2 folder above (chtml.fontURL);
- LICENSE (Apache-2.0), as the licence asks.

Usage:  python scripts/vendor_mathjax.py            (needs npm on PATH)
To move to another 3.x release, change VERSION and INTEGRITY (npm view mathjax@X dist.integrity).
"""
import vendoring

VERSION = "3.2.2"
INTEGRITY = "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
# Paths inside the tarball (under package/) -> paths under book/_static/mathjax/.
KEEP = {"es5/tex-chtml.js": "tex-chtml.js", "LICENSE": "LICENSE"}
PARTS = ("startup.js", "core.js", "input/tex.js", "output/chtml.js", "output/chtml/fonts/tex.js",
         "a11y/assistive-mml.js")
KEEP.update({f"es5/{part}": f"parts/{part}" for part in PARTS})
KEEP_DIRS = {"es5/output/chtml/fonts/woff-v2/": "output/chtml/fonts/woff-v2/"}

DEST = vendoring.ROOT / "book" / "_static" / "mathjax"


def target_of(name):
    """Where a file of the tarball goes under DEST, if it is kept."""
    for src, dst in KEEP_DIRS.items():
        if name.startswith(src):
            return dst + name[len(src):]
    return KEEP.get(name)


def main():
    files = vendoring.fetch("mathjax", VERSION, INTEGRITY, target_of)
    vendoring.require(files, KEEP.values(), "the woff-v2 fonts")
    vendoring.replace(DEST, files, f"MathJax {VERSION}")


if __name__ == "__main__":
    main()
