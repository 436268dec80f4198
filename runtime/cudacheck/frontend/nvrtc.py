"""What NVRTC refuses, refused on the CPU runtime too, with NVRTC's words: so that a kernel
that runs here compiles on a GPU. Each check raises CompileError (backend="any") naming the
line, and says what to write instead.

- a CUDA header's name (__half, wmma) used without including the header;
- a C or C++ library header (NVRTC has none), or a type of the C library in device code;
- a member of namespace std (`std::exp2`, `std::swap`, `std::numeric_limits`): NVRTC's std has
  only std::move, std::forward, std::initializer_list and std::align_val_t;
- device code calling a host function of the C library, or a function declared and never defined;
- a kernel's static __shared__ variables, its callees' included, over 48 KiB;
- two extern __shared__ arrays of one name with different types;
- texture references (`texture<T, dim, mode>`, cudaBindTexture), which CUDA 12 removed.
"""
import re
from pathlib import Path

from ..errors import CompileError
from ..launch import DEFAULT_SHARED_LIMIT  # also the static __shared__ NVRTC (ptxas) accepts per kernel
from ..listing import numbered
from ..options import user_flags
from .libclang import INCLUDE_DIR, SOURCE_NAME, in_runtime, inside, main_file, origin, spelled_offset, template_of

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

# Functions a kernel may call from the C library: CUDA's device math and these.
_DEVICE_LIBC = {"printf", "malloc", "free", "memset", "memcpy", "memmove", "memcmp", "abs", "labs", "llabs"}


def check_headers_included(errors, source):
    """errors: clang's (line, column, message) in the source. A name of CUDA's headers that is
    undeclared: the kernel did not include the header, which NVRTC does not include either."""
    for line, _col, text in errors:
        m = _UNDECLARED.search(text)
        if m and m.group(1) in _HEADER_OF:
            header = _HEADER_OF[m.group(1)]
            raise CompileError(
                f"{SOURCE_NAME}({line}): error: identifier \"{m.group(1)}\" is undefined: it is declared by "
                f"<{header}>, which the kernel does not include (NVRTC does not include it "
                f"either). Add #include <{header}> at the top; the CPU runtime provides it."
                f"\n{numbered(source, {line})}", backend="any")


# Texture references and the host calls that bound them: CUDA 12 removed them (NVRTC and nvcc
# of CUDA 12 and 13 know none of these names); texture objects replace them.
_TEXTURE_REFERENCE = re.compile(r"'(texture|cudaBindTexture\w*|cudaUnbindTexture|cudaGetTextureReference|"
                                r"cudaGetTextureAlignmentOffset)'")


def check_texture_references(errors, source):
    """errors: clang's (line, column, message) in the source. A texture reference, which no
    CUDA since 12 compiles: a CompileError naming the texture object that replaces it."""
    for line, _col, text in errors:
        m = _TEXTURE_REFERENCE.search(text)
        if m:
            raise CompileError(
                f"{SOURCE_NAME}({line}): error: `{m.group(1)}` is part of the texture reference API, which CUDA 12 "
                "removed (nvcc and NVRTC refuse it too). Use a texture object instead: a cudaTextureObject_t "
                "parameter, made on the host by cudaCreateTextureObject (or cudacheck.texture.TextureObject from "
                "Python) and read with tex1Dfetch<T>(tex, i), tex1D<T>(tex, x) or tex2D<T>(tex, x, y)."
                f"\n{numbered(source, {line})}", backend="any")


def check_includes(ci, top, options, source):
    """NVRTC, the GPU backend's compiler, has no C or C++ library headers: CUDA's own
    headers are found (CuPy passes the toolkit's include folder), <cstdio> or <stdint.h>
    are not. The CPU runtime refuses them too, so that what runs here runs there."""
    allowed = [INCLUDE_DIR] + [Path(f[2:]) for f in user_flags(options) if f.startswith("-I")]
    for c in top:   # the source's own top-level cursors
        if c.kind != ci.CursorKind.INCLUSION_DIRECTIVE:
            continue
        included = c.get_included_file()
        path = Path(included.name if included else c.spelling)
        if included and any(inside(path, d) for d in allowed):
            continue
        line = c.location.line
        raise CompileError(
            f"{SOURCE_NAME}({line}): catastrophic error: cannot open source file \"{path.name}\" (as NVRTC, the "
            f"GPU backend's compiler, reports it: it has no C or C++ library headers). printf, malloc, memcpy, "
            f"memset and the math functions are built in; for constants include <math_constants.h> "
            f"(CUDART_INF_F, CUDART_PI_F, ...), and use int, unsigned, long long for fixed-size integers."
            f"\n{numbered(source, {line})}", backend="any")


