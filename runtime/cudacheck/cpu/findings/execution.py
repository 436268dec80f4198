"""The decoders of checked mode's findings about how the threads ran (kc_findings.def): a
barrier the threads of a block reach apart (divergence), a warp operation whose mask names
lanes that are not in it (warp), a wmma operation not all 32 lanes reach alike (collective),
an operand CUDA forbids (operand), more shared memory than a block may have (shared_limit),
a block that waits for another that cannot run beside it (stall), and a wait at an mbarrier,
a named barrier or the cluster barrier that nothing will complete (mbarrier_stall,
barrier_stall, cluster_stall), a grid.sync() outside a cooperative launch or one that a block
never reaches (grid_sync), a block of a cluster that may exit before another's access to its
shared memory (cluster_exit), and, in plain mode, such an access that landed after the exit
(late_access, a warning). Each takes the
finding's fields and the findings.Context it is read against, and returns the exception, its
message worded for the student."""
from ...errors import (
    ArrivalCountError,
    BarrierDivergenceError,
    ClusterExitRaceError,
    ClusterExitWarning,
    ForwardProgressError,
    InvalidOperandError,
    LaunchConfigError,
    LeadingDimensionError,
    MisalignedAddressError,
    TransactionStallError,
    WaitParityError,
    WarpCollectiveError,
    WarpDivergenceError,
)
from ...launch import DESCRIBED_GPU, resident_blocks


def lane_ranges(lanes):
    """[0, 1, 2, 3, 8] -> "0-3, 8"."""
    out, lanes = [], sorted(lanes)
    i = 0
    while i < len(lanes):
        j = i
        while j + 1 < len(lanes) and lanes[j + 1] == lanes[j] + 1:
            j += 1
        out.append(f"{lanes[i]}-{lanes[j]}" if j > i else str(lanes[i]))
        i = j + 1
    return ", ".join(out)


# The async proxy's misuses (cpu/src/kc_async.cpp): what each is, from its value and need.
ASYNC_PROXY = {
    "async_shared": " with shared-memory offset {value} for {need} bytes, outside the block's shared memory.",
    "tensor_map": " with a tensor map the CPU runtime did not make (its first word is {value:#x}): pass the map "
                  "cudacheck.tensor_map_2d made of a NumPy array, by value, and its address (&map).",
    "tma_dst": " with a destination {value} bytes past a multiple of {need}: a TMA box lands on a 128-byte "
               "aligned shared address (1,024 for the 128-byte swizzle's pattern).",
    "wgmma_base_offset": " with a matrix descriptor whose base offset is {value}: the CPU runtime reads operands "
                         "whose swizzle pattern starts on its own alignment (base offset 0) only.",
    "wgmma_block": " in a block of {value} threads: a wgmma is the operation of a whole warpgroup (128 threads), "
                   "and this thread's warpgroup ends at thread {need}.",
    "wgmma_operands": " with descriptor {value:#x} where another thread of its warpgroup passed {need:#x}: the "
                      "warpgroup's 128 threads pass the same descriptors, shape and immediates.",
    "mapa_rank": " for CTA rank {value}: its cluster has {need} block(s), ranks 0 to {last} (a launch without "
                 "__cluster_dims__ makes each block a cluster of one, rank 0).",
    "multicast_mask": " with the multicast mask {value:#x}, whose bits name ranks outside its cluster of {need} "
                      "block(s): bit r is the block of rank r.",
    "cluster_remote": " on the shared::cluster address of the block of rank {value} (this block is rank {need}): the "
                      "CPU runtime reaches another block's shared memory by mbarrier.arrive and multicast copies "
                      "only.",
    "barrier_id": " with barrier {value}: a block has named barriers 0 to {last}.",
    "barrier_count": " with a count of {value} threads: a named barrier's count is a multiple of 32 (whole warps), "
                     "at most the block's {need} threads.",
}


