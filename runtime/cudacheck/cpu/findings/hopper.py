"""The decoders of checked mode's findings about the async proxy of Hopper kernels' inline PTX
(kc_findings.def; cpu/src/kc_check_async.cpp, kc_async.cpp, kc_ptx.cpp): a TMA tile used
before the thread observed its mbarrier phase (tile_unwaited), a wgmma operand overwritten
while its group is in flight (wgmma_overwrite), a wgmma accumulator read or written before the
thread's wgmma.wait_group retired its group (wgmma_accumulator), a TMA store's source overwritten before the
issuing thread waited for its bulk group (tma_store_overwrite), a thread's store that a TMA store or a
wgmma reads through the async proxy with no fence.proxy.async of the writer between (proxy_fence), a
phase that got more bytes than expect_tx announced (tx_overflow), and a wgmma not all four warps of
the warpgroup reach (warpgroup). No
NVIDIA tool reports these: compute-sanitizer's racecheck does not model the async proxy. Each
takes the finding's fields and the findings.Context it is read against, and returns the
exception, its message worded for the student."""
from ...errors import (
    ProxyFenceError,
    StageOverwriteError,
    TileNotReadyError,
    TmaStoreSourceRaceError,
    TransactionCountError,
    WarpgroupCollectiveError,
    WgmmaAccumulatorRaceError,
    WgmmaOperandRaceError,
)
from .execution import barrier, lane_ranges


def _element(f):
    index = "".join(f"[{i}]" for i in f["index"])
    return f"{f['array']}{index}"


def _reader(f, ctx):
    thread = ctx.thread(f["thread"])
    if f["op"] == "wgmma":
        w = f["thread"] // 32
        return (f"warp {w} of warpgroup {f['warpgroup']} (threads {thread} on) reads {_element(f)} as an operand of "
                f"the wgmma.mma_async on line {f['line']}")
    verb = "reads" if f["op"] == "read" else "writes"
    return f"thread {thread} (warpgroup {f['thread'] // 128}) {verb} {_element(f)} on line {f['line']}"


def _quoted(msg, ctx, lines, advice):
    """The message, each line it names quoted, then what to do."""
    for q in sorted(set(lines)):
        msg += ctx.quote(q)
    return msg + "\n" + advice


def tile_unwaited(f, ctx):
    block, phase = ctx.block(f["block"]), f["phase"]
    # A wgmma reads for its whole warp: a wait by any of the warp's threads would have done.
    n = f["observed"]
    if f["waited"] < 0:   # no wait at all: the count of phases seen says nothing more
        who = ("no thread of that warp has" if f["op"] == "wgmma" else "the thread has not")
        who += " waited on this barrier at all"
    elif f["op"] == "wgmma":
        who = (f"no thread of that warp has waited for that phase (none has seen more than {n} of the barrier's "
               f"phases complete){_last_wait(f, phase)}")
    else:
        who = (f"the thread has not waited for that phase (it has seen {n} of the barrier's phases complete)"
               f"{_last_wait(f, phase)}")
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: {_reader(f, ctx)}, a byte the TMA copy on line "
           f"{f['copy_line']} (issued by thread {ctx.thread(f['copy_thread'])}) writes, before its mbarrier phase "
           f"completed for it: the copy completes on phase {phase} (parity {phase % 2}) of {barrier(f)}, "
           f"and {who}.")
    # Having seen exactly the phases before the copy's, the reader did wait: for the phase before,
    # which completed before this copy was issued (or before its bytes counted).
    if n == phase and phase > 0:
        advice = (f"The reader did wait, for phase {phase - 1}, which completed before this copy's bytes could "
                  "count towards it: that phase was announced fewer bytes (expect_tx) than its copies bring, or "
                  "the slot was loaded again before its readers handed it back (a producer that did not wait for "
                  "it to be free). Announce exactly the bytes the copies bring, and refill a slot only once its "
                  "readers have released it.")
    else:
        advice = ("The TMA writes shared memory through the async proxy: its bytes are visible to a thread only "
                  "after that thread's mbarrier.try_wait has seen the phase the copy completes on "
                  "(or a __syncthreads() after another thread's such wait). Wait on the slot's barrier, with the "
                  "parity of the phase this use of the slot fills, before any thread reads it or wgmma multiplies "
                  "it, or a GPU may read stale bytes.")
    msg = _quoted(msg, ctx, (f["line"], f["copy_line"]), advice)
    return TileNotReadyError(msg, kernel=ctx.kernel.name, block=block, thread=ctx.thread(f["thread"]),
                             line=f["line"], array=f["array"], index=tuple(f["index"]), op=f["op"],
                             warpgroup=f["warpgroup"], copy_line=f["copy_line"], phase=phase, address=f["address"])


