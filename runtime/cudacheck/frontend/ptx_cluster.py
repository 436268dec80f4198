"""Translating what a thread-block cluster adds to PTX (ptx.py): the cluster's special registers,
mapa, the cluster barrier, and the block-level instructions the clustered kernels use beside
them (named barriers, st.shared), each a call of the runtime (cpu/src/kc_ptx.h;
kc_cluster.cpp). A mixin of ptx_translate._Template, as ptx_async.py's is."""

# The special registers of the block's cluster: (register, axis) -> the runtime's name for it.
CLUSTER_REGISTERS = {
    "%cluster_ctarank": ("CLUSTER_CTARANK", 0), "%cluster_nctarank": ("CLUSTER_NCTARANK", 0),
    "%is_explicit_cluster": ("CLUSTER_EXPLICIT", 0),
    **{f"%{reg}.{a}": (name, i) for reg, name in (("clusterid", "CLUSTER_ID"), ("nclusterid", "CLUSTER_NID"),
                                                   ("cluster_ctaid", "CLUSTER_CTAID"),
                                                   ("cluster_nctaid", "CLUSTER_NCTAID"))
       for i, a in enumerate("xyz")}}
SPECIAL = {reg: f"::kc::cluster_register(::kc::{name}, {axis})" for reg, (name, axis) in CLUSTER_REGISTERS.items()}
# st.shared's types, by their C++ type; vectors of 2 or 4.
STORE = {"b32": "uint32_t", "u32": "uint32_t", "s32": "int32_t", "f32": "float", "b64": "uint64_t",
         "u64": "uint64_t", "s64": "int64_t", "f64": "double"}