def operand(f, ctx):
    thread, block, line = ctx.thread(f["thread"]), ctx.block(f["block"]), f["line"]
    what, problem, addr, value, need = f["what"], f["problem"], f["address"], f["value"], f["need"]
    who = (f"kernel `{ctx.kernel.name}`: thread {thread} (lane {f['thread'] % 32} of warp {f['thread'] // 32}) of "
           f"block {block} calls {what} at line {line}")
    if problem == "misaligned_wmma":
        cls = MisalignedAddressError
        msg = (f"{who} with a pointer ({addr:#x}) that is not 32-byte aligned (it is {value} bytes past a multiple "
               f"of 32). A wmma load or store needs a 256-bit aligned pointer (CUDA C++ Programming Guide, Warp "
               "Matrix Functions); a GPU stops the kernel with a misaligned-address error. Start each tile at a "
               "row and column whose byte offset is a multiple of 32 (with __half, a column that is a multiple of "
               "16 and a row pitch that is a multiple of 16 elements), in an array declared __align__(32).")
    elif problem == "ldm":
        cls = LeadingDimensionError
        msg = (f"{who} with ldm = {value}, which is not a multiple of {need} elements (16 bytes). The leading "
               "dimension of a wmma load or store must be a multiple of 16 bytes (8 __half or __nv_bfloat16 "
               "elements, 4 floats); otherwise the result is undefined on a GPU. ldm is the distance, in "
               "elements, from one row of the matrix in memory to the next (one column, for column-major): pad "
               "the rows to a multiple of 16 bytes.")
    elif problem in ("misaligned_dst", "misaligned_src"):
        cls = MisalignedAddressError
        side = "destination" if problem == "misaligned_dst" else "source"
        msg = (f"{who}: a copy of {need} bytes whose {side} ({addr:#x}) is not {need}-byte aligned. An "
               f"asynchronous copy's source and destination must both be aligned to its size; a GPU stops the "
               "kernel with a misaligned-address error. Copy fewer bytes at a time where the address is not "
               "aligned (4 bytes, one float, is always aligned for float arrays).")
    elif problem == "copy_size":
        cls = InvalidOperandError
        msg = (f"{who} with a size of {value} bytes: asynchronous copies move 4, 8 or 16 bytes (cp.async), and "
               "<cuda_pipeline.h> traps on any other size. Split the copy into pieces of those sizes.")
    elif problem == "zfill":
        cls = InvalidOperandError
        msg = (f"{who} asking to zero-fill {value} bytes of a {need}-byte copy: zfill counts the bytes at the end "
               "of the copy that are written as zeros instead of read, at most the copy's size; a GPU traps.")
    elif problem == "barrier_mix":
        cls = InvalidOperandError

        def given(count):
            return f"a count of {count} threads" if count else "no thread count (__syncthreads() gives none)"
        msg = (f"{who} on barrier {addr} with {given(value)}, where threads of its block have arrived in this use of "
               f"the barrier with {given(need)}. Every arrival at one use of a barrier gives the same count, or none: "
               "a GPU stops the kernel with an illegal instruction (CUDA_ERROR_ILLEGAL_INSTRUCTION) when a warp "
               "arrives with another count than the warps waiting there, or with none beside a count. Give both "
               "sides the same count (bar.arrive 0, n with bar.sync 0, n, not __syncthreads()), or hand off through "
               "a barrier of its own, 1 to 15.")
    elif problem == "dst_not_shared":
        cls = InvalidOperandError
        msg = (f"{who} with a destination ({addr:#x}) outside shared memory: asynchronous copies go from global "
               "to shared memory (cp.async.shared.global); anything else is undefined on a GPU.")
    elif problem.startswith("mbarrier"):
        cls = InvalidOperandError
        was = need - 2**64 if need >= 2**63 else need   # a transaction count, signed
        msg = who + {
            "mbarrier_address": f" on the mbarrier at {addr:#x}, which is not an 8-byte aligned address in shared "
                                "memory: an mbarrier object is 8 bytes of shared memory, aligned to 8 (declare it "
                                "`__shared__ unsigned long long bar;`); a GPU's result is undefined.",
            "mbarrier_count": f" with a count of {value}: an mbarrier expects 1 to {need} arrivals per phase.",
            "mbarrier_arrivals": f" arriving as {value} thread{'s' if value > 1 else ''} when the barrier's current "
                                 f"phase expects {need} more: more arrivals than mbarrier.init's count in one phase "
                                 "are undefined on a GPU. Arrive once per phase from each thread the count includes.",
            "mbarrier_tx": f" changing the transaction count by {value} bytes (it was {was}): an mbarrier's "
                           "transaction count must stay within +-(2^20 - 1) bytes.",
        }[problem]
    elif problem == "cluster_exited":
        cls = InvalidOperandError
        # checked mode's multicast copy (a late arrival is a ClusterExitRaceError; plain mode warns)
        msg = (f"{who} into the block of rank {need} of its cluster, block {ctx.block(value)}, which had already "
               "exited: its shared memory, and the barrier there, no longer exist (undefined in CUDA; a GPU "
               "fails the launch with \"unspecified launch failure\" when the copy comes that late). Each block "
               "of a multicast's mask must wait on its mbarrier for the copy's bytes before it exits.")
    elif problem in ASYNC_PROXY:
        cls = InvalidOperandError
        msg = who + ASYNC_PROXY[problem].format(addr=addr, value=value, need=need, last=need - 1)
    else:   # src_not_global
        cls = InvalidOperandError
        msg = (f"{who} with a source ({addr:#x}) in shared memory: asynchronous copies go from global to shared "
               "memory (cp.async.shared.global); anything else is undefined on a GPU.")
    return cls(msg + ctx.quote(line), kernel=ctx.kernel.name, thread=thread, block=block, line=line, call=what,
               problem=problem, address=addr, value=value)


