"""Re-vendor MathJax 3 into book/_static/mathjax/, reproducibly.

The site serves its own copy of MathJax so that math is typeset offline (see
book/_static/mathjax/README.md). This script fetches one pinned release with the npm
client (`npm pack`, from the npm registry), checks the tarball against the pinned
SHA-512 (the registry's `dist.integrity`), and replaces book/_static/mathjax/ with
exactly the files the pages load:

- es5/tex-chtml.js: the TeX input + CommonHTML output component (with the menu);
- es5/output/chtml/fonts/woff-v2/*.woff: the fonts CommonHTML asks for, relative to
  that script ([mathjax]/output/chtml/fonts/woff-v2);
- LICENSE (Apache-2.0), as the licence asks.

Usage:  python scripts/vendor_mathjax.py            (needs npm on PATH)
To move to another 3.x release, change VERSION and INTEGRITY (npm view mathjax@X dist.integrity).
"""
import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "3.2.2"
INTEGRITY = "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
# Paths inside the tarball (under package/) -> paths under book/_static/mathjax/.
KEEP = {"es5/tex-chtml.js": "tex-chtml.js", "LICENSE": "LICENSE"}
KEEP_DIRS = {"es5/output/chtml/fonts/woff-v2/": "output/chtml/fonts/woff-v2/"}

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "book" / "_static" / "mathjax"


def main():
    with tempfile.TemporaryDirectory(prefix="mathjax-") as tmp:
        subprocess.run(["npm", "pack", f"mathjax@{VERSION}", "--pack-destination", tmp],
                       check=True, capture_output=True, text=True)
        tarball = Path(tmp) / f"mathjax-{VERSION}.tgz"
        digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if digest != INTEGRITY:
            sys.exit(f"{tarball.name}: integrity {digest}, expected {INTEGRITY}")
        files = {}
        with tarfile.open(tarball) as tar:
            for member in tar.getmembers():
                name = member.name.removeprefix("package/")
                target = KEEP.get(name)
                for src, dst in KEEP_DIRS.items():
                    if name.startswith(src) and member.isfile():
                        target = dst + name[len(src):]
                if target:
                    files[target] = tar.extractfile(member).read()
        missing = [k for k in KEEP if KEEP[k] not in files]
        if missing or not any(t.endswith(".woff") for t in files):
            sys.exit(f"not in the tarball: {missing or 'the woff-v2 fonts'}")
    readme = DEST / "README.md"
    kept_readme = readme.read_bytes() if readme.is_file() else None
    shutil.rmtree(DEST, ignore_errors=True)
    for target, data in sorted(files.items()):
        path = DEST / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if kept_readme is not None:
        readme.write_bytes(kept_readme)
    total = sum(len(d) for d in files.values())
    print(f"MathJax {VERSION}: {len(files)} files, {total / 1024:.0f} KiB into {DEST.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
