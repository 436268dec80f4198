"""Running a compiled kernel on the CPU, isolated from the caller, in forked worker processes.

A launch copies the array arguments into memory mapped MAP_SHARED, forks worker
processes that run the grid's blocks (src/kc_launch.cpp), waits for them within the
time limit, and copies the arrays the kernel may write back only if every worker
succeeded. Whatever a kernel does, the caller's arrays and process are intact: a
crash, a failed assert or an endless loop becomes a KernelError.
"""
import ctypes
import json
import os
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..config import config as settings
from ..errors import KernelAssertionError, KernelCrashError, KernelRuntimeError, KernelTimeoutError
from ..texture import TextureObject
from . import findings, system, texture_writes
from .abi import (
    ASSERT_FAILED,
    CHECK_FAILED,
    CRASHED,
    OK,
    OUT_OF_MEMORY,
    RUNNING,
    CpuTensorMap,
    LaunchDesc,
    WorkerStatus,
)

SIGNAL_NAMES = {11: "SIGSEGV (an invalid memory access)", 7: "SIGBUS (a misaligned or invalid access)",
                8: "SIGFPE (an integer division by zero)", 4: "SIGILL (an illegal instruction)",
                6: "SIGABRT (the program aborted)", 9: "SIGKILL (killed from outside, often for lack of memory)"}
ALIGN = 256


# This process's arena and slots. A child forked from Python (a whole program's, cpu/host.py;
# multiprocessing's) makes its own arena: the caller's mapping is shared with the caller, and
# its lock may be held by another of the caller's threads.
_arena = system.Arena()
_slots = None


def _new_arena():
    global _arena
    _arena = system.Arena()


os.register_at_fork(after_in_child=_new_arena)


@dataclass(frozen=True)
class LaunchPlan:
    """One launch on the CPU runtime, everything about it decided before a worker starts:
    built once where the launch begins (CpuModule.launch for a RawKernel's call,
    HostRuntime.launch for a whole program's kernel<<<...>>>) and carried down to the
    workers (execute fills the C side's LaunchDesc from it)."""
    kernel: object            # frontend.Kernel
    config: object            # launch.LaunchConfig: grid, block, dynamic shared memory, checked
    spawn: object             # spawn(LaunchDesc*, pids) starts the workers: 0, or -errno
    time_limit: float         # seconds
    workers: int
    shared_limit: int         # bytes of shared memory a block may use (without or with the opt-in)
    stack_size: int = field(default_factory=lambda: settings.stack_size)   # bytes per CUDA thread
    order: object = None      # the schedule: linear thread ids as uint32 (None: forward)
    schedule: str = "forward"  # its name, for checked mode's report
    check: object = None      # checked.CheckSetup: checked mode
    context: object = None    # findings.Context: what a finding is read against
    output_fd: int | None = None   # where the kernel's printf goes (None: this process's sys.stdout)

    @property
    def end_line(self):
        return self.kernel.end_line


