"""The CPU build's side of the front end: what the CPU runtime cannot run (each kernel that
uses it is left out of the build, with the line and construct, so that the rest of the file
still runs), and the text of the line-preserving edits cpu/compiler.py applies to the source
(Program.edits): `__device__` variables in a section every worker shares, `extern __shared__`
arrays as views of the launch's dynamic shared memory, `static __shared__` as plain
`__shared__`, static shared arrays registered as a thread passes them, a kernel's `return`
recorded with its line, and inline PTX translated into C++ (ptx.py).
"""
import re

from ..errors import UnsupportedFeatureError
from ..listing import numbered
from . import ptx
from .libclang import SOURCE_NAME
from .ptx import PtxError

# What the CPU runtime does not provide, by the identifier that gives it away.
# (<cuda_fp16.h>, <cuda_bf16.h>, <mma.h> and <cuda_pipeline.h> are provided: a kernel that uses
# __half or wmma without including them fails to compile, as it does with NVRTC.)
UNSUPPORTED = [
    (re.compile(r"bmma_sync|experimental"), "sub-byte tensor-core fragments (nvcuda::wmma::experimental)"),
    (re.compile(r"surf[123]D\w*|surface|cudaSurfaceObject_t|cudaCreateSurfaceObject|cudaDestroySurfaceObject"),
     "surfaces (surface objects; texture objects are provided)"),
    # MTGP32's state and parameter tables are made by the host library (curand_mtgp32_host.h).
    (re.compile(r"curandStateMtgp32(_t)?|mtgp32_kernel_params(_t)?|mtgp32_params_fast(_t)?|curandMakeMTGP32\w*"),
     "cuRAND's MTGP32 generator (curandStateMtgp32_t; the XORWOW, Philox4_32_10, MRG32k3a and Sobol "
     "generators are provided)"),
    (re.compile(r"this_multi_grid|multi_grid_group|this_cluster|cluster_group"),
     "multi-grid and cluster cooperative groups"),
    (re.compile(r"memcpy_async|pipeline|barrier_arrive\w*|__pipeline_arrive_on"),
     "the C++ pipeline and barrier APIs (cuda::pipeline, cuda::memcpy_async; <cuda_pipeline.h>'s primitives are "
     "provided)"),
]

# A kernel's `return`: the thread's exit recorded with its line, for divergent-barrier reports.
RETURN = "return (void)::kc::thread_exit(__LINE__)"
# `__device__ int x;` -> `KC_DEVICE_VAR int x;`: a section every worker shares (cpu/include/cuda_cpu.h).
DEVICE_VAR = "KC_DEVICE_VAR"


def check_headers_provided(diagnostics, nlines, source):
    """A header the CPU runtime does not provide (clang's "file not found" in the source's
    own lines): UnsupportedFeatureError, for the kernel can still run on a GPU."""
    missing = [d for d in diagnostics if "file not found" in d.spelling and d.location.line <= nlines]
    if missing:
        d = missing[0]
        raise UnsupportedFeatureError(
            f"{SOURCE_NAME} includes a header the CPU runtime does not provide ({d.spelling}, line "
            f"{d.location.line}). The kernel can run on a GPU with backend='gpu'.\n"
            f"{numbered(source, {d.location.line})}", backend="cpu")


def check_program_runs(unsupported, source):
    """A whole program runs all or nothing: the first kernel the CPU runtime cannot run stops it."""
    if unsupported:
        name, (line, construct) = min(unsupported.items(), key=lambda kv: kv[1][0])
        raise UnsupportedFeatureError(
            f"{SOURCE_NAME}, line {line}: `{name}` uses {construct}, which the CPU runtime does not provide. The "
            f"program can run on a GPU with backend='gpu'.\n{numbered(source, {line})}", backend="cpu")


def device_var_edits(tokens):
    """The edits of a `__device__`, `__constant__` or `__managed__` variable's declaration
    (its tokens): the first qualifier becomes KC_DEVICE_VAR, any other goes."""
    edits = []
    for tok in tokens:
        if tok.spelling in ("__device__", "__constant__", "__managed__"):
            edits.append((tok.extent.start.offset, tok.extent.end.offset, "" if edits else DEVICE_VAR))
    return edits