def collective(f, ctx):
    block, w, line, what, n = ctx.block(f["block"]), f["warp"], f["line"], f["what"], f["lanes"]
    arrived = [lane for lane in range(32) if (f["arrived"] >> lane) & 1]
    head = f"kernel `{ctx.kernel.name}`: warp {w} of block {block}: {what} on line {line}"
    rule = ("\nEvery wmma load, store and mma is one operation of the whole warp: all 32 lanes must call it "
            "together, with the same pointer, ldm and layout (CUDA C++ Programming Guide, Warp Matrix Functions); "
            "otherwise the result is undefined on a GPU. Keep wmma calls out of conditions that differ between the "
            "lanes of a warp, and give every warp all 32 threads (a block size that is a multiple of 32).")
    if f["problem"] == "arguments":
        key = ("pointer", "ldm", "layout")[f["key"]]
        vals = f["values"]
        lane = f["lane"]
        shown = (lambda v: f"{v:#x}") if key == "pointer" else (lambda v: ("column-major" if v else "row-major")
                                                                 if key == "layout" else str(v))
        msg = (f"{head} is reached by all 32 lanes, but not with one {key}: lane 0 passes {shown(vals[0])} and "
               f"lane {lane} passes {shown(vals[lane])}.")
        others = []
    else:
        where = {}
        for lane in range(n):
            if lane in arrived:
                continue
            state, at = f["states"][lane], f["lines"][lane]
            if state == "E":
                text = f"returned at line {at}" if at else "reached the end of the kernel"
            elif state == "S":
                text = f"wait at __syncthreads() on line {at}"
            elif state == "W":
                text = f"wait at another warp operation on line {at}"
            else:
                text = "are elsewhere"
            where.setdefault(text, []).append(lane)
        parts = [f"lane{'s' if len(ls) > 1 else ''} {lane_ranges(ls)} {text}" for text, ls in where.items()]
        if f["problem"] == "short_warp":
            msg = (f"{head} is called by a warp of {n} threads (the block has {ctx.config.threads_per_block}, not a "
                   "multiple of 32): a wmma operation needs all 32 lanes of its warp.")
        else:
            msg = (f"{head} is reached by lanes {lane_ranges(arrived)} only (threads "
                   f"{ctx.thread(32 * w + arrived[0])} to {ctx.thread(32 * w + arrived[-1])}); " + "; ".join(parts)
                   + ".")
        others = sorted({f["lines"][lane] for lane in range(n) if lane not in arrived and f["lines"][lane]})
    for q in sorted({line, *others}):
        msg += ctx.quote(q)
    return WarpCollectiveError(msg + rule, kernel=ctx.kernel.name, block=block, warp=w, line=line, call=what,
                               arrived=arrived, problem=f["problem"], lane=f.get("lane", 0), mask=f["arrived"],
                               groups={})


