"""The launch finder: the kernel launches of a whole program (`kernel<<<grid, block>>>(args)`,
written out or through a macro of the source), found by clang parsing it as CUDA, host side,
and the edits that turn each into a call of the CPU runtime's launcher (cpu/host.py)."""
import json
import re
from dataclasses import asdict

from ..errors import CompileError, UnsupportedFeatureError
from ..listing import numbered
from ..options import user_flags
from . import cpu_build, nvrtc
from .libclang import INCLUDE_DIR, SOURCE_NAME, clang_index, disk_cached, in_main_file, in_runtime, system_flags
from .model import Launch

# The runtime API's calls and cudaDeviceProp's fields that CUDA 13 removed, and what replaced each
# (CUDA Runtime API, "Deprecated List"): refused, as nvcc 13 refuses them, with the replacement named.
REMOVED_API = {
    "cudaThreadSynchronize": "deprecated since CUDA 4; call cudaDeviceSynchronize(), which does the same",
    "cudaThreadExit": "deprecated since CUDA 4; call cudaDeviceReset(), which does the same",
    "clockRate": "a field of cudaDeviceProp; ask cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, device)",
    "memoryClockRate": "a field of cudaDeviceProp; ask cudaDeviceGetAttribute(&value, "
                       "cudaDevAttrMemoryClockRate, device)",
    "deviceOverlap": "a field of cudaDeviceProp; read asyncEngineCount, the number of copy engines, instead",
}
# What <cstdio> declares that a program may use without including it: nvcc gives a program's units
# math.h, stdlib.h and string.h, not stdio.h, so nvcc 13 refuses these too.
STDIO_NAMES = ("printf", "fprintf", "sprintf", "snprintf", "puts", "putchar", "fputs", "perror", "fopen", "fclose",
               "fread", "fwrite", "fflush", "fgets", "scanf", "fscanf", "sscanf", "getchar", "stderr", "stdout",
               "stdin", "FILE")


def stdio_hint(message):
    """A compiler's `message` (clang's or g++'s) about a name of STDIO_NAMES, undeclared: the
    paragraph that says to include <cstdio>; else ""."""
    for name in STDIO_NAMES:
        if re.search(rf"'{name}' (was not declared|does not name a type)|(undeclared identifier|unknown type name) "
                     rf"'{name}'", message):
            return (f"\n\n`{name}` is declared by <cstdio>, which nvcc does not include for a program either "
                    "(nvcc 13 refuses it too): add #include <cstdio> at the top.")
    return ""


def missing_header_hint(message):
    """What to add for clang's `message` about a name of REMOVED_API or STDIO_NAMES: a paragraph
    to append, or ""."""
    gone = next((f"\n\n{old} is gone from CUDA 13 (nvcc 13 refuses it too; {why})."
                 for old, why in REMOVED_API.items() if f"'{old}'" in message), "")
    return gone + stdio_hint(message)

# A launch's brackets with blanks inside them, `kernel << < grid, block >> > (args)`, which nvcc
# reads as a launch and clang does not: the opening one after the kernel's name (or template
# arguments), and the first closing one after it, followed by the arguments' parenthesis.
_SPACED_OPEN = re.compile(r"(?<=[\w>)\s])<<(\s*)<(?!<)")
_SPACED_CLOSE = re.compile(r">>(\s*)>(?=\s*\()")


def joined_launch_brackets(source):
    """`source` with each launch's spaced brackets written `<<<` and `>>>`, the blanks moved
    after them, so that every offset and line stays as it was."""
    text, at = source, 0
    while True:
        opening = _SPACED_OPEN.search(text, at)
        if opening is None:
            return text
        closing = _SPACED_CLOSE.search(text, opening.end())
        if closing is None:
            return text
        if opening.group(1) or closing.group(1):
            text = (text[:opening.start()] + "<<<" + opening.group(1) + text[opening.end():closing.start()] + ">>>"
                    + closing.group(1) + text[closing.end():])
        at = closing.end()


