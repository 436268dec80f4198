"""The disk cache (cudacheck.config.cache_dir), as its three users share it: the CPU
runtime's compiled libraries and objects with g++'s precompiled header (cpu/compiler.py),
and the front end's results with clang's precompiled header (frontend/libclang.py). A file is named
by a digest of everything that goes into it, and written whole or not at all.
"""
import contextlib
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

from .config import config


def digest(*parts):
    """The name a cache file takes from everything that goes into it."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:40]


def path(name, folder=None):
    """The file `name` in the cache (in its subfolder `folder`)."""
    root = Path(config.cache_dir)
    return root / folder / name if folder else root / name


def write(target, make):
    """Make `target` with make(tmp, out), `tmp` a scratch folder beside it and `out` the file
    to write, then rename `out` to `target` in one step, so that a reader never sees half a
    file. Returns target, or None (and nothing is written) where make returns False."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        out = Path(tmp) / f"out{''.join(target.suffixes)}"
        if make(Path(tmp), out) is False:
            return None
        os.replace(out, target)
    return target


def build_once(target, make, shared=False):
    """target, made by write(target, make) if missing, or None where make returns False.
    `shared`: a file every process needs first thing (the runtime's objects, the
    precompiled header), built once under a lock rather than by each."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _building(target) if shared else contextlib.nullcontext():
        if target.exists():   # built by another process while this one waited
            return target
        return write(target, make)


@contextlib.contextmanager
def _building(target):
    """Held while `target` is built: one process builds it, the others wait and then find it
    (an exclusive flock on a lock file beside it, released when the holder exits, however).
    Without it, N graders starting on a cold cache each built the runtime's objects."""
    with open(target.parent / f".{target.name}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
