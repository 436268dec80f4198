"""What a kernel's source may ask of g++: the kernel's unit is preprocessed first (g++ -E),
and in the lines that come from the kernel's own source every attribute and pragma that
could change how the unit is built or checked is taken out before g++ compiles it.

Why after preprocessing: a macro, token pasting or `_Pragma` can spell an attribute or a
pragma any way it likes, but once g++ has expanded them all, each one stands in the
preprocessed text as written here: `__attribute__((...))`, `[[...]]` (or `<:<:...:>:>`),
`__declspec(...)`, or a `#pragma` line. A directive can only come from a directive: where a
macro produces a `#` at the start of a line, g++ -E writes a space before it, and g++ then
reads it as a stray `#`, not as a line marker or a pragma. The source's own line markers
(`#line`, `# 12 "file"`) are taken out before this, by the front end
(frontend/cpu_build.py: line_directive_edits), so that no line of the source can pass for a
line of the runtime's headers.

What stays is what a GPU's compiler honours and that changes nothing about checking:
layout (aligned, packed, vector_size, mode), inlining, the standard C++ attributes, and the
two sections the runtime's own qualifiers place variables in. Everything else is dropped, as
NVRTC ignores host-compiler attributes on device code: `no_sanitize*` (which would switch
checked mode's instrumentation off), `optimize` and `target` (a different arithmetic than the
GPU's), `constructor`, `destructor`, `section`, `alias`, `weak`, `ifunc` (code run, or a
symbol bound, when the library loads), and every `#pragma` but `unroll`, `nounroll` and
`pack`. Assembly left in the source after the front end translated its inline PTX (a
file-scope `asm`, which NVRTC places in the module's PTX, or an asm label, which ptxas
refuses) is refused: the CPU runtime translates only inline PTX inside functions.
"""
import re

from ..errors import UnsupportedFeatureError
from ..listing import numbered

# GNU attributes kept, by name without underscores: layout, inlining, diagnostics.
GNU_KEPT = {"aligned", "packed", "vector_size", "mode", "may_alias", "always_inline", "noinline", "flatten",
            "unused", "used", "noreturn", "deprecated", "const", "pure", "nothrow", "warn_unused_result",
            "nonnull", "returns_nonnull", "cold", "hot", "format", "format_arg", "fallthrough", "maybe_unused",
            "noclone", "noipa"}
# The sections of the runtime's __shared__ and KC_DEVICE_VAR (cuda_cpu.h, kc_device.ld).
KEPT_SECTIONS = {'"kc_shared"', '"kc_device"'}
# The standard attributes, written without a namespace.
STD_KEPT = {"noreturn", "carries_dependency", "deprecated", "fallthrough", "nodiscard", "maybe_unused", "likely",
            "unlikely", "no_unique_address", "assume"}
PRAGMAS_KEPT = re.compile(r"#\s*pragma\s+(unroll|nounroll|pack)\b")

_TOKEN = re.compile(r"""
    (?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\(.*?\)(?P=delim)")
  | (?P<str>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
  | (?P<chr>(?:u8|[uUL])?'(?:\\.|[^'\\\n])*')
  | (?P<id>[A-Za-z_$][\w$]*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.'])*)
  | (?P<space>\s+)
  | (?P<punct><:(?!:[^:>])|:>|::|.)
""", re.S | re.X)
_OPEN, _CLOSE = {"(": ")", "[": "]", "<:": ":>", "{": "}"}, {")", "]", ":>", "}"}
_MARKER = re.compile(r'# (\d+) "((?:\\.|[^"\\])*)"((?: \d)*)$')


class _Tokens:
    """The tokens of one stretch of source lines (no whitespace), each (kind, text, start, end)."""

    def __init__(self, text):
        self.text = text
        self.toks = []
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup if m.lastgroup != "delim" else "raw"
            if kind != "space":
                self.toks.append((kind, m.group(), m.start(), m.end()))

    def spell(self, i):
        return self.toks[i][1] if i < len(self.toks) else ""

    def is_open_bracket(self, i):
        return self.spell(i) in ("[", "<:")

    def match(self, i):
        """The index of the bracket that closes the one at i, or None if this stretch does not close it."""
        depth = 0
        for j in range(i, len(self.toks)):
            s = self.spell(j)
            if s in _OPEN:
                depth += 1
            elif s in _CLOSE:
                depth -= 1
                if depth == 0:
                    return j
        return None

    def entries(self, lo, hi):
        """The comma-separated entries between token indices lo and hi (exclusive), as index ranges."""
        out, start, depth = [], lo, 0
        for j in range(lo, hi):
            s = self.spell(j)
            depth += s in _OPEN
            depth -= s in _CLOSE
            if s == "," and depth == 0:
                out.append((start, j))
                start = j + 1
        out.append((start, hi))
        return [(a, b) for a, b in out if a < b]

    def source(self, a, b):
        """The text of tokens a..b (exclusive)."""
        return self.text[self.toks[a][2]:self.toks[b - 1][3]] if a < b else ""


