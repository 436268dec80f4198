"""Inline PTX's memory-consistency instructions on global memory, with their scopes: atom and red
(add, exch, cas, min, max, and, or, xor, inc, dec), fence.{sc,acq_rel} and membar, and the strong
loads and stores ld.{relaxed,acquire} and st.{relaxed,release} (.volatile too). Each becomes the
CUDA C++ it stands for, of the same scope, so that checked mode applies the memory model's
scopes to it as to CUDA C++ (kc_check_global_races.cpp): .cta is block scope (atomicAdd_block,
__threadfence_block()), .gpu device scope, .sys system scope, and .cluster is taken as device
scope (it covers more than the block: never a false report). A .release or .acq_rel atom is its
scope's fence and then the atom, as the memory model composes them. A strong load or store is a
volatile access, which checked mode sees as strong, of device scope whatever its qualifier: a
.cta load is taken as covering more than its block (more permissive, never a false report); a
.release store's fence keeps its scope."""

# atom/red's operation -> CUDA's function, and the types PTX allows it here -> the C++ type
ATOMIC = {"add": "atomicAdd", "exch": "atomicExch", "cas": "atomicCAS", "min": "atomicMin", "max": "atomicMax",
          "and": "atomicAnd", "or": "atomicOr", "xor": "atomicXor", "inc": "atomicInc", "dec": "atomicDec"}
ATOMIC_TYPES = {
    "add": {"u32": "unsigned int", "s32": "int", "u64": "unsigned long long", "f32": "float", "f64": "double"},
    "exch": {"b32": "unsigned int", "u32": "unsigned int", "s32": "int", "b64": "unsigned long long",
             "u64": "unsigned long long"},
    "cas": {"b32": "unsigned int", "u32": "unsigned int", "s32": "int", "b64": "unsigned long long",
            "u64": "unsigned long long", "b16": "unsigned short"},
    "min": {"u32": "unsigned int", "s32": "int", "u64": "unsigned long long", "s64": "long long"},
    "max": {"u32": "unsigned int", "s32": "int", "u64": "unsigned long long", "s64": "long long"},
    "and": {"b32": "unsigned int", "b64": "unsigned long long"},
    "or": {"b32": "unsigned int", "b64": "unsigned long long"},
    "xor": {"b32": "unsigned int", "b64": "unsigned long long"},
    "inc": {"u32": "unsigned int"},
    "dec": {"u32": "unsigned int"},
}
# A scope qualifier -> the suffix of CUDA's atomic of that scope, and that scope's fence.
SCOPE_SUFFIX = {"cta": "_block", "gpu": "", "sys": "_system", "cluster": "", None: ""}
SCOPE_FENCE = {"cta": "__threadfence_block();", "gpu": "__threadfence();", "sys": "__threadfence_system();",
               "cluster": "__threadfence();", None: "__threadfence();"}
MEMBAR = {"cta": "cta", "gl": "gpu", "sys": "sys"}
SEMANTICS = {"relaxed", "acquire", "release", "acq_rel"}
LOAD_STORE_TYPES = {"b32": "uint32_t", "u32": "uint32_t", "s32": "int32_t", "b64": "uint64_t", "u64": "uint64_t",
                    "s64": "int64_t", "f32": "float", "f64": "double"}


class MemoryInstructions:
    """The translation of atom, red, fence.{sc,acq_rel}, membar and the strong ld and st (a mixin of
    ptx_translate._Template, whose operand helpers it uses)."""

    def _qualifiers(self, mods, semantics):
        """(semantics, scope, the rest) of an instruction's modifiers: one of `semantics` or none,
        then a scope or none, then .global or none (generic: global memory here)."""
        sem = mods.pop(0) if mods and mods[0] in semantics else None
        scope = mods.pop(0) if mods and mods[0] in SCOPE_SUFFIX else None
        if mods and mods[0] == "global":
            mods.pop(0)
        return sem, scope, mods

    def _atomic(self, mods, ops, returns):
        sem, scope, rest = self._qualifiers(list(mods), SEMANTICS)
        if len(rest) != 2 or rest[0] not in ATOMIC or rest[1] not in ATOMIC_TYPES[rest[0]]:
            self.refuse()
        op, t = rest
        c = ATOMIC_TYPES[op][t]
        values = [f"({c}){self.value(v, t)}" for v in ops[1 + returns:]]
        need = 2 if op == "cas" else 1
        if len(values) != need:
            self.bad(f"{len(ops)} operands")
        call = (f"{ATOMIC[op]}{SCOPE_SUFFIX[scope]}(({c}*)(uintptr_t){self.address(ops[returns])}, "
                f"{', '.join(values)})")
        fence = SCOPE_FENCE[scope] + " " if sem in ("release", "acq_rel") else ""
        return fence + (self.assign(ops[0], call) if returns else f"(void){call};")

    def _atom(self, mods, ops, line):
        """atom{.sem}{.scope}{.global}.op.type d, [a], b{, c}"""
        return self._atomic(mods, ops, True)

    def _red(self, mods, ops, line):
        """red{.sem}{.scope}{.global}.op.type [a], b"""
        return self._atomic(mods, ops, False)

    def _membar(self, mods, ops, line):
        self.arity(ops, 0)
        if len(mods) != 1 or mods[0] not in MEMBAR:
            self.refuse()
        return SCOPE_FENCE[MEMBAR[mods[0]]]

    def memory_fence(self, mods):
        """fence.sc.scope or fence.acq_rel.scope (ptx_translate's _fence asks), or None."""
        if len(mods) == 2 and mods[0] in ("sc", "acq_rel") and mods[1] in ("cta", "gpu", "sys", "cluster"):
            return SCOPE_FENCE[mods[1]]
        return None

    def _ld(self, mods, ops, line):
        """ld.{relaxed,acquire}.scope{.global}.type d, [a], or ld.volatile{.global}.type"""
        sem, scope, rest = self._strong(mods, {"relaxed", "acquire"})
        d, a = self.arity(ops, 2)
        t = LOAD_STORE_TYPES[rest[0]]
        return self.assign(d, f"*(volatile {t}*)(uintptr_t){self.address(a)}")

    def _st(self, mods, ops, line):
        """st.{relaxed,release}.scope{.global}.type [a], b, or st.volatile{.global}.type; a store to
        shared memory is the cluster mixin's (ptx_cluster.py)."""
        if not mods or mods[0] not in ("relaxed", "release", "volatile"):
            return super()._st(mods, ops, line)
        sem, scope, rest = self._strong(mods, {"relaxed", "release"})
        a, b = self.arity(ops, 2)
        t = LOAD_STORE_TYPES[rest[0]]
        fence = SCOPE_FENCE[scope] + " " if sem == "release" else ""
        return f"{fence}*(volatile {t}*)(uintptr_t){self.address(a)} = ({t}){self.value(b, rest[0])};"

    def _strong(self, mods, semantics):
        """The qualifiers of a strong load or store: .volatile, or semantics with a scope (PTX
        requires one), then .global or none, then a type."""
        mods = list(mods)
        if mods[:1] == ["volatile"]:
            sem, scope, rest = None, None, [m for m in mods[1:] if m != "global"]
        else:
            sem, scope, rest = self._qualifiers(mods, semantics)
            if sem is None or scope is None:
                self.refuse()
        if len(rest) != 1 or rest[0] not in LOAD_STORE_TYPES:
            self.refuse()
        return sem, scope, rest
