"""The C++/Python boundary is declared once (src/kc_abi.h, src/kc_host_abi.h): the
Python side's ctypes structures and constants, and the types of the library functions it
calls, are built from those headers by clang (cudacheck.cpu.abi). Here a probe compiled by
the runtime's own compiler prints the size and alignment of every structure and the offset
and size of every field, as g++ lays them out, every constant's value, and every entry
point's result and parameters: each must equal the Python side's. And every function the
package calls, or a library exports, has its prototype there."""
import ast
import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import cudacheck
from cudacheck.cpu import abi
from cudacheck.frontend import INCLUDE_DIR

needs_cxx = pytest.mark.skipif(shutil.which(cudacheck.config.cxx) is None,
                               reason="needs the CPU runtime's C++ compiler")


def test_every_struct_of_the_headers_is_read():
    declared = set()
    for header in abi.HEADERS:
        declared |= set(re.findall(r"^struct (\w+) \{", (abi.SRC_DIR / header).read_text(), re.M))
    assert declared == set(abi.STRUCTS)
    assert all(ctypes.sizeof(s) > 0 and s._fields_ for s in abi.STRUCTS.values())


def test_the_package_declares_no_other_copy_of_them():
    """Only device_memory.py defines a structure of its own (the ledger the caller and the
    program's child share, which C++ never sees); the rest come from abi."""
    package = abi.SRC_DIR.parent
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


@needs_cxx
def test_layouts_match_the_compilers(tmp_path):
    src, exe = tmp_path / "probe.cpp", tmp_path / "probe"
    src.write_text(_probe())
    subprocess.run([cudacheck.config.cxx, "-std=c++17", f"-I{abi.SRC_DIR}", str(src), "-o", str(exe)],
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



# ---- entry points: the functions of a library that the package calls ----------------------

PACKAGE = abi.SRC_DIR.parent

KERNEL = r'''
__device__ int counter;
extern "C" __global__ void bump(int* out) { out[0] = ++counter; }
'''
PROGRAM = r'''
#include <cstdio>
__global__ void one(int* x) { x[0] = 1; }
int main() {
    int *d, h = 0;
    cudaMalloc(&d, sizeof(int));
    one<<<1, 1>>>(d);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    printf("%d\n", h);
    return 0;
}
'''


def _bound():
    """Every name the package passes to abi.bind, with an f-string's fields as 0
    (f"kc_spawn_{i}": kc_spawn_0)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("abi.bind", "bind") and len(node.args) == 2:
                arg = node.args[1]
                assert isinstance(arg, (ast.Constant, ast.JoinedStr)), f"{path.name}: bind's name is not a literal"
                names.append(arg.value if isinstance(arg, ast.Constant) else
                             "".join(v.value if isinstance(v, ast.Constant) else "0" for v in arg.values))
    return names


def test_every_function_the_package_calls_is_declared():
    names = _bound()
    assert set(names) == {"kc_share_device_memory", "kc_device_var_0", "kc_spawn_0", "kc_cluster_0", "kc_spawn_body",
                          "kc_program_run", "kc_release_library"}
    for name in names:
        abi.entry_point(name)   # BoundaryError where no prototype declares it


def test_no_function_is_looked_up_or_typed_by_hand():
    """A library's functions are reached through abi.bind alone (system.py types the C
    library's own, abi.py the bound ones)."""
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"\blib\.kc_|getattr\(\s*(self\.)?lib\b", text), path.name
        if path.name not in ("abi.py", "system.py"):
            assert not re.search(r"\.(restype|argtypes)\s*=", text), path.name


def test_a_function_without_a_prototype_is_refused():
    with pytest.raises(abi.BoundaryError, match="kc_undeclared"):
        abi.bind(ctypes.CDLL(None), "kc_undeclared")
    with pytest.raises(abi.BoundaryError):
        abi.entry_point("kc_spawn_first")   # a family's members are numbered


def test_a_binding_is_typed_from_its_prototype():
    restype, argtypes = abi.entry_point("kc_spawn_7")
    assert (restype, argtypes) == abi.ENTRY_POINTS["kc_spawn_n"]
    assert restype is ctypes.c_int32 and argtypes == [ctypes.POINTER(abi.LaunchDesc), ctypes.POINTER(ctypes.c_int32)]
    # a parameter that points to the library's code is an address Python passes on
    assert abi.entry_point("kc_spawn_body")[1][0] is ctypes.c_void_p
    assert abi.entry_point("kc_device_var_0") == (ctypes.c_void_p, [])


@needs_cxx
@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_every_function_a_library_exports_is_declared(check):
    """What a kernel's library and a program's export is exactly what the headers declare:
    a function exported without a prototype would be called untyped."""
    from cudacheck.cpu import host
    module = cudacheck.RawModule(KERNEL, backend="cpu", check=check)
    libraries = {module.impl.path: {"kc_spawn_0", "kc_device_var_0", "kc_share_device_memory", "kc_release_library"},
                 host.build(PROGRAM, check=check).path: {"kc_program_run", "kc_spawn_body", "kc_share_device_memory"}}
    for path, expected in libraries.items():
        out = subprocess.run(["nm", "-D", "--defined-only", "--format=posix", str(path)], check=True,
                             capture_output=True, text=True).stdout
        exported = {name for name, kind, *_ in map(str.split, out.splitlines())
                    if kind == "T" and name.startswith("kc_")}
        assert exported == expected
        for name in exported:
            abi.entry_point(name)


