"""Running clang: the bindings' index, the flags every parse shares, cuda_cpu.h precompiled
once per set of flags, and the disk cache of the front end's results (a cached module
parses nothing).

The source is parsed as the CPU runtime compiles it: C++17 after cpu/include/cuda_cpu.h,
with KC_FRONTEND defined so that CUDA's qualifiers become clang annotations.
"""
import atexit
import ctypes
import hashlib
import subprocess
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .. import cache
from ..config import config
from ..errors import CompileError

# Package data of cudacheck, found through importlib.resources (as installed from the wheel, not
# only in the repository); g++ and clang need a folder on disk, which a package installed from a
# wheel is. INCLUDE_DIR: the headers a kernel may include, the only folder on its include path.
# SRC_DIR: the runtime's own C++ (its units, its internal headers, which INCLUDE_DIR's headers
# include by their path, ../src/kc_*.h, so that a kernel cannot include one by name).
INCLUDE_DIR = Path(str(resources.files("cudacheck").joinpath("cpu", "include")))
SRC_DIR = Path(str(resources.files("cudacheck").joinpath("cpu", "src")))
SOURCE_NAME = "kernel.cu"
# Device code sees __CUDA_ARCH__ as NVRTC defines it for the compute capability the CPU
# runtime reports (9.0: cpu/src/kc_host.cpp). A whole program's host code does not, as
# with nvcc's host pass; its kernels are compiled with it, so it is left undefined there.
CUDA_ARCH_FLAG = "-D__CUDA_ARCH__=900"


def inside(path, folder):
    """Whether `path` lies in `folder` (False where either cannot be resolved)."""
    try:
        return Path(path).resolve().is_relative_to(Path(folder).resolve())
    except OSError:
        return False


def spelled_offset(ci, location, main):
    """The offset in the file `main` (main_file(ci, tu)) where `location`'s text is spelled (a
    macro's own text, in its definition or its arguments, where libclang's offset is the
    expansion's); -1 where it is spelled in another file (a header's macro)."""
    f, offset = ctypes.c_void_p(), ctypes.c_uint()
    _spelling_location(ci)(location, ctypes.byref(f), None, None, ctypes.byref(offset))
    return offset.value if f.value == main else -1


@lru_cache(maxsize=None)
def _spelling_location(ci):
    """libclang's clang_getSpellingLocation, which clang.cindex does not wrap, typed once."""
    where = ci.conf.lib.clang_getSpellingLocation
    where.argtypes = [ci.SourceLocation] + [ctypes.c_void_p] * 4
    where.restype = None
    return where


def main_file(ci, tu):
    """The translation unit's own file, as spelled_offset compares it."""
    return ctypes.cast(ci.File.from_name(tu, tu.spelling).obj, ctypes.c_void_p).value


@lru_cache(maxsize=None)
def in_runtime(path):
    """Whether `path` is one of the CPU runtime's own files (INCLUDE_DIR's or SRC_DIR's)."""
    return inside(path, INCLUDE_DIR) or inside(path, SRC_DIR)


def runtime_files():
    """The CPU runtime's headers and units, in a fixed order."""
    return [p for folder in (INCLUDE_DIR, SRC_DIR) for p in sorted(folder.rglob("*")) if p.is_file()]


@lru_cache(maxsize=2)
def clang_index(local=False):
    """(clang.cindex, an Index): the bindings, loaded once. local=True: an Index whose
    translation units' children are only the declarations their own parse made (clang's
    excludeDecls): those of the source, of the headers it read as text, and the instances of
    function templates it instantiated (see `instantiated`), not the ten thousand of a
    precompiled cuda_cpu.h, whose walk cost the reader more than all the rest of its walk."""
    try:
        import clang.cindex as ci
    except ImportError:
        raise CompileError("the front end needs clang's Python bindings: pip install libclang", backend="any") from None
    index = ci.Index.create(excludeDecls=local)
    atexit.register(clang_index.cache_clear)   # release it while clang's module still exists
    # Whether a cursor lies in the parsed source itself: one C call, where comparing the
    # location's file name costs four (the front end asks it of every one of the headers'
    # ten thousand top-level declarations).
    ci.conf.lib.clang_Location_isFromMainFile.argtypes = [ci.SourceLocation]
    ci.conf.lib.clang_Location_isFromMainFile.restype = ctypes.c_int
    return ci, index


