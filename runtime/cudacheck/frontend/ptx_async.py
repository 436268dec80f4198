"""Translating the async proxy's instructions (ptx.py): the TMA's tensor copies (into shared
memory, multicast too, and back to global memory, with their bulk groups), the warpgroup
multiply (wgmma) with its fence, commit and wait, each a call of the runtime
(cpu/include/kc_ptx.h). A mixin of ptx_translate._Template: self.value, self.address,
self.register, self.refuse and self.bad read the operands."""
import re

from .ptx_parse import MARK

# cp.async.bulk.tensor.2d, global to shared memory, its bytes completing on an mbarrier (no
# cache hint), into this CTA or multicast to the cluster's; and shared to global as a bulk group.
TMA_LOAD = [["async", "bulk", "tensor", "2d", space, "global", "mbarrier::complete_tx::bytes"]
            for space in ("shared::cluster", "shared::cta")]
MULTICAST = [m + ["multicast::cluster"] for m in TMA_LOAD]
TMA_STORE = ["async", "bulk", "tensor", "2d", "global", "shared::cta", "bulk_group"]
# wgmma's operand types: (the runtime's code for them, kc_async.cpp; the K of their shape)
WGMMA_TYPES = {("bf16", "bf16"): (0, 16), ("f16", "f16"): (1, 16), ("tf32", "tf32"): (2, 8)}
SHAPE = re.compile(r"m64n(\d+)k(8|16)")