def shared_limit(f, ctx):
    return LaunchConfigError(
        f"kernel `{ctx.kernel.name}` declares {f['static']} bytes of static shared memory and the launch asks for "
        f"{f['dynamic']} of dynamic shared memory: {f['static'] + f['dynamic']} in all, over the {f['limit']} bytes "
        "a block may have" + (" (a GPU refuses more than 48 KiB of static __shared__ at compile time)"
                              if f["static"] > 48 * 1024 else
                              " without opting in: set the kernel's max_dynamic_shared_size_bytes, as in CuPy"))


def launch_bounds(f, ctx):
    bound, line = f["bound"], f["line"]
    return LaunchConfigError(
        f"kernel `{ctx.kernel.name}` has __launch_bounds__ with maxThreadsPerBlock {bound} (line {line}): at most "
        f"{bound} threads per block, and the launch asks for block{ctx.config.block}, {f['threads']} threads. "
        "A GPU does not run it: nvcc compiled the kernel for no more than its bound, and the launch fails with "
        "cudaErrorInvalidValue (\"invalid argument\", as CUDA 13 on an H100 answers it), which cudaGetLastError() "
        f"returns. Launch at most {bound} threads per block, or raise the bound." + ctx.quote(line),
        cuda_error="cudaErrorInvalidValue")


def warp(f, ctx):
    block, lane, line = ctx.block(f["block"]), f["lane"], f["line"]
    thread = ctx.thread(32 * f["warp"] + lane) if 32 * f["warp"] + lane < ctx.config.threads_per_block else None
    what = {"exited": f"names lane {lane} (thread {thread}), which has already returned",
            "different": f"names lane {lane} (thread {thread}), which is waiting at a different warp operation",
            "source": f"reads lane {lane}, which is not in the mask (its value is undefined on a GPU)"}[f["problem"]]
    msg = (f"kernel `{ctx.kernel.name}`: warp {f['warp']} of block {block}: the warp operation on line {line} with "
           f"mask {f['mask']:#010x} {what}.{ctx.quote(line)}\n"
           "Every lane named in a *_sync mask must execute that same operation; use __activemask() or a mask "
           "computed with __ballot_sync(...) before the branch, and keep the operation outside conditions that "
           "differ between lanes.")
    return WarpDivergenceError(msg, kernel=ctx.kernel.name, block=block, warp=f["warp"], lane=lane, line=line,
                               mask=f["mask"], groups={})


def _polled(address, ctx):
    """`name[i]` for an address inside one of the launch's arrays, else the address."""
    for name, start, nbytes in ctx.arrays:
        if start <= address < start + nbytes:
            return f"{name}[{(address - start) // (ctx.element_size(name) or 1)}]"
    return f"the location at {address:#x}"


def stall(f, ctx):
    block, thread, line = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"]
    at = f"at line {line}" if line else "(run with check=True for its line)"
    threads, total = ctx.config.threads_per_block, f["blocks"]
    resident = resident_blocks(threads, ctx.config.shared_mem)
    msg = (f"kernel `{ctx.kernel.name}`: block {block} cannot finish: its thread {thread} polls "
           f"{_polled(f['address'], ctx)} {at}, which holds {f['value']}, and nothing that can still run will "
           f"change it ({f['blocks_done']} of {total} blocks had finished; the CPU runtime runs {f['workers']} "
           f"block{'s' if f['workers'] > 1 else ''} at a time).{ctx.quote(line)}\n")
    if ctx.config.cooperative:   # every block runs at once: the one that would change it waits too
        msg += ("This is a cooperative launch, whose blocks all run at once (as on a GPU), so the block that "
                "would change it is itself waiting: at grid.sync(), which block "
                f"{block} never reaches while it polls, or for another location. A GPU hangs here too. Let the "
                "block that sets the location do so before any grid.sync() the poller has not passed, or replace "
                "the flag by a grid.sync().")
        return ForwardProgressError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line,
                                    address=f["address"], resident=resident)
    msg += ("The kernel relies on its blocks making progress side by side: a block waits for something only another "
            "block does. CUDA promises that only for a cooperative launch (cudaLaunchCooperativeKernel), whose "
            "blocks must all fit on the GPU at once; otherwise blocks run in any order, and a block may not start "
            f"until others have finished. An {DESCRIBED_GPU} holds at most {resident} blocks of {threads} threads at "
            "once (fewer with many registers): ")
    if total > resident:
        msg += (f"with this grid of {total} blocks it deadlocks as soon as a block waits for one that has not "
                "started.")
    else:
        msg += (f"this grid of {total} blocks fits, so a GPU usually runs it, but nothing promises it (on a smaller "
                "GPU, or beside another kernel, it hangs).")
    msg += ("\nLet one block do the dependent step, split the kernel into two launches (a launch ends only when "
            "all its blocks have), or let the last block to finish do the final step (it finds out with atomicInc "
            "after a __threadfence(), as NVIDIA's threadFenceReduction sample does): none of these waits for "
            "another block.")
    return ForwardProgressError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line,
                                address=f["address"], resident=resident)