# What NVRTC's namespace std holds with no header included (NVRTC 13.0 and 13.5, each checked):
# std::move, std::forward, std::initializer_list and std::align_val_t (operator new's). Every
# other member of std a kernel names (std::swap, std::min, std::numeric_limits, std::exp2, ...)
# NVRTC refuses: it has no C++ library, which the CPU runtime's parse has.
_NVRTC_STD = frozenset({"move", "forward", "initializer_list", "align_val_t"})
# Math functions: CUDA's own, overloaded for float and double, are what to write instead.
_STD_MATH = frozenset(
    "sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log10 log2 log1p logb "
    "ilogb sqrt cbrt hypot pow erf erfc tgamma lgamma ceil floor trunc round rint nearbyint lround llround lrint "
    "fabs abs fmod remainder fmin fmax fdim fma frexp modf ldexp scalbn nextafter copysign isnan isinf isfinite "
    "signbit min max".split())
# What the C library's math.h and stdlib.h declare in the global namespace, which libstdc++'s
# declare as std's brought out by `using std::exp2;`: written without std::, each is CUDA's own
# function on a GPU, not the C++ library's.
_C_GLOBAL = _STD_MATH | frozenset("nan nanf fpclassify isnormal remquo scalbln nexttoward llrint labs llabs div "
                                  "ldiv lldiv".split())
_REFERENCES = ("DECL_REF_EXPR", "MEMBER_REF_EXPR", "TYPE_REF", "TEMPLATE_REF", "OVERLOADED_DECL_REF")


def check_std_names(ci, tu, top, source):
    """A kernel's use of a member of namespace std that NVRTC does not have (all but _NVRTC_STD),
    however it is spelled (`std::swap`, `std::numeric_limits<float>`, `swap` after `using namespace
    std;`, in a macro the source defines): CompileError with NVRTC's words and what to write. A
    name clang found in the C++ library is refused; the runtime's own headers' are not (their
    macros' std names included), nor `cuda::std`'s. In a template's pattern, only where the
    source names the template elsewhere (instantiates it), as NVRTC refuses it."""
    if "std" not in source:   # (every way to name one spells it)
        return
    K = ci.CursorKind
    main, text = main_file(ci, tu), source.encode()
    found, named = [], set()   # (the template around it or None, name, line, qualified); templates named
    stack = [(c, None) for c in reversed(top) if c.kind.is_declaration()]   # the source's own cursors
    while stack:
        n, template = stack.pop()
        if n.kind.name in _TEMPLATE_KINDS:
            template = n
        stack.extend((k, template) for k in reversed(list(n.get_children())))
        if n.kind.name not in _REFERENCES:
            continue
        for decl in _referenced(ci, n):
            pattern = decl if decl.kind.name in _TEMPLATE_KINDS else template_of(ci, decl)
            if pattern is not None and (template is None or pattern.canonical != template.canonical):
                named.add(pattern.canonical.hash)   # (a template, or an instance of one, named outside it)
            member = _std_member(K, decl)
            where = decl.location.file.name if decl.location.file else ""
            if member is None or member.spelling in _NVRTC_STD or not where or in_runtime(where) \
                    or where == SOURCE_NAME:
                continue
            offset = spelled_offset(ci, n.location, main)   # where the source (or its macro) spells it
            if offset < 0:
                continue   # a runtime header's macro: not the kernel's text
            name = member.spelling.encode()
            qualified = re.search(rb"std\s*::\s*" + re.escape(name) + rb"\b",
                                  text[max(0, offset - 128):offset + len(name) + 1])
            if qualified or member.spelling not in _C_GLOBAL:   # (`exp2(x)`: CUDA's own, on a GPU)
                found.append((template, member.spelling, n.location.line, qualified))
    for template, name, line, qualified in found:
        if template is None or template.canonical.hash in named:
            _refuse_std(name, line, source, qualified)


def check_undeclared_std(errors, source):
    """A member of std that the kernel's unit does not declare (`std::vector`, or C++17's
    `std::riemann_zeta`, which cuda_cpu.h leaves out), from clang's error on the source (errors:
    (line, column, message)): refused as NVRTC words it, as check_std_names refuses a declared one."""
    for line, _, said in errors:
        missing = re.fullmatch(r"no (?:member|template) named '(\w+)' in namespace 'std'", said)
        if missing:
            _refuse_std(missing[1], line, source, True)


