"""CUDA C source -> a shared library the CPU runtime can launch.

The library is the kernel's translation unit (include/cuda_cpu.h, then the source with the
front end's line-preserving edits, then one launch stub per kernel) linked with the
runtime's (RUNTIME_UNITS: scheduler, polling, launcher, memory, inline PTX and its async proxy;
in checked mode also one unit per check, src/kc_check_*.cpp), each compiled once per
variant and cached. Checked
mode compiles the kernel's unit with g++'s ThreadSanitizer and bounds instrumentation, whose
hooks the checks implement: every load and store is checked, and the kernel keeps its own
types.
The unit is preprocessed before it is compiled, and what its source asks of g++ filtered
(preprocessed.py); the object's undefined symbols are checked before it is linked
(device_symbols.py). Libraries are cached on disk, keyed by everything that goes into them, and so is
cuda_cpu.h precompiled by g++ for each variant (a .gch: a kernel's unit then compiles in
about half the time, since most of its time is the headers'). Processes that need one
file at once build it once: the others wait for it (a lock file beside it: cache.build_once).
"""
import _ctypes
import ctypes
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from .. import cache
from ..config import config
from ..errors import CompileError, UnsupportedFeatureError
from ..frontend import CUDA_ARCH_FLAG, INCLUDE_DIR, SOURCE_NAME, SRC_DIR, header_digest
from ..frontend.launches import stdio_hint
from ..listing import compile_error_report
from ..options import compiler_flags
from . import abi, cpu_features, device_symbols, gpumath, preprocessed

# What a library's build checks besides the compiler's own (preprocessed.py, device_symbols.py):
# part of its cache key, so that a library built before a rule changed is built again.
BUILD_RULES = cache.digest(*(Path(m.__file__).read_text() for m in (preprocessed, device_symbols)))

# -fno-finite-loops: a loop that spins on memory another thread writes must spin, as on a GPU,
# not be deleted as a loop without side effects. -ffp-contract=off: g++ fuses no a*b + c of its
# own (in C++ it would wherever the target has FMA), so only what the front end contracts, as
# nvcc does, is fused. cpu_features.flags(): -mfma where the processor has it, so that those
# fused multiply-adds are one instruction, not a call of libm's fmaf.
# -fdata-sections: every static in a section named after it, so that kc_device.ld finds the
# shared structs of templates by name even where g++ gives them no COMDAT section (internal linkage).
CXXFLAGS = ("-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-fno-strict-aliasing", "-fno-finite-loops",
            "-fdata-sections", "-ffp-contract=off", *cpu_features.flags(), "-w")
# Checked mode's instrumentation: the hooks are in src/kc_check_*.cpp (CHECK_UNITS), not in
# the sanitizers' run-time libraries, which are never linked.
# -gdwarf-4: the line table names each access's line of kernel.cu (the unit's #line). With
# GCC 12's default DWARF 5, binutils' addr2line reads the lines of the unit's first function
# as the unit file's own (unit.cpp), so they read as line 0 "outside the kernel".
CHECKED_FLAGS = ("-DKC_CHECKED", "-g1", "-gdwarf-4", "-fsanitize=thread", "--param=tsan-instrument-func-entry-exit=0",
                 "--param=tsan-distinguish-volatile=1", "-fsanitize=bounds",
                 # a float4 load stays one 16-byte access instead of four scalar ones
                 "-fno-tree-sra",
                 # memset and memcpy stay calls, which the checked runtime sees, not inline stores
                 "-fno-builtin-memset", "-fno-builtin-memcpy", "-fno-builtin-memmove",
                 # an atomic as a kernel's last statement stays a call, whose return address names its line
                 "-fno-optimize-sibling-calls")
# A plain build of a kernel whose source says `volatile`: its volatile reads (and only those)
# call the runtime, so that a thread polling a flag lets others run (src/kc_poll.h).
POLL_FLAGS = ("-DKC_POLL", "-fsanitize=thread", "--param=tsan-instrument-func-entry-exit=0",
              "--param=tsan-distinguish-volatile=1")


def polls_volatile(source):
    """Whether a plain build of `source` needs POLL_FLAGS: it may read through a volatile pointer."""
    return re.search(r"\bvolatile\b", source) is not None


