"""The C++ front end: clang reads a CUDA C source with full type information.

Both backends ask it what a source defines: its kernels (with C or C++ linkage, in
namespaces, templates with defaults, `__launch_bounds__` of any expression), each
parameter's canonical type (through typedefs, array syntax, structs), the `__shared__`,
`__device__` and `__constant__` variables, and what the CPU runtime cannot run. The CPU
backend also takes from it the few line-preserving edits its compiler needs (cpu/compiler.py).

The source is parsed as the CPU runtime compiles it: C++17 after cpu/include/cuda_cpu.h,
with KC_FRONTEND defined so that CUDA's qualifiers become clang annotations. Results are
cached on disk (a cached module parses nothing).
"""
import atexit
import ctypes
import hashlib
import json
import re
import subprocess
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import cache
from .arith import Rewriter, fmad_enabled
from .config import config
from .errors import CompileError, UnsupportedFeatureError
from .launch import DEFAULT_SHARED_LIMIT  # also the static __shared__ NVRTC (ptxas) accepts per kernel
from .listing import numbered
from .options import user_flags

INCLUDE_DIR = Path(__file__).parent / "cpu" / "include"
SOURCE_NAME = "kernel.cu"
# Device code sees __CUDA_ARCH__ as NVRTC defines it for the compute capability the CPU
# runtime reports (9.0: cpu/include/kc_host.cpp). A whole program's host code does not, as
# with nvcc's host pass; its kernels are compiled with it, so it is left undefined there.
CUDA_ARCH_FLAG = "-D__CUDA_ARCH__=900"

# Canonical clang type kinds -> NumPy element types.
_SCALARS = {
    "FLOAT": np.float32, "DOUBLE": np.float64, "INT": np.int32, "UINT": np.uint32,
    "LONG": np.int64, "ULONG": np.uint64, "LONGLONG": np.int64, "ULONGLONG": np.uint64,
    "SHORT": np.int16, "USHORT": np.uint16, "CHAR_S": np.int8, "SCHAR": np.int8, "CHAR_U": np.uint8,
    "UCHAR": np.uint8, "BOOL": np.bool_,
}
# The vector types of cuda_cpu.h: name -> lane type.
_VECTOR_LANES = {
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
    "uint": np.uint32, "float": np.float32, "long": np.int64, "ulong": np.uint64, "longlong": np.int64,
    "ulonglong": np.uint64, "double": np.float64,
}
_VECTOR = re.compile(r"(char|uchar|short|ushort|int|uint|float|long|ulong|longlong|ulonglong|double)([1-4])")
# The 16-bit floating-point types of cuda_fp16.h and cuda_bf16.h: (element dtype, lanes). NumPy
# has float16; a bfloat16 travels as its bits, uint16 (arguments.py also takes these bits for a
# __half, and a dtype named bfloat16, such as ml_dtypes', for a __nv_bfloat16).
_LOWP = {"__half": ("<f2", 1), "__half2": ("<f2", 2), "__nv_bfloat16": ("<u2", 1), "__nv_bfloat162": ("<u2", 2)}

# Names that CUDA's headers declare and a kernel must include, as with NVRTC: a kernel that uses
# one without its header is told which header it needs.
_HEADER_OF = {**{n: "cuda_fp16.h" for n in ("__half", "__half2", "half", "half2", "__float2half", "__float2half_rn",
                                              "__half2float", "__hadd", "__hmul", "__hfma", "__floats2half2_rn")},
              **{n: "cuda_bf16.h" for n in ("__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16", "__float2bfloat16",
                                              "__float2bfloat16_rn", "__bfloat162float")},
              "nvcuda": "mma.h", "wmma": "mma.h",
              **{n: "cuda_pipeline.h" for n in ("__pipeline_memcpy_async", "__pipeline_commit",
                                                "__pipeline_wait_prior")}}
_UNDECLARED = re.compile(r"(?:unknown type name|use of undeclared identifier|undeclared identifier) '(\w+)'")

# Typedefs of the C library NVRTC also knows.
_BUILTIN_TYPEDEFS = {"size_t", "ptrdiff_t", "std::nullptr_t", "clock_t"}


def _inside(path, folder):
    try:
        return Path(path).resolve().is_relative_to(Path(folder).resolve())
    except OSError:
        return False


# What the CPU runtime does not provide, by the identifier that gives it away.
# (<cuda_fp16.h>, <cuda_bf16.h>, <mma.h> and <cuda_pipeline.h> are provided: a kernel that uses
# __half or wmma without including them fails to compile, as it does with NVRTC.)
UNSUPPORTED = [
    (re.compile(r"bmma_sync|experimental"), "sub-byte tensor-core fragments (nvcuda::wmma::experimental)"),
    (re.compile(r"tex[123]D\w*|tex1Dfetch|texture|surf[123]D\w*|cudaTextureObject_t|cudaSurfaceObject_t"),
     "textures and surfaces"),
    (re.compile(r"this_grid|grid_group|this_multi_grid|multi_grid_group|this_cluster|cluster_group"),
     "grid-wide cooperative groups (cooperative launch)"),
    (re.compile(r"memcpy_async|pipeline|barrier_arrive\w*|__pipeline_arrive_on"),
     "the C++ pipeline and barrier APIs (cuda::pipeline, cuda::memcpy_async; <cuda_pipeline.h>'s primitives are "
     "provided)"),
]


@dataclass(frozen=True)
class Param:
    name: str
    base: str            # element type as the kernel sees it, canonical: "float", "unsigned int", "float4", "Particle"
    pointer: bool
    const: bool          # a pointer to const: the kernel cannot write through it (without const_cast)
    text: str            # the declaration as written, for messages
    descr: object = None # NumPy dtype of one element (of a vector type: of one lane), as dtype.descr; None: unknown
    lanes: int = 1
    itemsize: int = 0    # bytes of one element as the kernel declares it

    @property
    def dtype(self):
        return dtype_from(self.descr)


