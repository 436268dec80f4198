"""The boundary between the CPU runtime's C++ and this package, declared once: in
src/kc_abi.h (a launch) and src/kc_host_abi.h (a whole program). clang reads them
when this module is imported (libclang, the front end's parser, with clang's own fixed-width
integer types in place of the system's <stdint.h>, so that no system header is read), and
every struct there becomes a ctypes.Structure here, with the same fields in the same order,
typed by one rule:

    an integer or a float        the ctypes type of its size and signedness (char: c_char)
    an enum                      its underlying integer type
    T[n]                         T's type * n
    a struct of these headers    its Structure
    char* (const or not)         c_char_p
    any other pointer            c_void_p: Python fills it with an address
    a pointer to a function      CFUNCTYPE(result, parameters...), where a parameter that
                                 points to anything but void is a POINTER to it, so that a
                                 Python callback indexes it (out[0] = address)

Every integer constant there (constexpr, or an enum's) is in CONSTANTS, and the ones the
package reads are names of this module.

Every function of a compiled library that the package calls is an extern "C" prototype there,
and bind(lib, name) returns it typed from that prototype: its result and parameters by the
rule above as for a callback's, except that a parameter that points to a function is c_void_p
(the address of the library's own code, which Python passes on and never calls). A family of
numbered functions that compiler.py generates (kc_spawn_0, kc_spawn_1, ...) is declared as
one function type, named for the family with `n` for the number (typedef ... kc_spawn_n(...)).

tests/runtime/test_abi.py compiles a probe with g++ and checks every structure's size and
every field's offset and size, and every entry point's result and parameters, against the
compiler's.
"""
import ctypes
import re

from ..frontend import SRC_DIR

HEADERS = ("kc_abi.h", "kc_host_abi.h")

# <stdint.h> as the headers use it, from the target's own predefined types.
_STDINT = "".join(f"typedef __{name.upper()}_TYPE__ {name}_t;\n" for name in (
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "intptr", "uintptr"))
_STDINT_DIR = "/cudacheck-abi"   # where clang finds it (a file given to the parse, not on disk)

_FLOATS = {"FLOAT": ctypes.c_float, "DOUBLE": ctypes.c_double}
_SIGNED = {"SCHAR", "SHORT", "INT", "LONG", "LONGLONG", "INT128"}
_UNSIGNED = {"UCHAR", "CHAR_U", "USHORT", "UINT", "ULONG", "ULONGLONG", "UINT128"}
_INTS = {(True, 1): ctypes.c_int8, (True, 2): ctypes.c_int16, (True, 4): ctypes.c_int32, (True, 8): ctypes.c_int64,
         (False, 1): ctypes.c_uint8, (False, 2): ctypes.c_uint16, (False, 4): ctypes.c_uint32,
         (False, 8): ctypes.c_uint64}


class BoundaryError(RuntimeError):
    """kc_abi.h or kc_host_abi.h declares something this module cannot mirror, or the package
    calls a function they do not declare (a fault of the runtime, never of a kernel)."""


def _parse():
    try:
        import clang.cindex as ci
    except ImportError:
        raise ImportError("the CPU runtime needs clang's Python bindings: pip install libclang") from None
    main = "cudacheck-abi.cpp"
    tu = ci.Index.create().parse(
        main, args=["-x", "c++", "-std=c++17", "-nostdinc", f"-I{_STDINT_DIR}", f"-I{SRC_DIR}"],
        unsaved_files=[(main, "".join(f'#include "{h}"\n' for h in HEADERS)),
                       (f"{_STDINT_DIR}/stdint.h", _STDINT)])
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise BoundaryError("clang could not read the runtime's layouts:\n" + "\n".join(errors))
    return ci, tu


def _ours(c):
    return c.location.file is not None and c.location.file.name.endswith(HEADERS)


