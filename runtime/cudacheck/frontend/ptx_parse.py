"""Reading inline PTX: an asm statement's pieces from its tokens (libclang's Python bindings
expose none of them), and its template as PTX statements, each with its source line
(ptx.py says what the CPU build does with them)."""
import codecs
import re
from dataclasses import dataclass, field


class PtxError(Exception):
    """Inline PTX the CPU build does not translate: `construct` completes "kernel `k` uses
    ..." (module.py's refusal), `line` is the source line."""

    def __init__(self, construct, line):
        super().__init__(construct)
        self.construct, self.line = construct, line


@dataclass
class Operand:
    """One operand of an asm statement: `"+r"(acc[3])`."""
    letter: str          # the constraint's register class: r, l, h, f, d or n; a digit: tied to that output
    output: bool         # "=" or "+"
    read: bool           # an input, or "+": its value goes in
    span: tuple          # the expression's (start, end) offsets in the source; None where a macro wrote it
    name: str = ""       # `[name]`, for %[name]
    text: str = ""       # the expression, as C++ (for an operand a macro wrote)


@dataclass
class AsmStmt:
    """An asm statement: its template's string literals as (text, line), its operands (outputs
    first, numbered as %0, %1, ...), its clobbers, and the offsets it spans, `;` excluded.
    operands is None where they could not be read (`problem` says why): the template is still
    read, for the instruction it uses that the CPU build does not translate, if any. A basic
    asm statement (no `:`) takes its template as written: `%` is special only with operands."""
    pieces: list
    operands: list
    clobbers: list
    span: tuple
    line: int
    extended: bool = True
    problem: PtxError = None


LETTERS = set("rlhfdn")


def read_asm(tokens, line, strings=lambda name: None, macros=lambda name: None):
    """The AsmStmt of an ASM_STMT's tokens (libclang Tokens: spelling, kind, extent), or
    PtxError for what the CPU build does not read. strings(name): the string literals a macro
    the template names stands for (`"mma." WG_TYPES " {"`), or None. macros(name): a
    function-like macro's (parameters, body spellings), or None: operands such a macro writes
    (`F8(0)` for `"+f"(d[0]), ..., "+f"(d[7])`) are read from its expansion."""
    toks = [t for t in tokens if t.kind.name != "COMMENT"]
    if not toks or toks[0].spelling not in ("asm", "__asm__", "__asm"):
        raise PtxError("inline PTX assembly written by a macro", line)
    i = 1
    while toks[i].spelling in ("volatile", "__volatile__", "inline", "goto"):
        if toks[i].spelling == "goto":
            raise PtxError("inline PTX assembly with `asm goto`", line)
        i += 1
    if toks[i].spelling != "(":
        raise PtxError("inline PTX assembly the CPU runtime cannot read", line)
    close = _matching(toks, i)
    sections = _split(toks[i + 1:close], ":")
    pieces = []
    for t in sections[0]:
        literals = [t.spelling] if t.kind.name == "LITERAL" else strings(t.spelling)
        if not literals or not all(x.endswith('"') for x in literals):
            raise PtxError(f"inline PTX assembly whose template is not string literals alone (`{t.spelling}`)", line)
        pieces += [(_string(x), t.location.line) for x in literals]
    clobbers = [_string(t.spelling) for t in (sections[3] if len(sections) > 3 else []) if t.kind.name == "LITERAL"]
    stmt = AsmStmt(pieces, [], clobbers, (toks[0].extent.start.offset, toks[close].extent.end.offset), line,
                   extended=len(sections) > 1)
    try:
        for k, section in enumerate(sections[1:3]):
            for op in _split(_expand(section, macros, line), ",") if section else []:
                stmt.operands.append(_operand(op, output=k == 0, line=line))
    except PtxError as e:
        stmt.operands, stmt.problem = None, e
    return stmt


def _matching(toks, i):
    depth = 0
    for j in range(i, len(toks)):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(toks[j].spelling, 0)
        if depth == 0:
            return j
    raise PtxError("inline PTX assembly the CPU runtime cannot read", toks[i].location.line)


def _split(toks, sep):
    """toks split at `sep` tokens outside brackets (`::`, as in `asm("..." :: "r"(x))`, is two `:`)."""
    out, depth = [[]], 0
    for t in toks:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(t.spelling, 0)
        if depth == 0 and (t.spelling == sep or (sep == ":" and t.spelling == "::")):
            out += [[] for _ in t.spelling]
        else:
            out[-1].append(t)
    return out


def _string(spelling):
    """A C string literal's text: "a\\tb" -> a<TAB>b; raw strings as written."""
    m = re.fullmatch(r'(?:u8|u|U|L)?R"([^(]*)\((.*)\)\1"', spelling, re.S)
    if m:
        return m.group(2)
    body = spelling[spelling.index('"') + 1:-1]
    return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")


def _operand(toks, output, line):
    name = ""
    if toks and toks[0].spelling == "[":
        name, toks = toks[1].spelling, toks[3:]
    if toks and toks[0].kind.name == "IDENTIFIER":
        raise PtxError(f"inline PTX assembly with operands written by a macro (`{toks[0].spelling}`)", line)
    if len(toks) < 4 or toks[0].kind.name != "LITERAL" or toks[1].spelling != "(" or toks[-1].spelling != ")":
        raise PtxError("inline PTX assembly with an operand the CPU runtime cannot read", line)
    constraint = _string(toks[0].spelling).replace("&", "")
    letter = constraint.lstrip("=+")
    if letter not in LETTERS and not (letter.isdigit() and not output):
        raise PtxError(f'inline PTX assembly with the operand constraint "{constraint}"', line)
    expr = toks[2:-1]
    span = None if any(t.extent is None for t in expr) else (expr[0].extent.start.offset, expr[-1].extent.end.offset)
    return Operand(letter, output, not output or constraint.startswith("+"), span, name,
                   " ".join(t.spelling for t in expr))