def _spec(d):
    if isinstance(d, dict):   # JSON turned the formats' (type, shape) tuples into lists
        return {**d, "formats": [(_spec(f[0]), tuple(f[1])) if isinstance(f, list) else _spec(f) for f in d["formats"]]}
    return d


def dtype_from(descr):
    """The NumPy dtype of a stored description (None stays None)."""
    return None if descr is None else np.dtype(_spec(descr))


@dataclass(frozen=True)
class Kernel:
    name: str                      # as get_function takes it: "tiled", "ns::scale" or "tiled<16>"
    function: str                  # the C++ identifier: "tiled"
    params: tuple
    line: int                      # the line of the kernel's definition, 1-based
    end_line: int = 0              # the line of its closing brace
    linkage: str = "C"             # "C" (extern "C") or "C++" (the GPU backend passes its name expression)


@dataclass(frozen=True)
class SharedVar:
    id: int
    name: str
    line: int
    extern: bool                   # extern __shared__: a view of the launch's dynamic shared memory
    function: str                  # the function it is declared in ("" at namespace scope)
    size: int                      # bytes, or -1 where it depends on template parameters


@dataclass(frozen=True)
class DeviceVar:
    name: str                      # as get_global takes it
    line: int
    space: str                     # "device", "constant" or "managed"
    size: int
    descr: object = None           # NumPy dtype of its elements
    shape: tuple = ()


@dataclass
class Program:
    kernels: dict                              # get_function name -> Kernel
    templates: list                            # qualified names of template kernels
    shared: list                               # SharedVar
    device_vars: list                          # DeviceVar
    unsupported: dict                          # kernel name (or template) -> (line, construct)
    edits: list = field(default_factory=list)  # (start, end, text): the CPU build's edits of the source
    namespace_shared: list = field(default_factory=list)   # (id, qualified name) of namespace-scope __shared__
    subscripts: dict = field(default_factory=dict)          # line -> [array name, outer bound] subscripted there
    # Whole programs (program=True) only:
    static_shared: dict = field(default_factory=dict)       # kernel name -> bytes of static __shared__ it uses
    allocations: dict = field(default_factory=dict)         # line -> the variable a cudaMalloc there allocates
    main_params: int = -1                                   # parameters of main (-1: the program has no main)

    def to_json(self):
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        d["kernels"] = {k: Kernel(**{**v, "params": tuple(Param(**p) for p in v["params"])})
                        for k, v in d["kernels"].items()}
        d["shared"] = [SharedVar(**s) for s in d["shared"]]
        d["device_vars"] = [DeviceVar(**{**v, "shape": tuple(v["shape"])}) for v in d["device_vars"]]
        d["unsupported"] = {k: tuple(v) for k, v in d["unsupported"].items()}
        d["edits"] = [tuple(e) for e in d["edits"]]
        d["namespace_shared"] = [tuple(e) for e in d["namespace_shared"]]
        return cls(**d)


# ---- running clang -----------------------------------------------------------------------

@lru_cache(maxsize=1)
def _clang():
    try:
        import clang.cindex as ci
    except ImportError:
        raise CompileError("the front end needs clang's Python bindings: pip install libclang", backend="any") from None
    index = ci.Index.create()
    atexit.register(_clang.cache_clear)   # release it while clang's module still exists
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


@lru_cache(maxsize=1)
def header_digest():
    """A digest of the CPU runtime's headers: part of every cache key built on them."""
    h = hashlib.sha256()
    for p in sorted(INCLUDE_DIR.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(INCLUDE_DIR)).encode() + p.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def _own_digest():
    own = "".join(Path(__file__).with_name(name).read_text() for name in ("frontend.py", "arith.py", "options.py"))
    return hashlib.sha256((header_digest() + own).encode()).hexdigest()


@lru_cache(maxsize=32)
def _precompiled_header(flags):
    """cuda_cpu.h precompiled by clang for these flags (a file in the disk cache), or None
    where it cannot be made: every parse then reads the source alone, not the ten thousand
    declarations of the headers again (0.13 s a parse, 0.05 s with it). The key holds the
    headers' digest and their times, which clang checks a precompiled header against; a
    parse that finds it stale anyway (a fatal diagnostic) parses the headers instead."""
    ci, index = _clang()
    stamps = "".join(f"{p}:{p.stat().st_mtime_ns}" for p in sorted(INCLUDE_DIR.rglob("*")) if p.is_file())
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


def _disk_cached(kind, parts, make, to_json, from_json):
    """make()'s result for these inputs, from the disk cache when it was made before."""
    path = cache.path(f"{cache.digest(_own_digest(), kind, *parts)}.json", "frontend")
    try:
        return from_json(path.read_text())
    except (OSError, ValueError, TypeError, KeyError):
        pass
    result = make()
    cache.write(path, lambda _, out: out.write_text(to_json(result)))
    return result


def analyze(source, options=(), name_expressions=(), program=False):
    """The Program of `source`, from the disk cache when this source was read before.
    program=True: a whole program (host code and kernels) whose launches find_launches
    has already rewritten: host code may use the C and C++ libraries and the CUDA runtime
    API; the checks of what NVRTC refuses apply to device code only."""
    return _disk_cached("program" if program else "module", [source, *options, "|", *name_expressions],
                        lambda: _Reader(source, tuple(options), tuple(name_expressions), program).read(),
                        Program.to_json, Program.from_json)


@dataclass(frozen=True)
class Launch:
    line: int
    kernel: str          # as get_function takes it; a template instance as its name expression: "tiled<16>"


