"""The decoders of checked mode's findings about what an access did (kc_findings.def): an
element read or written outside its array (oob), two threads' accesses of one element with
nothing ordering them, in shared memory (race), against an asynchronous copy in flight
(async_race) or in global memory (global_race), unordered writes of one value to global memory
(same_value: a warning), and a read of memory nothing wrote (uninit).
Each takes the finding's fields and the findings.Context it is read against, and returns the
exception (or warning), its message worded for the student."""
from ...errors import (
    AsyncCopyRaceError,
    GlobalMemoryRaceError,
    OutOfBoundsError,
    SameValueWriteWarning,
    SharedMemoryRaceError,
    UninitializedReadError,
)


def _element(name, index):
    text = name + "".join(f"[{i}]" for i in index)
    if len(index) == 2:
        text += f" (row {index[0]}, column {index[1]})"
    return text


def _shape(dims):
    return " x ".join(map(str, dims))


COPY_FIX = ("An asynchronous copy lands only when its own thread waits for its batch: issue the copies, "
             "__pipeline_commit(), then __pipeline_wait_prior(n) (all but the newest n batches have landed), and a "
             "__syncthreads() after the wait before any other thread reads what they wrote; a stage of shared memory "
             "may be refilled only after every thread has finished reading it (a __syncthreads() before the copies).")


def oob(f, ctx):
    thread, block = ctx.thread(f["thread"]), ctx.block(f["block"])
    name, index, dims = f["array"], f["index"], f["dims"]
    if name == "(local array)" and ctx.program is not None:
        # The instrumentation knows the line and the dimension; the front end, which
        # arrays are subscripted on that line and their bounds.
        names = [n for n, bound in ctx.program.subscripts.get(str(f["line"]), []) if bound == dims[0]]
        name = names[0] if len(set(names)) == 1 else "a local array"
    verb = {"read": "reads", "write": "writes"}.get(f["op"], "indexes")
    if f.get("space") == "null" or name == "(null)":
        msg = f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} {verb} through a null pointer"
    elif len(index) > 1:
        limits = ", ".join(f"{axis} 0..{d - 1}" for axis, d in zip(("rows", "columns", "layers"), dims))
        msg = (f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} {verb} {_element(name, index)}, "
               f"outside {name}, which is {_shape(dims)} ({limits})")
    else:
        where = "before the start of" if index[0] < 0 else "past the end of"
        kind = "a shared array" if f["shared"] else "a local array" if f.get("space") == "local" else "an array"
        msg = (f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} {verb} {name}[{index[0]}], {where} "
               f"{name}, {kind} of {dims[0]} elements (indices 0..{dims[0] - 1})")
        lead, span = f.get("lead", 0), f.get("span", 0)
        if lead or span > dims[0]:   # a view into a larger allocation: its bounds are the allocation's
            msg += (f", and outside the allocation {name} is a view into ({lead} elements before {name}[0] and "
                    f"{span} from it: indices {-lead}..{span - 1})")
        declared = ctx.element_size(name)
        if declared and declared != f["elem_size"]:
            msg += (f", counting in {f['elem_size']}-byte elements as the access does (a vector type through a "
                    f"cast pointer), where {name} holds {declared}-byte elements")
    if f.get("via"):
        msg += f" ({f['via']})"
    msg += ctx.quote(f["line"])
    # The runtime knows the array, not the kernel's names for its sizes: the hint says what
    # must hold, in the array's own terms.
    msg += (f"\nGuard the access (an `if` that keeps the index within {name}'s {_shape(dims)} elements, before "
            "it), or check the index arithmetic." if not f["shared"] and f.get("space") != "local"
            else "\nCheck the index arithmetic against the array's size.")
    return OutOfBoundsError(msg, kernel=ctx.kernel.name, thread=thread, block=block, array=name,
                            index=tuple(index), extent=tuple(dims), op=f["op"], line=f["line"])