def _last_wait(f, phase):
    """What the reader's last wait on the barrier asked for, against the phase it needed."""
    if f["waited"] < 0:
        return "; none waited on this barrier at all"
    said = (f"; its last wait on this barrier, on line {f['wait_line']}, asked for parity {f['waited']}")
    if f["waited"] != phase % 2:
        return (said + f", which names the phase before (a barrier just initialized counts its phase before the "
                f"first as complete, so such a wait returns at once): wrong parity, wait for parity {phase % 2}")
    return said + (f" and returned on phase {f['observed'] - 1}'s completion, not this use's phase {phase}: the "
                   "count of this slot's uses that gives the parity is off (kept per thread across tiles?)")


def tile_stale(f, ctx):
    """A wgmma read a stage before the TMA copy that fills it for this use was issued: the copy then
    lands while the wgmma is still reading (kc_check_async.cpp: refill). The consumer's wait is the
    mistake, not the producer's copy."""
    block, phase, wg = ctx.block(f["block"]), f["phase"], f["warpgroup"]
    then = ("no TMA copy had written those bytes yet" if not f["basis"] else
            "they still held the previous fill, which this warpgroup had already multiplied and handed back")
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: warpgroup {wg}'s wgmma.mma_async on line {f['line']} read "
           f"{_element(f)} before the fill it needed had arrived: {then}. The fill is the TMA copy on line "
           f"{f['copy_line']} (issued by thread {ctx.thread(f['copy_thread'])}), which completes phase {phase} "
           f"(parity {phase % 2}) of {barrier(f)} and now lands while the wgmma "
           f"still reads{_last_wait({**f, 'op': 'wgmma'}, phase)}.")
    msg = _quoted(msg, ctx, (f["line"], f["copy_line"], *((f["wait_line"],) if f["waited"] >= 0 else ())),
                  "Before a warpgroup multiplies a stage it waits on the stage's full barrier for the phase of this "
                  "use: parity (use / STAGES) & 1 with one count of uses that runs on across tiles, the same count "
                  "the producer fills the stage by. A wait for the wrong parity returns at once on a GPU, and the "
                  "wgmma reads bytes the TMA has not written yet.")
    return TileNotReadyError(msg, kernel=ctx.kernel.name, block=block, thread=ctx.thread(f["thread"]),
                             line=f["line"], array=f["array"], index=tuple(f["index"]), op="wgmma", warpgroup=wg,
                             copy_line=f["copy_line"], phase=phase, address=f["address"], waited=f["waited"],
                             wait_line=f["wait_line"])


def tx_short(f, ctx):
    """A read of bytes a copy brought after the phase it was announced for had completed: that
    phase's expect_tx was short by these bytes, which counted on the next phase instead."""
    block, thread, phase = ctx.block(f["block"]), ctx.thread(f["thread"]), f["phase"]
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: thread {thread} reads {_element(f)} on line {f['line']}, "
           f"which the TMA copy on line {f['copy_line']} (issued by thread {ctx.thread(f['copy_thread'])}) wrote "
           f"after the phase its expect_tx announced had already completed: the expect_tx on line "
           f"{f['expect_line']} announced fewer bytes than the copies issued for that phase bring, so the phase of "
           f"{barrier(f)} completed on the first copies' bytes and this copy's "
           f"counted on phase {phase}, which the reader had not waited for.")
    msg = _quoted(msg, ctx, (f["line"], f["copy_line"], f["expect_line"]),
                  "expect_tx must announce every byte of every copy that completes on the phase: each TMA box's rows "
                  "x columns x element size (zero-filled bytes too), summed over the boxes of the stage.")
    return TransactionCountError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=f["line"],
                                 array=f["array"], index=tuple(f["index"]), copy_line=f["copy_line"],
                                 expect_line=f["expect_line"], phase=phase, address=f["address"])


