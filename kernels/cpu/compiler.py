"""CUDA C source -> a shared library the CPU runtime can launch.

The kernel's source is compiled unchanged (two line-preserving rewrites aside, below)
by the machine's C++ compiler, after include/kc_runtime.h, which supplies the CUDA
built-ins. Libraries are cached on disk, keyed by everything that goes into them.
"""
import ctypes
import hashlib
import os
import re
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from ..config import config
from ..errors import CompileError, UnsupportedFeatureError
from ..listing import compile_error_report, numbered
from ..signature import strip_comments
from . import checked as checked_mode

INCLUDE_DIR = Path(__file__).with_name("include")
SOURCE_NAME = "kernel.cu"
CXXFLAGS = ("-std=c++20", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
            "-fno-strict-aliasing", "-w")

# What CUDA offers and the CPU runtime does not; found before compiling, so the message
# can name the feature rather than a C++ error about it.
UNSUPPORTED = {
    r"\b__shfl\w*": "warp shuffles",
    r"\b__(?:ballot|any|all)_sync\b|\b__activemask\b": "warp votes",
    r"\bcooperative_groups\b": "cooperative groups",
    r"\bwmma\b|\bmma\.sync\b": "tensor-core matrix instructions",
    r"\basm\s*(?:volatile\s*)?\(": "inline PTX assembly",
    r"\btex[123]D\w*\b|\btexture\s*<|\bsurf[123]D\b": "textures and surfaces",
    r"\b__half2?\b|\b__nv_bfloat16\b|cuda_fp16\.h|cuda_bf16\.h": "half-precision types",
    r"<<<": "launching kernels from a kernel (dynamic parallelism)",
}
# NVRTC options with no meaning on the CPU.
IGNORED_OPTION = re.compile(r"^(-arch|--gpu-architecture|-std|--std|--use_fast_math|-use_fast_math|-lineinfo|"
                            r"--generate-line-info|-G|--device-debug|-O\d|--fmad|-fmad|-rdc|--relocatable-device-code|"
                            r"--extra-device-vectorization|-default-device|--restrict|-dopt|--ptxas-options|-maxrregcount|"
                            r"--maxrregcount|-ftz|--ftz|-prec-div|--prec-div|-prec-sqrt|--prec-sqrt|-dw|--disable-warnings)\b")
_SYSTEM_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<(cassert|assert\.h|cuda_runtime\.h|cuda_runtime_api\.h|cuda\.h|"
                             r"device_launch_parameters\.h|cstdio|stdio\.h|cmath|math\.h|cstdint|stdint\.h)>",
                             re.M)
_EXTERN_SHARED = re.compile(r"\bextern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?(?P<type>[\w\s:]+?)\s*"
                            r"(?:__align__\s*\(\s*\d+\s*\)\s*)?(?P<name>\w+)\s*\[\s*\]\s*;")


def check_supported(source):
    """Raise UnsupportedFeatureError naming each CUDA feature the CPU runtime lacks."""
    code = strip_comments(source)
    for pattern, what in UNSUPPORTED.items():
        lines = sorted({code.count("\n", 0, m.start()) + 1 for m in re.finditer(pattern, code)})
        if lines:
            raise UnsupportedFeatureError(
                f"{SOURCE_NAME} uses {what} (line {', '.join(map(str, lines))}), which the CPU runtime does "
                f"not provide. The kernel can run on a GPU with backend='gpu'.\n{numbered(source, set(lines))}",
                backend="cpu")


def translate(source):
    """The kernel's source as the CPU runtime compiles it, line for line.

    Two rewrites, each within its line so compiler messages keep the student's line
    numbers: includes of CUDA and C headers the runtime already supplies are dropped
    (<cassert> would undo the runtime's assert), and `extern __shared__ T s[];` becomes
    a view of the launch's dynamic shared memory.
    """
    source = _SYSTEM_INCLUDE.sub(lambda m: "// " + m.group(0).strip(), source)
    return _EXTERN_SHARED.sub(lambda m: f"static ::kc::DynamicShared<{m.group('type').strip()}> {m.group('name')};", source)