# The link: the device-variable and shared sections (kc_device.ld); -Bsymbolic-functions so
# that the kernel's calls of memset and memcpy bind to the checked runtime's, not the C library's.
LINK_FLAGS = (f"-Wl,-T,{SRC_DIR / 'kc_device.ld'}", "-Wl,-Bsymbolic-functions")
# A kernel module's link only: the C++ library's few objects device code and the runtime use
# (operator new[], the personality routine) copied in and hidden, instead of the shared
# libstdc++, whose symbol table took the linker twice as long as the rest of the link. A whole
# program's host code keeps the shared C++ library, as nvcc links it.
MODULE_LINK_FLAGS = ("-static-libstdc++", "-Wl,--exclude-libs,ALL")


def edited(source, edits):
    """The source with the front end's edits, each padded with the newlines it replaced
    so that every line keeps its number."""
    code = source.encode()
    out, at = [], 0
    for start, end, text in sorted(edits):
        if start < at:
            continue   # inside a definition left out of the build
        out += [code[at:start], text.encode(), b"\n" * code.count(b"\n", start, end)]
        at = end
    out.append(code[at:])
    return b"".join(out).decode()


# main_params of a program whose main is in one of its host units (host_units.py), and the
# name that unit's main takes in its object, which the program's entry point calls.
MAIN_IN_HOST_UNIT = -1
HOST_MAIN = "kc_host_main"


def translation_unit(source, program, kernels, renames=(), main_params=None):
    """The kernel's unit: header, edited source under #line, and the stubs: one launch stub
    per kernel in `kernels` (Kernel objects), the registration of namespace-scope shared
    variables, and the address of each device variable. The stubs Python calls are each
    declared first with their family's type (src/kc_abi.h: kc_spawn_n, kc_device_var_n),
    so that g++ checks them against it. `renames` are kernel names that clash with a C
    library function the header declares (div, exp): NVRTC has no C library, so such a name
    is legal CUDA; here it is renamed."""
    defines = "".join(f"#define {n} kc_kernel_{n}\n" for n in renames)
    stubs = [f'\n#line 1 "<launch stubs>"\n#include "{SRC_DIR / "kc_stubs.h"}"']
    for i, k in enumerate(kernels):
        stubs.append(f"static void kc_body_{i}(void** a) {{ ::kc::invoke(&{k.name}, a); }}\n"
                     f"KC_VISIBLE kc_spawn_n kc_spawn_{i};\n"
                     f"KC_VISIBLE int kc_spawn_{i}(const ::kc::LaunchDesc* d, int32_t* pids) "
                     f"{{ return ::kc::spawn(kc_body_{i}, d, pids); }}")
        if k.cluster:   # its __cluster_dims__, evaluated here, after the source's macros
            stubs.append(f"KC_VISIBLE kc_cluster_n kc_cluster_{i};\n"
                         f"KC_VISIBLE void kc_cluster_{i}(uint32_t* dims) "
                         f"{{ const uint32_t c[3] = {{{k.cluster}}}; for (int a = 0; a < 3; ++a) dims[a] = c[a]; }}")
    register = [f"::kc::shared_register({sid}, ::{name});" for sid, name in program.namespace_shared]
    register += [f'(void)::kc::dynamic_shared("{s.name}", {s.id}, sizeof(::{s.name}[0]), '
                 f'::kc::granule_of(::{s.name}[0]));'
                 for s in program.shared if s.extern and not s.function]
    stubs.append(f'extern "C" void kc_register_namespace_shared() {{ {" ".join(register)} }}')
    for i, v in enumerate(program.device_vars):
        stubs.append(f"KC_VISIBLE kc_device_var_n kc_device_var_{i};\n"
                     f"KC_VISIBLE void* kc_device_var_{i}() {{ return (void*)&::{v.name}; }}")
    if main_params is not None:   # a whole program: its main, for kc_program_run (kc_host.cpp)
        call = "main(argc, argv)" if main_params else "((void)argc, (void)argv, main())"
        if main_params == MAIN_IN_HOST_UNIT:
            stubs.append(f'extern "C" int {HOST_MAIN}(int, char**);')
            call = f"{HOST_MAIN}(argc, argv)"
        stubs.append(f'extern "C" int kc_main(int argc, char** argv) {{ return {call}; }}')
        # each kernel's static shared memory, for cudaOccupancyMaxActiveBlocksPerMultiprocessor
        shared = "".join(f"{{(const void*)&{name}, {max(program.static_shared.get(name, 0), 0)}}}, "
                         for name in program.kernels)
        stubs.append(f'extern "C" const ::kc::KernelShared kc_kernel_shared[] = {{{shared}{{nullptr, 0}}}};')
    return (f'#include "cuda_cpu.h"\n{defines}#line 1 "{SOURCE_NAME}"\n' + edited(source, program.edits) + "\n"
            + "\n".join(stubs) + "\n")


