"""Checked mode's source rewrite: the kernel's own source, with its pointers and shared
arrays replaced by the checking stand-ins of include/kc_checked.h.

Every rewrite stays within the lines it touches, so compiler messages and the
findings' line numbers are the student's own.
"""
import re

from ..errors import UnsupportedFeatureError
from ..listing import numbered
from ..signature import SCALAR_DTYPES, find_kernels, split_top_level, strip_comments

_VECTOR = [f"{b}{n}" for b in ("float", "double", "int", "uint", "char", "uchar", "short", "ushort", "long", "ulong",
                               "longlong", "ulonglong") for n in (1, 2, 3, 4)]


def _type_pattern(extra):
    names = sorted(set(SCALAR_DTYPES) | set(_VECTOR) | set(extra) | {"unsigned", "signed"}, key=len, reverse=True)
    return "|".join(r"\s+".join(map(re.escape, n.split())) for n in names)


def _template_names(code):
    names = set()
    for m in re.finditer(r"template\s*<([^<>]*)>", code):
        names.update(re.findall(r"(?:typename|class)\s+(\w+)", m.group(1)))
    return names


def _replace(text, start, end, new):
    """Replace text[start:end] by `new`, padded with the newlines it spanned."""
    return text[:start] + new + "\n" * text.count("\n", start, end) + text[end:]


def rewrite(source):
    """The source as checked mode compiles it; returns (code, shared names by id)."""
    code = strip_comments(source)  # find things in the code without comments ...
    edits = []                     # ... and edit the original at the same offsets
    shared = []

    def shared_decl(m):
        body, is_extern = m.group("body"), bool(m.group("extern"))
        body = re.sub(r"__align__\s*\(\s*\d+\s*\)|\bvolatile\b|\bstatic\b", " ", body)
        parts = split_top_level(body)
        first = re.match(r"\s*(?P<type>.*?)\b(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]]*\]\s*)*)$", parts[0], re.S)
        if not first or not first.group("type").strip():
            return None
        ctype = " ".join(first.group("type").split())
        out = []
        for i, part in enumerate(parts):
            d = first if i == 0 else re.match(r"\s*(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]]*\]\s*)*)$", part, re.S)
            if not d:
                return None
            dims = re.findall(r"\[([^\]]*)\]", d.group("dims"))
            sid = len(shared)
            shared.append(d.group("name"))
            if is_extern:
                out.append(f'static ::kc::dynamic_shared<{ctype}> {d.group("name")}{{"{d.group("name")}", {sid}}};')
            elif len(dims) > 3:
                return None
            else:
                targs = "".join(f", ({' '.join(x.split())})" for x in dims)
                out.append(f'static ::kc::shared_array<{ctype}{targs}> {d.group("name")}{{"{d.group("name")}", {sid}}};')
        return " ".join(out)

    for m in re.finditer(r"(?P<extern>\bextern\s+)?\b__shared__\b(?P<body>[^;]*);", code):
        new = shared_decl(m)
        if new is None:
            line = code.count("\n", 0, m.start()) + 1
            raise UnsupportedFeatureError(
                f"checked mode cannot read the __shared__ declaration on line {line}; declare one array per "
                f"statement, as `__shared__ float name[ROWS][COLS];`\n{numbered(source, {line})}", backend="cpu")
        edits.append((m.start(), m.end(), new))

    types = _type_pattern(_template_names(code))
    pointer = re.compile(
        rf"(?P<c1>\bconst\s+)?(?<![\w:])(?P<type>{types})\b(?P<c2>\s+const\b)?\s*\*\s*(?:const\b\s*)?"
        rf"(?:__restrict__\b|__restrict\b|restrict\b)?\s*(?P<name>[A-Za-z_]\w*)\b(?!\s*\()")
    for m in pointer.finditer(code):
        if any(a <= m.start() < b for a, b, _ in edits):
            continue
        const = "const " if (m.group("c1") or m.group("c2")) else ""
        edits.append((m.start(), m.end(), f"::kc::ptr<{const}{' '.join(m.group('type').split())}> {m.group('name')}"))

    for info in find_kernels(source).values():
        a, b = info["body_start"], info["body_end"]
        for m in re.finditer(r"\breturn\s*;", code[a:b]):
            edits.append((a + m.start(), a + m.end(), "return (void)::kc::thread_exit_line(__LINE__);"))

    for m in re.finditer(r"\breinterpret_cast\s*<", code):
        edits.append((m.start(), m.end(), "::kc::pointer_cast<"))

    out = source
    for start, end, new in sorted(edits, reverse=True):
        out = _replace(out, start, end, new)
    return out, shared