@dataclass
class _Kind:
    name: str


@dataclass
class _Token:
    """A token of a macro's expansion: a libclang Token's spelling and kind, and no extent."""
    spelling: str
    kind: _Kind
    extent: object = None


def _token(spelling):
    kind = "LITERAL" if spelling[:1] in "\"'" or spelling[:1].isdigit() else \
        "IDENTIFIER" if re.fullmatch(r"[A-Za-z_]\w*", spelling) else "PUNCTUATION"
    return _Token(spelling, _Kind(kind))


def _expand(toks, macros, line, depth=0):
    """toks with each function-like macro call (a name macros() knows, then its arguments in
    parentheses) replaced by its body, the parameters by the arguments' tokens, recursively."""
    out, i = [], 0
    while i < len(toks):
        t = toks[i]
        macro = macros(t.spelling) if t.kind.name == "IDENTIFIER" and i + 1 < len(toks) and \
            toks[i + 1].spelling == "(" else None
        if macro is None:
            out.append(t)
            i += 1
            continue
        if depth > 16:
            raise PtxError(f"inline PTX assembly with operands written by a recursive macro (`{t.spelling}`)", line)
        params, body = macro
        close = _matching(toks, i + 1)
        args = _split(toks[i + 2:close], ",") if close > i + 2 else []
        if len(args) != len(params):
            raise PtxError(f"inline PTX assembly with operands written by a macro (`{t.spelling}`)", line)
        bound = dict(zip(params, args))
        body = [x for b in body for x in (bound[b] if b in bound else [_token(b)])]
        out += _expand(body, macros, line, depth + 1)
        i = close + 1
    return out


# ---- the template ----------------------------------------------------------------------------
# An operand's place in the template once %N is read: a character PTX never uses around N.
MARK = "\x01"

TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<operand>\x01\d+\x01)
  | (?P<num>0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|\d+U?)
  | (?P<name>[.%$_a-zA-Z][\w$]*(?:(?:\.|::)[\w$]+)*)
  | (?P<punct>[{}\[\];,@!|+<>:-])
""", re.X)


@dataclass
class Stmt:
    """One PTX statement: kind "open" or "close" (a `{ }` scope), "label" (name), "reg" (a
    declaration: type, names) or "inst" (opcode, operands as token lists, guard `p` or `!p`)."""
    kind: str
    line: int
    name: str = ""
    operands: list = field(default_factory=list)
    guard: str = ""


def template(stmt):
    """The asm statement's template, its operands read (%N and %[name] -> MARK N MARK, %% ->
    %) and its comments blanked, with a function from a character's offset to its line."""
    names = {op.name: k for k, op in enumerate(stmt.operands or []) if op.name}
    text, starts = [], []
    at = 0
    for piece, line in stmt.pieces:
        def operand(m, line=line):
            ref = m.group(1)
            if ref == "%":
                return "%"
            k = names.get(ref[1:-1]) if ref.startswith("[") else int(ref) if ref.isdigit() else None
            if k is None or (stmt.operands is not None and k >= len(stmt.operands)):
                raise PtxError(f"inline PTX assembly with the operand reference `%{ref}`", line)
            return f"{MARK}{k}{MARK}"
        if stmt.extended:
            piece = re.sub(r"%(%|\d+|\[\w+\]|=)", operand, piece)
        starts.append((at, line))
        text.append(piece)
        at += len(piece)
    text = "".join(text)
    text = re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)

    def line_of(offset):
        return max((ln for s, ln in starts if s <= offset), default=stmt.line)
    return text, line_of


def statements(stmt):
    """The PTX statements of an asm statement's template, each with its source line."""
    text, line_of = template(stmt)
    toks, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None:
            raise PtxError(f"inline PTX assembly with the character `{text[pos]}`", line_of(pos))
        if m.lastgroup != "ws":
            toks.append((m.lastgroup, m.group(), line_of(pos)))
        pos = m.end()
    out, i = [], 0
    while i < len(toks):
        kind, tok, line = toks[i]
        if tok in ("{", "}"):
            out.append(Stmt("open" if tok == "{" else "close", line))
            i += 1
        elif tok == ";":
            i += 1
        elif kind == "name" and i + 1 < len(toks) and toks[i + 1][1] == ":":
            out.append(Stmt("label", line, tok))
            i += 2
        else:   # an instruction, up to its `;`: braces after its opcode are a vector operand's ({a, b})
            j, depth = i + 1, 0
            while j < len(toks) and (depth or toks[j][1] not in (";", "}")):
                depth += {"{": 1, "}": -1}.get(toks[j][1], 0)
                j += 1
            out.append(_statement(toks[i:j], line))
            i = j
    return out


def _statement(toks, line):
    guard = ""
    if toks[0][1] == "@" and len(toks) > 3:
        neg = toks[1][1] == "!"
        guard = ("!" if neg else "") + toks[2 if neg else 1][1]
        toks = toks[3 if neg else 2:]
    if not toks or toks[0][0] != "name":
        raise PtxError("inline PTX assembly the CPU runtime cannot read", line)
    operands, depth = [[]], 0
    for _kind, tok, _ in toks[1:]:
        depth += {"[": 1, "]": -1, "{": 1, "}": -1}.get(tok, 0)
        if tok == "," and depth == 0:
            operands.append([])
        else:
            operands[-1].append(tok)
    if operands == [[]]:
        operands = []
    kind = "reg" if toks[0][1] == ".reg" else "inst"
    return Stmt(kind, line, toks[0][1], operands, guard)