@lru_cache(maxsize=None)
def compiler_version(cxx):
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise CompileError(f"the CPU runtime needs a C++ compiler and could not run {cxx!r} ({e}); "
                           "install one (Debian/Ubuntu: apt-get install g++) or set cudacheck.config.cxx",
                           backend="cpu") from None
    return out.splitlines()[0]


def _run(cmd):
    env = {**os.environ, "LC_ALL": "C"}   # g++'s messages in plain ASCII quotes, whatever the locale
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


PCH_NAME = "cuda_cpu.h.gch"


@lru_cache(maxsize=None)
def precompiled_header(cxx, flags, cache_dir):
    """A folder in cache_dir holding cuda_cpu.h precompiled with these flags (cuda_cpu.h.gch,
    which g++ takes in place of the header when the folder comes first on the include path
    and the unit includes cuda_cpu.h before anything else, as translation_unit's does), or
    None where the compiler is not GCC or cannot make one. `flags` are the unit's own but
    for a kernel's -D and -I options: GCC compares every macro the header tests with those
    the unit defines (-DKC_FTZ=1, say) and, where one differs, reads the header itself, so
    the precompiled header never changes what a unit compiles to, only how fast. Keyed by
    the headers (their contents and folder), the flags and the compiler."""
    version = compiler_version(cxx)
    if "clang" in version.lower():   # clang takes a .gch only through -include-pch
        return None
    key = cache.digest(PCH_NAME, header_digest(), str(INCLUDE_DIR), " ".join(flags), version)
    folder = Path(cache_dir) / f"{key}.pch"

    def make(_, out):
        proc = _run([cxx, *flags, f"-I{INCLUDE_DIR}", "-x", "c++-header", str(INCLUDE_DIR / "cuda_cpu.h"),
                     "-o", str(out)])
        return proc.returncode == 0

    return folder if cache.build_once(folder / PCH_NAME, make, shared=True) else None


# The runtime's units, one per role (src/kc_runtime.h says which does what), each compiled
# in the variant of the kernel it is linked with.
RUNTIME_UNITS = ("kc_scheduler.cpp", "kc_poll.cpp", "kc_launch.cpp", "kc_memory.cpp", "kc_ptx.cpp", "kc_async.cpp",
                 "kc_cluster.cpp", "kc_grid.cpp")
# Checked mode's units, one per role (src/kc_check.h says which does what), linked beside
# RUNTIME_UNITS: compiled once with -DKC_CHECKED, as compute-sanitizer's tools are separate.
CHECK_UNITS = ("kc_check_core.cpp", "kc_check_access.cpp", "kc_check_bounds.cpp", "kc_check_races.cpp",
               "kc_check_global_races.cpp", "kc_check_sync.cpp", "kc_check_init.cpp", "kc_check_async.cpp")
# A whole program's units (run_program), linked beside RUNTIME_UNITS: its CUDA runtime API
# (kc_host.h): its core, its texture objects and arrays, and its heap, a fresh process's
# (kc_host_heap.cpp says why); and the API under its C names, for its C units (kc_host_c.cpp).
PROGRAM_UNITS = ("kc_host.cpp", "kc_host_texture.cpp", "kc_host_heap.cpp", "kc_host_c.cpp")
# A kernel module's own unit, not a whole program's: the release of its static C++ library's
# allocations before it is unloaded (src/kc_module.cpp).
MODULE_UNITS = ("kc_module.cpp",)