def worker_count(config):
    """How many workers a launch of this LaunchConfig spreads its blocks over: with clusters,
    one per block of a cluster for each cluster that runs at once (kc_cluster.cpp); for a
    cooperative launch one per block, since grid.sync() needs every block running at once
    (kc_grid.cpp)."""
    if config.cooperative:
        return config.blocks
    size = config.cluster_size
    return size * max(1, min(settings.workers or system.cores(), config.blocks // size))


@dataclass(frozen=True)
class LaunchMemory:
    """Where a launch's arguments are, once in place for the workers."""
    argv: object              # a C array: the address of each parameter's value
    arrays: list              # (name, address, bytes) of the memory each pointer points into, for messages
    extents: list             # bytes of each parameter's array (0: not a pointer), checked mode's bounds
    slots: system.Slots       # the slots the arrays lie in
    allocations: tuple = ()   # a whole program's device allocations (CheckSetup.describe): the regions checked
    views: tuple = ()         # each parameter's (bytes of its allocation before it, bytes from it to the end)


def _allocation(a):
    """The memory interval of the allocation `a` is a view of (its NumPy base, contiguous),
    or of `a` itself: on a GPU a pointer argument points into its whole allocation, so a
    kernel given x[3:] may read in[-3], which is x[0]."""
    lo = a.__array_interface__["data"][0]
    owner = a
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner is not a and (owner.flags.c_contiguous or owner.flags.f_contiguous):
        start = owner.__array_interface__["data"][0]
        if start <= lo and lo + a.nbytes <= start + owner.nbytes:
            return start, start + owner.nbytes
    return lo, lo + a.nbytes


def _view(offset, interval):
    """(bytes before, bytes from the start to the end) of the allocation `interval` that an
    array starting `offset` bytes into it lies in: checked mode's bounds are the allocation's."""
    lo, hi = interval
    return offset, hi - lo - offset


def _layout(arrays):
    """The arrays of a launch as memory intervals: each array's whole allocation
    (_allocation), views of one array sharing one interval, so the kernel sees one memory,
    as on a GPU. Returns a list of (start, end) and, per array (by id), (interval index,
    offset in it)."""
    spans = sorted({_allocation(a) for _, a in arrays})
    merged = []
    for lo, hi in spans:
        if merged and lo < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    where = {}
    for _, a in arrays:
        ptr = a.__array_interface__["data"][0]
        k = next(i for i, (lo, hi) in enumerate(merged) if lo <= ptr < hi or (lo == ptr == hi))
        where[id(a)] = (k, ptr - merged[k][0])
    return merged, where


def _mapped(kernel, args, maps):
    """(name, array) of every array the launch maps: each pointer argument's, the source
    of each tensor map argument (maps: parameter index -> TensorMap), which the TMA reads
    and writes as the kernel would through a pointer, and each texture object's texels."""
    out = [(p.name, a) for p, a in zip(kernel.params, args) if p.pointer]
    return out + [(f"the {_mapped_as(m)} of {kernel.params[i].name}", m.source) for i, m in sorted(maps.items())]


def _mapped_as(m):
    return "texels" if isinstance(m, TextureObject) else "matrix"


def _array_near(address, arrays):
    """Which argument array an address lies in or near, for crash messages."""
    best = None
    for name, start, nbytes in arrays:
        if start <= address < start + nbytes:
            return f"The address lies inside `{name}`."
        gap = address - (start + nbytes) if address >= start + nbytes else start - address
        if gap < 1 << 36 and (best is None or gap < best[0]):
            where = "past the end of" if address >= start + nbytes else "before the start of"
            best = (gap, f"The address is {gap} bytes {where} `{name}`.")
    return best[1] if best else ""


def run(plan, args, maps=None):
    """Launch `plan` (a LaunchPlan) with `args`, checked against its kernel's parameters:
    each array is copied into a slot, and back where the kernel changed it. `maps`
    (parameter index -> TensorMap of a NumPy array): each map's source is mapped too, and the
    map's copy in the launch holds the mapped address. Returns checked mode's report (else
    None)."""
    global _slots
    kernel, maps = plan.kernel, maps or {}
    with _arena.lock:
        if _slots is None:
            _slots = system.Slots()
        mapped = _mapped(kernel, args, maps)
        intervals, where = _layout(mapped)
        starts = [_slots.place(k, hi - lo) for k, (lo, hi) in enumerate(intervals)]
        for k, (lo, hi) in enumerate(intervals):
            ctypes.memmove(starts[k], lo, hi - lo)
        values, arrays, by_address, textures = [], [], [], {}
        for i, (p, a) in enumerate(zip(kernel.params, args)):
            if p.pointer:
                k, off = where[id(a)]
                values.append(ctypes.c_void_p(starts[k] + off))
                arrays.append((p.name, starts[k] + off, a.nbytes))
                if i in maps:   # a map the kernel reads through a pointer (`const CUtensorMap*`): its copy
                    held = CpuTensorMap.from_address(starts[k] + off)   # holds the mapped matrix until copy-back
                    by_address.append((held, held.address))
                    sk, soff = where[id(maps[i].source)]
                    held.address = starts[sk] + soff
                    arrays.append((f"the matrix of {p.name}", starts[sk] + soff, maps[i].source.nbytes))
            else:
                values.append(ctypes.create_string_buffer(a.tobytes(), max(a.nbytes, 8)))
                if i in maps:
                    k, off = where[id(maps[i].source)]
                    if isinstance(maps[i], TextureObject):   # its handle stays; the texels it points to move
                        maps[i].bind(starts[k] + off)
                        textures[i] = (starts[k] + off, maps[i].source.nbytes)
                    else:
                        CpuTensorMap.from_buffer(values[-1]).address = starts[k] + off
                    arrays.append((f"the {_mapped_as(maps[i])} of {p.name}", starts[k] + off, maps[i].source.nbytes))
        argv = (ctypes.c_void_p * max(1, len(values)))(*[ctypes.addressof(v) for v in values])
        extents = [a.nbytes if p.pointer else 0 for p, a in zip(kernel.params, args)]
        views = [_view(where[id(a)][1], intervals[where[id(a)][0]]) if p.pointer else (0, 0)
                 for p, a in zip(kernel.params, args)]
        watch = None
        if plan.check is not None:
            watch = texture_writes.Watch(kernel.name, [(kernel.params[i].name, *where_texels)
                                                       for i, where_texels in textures.items()])
        try:
            report = execute(plan, LaunchMemory(argv, arrays, extents, _slots, views=views))
        finally:
            for held, address in by_address:
                held.address = address
        if watch is not None:
            watch.check()
        _copy_back(kernel, mapped, where, starts, intervals)
        return report


def execute(plan, memory):
    """Run the launch `plan` whose arguments are in place (`memory`, a LaunchMemory).
    Raises the launch's KernelError; returns checked mode's report (else None)."""
    workers, check, cfg = plan.workers, plan.check, plan.config
    status_bytes = ctypes.sizeof(WorkerStatus) * workers
    if check is not None:
        status_bytes += -(-check.nbytes() // ALIGN) * ALIGN
    view = _arena.reserve(status_bytes)
    base = view.ctypes.data
    status = (WorkerStatus * workers).from_address(base)
    ctypes.memset(base, 0, status_bytes)
    check_desc = None
    if check is not None:
        check_desc = check.describe(base + ctypes.sizeof(WorkerStatus) * workers, memory.extents, memory.slots,
                                    memory.allocations, memory.views)
    desc = LaunchDesc(grid=(ctypes.c_uint32 * 3)(*cfg.grid), block=(ctypes.c_uint32 * 3)(*cfg.block),
                      shared_mem=cfg.shared_mem, shared_limit=plan.shared_limit, stack_size=plan.stack_size,
                      workers=workers, args=ctypes.cast(memory.argv, ctypes.c_void_p).value, status=base,
                      order=plan.order.ctypes.data if plan.order is not None else None, end_line=plan.end_line,
                      parent_pid=os.getpid(), time_limit_s=int(plan.time_limit) + 5,
                      cluster=(ctypes.c_uint32 * 3)(*cfg.cluster), cooperative=int(cfg.cooperative),
                      check=ctypes.addressof(check_desc) if check_desc is not None else None)
    pids = (ctypes.c_int32 * workers)()
    with tempfile.TemporaryFile() as out:
        desc.output_fd = out.fileno() if plan.output_fd is None else plan.output_fd
        # The limit counts from before the fork: each worker's own alarm (time_limit_s) counts from its
        # start, so the caller's wait ends first even where forking many workers (a cooperative launch's
        # one per block) takes seconds.
        deadline = time.monotonic() + plan.time_limit
        rc = plan.spawn(ctypes.byref(desc), pids)
        if rc != 0:
            raise KernelRuntimeError(f"could not start the CPU runtime's workers: {os.strerror(-rc)}")
        try:
            waited = system.wait_for(list(pids), deadline)
        finally:
            if check_desc is not None and check_desc.gshadow:   # the race shadow spawn mapped
                system.unmap(check_desc.gshadow, check_desc.gshadow_bytes)
        out.seek(0)
        printed = out.read().decode(errors="replace")
    if printed:
        sys.stdout.write(printed)
    if waited is None:
        raise _timeout(plan, status)
    failed = [w for w in range(workers) if status[w].code != OK or waited[pids[w]] != 0]
    if failed:
        w = min(failed, key=lambda w: (status[w].code != CHECK_FAILED, status[w].block))
        if status[w].code == CHECK_FAILED:
            raise findings.to_exception(status[w].message.decode(), plan.context, memory.arrays)
        raise _failure(plan, status[w], waited[pids[w]], memory.arrays)
    repeat = _repeated_block(status, workers)
    if repeat:
        raise findings.to_exception(repeat, plan.context, memory.arrays)
    notes = {status[w].note.decode() for w in range(workers) if status[w].note}
    for note in sorted(notes)[:1]:   # checked mode's warnings: the launch's first
        warnings.warn(findings.to_exception(note, plan.context, memory.arrays), stacklevel=2)
    return check.report(plan.schedule) if check is not None else None


def _repeated_block(status, workers):
    """Checked mode: the first same-value write of one thread index of two blocks at an instruction
    where no threads of other indices met with one value anywhere in the launch (the grid
    repeating one block's work, a race with the rest of the array unwritten), as its finding;
    "" if none. kc_check_global_races.cpp says why this waits for every worker."""
    met = {status[w].same_value_pcs[i] for w in range(workers) for i in range(status[w].n_same_value_pcs)}
    for raw in sorted(status[w].repeat.decode() for w in range(workers) if status[w].repeat):
        if json.loads(raw)["pc"] not in met:
            return raw
    return ""


def _copy_back(kernel, mapped, where, starts, intervals):
    """Every allocation whose bytes the kernel changed gets them back, through whichever
    array of the launch (`mapped`: (name, array)) lies in it (a write through a const_cast
    pointer, or through a view past its own elements, reaches the caller too, as on a GPU)."""
    for k, (lo, hi) in enumerate(intervals):
        if hi == lo:
            continue
        now = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(starts[k]))
        mine = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(lo))
        if np.array_equal(now, mine):
            continue
        for name, a in mapped:
            if where[id(a)][0] == k and not _writable(a):
                raise KernelRuntimeError(f"kernel `{kernel.name}` wrote into `{name}`, a read-only array (through a "
                                         "const pointer cast to non-const); pass a writable copy")
        mine[:] = now


def _writable(a):
    """Whether a and every array it is a view of may be written."""
    while isinstance(a, np.ndarray):
        if not a.flags.writeable:
            return False
        a = a.base
    return True


def _where(config, st):
    return (f"block {findings.coords(st.block, config.grid)}, thread {findings.coords(st.thread, config.block)}")


def _failure(plan, st, wait_status, arrays):
    kernel, config, stack_size = plan.kernel, plan.config, plan.stack_size
    if st.code == ASSERT_FAILED:
        return KernelAssertionError(
            f"assert({st.message.decode()}) failed in kernel `{kernel.name}` at line {st.line}, "
            f"{_where(config, st)}.")
    sig = st.signal or (os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else 0)
    if st.stack_overflow:
        return KernelCrashError(
            f"kernel `{kernel.name}` overflowed the stack of {_where(config, st)}: each CUDA thread gets "
            f"{stack_size // 1024} KiB of stack on the CPU runtime (its local variables and arrays live there), and "
            "this thread needed more: a large local array or deep recursion. Raise it with "
            f"cudacheck.config.stack_size = {4 * stack_size} (bytes) and run again; a GPU gives a thread up to "
            "512 KiB of local memory.")
    if st.code == CRASHED or sig:
        near = _array_near(st.fault_address, arrays) if st.fault_address else ""
        return KernelCrashError(
            f"kernel `{kernel.name}` crashed with {SIGNAL_NAMES.get(sig, f'signal {sig}')} in {_where(config, st)}"
            + (f", at address {st.fault_address:#x}. {near}" if st.fault_address else ".")
            + "\nRe-run it with check=True: checked mode names the array, the index and the source line of "
              "an out-of-bounds access. (On a GPU the same bug may pass unnoticed or stop the CUDA context.)")
    if st.code == OUT_OF_MEMORY:
        return KernelRuntimeError(f"the CPU runtime could not allocate memory for {config.threads_per_block} "
                                  f"threads of {config.shared_mem} bytes of shared memory each block")
    return KernelRuntimeError(f"a worker of kernel `{kernel.name}` ended unexpectedly (status {wait_status})")


def _timeout(plan, status):
    kernel, config, workers, time_limit = plan.kernel, plan.config, plan.workers, plan.time_limit
    done = sum(status[w].blocks_done for w in range(workers))
    running = [w for w in range(workers) if status[w].code == RUNNING]
    where = f"; {_where(config, status[running[0]])} was running" if running else ""
    return KernelTimeoutError(
        f"kernel `{kernel.name}` did not finish within the time limit of {time_limit:g} s and was stopped: "
        f"{done} of {config.blocks} blocks had finished{where}.\n"
        "Look for a loop whose condition never changes, or one thread waiting on a flag another never sets (a flag "
        "read through a plain pointer may be read once and never again, here as on a GPU: read it through a "
        "volatile pointer or with an atomic). "
        "If the kernel is merely slow, raise the limit: cudacheck.config.time_limit = seconds.")
