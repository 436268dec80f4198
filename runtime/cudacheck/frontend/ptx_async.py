"""Translating the async proxy's instructions (ptx.py): the TMA's tensor copies (into shared
memory, multicast too, and back to global memory, with their bulk groups), the warpgroup
multiply (wgmma) with its fence, commit and wait, each a call of the runtime
(cpu/src/kc_ptx.h). A mixin of ptx_translate._Template: self.value, self.address,
self.register, self.refuse and self.bad read the operands."""
import re

from .ptx_parse import MARK, PtxError

# cp.async.bulk.tensor.2d, global to shared memory, its bytes completing on an mbarrier (no
# cache hint), into this CTA or multicast to the cluster's; and shared to global as a bulk group.
TMA_LOAD = [["async", "bulk", "tensor", "2d", space, "global", "mbarrier::complete_tx::bytes"]
            for space in ("shared::cluster", "shared::cta")]
MULTICAST = [m + ["multicast::cluster"] for m in TMA_LOAD]
TMA_STORE = ["async", "bulk", "tensor", "2d", "global", "shared::cta", "bulk_group"]
TENSOR_DIMS = ("1d", "2d", "3d", "4d", "5d")   # a tensor copy's dimensions (the forms above name 2d for each)


def coords(c):
    """The corner of an N-d tensor copy as the local array the runtime's call reads."""
    return f"const int32_t kc_c[] = {{{', '.join(c)}}};"


# wgmma's operand types: (the runtime's code for them, kc_async.cpp; the K of their shape)
WGMMA_TYPES = {("bf16", "bf16"): (0, 16), ("f16", "f16"): (1, 16), ("tf32", "tf32"): (2, 8)}
SHAPE = re.compile(r"m64n(\d+)k(8|16)")


class AsyncInstructions:
    def _cp(self, mods, ops, line):
        if mods in (["async", "bulk", "commit_group"], ["async", "bulk", "wait_group"],
                    ["async", "bulk", "wait_group", "read"]):
            return self.bulk_group(mods[2], ops, line)
        # The tensor copies of 1 to 5 dimensions, in the tile mode (`.tile`, the default, written or
        # not): the 2-D ones as the 2-D calls, the others through the runtime's slices of the box.
        dims = mods[3] if len(mods) > 3 and mods[:3] == ["async", "bulk", "tensor"] else ""
        shape = [m for m in mods if m != "tile"]
        shape[3:4] = ["2d"] if dims in TENSOR_DIMS else shape[3:4]
        n = TENSOR_DIMS.index(dims) + 1 if dims in TENSOR_DIMS else 0
        if shape == TMA_STORE:
            dst, src = self.arity(ops, 2)
            tmap, c = self.tensor(dst, n)
            if n == 2:
                return f"::kc::tma_store_2d({tmap}, {c[0]}, {c[1]}, {self.address(src)}, {line});"
            return f"{{ {coords(c)} ::kc::tma_store_nd({tmap}, kc_c, {n}, {self.address(src)}, {line}); }}"
        if "im2col" in mods:   # (its map, cuTensorMapEncodeIm2col, neither)
            raise PtxError(f"the inline PTX instruction `{self.name}` (the TMA's im2col mode; a `.tile` copy of a map "
                           f"over the image, gathering each column in the kernel, loads the same elements)", line)
        if shape not in TMA_LOAD + MULTICAST:
            self.refuse()
        multicast = shape in MULTICAST
        ops = self.arity(ops, 4 if multicast else 3)
        tmap, c = self.tensor(ops[1], n)
        mask = f", {self.value(ops[3], 'u16')}" if multicast else ""
        dst, bar = self.address(ops[0]), self.address(ops[2])
        if n == 2:
            call = "tma_load_multicast" if multicast else "tma_load_2d"
            return f"::kc::{call}({dst}, {tmap}, {c[0]}, {c[1]}, {bar}{mask}, {line});"
        call = "tma_load_multicast_nd" if multicast else "tma_load_nd"
        return f"{{ {coords(c)} ::kc::{call}({dst}, {tmap}, kc_c, {n}, {bar}{mask}, {line}); }}"

    def tensor(self, toks, n):
        """`[map, {c0, ..., c(n-1)}]`: the tensor map's address and the box's corner (column first),
        as C++."""
        inner = toks[1:-1] if toks[:1] == ["["] and toks[-1:] == ["]"] else []
        if len(inner) != 2 * n + 3 or inner[1:3] != [",", "{"] or inner[-1] != "}" or \
                inner[4:-1:2] != [","] * (n - 1):
            self.bad(f"the tensor operand `{' '.join(toks)}` (a tensor map and a corner of {n} coordinates)")
        return (f"(const void*)(uintptr_t){self.value([inner[0]], 'u64')}",
                [self.value([t], "s32") for t in inner[3:-1:2]])

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
        d, tracked = self.accumulators(ops[0], n // 2)
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
                f"{code}u, {'true' if tracked else 'false'}, {line}); }}")

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
        """The vector operand {d0, ..., d(count-1)}: C++ lvalues of float outputs ("+f"), and
        whether they are all read-write ("+f", not "=f"). Those the wgmma takes by reference
        (ptx.edits binds them to the source's own variables, copying nothing), so that checked
        mode can watch the variables themselves until a wgmma.wait_group retires the wgmma."""
        if toks[:1] != ["{"] or toks[-1:] != ["}"] or toks[2:-1:2] != [","] * (count - 1) or \
                len(toks) != 2 * count + 1:
            self.bad(f"an accumulator operand that is not {count} registers in braces")
        out = []
        for tok in toks[1:-1:2]:
            op = self.stmt.operands[int(tok.strip(MARK))] if tok.startswith(MARK) and self.stmt.operands else None
            if op is None or not op.output or op.letter != "f":
                self.bad(f"the accumulator `{shown(tok)}` (a \"+f\" operand)")
            out.append(self.register(tok))
        ops = [self.stmt.operands[int(tok.strip(MARK))] for tok in toks[1:-1:2]]
        tracked = all(op.read for op in ops)
        if tracked:
            self.by_reference.update(int(tok.strip(MARK)) for tok in toks[1:-1:2])
        return out, tracked

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