class ClusterInstructions:
    def _mapa(self, mods, ops, line):
        if mods not in (["shared::cluster", "u32"], ["shared::cluster", "u64"]):
            self.refuse()
        d, a, rank = self.arity(ops, 3)
        t = mods[1]
        return self.assign(d, f"(({'uint32_t' if t == 'u32' else 'uint64_t'})::kc::mapa({self.value(a, t)}, "
                              f"{self.value(rank, 'u32')}, {line}))")

    def _barrier(self, mods, ops, line):
        """barrier.cluster.arrive[.release|.relaxed][.aligned], barrier.cluster.wait[.acquire][.aligned],
        and barrier.sync / barrier.arrive (bar.sync's and bar.arrive's other spellings)."""
        if mods[:1] != ["cluster"]:
            return self._bar(mods, ops, line)
        self.arity(ops, 0)
        op, rest = (mods[1:2] or [""])[0], set(mods[2:])
        # .relaxed drops the ordering the default .release gives: stronger here, never weaker.
        if op == "arrive" and len(rest) == len(mods) - 2 and rest <= {"release", "relaxed", "aligned"}:
            return f"::kc::cluster_arrive({line});"
        if op == "wait" and len(rest) == len(mods) - 2 and rest <= {"acquire", "aligned"}:
            return f"::kc::cluster_wait({line});"
        self.refuse()

    def _bar(self, mods, ops, line):
        """bar[.cta].sync id[, count] (barrier[.cta].sync[.aligned]): a named barrier of the block;
        bar[.cta].arrive id, count (barrier[.cta].arrive[.aligned]): an arrival there that does not
        wait. ptxas wants arrive's count ("Arguments mismatch for instruction 'bar.arrive'")."""
        op = mods[1:] if mods[:1] == ["cta"] else mods
        if op not in (["sync"], ["sync", "aligned"], ["arrive"], ["arrive", "aligned"]):
            self.refuse()
        if op[0] == "arrive":
            bar_id, count = self.arity(ops, 2)
            return f"::kc::named_barrier_arrive({self.value(bar_id, 'u32')}, {self.value(count, 'u32')}, {line});"
        ops = self.arity(ops, 1, 2)
        count = self.value(ops[1], "u32") if len(ops) == 2 else "0u"
        return f"::kc::named_barrier({self.value(ops[0], 'u32')}, {count}, {line});"

    def _ldmatrix(self, mods, ops, line):
        """ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans][.shared[::cta]].b16 {r...}, [a]: the warp loads
        1, 2 or 4 matrices of 8 x 8 16-bit elements, lane l giving the address of row l % 8 of
        matrix l / 8 (its 16 bytes read as the kernel's own loads), each thread's register i two
        elements of matrix i in the fragment layout (::kc::ldmatrix_fragments deals them out)."""
        n, trans = self.matrix_shape(mods)
        r, a = self.arity(ops, 2)
        regs = self.matrix_registers(r, n)
        at = f"::kc::cluster_local({self.address(a)}, \"ldmatrix\", {line})"
        outs = " ".join(f"{self.dest([tok])} = kc_m[{i}];" for i, tok in enumerate(regs))
        return (f"{{ uint32_t kc_row[4] = {{0, 0, 0, 0}}, kc_m[4]; if (::kc::matrix_row_lane() < {8 * n}u) {{ "
                f"const uint32_t* kc_q = (const uint32_t*)::kc::shared_address({at}); "
                f"kc_row[0] = kc_q[0]; kc_row[1] = kc_q[1]; kc_row[2] = kc_q[2]; kc_row[3] = kc_q[3]; }} "
                f"::kc::ldmatrix_fragments(kc_row, {n}, {'true' if trans else 'false'}, kc_m, {line}); {outs} }}")

    def matrix_shape(self, mods):
        """(matrices, .trans) of an ldmatrix or stmatrix: .sync.aligned.m8n8.x{1,2,4}[.trans][.shared].b16."""
        quals = [m for m in mods if m not in ("shared", "shared::cta")]
        if quals[:3] != ["sync", "aligned", "m8n8"] or len(quals) not in (5, 6) or quals[3] not in ("x1", "x2", "x4") \
                or quals[-1] != "b16" or (len(quals) == 6 and quals[4] != "trans"):
            self.refuse()
        return int(quals[3][1:]), len(quals) == 6

    def matrix_registers(self, r, n):
        """The n registers of an ldmatrix or stmatrix: {r0, ...}, or one without braces."""
        regs = r[1:-1:2] if r[:1] == ["{"] else r
        if len(regs) != n or (r[:1] == ["{"] and (r[-1:] != ["}"] or r[2:-1:2] != [","] * (n - 1))):
            self.bad(f"a register operand that is not {n} registers")
        return regs

    def _stmatrix(self, mods, ops, line):
        """stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans][.shared[::cta]].b16 [a], {r...}: the warp stores
        1, 2 or 4 matrices of 8 x 8 16-bit elements, each thread's register i two elements of matrix
        i; lane l gives the address of row l % 8 of matrix l / 8 (::kc::stmatrix_row gathers it), and
        stores its 16 bytes as the kernel's own stores (checked mode sees them)."""
        n, trans = self.matrix_shape(mods)
        a, r = self.arity(ops, 2)
        regs = self.matrix_registers(r, n)
        values = ", ".join(self.value([tok], "b32") for tok in regs)
        at = f"::kc::cluster_local({self.address(a)}, \"stmatrix\", {line})"
        return (f"{{ const uint32_t kc_m[] = {{{values}}}; uint32_t kc_row[4]; "
                f"if (::kc::stmatrix_row(kc_m, {n}, {'true' if trans else 'false'}, kc_row, {line})) {{ "
                f"uint32_t* kc_q = (uint32_t*)::kc::shared_address({at}); "
                f"kc_q[0] = kc_row[0]; kc_q[1] = kc_row[1]; kc_q[2] = kc_row[2]; kc_q[3] = kc_row[3]; }} }}")

    def _st(self, mods, ops, line):
        """st.shared[::cta][.v2|.v4].T [a], b: a store through the shared window, as the kernel's own
        store (checked mode sees it)."""
        space = mods[:1]
        vec = mods[1] if len(mods) == 3 else ""
        if space not in (["shared"], ["shared::cta"]) or len(mods) not in (2, 3) or vec not in ("", "v2", "v4") or \
                mods[-1] not in STORE:
            self.refuse()
        t = mods[-1]
        a, b = self.arity(ops, 2)
        n = int(vec[1:]) if vec else 1
        if vec and (b[:1] != ["{"] or b[-1:] != ["}"] or len(b) != 2 * n + 1 or b[2:-1:2] != [","] * (n - 1)):
            self.bad(f"a vector operand that is not {n} registers in braces")
        values = [self.value([tok], t) for tok in b[1:-1:2]] if vec else [self.value(b, t)]
        stores = " ".join(f"kc_q[{i}] = {v};" for i, v in enumerate(values))
        at = f"::kc::cluster_local({self.address(a)}, \"st.shared\", {line})"   # (not another block's)
        return f"{{ {STORE[t]}* kc_q = ({STORE[t]}*)::kc::shared_address({at}); {stores} }}"