def stage_overwrite(f, ctx):
    """A TMA copy refills a stage its consumers have not released (kc_check_async.cpp: refill)."""
    block, thread, line = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"]
    if f["reader"] >= 0:
        still = (f"warpgroup {f['reader']}'s wgmma.mma_async on line {f['wgmma_line']} still reads it (group "
                 f"{f['group']} in flight) and nothing orders that warpgroup's release of the stage before this copy")
        lines = (line, f["old_line"], f["wgmma_line"])
    else:
        still = "no thread has even waited for that fill's phase yet: its consumers have not read it"
        lines = (line, f["old_line"])
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: the TMA copy on line {line} (issued by thread {thread}) "
           f"refills {_element(f)} for phase {f['phase']} of {barrier(f)} "
           f"while the stage still holds the fill of phase {f['old_phase']} (parity {f['old_phase'] % 2}) of the "
           f"mbarrier at shared address {f['old_address']:#x}, copied on line {f['old_line']}: {still}.")
    msg = _quoted(msg, ctx, lines,
                  "The producer must wait until the stage's consumers hand it back before it refills it: "
                  "mbarrier.try_wait.parity on the stage's empty barrier (which each consumer arrives on once its "
                  "wgmma.wait_group has retired the stage's reads), parity ((use / STAGES) & 1) ^ 1, before its "
                  "expect_tx and copies. A GPU overwrites the tiles under the multiply; here it would later "
                  "deadlock or compute a wrong product.")
    return StageOverwriteError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line,
                               array=f["array"], index=tuple(f["index"]), op="copy", address=f["address"],
                               phase=f["phase"], old_address=f["old_address"], old_phase=f["old_phase"],
                               old_line=f["old_line"], reader=f["reader"], wgmma_line=f["wgmma_line"])


def _writer(f, thread):
    """Who overwrites an element something asynchronous still reads: a TMA copy into it, or a
    thread's store."""
    return (f"the TMA copy on line {f['line']} (issued by thread {thread}) writes" if f["op"] == "copy"
            else f"thread {thread} writes")


def wgmma_overwrite(f, ctx):
    block, thread = ctx.block(f["block"]), ctx.thread(f["thread"])
    writer = _writer(f, thread)
    released = (f" Warpgroup {f['warpgroup']} handed the stage back (an arrival this copy's thread waited for) "
                "before its wgmma.wait_group retired that group: too early." if f["released"] else "")
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: {writer} {_element(f)} on line {f['line']} while the "
           f"wgmma.mma_async on line {f['wgmma_line']} of warpgroup {f['warpgroup']} still reads it: its commit "
           f"group {f['group']} (counted from 0) is in flight, and the warpgroup's wgmma.wait_group has retired "
           f"only groups below {f['retired']}.{released}")
    msg = _quoted(msg, ctx, (f["line"], f["wgmma_line"]),
                  "A wgmma reads its shared-memory operands asynchronously, from its issue until a "
                  "wgmma.wait_group N of its warpgroup leaves at most N newer groups pending. Wait for the group "
                  "(wgmma.wait_group 0, or N small enough) before the tile is overwritten, and hand the slot back "
                  "(an mbarrier arrival, a __syncthreads()) only after that wait.")
    return WgmmaOperandRaceError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=f["line"],
                                 array=f["array"], index=tuple(f["index"]), op=f["op"], warpgroup=f["warpgroup"],
                                 wgmma_line=f["wgmma_line"], released=bool(f["released"]))


