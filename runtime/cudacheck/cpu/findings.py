"""Checked mode's findings, from the JSON a worker reports to the exception a student
reads: what happened, which thread of which block, which element, which source line,
and what to do about it."""
import json

from ..errors import (
    BarrierDivergenceError,
    LaunchConfigError,
    OutOfBoundsError,
    SharedMemoryRaceError,
    UninitializedReadError,
    WarpDivergenceError,
)


def coords(linear, dims):
    x, y, _ = dims
    return (linear % x, (linear // x) % y, linear // (x * y))


class Context:
    """What a finding is read against: the kernel, the launch and the source."""

    def __init__(self, kernel, config, source, pc_lines=None, program=None):
        self.kernel, self.config = kernel, config
        self.lines = source.splitlines()
        self.pc_lines = pc_lines      # instruction offsets -> source lines (checked mode)
        self.program = program

    def line_of(self, f, key="pc"):
        """The source line of a finding's access: from the instrumentation when it knew it,
        otherwise from the instruction's place in the library."""
        if f.get("line"):
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


def _element(name, index, dims):
    text = name + "".join(f"[{i}]" for i in index)
    if len(index) == 2:
        text += f" (row {index[0]}, column {index[1]})"
    return text


def _shape(dims):
    return " x ".join(map(str, dims))


def to_exception(raw, ctx):
    f = json.loads(raw)
    kind = f.pop("kind")
    if kind in ("oob", "uninit"):
        f["line"] = ctx.line_of(f)
    elif kind == "race":
        f["line"], f["other_line"] = ctx.line_of(f), ctx.line_of(f, "other_pc")
    return {"oob": _oob, "race": _race, "uninit": _uninit, "divergence": _divergence, "warp": _warp,
            "shared_limit": _shared_limit}[kind](f, ctx)


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
        msg = (f"kernel `{ctx.kernel.name}`: thread {thread} of block {block} {verb} {_element(name, index, dims)}, "
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
    name, index, dims, hazard = f["array"], f["index"], f["dims"], f["hazard"]
    element = _element(name, index, dims)
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


def _uninit(f, ctx):
    thread, block = ctx.thread(f["thread"]), ctx.block(f["block"])
    element = _element(f["array"], f["index"], f["dims"])
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