def _name(attr):
    return attr.strip("_")


def _gnu_kept(toks, a, b):
    name = _name(toks.spell(a))
    if name == "section":
        return toks.source(a + 1, b).replace(" ", "").strip("()") in KEPT_SECTIONS
    return name in GNU_KEPT


def _cxx_entry_kept(toks, a, b, namespace):
    """A [[...]] entry (tokens a..b): `ns::name(args)`, or `name(args)` in `namespace` (from `using ns:`)."""
    if toks.spell(a + 1) == "::":
        namespace, a = toks.spell(a), a + 2
    if namespace is None:
        return toks.spell(a) in STD_KEPT
    return _name(namespace) == "gnu" and _gnu_kept(toks, a, b)


def _blank(text):
    """What replaces a removed piece: its newlines, so that every line keeps its number."""
    return " " + "\n" * text.count("\n")


def _stretch(text, first_line, listing):
    """One stretch of the kernel's lines, starting at line first_line: its attributes filtered."""
    toks = _Tokens(text)
    out, at, i = [], 0, 0

    def line_of(i):
        return first_line + text.count("\n", 0, toks.toks[i][2])

    def refuse(i, what):
        line = line_of(i)
        raise UnsupportedFeatureError(f"kernel.cu, line {line}: {what}.\n{numbered(listing, {line})}", backend="cpu")

    def replace(i, j, new):
        nonlocal at
        start, end = toks.toks[i][2], toks.toks[j][3]
        out.extend([text[at:start], new, "\n" * (text.count("\n", start, end) - new.count("\n"))])
        at = end

    while i < len(toks.toks):
        kind, s = toks.toks[i][:2]
        if kind == "id" and s in ("asm", "__asm", "__asm__"):
            refuse(i, f"`{s}` outside a function (file-scope PTX, or an asm label) is assembly the CPU runtime "
                      "does not run: it translates only inline PTX statements inside functions. The source can run "
                      "on a GPU with backend='gpu'")
        if kind == "id" and s in ("__attribute__", "__attribute", "__declspec"):
            close = toks.match(i + 1) if toks.spell(i + 1) == "(" else None
            if close is None:
                refuse(i, f"`{s}` without its parenthesised list in one piece of the source")
            kept = []
            if s != "__declspec" and toks.spell(i + 2) == "(" and toks.match(i + 2) == close - 1:
                kept = [toks.source(a, b) for a, b in toks.entries(i + 3, close - 1) if _gnu_kept(toks, a, b)]
            replace(i, close, f"__attribute__(({', '.join(kept)}))" if kept else " ")
            i = close + 1
            continue
        if toks.is_open_bracket(i) and toks.is_open_bracket(i + 1):
            close = toks.match(i)
            if close is None or toks.match(i + 1) != close - 1:
                refuse(i, "an attribute list `[[` without its `]]` in one piece of the source")
            lo, namespace = i + 2, None
            if toks.spell(lo) == "using":
                namespace, lo = toks.spell(lo + 1), lo + 3
            kept = [toks.source(a, b) if toks.spell(a + 1) == "::" or namespace is None
                    else f"{namespace}::{toks.source(a, b)}"
                    for a, b in toks.entries(lo, close - 1) if _cxx_entry_kept(toks, a, b, namespace)]
            replace(i, close, f"[[{', '.join(kept)}]]" if kept else " ")
            i = close + 1
            continue
        i += 1
    out.append(text[at:])
    return "".join(out)


def sanitize(preprocessed, source_name, listing):
    """The preprocessed unit (g++ -E) with, in the lines of `source_name`, every attribute and
    pragma that could change the build taken out (this module's docstring says which);
    `listing` is the source that error messages quote."""
    lines = preprocessed.split("\n")
    out, stretch, in_source, line = [], [], False, 0

    def flush():
        if stretch:
            out.append(_stretch("\n".join(stretch), line - len(stretch), listing))
            stretch.clear()

    for text in lines:
        marker = _MARKER.match(text)
        if marker or text.startswith("#"):
            flush()
            if marker:
                line, in_source = int(marker.group(1)), marker.group(2) == source_name
                out.append(text)
            elif in_source and not PRAGMAS_KEPT.match(text):
                out.append("")   # a #pragma of the source: dropped, its line kept
                line += 1
            else:
                out.append(text)
                line += 1
            continue
        if in_source:
            stretch.append(text)
        else:
            out.append(text)
        line += 1
    flush()
    return "\n".join(out)
