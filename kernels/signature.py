"""Reading a CUDA C source: which kernels it defines and what each one takes.

Both backends check a launch's arguments against these signatures before anything
runs, so a float64 array passed to a `float*` parameter is an ArgumentError rather
than garbage on the GPU.
"""
import re
from dataclasses import dataclass

import numpy as np

# Element types a kernel parameter may have, as NumPy dtypes. Vector types map to
# their element type and lane count: a float4* takes a float32 array.
SCALAR_DTYPES = {
    "float": np.float32, "double": np.float64,
    "int": np.int32, "signed": np.int32, "signed int": np.int32,
    "unsigned": np.uint32, "unsigned int": np.uint32,
    "long": np.int64, "long int": np.int64, "long long": np.int64, "long long int": np.int64,
    "unsigned long": np.uint64, "unsigned long int": np.uint64,
    "unsigned long long": np.uint64, "unsigned long long int": np.uint64,
    "size_t": np.uint64, "ptrdiff_t": np.int64,
    "int64_t": np.int64, "uint64_t": np.uint64, "int32_t": np.int32, "uint32_t": np.uint32,
    "short": np.int16, "unsigned short": np.uint16, "int16_t": np.int16, "uint16_t": np.uint16,
    "char": np.int8, "signed char": np.int8, "unsigned char": np.uint8,
    "int8_t": np.int8, "uint8_t": np.uint8, "bool": np.bool_,
    "__half": np.float16, "half": np.float16,
}
_VECTOR_BASES = {
    "float": np.float32, "double": np.float64, "int": np.int32, "uint": np.uint32,
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
    "long": np.int64, "ulong": np.uint64, "longlong": np.int64, "ulonglong": np.uint64,
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct"}


@dataclass(frozen=True)
class Param:
    name: str
    base: str          # element type with qualifiers removed, e.g. "float", "unsigned int"
    pointer: bool
    const: bool        # a pointer to const: the kernel cannot write through it
    text: str          # the declaration as written, for messages

    @property
    def dtype(self):
        """The NumPy dtype of one element (of a vector type: of one lane), or None."""
        if self.base in SCALAR_DTYPES:
            return np.dtype(SCALAR_DTYPES[self.base])
        m = re.fullmatch(r"([a-z]+)([1-4])", self.base)
        if m and m.group(1) in _VECTOR_BASES:
            return np.dtype(_VECTOR_BASES[m.group(1)])
        return None

    @property
    def lanes(self):
        m = re.fullmatch(r"[a-z]+([1-4])", self.base)
        return int(m.group(1)) if m and self.base not in SCALAR_DTYPES else 1


@dataclass(frozen=True)
class Kernel:
    name: str                      # as get_function takes it: "tiled" or "tiled<16>"
    function: str                  # the C++ identifier: "tiled"
    params: tuple
    line: int                      # where `__global__` stands, 1-based
    body_start: int = -1           # offsets into the source of the body's braces
    body_end: int = -1


def strip_comments(source):
    """Blank out comments, keeping every newline so that offsets and lines still match."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', lambda m: m.group(0) if m.group(0).startswith('"') else blank(m), source, flags=re.S)


def _matching(text, open_at, open_ch, close_ch):
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return -1


def split_top_level(text):
    """Split on the commas that are not inside brackets of any kind."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def parse_param(decl):
    text = " ".join(decl.split("=")[0].split())
    array = text.endswith("]")
    if array:
        text = text[: text.index("[")].strip()
    m = re.match(r"(.*?)(\w+)$", text)
    if not m or not m.group(1).strip():
        raise ValueError(f"cannot read the parameter `{decl.strip()}`")
    type_text, name = m.group(1), m.group(2)
    pointer = array or "*" in type_text
    tokens = [t for t in re.findall(r"[A-Za-z_]\w*(?:::\w+)*", type_text)]
    # The pointee is const when `const` stands before the first `*` (const float* p,
    # float const* p); a trailing `* const` only fixes the pointer itself.
    before_star = type_text.split("*")[0] if "*" in type_text else type_text
    const = pointer and "const" in re.findall(r"\w+", before_star)
    base = " ".join(t for t in tokens if t not in _QUALIFIERS)
    base = {"unsigned": "unsigned int"}.get(base, base)
    return Param(name=name, base=base, pointer=pointer, const=const, text=decl.strip())


def _template_params(text_before):
    """Names of the template parameters of `template <...>` right before a kernel."""
    m = re.search(r"template\s*<([^{};]*)>\s*(?:extern\s*\"C\"\s*)?$", text_before)
    if not m:
        return []
    names = []
    for part in split_top_level(m.group(1)):
        part = part.split("=")[0].strip()
        names.append(re.findall(r"\w+", part)[-1])
    return names


def find_kernels(source):
    """Every __global__ function of the source, keyed by its C++ name."""
    code = strip_comments(source)
    code = re.sub(r"__launch_bounds__\s*\([^()]*\)", lambda m: " " * len(m.group(0)), code)
    kernels = {}
    for m in re.finditer(r"\b__global__\b[^;{(]*?\b([A-Za-z_]\w*)\s*\(", code):
        name = m.group(1)
        open_at = m.end() - 1
        close_at = _matching(code, open_at, "(", ")")
        after = code[close_at + 1:].lstrip()
        if not after.startswith("{"):
            continue  # a declaration only
        body_start = code.index("{", close_at)
        body_end = _matching(code, body_start, "{", "}")
        start = code.rfind("\n", 0, m.start()) + 1
        templ = _template_params(code[:m.start()][-400:].rstrip() + " ")
        params = tuple(split_top_level(code[open_at + 1:close_at]))
        if params == ("void",):
            params = ()
        kernels[name] = dict(function=name, params=params, template=templ,
                             line=code.count("\n", 0, start) + 1,
                             body_start=body_start, body_end=body_end)
    return kernels


def kernel_signature(source, name, found=None):
    """The signature of kernel `name`, which may be a template instance "f<float, 16>"."""
    found = find_kernels(source) if found is None else found
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(?:<(.*)>)?\s*", name)
    if not m or m.group(1) not in found:
        have = ", ".join(sorted(found)) or "none"
        raise KeyError(f"no __global__ function named {name!r} in the source (kernels found: {have})")
    info = found[m.group(1)]
    decls = list(info["params"])
    if m.group(2) is not None:
        values = split_top_level(m.group(2))
        for tname, value in zip(info["template"], values):
            decls = [re.sub(rf"\b{re.escape(tname)}\b", value, d) for d in decls]
    elif info["template"]:
        raise KeyError(f"{name!r} is a template kernel: name an instance, such as "
                       f"'{name}<...>', in name_expressions and in get_function")
    return Kernel(name=name.strip(), function=info["function"],
                  params=tuple(parse_param(d) for d in decls), line=info["line"],
                  body_start=info["body_start"], body_end=info["body_end"])