def wgmma_accumulator(f, ctx):
    block, thread, line = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"]
    verb = "reads" if f["op"] == "read" else "writes"
    if f["group"] >= f["committed"]:
        state = "no wgmma.commit_group has put it in a group yet, so no wgmma.wait_group can retire it"
    else:
        waited = (f"its wgmma.wait_group has retired only groups below {f['retired']}" if f["retired"]
                  else "it has retired none with wgmma.wait_group")
        state = (f"its commit group {f['group']} (counting this thread's wgmma.commit_group from 0) is still in "
                 f"flight: {waited}")
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: thread {thread} {verb}, on line {line}, the variable bound "
           f"to register {f['register']} of the accumulator vector of the wgmma.mma_async on line {f['wgmma_line']}, "
           f"before that wgmma has finished writing it: {state}.")
    msg = _quoted(msg, ctx, (line, f["wgmma_line"]),
                  "A wgmma writes its accumulator registers asynchronously, from its issue until a "
                  "wgmma.wait_group N of the issuing thread leaves at most N newer groups pending; reading or "
                  "writing them in between is undefined (a GPU gives the old value, the new one or a mix). After "
                  "the wgmmas, wgmma.commit_group, then wgmma.wait_group 0 (or N small enough to retire this "
                  "wgmma's group) before the accumulators are read, stored or zeroed.")
    return WgmmaAccumulatorRaceError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line,
                                     op=f["op"], register=f["register"], wgmma_line=f["wgmma_line"],
                                     group=f["group"], retired=f["retired"])


def tma_store_overwrite(f, ctx):
    block, thread, issuer = ctx.block(f["block"]), ctx.thread(f["thread"]), ctx.thread(f["store_thread"])
    writer = _writer(f, thread)
    waited = (f"its cp.async.bulk.wait_group.read has retired only groups below {f['retired']}" if f["retired"]
              else "it has retired none with cp.async.bulk.wait_group.read")
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: {writer} {_element(f)} on line {f['line']} while the "
           f"TMA store on line {f['store_line']} may still be reading it: thread {issuer}, which issued the "
           f"store, has not waited for its bulk group ({f['group']}, counting that thread's "
           f"cp.async.bulk.commit_group from 0): {waited}.")
    msg = _quoted(msg, ctx, (f["line"], f["store_line"]),
                  "A TMA store reads its shared-memory source asynchronously, until the issuing thread's "
                  "cp.async.bulk.wait_group.read N leaves at most N newer bulk groups reading. Before the buffer "
                  "is written again, have that thread wait (N small enough to include this store), then a "
                  "barrier, so the other threads write only after its wait.")
    return TmaStoreSourceRaceError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=f["line"],
                                   array=f["array"], index=tuple(f["index"]), op=f["op"],
                                   store_line=f["store_line"], store_thread=issuer, group=f["group"],
                                   retired=f["retired"])


def proxy_fence(f, ctx):
    block, thread, line, at = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"], f["async_line"]
    fence_line = f.get("fence_line", 0)        # the writer's fence no synchronization orders before the read
    global_line = f.get("global_fence_line", 0)   # its fence.proxy.async.global that is, in vain
    if f["op"] == "wgmma":
        reader = f"the wgmma.mma_async on line {at} of warpgroup {f['warpgroup']}"
        issuer = "the warpgroup issuing the wgmma"
        how = "reads it as an operand"
    else:
        reader, issuer = (f"the TMA store on line {at} (issued by thread {ctx.thread(f['issuer'])})",
                          "the thread issuing the TMA store")
        how = "reads it"
    where = (f": its fence.proxy.async on line {fence_line} comes after the synchronization that orders the "
             "write before the read" if fence_line else "")
    if global_line:
        where += (f"{'; and' if where else ':'} its fence.proxy.async.global on line {global_line} orders global "
                  "memory only")
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: thread {thread} writes {_element(f)} on line {line} with an "
           f"ordinary store (the generic proxy), and {reader} {how} through the async proxy with no "
           f"fence.proxy.async of thread {thread} between the write and the read{where}.")
    msg = _quoted(msg, ctx, (line, at, *(x for x in (fence_line, global_line) if x)),
                  "The PTX ISA: accessing the same memory through the generic and the async proxy needs a "
                  "cross-proxy fence, fence.proxy.async; without it a GPU may read stale bytes. After its writes, "
                  "each writing thread executes fence.proxy.async.shared::cta, before the barrier that hands the "
                  f"buffer to {issuer}.")
    return ProxyFenceError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line, array=f["array"],
                           index=tuple(f["index"]), op=f["op"], async_line=at, issuer=ctx.thread(f["issuer"]),
                           warpgroup=f["warpgroup"], fence_line=fence_line, global_fence_line=global_line)