@lru_cache(maxsize=None)
def _gcc_include(cxx):
    """The C++ compiler's own header folder (stddef.h, stdarg.h), which libclang's wheel lacks."""
    try:
        out = subprocess.run([cxx, "-print-file-name=include"], capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return out if Path(out).is_dir() else None


def system_flags():
    """The flags that give clang the C++ compiler's own headers (none where it has none)."""
    inc = _gcc_include(config.cxx)
    return ["-isystem", inc] if inc else []


def template_of(ci, cursor):
    """The template a declaration specializes or instantiates, or None."""
    return ci.conf.lib.clang_getSpecializedCursorTemplate(cursor)


def instantiated(ci, cursor):
    """Whether a declaration is an instance clang made of a template (a function template's,
    or a member function of a class template's), not one the source wrote: it stands where
    the template does. An explicit specialization stands where it is written."""
    template = template_of(ci, cursor)
    return template is not None and template.location == cursor.location


def in_main_file(ci, cursor):
    """Whether a cursor lies in the parsed source itself, not in a header."""
    return bool(ci.conf.lib.clang_Location_isFromMainFile(cursor.location))


def origin(ci, fn):
    """(file, defined): the file a function is first declared in, and whether this
    translation unit defines it (a member or constructor counts as defined: the
    compiler may define it implicitly)."""
    first = fn.canonical
    file = first.location.file.name if first.location.file else ""
    free = fn.kind == ci.CursorKind.FUNCTION_DECL
    return file, not free or fn.get_definition() is not None or fn.is_definition()


@lru_cache(maxsize=1)
def header_digest():
    """A digest of the CPU runtime's headers and units: part of every cache key built on them."""
    h = hashlib.sha256()
    for p in runtime_files():
        h.update(p.relative_to(INCLUDE_DIR.parent).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def clang_version():
    """The version of the libclang the bindings load ("clang version 18.1.1 ..."), or "" where
    there are none (a cached result is still found; reading a new source says what is missing)."""
    try:
        import clang.cindex as ci
    except ImportError:
        return ""
    try:
        get = clang_index()[0].conf.lib.clang_getClangVersion
    except ci.LibclangError:   # the bindings without their library
        return ""
    get.restype, get.errcheck = ci._CXString, ci._CXString.from_result
    return get()


@lru_cache(maxsize=1)
def _own_digest():
    """The headers' digest, the front end's own code (this package, options.py) and the
    version of libclang that reads the source: a change to any makes every cached result
    stale. (Two environments that share a cache folder with different libclang versions each
    read a source themselves; the libraries g++ builds do not depend on libclang.)"""
    here = Path(__file__).parent
    files = [*sorted(here.glob("*.py")), here.parent / "options.py"]
    own = "".join(p.name + p.read_text() for p in files)
    return hashlib.sha256((header_digest() + own + clang_version()).encode()).hexdigest()


def precompiled_header(flags):
    """cuda_cpu.h precompiled by clang for these flags (a file in the disk cache), or None
    where it cannot be made: every parse then reads the source alone, not the ten thousand
    declarations of the headers again (0.13 s a parse, 0.05 s with it). The key holds the
    headers' digest and their times, which clang checks a precompiled header against; a
    parse that finds it stale anyway (a fatal diagnostic) parses the headers instead."""
    # Remembered per cache folder: one made in a folder since deleted (a benchmark's or a
    # test's empty cache) would fail every later parse.
    return _precompiled_header(flags, str(config.cache_dir))


@lru_cache(maxsize=32)
def _precompiled_header(flags, cache_dir):
    ci, index = clang_index()
    stamps = "".join(f"{p}:{p.stat().st_mtime_ns}" for p in runtime_files())
    path = cache.path(f"{cache.digest(_own_digest(), stamps, ci.conf.get_filename(), *flags)}.pch", "frontend")

    def make(_, out):
        tu = index.parse(str(INCLUDE_DIR / "cuda_cpu.h"), args=["-x", "c++-header", *flags],
                         options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
                         | ci.TranslationUnit.PARSE_INCOMPLETE)
        if any(d.severity >= 3 for d in tu.diagnostics):
            return False
        tu.save(str(out))
    try:
        made = cache.build_once(path, make)
    except (OSError, ci.TranslationUnitLoadError, ci.TranslationUnitSaveError):
        return None
    return str(made) if made else None


def disk_cached(kind, parts, make, to_json, from_json):
    """make()'s result for these inputs, from the disk cache when it was made before."""
    path = cache.path(f"{cache.digest(_own_digest(), kind, *parts)}.json", "frontend")
    try:
        return from_json(path.read_text())
    except (OSError, ValueError, TypeError, KeyError):
        pass
    result = make()
    cache.write(path, lambda _, out: out.write_text(to_json(result)))
    return result