def runtime_object(checked, unit, poll=False):
    """The object file of one of the runtime's units for one variant, compiled once per
    header set and compiler: a unit of RUNTIME_UNITS (`checked`: with checked mode's hooks,
    `poll`: the entry points of a plain build with POLL_FLAGS), a check of CHECK_UNITS
    (checked), or one of a whole program's PROGRAM_UNITS or a module's MODULE_UNITS."""
    cxx, flags = config.cxx, _object_flags(checked, poll)

    def make(_, out):
        proc = _run([cxx, *flags, f"-I{INCLUDE_DIR}", "-c", str(SRC_DIR / unit), "-o", str(out)])
        if proc.returncode != 0:
            raise CompileError(f"the CPU runtime itself did not compile with {compiler_version(cxx)}:\n{proc.stderr}",
                               log=proc.stderr, backend="cpu")
    return cache.build_once(_object_path(checked, unit, poll), make, shared=True)


def _object_flags(checked, poll):
    return list(CXXFLAGS) + (["-DKC_CHECKED"] if checked else ["-DKC_POLL"] if poll else [])


def _object_path(checked, unit, poll):
    """Where runtime_object keeps its object file: named by everything that goes into it."""
    flags = _object_flags(checked, poll)
    return cache.path(cache.digest(unit, header_digest(), " ".join(flags), compiler_version(config.cxx)) + ".o")


def runtime_objects(checked, poll=False, program=False):
    """Every object a kernel's library links beside its own unit, compiled side by side
    where the cache lacks them: RUNTIME_UNITS for the variant, checked mode's CHECK_UNITS,
    and a whole program's PROGRAM_UNITS or a kernel module's MODULE_UNITS."""
    units = [(unit, checked, poll) for unit in RUNTIME_UNITS] + [(unit, True, False) for unit in CHECK_UNITS if checked]
    units += [(unit, False, False) for unit in (PROGRAM_UNITS if program else MODULE_UNITS)]
    # Every module asks, and after the first build all are there: a pool of threads to find
    # them cost more than the rest of a cached module's load.
    paths = [_object_path(checked, unit, poll) for unit, checked, poll in units]
    if all(p.exists() for p in paths):
        return paths
    with ThreadPoolExecutor(max_workers=max(1, min(len(units), os.cpu_count() or 1))) as pool:
        return list(pool.map(lambda u: runtime_object(u[1], u[0], u[2]), units))


def build(source, program, kernels, options=(), checked=False, main_params=None, listing=None, host_objects=()):
    """Compile (or fetch from the cache) the library of `source` for the given kernels.
    A whole program (main_params: main's parameter count, or MAIN_IN_HOST_UNIT) also gets its
    host runtime (kc_host.cpp), line tables and its host units' objects (host_objects); `listing`
    is the source its compile errors quote."""
    build_args = (source, program, kernels, options, checked)
    rest = (main_params, listing or source, tuple(map(str, host_objects)))
    try:
        return _build(*build_args, (), *rest)
    except CompileError as e:
        clashes = {n for n in re.findall(r"conflicting declaration of C function .\w+ (\w+)\(", e.log or "")}
        if not clashes:
            raise
        return _build(*build_args, sorted(clashes), *rest)


# A whole program's host side: the CUDA runtime API, and line tables for the lines of a
# crash in host code (DWARF 4 for the reason given at CHECKED_FLAGS).
PROGRAM_FLAGS = ("-DKC_PROGRAM", "-g1", "-gdwarf-4")


def library_key(unit, flags, cxx, host_objects=(), link=()):
    """The file name of the library of `unit` built with `flags` (and `link`, its link's flags
    beyond LINK_FLAGS): a digest of everything that goes into it. The runtime's files count by
    their contents (header_digest), not by the folder they are installed in, which the unit and
    the link name: a checkout and a wheel installed from it share their libraries, as they share
    the runtime's objects."""
    where = str(SRC_DIR)
    return cache.digest(header_digest(), BUILD_RULES, unit.replace(where, "<src>"),
                        " ".join([*flags, *LINK_FLAGS, *link]).replace(where, "<src>"), compiler_version(cxx),
                        *host_objects) + ".so"