def _referenced(ci, n):
    """The declarations a reference names (each of an overload set's)."""
    if n.kind == ci.CursorKind.OVERLOADED_DECL_REF:
        lib = ci.conf.lib
        return [lib.clang_getOverloadedDecl(n, i) for i in range(lib.clang_getNumOverloadedDecls(n))]
    return [n.referenced] if n.referenced is not None else []


def _std_member(K, decl):
    """The member of the top-level namespace std that `decl` is or lies in (through inline
    namespaces such as libstdc++'s __cxx11), or None."""
    path = []
    while decl is not None and decl.kind != K.TRANSLATION_UNIT:
        if decl.kind == K.NAMESPACE and decl.spelling == "std" and _outside_namespaces(K, decl.semantic_parent):
            return next((d for d in reversed(path) if d.kind != K.NAMESPACE), None)
        path.append(decl)
        decl = decl.semantic_parent
    return None


def _outside_namespaces(K, c):
    """Whether c is the translation unit or lies in no namespace (only `extern "C++" {}` blocks)."""
    while c is not None and c.kind != K.TRANSLATION_UNIT:
        if c.kind == K.NAMESPACE:
            return False
        c = c.semantic_parent
    return True


def _refuse_std(name, line, source, qualified):
    said = f'namespace "std" has no member "{name}"' if qualified else f'identifier "{name}" is undefined'
    instead = (f"Write {name}(...) without std::, CUDA's own function, overloaded for float and double as "
               f"std::{name} is." if name in _STD_MATH else
               "Write it yourself (a swap is three lines), or use CUDA's own functions (min, max, fabsf, "
               "__float_as_int, ...); std::move, std::forward and std::initializer_list are the std NVRTC has.")
    raise CompileError(f"{SOURCE_NAME}({line}): error: {said} (as NVRTC reports it: it has no C++ library). "
                       f"{instead}\n{numbered(source, {line})}", backend="any")


def check_type_ref(ci, c, source, own_typedefs=None):
    """A type named in device code (a TYPE_REF cursor) that is a typedef of the C library.
    own_typedefs: name -> line of the source's own global typedefs (`typedef unsigned long long
    uint64_t;`, as NVRTC kernels write): clang merges such a redeclaration with the C library's, while
    NVRTC, with no C library, takes it as the only one; a use after it is the kernel's own type."""
    if c.spelling in _BUILTIN_TYPEDEFS or (own_typedefs or {}).get(c.spelling, c.location.line) < c.location.line:
        return
    ref = c.referenced
    f = ref.location.file.name if ref is not None and ref.location.file else ""
    if f and f != SOURCE_NAME and not in_runtime(f) and ref.kind == ci.CursorKind.TYPEDEF_DECL:
        line = c.location.line
        raise CompileError(
            f"{SOURCE_NAME}({line}): error: identifier \"{ref.spelling}\" is undefined (as NVRTC reports "
            f"it: {ref.spelling} comes from the C library, which device code does not have). Use a type "
            f"of the language (int, unsigned, long long) or declare it with typedef.\n"
            f"{numbered(source, {line})}", backend="any")


# A function of a template's pattern (a function template, a member of a class template):
# compiled only where instantiated.
_TEMPLATE_KINDS = {"FUNCTION_TEMPLATE", "CLASS_TEMPLATE", "CLASS_TEMPLATE_PARTIAL_SPECIALIZATION"}


def in_template(fn):
    """Whether `fn` is, or is a member of, a template that only its instances compile."""
    c = fn
    while c is not None and c.kind.name != "TRANSLATION_UNIT":
        if c.kind.name in _TEMPLATE_KINDS:
            return True
        c = c.semantic_parent
    return False


def check_functions(functions, source):
    """NVRTC refuses host functions in device code (exit, abort, rand, ...): so does this.
    functions: the reader's USR -> (cursor, qualified name, what its body holds)."""
    for fn, _qual, info in functions.values():
        if info["device"]:
            pattern = in_template(fn)
            for usr, name, line, file, defined in sorted(info["calls"], key=lambda x: x[2]):
                if not usr.startswith("c:@N@std@"):   # std's: check_std_names
                    check_callee(name, line, file, defined, fn.spelling, source, pattern)


