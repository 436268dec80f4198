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
WGMMA_TYPES = {("bf16", "bf16"): 0, ("f16", "f16"): 1}
SHAPE = re.compile(r"m64n(\d+)k16")


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
                (a, b) not in WGMMA_TYPES:
            self.refuse()
        n = int(m.group(1))
        ops = self.arity(ops, 8)   # {d}, descriptor A, descriptor B, scale-d, imm-scale-a/b, imm-trans-a/b
        d = self.accumulators(ops[0], n // 2)
        scale_a, scale_b, trans_a, trans_b = (self.immediate(o, allowed) for o, allowed in
                                               zip(ops[4:], ((1, -1), (1, -1), (0, 1), (0, 1))))
        return (f"{{ float* const kc_d[] = {{{', '.join('&' + r for r in d)}}}; ::kc::wgmma_mma(kc_d, {n}u, "
                f"{self.value(ops[1], 'u64')}, {self.value(ops[2], 'u64')}, {self.value(ops[3], 'pred')}, "
                f"{scale_a}, {scale_b}, {trans_a}u, {trans_b}u, {WGMMA_TYPES[(a, b)]}u, {line}); }}")

    def accumulators(self, toks, count):
        """The vector operand {d0, ..., d(count-1)}: C++ lvalues of float outputs ("+f")."""
        if toks[:1] != ["{"] or toks[-1:] != ["}"] or toks[2:-1:2] != [","] * (count - 1) or \
                len(toks) != 2 * count + 1:
            self.bad(f"an accumulator operand that is not {count} registers in braces")
        out = []
        for tok in toks[1:-1:2]:
            op = self.stmt.operands[int(tok.strip(MARK))] if tok.startswith(MARK) and self.stmt.operands else None
            if op is None or not op.output or op.letter != "f":
                self.bad(f"the accumulator `{tok.replace(MARK, '%') if op else tok}` (a \"+f\" operand)")
            out.append(self.register(tok))
        return out

    def immediate(self, toks, allowed):
        text = "".join(toks)
        if text not in {str(v) for v in allowed}:
            self.bad(f"the immediate `{' '.join(toks)}` (one of {', '.join(map(str, allowed))})")
        return text
