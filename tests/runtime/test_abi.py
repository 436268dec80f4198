"""The C++/Python boundary is declared once (include/kc_abi.h, include/kc_host_abi.h): the
Python side's ctypes structures and constants are built from those headers by clang
(cudacheck.cpu.abi). Here a probe compiled by the runtime's own compiler prints the size and
alignment of every structure and the offset and size of every field, as g++ lays them out,
and every constant's value: each must equal the Python side's."""
import ctypes
import re
import shutil
import subprocess

import pytest

import cudacheck
from cudacheck.cpu import abi


def test_every_struct_of_the_headers_is_read():
    declared = set()
    for header in abi.HEADERS:
        declared |= set(re.findall(r"^struct (\w+) \{", (abi.INCLUDE_DIR / header).read_text(), re.M))
    assert declared == set(abi.STRUCTS)
    assert all(ctypes.sizeof(s) > 0 and s._fields_ for s in abi.STRUCTS.values())


def test_the_package_declares_no_other_copy_of_them():
    """Only device_memory.py defines a structure of its own (the ledger the caller and the
    program's child share, which C++ never sees); the rest come from abi."""
    package = abi.INCLUDE_DIR.parent
    defining = {p.relative_to(package).as_posix() for p in package.rglob("*.py")
                if re.search(r"^class \w+\(ctypes\.Structure\)", p.read_text(), re.M)}
    assert defining <= {"device_memory.py"}


def _probe():
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "kc_abi.h"', '#include "kc_host_abi.h"',
             "int main() {"]
    for name, struct in abi.STRUCTS.items():
        lines.append(f'    printf("{name} - %zu %zu\\n", sizeof(kc::{name}), alignof(kc::{name}));')
        for field, _ in struct._fields_:
            lines.append(f'    printf("{name} {field} %zu %zu\\n", offsetof(kc::{name}, {field}), '
                         f"sizeof(kc::{name}::{field}));")
    for name in abi.CONSTANTS:
        lines.append(f'    printf("= {name} %lld\\n", (long long)kc::{name});')
    return "\n".join(lines + ["}"]) + "\n"


@pytest.mark.skipif(shutil.which(cudacheck.config.cxx) is None, reason="needs the CPU runtime's C++ compiler")
def test_layouts_match_the_compilers(tmp_path):
    src, exe = tmp_path / "probe.cpp", tmp_path / "probe"
    src.write_text(_probe())
    subprocess.run([cudacheck.config.cxx, "-std=c++17", f"-I{abi.INCLUDE_DIR}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    compiled, constants = {}, {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        if line.startswith("= "):
            _, name, value = line.split()
            constants[name] = int(value)
        else:
            struct, field, a, b = line.split()
            compiled[struct, field] = (int(a), int(b))
    python = {}
    for name, struct in abi.STRUCTS.items():
        python[name, "-"] = (ctypes.sizeof(struct), ctypes.alignment(struct))
        for field, _ in struct._fields_:
            python[name, field] = (getattr(struct, field).offset, getattr(struct, field).size)
    assert python == compiled
    assert abi.CONSTANTS == constants