def mbarrier_stall(f, ctx):
    """A thread waits at an mbarrier (inline PTX: try_wait or test_wait) whose phase nothing that
    can still run will complete."""
    expected, via = f["expected"], _via(f, ctx)
    needs = [f"{f['pending']} more of its {expected} arrival{'s' if expected > 1 else ''}"] if f["pending"] else []
    balance = (f"this phase expected {f['tx_expected']} bytes with expect_tx and its copies delivered "
               f"{f['tx_delivered']}")
    if f["tx"] > 0:
        needs.append(f"{f['tx']} more transaction bytes ({balance})")
    elif f["tx"] < 0:
        needs.append(f"expect_tx of the {-f['tx']} transaction bytes completed beyond those expected ({balance})")
    cause, error, extra = _mbarrier_cause(f, ctx)
    return _stall(f, ctx, f"line {f['line']}" + (f"{via}," if via else "") + " for the "
                  f"mbarrier at shared address {f['address']:#x} to complete its phase of parity {f['parity']}, "
                  f"which still needs {' and '.join(needs)}; nothing that can still run will complete it: ",
                  # where the cause is named, it says what to fix: the general checklist is left out
                  "A GPU hangs here." if cause else
                  "A phase completes once as many arrivals as mbarrier.init's count have come (each mbarrier.arrive "
                  "counts one, or its count) and every transaction byte expected with expect_tx has completed; the "
                  "barrier then flips its phase parity (PTX ISA, mbarrier). Check that each thread the count "
                  "includes arrives once per phase, that each wait asks for the parity of the phase it needs, and "
                  "that the bytes expected match those the copies deliver. A GPU hangs here.", error=error, cause=cause,
                  address=f["address"], **extra)


def barrier(f):
    """"the mbarrier full[1] (shared address 0xe8)": the kernel's name for it where the finding has one."""
    name = f.get("barrier", "")
    return (f"the mbarrier {name} (shared address {f['address']:#x})" if name
            else f"the mbarrier at shared address {f['address']:#x}")


def _mbarrier_cause(f, ctx):
    """(the cause first, the exception, its details) of an mbarrier stall, where the barrier's state
    names the mistake: a waiter one phase ahead (WaitParityError), all arrivals in but bytes missing
    (TransactionStallError), some arrivals in and more expected (ArrivalCountError)."""
    arrived, bar = f["expected"] - f["pending"], barrier(f)
    if f["fresh"]:
        return ("every waiting thread waits on an mbarrier that has neither completed a phase nor had an "
                f"arrival (thread {ctx.thread(f['thread'])} on {bar}, parity {f['parity']}): each waits for "
                "what only another waiter would start. A producer's first wait for a free slot must ask for parity "
                "1, the phase before a barrier's first, which counts as complete: wait for parity "
                "((use / STAGES) & 1) ^ 1.", WaitParityError, {"skipped": 0})
    if f["skipped"] > 1 and not arrived:
        return (f"{bar} completed {f['skipped']} phases since thread {ctx.thread(f['thread'])} last observed it, "
                f"which now waits for parity {f['parity']}: each round of its arrivals completes more than one phase, "
                f"so mbarrier.init's count ({f['expected']}) is smaller than the arrivals a round brings (one per "
                "arriving thread, or per warp where one lane arrives for it). Initialize it with the number of "
                "arrivals each use gets.", ArrivalCountError, {"expected": f["expected"], "skipped": f["skipped"]})
    if f["skipped"] and not arrived:
        return (f"thread {ctx.thread(f['thread'])} never waited for the last completed phase of {bar} "
                f"({f['skipped']} completed that it did not observe) and waits for the phase after it, parity "
                f"{f['parity']}: its parity (or its count of the barrier's uses) is one phase ahead. On a GPU such a "
                "wait, reached before that phase completes, returns at once and the tile is read before the TMA "
                "wrote it. Wait for parity (use / STAGES) & 1, counting uses from 0.", WaitParityError,
                {"skipped": f["skipped"]})
    if not f["pending"] and f["tx"] > 0:
        return (f"every arrival of the phase of {bar} came, but expect_tx announced {f['tx_expected']} bytes "
                f"and the copies delivered {f['tx_delivered']}: announce exactly the bytes of the phase's boxes.",
                TransactionStallError, {"expected": f["tx_expected"], "delivered": f["tx_delivered"]})
    if arrived and f["tx"] <= 0:
        return (f"the phase of {bar} got {arrived} arrival{'s' if arrived > 1 else ''} and mbarrier.init's count "
                f"asks for {f['expected']}: the count is larger than the arrivals a phase gets (one per arriving "
                f"thread, or per warp where one lane arrives for it). Initialize it with {arrived}, or have every "
                "thread the count includes arrive once per phase.", ArrivalCountError,
                {"expected": f["expected"], "arrived": arrived})
    return "", ForwardProgressError, {}


