"""C++ types as NumPy sees them: a kernel parameter's element type, a `__device__` variable's,
a struct's fields, as dtype descriptions that survive the JSON of the disk cache."""
import re

import numpy as np

from .model import Param, spec

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
_QUALIFIERS = re.compile(r"\b(const|volatile|struct|class)\b\s*")


def _json_descr(dt):
    """A structured dtype as JSON-able data that np.dtype() reads back."""
    return {"names": list(dt.names), "formats": [dt.fields[n][0].str if not dt.fields[n][0].subdtype else
                                                  [dt.fields[n][0].subdtype[0].str, list(dt.fields[n][0].shape)]
                                                  for n in dt.names],
            "offsets": [dt.fields[n][1] for n in dt.names], "itemsize": dt.itemsize}


def element_dtype(ci, t):
    """(dtype.descr, lanes) of a canonical element type; (None, 1) if NumPy has no such type."""
    T = ci.TypeKind
    t = t.get_canonical()
    if t.kind == T.ENUM:
        t = t.get_declaration().enum_type.get_canonical()
    if t.kind.name in _SCALARS:
        return np.dtype(_SCALARS[t.kind.name]).str, 1
    if t.kind == T.RECORD:
        return _record(ci, t)
    if t.kind == T.CONSTANTARRAY:
        return element_dtype(ci, t.element_type)
    return None, 1


def _record(ci, t):
    """element_dtype of a struct: a 16-bit float, a vector type, or a structured dtype."""
    T = ci.TypeKind
    name = _QUALIFIERS.sub("", t.spelling).strip()
    if name in _LOWP:
        return _LOWP[name]
    m = _VECTOR.fullmatch(name)
    if m:
        return np.dtype(_VECTOR_LANES[m.group(1)]).str, int(m.group(2))
    fields = []
    for f in t.get_fields():
        fd, lanes = element_dtype(ci, f.type)
        if fd is None:
            return None, 1
        ft = f.type.get_canonical()
        shape = []
        while ft.kind == T.CONSTANTARRAY:   # float m[4][4]: shape (4, 4)
            shape.append(ft.element_count)
            ft = ft.element_type.get_canonical()
        if lanes > 1:
            shape.append(lanes)
        fields.append((f.spelling, spec(fd), tuple(shape)))
    if not fields or t.get_size() <= 0:
        return None, 1
    dt = np.dtype({"names": [f[0] for f in fields], "formats": [(f[1], f[2]) if f[2] else f[1] for f in fields],
                   "offsets": [t.get_offset(f[0]) // 8 for f in fields], "itemsize": t.get_size()})
    return _json_descr(dt), 1


def parameter(ci, decl, ptype, written):
    """A Param from a parameter's declaration, its (possibly instantiated) type and its
    declaration as written."""
    T = ci.TypeKind
    t = ptype.get_canonical()
    pointer = t.kind in (T.POINTER, T.INCOMPLETEARRAY, T.CONSTANTARRAY)
    elem = (t.get_pointee() if t.kind == T.POINTER else t.element_type) if pointer else t
    const = pointer and elem.is_const_qualified()
    elem_c = elem.get_canonical()
    descr, lanes = element_dtype(ci, elem_c)
    size = elem_c.get_size()
    return Param(name=decl.spelling, base=_QUALIFIERS.sub("", elem_c.spelling).strip(), pointer=pointer,
                 const=bool(const), text=" ".join(written.split()) or f"{ptype.spelling} {decl.spelling}",
                 descr=descr, lanes=lanes, itemsize=max(int(size), 0))
