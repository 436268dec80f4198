"""A whole program's own headers and included .cu files, inlined into its CUDA unit.

The front end reads kernels and launches in the program's source only (its edits are to that
text), and programs often keep their kernels in a file the main unit #includes ("kernel.cu").
So on the CPU runtime each quoted #include that names a file of the program's own folders (the
unit's folder, then the -I folders, as the compiler searches them) is replaced by that file's
text, recursively; #include <...> and files found nowhere there (the CUDA headers) stay as
written. The result is what the compiler's preprocessor would read, one file long, and line
numbers in messages count lines of it: each message quotes its line, so it reads the same.
A header with #pragma once is inlined at its first #include only, as the preprocessor does.
"""
import os
import re

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', re.M)
PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once\b[^\n]*$", re.M)


def inline(text, folder, include_dirs):
    """`text` (a unit in `folder`) with its local quoted #includes inlined."""
    return _inline(text, folder, list(include_dirs), set(), ())


def _inline(text, folder, include_dirs, once, stack):
    def replace(match):
        path = _find(match.group(1), [folder, *include_dirs])
        if path is None or path in stack:
            return match.group(0)   # a system header, or an include cycle (left to the guards)
        if path in once:
            return ""
        body = _read(path)
        if PRAGMA_ONCE.search(body):
            once.add(path)
            body = PRAGMA_ONCE.sub("", body)
        inner = _inline(body, os.path.dirname(path), include_dirs, once, (*stack, path))
        return inner if inner.endswith("\n") else inner + "\n"
    return INCLUDE.sub(replace, text)


def _find(name, folders):
    for folder in folders:
        path = os.path.realpath(os.path.join(folder, name))
        if os.path.isfile(path):
            return path
    return None


def _read(path):
    with open(path, errors="replace") as f:
        return f.read()
