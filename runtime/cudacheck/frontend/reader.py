"""The reader: one clang parse of a source, walked once, into a Program: its kernels (with C
or C++ linkage, in namespaces, templates with defaults and their instances), each parameter's
canonical type, the `__shared__`, `__device__` and `__constant__` variables, what the CPU
runtime cannot run, and the edits of the CPU build. On the way it applies NVRTC's rules
(nvrtc.py) and collects the arithmetic rewrites (arith.py)."""
import re

from ..options import fast_math_enabled, user_flags
from . import cpu_build, nvrtc, ptx
from .arith import Rewriter, fmad_enabled
from .dtypes import element_dtype, parameter
from .libclang import (
    CUDA_ARCH_FLAG,
    INCLUDE_DIR,
    SOURCE_NAME,
    clang_index,
    disk_cached,
    in_main_file,
    instantiated,
    origin,
    precompiled_header,
    system_flags,
    template_of,
)
from .model import DeviceVar, Kernel, Program, SharedVar


def analyze(source, options=(), name_expressions=(), program=False, cached=True):
    """What the front end reads in `source` (a Program: its kernels and their parameters,
    its shared and device variables, what the CPU runtime cannot run), or the CompileError or
    UnsupportedFeatureError that stops it; from the disk cache when this source was read
    before (cached=False: parsed now, and not stored).
    options: the compiler options (their -D and -I count); name_expressions: template
    instances, as RawModule takes them. program=True: a whole program (host code and
    kernels) whose launches find_launches has already rewritten: host code may use the C and
    C++ libraries and the CUDA runtime API; the checks of what NVRTC refuses apply to device
    code only."""
    def read():
        return Reader(source, tuple(options), tuple(name_expressions), program).read()
    if not cached:
        return read()
    return disk_cached("program" if program else "module", [source, *options, "|", *name_expressions], read,
                       Program.to_json, Program.from_json)


