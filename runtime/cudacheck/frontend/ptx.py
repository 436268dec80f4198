"""Inline PTX in device code, translated into C++ the CPU runtime runs.

Hopper kernels reach what CUDA C++ does not spell (mbarriers, elected lanes, TMA, wgmma)
through `asm volatile(...)` statements. The CPU build translates a defined subset of PTX,
the one such kernels wrap around their TMA copies and tensor-core instructions:

- data movement and integer arithmetic: mov (.b16/.u16/.s16/.b32/.u32/.s32/.b64/.u64/.s64/.f32/
  .f64/.pred), setp.{eq,ne,lt,le,gt,ge,lo,ls,hi,hs}[.{and,or,xor}] on 16-, 32- and 64-bit
  integers, selp, add, sub, mul.lo, shl, shr, and, or, xor, not, cvt between integer types,
  cvta to and from the shared window (and the global one: generic memory here);
- the special registers %laneid, %warpid (the warp of the block: a GPU's may differ, which PTX
  allows), %tid, %ntid, %ctaid and %nctaid, and the cluster's (ptx_cluster.py):
  %cluster_ctarank, %cluster_nctarank, %clusterid, %nclusterid, %cluster_ctaid,
  %cluster_nctaid and %is_explicit_cluster, as PTX defines them;
- control flow: `{ }` scopes, `.reg` declarations (`r<4>` declares r0..r3), labels (each made
  unique to its asm statement and scope), bra and the guards @p / @!p;
- elect.sync (the lowest lane of the mask is elected), setmaxnreg (no registers are modelled:
  nothing), fence.proxy.async with no state space, .shared::cta, .shared::cluster or .global (the
  others ptxas refuses) and the one-way fence.proxy.async::generic.release.sync_restrict::shared::cta
  .cluster (compiler fences that checked mode records: the generic-proxy writes before one that
  orders shared memory may be read by a TMA store or a wgmma, kc_check_async.cpp), its acquire
  form with .sync_restrict::shared::cluster (a compiler fence: checked mode orders the async
  proxy's writes before a thread's reads by the mbarrier it waited on) and
  fence.mbarrier_init.release.cluster (a compiler fence, a named hook of cpu/src/kc_ptx.h);
- global memory's consistency instructions with their scopes (ptx_memory.py): atom and red
  (add, exch, cas, min, max, and, or, xor, inc, dec; .relaxed/.acquire/.release/.acq_rel;
  .cta/.gpu/.sys/.cluster), fence.sc and fence.acq_rel, membar, and the strong ld.relaxed/
  ld.acquire/ld.volatile and st.relaxed/st.release/st.volatile: each the CUDA C++ of its scope
  (atomicAdd_block for .cta, __threadfence_system() for .sys), which checked mode's scopes apply to;
- st.shared[.v2|.v4] (a store through the shared window, which checked mode sees as the
  kernel's own) and the named barriers bar.sync / barrier.sync id[, count] and bar.arrive /
  barrier.arrive id, count (an arrival that does not wait; at barrier 0 it meets bar.sync 0 with
  its count, kc_ptx.cpp: release_barrier_zero);
- the mbarrier object (cpu/src/kc_ptx.h, kc_ptx.cpp): init, arrive (with a count),
  arrive.expect_tx, expect_tx, complete_tx, and try_wait / test_wait on a parity or a state,
  of a CTA's shared memory, and arrive on another CTA's of the cluster (a remote arrival);
- the async proxy (ptx_async.py; cpu/src/kc_async.cpp), performed at once:
  cp.async.bulk.tensor.2d from global to shared memory through a tensor map, completing on an
  mbarrier (cudacheck.tensor_map_2d of a NumPy array: kc_abi.h's CpuTensorMap), multicast to
  the CTAs of a mask (.multicast::cluster), and from shared to global memory as a bulk group
  (elements outside the matrix not written), with cp.async.bulk.commit_group and wait_group
  (.read) (hooks: checked mode counts each thread's bulk groups); wgmma.mma_async m64nNk16
  (bf16, f16) and m64nNk8 (tf32, truncated to its 10 mantissa bits: kc_async.cpp's tf32())
  with f32 accumulators, B read through a matrix descriptor and A through one or from four
  registers of each thread (the RS form), with wgmma.fence, commit_group and wait_group
  (hooks);
- clusters (ptx_cluster.py; cpu/src/kc_cluster.cpp): a kernel's __cluster_dims__ makes its
  launch a clustered one (a launch without makes each CTA a cluster of one, rank 0). The CTAs
  of a cluster run at once, each in a worker of its own, taking turns pass by pass; mapa gives
  the shared::cluster address of another CTA's (a rank outside the cluster is an
  InvalidOperandError), which an mbarrier arrival and a multicast copy reach, and any other
  use of it is an InvalidOperandError; barrier.cluster.arrive (.release, .relaxed) and wait
  (.acquire), .aligned or not, count every thread of the cluster; .cluster scope orders as
  .cta does, the CTAs' turns being sequential.

Operands a function-like macro writes (`F8(0)` for eight "+f" operands) are read from the
macro's expansion; such a statement is replaced whole.

How. ptx_parse.py reads the asm statement from its tokens and its template into statements,
which ptx_translate.py translates one by one. The statement's operands stay in the source
where they are, so that the build's other edits inside them (arith.py's) still apply: the
text around them is replaced (edits(), line by line as the CPU build's edits are) so that
each output operand is bound by reference and each input evaluated once into a local, in
source order, before any instruction runs; outputs are written back at the end (PTX reads
all inputs before it writes an output). The block is `do { ... } while (0)`, a statement
wherever the asm statement was one. Runtime calls carry the instruction's own source line,
for the runtime's reports.

Anything else is refused by name, never left to g++: an instruction outside the subset
(ld.shared, bar.red, atom.shared), a modifier not modelled (add.sat, a 3-D tensor copy), an operand,
constraint or register the translation does not know. ptx_parse.PtxError names it and its
line; cpu_build.unsupported leaves the kernel out of the CPU build, and asking for it raises
UnsupportedFeatureError: "kernel `k` uses the inline PTX instruction `bar.red.popc.u32` (line 42),
which the CPU runtime does not provide; ... It can run on a GPU with backend='gpu'."
"""
from .ptx_parse import PtxError, read_asm
from .ptx_translate import translate