def tx_overflow(f, ctx):
    block, thread, line = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"]
    exp, got = f["expected"], f["delivered"]
    msg = (f"kernel `{ctx.kernel.name}`: block {block}: thread {thread} at line {line} leaves the mbarrier at "
           f"shared address {f['address']:#x} (phase of parity {f['parity']}) with all its arrivals in and more "
           f"transaction bytes completed than expected: expect_tx announced {exp} bytes, the copies delivered "
           f"{got} ({got - exp} too many). The transaction count is below zero, so the phase never completes."
           + ctx.quote(line) +
           "\nexpect_tx must announce exactly the bytes the phase's copies bring: a TMA box counts all its "
           "bytes (box rows x box columns x element size, the zero-filled ones too), once per copy.")
    return TransactionCountError(msg, kernel=ctx.kernel.name, block=block, thread=thread, line=line,
                                 expected=exp, delivered=got, address=f["address"])


STATE = {"S": "wait at __syncthreads() on line {}", "W": "wait at a warp operation on line {}",
         "M": "wait at an mbarrier on line {}", "R": "are elsewhere", "A": "are at the wgmma on line {}"}


def warpgroup(f, ctx):
    block, wg, line = ctx.block(f["block"]), f["warpgroup"], f["line"]
    masks = f["arrived"]
    missing = [w for w in range(4) if masks[w] != 0xFFFFFFFF]
    parts, where = [], {}
    for i, (state, at) in enumerate(zip(f["states"], f["lines"])):
        if state == "A" and f["problem"] == "missing":
            continue
        text = (f"returned at line {at}" if at else "reached the end of the kernel") if state == "E" \
            else STATE[state].format(at)
        where.setdefault(text, []).append(i)
    for text, ts in where.items():
        warps = sorted({t // 32 for t in ts})
        parts.append(f"warp{'s' if len(warps) > 1 else ''} {lane_ranges([4 * wg + w for w in warps])} "
                     f"(threads {lane_ranges([128 * wg + t for t in ts])}) {text}")
    head = f"kernel `{ctx.kernel.name}`: warpgroup {wg} (warps {4 * wg}-{4 * wg + 3}) of block {block}: "
    if f["problem"] == "different":
        msg = head + "its warps reach wgmma.mma_async at different lines: " + "; ".join(parts) + "."
    else:
        msg = (head + f"wgmma.mma_async on line {line} is not reached by warp"
               f"{'s' if len(missing) > 1 else ''} {lane_ranges([4 * wg + w for w in missing])}: "
               + "; ".join(parts) + ".")
    for q in sorted({line, *(at for (state, at) in zip(f["states"], f["lines"]) if at)}):
        msg += ctx.quote(q)
    msg += ("\nwgmma.mma_async is .sync.aligned: all 128 threads of the warpgroup (4 warps) execute the same "
            "wgmma together. Keep it out of conditions that differ between the warpgroup's threads (a check of "
            "threadIdx.x that splits warps, an early return). A GPU hangs or computes garbage.")
    return WarpgroupCollectiveError(msg, kernel=ctx.kernel.name, block=block, warpgroup=wg, line=line,
                                    call=f["what"], missing=[4 * wg + w for w in missing],
                                    arrived=[t for t in range(128) if (masks[t // 32] >> (t % 32)) & 1],
                                    problem=f["problem"], mask=masks, groups={})