def barrier_stall(f, ctx):
    """A thread waits at a named barrier (inline PTX: bar.sync or barrier.sync with an id) that
    nothing that can still run will complete."""
    return _stall(f, ctx, f"named barrier {f['barrier']} on line {f['line']}{_via(f, ctx)}, where {f['arrived']} "
                  f"of the {f['count']} threads its count names have arrived; nothing that can still run will "
                  "arrive there: ",
                  "bar.sync id, count completes once `count` threads, in whole warps, have arrived at barrier id "
                  "with bar.sync, bar.arrive or bar.red (without a count: every thread of the block), and barrier 0 "
                  "is __syncthreads()'s (PTX ISA, bar). Check that the threads meant to meet name the same barrier, "
                  "that the count is the number of threads that arrive there, and that each arrives once per use. A "
                  "GPU hangs here.", barrier=f["barrier"])


def cluster_stall(f, ctx):
    """A thread waits at the cluster barrier (barrier.cluster.wait) whose phase nothing that can
    still run will complete."""
    waiting = f["threads"] - f["arrived"] - f["exited"]
    return _stall(f, ctx, f"the cluster barrier on line {f['line']}{_via(f, ctx)}, where {f['arrived']} of the "
                  f"cluster's {f['threads']} threads have arrived and {f['exited']} have exited; the barrier waits "
                  f"for {waiting} more that will not arrive. In this block: ",
                  "barrier.cluster.wait returns once every thread of the cluster that has not exited has arrived "
                  "with barrier.cluster.arrive (PTX ISA, barrier.cluster). Check that every thread of every block "
                  "of the cluster arrives once per phase, and that none waits first for something that comes only "
                  "after the barrier. A GPU hangs here.")


def _via(f, ctx):
    """", called from line N" where a stall's wait lies in a helper the kernel calls on line N."""
    own = ctx.chains.get(f["line"], ())
    return f", called from line {own[-2][0]}" if own else ""


def _stall(f, ctx, where, advice, error=ForwardProgressError, cause="", **details):
    """A stall's ForwardProgressError: its waiting thread "waits at" `where`, then where every
    thread of the block is (_waits), then `advice`."""
    block, thread, line = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"]
    msg = (f"kernel `{ctx.kernel.name}`: block {block}{': ' + cause + ' So the block' if cause else ''} cannot "
           f"finish: its thread {thread} waits at {where}"
           + _waits(f, ctx, line) + "\n" + advice)
    return error(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line, **details)