def find_launches(source, options=()):
    """The kernel launches of a whole program, `kernel<<<grid, block, shared, stream>>>(args)`,
    found by clang parsing it as CUDA (host side), and the line-preserving edits that turn
    each into `::kc::launch_kernel(ID, __LINE__, kernel, grid, block, shared, stream)(args)`
    (cpu/include/kc_host.h), ID being the launch's index. Returns (launches, edits)."""
    def to_json(r):
        return json.dumps([[asdict(x) for x in r[0]], r[1]])

    def from_json(text):
        launches, edits = json.loads(text)
        return [Launch(**x) for x in launches], [tuple(e) for e in edits]
    return _disk_cached("launches", [source, *options], lambda: _LaunchFinder(source, tuple(options)).find(),
                        to_json, from_json)


class _LaunchFinder:
    def __init__(self, source, options):
        self.source, self.code = source, source.encode()
        self.ci, self.index = _clang()
        flags = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-std=c++17", "-DKC_FRONTEND",
                 "-DKC_PROGRAM", "-Wno-unknown-cuda-version", f"-I{INCLUDE_DIR}", "-include", "cuda_cpu.h",
                 *user_flags(options)]
        inc = _gcc_include(config.cxx)
        if inc:
            flags += ["-isystem", inc]
        self.tu = self.index.parse(SOURCE_NAME, args=flags, unsaved_files=[(SOURCE_NAME, source)],
                                   options=self.ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
        K = self.ci.CursorKind
        self.expansions = [c for c in self.tu.cursor.get_children()
                           if c.kind == K.MACRO_INSTANTIATION and c.location.file is not None
                           and c.location.file.name == SOURCE_NAME]
        self.macros_done = set()   # definitions already rewritten

    def _check_host_errors(self):
        """An error in host code is the program's own (a typo on a launch line): report it
        as nvcc would. Device code is ignored here: parsed for the host side, its calls of
        the runtime's device functions do not resolve (the C++ parse checks it)."""
        K = self.ci.CursorKind
        device = []
        for c in self.tu.cursor.walk_preorder():
            if c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD) and any(
                    a.kind in (K.CUDAGLOBAL_ATTR, K.CUDADEVICE_ATTR) for a in c.get_children()):
                device.append((c.extent.start.line, c.extent.end.line))
        for d in self.tu.diagnostics:
            line = d.location.line
            if d.severity >= 3 and d.location.file and d.location.file.name == SOURCE_NAME \
                    and not any(lo <= line <= hi for lo, hi in device):
                raise CompileError(f"{SOURCE_NAME} did not compile (clang, reading the program's host code):\n\n"
                                   f"line {line}: {d.spelling}\n{numbered(self.source, {line})}", backend="cpu")

    def find(self):
        K = self.ci.CursorKind
        self._check_host_errors()
        launches, edits = [], []
        stack = [c for c in self.tu.cursor.get_children() if c.location.file and c.location.file.name == SOURCE_NAME]
        while stack:
            c = stack.pop()
            kids = list(c.get_children())
            cfg = next((k for k in kids[1:2] if k.kind == K.CALL_EXPR and k.referenced is not None
                        and k.referenced.spelling == "__cudaPushCallConfiguration"), None)
            if c.kind == K.CALL_EXPR and cfg is not None:
                launches.append(self._launch(c, kids[0], cfg, len(launches), edits))
            stack.extend(reversed(kids))
        return launches, edits

    def _launch(self, call, callee, cfg, ident, edits):
        line = call.location.line
        start, lo, hi = callee.extent.start.offset, cfg.extent.start.offset, cfg.extent.end.offset
        fn = call.referenced
        written_out = (call.location.file is not None and call.location.file.name == SOURCE_NAME
                       and self.code[lo:lo + 3] == b"<<<" and self.code[hi - 3:hi] == b">>>")
        if fn is None or fn.kind != self.ci.CursorKind.FUNCTION_DECL or not (
                written_out or self._macro_launch(call, ident, edits)):
            raise UnsupportedFeatureError(
                f"{SOURCE_NAME}, line {line}: the CPU runtime runs kernel launches written out as "
                f"`kernel<<<grid, block>>>(args)` on one kernel named directly, or through a macro whose "
                f"definition writes one out; this launch is built another way (a function pointer, a macro that "
                f"launches twice or builds the kernel's name). Write it out, or run the program on a GPU "
                f"(backend='gpu').\n{numbered(self.source, {line})}", backend="cpu")
        scope, p = [], fn.semantic_parent
        while p is not None and p.kind == self.ci.CursorKind.NAMESPACE:
            scope.insert(0, p.spelling)
            p = p.semantic_parent
        name = "::".join(scope + [fn.spelling])
        if fn.get_num_template_arguments() > 0:
            args = []
            for i in range(fn.get_num_template_arguments()):
                t = fn.get_template_argument_type(i)   # INVALID: a value, not a type
                value = t.spelling if t.kind != self.ci.TypeKind.INVALID else str(fn.get_template_argument_value(i))
                args.append(value)
            name = f"{name}<{', '.join(args)}>"
        if written_out:
            edits += [(start, start, f"::kc::launch_kernel({ident}, __LINE__, "), (lo, lo + 3, ", "), (hi - 3, hi, ")")]
        return Launch(line=line, kernel=name)

    def _macro_launch(self, call, ident, edits):
        """A launch that a macro of the source writes out (`#define LAUNCH(k, g, b, ...)
        k<<<g, b>>>(__VA_ARGS__)`): the definition's launch becomes launch_kernel's call, with
        the launch's number taken from ::kc::macro_launch, which each use of the macro sets
        (`do { ::kc::macro_launch = ID; LAUNCH(...); } while (0)`, the use's own `;` ending
        it). Returns False where the macro is not of that shape (a launch built another way)."""
        at = call.extent.start.offset
        use = next((m for m in self.expansions if m.extent.start.offset <= at < m.extent.end.offset), None)
        definition = use.referenced if use is not None else None
        if definition is None or definition.location.file is None or definition.location.file.name != SOURCE_NAME:
            return False
        d_lo, d_hi = definition.extent.start.offset, definition.extent.end.offset
        text = self.code[d_lo:d_hi]
        if text.count(b"<<<") != 1 or text.count(b">>>") != 1:
            return False
        open_at, close_at = d_lo + text.index(b"<<<"), d_lo + text.index(b">>>")
        kernel = re.search(rb"([A-Za-z_][\w:]*)\s*$", self.code[d_lo:open_at])
        if kernel is None or close_at < open_at:
            return False
        if definition.hash not in self.macros_done:
            self.macros_done.add(definition.hash)
            k_at = d_lo + kernel.start(1)
            edits += [(k_at, k_at, "::kc::launch_kernel(::kc::macro_launch, __LINE__, "),
                      (open_at, open_at + 3, ", "), (close_at, close_at + 3, ")")]
        u_lo, u_hi = use.extent.start.offset, use.extent.end.offset
        edits += [(u_lo, u_lo, f"do {{ ::kc::macro_launch = {ident}; "), (u_hi, u_hi, "; } while (0)")]
        return True