def race(f, ctx):
    block = ctx.block(f["block"])
    me, other = ctx.thread(f["thread"]), ctx.thread(f["other_thread"])
    name, index, hazard = f["array"], f["index"], f["hazard"]
    element = _element(name, index)
    # Told in program order: for a read after write the write first, otherwise the read.
    accesses = [(other, f["other_op"], f["other_line"]), (me, f["op"], f["line"])]
    first, second = sorted(accesses, key=lambda a: (a[1] == "read") == (hazard == "RAW"))
    since = (f"since the __syncthreads() on line {f['interval_line']}" if f["interval_line"]
             else "since the kernel started")
    names = {"RAW": "read after write", "WAR": "write after read", "WAW": "write after write"}
    msg = (f"kernel `{ctx.kernel.name}`: shared-memory race on {element} in block {block} ({names[hazard]}): "
           f"thread {first[0]} {first[1]}s it at line {first[2]} and thread {second[0]} {second[1]}s it at line "
           f"{second[2]}, with no barrier between them ({since}).")
    for line in sorted({f["line"], f["other_line"]}):
        msg += ctx.quote(line)
    w_line = f["line"] if f["op"] == "write" else f["other_line"]
    r_line = f["other_line"] if f["op"] == "write" else f["line"]
    if hazard == "RAW":
        fix = (f"A __syncthreads() is missing between the write (line {w_line}) and the read (line {r_line}): "
               "every thread must finish storing before any thread reads what was stored.")
    elif hazard == "WAR":
        fix = (f"A __syncthreads() is missing after the read (line {r_line}) and before the next write (line "
               f"{w_line}): every thread must be done reading before any thread overwrites the element, "
               "typically at the end of the loop body.")
    else:
        fix = "Two threads write one element in one barrier interval: give each element one writer."
    warp = f["thread"] // 32
    if warp == f["other_thread"] // 32 and hazard != "WAW":
        fix += (f" (Both threads are in warp {warp}. Where only threads of one warp share the data, a "
                "__syncwarp() is enough; otherwise it takes __syncthreads().)")
    return SharedMemoryRaceError(msg + "\n" + fix, kernel=ctx.kernel.name, block=block, thread=me, other_thread=other,
                                 array=name, index=tuple(index), hazard=names[hazard], line=f["line"],
                                 other_line=f["other_line"])


def async_race(f, ctx):
    block, me, other = ctx.block(f["block"]), ctx.thread(f["thread"]), ctx.thread(f["other_thread"])
    element = _element(f["array"], f["index"])
    verb = {"read": "reads", "write": "writes", "copy": "copies into"}[f["op"]]
    mine = f["thread"] == f["other_thread"]
    msg = (f"kernel `{ctx.kernel.name}`: shared-memory race on {element} in block {block}: thread {me} {verb} it at "
           f"line {f['line']} while the asynchronous copy {'it' if mine else f'thread {other}'} issued into it at "
           f"line {f['other_line']} is still in flight ({'it' if mine else 'that thread'} has not yet waited for "
           "it with __pipeline_wait_prior), so the element may hold the old or the new value.")
    for q in sorted({f["line"], f["other_line"]}):
        msg += ctx.quote(q)
    return AsyncCopyRaceError(msg + "\n" + COPY_FIX, kernel=ctx.kernel.name, block=block, thread=me,
                              other_thread=other, array=f["array"], index=tuple(f["index"]), hazard="async copy",
                              line=f["line"], other_line=f["other_line"])


_BLOCKS_ORDER = ("Within one launch, threads of different blocks are ordered only through atomics: an atomic "
                 "operation on the element itself, or a __threadfence() followed by an atomic or volatile store to a "
                 "flag that the other block reads (atomically or through a volatile pointer) before its access; or "
                 "by grid.sync() in a cooperative launch. Launches in one stream run one after the other. A barrier "
                 "orders one block's threads only, and blocks run in any order, side by side.")
_SCOPED = "atomicAdd_block, atomicCAS_block, atomicExch_block"
_LOST_UPDATES = ("The CPU runtime's plain runs may still show the right result: threads of a block take turns there, "
                 "so a read-modify-write is never cut in half as it is on a GPU, where such updates are lost.")