def _build(source, program, kernels, options, checked, renames, main_params, listing, host_objects):
    cxx = config.cxx
    poll = not checked and polls_volatile(source)
    variant = (*(CHECKED_FLAGS if checked else POLL_FLAGS if poll else ()),
               *(PROGRAM_FLAGS if main_params is not None else ()))
    flags = [*CXXFLAGS, *compiler_flags(options, program=main_params is not None), *variant,
             *([CUDA_ARCH_FLAG] if main_params is None else [])]
    unit = translation_unit(source, program, kernels, renames, main_params)
    objects = [str(o) for o in runtime_objects(checked, poll, program=main_params is not None)]
    link = MODULE_LINK_FLAGS if main_params is None else ()
    name = library_key(unit, flags, cxx, host_objects, link)

    def make(tmp, out):
        src, pre, obj = tmp / "unit.cpp", tmp / "unit.ii", tmp / "unit.o"
        src.write_text(unit)
        pch = precompiled_header(cxx, (*CXXFLAGS, *variant), config.cache_dir)
        # Preprocessed first, so that what the source asks of g++ is filtered whatever its
        # spelling (preprocessed.py); -fpch-preprocess keeps the precompiled header in use.
        proc = _run([cxx, *flags, *([f"-I{pch}"] if pch else []), f"-I{INCLUDE_DIR}", "-E", "-fpch-preprocess",
                     str(src), "-o", str(pre)])
        if proc.returncode != 0:
            raise _compile_error(listing, proc.stderr, main_params is not None)
        pre.write_text(preprocessed.sanitize(pre.read_text(), SOURCE_NAME, listing))
        proc = _run([cxx, *flags, *device_symbols.SECTION_FLAGS, "-c", str(pre), "-o", str(obj)])
        if proc.returncode != 0:
            raise _compile_error(listing, proc.stderr, main_params is not None)
        kernel_names = None if main_params is None else {re.sub(r"<.*", "", k.name) for k in program.kernels.values()}
        device_symbols.check(obj, cxx, objects, kernel_names, _demangle)
        proc = _run([cxx, "-shared", str(obj), *host_objects, *objects, *LINK_FLAGS, *link, "-o", str(out)])
        if proc.returncode != 0:
            raise CompileError(f"the kernel's library did not link:\n{proc.stderr}", log=proc.stderr, backend="cpu")
    return cache.build_once(cache.path(name), make)


def _compile_error(source, log, whole_program=False):
    title = f"{SOURCE_NAME} did not compile on the CPU runtime ({compiler_version(config.cxx)}):"
    report = compile_error_report(source, log, SOURCE_NAME, title)
    api = sorted(set(re.findall(r"'(cuda\w+)' was not declared", log)))
    if whole_program and api:
        return UnsupportedFeatureError(
            report + f"\n\nThe CPU runtime's CUDA runtime API does not provide {', '.join(api)}. Run the program on a "
            "GPU (backend='gpu'), or use the calls it provides (cudacheck's README, 'Whole programs').",
            log=log, backend="cpu")
    missing = sorted(set(re.findall(r"'(__\w+|\w+_sync)' was not declared", log)))
    if missing:
        report += (f"\n\nThe CPU runtime does not provide {', '.join(missing)}. If the kernel compiles with "
                   "backend='gpu', it uses a CUDA feature the CPU runtime lacks; run it on a GPU.")
    elif "<launch stubs>" in log:
        report += "\n\nThe kernel's name or template arguments (name_expressions) do not match its definition."
    elif whole_program:
        report += stdio_hint(log)
    return CompileError(report, log=log, backend="cpu")


def load(path):
    """The kernel's library, loaded. A function the kernel calls but nothing defines (a
    __device__ function declared without a body) is a CompileError naming it, as ptxas
    refuses it ("Unresolved extern function")."""
    try:
        lib = ctypes.CDLL(str(path))
        gpumath.install(lib)   # the GPU's expf, tanhf, rsqrtf tables, if its code uses them
        return lib
    except OSError as e:
        missing = re.search(r"undefined symbol: (\S+)", str(e))
        if not missing:
            raise
        name = _demangle(missing.group(1))
        raise CompileError(f"the kernel calls `{name}`, which is declared but never defined: a GPU refuses this too "
                           f"(ptxas: Unresolved extern function '{missing.group(1)}'). Give the function a body in "
                           "the kernel's source.", log=str(e), backend="cpu") from None


def unload_module(lib):
    """Unload a kernel module's library load() loaded (its module is gone, and nothing reaches
    into it), first freeing what its C++ library allocated at load (src/kc_module.cpp)."""
    abi.bind(lib, "kc_release_library")()
    _ctypes.dlclose(lib._handle)


def _demangle(symbol):
    """A C++ symbol as the source spells it (c++filt), or as it is."""
    try:
        out = subprocess.run(["c++filt", symbol], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out or symbol