class _Reader:
    def __init__(self, source, options, name_expressions, program=False):
        self.source = source
        self.program = program
        self.options = options
        self.exprs = name_expressions
        self.ci, self.index = _clang()
        self.code = source.encode()

    # -- parsing --
    def _parse(self, text):
        flags = ["-std=c++17", "-DKC_FRONTEND", f"-I{INCLUDE_DIR}",
                 *(["-DKC_PROGRAM"] if self.program else [CUDA_ARCH_FLAG]),
                 *user_flags(self.options)]
        inc = _gcc_include(config.cxx)
        if inc:
            flags += ["-isystem", inc]
        detailed = self.ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
        pch = _precompiled_header(tuple(flags))
        if pch is not None:
            tu = self.index.parse(SOURCE_NAME, args=["-x", "c++", *flags, "-include-pch", pch],
                                  unsaved_files=[(SOURCE_NAME, text)], options=detailed)
            if not any(d.severity >= 4 for d in tu.diagnostics):
                return tu
        return self.index.parse(SOURCE_NAME, args=["-x", "c++", *flags, "-include", "cuda_cpu.h"],
                                unsaved_files=[(SOURCE_NAME, text)], options=detailed)

    def read(self):
        nlines = self.source.count("\n") + 1
        probes = "".join(f"\nauto kc_probe_{i} = &{e};" for i, e in enumerate(self.exprs))
        tu = self._parse(self.source + "\n" + probes)
        self.tu, self.file = tu, tu.get_file(SOURCE_NAME)
        errors = [d for d in tu.diagnostics if d.severity >= 3]
        missing = [d for d in errors if "file not found" in d.spelling and d.location.line <= nlines]
        if missing:
            d = missing[0]
            raise UnsupportedFeatureError(
                f"{SOURCE_NAME} includes a header the CPU runtime does not provide ({d.spelling}, line "
                f"{d.location.line}). The kernel can run on a GPU with backend='gpu'.\n"
                f"{numbered(self.source, {d.location.line})}", backend="cpu")
        self.errors = [(d.location.line, d.location.column, d.spelling) for d in errors
                       if d.location.file and d.location.file.name == SOURCE_NAME]
        for line, _col, text in self.errors:
            m = _UNDECLARED.search(text)
            if m and m.group(1) in _HEADER_OF:
                raise CompileError(
                    f"{SOURCE_NAME}({line}): error: identifier \"{m.group(1)}\" is undefined: it is declared by "
                    f"<{_HEADER_OF[m.group(1)]}>, which the kernel does not include (NVRTC does not include it "
                    f"either). Add #include <{_HEADER_OF[m.group(1)]}> at the top; the CPU runtime provides it."
                    f"\n{numbered(self.source, {line})}", backend="any")
        if not self.program:
            self._check_includes(tu)
        self.static_shared, self.allocations = {}, {}
        self.kernels, self.templates, self.shared, self.device_vars = {}, {}, [], []
        self.edits, self.namespace_shared, self.subscripts = [], [], {}
        self._extern_types = {}
        self.functions = {}     # USR -> (cursor, qualified name, what its body holds) of each function defined here
        self.arith = Rewriter(self.ci, tu, self.code, fmad_enabled(self.options), self._mine)
        for c in tu.cursor.get_children():
            if self._mine(c):
                self._top(c, [])
        self.edits.extend(self.arith.result())
        self._check_functions()
        self._check_static_shared()
        unsupported = self._unsupported()
        self._probe(tu, nlines)
        mains = [fn for fn, qual, _ in self.functions.values() if qual == "main"]
        if self.program and unsupported:
            name, (line, construct) = min(unsupported.items(), key=lambda kv: kv[1][0])
            raise UnsupportedFeatureError(
                f"{SOURCE_NAME}, line {line}: `{name}` uses {construct}, which the CPU runtime does not provide. The "
                f"program can run on a GPU with backend='gpu'.\n{numbered(self.source, {line})}", backend="cpu")
        return Program(kernels=self.kernels, templates=sorted(self.templates), shared=self.shared,
                       device_vars=self.device_vars, unsupported=unsupported, edits=sorted(self.edits),
                       namespace_shared=self.namespace_shared, subscripts=self.subscripts,
                       static_shared=self.static_shared, allocations=self.allocations,
                       main_params=len(list(mains[0].get_arguments())) if mains else -1)

    def _check_includes(self, tu):
        """NVRTC, the GPU backend's compiler, has no C or C++ library headers: CUDA's own
        headers are found (CuPy passes the toolkit's include folder), <cstdio> or <stdint.h>
        are not. The CPU runtime refuses them too, so that what runs here runs there."""
        allowed = [INCLUDE_DIR] + [Path(f[2:]) for f in user_flags(self.options) if f.startswith("-I")]
        for c in tu.cursor.get_children():
            if c.kind != self.ci.CursorKind.INCLUSION_DIRECTIVE or not self._mine(c):
                continue
            included = c.get_included_file()
            path = Path(included.name if included else c.spelling)
            if included and any(_inside(path, d) for d in allowed):
                continue
            line = c.location.line
            raise CompileError(
                f"{SOURCE_NAME}({line}): catastrophic error: cannot open source file \"{path.name}\" (as NVRTC, the "
                f"GPU backend's compiler, reports it: it has no C or C++ library headers). printf, malloc, memcpy, "
                f"memset and the math functions are built in; for constants include <math_constants.h> "
                f"(CUDART_INF_F, CUDART_PI_F, ...), and use int, unsigned, long long for fixed-size integers."
                f"\n{numbered(self.source, {line})}", backend="any")

    def _mine(self, c):
        return bool(self.ci.conf.lib.clang_Location_isFromMainFile(c.location))

    def _tokens(self, c):
        """The tokens of a cursor's extent (by file offsets: a cursor's own get_tokens() is
        empty when its extent starts in a macro such as __device__)."""
        ci = self.ci
        ext = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(self.tu, self.file, c.extent.start.offset),
                                            ci.SourceLocation.from_offset(self.tu, self.file, c.extent.end.offset))
        return list(self.tu.get_tokens(extent=ext))

    def _annotations(self, c):
        K = self.ci.CursorKind
        return {a.spelling for a in c.get_children() if a.kind == K.ANNOTATE_ATTR}

    # -- declarations --
    def _top(self, c, scope):
        K = self.ci.CursorKind
        if c.kind in (K.NAMESPACE,):
            for ch in c.get_children():
                self._top(ch, scope + [c.spelling])
        elif c.kind in (K.LINKAGE_SPEC, K.UNEXPOSED_DECL):
            for ch in c.get_children():
                self._top(ch, scope)
        elif c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and c.is_definition():
            qual = "::".join(scope + [c.spelling])
            if "kc_global" in self._annotations(c):
                self._kernel(c, qual)
            self._body(c, qual, kernel="kc_global" in self._annotations(c))
        elif c.kind == K.VAR_DECL:
            ann = self._annotations(c)
            qual = "::".join(scope + [c.spelling])
            if not self.program or ann & {"kc_device", "kc_constant", "kc_managed"}:
                self._check_initializer(c)
            if "kc_shared" in ann:
                self._shared(c, "", qual)
            elif ann & {"kc_device", "kc_constant", "kc_managed"}:
                self._device_var(c, qual, ann)
        elif c.kind in (K.STRUCT_DECL, K.CLASS_DECL, K.CLASS_TEMPLATE):
            for ch in c.get_children():
                if ch.kind in (K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONVERSION_FUNCTION, K.CONSTRUCTOR,
                               K.DESTRUCTOR) and ch.is_definition():
                    self._body(ch, "::".join(scope + [c.spelling, ch.spelling]), kernel=False)

    def _kernel(self, c, qual):
        K = self.ci.CursorKind
        if c.kind == K.FUNCTION_TEMPLATE:
            self.templates[qual] = c
            return
        linkage = "C" if c.mangled_name == c.spelling else "C++"
        name = c.spelling if linkage == "C" else qual
        params = tuple(self._param(a, a.type) for a in c.get_arguments())
        self.kernels[name] = Kernel(name=name, function=c.spelling, params=params, line=c.extent.start.line,
                                    end_line=c.extent.end.line, linkage=linkage)

    def _text(self, c):
        return self.code[c.extent.start.offset:c.extent.end.offset].decode(errors="replace")

    def _param(self, decl, ptype):
        """A Param from a parameter's declaration and its (possibly instantiated) type."""
        T = self.ci.TypeKind
        t = ptype.get_canonical()
        pointer = t.kind in (T.POINTER, T.INCOMPLETEARRAY, T.CONSTANTARRAY)
        elem = (t.get_pointee() if t.kind == T.POINTER else t.element_type) if pointer else t
        const = pointer and elem.is_const_qualified()
        elem_c = elem.get_canonical()
        base = re.sub(r"\b(const|volatile|struct|class)\b\s*", "", elem_c.spelling).strip()
        descr, lanes = self._dtype(elem_c)
        size = elem_c.get_size()
        return Param(name=decl.spelling, base=base, pointer=pointer, const=bool(const),
                     text=" ".join(self._text(decl).split()) or f"{ptype.spelling} {decl.spelling}",
                     descr=descr, lanes=lanes, itemsize=max(int(size), 0))

    def _dtype(self, t):
        """(dtype.descr, lanes) of a canonical element type; (None, 1) if NumPy has no such type."""
        T = self.ci.TypeKind
        t = t.get_canonical()
        if t.kind == T.ENUM:
            t = t.get_declaration().enum_type.get_canonical()
        if t.kind.name in _SCALARS:
            return np.dtype(_SCALARS[t.kind.name]).str, 1
        if t.kind == T.RECORD:
            name = re.sub(r"\b(const|volatile|struct|class)\b\s*", "", t.spelling).strip()
            if name in _LOWP:
                return _LOWP[name]
            m = _VECTOR.fullmatch(name)
            if m:
                return np.dtype(_VECTOR_LANES[m.group(1)]).str, int(m.group(2))
            fields = []
            for f in t.get_fields():
                fd, lanes = self._dtype(f.type)
                if fd is None:
                    return None, 1
                ft = f.type.get_canonical()
                shape = []
                while ft.kind == T.CONSTANTARRAY:   # float m[4][4]: shape (4, 4)
                    shape.append(ft.element_count)
                    ft = ft.element_type.get_canonical()
                if lanes > 1:
                    shape.append(lanes)
                shape = tuple(shape)
                fields.append((f.spelling, _spec(fd), shape))
            if not fields or t.get_size() <= 0:
                return None, 1
            dt = np.dtype({"names": [f[0] for f in fields], "formats": [(f[1], f[2]) if f[2] else f[1] for f in fields],
                           "offsets": [t.get_offset(f[0]) // 8 for f in fields], "itemsize": t.get_size()})
            return _json_descr(dt), 1
        if t.kind == T.CONSTANTARRAY:
            return self._dtype(t.element_type)
        return None, 1

    def _device_var(self, c, qual, ann):
        T = self.ci.TypeKind
        space = "constant" if "kc_constant" in ann else "managed" if "kc_managed" in ann else "device"
        t = c.type.get_canonical()
        if t.is_const_qualified() and space == "device":
            return   # a constant of the program: nothing to share
        shape = []
        e = t
        while e.kind == T.CONSTANTARRAY:
            shape.append(e.element_count)
            e = e.element_type.get_canonical()
        descr, lanes = self._dtype(e)
        if lanes > 1:
            shape.append(lanes)
        self.device_vars.append(DeviceVar(name=qual, line=c.location.line, space=space, size=max(t.get_size(), 0),
                                          descr=descr, shape=tuple(shape)))
        # __device__ int x;  ->  KC_DEVICE_VAR int x;  (a section every worker shares; cpu/include/cuda_cpu.h)
        first = True
        for tok in self._tokens(c):
            if tok.spelling in ("__device__", "__constant__", "__managed__"):
                self.edits.append((tok.extent.start.offset, tok.extent.end.offset, "KC_DEVICE_VAR" if first else ""))
                first = False

    def _shared(self, c, function, qual, stmt=None):
        T = self.ci.TypeKind
        extern = c.storage_class.name == "EXTERN"
        if c.storage_class.name == "STATIC":
            # `static __shared__`: __shared__ already means static on the CPU runtime.
            for tok in self._tokens(stmt if stmt is not None else c):
                if tok.spelling == "static":
                    edit = (tok.extent.start.offset, tok.extent.end.offset, "")
                    if edit not in self.edits:
                        self.edits.append(edit)
                    break
        sid = len(self.shared)
        size = c.type.get_canonical().get_size() if not extern else 0
        self.shared.append(SharedVar(id=sid, name=c.spelling, line=c.location.line, extern=extern,
                                     function=function, size=int(size) if size >= 0 else -1))
        if extern:
            # All extern __shared__ arrays are one memory: NVRTC refuses two of one name and
            # different types ("declaration is incompatible with previous").
            elem_type = c.type.get_canonical().spelling
            first = self._extern_types.setdefault(c.spelling, (elem_type, c.location.line))
            if first[0] != elem_type:
                line = c.location.line
                raise CompileError(
                    f"{SOURCE_NAME}({line}): error: declaration is incompatible with previous \"{c.spelling}\" "
                    f"(declared at line {first[1]}), as NVRTC reports it: every extern __shared__ array of a source "
                    f"names the same memory, so one name can have one type; give this one another name."
                    f"\n{numbered(self.source, {first[1], line})}", backend="any")
            # extern __shared__ T name[];  ->  T (&name)[] = <the launch's dynamic shared memory>;
            # same type, so casts, decay and arithmetic behave as on a GPU.
            elem = c.type.element_type.spelling if c.type.kind == T.INCOMPLETEARRAY else c.type.spelling
            span = stmt if stmt is not None else c
            text = (f"{elem} (&{c.spelling})[] = *reinterpret_cast<{elem} (*)[]>("
                    f"::kc::dynamic_shared(\"{c.spelling}\", {sid}, sizeof({elem}), ::kc::granule<{elem}>()));")
            start, end = span.extent.start.offset, span.extent.end.offset
            if stmt is None:   # namespace scope: the declaration's extent stops before its ';'
                end = self.code.index(b";", end) + 1
            self.edits.append((start, end, text))
        elif stmt is not None:
            # Registered as each thread passes the declaration: its name, size and shape, for
            # checked mode and for the GPU's 48 KiB limit on static shared memory.
            at = stmt.extent.end.offset
            self._registrations.append((at, at, f" ::kc::shared_register({sid}, {c.spelling});"))
        else:
            self.namespace_shared.append((sid, qual))

    # -- function bodies --
    def _body(self, fn, qual, kernel):
        """Walk one function definition: its shared variables, returns (of a kernel), calls,
        array subscripts and inline assembly."""
        K = self.ci.CursorKind
        self._registrations = []
        # Device code: what NVRTC (or nvcc's device side) compiles. In a whole program, host
        # functions (no __device__ or __global__) may use the C and C++ libraries.
        device = not self.program or bool(self._annotations(fn) & {"kc_device", "kc_global"})
        if device:
            self.arith.function(fn)
        info = {"calls": set(), "asm": [], "extent": (fn.extent.start.offset, fn.extent.end.offset),
                "lines": (fn.extent.start.line, fn.extent.end.line), "kernel": kernel, "device": device}
        stack = [(ch, None, False) for ch in reversed(list(fn.get_children()))]   # in source order
        while stack:
            c, stmt, in_lambda = stack.pop()
            k = c.kind
            if k == K.VAR_DECL and "kc_shared" in self._annotations(c):
                self._shared(c, qual, qual, stmt)
            elif k == K.RETURN_STMT and kernel and not in_lambda:
                tok = next(iter(self._tokens(c)), None)
                if tok is not None and tok.spelling == "return":
                    # A thread that returns is recorded with its line, for divergent-barrier reports.
                    self.edits.append((tok.extent.start.offset, tok.extent.end.offset,
                                       "return (void)::kc::thread_exit(__LINE__)"))
            elif k in (K.CALL_EXPR, K.DECL_REF_EXPR):
                # A call, or a function named without being called (its address taken).
                ref = c.referenced
                if ref is not None and (k == K.CALL_EXPR or ref.kind == K.FUNCTION_DECL):
                    info["calls"].add((ref.get_usr(), ref.spelling, c.location.line, *self._origin(ref)))
                    if self.program and ref.spelling == "cudaMalloc":
                        self._allocation(c)
            elif k == K.TYPE_REF and device and c.spelling not in _BUILTIN_TYPEDEFS:
                ref = c.referenced
                f = ref.location.file.name if ref is not None and ref.location.file else ""
                if f and f != SOURCE_NAME and not _inside(Path(f), INCLUDE_DIR) and ref.kind == K.TYPEDEF_DECL:
                    line = c.location.line
                    raise CompileError(
                        f"{SOURCE_NAME}({line}): error: identifier \"{ref.spelling}\" is undefined (as NVRTC reports "
                        f"it: {ref.spelling} comes from the C library, which device code does not have). Use a type "
                        f"of the language (int, unsigned, long long) or declare it with typedef.\n"
                        f"{numbered(self.source, {line})}", backend="any")
            elif k in (K.ASM_STMT, K.MS_ASM_STMT):
                info["asm"].append(c.location.line)
            elif k == K.ARRAY_SUBSCRIPT_EXPR:
                base = next(iter(c.get_children()), None)
                while base is not None and base.kind in (K.UNEXPOSED_EXPR, K.ARRAY_SUBSCRIPT_EXPR, K.PAREN_EXPR):
                    base = next(iter(base.get_children()), None)
                if base is not None and base.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR) and base.spelling:
                    t = base.type.get_canonical()
                    bound = t.element_count if t.kind.name == "CONSTANTARRAY" else 0
                    names = self.subscripts.setdefault(str(c.location.line), [])
                    if [base.spelling, bound] not in names:
                        names.append([base.spelling, bound])
            stack.extend((ch, c if k == K.DECL_STMT else stmt, in_lambda or k == K.LAMBDA_EXPR)
                         for ch in reversed(list(c.get_children())))
        self.edits.extend(self._registrations)
        self.functions[fn.get_usr()] = (fn, qual, info)

    def _origin(self, fn):
        """(file, defined): the file a function is first declared in, and whether this
        translation unit defines it (a member or constructor counts as defined: the
        compiler may define it implicitly)."""
        first = fn.canonical
        file = first.location.file.name if first.location.file else ""
        free = fn.kind == self.ci.CursorKind.FUNCTION_DECL
        return file, not free or fn.get_definition() is not None or fn.is_definition()

    # Functions a kernel may call from the C library: CUDA's device math and these.
    _DEVICE_LIBC = {"printf", "malloc", "free", "memset", "memcpy", "memmove", "memcmp", "abs", "labs", "llabs"}

    def _allocation(self, call):
        """The variable `cudaMalloc(&d_A, bytes)` (or `(void**)&d_A`) allocates, by its line."""
        K = self.ci.CursorKind
        first = next(iter(call.get_arguments()), None)
        todo = [first] if first is not None else []
        while todo:
            c = todo.pop()
            if c.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR) and c.referenced is not None \
                    and c.referenced.kind in (K.VAR_DECL, K.PARM_DECL, K.FIELD_DECL):
                self.allocations.setdefault(str(call.location.line), c.spelling)
                return
            todo.extend(reversed(list(c.get_children())))

    def _check_functions(self):
        """NVRTC refuses host functions in device code (exit, abort, rand, ...): so does this."""
        for fn, _qual, info in self.functions.values():
            if info["device"]:
                for _usr, name, line, file, defined in sorted(info["calls"], key=lambda x: x[2]):
                    self._check_callee(name, line, file, defined, fn.spelling)

    def _check_callee(self, name, line, file, defined, caller):
        """Device code (`caller`) may call, or take the address of, the functions the source
        defines, CUDA's device functions and the few of the C library that CUDA provides."""
        if file == SOURCE_NAME and not defined and not name.startswith("__builtin_"):   # a compiler built-in
            # Declared by the kernel's source and defined nowhere (a C library function
            # declared by hand, say): nothing on a GPU provides it.
            raise CompileError(
                f"{SOURCE_NAME}({line}): error: `{name}` is declared but never defined, so device code cannot "
                f"call it (ptxas fatal: Unresolved extern function '{name}', as a GPU's compiler reports it). "
                f"Device code may call only the functions the source defines and CUDA's device functions; "
                f"give `{name}` a body in the source.\n{numbered(self.source, {line})}", backend="any")
        if not file or file == SOURCE_NAME or _inside(file, INCLUDE_DIR):
            return
        if name in self._DEVICE_LIBC or "math" in Path(file).name:
            return
        raise CompileError(
            f"{SOURCE_NAME}({line}): error: calling a __host__ function(\"{name}\") from a __device__ or "
            f"__global__ function(\"{caller}\") is not allowed (as NVRTC reports it: device code "
            f"cannot call the C library's {name}()).\n{numbered(self.source, {line})}", backend="any")

    def _check_initializer(self, var):
        """A device variable's initializer naming a function (a function pointer): the same
        rule as a call."""
        K = self.ci.CursorKind
        for c in var.walk_preorder():
            ref = c.referenced if c.kind == K.DECL_REF_EXPR else None
            if ref is not None and ref.kind == K.FUNCTION_DECL:
                self._check_callee(ref.spelling, c.location.line, *self._origin(ref), var.spelling)

    def _check_static_shared(self):
        """A kernel's static __shared__ variables, its own and those of the device functions
        it calls, may total 48 KiB: NVRTC (ptxas) refuses more, and so does this. Sizes
        that depend on template parameters are checked at launch instead (kc_runtime.cpp)."""
        by_function = {}
        for v in self.shared:
            if not v.extern and v.size > 0:
                by_function[v.function] = by_function.get(v.function, 0) + v.size
        entries = list(self.functions.values())
        usr_of = {v[1]: usr for usr, v in self.functions.items()}
        for fn, qual, info in entries:
            if not info["kernel"] or fn.kind.name == "FUNCTION_TEMPLATE":
                continue
            seen, todo, total = set(), [qual], 0
            while todo:
                q = todo.pop()
                if q in seen:
                    continue
                seen.add(q)
                total += by_function.get(q, 0)
                callee_info = self.functions.get(usr_of.get(q, ""), (None, None, {"calls": ()}))[2]
                todo.extend(self.functions[u][1] for u, *_ in callee_info["calls"] if u in self.functions)
            self.static_shared[fn.spelling if fn.mangled_name == fn.spelling else qual] = total
            if total > DEFAULT_SHARED_LIMIT:
                lines = sorted({v.line for v in self.shared if v.function in seen and not v.extern})
                raise CompileError(
                    f"{SOURCE_NAME}: error: entry function '{fn.spelling}' uses too much shared data "
                    f"({total:#x} bytes, {DEFAULT_SHARED_LIMIT:#x} max): its static __shared__ variables total "
                    f"{total} bytes, and a GPU allows {DEFAULT_SHARED_LIMIT} (48 KiB). Use smaller arrays, or "
                    f"`extern __shared__` with the kernel's max_dynamic_shared_size_bytes opt-in."
                    f"\n{numbered(self.source, set(lines))}",
                    backend="any")

    def _unsupported(self):
        """Kernels the CPU runtime cannot run, each with the line and construct; their
        definitions (and those of device functions only they need) are left out of the
        CPU build, so the rest of the file still runs."""
        bad = {}   # function USR -> (line, construct)
        for usr, (fn, _qual, info) in self.functions.items():
            lo, hi = info["lines"]
            if info["asm"]:
                bad[usr] = (info["asm"][0], "inline PTX assembly (asm)")
                continue
            for line, _col, text in self.errors:
                if lo <= line <= hi:
                    construct = self._construct(text, fn, line)
                    if construct:
                        bad[usr] = (line, construct)
                        break
        # A function that calls an unsupported one is unsupported too.
        changed = True
        while changed:
            changed = False
            for usr, (_fn, _qual, info) in self.functions.items():
                if usr in bad:
                    continue
                for callee, name, line, *_ in info["calls"]:
                    if callee in bad:
                        bad[usr] = (line, f"{bad[callee][1]}, through {name}()")
                        changed = True
                        break
        out = {}
        for usr, (line, construct) in bad.items():
            fn, qual, info = self.functions[usr]
            start, end = info["extent"]
            self.edits.append((start, end, ""))
            self.edits = [e for e in self.edits if not (start <= e[0] < end) or e == (start, end, "")]
            if info["kernel"]:
                name = qual if (qual in self.templates or fn.mangled_name != fn.spelling) else fn.spelling
                out[name] = (line, construct)
        return out

    def _construct(self, message, fn, line):
        """The CUDA feature an error inside `fn` points at, or None for an ordinary mistake."""
        for name in re.findall(r"'([^']+)'", message):
            for pattern, what in UNSUPPORTED:
                if pattern.fullmatch(name.split("::")[-1]) or pattern.fullmatch(name.split("::")[0]):
                    return what
        toks = [t.spelling for t in self._tokens(fn) if t.location.line == line]
        if any(a == "<<" and b == "<" for a, b in zip(toks, toks[1:])):
            return "launching kernels from a kernel (dynamic parallelism)"
        return None

    # -- template instances --
    def _probe(self, tu, nlines):
        K = self.ci.CursorKind
        probes = {}
        for c in tu.cursor.get_children():
            if c.kind == K.VAR_DECL and c.spelling.startswith("kc_probe_") and self._mine(c):
                probes[int(c.spelling[9:])] = c
        for i, expr in enumerate(self.exprs):
            fn = re.sub(r"\s+", "", expr.split("<")[0])
            line = nlines + 1 + i
            errs = [t for n, _, t in self.errors if n == line]
            if errs or i not in probes or probes[i].type.get_pointee().kind.name != "FUNCTIONPROTO":
                known = ", ".join(sorted(self.templates) + sorted(self.kernels)) or "none"
                raise KeyError(f"{expr!r} is not a kernel instance of this source (kernels found: {known})"
                               + (f": {errs[0]}" if errs else ""))
            pattern = self.templates.get(fn) or next((t for q, t in self.templates.items() if q.split("::")[-1] == fn),
                                                     None)
            if pattern is None:
                if fn in self.kernels:
                    continue   # a name expression for a plain kernel
                raise KeyError(f"no template kernel {fn!r} in this source (kernels found: "
                               f"{', '.join(sorted(self.templates) + sorted(self.kernels)) or 'none'})")
            decls = [a for a in pattern.get_children() if a.kind == K.PARM_DECL]
            types = list(probes[i].type.get_pointee().argument_types())
            params = tuple(self._param(d, t) for d, t in zip(decls, types))
            name = " ".join(expr.split())
            self.kernels[name] = Kernel(name=name, function=pattern.spelling, params=params,
                                        line=pattern.extent.start.line, end_line=pattern.extent.end.line,
                                        linkage="C++")


def _json_descr(dt):
    """A structured dtype as JSON-able data that np.dtype() reads back."""
    return {"names": list(dt.names), "formats": [dt.fields[n][0].str if not dt.fields[n][0].subdtype else
                                                  [dt.fields[n][0].subdtype[0].str, list(dt.fields[n][0].shape)]
                                                  for n in dt.names],
            "offsets": [dt.fields[n][1] for n in dt.names], "itemsize": dt.itemsize}