def global_race(f, ctx):
    block, other_block = ctx.block(f["block"]), ctx.block(f["other_block"])
    me, other = ctx.thread(f["thread"]), ctx.thread(f["other_thread"])
    name, index = f["array"], f["index"]
    element = _element(name, index) if f["space"] != "device" or f["dims"][0] > 1 else name
    line, other_line = f["line"], f["other_line"]

    def verb(op):
        return {"read": "reads", "write": "writes", "atomic": "updates atomically",
                "block-scoped atomic": "updates atomically with block scope",
                "volatile read": "reads (volatile)", "volatile write": "writes (volatile)"}[op]

    kinds = "two writes" if f["hazard"] == "WW" else "a write and a read"
    msg = (f"kernel `{ctx.kernel.name}`: global-memory race on {element} ({kinds}): thread {other} of block "
           f"{other_block} {verb(f['other_op'])} it at line {other_line}, and thread {me} of block {block} "
           f"{verb(f['op'])} it at line {line}, with nothing ordering the two.")
    for q in sorted({line, other_line} - {0}):
        msg += ctx.quote(q)
    same_block = f["block"] == f["other_block"]
    if same_block:
        since = (f"since the __syncthreads() on line {f['interval_line']}" if f["interval_line"]
                 else "since the kernel started")
        why = f"Both threads are in block {block}, with no __syncthreads() between the two accesses ({since})."
    else:
        why = _BLOCKS_ORDER
    plain = "atomic" not in (f["op"], f["other_op"]) and "block-scoped atomic" not in (f["op"], f["other_op"])
    scoped = "block-scoped atomic" in (f["op"], f["other_op"]) and not same_block
    if scoped:
        why = (f"An atomic of block scope ({_SCOPED}) is atomic only among the threads of its own block and "
               "orders nothing for another block's threads: the CUDA memory model's scopes.")
    elif f.get("scope") == "block":
        why = (f"Block {other_block} did publish through a flag, but with block scope (__threadfence_block(), or "
               f"an atomic {_SCOPED}), which orders its accesses for the threads of its own block only, not for "
               f"block {block}'s.")
    if scoped or f.get("scope") == "block":
        fix = ("Use device scope between blocks: atomicAdd, atomicCAS, atomicExch (not the _block variants) and "
               "__threadfence() (not __threadfence_block()). Block scope is for threads of one block.")
    elif plain and not same_block and me == other and line == other_line and f["hazard"] == "WW":
        fix = (f"Thread {me} of two different blocks writes the same element: does the index use blockIdx? "
               "(int row = blockIdx.y * blockDim.y + threadIdx.y; int col = blockIdx.x * blockDim.x + "
               "threadIdx.x.) Each element should have one writer in the whole grid.")
    elif not plain:
        fix = ("One of the two is atomic and the other is not: atomics order only other atomics. Make every access "
               "of an element that several threads update atomic, or read it only after the kernel has finished.")
    elif line == other_line:
        fix = (f"If each thread adds into the element (+=, ++), make the update one atomic operation "
               f"(atomicAdd(&{name}[i], v)); otherwise give each element one writer. " + _LOST_UPDATES)
    elif same_block:
        fix = ("Put a __syncthreads() between the write and the other thread's access, or give each element one "
               "writer.")
    else:
        fix = ("Give each element one writer in the whole grid, make the accesses atomic, or let the kernel finish "
               "before anything reads what it wrote (a second launch).")
    if f["hazard"] == "WW" and plain:
        fix += (" (The two stores wrote different values. Stores of the value an element already holds, by any "
                "number of threads, are only a SameValueWriteWarning.)")
    return GlobalMemoryRaceError(msg + "\n" + why + "\n" + fix, kernel=ctx.kernel.name, block=block, thread=me,
                                 other_block=other_block, other_thread=other, array=name, index=tuple(index),
                                 hazard="write-write" if f["hazard"] == "WW" else "read-write", line=line,
                                 other_line=other_line, op=f["op"], other_op=f["other_op"],
                                 scope="block" if scoped or f.get("scope") == "block" else "")


def same_value(f, ctx):
    block, other_block = ctx.block(f["block"]), ctx.block(f["other_block"])
    me, other = ctx.thread(f["thread"]), ctx.thread(f["other_thread"])
    name, index, line, other_line = f["array"], f["index"], f["line"], f["other_line"]
    element = _element(name, index) if f["space"] != "device" or f["dims"][0] > 1 else name
    shared = f["space"] == "shared"
    who = (f"threads {other} (line {other_line}) and {me} (line {line}) of block {block}" if shared else
           f"thread {other} of block {other_block} (line {other_line}) and thread {me} of block {block} (line {line})")
    error = ("SharedMemoryRaceError; so would a read of it between the writes and a barrier" if shared
             else "GlobalMemoryRaceError")
    msg = (f"kernel `{ctx.kernel.name}`: {who} both write {element} with nothing ordering the two writes, and the "
           "second stores the value the element already held. CUDA's memory model calls this a race, but every "
           "outcome is the same value (many threads setting one flag), so it is harmless; this is the first such "
           f"write of the launch. A write of a different value there would be a {error}.")
    for q in sorted({line, other_line} - {0}):
        msg += ctx.quote(q)
    return SameValueWriteWarning(msg, kernel=ctx.kernel.name, block=block, thread=me, other_block=other_block,
                                 other_thread=other, array=name, index=tuple(index), line=line, other_line=other_line)


def uninit(f, ctx):
    thread, block = ctx.thread(f["thread"]), ctx.block(f["block"])
    element = _element(f["array"], f["index"])
    if f.get("space") == "global":   # a whole program's device memory (initcheck)
        why = (f"but nothing has written that element of {f['array']} ({f['dims'][0]} elements): no cudaMemcpy, "
               "cudaMemset or kernel stored it, so it holds whatever the memory held.")
        fix = ("Copy every element the kernel reads to the device first; cudaMemcpy's size is in bytes, "
               "n * sizeof(element), not n.")
    else:
        why = ("but no thread of the block has written that element in this launch: the value is whatever was "
               "left in shared memory.")
        fix = ("Every element a thread reads must be stored first. Where a guard skips a load (past the matrix "
               "edge), store 0.0f instead so the element contributes nothing.")
    msg = (f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} reads {element} at line {f['line']}, "
           f"{why}{ctx.quote(f['line'])}\n{fix}")
    return UninitializedReadError(msg, kernel=ctx.kernel.name, thread=thread, block=block, array=f["array"],
                                  index=tuple(f["index"]), line=f["line"])