def test_every_generated_function_is_declared_with_its_familys_type():
    """compiler.py's stubs declare each numbered function with its family's type before
    defining it, so that g++ refuses a definition that differs from the prototype."""
    from cudacheck.cpu import compiler
    module = cudacheck.RawModule(KERNEL, backend="cpu")
    unit = compiler.translation_unit(KERNEL, module.program, list(module.program.kernels.values()))
    defined = re.findall(r"^KC_VISIBLE \w+\*? (kc_\w+)\(", unit, re.M)
    declared = dict((name, family) for family, name in re.findall(r"^KC_VISIBLE (kc_\w+_n) (kc_\w+);", unit, re.M))
    assert sorted(defined) == sorted(declared) == ["kc_device_var_0", "kc_spawn_0"]
    assert all(family in abi.ENTRY_POINTS and re.sub(r"_\d+$", "_n", name) == family
               for name, family in declared.items())


@needs_cxx
def test_every_runtime_definition_sees_its_prototype():
    """Each declared function the runtime defines is defined extern "C" (a definition that
    differs is then an error, not an overload) in a unit that includes its header."""
    for name in (n for n in abi.ENTRY_POINTS if not n.endswith("_n")):
        units = [p for p in abi.SRC_DIR.glob("*.cpp")
                 if re.search(rf'^extern "C" [^;{{]*\b{name}\(', p.read_text(), re.M)]
        assert len(units) == 1, (name, units)
        header = next(h for h in abi.HEADERS if re.search(rf"\b{name}\(", (abi.SRC_DIR / h).read_text()))
        deps = subprocess.run([cudacheck.config.cxx, "-std=c++17", f"-I{INCLUDE_DIR}", "-M", str(units[0])],
                              check=True, capture_output=True, text=True).stdout
        # a header reached through a public one is spelled include/../src/kc_*.h
        read = {Path(d).resolve() for d in deps.replace("\\\n", " ").split()[1:]}
        assert (abi.SRC_DIR / header).resolve() in read, (name, units[0].name)


_SIGNATURE_PROBE = r'''
#include <stdio.h>
#include <type_traits>
#include "kc_abi.h"
#include "kc_host_abi.h"

// One line per result (-1) and parameter: its kind, its size and, for a pointer, the size of
// what it points to (0: void or a function).
template <class T> void show(const char* name, int i) {
    if constexpr (std::is_void_v<T>) {
        printf("%s %d void 0 0\n", name, i);
    } else if constexpr (std::is_pointer_v<T>) {
        using P = std::remove_cv_t<std::remove_pointer_t<T>>;
        size_t to = 0;
        if constexpr (!std::is_void_v<P> && !std::is_function_v<P>) to = sizeof(P);
        printf("%s %d pointer %zu %zu\n", name, i, sizeof(T), to);
    } else {
        printf("%s %d %s %zu 0\n", name, i,
               std::is_floating_point_v<T> ? "float" : std::is_signed_v<T> ? "signed" : "unsigned", sizeof(T));
    }
}
template <class R, class... A> void entry(const char* name, R (*)(A...)) {
    show<R>(name, -1);
    int i = 0;
    (show<A>(name, i++), ...);
}
'''


def _described(t):
    """(kind, size, pointee size) of a ctypes type, as the probe prints a C++ type."""
    if t is None:
        return ("void", 0, 0)
    if issubclass(t, ctypes._Pointer):
        return ("pointer", ctypes.sizeof(t), ctypes.sizeof(t._type_))
    code = t._type_
    if code in "Pz":   # c_void_p, c_char_p
        return ("pointer", ctypes.sizeof(t), 1 if code == "z" else 0)
    kind = "float" if code in "fd" else "signed" if code in "bhilq" else "unsigned"
    return (kind, ctypes.sizeof(t), 0)


@needs_cxx
def test_entry_points_match_the_compilers(tmp_path):
    """Every entry point's result and parameters, as abi derives them, against g++: kind
    (pointer, signed, unsigned), width and what a pointer points to."""
    calls = [f'    entry("{n}", ({n}*)nullptr);' if n.endswith("_n") else f'    entry("{n}", (decltype(&{n}))nullptr);'
             for n in abi.ENTRY_POINTS]
    src, exe = tmp_path / "probe.cpp", tmp_path / "probe"
    src.write_text(_SIGNATURE_PROBE + "int main() {\n" + "\n".join(calls) + "\n}\n")
    subprocess.run([cudacheck.config.cxx, "-std=c++17", f"-I{abi.SRC_DIR}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    compiled = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        name, i, kind, size, to = line.split()
        compiled[name, int(i)] = (kind, int(size), int(to))
    python = {}
    for name, (restype, argtypes) in abi.ENTRY_POINTS.items():
        python[name, -1] = _described(restype)
        python.update(((name, i), _described(t)) for i, t in enumerate(argtypes))
    assert python == compiled