class _Reader:
    def __init__(self, ci):
        self.ci, self.K, self.T = ci, ci.CursorKind, ci.TypeKind
        self.structs, self.constants, self.entry_points = {}, {}, {}

    def read(self, tu):
        top = list(tu.cursor.get_children())
        decls = [c for ns in top if ns.kind == self.K.NAMESPACE and ns.spelling == "kc"
                 for c in ns.get_children() if _ours(c)]
        defined = [c for c in decls if c.kind == self.K.STRUCT_DECL and c.is_definition()]
        for c in defined:   # every class first: a pointer may name a struct declared further down
            self.structs[c.spelling] = type(c.spelling, (ctypes.Structure,), {"__module__": __name__})
        for c in defined:
            fields = []
            for f in c.type.get_fields():
                if f.is_bitfield():
                    raise BoundaryError(f"{c.spelling}.{f.spelling}: a bit-field has no ctypes layout to match")
                fields.append((f.spelling, self.ctype(f.type, f"{c.spelling}.{f.spelling}")))
            self.structs[c.spelling]._fields_ = fields
        for c in decls:
            if c.kind == self.K.ENUM_DECL:
                self.constants.update((e.spelling, e.enum_value) for e in c.get_children())
            elif c.kind == self.K.VAR_DECL:
                self.constants[c.spelling] = self.value(c)
        for c in top:
            if c.kind == self.K.LINKAGE_SPEC:
                for f in c.get_children():
                    if f.kind == self.K.FUNCTION_DECL and _ours(f):
                        self.entry_points[f.spelling] = self.signature(f.type, f.spelling)
            elif c.kind == self.K.TYPEDEF_DECL and _ours(c):
                t = c.underlying_typedef_type.get_canonical()
                if t.kind != self.T.FUNCTIONPROTO:
                    continue
                if not c.spelling.endswith("_n"):
                    raise BoundaryError(f"{c.spelling}: a function type of the headers names a family, "
                                        "as its name ending in _n says (kc_spawn_n)")
                self.entry_points[c.spelling] = self.signature(t, c.spelling)
        return self

    def signature(self, t, where):
        """(restype, argtypes) of an entry point's function type."""
        result = None if t.get_result().kind == self.T.VOID else self.ctype(t.get_result(), where)
        params = []
        for a in (a.get_canonical() for a in t.argument_types()):
            code = a.kind == self.T.POINTER and a.get_pointee().get_canonical().kind == self.T.FUNCTIONPROTO
            params.append(ctypes.c_void_p if code else self.ctype(a, where, param=True))
        return result, params

    def ctype(self, t, where, param=False):
        t = t.get_canonical()
        kind = t.kind.name
        if kind == "CHAR_S":
            return ctypes.c_char
        if kind == "BOOL":
            return ctypes.c_bool
        if kind in _FLOATS:
            return _FLOATS[kind]
        if kind in _SIGNED or kind in _UNSIGNED:
            return _INTS[kind in _SIGNED, t.get_size()]
        if kind == "ENUM":
            return self.ctype(t.get_declaration().enum_type, where)
        if kind == "CONSTANTARRAY":
            return self.ctype(t.element_type, where) * t.element_count
        if kind == "RECORD" and t.get_declaration().spelling in self.structs:
            return self.structs[t.get_declaration().spelling]
        if kind == "POINTER":
            to = t.get_pointee().get_canonical()
            if to.kind == self.T.FUNCTIONPROTO:
                result = None if to.get_result().kind == self.T.VOID else self.ctype(to.get_result(), where)
                return ctypes.CFUNCTYPE(result, *(self.ctype(a, where, param=True) for a in to.argument_types()))
            if to.kind == self.T.CHAR_S:
                return ctypes.c_char_p
            if param and to.kind != self.T.VOID:
                return ctypes.POINTER(self.ctype(to, where, param=True))
            return ctypes.c_void_p
        raise BoundaryError(f"{where}: no ctypes type for {t.spelling}")

    def value(self, c):
        """An integer constant's value: the literal after its `=`."""
        tokens = [t.spelling for t in c.get_tokens()]
        literal = tokens[tokens.index("=") + 1:] if "=" in tokens else []
        literal = literal[:-1] if literal[-1:] == [";"] else literal
        if len(literal) != 1 or not re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)[uUlL]*", literal[0]):
            raise BoundaryError(f"{c.spelling}: a constant of the headers is one integer literal, "
                                f"not {' '.join(literal)}")
        return int(literal[0].rstrip("uUlL"), 0)


def read():
    """(structs, constants, entry points) of the headers: {name: ctypes.Structure},
    {name: int}, {name: (restype, argtypes)} (a family by its name: kc_spawn_n)."""
    ci, tu = _parse()
    reader = _Reader(ci).read(tu)
    return reader.structs, reader.constants, reader.entry_points


STRUCTS, CONSTANTS, ENTRY_POINTS = read()


def entry_point(name):
    """The declared (restype, argtypes) of the function `name`, or of its family (kc_spawn_3:
    kc_spawn_n); BoundaryError if the headers declare neither."""
    for declared in (name, re.sub(r"_\d+$", "_n", name)):
        if declared in ENTRY_POINTS:
            return ENTRY_POINTS[declared]
    raise BoundaryError(f"{name}: src/kc_abi.h and kc_host_abi.h declare no such function; the package "
                        "calls a library's functions only through their extern \"C\" prototypes there")


def bind(lib, name):
    """The function `name` of the loaded library `lib` (a ctypes.CDLL), typed from its
    prototype. A function object of its own: the library's attribute of that name is left
    as it is."""
    restype, argtypes = entry_point(name)
    fn = lib[name]
    fn.restype, fn.argtypes = restype, argtypes
    return fn


# kc_abi.h
WorkerStatus = STRUCTS["WorkerStatus"]
LaunchDesc = STRUCTS["LaunchDesc"]
TraceRecord = STRUCTS["TraceRecord"]
Allocation = STRUCTS["Allocation"]
CheckDesc = STRUCTS["CheckDesc"]
CpuTensorMap = STRUCTS["CpuTensorMap"]
CpuTexture = STRUCTS["CpuTexture"]
OK, RUNNING, ASSERT_FAILED, CRASHED, OUT_OF_MEMORY, CHECK_FAILED = (
    CONSTANTS[n] for n in ("OK", "RUNNING", "ASSERT_FAILED", "CRASHED", "OUT_OF_MEMORY", "CHECK_FAILED"))
SHARED_ID_BASE, MAX_SHARED_ARRAYS, MAX_PARAMS, MAX_SLOTS, TENSOR_MAP_MAGIC, TEXTURE_MAGIC = (
    CONSTANTS[n] for n in ("SHARED_ID_BASE", "MAX_SHARED_ARRAYS", "MAX_PARAMS", "MAX_SLOTS", "TENSOR_MAP_MAGIC",
                           "TEXTURE_MAGIC"))
# kc_host_abi.h
HostCallbacks = STRUCTS["HostCallbacks"]
HostCrash = STRUCTS["HostCrash"]