def find_launches(source, options=()):
    """The kernel launches of a whole program, `kernel<<<grid, block, shared, stream>>>(args)`,
    found by clang parsing it as CUDA (host side), and the line-preserving edits that turn
    each into `::kc::launch_kernel(ID, __LINE__, kernel, grid, block, shared, stream)(args)`
    (cpu/src/kc_host.h), ID being the launch's index. Returns (launches, edits)."""
    def to_json(r):
        return json.dumps([[asdict(x) for x in r[0]], r[1]])

    def from_json(text):
        launches, edits = json.loads(text)
        return [Launch(**x) for x in launches], [tuple(e) for e in edits]
    return disk_cached("launches", [source, *options], lambda: LaunchFinder(source, tuple(options)).find(),
                       to_json, from_json)


class LaunchFinder:
    """One whole program parsed as CUDA (host side): find() is (launches, edits)."""

    def __init__(self, source, options):
        self.source, self.code = source, source.encode()
        self.ci, self.index = clang_index()
        flags = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-std=c++17", "-DKC_FRONTEND",
                 "-DKC_PROGRAM", "-Wno-unknown-cuda-version", f"-I{INCLUDE_DIR}", "-include", "cuda_cpu.h",
                 *user_flags(options), *system_flags()]
        self.tu = self.index.parse(SOURCE_NAME, args=flags, unsaved_files=[(SOURCE_NAME, source)],
                                   options=self.ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
        K, ci = self.ci.CursorKind, self.ci
        # The translation unit's children, walked once: the program's own (its source's and its
        # own headers') among the ten thousand declarations and fifty thousand macro expansions
        # of the runtime's and the system's headers, whose walk took most of a program's build.
        top = [(c, in_main_file(ci, c), c.kind.is_preprocessing()) for c in self.tu.cursor.get_children()]
        self.expansions = [c for c, main, _ in top if main and c.kind == K.MACRO_INSTANTIATION]
        self.main = [c for c, main, pre in top if main and not pre]
        self.own = [c for c, main, pre in top if not pre and (main or c.location.file is not None and not (
            c.location.is_in_system_header or in_runtime(c.location.file.name)))]
        self.macros_done = set()   # definitions already rewritten

    def _walk(self):
        """Every cursor of the program's own declarations, in preorder."""
        for c in self.own:
            yield from c.walk_preorder()

    def _check_host_errors(self):
        """An error in host code is the program's own (a typo on a launch line): report it
        as nvcc would. Device code is ignored here: parsed for the host side, its calls of
        the runtime's device functions do not resolve (the C++ parse checks it)."""
        K = self.ci.CursorKind
        device = []
        for c in self._walk():
            if c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD) and any(
                    a.kind in (K.CUDAGLOBAL_ATTR, K.CUDADEVICE_ATTR) for a in c.get_children()):
                device.append((c.extent.start.line, c.extent.end.line))
        nvrtc.check_texture_references([(d.location.line, d.location.column, d.spelling) for d in self.tu.diagnostics
                                        if d.severity >= 3 and d.location.file
                                        and d.location.file.name == SOURCE_NAME], self.source)
        for d in self.tu.diagnostics:
            line = d.location.line
            if d.severity >= 3 and d.location.file and d.location.file.name == SOURCE_NAME \
                    and not any(lo <= line <= hi for lo, hi in device):
                raise CompileError(f"{SOURCE_NAME} did not compile (clang, reading the program's host code):\n\n"
                                   f"line {line}: {d.spelling}\n{numbered(self.source, {line})}"
                                   f"{missing_header_hint(d.spelling)}", backend="cpu")

    def find(self):
        K = self.ci.CursorKind
        self._check_host_errors()
        launches, edits, member_templates = [], [], set()
        classes = (K.STRUCT_DECL, K.CLASS_DECL, K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION)
        # each cursor with the function template it is in (None outside one)
        stack = [(c, None) for c in self.main]
        while stack:
            c, template = stack.pop()
            kids = list(c.get_children())
            if c.kind == K.FUNCTION_TEMPLATE and c.semantic_parent is not None and c.semantic_parent.kind in classes:
                member_templates.add(c.spelling)
            cfg = next((k for k in kids[1:2] if k.kind == K.CALL_EXPR and k.referenced is not None
                        and k.referenced.spelling == "__cudaPushCallConfiguration"), None)
            if c.kind == K.CALL_EXPR and cfg is not None:
                dependent = template is not None and self._dependent_launch(c, kids[0], cfg, template, launches, edits)
                if not dependent:
                    launches.append(self._launch(c, kids[0], cfg, len(launches), edits))
            elif c.kind == K.CALL_EXPR and c.referenced is not None and c.spelling == "cudaLaunchCooperativeKernel":
                launches.append(self._cooperative(c, kids, len(launches), edits))
            inner = c if c.kind == K.FUNCTION_TEMPLATE else template
            stack.extend((k, inner) for k in reversed(kids))
        return launches, edits + self._member_template_edits(member_templates)

    def _member_template_edits(self, names):
        """`template` written where the program calls a member function template of an object of
        dependent type with its arguments and without it (cpu_build.member_template_edits), for
        `names`, the member function templates of the program's own classes (its headers are
        inlined into it), which find() gathers on its walk: walking every toolkit header's
        declarations again cost a quarter of find_launches on every program. Made here, with the
        launches' edits, so that the front end's reading of the edited program (its arithmetic
        rewrites included) sees the keyword."""
        if not names:
            return []
        extent = self.ci.SourceRange.from_locations(
            self.ci.SourceLocation.from_offset(self.tu, self.tu.get_file(SOURCE_NAME), 0),
            self.ci.SourceLocation.from_offset(self.tu, self.tu.get_file(SOURCE_NAME), len(self.code)))
        return cpu_build.member_template_edits(list(self.tu.get_tokens(extent=extent)), names)

    def _dependent_launch(self, call, callee, cfg, template, launches, edits):
        """A launch in a function template whose kernel instance depends on the template's
        parameters: `kernel<W, H><<<g, b>>>(args)` in `template <int W, int H> void run(...)`, or
        `kernel<<<g, b>>>(d, ...)` with `d` a `T*` deducing the kernel's type parameter in
        `template <typename T> void run(T* d, ...)` (both as Rodinia's dwt2d launches). One Launch
        per instance of the template that the program calls (`run<192, 8>(...)`, `run(f, ...)`
        with f a float*), and an ID each instance computes from its parameters (`W == 192 && H
        == 8 ? 7 : ...`). False where the launch is not of that shape (the caller then refuses
        it, or takes it as any launch)."""
        K = self.ci.CursorKind
        fn = call.referenced
        start, lo, hi = callee.extent.start.offset, cfg.extent.start.offset, cfg.extent.end.offset
        if fn is not None and fn.kind == K.FUNCTION_DECL:
            return False   # the kernel is known where the template is defined
        if self.code[lo:lo + 3] != b"<<<" or self.code[hi - 3:hi] != b">>>":
            return False
        params = [(p.spelling, p.kind == K.TEMPLATE_TYPE_PARAMETER) for p in template.get_children()
                  if p.kind in (K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER)]
        if not params or any(p.kind == K.TEMPLATE_TEMPLATE_PARAMETER for p in template.get_children()):
            return False
        text = self.code[start:lo].decode()
        named = re.fullmatch(r"\s*([A-Za-z_][\w:]*)\s*<(.*)>\s*", text, re.S)
        pattern = self._kernel_template(named.group(1) if named is not None else text.strip())
        if pattern is None:
            return False
        kernel = self._kernel_name(pattern)   # with its namespaces, as the front end names it
        arguments = named.group(2) if named is not None else self._deduced_arguments(pattern, call)
        if arguments is None:
            return False
        instances = self._template_instances(template, params)
        if not instances:
            return False
        choice, base = "-1", len(launches)
        for n, values in reversed(list(enumerate(instances))):
            args = arguments
            for (name, _), value in zip(params, values):
                args = re.sub(rf"\b{name}\b", value, args)
            args = ", ".join(a.strip() for a in args.split(","))
            launches.insert(base, Launch(line=call.location.line, kernel=f"{kernel}<{args}>"))
            test = " && ".join(f"::kc::same_type<{name}, {value}>" if is_type else f"({name}) == ({value})"
                               for (name, is_type), value in zip(params, values))
            choice = f"({test}) ? {base + n} : {choice}"
        edits += [(start, start, f"::kc::launch_kernel({choice}, __LINE__, "), (lo, lo + 3, ", "), (hi - 3, hi, ")")]
        if named is None:   # the kernel's deduced arguments, spelled in the template's parameters
            edits.append((start, lo, f"::{kernel}<{arguments}>"))
        return True

    def _template_instances(self, template, params):
        """The argument lists (as C++ spells them) of the template's instances that the
        program's calls name, written out or deduced, and that its explicit instantiations
        (`template void run<float>(float*, int);`, which libclang does not show) name."""
        K, instances = self.ci.CursorKind, []
        explicit = rf"\btemplate\s+[\w:\s\*&<>]*?\b{re.escape(template.spelling)}\s*<([^<>;]*)>\s*\("
        for m in re.finditer(explicit, self.source):
            values = tuple(v.strip() for v in m.group(1).split(","))
            if len(values) == len(params) and values not in instances:
                instances.append(values)
        for c in self._walk():
            r = c.referenced if c.kind == K.CALL_EXPR else None
            if r is None or r.kind != K.FUNCTION_DECL or r.spelling != template.spelling \
                    or r.get_num_template_arguments() != len(params) or r.location != template.location:
                continue
            values = tuple(r.get_template_argument_type(i).spelling if is_type else self._template_value(r, i)
                           for i, (_, is_type) in enumerate(params))
            if values not in instances:
                instances.append(values)
        return instances

    def _kernel_template(self, name):
        """The kernel template (`__global__` function template) a launch names, or None."""
        K = self.ci.CursorKind
        return next((c for c in self._walk() if c.kind == K.FUNCTION_TEMPLATE
                     and c.spelling == name.split("::")[-1]
                     and any(a.kind == K.CUDAGLOBAL_ATTR for a in c.get_children())), None)

    def _deduced_arguments(self, pattern, call):
        """The template arguments of the kernel template `pattern` that the launch's arguments
        deduce, spelled in the enclosing template's parameters (`T` from an argument of type
        `T *` for a parameter of type `T *`), or None where its parameter and argument types are
        not written alike."""
        K = self.ci.CursorKind
        names = [p.spelling for p in pattern.get_children() if p.kind == K.TEMPLATE_TYPE_PARAMETER]
        if len(names) != sum(1 for p in pattern.get_children() if p.kind in (
                K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER)):
            return None
        declared = [p.type.spelling for p in pattern.get_children() if p.kind == K.PARM_DECL]
        passed = [a.type.spelling for a in call.get_arguments()]
        bound = {}
        for want, got in zip(declared, passed):
            used = [n for n in names if re.search(rf"\b{n}\b", want)]
            if not used:
                continue
            regex = re.escape(want)
            for n in used:
                regex = re.sub(rf"\b{n}\b", f"(?P<{n}>.+?)", regex, count=1)
            m = re.fullmatch(regex, got)
            if m is None:
                return None
            for n in used:
                if bound.setdefault(n, m.group(n)) != m.group(n):
                    return None
        return ", ".join(bound[n] for n in names) if set(bound) == set(names) else None

    def _cooperative(self, call, kids, ident, edits):
        """cudaLaunchCooperativeKernel(kernel, grid, block, args, shared, stream), its kernel named
        directly (through casts: `(void*)kernel`): the call becomes
        `::kc::launch_cooperative(ID, __LINE__, kernel, grid, block, args, shared, stream)`."""
        K, line = self.ci.CursorKind, call.location.line
        arg = kids[1] if len(kids) > 1 else None
        while arg is not None and arg.kind != K.DECL_REF_EXPR:   # the casts and parentheses around it
            inner = list(arg.get_children())
            arg = inner[-1] if inner and arg.kind in (K.CSTYLE_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR,
                                                     K.CXX_STATIC_CAST_EXPR, K.UNEXPOSED_EXPR, K.PAREN_EXPR,
                                                     K.UNARY_OPERATOR) else None
        fn = arg.referenced if arg is not None else None
        callee = kids[0].extent
        in_source = all(e.start.file is not None and e.start.file.name == SOURCE_NAME
                        for e in (call.extent, callee, kids[1].extent if len(kids) > 1 else call.extent))
        if fn is None or fn.kind != K.FUNCTION_DECL or not in_source:
            raise UnsupportedFeatureError(
                f"{SOURCE_NAME}, line {line}: the CPU runtime runs cudaLaunchCooperativeKernel with its kernel named "
                f"directly (`(void*)kernel`); this call passes it another way (a function pointer, a macro). Name "
                f"the kernel in the call, or run the program on a GPU (backend='gpu').\n"
                f"{numbered(self.source, {line})}", backend="cpu")
        first = kids[1].extent
        name = self.code[arg.extent.start.offset:arg.extent.end.offset].decode()
        edits += [(callee.start.offset, callee.end.offset, f"::kc::launch_cooperative({ident}, __LINE__"),
                  (callee.end.offset, callee.end.offset + self.code[callee.end.offset:].index(b"(") + 1, ", "),
                  (first.start.offset, first.end.offset, name)]
        return Launch(line=line, kernel=self._kernel_name(fn), cooperative=True)

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
                f"definition writes one out, or in a function template with the template's value parameters as "
                f"the kernel's template arguments, the template called with its arguments written out; this launch "
                f"is built another way (a function pointer, a macro that launches twice or builds the kernel's "
                f"name, a kernel deduced from a type parameter, a template called only from another template). "
                f"Write it out, or run the program on a GPU "
                f"(backend='gpu').\n{numbered(self.source, {line})}", backend="cpu")
        name = self._kernel_name(fn)
        if written_out:
            edits += [(start, start, f"::kc::launch_kernel({ident}, __LINE__, "), (lo, lo + 3, ", "), (hi - 3, hi, ")")]
            if "<" in name and b"<" not in self.code[start:lo]:
                # a template kernel whose arguments the call deduces (`put<<<g, b>>>(d, 2.5f)`): the
                # launcher takes a function, so the instance is named (`::put<float>`)
                edits.append((start, lo, f"::{name}"))
        return Launch(line=line, kernel=name)

    def _kernel_name(self, fn):
        """The launched kernel's name as get_function takes it: with its namespaces, and a template
        instance with its arguments ("tiled<16>")."""
        scope, p = [], fn.semantic_parent
        while p is not None and p.kind == self.ci.CursorKind.NAMESPACE:
            scope.insert(0, p.spelling)
            p = p.semantic_parent
        name = "::".join(scope + [fn.spelling])
        if fn.get_num_template_arguments() > 0:
            args = []
            for i in range(fn.get_num_template_arguments()):
                t = fn.get_template_argument_type(i)   # INVALID: a value, not a type
                args.append(t.spelling if t.kind != self.ci.TypeKind.INVALID else self._template_value(fn, i))
            name = f"{name}<{', '.join(args)}>"
        return name

    @staticmethod
    def _template_value(fn, i):
        """A value template argument as C++ spells it: libclang gives a bool's as a one-bit
        signed number, true as -1 (whose unsigned value is 1), which would name k<-1> for k<true>."""
        value = fn.get_template_argument_value(i)
        return "true" if value == -1 and fn.get_template_argument_unsigned_value(i) == 1 else str(value)

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