def _waits(f, ctx, line):
    """Where each thread of a block that cannot finish is, from a stall's states, lines, named
    barrier ids and calls: "threads with threadIdx.x < 64 wait at named barrier 1 on line 3; the
    others ...", then the lines named quoted, then the calls of the waits."""
    # Threads waiting at one line (a helper's wait) from different calls of it are told apart by
    # the call: the line that calls the helper (findings.Context.calls_of on each one's pc).
    pcs, ids = f.get("pcs", []), f.get("ids", [])
    groups = {}
    for i, (state, at) in enumerate(zip(f["states"], f["lines"])):
        pc = pcs[i] if i < len(pcs) else 0
        calls = ctx.calls_of({"pc": pc}, at) if state in "MNC" and pc else ()
        barrier = ids[i] if state == "N" and i < len(ids) else -1
        groups.setdefault((state, at, calls[-2][0] if calls else 0, barrier), set()).add(i)
    everyone = set(range(len(f["states"])))

    def where(state, at, call, barrier):
        via = f", called from line {call}" if call else ""
        return {"M": f"wait at an mbarrier on line {at}{via}",
                "N": f"wait at named barrier {barrier} on line {at}{via}",
                "C": f"wait at the cluster barrier on line {at}{via}",
                "S": f"wait at __syncthreads() on line {at}", "W": f"wait at a warp operation on line {at}",
                "R": "poll memory", "E": f"returned at line {at}" if at else "reached the end of the kernel"}[state]
    ordered = sorted(groups.items(), key=lambda kv: len(kv[1]))
    parts = [f"{_describe(g, everyone, ctx)} {where(*key)}" for key, g in ordered[:-1]]
    parts.append(("the others " if len(ordered) > 1 else "all threads ") + where(*ordered[-1][0]))
    msg = "; ".join(parts) + "."
    # the lines named, then the calls of the waits, as the message has room for them
    for q in sorted({line, *(at for (state, at, _, _) in groups if state != "E" and at)}):
        msg += ctx.quote(q)
    own = ctx.chains.get(line, ())
    for q in sorted({call for (_, _, call, _) in groups if call}, key=lambda n: (n != (own[-2][0] if own else 0), n)):
        msg += ctx.quote_call(q)
    return msg


def _describe(group, everyone, ctx):
    """A short description of a set of threads: "threads with threadIdx.y >= 4", etc."""
    pts = {t: ctx.thread(t) for t in everyone}
    for axis, label in enumerate("xyz"):
        values = sorted({pts[t][axis] for t in everyone})
        for v in values[1:]:
            if group == {t for t in everyone if pts[t][axis] >= v}:
                return f"threads with threadIdx.{label} >= {v}"
            if group == {t for t in everyone if pts[t][axis] < v}:
                return f"threads with threadIdx.{label} < {v}"
        for v in values:
            if group == {t for t in everyone if pts[t][axis] == v} and len(values) > 1:
                return f"threads with threadIdx.{label} == {v}"
    listed = ", ".join(str(pts[t]) for t in sorted(group)[:4])
    more = f" and {len(group) - 4} more" if len(group) > 4 else ""
    return f"thread{'s' if len(group) > 1 else ''} {listed}{more}"


def grid_sync(f, ctx):
    """grid.sync() (cooperative groups) where a GPU cannot synchronise the grid: in a launch that is not
    cooperative, or while a block has returned without reaching it."""
    block, line, name = ctx.block(f["block"]), f["line"], ctx.kernel.name
    if f["problem"] == "not_cooperative":
        msg = (f"kernel `{name}`: thread {ctx.thread(f['thread'])} of block {block} calls grid.sync() on line {line}, "
               f"but the kernel was not launched cooperatively.{ctx.quote(line)}\n"
               "A grid-wide barrier needs every block of the grid running at once, which CUDA promises only for a "
               "cooperative launch; otherwise it is undefined (a GPU may hang there, or fault). Launch it "
               "cooperatively: from Python, RawKernel(..., enable_cooperative_groups=True) (or RawModule's), as in "
               "CuPy; in a whole program, cudaLaunchCooperativeKernel((void*)kernel, grid, block, args, shared, "
               "stream) instead of kernel<<<...>>>. this_grid().is_valid() says whether a launch is cooperative.")
        return ForwardProgressError(msg, kernel=name, block=block, thread=ctx.thread(f["thread"]), line=line)
    other = ctx.block(f["other_block"])
    msg = (f"kernel `{name}`: block {block} waits at grid.sync() on line {line} with {f['arrived']} of the grid's "
           f"{f['blocks']} blocks, but block {other} has returned without reaching it, so the barrier never "
           f"completes (a GPU hangs there).{ctx.quote(line)}\n"
           "Every thread of every block must call grid.sync() as often as the others: keep it out of conditions "
           "that differ between blocks, and instead of returning early let blocks without work skip the work only.")
    return ForwardProgressError(msg, kernel=name, block=block, line=line, returned=other)