def translation_unit(source, functions, renames=()):
    """Header, source under #line, and one launch stub per kernel in `functions`
    (C++ names, template instances included), exported as kc_spawn_<i>. `renames` are
    kernel names that clash with a C library function the header declares (div, exp):
    NVRTC has no C library, so such a name is legal CUDA; here it is renamed."""
    defines = "".join(f"#define {n} kc_kernel_{n}\n" for n in renames)
    stubs = [f'\n#line 1 "<launch stubs>"']
    for i, fn in enumerate(functions):
        stubs.append(f"static void kc_body_{i}(void** a) {{ ::kc::invoke(&{fn}, a); }}\n"
                     f"KC_VISIBLE int kc_spawn_{i}(const ::kc::LaunchDesc* d, int32_t* pids) "
                     f"{{ return ::kc::spawn(kc_body_{i}, d, pids); }}")
    return (f'#include "kc_runtime.h"\n{defines}#line 1 "{SOURCE_NAME}"\n' + translate(source) + "\n" + "\n".join(stubs) + "\n")


def compiler_flags(options):
    """The C++ compiler flags for CuPy-style options: -D and -I pass, NVRTC-only ones
    are dropped, anything else is an error naming the option."""
    flags = []
    for opt in options:
        if re.match(r"^(-D|--define-macro=?)", opt):
            flags.append("-D" + re.sub(r"^(-D|--define-macro=?)", "", opt))
        elif re.match(r"^(-I|--include-path=?)", opt):
            flags.append("-I" + re.sub(r"^(-I|--include-path=?)", "", opt))
        elif IGNORED_OPTION.match(opt):
            continue
        else:
            raise CompileError(f"option {opt!r} is not understood by the CPU runtime "
                               "(it takes -D and -I, and ignores NVRTC's code-generation options)", backend="cpu")
    return flags


@lru_cache(maxsize=None)
def compiler_version(cxx):
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise CompileError(f"the CPU runtime needs a C++ compiler and could not run {cxx!r} ({e}); "
                           "install one (Debian/Ubuntu: apt-get install g++) or set kernels.config.cxx",
                           backend="cpu") from None
    return out.splitlines()[0]


@lru_cache(maxsize=1)
def _header_digest():
    h = hashlib.sha256()
    for p in sorted(INCLUDE_DIR.glob("*.h")):
        h.update(p.read_bytes())
    return h.hexdigest()


def build(source, functions, options=(), checked=False):
    """Compile (or fetch from the cache) the library for `source`; return its path.

    With `checked`, the source is first rewritten for checked mode (checked.py).
    Returns the library's path and, in checked mode, the shared arrays' names by id.
    The cache key covers the runtime's headers, the generated source, the flags and
    the compiler's version. Two processes building the same key at once both succeed:
    each writes its own temporary file and renames it into place atomically.
    """
    flags = list(CXXFLAGS) + compiler_flags(options) + (["-DKC_CHECKED"] if checked else [])
    code, shared = checked_mode.rewrite(source) if checked else (source, [])
    try:
        return _build_unit(source, translation_unit(code, functions), flags), shared
    except CompileError as e:
        clashes = {n for n in re.findall(r"conflicting declaration of C function .\w+ (\w+)\(", e.log)}
        if not clashes:
            raise
        return _build_unit(source, translation_unit(code, functions, sorted(clashes)), flags), shared


def _build_unit(source, unit, flags):
    cxx = config.cxx
    key = hashlib.sha256("\0".join([_header_digest(), unit, " ".join(flags), compiler_version(cxx)]).encode()).hexdigest()
    cache = Path(config.cache_dir)
    target = cache / f"{key[:40]}.so"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as tmp:
        src = Path(tmp) / "unit.cpp"
        src.write_text(unit)
        out = Path(tmp) / "lib.so"
        proc = subprocess.run([cxx, *flags, f"-I{INCLUDE_DIR}", str(src), "-o", str(out)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise _compile_error(source, proc.stderr)
        os.replace(out, target)
    return target


def _compile_error(source, log):
    title = f"{SOURCE_NAME} did not compile on the CPU runtime ({compiler_version(config.cxx)}):"
    report = compile_error_report(source, log, SOURCE_NAME, title)
    missing = sorted(set(re.findall(r"'(__\w+|\w+_sync)' was not declared", log)))
    if missing:
        report += (f"\n\nThe CPU runtime does not provide {', '.join(missing)}. If the kernel compiles with "
                   "backend='gpu', it uses a CUDA feature the CPU runtime lacks; run it on a GPU.")
    elif "<launch stubs>" in log:
        report += "\n\nThe kernel's name or template arguments (name_expressions) do not match its definition."
    return CompileError(report, log=log, backend="cpu")


def load(path):
    return ctypes.CDLL(str(path))