__all__ = ["PtxError", "read_asm", "edits"]

# The C++ type of an operand, by its constraint's letter ("n": an immediate).
CONSTRAINT = {"h": "uint16_t", "r": "uint32_t", "l": "uint64_t", "f": "float", "d": "double", "n": "uint64_t"}


def edits(stmt):
    """The edits (start, end, text) that make asm statement `stmt` (ptx_parse.AsmStmt) C++, or
    the PtxError of what it uses that the CPU build does not translate: an instruction first,
    for the refusal to name it, then operands it could not read."""
    ops = stmt.operands or []
    local = {}   # operand number -> the C++ local that holds it in the block
    for k, op in enumerate(ops):
        if op.letter.isdigit():   # an input tied to an output: the same register
            j = int(op.letter)
            if j >= len(ops) or not ops[j].output:
                raise PtxError(f'inline PTX assembly with the operand constraint "{op.letter}"', stmt.line)
            local[k] = f"kc_p{j}"
        else:
            local[k] = f"kc_p{k}"
    body, named, by_reference = translate(stmt, local)
    body = ("__atomic_signal_fence(__ATOMIC_SEQ_CST); " if "memory" in stmt.clobbers else "") + body
    if stmt.problem:
        raise stmt.problem
    if not ops:
        return [(stmt.span[0], stmt.span[1], f"do {{ {body} }} while (0)")]
    openings = []
    for k, op in enumerate(ops):
        if op.output:
            openings.append(f"auto& kc_ref{k} = (")
        else:
            t = CONSTRAINT[ops[int(op.letter)].letter if op.letter.isdigit() else op.letter]
            openings.append(f"const {t} kc_{'in' if op.letter.isdigit() else 'p'}{k} = ({t})(")
    tied = {int(op.letter): k for k, op in enumerate(ops) if op.letter.isdigit()}
    # An output the template never names is neither read nor written (no instruction touches
    # it: `asm volatile("" : "+f"(d))`, a register fence, is no access of d); one it takes by
    # reference is the source's variable itself (wgmma's accumulators, ::kc::accumulator: a float).
    outputs = [(k, CONSTRAINT[op.letter]) for k, op in enumerate(ops) if op.output
               and (k in named or k in tied and tied[k] in named)]
    copied = [(k, t) for k, t in outputs if k not in by_reference]
    declared = " ".join([f"float& kc_p{k} = ::kc::accumulator(kc_ref{k});" for k, _ in outputs if k in by_reference]
                        + [f"{t} kc_p{k} = " + (f"kc_in{tied[k]};" if k in tied else f"({t})kc_ref{k};"
                                                 if ops[k].read else f"{t}();") for k, t in copied])
    written = " ".join(f"kc_ref{k} = (__typeof__(kc_ref{k}))kc_p{k};" for k, _ in copied)
    closing = f"); {declared} {body} {written} }} while (0)"
    if any(op.span is None for op in ops):
        # An operand a macro wrote is nowhere in the source: the statement is replaced whole,
        # every operand written out from its tokens.
        return [(stmt.span[0], stmt.span[1],
                 "do { " + "); ".join(o + op.text for o, op in zip(openings, ops)) + closing)]
    out, at, opener = [], stmt.span[0], "do { "
    for opening, op in zip(openings, ops):
        out.append((at, op.span[0], opener + opening))
        at, opener = op.span[1], "); "
    out.append((at, stmt.span[1], closing))
    return out
