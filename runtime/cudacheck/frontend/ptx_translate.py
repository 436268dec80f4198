"""Translating an asm statement's template (ptx_parse.statements) into C++: the subset of
PTX ptx.py describes, instruction by instruction, each with PTX's semantics (wraparound
arithmetic, clamped shift amounts, setp's predicate pairs), and the PtxError of anything else."""
import re

from .ptx_async import AsyncInstructions
from .ptx_cluster import SPECIAL as CLUSTER_SPECIAL
from .ptx_cluster import ClusterInstructions
from .ptx_memory import MemoryInstructions
from .ptx_parse import MARK, PtxError, statements

CTYPE = {"pred": "bool", "b16": "uint16_t", "u16": "uint16_t", "s16": "int16_t", "b32": "uint32_t",
         "u32": "uint32_t", "s32": "int32_t", "b64": "uint64_t", "u64": "uint64_t", "s64": "int64_t",
         "f32": "float", "f64": "double"}
INT = {t for t in CTYPE if t[0] in "bus"}
WIDE = {t for t in INT if t[1:] in ("32", "64")}
SPECIAL = {"%laneid": "::kc::cur->linear % 32u", "%warpid": "::kc::cur->linear / 32u",
           **{f"%{reg}.{a}": f"{var}.{a}" for reg, var in (("tid", "threadIdx"), ("ntid", "blockDim"),
                                                          ("ctaid", "blockIdx"), ("nctaid", "gridDim"))
              for a in "xyz"}, **CLUSTER_SPECIAL}
CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<", "ls": "<=", "hi": ">",
       "hs": ">="}