def member_template_edits(tokens, member_templates):
    """The edits that write `template` where a call names a member function template of an
    object of dependent type with its arguments (`op.f<true>(x)` in a template, `op` an
    `Op<N>`): C++ reads `op.f < true > (x)` there unless told `op.template f<true>(x)`, and
    g++ does; nvcc reads the member template as the source means it. Writing the keyword
    outside a template changes nothing (C++11 allows it), so every `.name<` and `->name<`
    whose name is a member function template of the source (`member_templates`) gets it."""
    edits = []
    for before, name, after in zip(tokens, tokens[1:], tokens[2:]):
        if before.spelling in (".", "->") and name.spelling in member_templates and after.spelling == "<":
            edits.append((name.extent.start.offset, name.extent.start.offset, "template "))
    return edits


def line_directive_edits(tokens):
    """The edits that take out the source's line directives (`#line 7 "x.h"`, or g++'s own form
    `# 7 "x.h" 1`), each with every token on its line: the CPU build reads line markers to tell
    the source's lines from the runtime's headers (cpu/preprocessed.py), so no line of the
    source may claim another's place. A GPU's compiler honours them only in its messages; here
    messages name the source's real lines. tokens: libclang's tokens of the whole source."""
    edits = []
    for i, tok in enumerate(tokens):
        if tok.spelling not in ("#", "%:") or i + 1 >= len(tokens):
            continue
        line = tok.extent.start.line
        if i and tokens[i - 1].extent.end.line == line:
            continue   # not the first token of its line: not a directive
        nxt = tokens[i + 1]
        if nxt.spelling != "line" and not nxt.spelling[:1].isdigit():
            continue
        last = i + 1
        while last + 1 < len(tokens) and tokens[last + 1].extent.start.line == tokens[last].extent.end.line:
            last += 1
        edits.append((tok.extent.start.offset, tokens[last].extent.end.offset, ""))
    return edits


def extern_shared(elem, name, sid, array=True):
    """`extern __shared__ T name[];` -> `T (&name)[] = <the launch's dynamic shared memory>;`:
    same type, so casts, decay and arithmetic behave as on a GPU. One of a type that is not an
    array (`extern __shared__ SMem<BM, BN> s;`, as fast.cu declares a struct of its stages) is
    a `T&` to the start of the dynamic shared memory."""
    if not array:
        # Checked mode tracks such a struct per 2 bytes (a half or bf16, the smallest element the
        # threads of Hopper kernels store), not per alignment unit: its members are arrays that
        # threads write element by element (`alignas(128) bf16 A[...]`).
        at = f"::kc::dynamic_shared(\"{name}\", {sid}, sizeof({elem}), 2)"
        return f"{elem}& {name} = *reinterpret_cast<{elem}*>({at});"
    at = f"::kc::dynamic_shared(\"{name}\", {sid}, sizeof({elem}), ::kc::granule<{elem}>())"
    return f"{elem} (&{name})[] = *reinterpret_cast<{elem} (*)[]>({at});"


def shared_registration(sid, name):
    """Registers a static __shared__ variable as each thread passes its declaration: its
    name, size and shape, for checked mode and for the GPU's 48 KiB limit on static shared
    memory."""
    return f" ::kc::shared_register({sid}, {name});"


# The C library's fixed-width integer types as glibc defines them on x86-64, where the CPU
# runtime's headers include <stdint.h>; NVRTC has none, so a kernel may define them itself.
LIBC_INTEGERS = {"int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short", "uint16_t": "unsigned short",
                 "int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long", "uint64_t": "unsigned long",
                 "intptr_t": "long", "uintptr_t": "unsigned long"}


def own_integer_typedef(name, canonical, start, end, line):
    """A kernel's own global typedef of a C library integer type with another type than glibc's
    (`typedef unsigned long long uint64_t;`, as NVRTC kernels write it): g++ refuses the
    redeclaration, so the typedef gets a name of its own and a macro gives it the library's
    name for the rest of the source, as NVRTC reads it; #line keeps the lines' numbers.
    Returns the edit, or None where the types agree (a redeclaration g++ accepts)."""
    if LIBC_INTEGERS.get(name, canonical) == canonical:
        return None
    own = f"kc_own_{name}"
    return start, end, f"typedef {canonical} {own};\n#define {name} {own}\n#line {line}\n"


