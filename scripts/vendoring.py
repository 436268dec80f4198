"""What scripts/vendor_mathjax.py and scripts/vendor_revealjs.py share: one pinned release of
an npm package fetched with the npm client (`npm pack`, from the npm registry), its tarball
checked against the pinned SHA-512 (the registry's `dist.integrity`), the files the site
loads taken out of it, and a folder of book/_static/ replaced by exactly those files (its
README.md, which says where they come from, kept). The site then serves them itself, and
works offline.
"""
import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fetch(package, version, integrity, target_of):
    """{path under the vendored folder: bytes} of `package`@`version`'s tarball: each regular
    file whose name in it (less its package/ prefix) `target_of` maps to a path (None: left
    out). Exits with the reason if the tarball's digest is not `integrity`."""
    with tempfile.TemporaryDirectory(prefix=f"{package}-") as tmp:
        subprocess.run(["npm", "pack", f"{package}@{version}", "--pack-destination", tmp],
                       check=True, capture_output=True, text=True)
        tarball = Path(tmp) / f"{package}-{version}.tgz"
        digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if digest != integrity:
            sys.exit(f"{tarball.name}: integrity {digest}, expected {integrity}")
        files = {}
        with tarfile.open(tarball) as tar:
            for member in tar.getmembers():
                target = target_of(member.name.removeprefix("package/"))
                if target and member.isfile():
                    files[target] = tar.extractfile(member).read()
    return files


def require(files, targets, fonts):
    """Exits unless `files` holds every path of `targets` and a .woff font (`fonts`: what the
    message calls them)."""
    missing = [t for t in targets if t not in files]
    if missing or not any(t.endswith(".woff") for t in files):
        sys.exit(f"not in the tarball: {missing or fonts}")


def replace(dest, files, what):
    """`dest` (a folder of the repository) replaced by exactly `files`, its README.md kept;
    prints `what` was put there and how much."""
    readme = dest / "README.md"
    kept_readme = readme.read_bytes() if readme.is_file() else None
    shutil.rmtree(dest, ignore_errors=True)
    for target, data in sorted(files.items()):
        path = dest / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if kept_readme is not None:
        readme.write_bytes(kept_readme)
    total = sum(len(d) for d in files.values())
    print(f"{what}: {len(files)} files, {total / 1024:.0f} KiB into {dest.relative_to(ROOT)}")