PRED = {"and": "&&", "or": "||", "xor": "!="}
BITS = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
NUMBER = re.compile(r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|\d+U?")
# Qualifiers an mbarrier instruction may carry here, besides .b64: the shared window of the CTA
# or of the cluster (none: a generic address), and CTA- or cluster-scoped ordering, which the
# blocks' fibers already have: the blocks of a cluster take turns (kc_cluster.cpp).
SPACE = {"shared", "shared::cta", "shared::cluster"}
# fence.proxy.async's state space qualifier -> what the fence orders (kc_ptx.h: ProxySpace): all
# of them, shared memory or global memory. ptxas takes no other (not even a plain .shared).
PROXY_SPACES = {(): "PROXY_ALL", ("shared::cta",): "PROXY_SHARED", ("shared::cluster",): "PROXY_SHARED",
                ("global",): "PROXY_GLOBAL"}
# The one-way proxy fences (fence.proxy.async::generic.<sem>.sync_restrict::<space>.cluster):
# the state space ptxas requires of each.
ONE_WAY = {"release": "sync_restrict::shared::cta", "acquire": "sync_restrict::shared::cluster"}
MBARRIER = {"init": set(), "arrive": {"release", "relaxed", "cta", "cluster"}, "expect_tx": {"relaxed", "cta"},
            "complete_tx": {"relaxed", "cta"}, "try_wait": {"acquire", "relaxed", "cta", "cluster"},
            "test_wait": {"acquire", "relaxed", "cta", "cluster"}}


def translate(stmt, local):
    """The C++ of asm statement `stmt`'s template, one line, with the operands it names and
    those it takes by reference: (body, named, by_reference), sets of operand numbers. `local`
    maps an operand's number to the C++ local that holds it."""
    t = _Template(stmt, local)
    body = t.body()
    return body, t.named, t.by_reference


class _Template(MemoryInstructions, AsyncInstructions, ClusterInstructions):
    def __init__(self, stmt, local):
        self.stmt, self.uid, self.local = stmt, stmt.span[0], local
        self.labels = {}   # (scope number, label) -> C++ label
        self.scopes = []   # [(scope number, {register: C++ name})], innermost last
        self.name, self.line = "", stmt.line
        self.named = set()          # the operands the template names (ptx.edits copies only those)
        self.by_reference = set()   # outputs the translation takes the address of (wgmma's accumulators)

    # ---- the template ----
    def body(self):
        stmts = statements(self.stmt)
        scope, stack = 0, [0]
        for s in stmts:   # labels first: a branch may jump forward
            if s.kind == "open":
                scope += 1
                stack.append(scope)
            elif s.kind == "close" and len(stack) > 1:
                stack.pop()
            elif s.kind == "label":
                if (stack[-1], s.name) in self.labels:
                    raise PtxError(f"inline PTX assembly that declares the label `{s.name}` twice", s.line)
                self.labels[(stack[-1], s.name)] = f"kc_L{self.uid}_{stack[-1]}_{_identifier(s.name)}"
        out, scope = [], 0
        self.scopes = [(0, {})]
        for s in stmts:
            self.name, self.line = s.name, s.line
            if s.kind == "open":
                scope += 1
                self.scopes.append((scope, {}))
                out.append("{")
            elif s.kind == "close":
                if len(self.scopes) == 1:
                    raise PtxError("inline PTX assembly with an unmatched `}`", s.line)
                self.scopes.pop()
                out.append("}")
            elif s.kind == "label":
                out.append(f"{self.labels[(self.scopes[-1][0], s.name)]}: ;")
            elif s.kind == "reg":
                out.append(self.declare(s.operands))
            else:
                out.append(self.instruction(s))
        if len(self.scopes) != 1:
            raise PtxError("inline PTX assembly with an unmatched `{`", self.stmt.line)
        return " ".join(x for x in out if x)

    def declare(self, operands):
        """`.reg .b32 r<4>, q;` -> `uint32_t kc_r_r0, ..., kc_r_q;`, in the innermost scope."""
        first = operands[0] if operands else []
        if not first or first[0][1:] not in CTYPE:
            raise PtxError(f"the inline PTX declaration `.reg {' '.join(first[:1])}`", self.line)
        names = []
        for toks in [first[1:], *operands[1:]]:
            if len(toks) == 4 and toks[1] == "<" and toks[2].isdigit() and toks[3] == ">":
                names += [f"{toks[0]}{i}" for i in range(int(toks[2]))]
            elif len(toks) == 1:
                names.append(toks[0])
            else:
                raise PtxError(f"the inline PTX declaration `.reg {first[0]} {' '.join(toks)}`", self.line)
        regs = self.scopes[-1][1]
        for n in names:
            if n in regs:
                raise PtxError(f"inline PTX assembly that declares the register `{n}` twice", self.line)
            regs[n] = f"kc_r_{_identifier(n)}"
        return f"{CTYPE[first[0][1:]]} {', '.join(regs[n] for n in names)};"

    def instruction(self, s):
        parts = s.name.split(".")
        handler = getattr(self, f"_{parts[0]}", None) if parts[0] in HANDLERS else None
        if handler is None:
            self.refuse()
        code = handler(parts[1:], s.operands, s.line)
        if s.guard:
            code = f"if ({'!' if s.guard.startswith('!') else ''}{self.register(s.guard.lstrip('!'))}) {{ {code} }}"
        return code

    # ---- operands ----
    def refuse(self):
        raise PtxError(f"the inline PTX instruction `{self.name}`", self.line)

    def bad(self, what):
        raise PtxError(f"the inline PTX instruction `{self.name}` with {what}", self.line)

    def arity(self, ops, *counts):
        if len(ops) not in counts:
            self.bad(f"{len(ops)} operand{'s' if len(ops) != 1 else ''}")
        return ops

    def register(self, tok):
        if tok.startswith(MARK):
            self.named.add(int(tok.strip(MARK)))
            return self.local.get(int(tok.strip(MARK)), "kc_p")   # (operands unread: only instructions matter)
        if tok in SPECIAL:
            return f"({SPECIAL[tok]})"
        for _, regs in reversed(self.scopes):
            if tok in regs:
                return regs[tok]
        self.bad(f"the unknown register `{tok}`")

    def number(self, tok, t):
        if tok[:2] in ("0f", "0F", "0d", "0D"):
            if t not in ("f32", "f64"):
                self.bad(f"the floating-point immediate `{tok}`")
            return f"__builtin_bit_cast({CTYPE[t]}, 0x{tok[2:]}ULL)" if t == "f64" else \
                f"__builtin_bit_cast(float, 0x{tok[2:]}u)"
        digits = tok.rstrip("U")
        base = 16 if digits[:2] in ("0x", "0X") else 2 if digits[:2] in ("0b", "0B") else 8 if \
            digits.startswith("0") and len(digits) > 1 else 10
        return f"{int(digits[2:] if base in (2, 16) else digits, base)}ULL"

    def value(self, toks, t):
        """Operand `toks` as a value of PTX type t (a C++ expression)."""
        c = CTYPE[t]
        if len(toks) == 2 and toks[0] == "!" and t == "pred":
            return f"(!{self.value(toks[1:], t)})"
        if len(toks) == 2 and toks[0] == "-" and NUMBER.fullmatch(toks[1]):
            return f"(({c})-{self.number(toks[1], t)})"
        if len(toks) != 1 or toks[0] == "_":
            self.bad(f"the operand `{_shown(toks)}`")
        if NUMBER.fullmatch(toks[0]):
            return f"(({c}){self.number(toks[0], t)})"
        return f"(({c}){self.register(toks[0])})"

    def dest(self, toks):
        """The lvalue of destination `toks`, or None for the sink `_`."""
        if toks == ["_"]:
            return None
        if len(toks) != 1 or NUMBER.fullmatch(toks[0]) or toks[0] in SPECIAL:
            self.bad(f"the destination `{_shown(toks)}`")
        op = self.stmt.operands[int(toks[0].strip(MARK))] if toks[0].startswith(MARK) and self.stmt.operands else None
        if op and not op.output and not op.letter.isdigit():
            self.bad(f"a write to its input operand %{toks[0].strip(MARK)}")
        return self.register(toks[0])

    def assign(self, toks, expr):
        d = self.dest(toks)
        return f"{d} = {expr};" if d else f"(void){expr};"

    def address(self, toks):
        """`[a]` or `[a+8]`: the address, as a 64-bit value."""
        if len(toks) < 3 or toks[0] != "[" or toks[-1] != "]":
            self.bad(f"the address `{_shown(toks)}`")
        inner, offset = toks[1:-1], ""
        if len(inner) == 3 and inner[1] in ("+", "-") and NUMBER.fullmatch(inner[2]):
            inner, offset = inner[:1], f" {inner[1]} {self.number(inner[2], 'u64')}"
        return f"({self.value(inner, 'u64')}{offset})"

    def types(self, mods, allowed, n=1):
        """The instruction's last n modifiers, its types, each in `allowed`; no other modifier."""
        if len(mods) != n or any(m not in allowed for m in mods):
            self.refuse()
        return mods

    # ---- instructions ----
    def _mov(self, mods, ops, line):
        t, = self.types(mods, CTYPE)
        d, a = self.arity(ops, 2)
        return self.assign(d, self.value(a, t))

    def _setp(self, mods, ops, line):
        op = mods[0] if mods else ""
        combine = mods[1] if len(mods) == 3 else ""
        t, = self.types(mods[2 if combine else 1:], INT)
        if op not in CMP or (combine and combine not in PRED):
            self.refuse()
        ops = self.arity(ops, 4 if combine else 3)
        t = "u" + t[1:] if op in ("lo", "ls", "hi", "hs") or t[0] == "b" else t
        p, q = _pair(ops[0])
        test = f"{self.value(ops[1], t)} {CMP[op]} {self.value(ops[2], t)}"
        c = f" {PRED[combine]} {self.value(ops[3], 'pred')}" if combine else ""
        code = f"{{ bool kc_t = {test}; " + self.assign(p, f"(kc_t){c}")
        return code + (self.assign(q, f"(!kc_t){c}") if q else "") + " }"

    def _selp(self, mods, ops, line):
        t, = self.types(mods, set(CTYPE) - {"pred"})
        d, a, b, c = self.arity(ops, 4)
        return self.assign(d, f"({self.value(c, 'pred')} ? {self.value(a, t)} : {self.value(b, t)})")

    def _bits(self, op, t, ops):
        d, a, b = self.arity(ops, 3)
        if t == "pred":
            return self.assign(d, f"({self.value(a, t)} {PRED[op]} {self.value(b, t)})")
        u = "u" + t[1:]   # wraps around, as PTX does, where signed C++ arithmetic would overflow
        return self.assign(d, f"(({CTYPE[t]})({self.value(a, u)} {BITS[op]} {self.value(b, u)}))")

    def _add(self, mods, ops, line):
        return self._bits("add", self.types(mods, WIDE)[0], ops)

    def _sub(self, mods, ops, line):
        return self._bits("sub", self.types(mods, WIDE)[0], ops)

    def _mul(self, mods, ops, line):
        if mods[:1] != ["lo"]:
            self.refuse()
        return self._bits("mul", self.types(mods[1:], WIDE)[0], ops)

    def _and(self, mods, ops, line):
        return self._bits("and", self.types(mods, {"b16", "b32", "b64", "pred"})[0], ops)

    def _or(self, mods, ops, line):
        return self._bits("or", self.types(mods, {"b16", "b32", "b64", "pred"})[0], ops)

    def _xor(self, mods, ops, line):
        return self._bits("xor", self.types(mods, {"b16", "b32", "b64", "pred"})[0], ops)

    def _not(self, mods, ops, line):
        t, = self.types(mods, {"b16", "b32", "b64", "pred"})
        d, a = self.arity(ops, 2)
        return self.assign(d, f"(!{self.value(a, t)})" if t == "pred" else f"(({CTYPE[t]})~{self.value(a, t)})")

    def _shift(self, mods, ops, allowed, left):
        # PTX clamps the amount at the width: 0 bits left, or the sign alone (shr.s) right.
        t, = self.types(mods, allowed)
        d, a, b = self.arity(ops, 3)
        width, c = int(t[1:]), CTYPE[t]
        over = "0" if left or t[0] != "s" else f"({self.value(a, t)} < 0 ? ({c})-1 : ({c})0)"
        shifted = f"({c})({self.value(a, t)} {'<<' if left else '>>'} kc_n)"
        return f"{{ uint32_t kc_n = {self.value(b, 'u32')}; " + \
            self.assign(d, f"(kc_n >= {width}u ? ({c}){over} : {shifted})") + " }"

    def _shl(self, mods, ops, line):
        return self._shift(mods, ops, {"b16", "b32", "b64"}, left=True)

    def _shr(self, mods, ops, line):
        return self._shift(mods, ops, INT, left=False)

    def _cvt(self, mods, ops, line):
        dt, st = self.types(mods, INT, 2)
        d, a = self.arity(ops, 2)
        return self.assign(d, f"(({CTYPE[dt]}){self.value(a, st)})")

    def _cvta(self, mods, ops, line):
        to = mods[:1] == ["to"]
        rest = mods[1:] if to else mods
        if len(rest) != 2 or rest[0] not in SPACE | {"global"} or rest[1] not in ("u32", "u64"):
            self.refuse()
        space, t = rest
        d, a = self.arity(ops, 2)
        x = self.value(a, t)
        if space == "global":   # generic addresses are global ones here
            return self.assign(d, x)
        if to:
            return self.assign(d, f"(({CTYPE[t]})::kc::shared_offset((const void*)(uintptr_t){x}))")
        return self.assign(d, f"(({CTYPE[t]})(uintptr_t)::kc::shared_address({x}))")

    def _elect(self, mods, ops, line):
        if mods != ["sync"]:
            self.refuse()
        dp, mask = self.arity(ops, 2)
        d, p = _pair(dp)
        code = f"{{ uint32_t kc_e = ::kc::elect_sync({self.value(mask, 'u32')}, {line}); " + self.assign(d, "kc_e")
        return code + (self.assign(p, "(kc_e == ::kc::cur->linear % 32u)") if p else "") + " }"

    def _setmaxnreg(self, mods, ops, line):
        if mods not in (["inc", "sync", "aligned", "u32"], ["dec", "sync", "aligned", "u32"]):
            self.refuse()
        self.arity(ops, 1)
        return ""   # registers are not modelled

    def _fence(self, mods, ops, line):
        self.arity(ops, 0)
        if mods[:2] == ["proxy", "async"]:
            space = PROXY_SPACES.get(tuple(mods[2:]))
            if space is None:
                said = ("Unexpected number of state spaces specified" if len(mods) > 3 else "State space incorrect")
                raise PtxError(f"`{self.name}`, which ptxas refuses (its state space may be .shared::cta, "
                               f".shared::cluster or .global, or none: \"{said} for instruction 'fence.proxy'\")",
                               line)
            return f"::kc::fence_proxy_async({line}, ::kc::{space});"
        if mods[:2] == ["proxy", "async::generic"] and len(mods) == 5 and mods[2] in ONE_WAY and mods[4] == "cluster":
            if mods[3] != ONE_WAY[mods[2]]:
                raise PtxError(f"`{self.name}`, which ptxas refuses (\".{ONE_WAY[mods[2]]} modifier required for "
                               "instruction 'fence.proxy'\")", line)
            if mods[2] == "release":
                # the thread's generic writes to its block's shared memory, before what the async
                # proxy does after: the direction the proxy fence check asks for
                return f"::kc::fence_proxy_async({line}, ::kc::PROXY_SHARED);"
            # acquire: the async proxy's writes into the cluster's shared memory, before the
            # thread's generic accesses after; checked mode orders those by the mbarrier the
            # thread waited on, so this is a compiler fence only
            return "__atomic_signal_fence(__ATOMIC_SEQ_CST);"
        if mods == ["mbarrier_init", "release", "cluster"]:
            return f"::kc::fence_mbarrier_init({line});"
        return self.memory_fence(mods) or self.refuse()

    def _bra(self, mods, ops, line):
        if mods not in ([], ["uni"]):
            self.refuse()
        target, = self.arity(ops, 1)
        for scope, _ in reversed(self.scopes):
            if len(target) == 1 and (scope, target[0]) in self.labels:
                return f"goto {self.labels[(scope, target[0])]};"
        self.bad(f"the unknown label `{_shown(target)}`")

    def _mbarrier(self, mods, ops, line):
        op = "arrive" if mods[:2] == ["arrive", "expect_tx"] else mods[0] if mods else ""
        quals = mods[2 if mods[:2] == ["arrive", "expect_tx"] else 1:]
        parity = op in ("try_wait", "test_wait") and quals[:1] == ["parity"]
        quals = quals[parity:]
        if op not in MBARRIER or quals[-1:] != ["b64"] or not set(quals[:-1]) <= MBARRIER[op] | SPACE:
            self.refuse()
        shared = bool(set(quals) & SPACE)
        cluster = "shared::cluster" in quals

        def bar(toks):   # the barrier's address: in the shared window (this block's), or generic
            a = self.address(toks)
            if cluster:
                a = f"::kc::cluster_local({a}, \"mbarrier.{op}.shared::cluster\", {line})"
            return f"::kc::shared_address({a})" if shared else f"(void*)(uintptr_t){a}"
        if op == "init":
            a, n = self.arity(ops, 2)
            return f"::kc::mbarrier_init({bar(a)}, {self.value(n, 'u32')}, {line});"
        if op in ("expect_tx", "complete_tx"):
            a, n = self.arity(ops, 2)
            return f"::kc::mbarrier_{op}({bar(a)}, {self.value(n, 'u32')}, {line});"
        if op == "arrive":
            expect = mods[1:2] == ["expect_tx"]
            ops = self.arity(ops, 3) if expect else self.arity(ops, 2, 3)
            count = "1u" if expect or len(ops) == 2 else self.value(ops[2], "u32")
            tx = self.value(ops[2], "u32") if expect else "0u"
            if cluster and not expect:   # this block's barrier, or another's of the cluster
                return self.assign(ops[0], f"::kc::mbarrier_arrive_cluster({self.address(ops[1])}, {count}, {line})")
            return self.assign(ops[0], f"::kc::mbarrier_arrive({bar(ops[1])}, {count}, {tx}, {line})")
        ops = self.arity(ops, 3, 4) if op == "try_wait" else self.arity(ops, 3)   # try_wait's time hint: unused
        phase = self.value(ops[2], "u32" if parity else "u64")
        return self.assign(ops[0], f"::kc::mbarrier_wait({bar(ops[1])}, uint32_t({phase}) & 1u, {line})")


HANDLERS = {"mov", "setp", "selp", "add", "sub", "mul", "and", "or", "xor", "not", "shl", "shr", "cvt", "cvta",
            "elect", "setmaxnreg", "fence", "bra", "mbarrier", "cp", "wgmma", "mapa", "barrier", "bar", "st", "atom",
            "red", "membar", "ld", "stmatrix", "ldmatrix"}


def _pair(toks):
    """`d|p` -> (d, p); `d` -> (d, None)."""
    if "|" in toks:
        i = toks.index("|")
        return toks[:i], toks[i + 1:]
    return toks, None


def _shown(toks):
    """Operand tokens as the template spells them: an operand's place as %N."""
    return re.sub(f"{MARK}(\\d+){MARK}", r"%\1", " ".join(toks))


def _identifier(name):
    """A PTX name as part of a C++ identifier: % and $ (which PTX names may hold) spelled out."""
    return name.replace("%", "P_").replace("$", "D_")