def divergence(f, ctx):
    block = ctx.block(f["block"])
    groups = {}
    for i, (state, line) in enumerate(zip(f["states"], f["lines"])):
        groups.setdefault((state, line), set()).add(i)
    everyone = set(range(len(f["states"])))

    def where(state, line):
        if state == "E":
            return f"returned at line {line}" if line else f"reached the end of the kernel (line {f['end_line']})"
        at = {"S": "__syncthreads()", "G": "grid.sync()"}.get(
            state, "a warp operation (__syncwarp, a shuffle or a vote)")
        return f"wait at {at} on line {line}"

    ordered = sorted(groups.items(), key=lambda kv: len(kv[1]))
    parts = [f"{_describe(g, everyone, ctx)} {where(*key)}" for key, g in ordered[:-1]]
    (key, _), = ordered[-1:]
    parts.append(f"the others {where(*key)}" if len(ordered) > 1 else f"all {where(*key)}")
    msg = (f"kernel `{ctx.kernel.name}`: divergent barrier in block {block}: " + "; ".join(parts) + ".")
    for line in sorted({k[1] for k in groups if k[1]}):
        msg += ctx.quote(line)
    barrier = "grid.sync()" if "G" in f["states"] else "__syncthreads()"
    msg += (f"\nEvery thread of a block must reach the same {barrier}, and none may leave while others wait "
            "there. Keep barriers out of conditions that differ between threads; instead of returning early, "
            "let out-of-range threads take part in the loads (storing 0.0f) and skip only the final write.")
    return BarrierDivergenceError(msg, kernel=ctx.kernel.name, block=block,
                                  groups={where(*k): sorted(ctx.thread(t) for t in g) for k, g in groups.items()})


def late_access(f, ctx):
    """Plain mode: a remote arrival or multicast copy that landed in a block after it exited."""
    block, thread, line = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"]
    target = ctx.block(f["target_block"])
    msg = (f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} reached block {target} (rank {f['target']} "
           f"of its cluster) with {f['what']} at line {line} after block {target} had exited.{ctx.quote(line)}\n"
           "CUDA leaves an access to an exited block's shared memory undefined: on a GPU the access lands or the "
           "launch fails with \"unspecified launch failure\", depending on how the blocks happen to be timed. "
           "Plain mode let it land, so the result is what a GPU computes when the access comes in time. Nothing "
           "in the kernel makes it come in time: end the kernel, in every thread of every block, with "
           "cluster.sync() (or barrier.cluster.arrive; barrier.cluster.wait;) after the last remote access. "
           "Checked mode names such an access (ClusterExitRaceError) whichever block finishes first.")
    return ClusterExitWarning(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line,
                              target_block=target, what=f["what"])


def cluster_exit(f, ctx):
    """A remote arrival that no cluster barrier orders before its target block's exit."""
    block, thread, line = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"]
    target = ctx.block(f["target_block"])
    released, waited = f["released"], f["waited"]
    if released < 0:
        after = "the thread exits without arriving at the cluster barrier after it"
    else:
        after = (f"the thread arrives at the cluster barrier after it in the barrier's phase {released}, but the "
                 f"threads of block {target} " + (f"last wait for phase {waited}" if waited else "never wait there"))
    msg = (f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} arrives on an mbarrier of block {target} "
           f"(rank {f['target']} of its cluster) with mbarrier.arrive.shared::cluster at line {line}, and nothing "
           f"orders that arrival before block {target} exits: {after}.{ctx.quote(line)}\n"
           "A block's shared memory, its mbarriers included, lasts only until the block exits, and CUDA leaves an "
           "access to it after that undefined (a GPU in practice keeps a cluster's shared memory until the whole "
           "cluster has exited, so the kernel may seem to work). Only the cluster barrier orders another block's "
           "access before the exit: end the kernel, in every thread of every block, with cluster.sync() "
           "(cooperative groups) or barrier.cluster.arrive; barrier.cluster.wait; after the last remote access.")
    return ClusterExitRaceError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line,
                                target_block=target, released=released, waited=waited)
