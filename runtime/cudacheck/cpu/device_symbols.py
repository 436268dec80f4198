"""Device code reaches nothing but the runtime: checked on the built object, not on names.

After g++ compiles a kernel's unit, every symbol the object leaves undefined is one its code
calls or takes the address of from outside it. Device code may reach only:

- what the runtime's own units define for the variant (the scheduler, the atomics, checked
  mode's hooks: runtime_objects in compiler.py);
- the C math library (every function libm exports: CUDA's device math) and the compiler's
  arithmetic helpers (libgcc_s: 128-bit division, popcount);
- the few functions of the C library that CUDA gives device code (DEVICE_LIBC), and the C++
  ABI's support for what device code may write (operator new and delete, guarded statics,
  virtual functions: CXX_ABI).

Anything else (fork, execl, system, syscall, open, dlopen: whatever spelling reached it,
`__builtin_fork()` or an asm label or a declaration of its own) is a CompileError naming the
symbol and the function that reaches it, as ptxas refuses an unresolved extern function. A
kernel module (RawModule) is device code throughout, so every undefined symbol is checked;
a whole program's host code keeps its C library, so there only what its kernels reach,
through the object's relocations (the unit is built with -ffunction-sections and
-fdata-sections, so each function and variable is a section of its own), is checked.
"""
import re
import subprocess
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from ..errors import CompileError
from ..frontend import SOURCE_NAME

# The C library's functions that CUDA provides in device code (the CUDA C++ Programming Guide:
# printf, malloc/free, memcpy/memset), what g++ makes of a printf (puts, putchar), and what it
# emits for code any C++ compiler builds.
DEVICE_LIBC = {"printf", "vprintf", "puts", "putchar", "malloc", "free", "memcpy", "memset", "memmove", "memcmp",
               "__stack_chk_fail", "__tls_get_addr", "_GLOBAL_OFFSET_TABLE_", "__dso_handle",
               # the clock that clock() and clock64() read (kc_intrinsics.h)
               "clock_gettime"}
# The C library's own float classification (isinf, isnan, signbit as g++ calls them where it
# does not inline them): pure functions of their argument, in libc rather than libm.
LIBC_MATH = re.compile(r"__(isinf|isnan|finite|signbit|fpclassify|issignaling)[fl]?")
CXX_ABI = re.compile(r"_Z(nw|na|dl|da)\w*"                         # operator new / delete
                     r"|__cxa_(guard_(acquire|release|abort)|pure_virtual|deleted_virtual|atexit)"
                     r"|__gxx_personality_v0|_Unwind_Resume"
                     r"|_ZT[VIS]N10__cxxabiv1\w*")                 # typeinfo of classes with virtual functions
# The flags that give each function and variable a section of its own, for reach().
SECTION_FLAGS = ("-ffunction-sections", "-fdata-sections")


def _symbols(path, table):
    with open(path, "rb") as f:
        section = ELFFile(f).get_section_by_name(table)
        return [] if section is None else list(section.iter_symbols())


def _exported(path, table=".symtab"):
    """The names a file defines for others (global or weak)."""
    return {s.name for s in _symbols(path, table)
            if s.name and s["st_shndx"] != "SHN_UNDEF" and s["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")}


@lru_cache(maxsize=None)
def _system_library(cxx, name):
    """The exports of one of the compiler's shared libraries (libm.so.6, libgcc_s.so.1)."""
    try:
        path = Path(subprocess.run([cxx, f"-print-file-name={name}"], capture_output=True, text=True,
                                   timeout=30).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        path = Path(name)
    if not path.is_absolute():
        found = [Path(d) / name for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                                           "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu")]
        path = next((p for p in found if p.exists()), path)
    return frozenset(_exported(path, ".dynsym")) if path.exists() else frozenset()


@lru_cache(maxsize=None)
def allowed(cxx, runtime_objects):
    """Every name device code may leave undefined, with these runtime objects linked beside it."""
    names = set(DEVICE_LIBC)
    for obj in runtime_objects:
        names |= _exported(obj)
    return frozenset(names | _system_library(cxx, "libm.so.6") | _system_library(cxx, "libgcc_s.so.1"))