class AsyncInstructions:
    def _cp(self, mods, ops, line):
        if mods in (["async", "bulk", "commit_group"], ["async", "bulk", "wait_group"],
                    ["async", "bulk", "wait_group", "read"]):
            return self.bulk_group(mods[2], ops, line)
        if mods == TMA_STORE:
            dst, src = self.arity(ops, 2)
            tmap, x, y = self.tensor(dst)
            return f"::kc::tma_store_2d({tmap}, {x}, {y}, {self.address(src)}, {line});"
        if mods not in TMA_LOAD + MULTICAST:
            self.refuse()
        multicast = mods in MULTICAST
        ops = self.arity(ops, 4 if multicast else 3)
        tmap, x, y = self.tensor(ops[1])
        where = f"{self.address(ops[0])}, {tmap}, {x}, {y}, {self.address(ops[2])}"
        if multicast:
            return f"::kc::tma_load_multicast({where}, {self.value(ops[3], 'u16')}, {line});"
        return f"::kc::tma_load_2d({where}, {line});"

    def tensor(self, toks):
        """`[map, {x, y}]`: the tensor map's address and the box's corner, as C++."""
        inner = toks[1:-1] if toks[:1] == ["["] and toks[-1:] == ["]"] else []
        if len(inner) != 7 or inner[1:3] != [",", "{"] or inner[4] != "," or inner[6] != "}":
            self.bad(f"the tensor operand `{' '.join(toks)}` (a tensor map and a corner {{x, y}})")
        return (f"(const void*)(uintptr_t){self.value([inner[0]], 'u64')}", self.value([inner[3]], "s32"),
                self.value([inner[5]], "s32"))

    def bulk_group(self, op, ops, line):
        if op == "commit_group":
            self.arity(ops, 0)
            return f"::kc::bulk_commit({line});"
        n, = self.arity(ops, 1)
        return f"::kc::bulk_wait(uint32_t({self.value(n, 'u32')}), {line});"

    def _wgmma(self, mods, ops, line):
        if mods[1:3] != ["sync", "aligned"]:
            self.refuse()
        op = mods[0]
        if op in ("fence", "commit_group") and len(mods) == 3:
            self.arity(ops, 0)
            return f"::kc::wgmma_{'fence' if op == 'fence' else 'commit'}({line});"
        if op == "wait_group" and len(mods) == 3:
            n, = self.arity(ops, 1)
            return f"::kc::wgmma_wait(uint32_t({self.value(n, 'u32')}), {line});"
        if op != "mma_async" or len(mods) != 7:
            self.refuse()
        shape, dtype, a, b = mods[3:]
        m = SHAPE.fullmatch(shape)
        if not m or int(m.group(1)) % 8 or not 8 <= int(m.group(1)) <= 256 or dtype != "f32" or \
                WGMMA_TYPES.get((a, b), (None, 0))[1] != int(m.group(2)):
            self.refuse()
        n = int(m.group(1))
        code, _ = WGMMA_TYPES[(a, b)]
        tf32 = a == "tf32"
        # A from registers (the "RS" form) when operand 1 is a vector {a0, a1, a2, a3}; else the
        # "SS" form, A through a descriptor. tf32 has no imm-trans operands (both K-major); the RS
        # form has no imm-trans-a (A in registers is K-major).
        registers = len(ops) > 1 and ops[1][:1] == ["{"]
        count = 6 if tf32 else 7 if registers else 8
        if len(ops) > count and tf32:
            self.bad(f"{len(ops)} operands (a .tf32 wgmma has no imm-trans operands: both of its operands "
                     f"are K-major)")
        if len(ops) == 8 and registers:
            self.bad("8 operands (with A in registers there is no imm-trans-a: that form has 7)")
        ops = self.arity(ops, count)   # {d}, A, descriptor B, scale-d, imm-scale-a/b[, imm-trans-a][, imm-trans-b]
        d = self.accumulators(ops[0], n // 2)
        scale_a, scale_b = (self.immediate(o, (1, -1)) for o in ops[4:6])
        trans = [self.immediate(o, (0, 1)) for o in ops[6:]]
        trans_a, trans_b = ("0", "0") if tf32 else ("0", trans[0]) if registers else trans
        pre = f"float* const kc_d[] = {{{', '.join('&' + r for r in d)}}}; "
        if registers:
            pre += f"const uint32_t kc_a[] = {{{', '.join(self.a_registers(ops[1]))}}}; "
            desc_a, regs = "0ULL", "kc_a"
        else:
            desc_a, regs = self.value(ops[1], "u64"), "nullptr"
        return (f"{{ {pre}::kc::wgmma_mma(kc_d, {n}u, {desc_a}, {regs}, {self.value(ops[2], 'u64')}, "
                f"{self.value(ops[3], 'pred')}, {scale_a}, {scale_b}, uint32_t({trans_a}), uint32_t({trans_b}), "
                f"{code}u, {line}); }}")

    def a_registers(self, toks):
        """The A operand of the RS form, {a0, a1, a2, a3}: four "r" inputs, as uint32_t values."""
        if toks[:1] != ["{"] or toks[-1:] != ["}"] or len(toks) != 9 or toks[2:-1:2] != [","] * 3:
            self.bad("an A operand that is not 4 registers in braces")
        out = []
        for tok in toks[1:-1:2]:
            op = self.stmt.operands[int(tok.strip(MARK))] if tok.startswith(MARK) and self.stmt.operands else None
            if op is None or op.output or op.letter != "r":
                self.bad(f"the A register `{shown(tok)}` (an \"r\" input operand)")
            out.append(self.value([tok], "b32"))
        return out

    def accumulators(self, toks, count):
        """The vector operand {d0, ..., d(count-1)}: C++ lvalues of float outputs ("+f")."""
        if toks[:1] != ["{"] or toks[-1:] != ["}"] or toks[2:-1:2] != [","] * (count - 1) or \
                len(toks) != 2 * count + 1:
            self.bad(f"an accumulator operand that is not {count} registers in braces")
        out = []
        for tok in toks[1:-1:2]:
            op = self.stmt.operands[int(tok.strip(MARK))] if tok.startswith(MARK) and self.stmt.operands else None
            if op is None or not op.output or op.letter != "f":
                self.bad(f"the accumulator `{shown(tok)}` (a \"+f\" operand)")
            out.append(self.register(tok))
        return out

    def immediate(self, toks, allowed):
        """An immediate operand: a literal, or an "n" operand (a constant the compiler writes in,
        as CUTLASS's and fast.cu's wrappers pass imm-scale and imm-trans), which g++ checks
        against `allowed` as ptxas would (::kc::ptx_immediate's static_assert)."""
        text = "".join(toks)
        if text in {str(v) for v in allowed}:
            return text
        op = self.stmt.operands[int(toks[0].strip(MARK))] if len(toks) == 1 and toks[0].startswith(MARK) \
            and self.stmt.operands else None
        if op is None or op.letter != "n":
            self.bad(f"the immediate `{' '.join(map(shown, toks))}` (one of {', '.join(map(str, allowed))}, or an "
                     f"\"n\" operand)")
        return f"::kc::ptx_immediate<int64_t({self.register(toks[0])}), {', '.join(map(str, allowed))}>()"


def shown(tok):
    """A template's register as written: `%3` for operand 3 (marked in the parsed template)."""
    return "%" + tok.strip(MARK) if tok.startswith(MARK) else tok