def wrapped_shared(tokens, names, key):
    """A static __shared__ declaration in a function whose statics g++ gives vague linkage (a
    template, an inline function), as a static struct of the same members: g++ ignores the
    section attribute of such a static, and kc_device.ld places the struct by its name
    (kc_shared_storage_*) in the shared section. Each name becomes a reference to its member,
    so the kernel's code, sizeof included, reads as before. The declaration is rebuilt from its
    tokens, on one line (the edit keeps the line count), without `__shared__` and `static`."""
    decl = " ".join(t.spelling for t in tokens if t.spelling not in ("__shared__", "static"))
    refs = " ".join(f"auto& {n} = kc_shared_storage_{key}.{n};" for n in names)
    return f"struct kc_shared_{key} {{ {decl} }}; static kc_shared_{key} kc_shared_storage_{key}; {refs}"


# An input section named kc_shared, empty: ld defines __start_kc_shared (the shared window's
# start) only where one exists, which a source whose shared variables are all wrapped_shared's
# structs would otherwise lack.
SHARED_ANCHOR = '\nstatic char kc_shared_anchor[0] __attribute__((section("kc_shared"), used));'


def cluster_helper(key):
    """The name of a template kernel's __cluster_dims__ helper (template_cluster_dims)."""
    return f"kc_cluster_dims_{key}"


def template_cluster_dims(head, key, cluster):
    """After a template kernel: a class template of the same parameters that holds its
    __cluster_dims__ (which may name them), so that each instance's launch stub reads its own."""
    return f" {head} struct {cluster_helper(key)} {{ static constexpr unsigned dims[3] = {{{cluster}}}; }};"


def unsupported(functions, errors, edits, templates, line_tokens):
    """Kernels the CPU runtime cannot run, each with the line and construct; their
    bodies (and those of the device functions that cannot run either) are left out of the
    CPU build, so the rest of the file still runs.

    functions: the reader's USR -> (cursor, qualified name, what its body holds); errors:
    clang's (line, column, message) in the source; line_tokens(fn, line): the spellings of a
    function's tokens on one line. Returns (kernel name -> (line, construct), the edits with
    each such body's removal and the other functions' inline PTX translated)."""
    bad = {}   # function USR -> (line, construct)
    for usr, (fn, _qual, info) in functions.items():
        lo, hi = info["lines"]
        try:
            edits.extend(asm_edits(info))
        except PtxError as e:
            bad[usr] = (e.line, e.construct)
            continue
        for line, _col, text in errors:
            if lo <= line <= hi:
                what = construct(text, lambda fn=fn, line=line: line_tokens(fn, line))
                if what:
                    bad[usr] = (line, what)
                    break
    # A function that calls an unsupported one is unsupported too.
    changed = True
    while changed:
        changed = False
        for usr, (_fn, _qual, info) in functions.items():
            if usr in bad:
                continue
            for callee, name, line, *_ in sorted(info["calls"], key=lambda call: call[2]):   # the first, by line
                if callee in bad:
                    bad[usr] = (line, f"{bad[callee][1]}, through {name}()")
                    changed = True
                    break
    out = {}
    for usr, (line, what) in bad.items():
        fn, qual, info = functions[usr]
        start, end = info["extent"]
        # What is left out becomes `;`: a function's body, so that it stays declared (a template's
        # explicit specializations need it), or a constructor's whole definition (reader.py).
        edits.append((start, end, ";"))
        edits = [e for e in edits if not (start <= e[0] < end) or e == (start, end, ";")]
        if info["kernel"]:
            name = qual if (qual in templates or fn.mangled_name != fn.spelling) else fn.spelling
            out[name] = (line, what)
    return out, edits


def asm_edits(info):
    """The edits that translate a function's asm statements (the reader's ptx.AsmStmt, or the
    PtxError of one it could not read) into C++ (ptx.py), or the PtxError of the first the CPU
    build does not translate. Host code's assembly is the host's, which the CPU runtime does
    not run."""
    out = []
    for stmt in info["asm"]:
        if isinstance(stmt, PtxError):
            raise stmt
        if not info["device"]:
            raise PtxError("inline assembly in host code", stmt.line)
        out += ptx.edits(stmt)
    return out


def construct(message, tokens):
    """The CUDA feature an error points at, or None for an ordinary mistake: its message,
    and tokens() the spellings of the tokens on its line."""
    for name in re.findall(r"'([^']+)'", message):
        for pattern, what in UNSUPPORTED:
            if pattern.fullmatch(name.split("::")[-1]) or pattern.fullmatch(name.split("::")[0]):
                return what
    toks = tokens()
    if any(a == "<<" and b == "<" for a, b in zip(toks, toks[1:])):
        return "launching kernels from a kernel (dynamic parallelism)"
    return None