class Reader:
    """Reader(source, options, name_expressions, program).read(): the source's Program,
    parsed now (analyze() caches it on disk)."""

    def __init__(self, source, options, name_expressions, program=False):
        self.source = source
        self.program = program
        self.options = options
        self.exprs = name_expressions
        self.ci, self.index = clang_index(local=True)
        self.code = source.encode()

    def parse(self, text):
        """The translation unit of `text` parsed as the CPU runtime compiles it, after
        cuda_cpu.h (precompiled where it can be)."""
        flags = ["-std=c++17", "-DKC_FRONTEND", f"-I{INCLUDE_DIR}",
                 *(["-DKC_PROGRAM"] if self.program else [CUDA_ARCH_FLAG]),
                 *user_flags(self.options), *system_flags()]
        detailed = self.ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
        pch = precompiled_header(tuple(flags))
        if pch is not None:
            tu = self.index.parse(SOURCE_NAME, args=["-x", "c++", *flags, "-include-pch", pch],
                                  unsaved_files=[(SOURCE_NAME, text)], options=detailed)
            if not any(d.severity >= 4 for d in tu.diagnostics):
                return tu
        return self.index.parse(SOURCE_NAME, args=["-x", "c++", *flags, "-include", "cuda_cpu.h"],
                                unsaved_files=[(SOURCE_NAME, text)], options=detailed)

    def read(self):
        """Parse and walk the source: its Program, or the CompileError or
        UnsupportedFeatureError that stops it."""
        nlines = self.source.count("\n") + 1
        probes = "".join(f"\nauto kc_probe_{i} = &{e};" for i, e in enumerate(self.exprs))
        tu = self.parse(self.source + "\n" + probes)
        self.tu, self.file = tu, tu.get_file(SOURCE_NAME)
        # The source's own top-level cursors as written, walked once: the translation unit's
        # children (clang_index(local=True)) also hold the declarations of the headers the
        # source includes itself (and all of cuda_cpu.h's where the precompiled header could
        # not be used) and the templates' instances, and five readers below look only at the
        # source's.
        self.top = [c for c in tu.cursor.get_children() if self.mine(c) and not instantiated(self.ci, c)]
        errors = [d for d in tu.diagnostics if d.severity >= 3]
        cpu_build.check_headers_provided(errors, nlines, self.source)
        self.errors = [(d.location.line, d.location.column, d.spelling) for d in errors
                       if d.location.file and d.location.file.name == SOURCE_NAME]
        nvrtc.check_headers_included(self.errors, self.source)
        nvrtc.check_texture_references(self.errors, self.source)
        if not self.program:
            nvrtc.check_includes(self.ci, self.top, self.options, self.source)
            nvrtc.check_std_names(self.ci, tu, self.top, self.source)
            nvrtc.check_undeclared_std(self.errors, self.source)
        self.allocations = {}
        self.kernels, self.templates, self.shared, self.device_vars = {}, {}, [], []
        self.edits, self.namespace_shared, self.subscripts = [], [], {}
        self._extern_types = {}
        self._anchored = False  # whether the source has cpu_build.SHARED_ANCHOR
        self._own_typedefs = {}  # the source's global typedefs and aliases: name -> first line
        for c in self.top:
            if c.kind in (self.ci.CursorKind.TYPEDEF_DECL, self.ci.CursorKind.TYPE_ALIAS_DECL):
                self._own_typedefs.setdefault(c.spelling, c.location.line)
                end = self.code.index(b";", c.extent.end.offset) + 1   # the extent stops before its ';'
                edit = cpu_build.own_integer_typedef(c.spelling, c.underlying_typedef_type.get_canonical().spelling,
                                                     c.extent.start.offset, end, c.location.line)
                if edit:
                    self.edits.append(edit)
        self.functions = {}     # USR -> (cursor, qualified name, what its body holds) of each function defined here
        self._macros = None     # name -> [(offset, tokens)] of the source's macro definitions, once asked for
        ext = self.ci.SourceRange.from_locations(self.ci.SourceLocation.from_offset(tu, self.file, 0),
                                                 self.ci.SourceLocation.from_offset(tu, self.file, len(self.code)))
        self.edits.extend(cpu_build.line_directive_edits(list(tu.get_tokens(extent=ext))))
        self.arith = Rewriter(self.ci, tu, self.top, self.code, fmad_enabled(self.options),
                              fast_math_enabled(self.options))
        for c in self.top:
            self._top(c, [])
        self.edits.extend(self.arith.result())
        nvrtc.check_functions(self.functions, self.source)
        static_shared = nvrtc.static_shared(self.functions, self.shared, self.source)
        unsupported, self.edits = cpu_build.unsupported(self.functions, self.errors, self.edits, self.templates,
                                                        self._line_tokens)
        self._probe(tu, nlines)
        if self.program:
            cpu_build.check_program_runs(unsupported, self.source)
        mains = [fn for fn, qual, _ in self.functions.values() if qual == "main"]
        return Program(kernels=self.kernels, templates=sorted(self.templates), shared=self.shared,
                       device_vars=self.device_vars, unsupported=unsupported, edits=sorted(self.edits),
                       namespace_shared=self.namespace_shared, subscripts=self.subscripts,
                       static_shared=static_shared, allocations=self.allocations,
                       main_params=len(list(mains[0].get_arguments())) if mains else -1)

    def mine(self, c):
        """Whether a cursor lies in the source itself, not in a header."""
        return in_main_file(self.ci, c)

    def tokens(self, c):
        """The tokens of a cursor's extent (by file offsets: a cursor's own get_tokens() is
        empty when its extent starts in a macro such as __device__)."""
        ci = self.ci
        ext = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(self.tu, self.file, c.extent.start.offset),
                                            ci.SourceLocation.from_offset(self.tu, self.file, c.extent.end.offset))
        return list(self.tu.get_tokens(extent=ext))

    def _line_tokens(self, c, line):
        return [t.spelling for t in self.tokens(c) if t.location.line == line]

    def annotations(self, c):
        """The clang annotations of a declaration: kc_global, kc_device, kc_shared, ..."""
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
            if "kc_global" in self.annotations(c):
                self._kernel(c, qual)
            self._body(c, qual, kernel="kc_global" in self.annotations(c))
        elif c.kind == K.VAR_DECL:
            ann = self.annotations(c)
            qual = "::".join(scope + [c.spelling])
            if not self.program or ann & {"kc_device", "kc_constant", "kc_managed"}:
                nvrtc.check_initializer(self.ci, c, self.source)
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
        self._launch_bounds(c)
        if c.kind == self.ci.CursorKind.FUNCTION_TEMPLATE:
            self.templates[qual] = c
            cluster = self._cluster_dims(c)
            if cluster:   # evaluated for each instance, with its template arguments (_probe)
                at = c.extent.end.offset
                helper = cpu_build.template_cluster_dims(self._template_head(c), c.extent.start.offset, cluster)
                self.edits.append((at, at, helper))
            return
        # An explicit specialization (`template <> __global__ void k<int>(int*)`) is launched as its
        # template's instance, by name expression, as NVRTC takes it (_probe), not as a kernel `k`.
        if template_of(self.ci, c) is not None:
            return
        linkage = "C" if c.mangled_name == c.spelling else "C++"
        name = c.spelling if linkage == "C" else qual
        params = tuple(self._param(a, a.type) for a in c.get_arguments())
        self.kernels[name] = Kernel(name=name, function=c.spelling, params=params, line=c.extent.start.line,
                                    end_line=c.extent.end.line, linkage=linkage, cluster=self._cluster_dims(c))

    def _launch_bounds(self, c):
        """A kernel declared __launch_bounds__(maxThreadsPerBlock, ...): its body starts with the
        check of the launch's block against the bound (cuda_cpu.h: ::kc::launch_bounds), which g++
        evaluates there, a template's parameters and the source's constants and macros included."""
        K = self.ci.CursorKind
        bounds = next((a for a in c.get_children() if a.kind == K.ANNOTATE_ATTR and a.spelling == "kc_launch_bounds"),
                      None)
        body = next((ch for ch in c.get_children() if ch.kind == K.COMPOUND_STMT), None)
        if bounds is None or body is None:
            return
        text = self.code[bounds.extent.start.offset:bounds.extent.end.offset].decode(errors="replace")
        args = text[text.index("(") + 1:text.rindex(")")].strip()
        at = body.extent.start.offset + 1
        self.edits.append((at, at, f" ::kc::launch_bounds<::kc::max_threads_of({args})>({bounds.extent.start.line});"))

    def _cluster_dims(self, c):
        """The arguments of the kernel's __cluster_dims__(...), as written (the launch stub has
        g++ evaluate them, macros and all), or ""."""
        for a in c.get_children():
            if a.kind == self.ci.CursorKind.ANNOTATE_ATTR and a.spelling == "kc_cluster_dims":
                text = self.code[a.extent.start.offset:a.extent.end.offset].decode(errors="replace")
                return text[text.index("(") + 1:text.rindex(")")].strip()
        return ""

    def _template_head(self, c):
        """A template's parameter list as written: `template <int BM, int N = 4>`."""
        toks, depth = [t.spelling for t in self.tokens(c)], 0
        for k, t in enumerate(toks[1:], 1):
            depth += (t in "<(") - (t in ">)") + (t == ">>" and -2)
            if depth == 0:
                return " ".join(toks[:k + 1])
        raise AssertionError(f"no end to the template head of {c.spelling}")

    def _text(self, c):
        return self.code[c.extent.start.offset:c.extent.end.offset].decode(errors="replace")

    def _param(self, decl, ptype):
        return parameter(self.ci, decl, ptype, self._text(decl))

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
        descr, lanes = element_dtype(self.ci, e)
        if lanes > 1:
            shape.append(lanes)
        self.device_vars.append(DeviceVar(name=qual, line=c.location.line, space=space, size=max(t.get_size(), 0),
                                          descr=descr, shape=tuple(shape)))
        self.edits.extend(cpu_build.device_var_edits(self.tokens(c)))

    def _shared(self, c, function, qual, stmt=None):
        T = self.ci.TypeKind
        extern = c.storage_class.name == "EXTERN"
        wrapped = stmt is not None and not extern and self._vague
        if stmt is not None and not extern and not wrapped:
            self._alignas_first(stmt)
        if wrapped:
            # g++ drops the section of a static in a template or an inline function (it goes to
            # a COMDAT section of its own), so the declaration becomes a static struct whose
            # name kc_device.ld places with the other shared variables (cpu_build.wrapped_shared).
            self._wrapped.setdefault((stmt.extent.start.offset, stmt.extent.end.offset), []).append(c.spelling)
        elif c.storage_class.name == "STATIC":
            # `static __shared__`: __shared__ already means static on the CPU runtime.
            for tok in self.tokens(stmt if stmt is not None else c):
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
            elem_type = c.type.get_canonical().spelling
            first = self._extern_types.setdefault(c.spelling, (elem_type, c.location.line))
            if first[0] != elem_type:
                nvrtc.check_extern_shared(c.spelling, first[1], c.location.line, self.source)
            elem = c.type.element_type.spelling if c.type.kind == T.INCOMPLETEARRAY else c.type.spelling
            span = stmt if stmt is not None else c
            start, end = span.extent.start.offset, span.extent.end.offset
            if stmt is None:   # namespace scope: the declaration's extent stops before its ';'
                end = self.code.index(b";", end) + 1
            self.edits.append((start, end, cpu_build.extern_shared(elem, c.spelling, sid,
                                                                   array=c.type.kind == T.INCOMPLETEARRAY)))
        elif stmt is not None:
            at = stmt.extent.end.offset
            self._registrations.append((at, at, cpu_build.shared_registration(sid, c.spelling)))
        else:
            self.namespace_shared.append((sid, qual))

    def _alignas_first(self, stmt):
        """`__shared__ alignas(128) T x[N];` (fast.cu's): __shared__ is `static` and a section here,
        and g++ refuses a standard attribute after a decl-specifier, so the alignas moves to the
        front of the declaration, where it means the same."""
        toks = self.tokens(stmt)
        names = [t.spelling for t in toks]
        if "alignas" not in names or "__shared__" not in names or names.index("alignas") < names.index("__shared__"):
            return
        first = names.index("alignas")
        depth, last = 0, first + 1
        for last in range(first + 1, len(toks)):
            depth += (names[last] == "(") - (names[last] == ")")
            if depth == 0:
                break
        start, end = toks[first].extent.start.offset, toks[last].extent.end.offset
        edits = [(start, end, ""), (stmt.extent.start.offset, stmt.extent.start.offset,
                                    " ".join(names[first:last + 1]) + " ")]
        if edits[0] not in self.edits:
            self.edits.extend(edits)

    # -- function bodies --
    def _body(self, fn, qual, kernel):
        """Walk one function definition: its shared variables, returns (of a kernel), calls,
        array subscripts and inline assembly (asm statements, read for cpu_build)."""
        K = self.ci.CursorKind
        self._registrations, self._wrapped = [], {}
        self._vague = self._vague_linkage(fn)
        # Device code: what NVRTC (or nvcc's device side) compiles. In a whole program, host
        # functions (no __device__ or __global__) may use the C and C++ libraries.
        device = not self.program or bool(self.annotations(fn) & {"kc_device", "kc_global"})
        if device:
            self.arith.function(fn)
        # What cpu_build leaves out of a function it cannot run: its body (a template's
        # declaration stays, for its explicit specializations); a constructor's whole definition,
        # whose initializers precede the body.
        body = next((ch for ch in fn.get_children() if ch.kind == K.COMPOUND_STMT), None)
        removed = fn if body is None or fn.kind == K.CONSTRUCTOR else body
        info = {"calls": set(), "asm": [], "extent": (removed.extent.start.offset, removed.extent.end.offset),
                "lines": (fn.extent.start.line, fn.extent.end.line), "kernel": kernel, "device": device}
        stack = [(ch, None, False) for ch in reversed(list(fn.get_children()))]   # in source order
        while stack:
            c, stmt, in_lambda = stack.pop()
            k = c.kind
            if k == K.VAR_DECL and "kc_shared" in self.annotations(c):
                self._shared(c, qual, qual, stmt)
            elif k == K.RETURN_STMT and kernel and not in_lambda:
                tok = next(iter(self.tokens(c)), None)
                if tok is not None and tok.spelling == "return":
                    self.edits.append((tok.extent.start.offset, tok.extent.end.offset, cpu_build.RETURN))
            elif k in (K.CALL_EXPR, K.DECL_REF_EXPR):
                # A call, or a function named without being called (its address taken).
                ref = c.referenced
                if ref is not None and (k == K.CALL_EXPR or ref.kind == K.FUNCTION_DECL):
                    info["calls"].add((self._callee(ref), ref.spelling, c.location.line, *origin(self.ci, ref)))
                    if self.program and ref.spelling == "cudaMalloc":
                        self._allocation(c)
            elif k == K.OVERLOADED_DECL_REF:
                # A call that a template's arguments resolve (`wgmma_n128(d, ...)`, d of a type
                # that depends on them): any of its candidates may be the one an instance runs,
                # so each counts as called (a candidate the CPU runtime cannot run refuses this
                # function, where its body would otherwise call a body left out).
                lib = self.ci.conf.lib
                for i in range(lib.clang_getNumOverloadedDecls(c)):
                    ref = lib.clang_getOverloadedDecl(c, i)
                    if ref.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE):
                        info["calls"].add((self._callee(ref), ref.spelling, c.location.line, *origin(self.ci, ref)))
            elif k == K.TYPE_REF and device:
                nvrtc.check_type_ref(self.ci, c, self.source, self._own_typedefs)
            elif k in (K.ASM_STMT, K.MS_ASM_STMT):
                info["asm"].append(self._asm(c))
            elif k == K.ARRAY_SUBSCRIPT_EXPR:
                self._subscript(c)
            stack.extend((ch, c if k == K.DECL_STMT else stmt, in_lambda or k == K.LAMBDA_EXPR)
                         for ch in reversed(list(c.get_children())))
        if self._wrapped and not self._anchored:
            at = len(self.source.encode())
            self.edits.append((at, at, cpu_build.SHARED_ANCHOR))
            self._anchored = True
        for (start, end), names in self._wrapped.items():
            toks = [t for t in self.tokens(fn) if start <= t.extent.start.offset < end]
            self.edits.append((start, end, cpu_build.wrapped_shared(toks, names, start)))
        self.edits.extend(self._registrations)
        self.functions[fn.get_usr()] = (fn, qual, info)

    def _vague_linkage(self, fn):
        """Whether g++ gives a function's statics vague linkage (COMDAT sections): a template,
        a member of a class template, a function declared inline or defined in its class."""
        K = self.ci.CursorKind
        if fn.kind == K.FUNCTION_TEMPLATE:
            return True
        parent = fn.semantic_parent
        while parent is not None and parent.kind != K.TRANSLATION_UNIT:
            if parent.kind in (K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, K.FUNCTION_TEMPLATE):
                return True
            parent = parent.semantic_parent
        if fn.lexical_parent is not None and fn.lexical_parent.kind in (K.STRUCT_DECL, K.CLASS_DECL):
            return True
        body = next((ch for ch in fn.get_children() if ch.kind == K.COMPOUND_STMT), None)
        end = body.extent.start.offset if body is not None else fn.extent.end.offset
        return any(t.spelling in ("inline", "__forceinline__", "__inline__") for t in self.tokens(fn)
                   if t.extent.start.offset < end)

    def _callee(self, ref):
        """The USR of the definition a call of `ref` runs: an instance of a template defined
        here (f<1>) runs the template's, which is what cpu_build leaves out when it cannot run."""
        usr = ref.get_usr()
        if usr not in self.functions:
            pattern = template_of(self.ci, ref)
            if pattern is not None and pattern.get_usr() in self.functions:
                return pattern.get_usr()
        return usr

    def _asm(self, c):
        """An asm statement as the CPU build translates it (ptx.AsmStmt), or the PtxError of
        what it cannot read."""
        try:
            return ptx.read_asm(self.tokens(c), c.location.line,
                                lambda name: self._string_macro(name, c.extent.start.offset),
                                lambda name: self._function_macro(name, c.extent.start.offset))
        except ptx.PtxError as e:
            return e

    def _macro(self, name, before):
        """The tokens of macro `name`'s definition (its name first), as the source last defines
        it before offset `before`, or None."""
        if self._macros is None:
            self._macros = {}
            for m in self.top:
                if m.kind == self.ci.CursorKind.MACRO_DEFINITION:
                    self._macros.setdefault(m.spelling, []).append((m.extent.start.offset, self.tokens(m)))
        return next((toks for at, toks in reversed(self._macros.get(name, [])) if at < before), None)

    def _string_macro(self, name, before, depth=0):
        """The string literals (spellings) that object-like macro `name` stands for, those of the
        macros it names included (`#define D64 D32 ", %32"`); None if it stands for anything else."""
        body = (self._macro(name, before) or [None])[1:]
        if not body or depth > 32:      # no body, or macros naming each other in a circle
            return None
        out = []
        for t in body:
            inner = [t.spelling] if t.kind.name == "LITERAL" else \
                self._string_macro(t.spelling, before, depth + 1) if t.kind.name == "IDENTIFIER" else None
            if inner is None:
                return None
            out += inner
        return out

    def _function_macro(self, name, before):
        """(parameters, body spellings) of function-like macro `name`, or None: `F8(i)`."""
        toks = self._macro(name, before)
        # Function-like: its `(` right after the name, no space between (else the body's).
        if not toks or len(toks) < 2 or toks[1].spelling != "(" or \
                toks[1].extent.start.offset != toks[0].extent.end.offset:
            return None
        toks = toks[1:]
        close = next((k for k, t in enumerate(toks) if t.spelling == ")"), None)
        params = [t.spelling for t in toks[1:close] if t.spelling != ","] if close else None
        if params is None or not all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in params):
            return None
        return params, [t.spelling for t in toks[close + 1:]]

    def _subscript(self, c):
        """An array subscript: the array's name and outer bound, by line (Program.subscripts)."""
        K = self.ci.CursorKind
        base = next(iter(c.get_children()), None)
        while base is not None and base.kind in (K.UNEXPOSED_EXPR, K.ARRAY_SUBSCRIPT_EXPR, K.PAREN_EXPR):
            base = next(iter(base.get_children()), None)
        if base is not None and base.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR) and base.spelling:
            t = base.type.get_canonical()
            bound = t.element_count if t.kind.name == "CONSTANTARRAY" else 0
            names = self.subscripts.setdefault(str(c.location.line), [])
            if [base.spelling, bound] not in names:
                names.append([base.spelling, bound])

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

    # -- template instances --
    def _probe(self, tu, nlines):
        K = self.ci.CursorKind
        probes = {}
        for c in self.top:
            if c.kind == K.VAR_DECL and c.spelling.startswith("kc_probe_"):
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
            cluster = ""
            if self._cluster_dims(pattern):   # the instance's values (_kernel's helper of the template)
                namespace = next(q for q, t in self.templates.items() if t == pattern).rpartition("::")[0]
                args = name[name.index("<") + 1:name.rindex(">")]
                helper = f"{namespace}::{cpu_build.cluster_helper(pattern.extent.start.offset)}<{args}>"
                cluster = ", ".join(f"{helper}::dims[{a}]" for a in range(3))
            self.kernels[name] = Kernel(name=name, function=pattern.spelling, params=params,
                                        line=pattern.extent.start.line, end_line=pattern.extent.end.line,
                                        linkage="C++", cluster=cluster)
