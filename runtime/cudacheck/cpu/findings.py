"""Checked mode's findings, from the JSON a worker reports to the exception a student
reads: what happened, which thread of which block, which element, which source line,
and what to do about it."""
import json
import re
from dataclasses import dataclass

from .. import errors
from ..errors import (
    AsyncCopyRaceError,
    BarrierDivergenceError,
    ForwardProgressError,
    GlobalMemoryRaceError,
    InvalidOperandError,
    LaunchConfigError,
    LeadingDimensionError,
    MisalignedAddressError,
    OutOfBoundsError,
    SharedMemoryRaceError,
    UninitializedReadError,
    WarpCollectiveError,
    WarpDivergenceError,
)
from ..frontend import INCLUDE_DIR
from ..launch import DESCRIBED_GPU, resident_blocks

DECLARATIONS = INCLUDE_DIR / "kc_findings.def"


def coords(linear, dims):
    x, y, _ = dims
    return (linear % x, (linear // x) % y, linear // (x * y))


class Context:
    """What a finding is read against: the kernel, the launch and the source."""

    def __init__(self, kernel, config, source, pc_lines=None, program=None):
        self.kernel, self.config = kernel, config
        self.arrays = ()              # the launch's (name, address, bytes), set as a finding is read
        self.lines = source.splitlines()
        self.pc_lines = pc_lines      # instruction offsets -> source lines (checked mode)
        self.program = program

    def line_of(self, f, key="pc"):
        """The source line of a finding's access: from the instrumentation when it knew it,
        otherwise from the instruction's place in the library."""
        if key == "pc" and f.get("line"):
            return f["line"]
        if self.pc_lines is None or key not in f:
            return 0
        return self.pc_lines([f[key]])[0]

    def thread(self, linear):
        return coords(linear, self.config.block)

    def block(self, linear):
        return coords(linear, self.config.grid)

    def element_size(self, name):
        """Bytes per element of pointer parameter `name` as declared, or None."""
        for p in self.kernel.params:
            if p.name == name and p.pointer and p.dtype is not None:
                return p.dtype.itemsize * p.lanes
        return None

    def quote(self, line):
        if 1 <= line <= len(self.lines):
            return f"\n  line {line}: {self.lines[line - 1].strip()}"
        return ""


def _element(name, index):
    text = name + "".join(f"[{i}]" for i in index)
    if len(index) == 2:
        text += f" (row {index[0]}, column {index[1]})"
    return text


def _shape(dims):
    return " x ".join(map(str, dims))


@dataclass(frozen=True)
class Declared:
    """A kind of finding as include/kc_findings.def declares it."""
    kind: str
    exception: type      # what its decoder raises (or a subclass)
    fields: frozenset    # every field its JSON may carry
    required: frozenset  # those every one carries


def declarations(path=DECLARATIONS):
    """The kinds of finding, by kind, from the one declaration the C++ side compiles too."""
    out = {}
    for kind, exception, fields in re.findall(r'^KC_FINDING\((\w+), (\w+), "([^"]*)"\)', path.read_text(), re.M):
        names = fields.split()
        out[kind] = Declared(kind, getattr(errors, exception), frozenset(n.rstrip("?") for n in names),
                             frozenset(n for n in names if not n.endswith("?")))
    return out


KINDS = declarations()


def to_exception(raw, ctx, arrays=()):
    """The exception a worker's finding (JSON) stands for. `arrays` ((name, address, bytes) of
    the launch's arrays) names memory a finding gives only as an address."""
    f = json.loads(raw)
    kind = f.pop("kind")
    declared = KINDS[kind]
    if "pc" in declared.fields:
        f["line"] = ctx.line_of(f)
    if "other_pc" in declared.fields:
        f["other_line"] = ctx.line_of(f, "other_pc")
    ctx.arrays = tuple(arrays)
    return globals()[f"_{kind}"](f, ctx)


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


_COPY_FIX = ("An asynchronous copy lands only when its own thread waits for its batch: issue the copies, "
             "__pipeline_commit(), then __pipeline_wait_prior(n) (all but the newest n batches have landed), and a "
             "__syncthreads() after the wait before any other thread reads what they wrote; a stage of shared memory "
             "may be refilled only after every thread has finished reading it (a __syncthreads() before the copies).")


def _operand(f, ctx):
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
    elif problem == "dst_not_shared":
        cls = InvalidOperandError
        msg = (f"{who} with a destination ({addr:#x}) outside shared memory: asynchronous copies go from global "
               "to shared memory (cp.async.shared.global); anything else is undefined on a GPU.")
    else:   # src_not_global
        cls = InvalidOperandError
        msg = (f"{who} with a source ({addr:#x}) in shared memory: asynchronous copies go from global to shared "
               "memory (cp.async.shared.global); anything else is undefined on a GPU.")
    return cls(msg + ctx.quote(line), kernel=ctx.kernel.name, thread=thread, block=block, line=line, call=what,
               problem=problem, address=addr, value=value)


def _collective(f, ctx):
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


def _async_race(f, ctx):
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
    return AsyncCopyRaceError(msg + "\n" + _COPY_FIX, kernel=ctx.kernel.name, block=block, thread=me,
                              other_thread=other, array=f["array"], index=tuple(f["index"]), hazard="async copy",
                              line=f["line"], other_line=f["other_line"])


def _shared_limit(f, ctx):
    return LaunchConfigError(
        f"kernel `{ctx.kernel.name}` declares {f['static']} bytes of static shared memory and the launch asks for "
        f"{f['dynamic']} of dynamic shared memory: {f['static'] + f['dynamic']} in all, over the {f['limit']} bytes "
        "a block may have" + (" (a GPU refuses more than 48 KiB of static __shared__ at compile time)"
                              if f["static"] > 48 * 1024 else
                              " without opting in: set the kernel's max_dynamic_shared_size_bytes, as in CuPy"),
        "cudaErrorInvalidValue")


def _warp(f, ctx):
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


def _oob(f, ctx):
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


def _race(f, ctx):
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


_BLOCKS_ORDER = ("Threads of different blocks are ordered only through atomics: an atomic operation on the element "
                 "itself, or a __threadfence() followed by an atomic or volatile store to a flag that the other "
                 "block reads (atomically or through a volatile pointer) before its access. A barrier orders one "
                 "block's threads only, and blocks run in any order, side by side.")
_LOST_UPDATES = ("The CPU runtime's plain runs may still show the right result: threads of a block take turns there, "
                 "so a read-modify-write is never cut in half as it is on a GPU, where such updates are lost.")


def _global_race(f, ctx):
    block, other_block = ctx.block(f["block"]), ctx.block(f["other_block"])
    me, other = ctx.thread(f["thread"]), ctx.thread(f["other_thread"])
    name, index = f["array"], f["index"]
    element = _element(name, index) if f["space"] != "device" or f["dims"][0] > 1 else name
    line, other_line = f["line"], f["other_line"]

    def verb(op):
        return {"read": "reads", "write": "writes", "atomic": "updates atomically",
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
    plain = "atomic" not in (f["op"], f["other_op"])
    if plain and not same_block and me == other and line == other_line and f["hazard"] == "WW":
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
        fix += " (Two stores race even when they store the same value: CUDA's memory model gives that no meaning.)"
    return GlobalMemoryRaceError(msg + "\n" + why + "\n" + fix, kernel=ctx.kernel.name, block=block, thread=me,
                                 other_block=other_block, other_thread=other, array=name, index=tuple(index),
                                 hazard="write-write" if f["hazard"] == "WW" else "read-write", line=line,
                                 other_line=other_line, op=f["op"], other_op=f["other_op"])


def _polled(address, ctx):
    """`name[i]` for an address inside one of the launch's arrays, else the address."""
    for name, start, nbytes in ctx.arrays:
        if start <= address < start + nbytes:
            return f"{name}[{(address - start) // (ctx.element_size(name) or 1)}]"
    return f"the location at {address:#x}"


def _stall(f, ctx):
    block, thread, line = ctx.block(f["block"]), ctx.thread(f["thread"]), f["line"]
    at = f"at line {line}" if line else "(run with check=True for its line)"
    threads, total = ctx.config.threads_per_block, f["blocks"]
    resident = resident_blocks(threads, ctx.config.shared_mem)
    msg = (f"kernel `{ctx.kernel.name}`: block {block} cannot finish: its thread {thread} polls "
           f"{_polled(f['address'], ctx)} {at}, which holds {f['value']}, and nothing that can still run will "
           f"change it ({f['blocks_done']} of {total} blocks had finished; the CPU runtime runs {f['workers']} "
           f"block{'s' if f['workers'] > 1 else ''} at a time).{ctx.quote(line)}\n"
           "The kernel relies on its blocks making progress side by side: a block waits for something only another "
           "block does. CUDA promises that only for a cooperative launch (cudaLaunchCooperativeKernel), whose blocks "
           "must all fit on the GPU at once; otherwise blocks run in any order, and a block may not start until "
           f"others have finished. An {DESCRIBED_GPU} holds at most {resident} blocks of {threads} threads at once "
           "(fewer with many registers): ")
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


def _uninit(f, ctx):
    thread, block = ctx.thread(f["thread"]), ctx.block(f["block"])
    element = _element(f["array"], f["index"])
    if f.get("space") == "global":   # a whole program's device memory (initcheck)
        msg = (f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} reads {element} at line {f['line']}, "
               f"but nothing has written that element of {f['array']} ({f['dims'][0]} elements): no cudaMemcpy, "
               f"cudaMemset or kernel stored it, so it holds whatever the memory held.{ctx.quote(f['line'])}\n"
               "Copy every element the kernel reads to the device first; cudaMemcpy's size is in bytes, "
               "n * sizeof(element), not n.")
        return UninitializedReadError(msg, kernel=ctx.kernel.name, thread=thread, block=block, array=f["array"],
                                      index=tuple(f["index"]), line=f["line"])
    msg = (f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} reads {element} at line {f['line']}, "
           f"but no thread of the block has written that element in this launch: the value is whatever was "
           f"left in shared memory.{ctx.quote(f['line'])}\n"
           "Every element a thread reads must be stored first. Where a guard skips a load (past the matrix "
           "edge), store 0.0f instead so the element contributes nothing.")
    return UninitializedReadError(msg, kernel=ctx.kernel.name, thread=thread, block=block, array=f["array"],
                                  index=tuple(f["index"]), line=f["line"])


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


def _divergence(f, ctx):
    block = ctx.block(f["block"])
    groups = {}
    for i, (state, line) in enumerate(zip(f["states"], f["lines"])):
        groups.setdefault((state, line), set()).add(i)
    everyone = set(range(len(f["states"])))

    def where(state, line):
        if state == "E":
            return f"returned at line {line}" if line else f"reached the end of the kernel (line {f['end_line']})"
        return (f"wait at {'__syncthreads()' if state == 'S' else 'a warp operation (__syncwarp, a shuffle or a vote)'}"
                f" on line {line}")

    ordered = sorted(groups.items(), key=lambda kv: len(kv[1]))
    parts = [f"{_describe(g, everyone, ctx)} {where(*key)}" for key, g in ordered[:-1]]
    (key, _), = ordered[-1:]
    parts.append(f"the others {where(*key)}" if len(ordered) > 1 else f"all {where(*key)}")
    msg = (f"kernel `{ctx.kernel.name}`: divergent barrier in block {block}: " + "; ".join(parts) + ".")
    for line in sorted({k[1] for k in groups if k[1]}):
        msg += ctx.quote(line)
    msg += ("\nEvery thread of a block must reach the same __syncthreads(), and none may leave while others wait "
            "there. Keep barriers out of conditions that differ between threads; instead of returning early, "
            "let out-of-range threads take part in the loads (storing 0.0f) and skip only the final write.")
    return BarrierDivergenceError(msg, kernel=ctx.kernel.name, block=block,
                                  groups={where(*k): sorted(ctx.thread(t) for t in g) for k, g in groups.items()})
