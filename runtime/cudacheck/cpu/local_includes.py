"""A whole program's own headers and included .cu files, inlined into its CUDA unit.

The front end reads kernels and launches in the program's source only (its edits are to that
text), and programs often keep their kernels in a file the main unit #includes ("kernel.cu").
So on the CPU runtime each quoted #include that names a file of the program's own folders (the
unit's folder, then the -I folders, as the compiler searches them) is replaced by that file's
text, recursively; #include <...> and files found nowhere there (the CUDA headers) stay as
written. The result is what the compiler's preprocessor would read, one file long, and line
numbers in messages count lines of it: each message quotes its line, so it reads the same.
A header with #pragma once is inlined at its first #include only, as the preprocessor does.

A program of several CUDA units (joined) is compiled as one translation unit, the units in the
order given: nvcc compiles each on its own and links them, and the CPU runtime's front end reads
one source. What differs: two units' file-scope `static` names or types of one name clash (a
compile error where nvcc compiles each), and a macro one unit's headers define is visible to the
later units (a macro the unit's own text defines is #undef'd after it).
"""
import os
import re

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', re.M)
PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once\b[^\n]*$", re.M)


def inline(text, folder, include_dirs):
    """`text` (a unit in `folder`) with its local quoted #includes inlined."""
    return _inline(text, folder, list(include_dirs), set(), (), set())


# A macro a unit's own text defines (not its headers'), which must not reach the next unit.
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)


def joined(units, include_dirs):
    """Several CUDA units [(text, folder)], as one: each with its local #includes inlined, in
    the order given, and after each an #undef of every macro its own text defines, so that a
    later unit sees none of them, as it would compiled on its own. A header the units share is
    read once, at its first #include (its include guard or #pragma once skips it after), its
    declarations then in sight of the later units as they would be through their own #include
    (and a header without a guard, which each unit compiled alone reads once, is read once too)."""
    once, parts = set(), []
    for text, folder in units:
        own = sorted(set(DEFINE.findall(text)))
        read = set()
        body = _inline(text, folder, list(include_dirs), set(once), (), read)
        once |= read
        parts.append(body + ("" if body.endswith("\n") else "\n") + "".join(f"#undef {m}\n" for m in own))
    return "".join(parts)


def _inline(text, folder, include_dirs, once, stack, read):
    """`text` with its local #includes inlined; `once`: the files not to read again (#pragma
    once, or read by an earlier unit); `read` gathers the files read."""
    def replace(match):
        path = _find(match.group(1), [folder, *include_dirs])
        if path is None or path in stack:
            return match.group(0)   # a system header, or an include cycle (left to the guards)
        if path in once:
            return ""
        read.add(path)
        body = _read(path)
        if PRAGMA_ONCE.search(body):
            once.add(path)
            body = PRAGMA_ONCE.sub("", body)
        inner = _inline(body, os.path.dirname(path), include_dirs, once, (*stack, path), read)
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