def _base_name(spelled):
    """`ns::tiled` of `void ns::tiled<16>(float const*)`, `k` of `k(int*)` or `k`."""
    out, depth = [], 0
    for ch in spelled:
        depth += ch == "<"
        if depth == 0:
            out.append(ch)
        depth -= ch == ">"
    return "".join(out).split("(", 1)[0].split()[-1] if out else spelled


def _demangled(names):
    """{symbol: as the source spells it}, by one run of c++filt."""
    names = sorted(names)
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, timeout=60).stdout
        spelled = out.split("\n")[:len(names)]
    except (OSError, subprocess.SubprocessError):
        spelled = []
    return dict(zip(names, spelled)) if len(spelled) == len(names) else {n: n for n in names}


def reach(obj, kernels=None):
    """{undefined symbol: the functions that refer to it} of what device code in `obj` reaches:
    everything (kernels=None: a kernel module), or what the functions named in `kernels`
    (qualified names, template arguments left out) lead to (a whole program)."""
    with open(obj, "rb") as f:
        elf = ELFFile(f)
        syms = list(elf.get_section_by_name(".symtab").iter_symbols())
        edges, undefined = defaultdict(set), defaultdict(set)   # section -> sections / names it refers to
        for rel in elf.iter_sections():
            if not isinstance(rel, RelocationSection) or rel["sh_info"] == 0:
                continue
            for r in rel.iter_relocations():
                s = syms[r["r_info_sym"]]
                if s["st_shndx"] == "SHN_UNDEF":
                    if s.name:
                        undefined[rel["sh_info"]].add(s.name)
                elif isinstance(s["st_shndx"], int):
                    edges[rel["sh_info"]].add(s["st_shndx"])
        functions = defaultdict(set)   # section -> the functions defined in it (a cold part named as its own)
        for s in syms:
            if s["st_info"]["type"] == "STT_FUNC" and isinstance(s["st_shndx"], int):
                functions[s["st_shndx"]].add(s.name.removesuffix(".cold"))
        if kernels is not None:
            defined = {s.name: s["st_shndx"] for s in syms
                       if s["st_info"]["type"] == "STT_FUNC" and isinstance(s["st_shndx"], int)}
            todo = [defined[n] for n, spelled in _demangled(defined).items() if _base_name(spelled) in kernels]
            seen = set()
            while todo:
                i = todo.pop()
                if i not in seen:
                    seen.add(i)
                    todo.extend(edges.get(i, ()))
        else:
            seen = set(undefined)
        out = defaultdict(set)
        for i in seen:
            for name in undefined.get(i, ()):
                out[name] |= functions.get(i, set())
        # A symbol no relocation names (a weak reference, say) is still one the object needs.
        if kernels is None:
            for s in syms:
                if s.name and s["st_shndx"] == "SHN_UNDEF" and s.name not in out:
                    out[s.name] = set()
        return out


def check(obj, cxx, runtime_objects, kernels, demangle):
    """CompileError if device code in `obj` reaches a symbol that is not allowed() (kernels: as
    reach() takes them); `demangle` spells a C++ symbol as the source does."""
    ok = allowed(cxx, tuple(str(o) for o in runtime_objects))

    def refused(names):
        return {n for n in names if n not in ok and not CXX_ABI.fullmatch(n) and not LIBC_MATH.fullmatch(n)}

    # A kernel module reaches every symbol it leaves undefined: its symbol table says which,
    # and its relocations (slow to read) are walked only to name the callers of one refused.
    if kernels is None and not refused(s.name for s in _symbols(obj, ".symtab")
                                       if s.name and s["st_shndx"] == "SHN_UNDEF"):
        return
    bad = {name: where for name, where in reach(obj, kernels).items() if refused([name])}
    if not bad:
        return
    name, where = min(bad.items())
    callers = sorted(demangle(f) for f in where)
    by = f" (from {', '.join(f'`{c}`' for c in callers[:3])})" if callers else ""
    others = sorted(bad)[:6]
    raise CompileError(
        f"{SOURCE_NAME}: error: device code calls `{demangle(name)}`{by}, which is not a CUDA device function. "
        f"Device code may call only the functions the source defines, CUDA's device functions, and the few of the C "
        f"library that CUDA provides (printf, malloc, free, memcpy, memset, the math functions); a GPU has no "
        f"operating system to call, and ptxas refuses this as an unresolved extern function. Not provided: "
        f"{', '.join(f'`{n}`' for n in others)}.", log=", ".join(sorted(bad)), backend="any")