def check_callee(name, line, file, defined, caller, source, pattern=False):
    """Device code (`caller`) may call, or take the address of, the functions the source
    defines, CUDA's device functions and the few of the C library that CUDA provides.
    A template's pattern may call a function declared and never defined: nvcc compiles only
    its instances, so only an instance that calls it is refused, by the check of the built
    object (cpu/device_symbols.py), as ptxas refuses it (NVIDIA's simpleTemplates sample:
    the generic SharedMemory<T> calls an undefined error() that no instance reaches)."""
    if file == SOURCE_NAME and not defined and not pattern and not name.startswith("__builtin_"):   # a built-in
        # Declared by the kernel's source and defined nowhere (a C library function
        # declared by hand, say): nothing on a GPU provides it.
        raise CompileError(
            f"{SOURCE_NAME}({line}): error: `{name}` is declared but never defined, so device code cannot "
            f"call it (ptxas fatal: Unresolved extern function '{name}', as a GPU's compiler reports it). "
            f"Device code may call only the functions the source defines and CUDA's device functions; "
            f"give `{name}` a body in the source.\n{numbered(source, {line})}", backend="any")
    if not file or file == SOURCE_NAME or in_runtime(file):
        return
    if name in _DEVICE_LIBC or "math" in Path(file).name:
        return
    raise CompileError(
        f"{SOURCE_NAME}({line}): error: calling a __host__ function(\"{name}\") from a __device__ or "
        f"__global__ function(\"{caller}\") is not allowed (as NVRTC reports it: device code "
        f"cannot call the C library's {name}()).\n{numbered(source, {line})}", backend="any")


def check_initializer(ci, var, source):
    """A device variable's initializer naming a function (a function pointer): the same
    rule as a call."""
    for c in var.walk_preorder():
        ref = c.referenced if c.kind == ci.CursorKind.DECL_REF_EXPR else None
        if ref is not None and ref.kind == ci.CursorKind.FUNCTION_DECL:
            check_callee(ref.spelling, c.location.line, *origin(ci, ref), var.spelling, source)


def check_extern_shared(name, first_line, line, source):
    """All extern __shared__ arrays are one memory: NVRTC refuses two of one name and
    different types ("declaration is incompatible with previous")."""
    raise CompileError(
        f"{SOURCE_NAME}({line}): error: declaration is incompatible with previous \"{name}\" "
        f"(declared at line {first_line}), as NVRTC reports it: every extern __shared__ array of a source "
        f"names the same memory, so one name can have one type; give this one another name."
        f"\n{numbered(source, {first_line, line})}", backend="any")


def static_shared(functions, shared, source):
    """Bytes of static __shared__ each kernel uses, its own and those of the device functions
    it calls, by kernel name. They may total 48 KiB: NVRTC (ptxas) refuses more, and so does
    this. Sizes that depend on template parameters are checked at launch instead
    (kc_memory.cpp: shared_extent)."""
    by_function = {}
    for v in shared:
        if not v.extern and v.size > 0:
            by_function[v.function] = by_function.get(v.function, 0) + v.size
    usr_of = {v[1]: usr for usr, v in functions.items()}
    totals = {}
    for fn, qual, info in list(functions.values()):
        if not info["kernel"] or fn.kind.name == "FUNCTION_TEMPLATE":
            continue
        seen, todo, total = set(), [qual], 0
        while todo:
            q = todo.pop()
            if q in seen:
                continue
            seen.add(q)
            total += by_function.get(q, 0)
            callee_info = functions.get(usr_of.get(q, ""), (None, None, {"calls": ()}))[2]
            todo.extend(functions[u][1] for u, *_ in callee_info["calls"] if u in functions)
        totals[fn.spelling if fn.mangled_name == fn.spelling else qual] = total
        if total > DEFAULT_SHARED_LIMIT:
            lines = sorted({v.line for v in shared if v.function in seen and not v.extern})
            raise CompileError(
                f"{SOURCE_NAME}: error: entry function '{fn.spelling}' uses too much shared data "
                f"({total:#x} bytes, {DEFAULT_SHARED_LIMIT:#x} max): its static __shared__ variables total "
                f"{total} bytes, and a GPU allows {DEFAULT_SHARED_LIMIT} (48 KiB). Use smaller arrays, or "
                f"`extern __shared__` with the kernel's max_dynamic_shared_size_bytes opt-in."
                f"\n{numbered(source, set(lines))}",
                backend="any")
    return totals
