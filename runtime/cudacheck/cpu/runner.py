"""Running a compiled kernel on the CPU, isolated from the caller.

A launch copies the array arguments into memory mapped MAP_SHARED, forks worker
processes that run the grid's blocks (include/kc_launch.h), waits for them within the
time limit, and copies the arrays the kernel may write back only if every worker
succeeded. Whatever a kernel does, the caller's arrays and process are intact: a
crash, a failed assert or an endless loop becomes a KernelError.
"""
import ctypes
import mmap
import os
import select
import sys
import tempfile
import threading
import time

import numpy as np

from ..config import config
from ..errors import KernelAssertionError, KernelCrashError, KernelRuntimeError, KernelTimeoutError
from ..frontend import dtype_from
from ..report import Access, Counts, LaunchReport
from . import findings

# Status codes of kc_abi.h.
OK, RUNNING, ASSERT_FAILED, CRASHED, OUT_OF_MEMORY, CHECK_FAILED = range(6)
SHARED_ID_BASE, MAX_SHARED_ARRAYS = 1000, 64
SIGNAL_NAMES = {11: "SIGSEGV (an invalid memory access)", 7: "SIGBUS (a misaligned or invalid access)",
                8: "SIGFPE (an integer division by zero)", 4: "SIGILL (an illegal instruction)",
                6: "SIGABRT (the program aborted)", 9: "SIGKILL (killed from outside, often for lack of memory)"}


class WorkerStatus(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("signal", ctypes.c_int32), ("block", ctypes.c_uint32),
                ("thread", ctypes.c_uint32), ("blocks_done", ctypes.c_uint64), ("fault_address", ctypes.c_uint64),
                ("line", ctypes.c_int32), ("stack_overflow", ctypes.c_int32), ("stalled", ctypes.c_uint32),
                ("pad", ctypes.c_uint32), ("progress", ctypes.c_uint64), ("message", ctypes.c_char * 16384)]


class TraceRecord(ctypes.Structure):
    _fields_ = [("block", ctypes.c_uint32), ("interval", ctypes.c_uint32), ("thread", ctypes.c_uint32),
                ("array", ctypes.c_int32), ("index", ctypes.c_int64), ("pc", ctypes.c_uint32),
                ("op", ctypes.c_uint8), ("width", ctypes.c_uint8), ("pad", ctypes.c_uint8 * 2)]


class CheckDesc(ctypes.Structure):
    _fields_ = [("counts", ctypes.c_void_p), ("counts_stride", ctypes.c_uint32), ("nparams", ctypes.c_uint32),
                ("extents", ctypes.c_void_p), ("elem_sizes", ctypes.c_void_p), ("names", ctypes.c_void_p),
                ("shared_names", ctypes.c_void_p), ("trace", ctypes.c_void_p),
                ("trace_capacity", ctypes.c_uint64), ("trace_count", ctypes.c_void_p),
                ("trace_blocks", ctypes.c_void_p), ("trace_threads", ctypes.c_void_p), ("shared_dims", ctypes.c_void_p),
                ("slot_base", ctypes.c_uint64), ("slot_shift", ctypes.c_uint32), ("nslots", ctypes.c_uint32),
                ("device_lo", ctypes.c_uint64), ("device_hi", ctypes.c_uint64), ("device_vars", ctypes.c_void_p),
                ("device_names", ctypes.c_void_p), ("ndevice", ctypes.c_uint32), ("nallocs", ctypes.c_uint32),
                ("allocs", ctypes.c_void_p), ("device_elem_sizes", ctypes.c_void_p),
                ("global_races", ctypes.c_uint32), ("pad", ctypes.c_uint32), ("gshadow", ctypes.c_uint64),
                ("gshadow_bytes", ctypes.c_uint64)]


class Allocation(ctypes.Structure):
    _fields_ = [("base", ctypes.c_uint64), ("bytes", ctypes.c_uint64), ("init", ctypes.c_void_p),
                ("param", ctypes.c_int64), ("elem_size", ctypes.c_uint64), ("name", ctypes.c_char_p)]


class LaunchDesc(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint32 * 3), ("block", ctypes.c_uint32 * 3), ("shared_mem", ctypes.c_uint64),
                ("shared_limit", ctypes.c_uint64), ("stack_size", ctypes.c_uint64), ("workers", ctypes.c_uint32),
                ("output_fd", ctypes.c_int32), ("args", ctypes.POINTER(ctypes.c_void_p)),
                ("status", ctypes.POINTER(WorkerStatus)), ("order", ctypes.c_void_p), ("end_line", ctypes.c_int32),
                ("parent_pid", ctypes.c_int32), ("time_limit_s", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("check", ctypes.POINTER(CheckDesc))]


def _itemsize(descr):
    """Bytes of a __device__ variable's element (1 where its type has no NumPy equivalent)."""
    dtype = dtype_from(descr)
    return dtype.itemsize if dtype is not None else 1


def _strings(values):
    """A C array of C strings that stays alive with the returned tuple's first element."""
    bufs = [ctypes.create_string_buffer(v.encode()) for v in values]
    arr = (ctypes.c_char_p * max(1, len(bufs)))(*[ctypes.addressof(b) for b in bufs])
    return (bufs, arr), ctypes.addressof(arr)


class CheckSetup:
    """Checked mode's side of a launch: the buffers the workers count and trace into
    (in the shared arena), and how to read them back."""

    def __init__(self, kernel, config, workers, shared_names, lines, devices=(), device_section=(0, 0),
                 trace_blocks=None, trace_threads=None, trace_capacity=1 << 20):
        self.kernel, self.config, self.workers = kernel, config, workers
        self.shared_names, self.lines = shared_names, lines
        self.stride = 2 * len(kernel.params) + 2 * MAX_SHARED_ARRAYS
        self.capacity = trace_capacity if trace_blocks is not None else 0
        self.trace_blocks = trace_blocks
        self.trace_threads = trace_threads
        # Inputs live in this process's memory; a forked worker reads its copy.
        n = max(1, len(kernel.params))
        self.extents = (ctypes.c_uint64 * n)()
        self.elem_sizes = (ctypes.c_uint32 * n)(*[max(p.itemsize, 1) for p in kernel.params])
        self._names, self.names = _strings([p.name for p in kernel.params])
        self._shared, self.shared_names_c = _strings(
            list(shared_names) + [""] * (MAX_SHARED_ARRAYS - len(shared_names)))
        self._dnames, self.device_names = _strings([name for name, _ in devices])
        self.device_vars = (ctypes.c_uint64 * max(2, 2 * len(devices)))(
            *[x for _, (addr, size, _) in devices for x in (addr, size)])
        self.device_elem_sizes = (ctypes.c_uint32 * max(1, len(devices)))(
            *[_itemsize(var.descr) for _, (_, _, var) in devices])
        self.ndevice = len(devices)
        self.device_section = device_section

    # Layout of the outputs in the arena: counts (stride per worker), trace counts (one
    # per worker), shared array dimensions (3 per array), trace records (capacity per worker).
    def _offsets(self):
        counts = 0
        trace_count = counts + 8 * self.stride * self.workers
        dims = trace_count + 8 * self.workers
        trace = dims + 4 * 3 * MAX_SHARED_ARRAYS
        return counts, trace_count, dims, trace, trace + ctypes.sizeof(TraceRecord) * self.capacity * self.workers

    def nbytes(self):
        return self._offsets()[-1]

    def describe(self, base, extents, slots, allocations=()):
        """Fill a CheckDesc whose outputs start at address `base` (zeroed) of the arena.
        extents: bytes of each parameter's array (0: not a pointer). allocations: a whole
        program's device allocations, as (base, bytes, init shadow address, parameter index
        or -1, element size, name): then these are the regions checked."""
        for i, n in enumerate(extents):
            self.extents[i] = n
        self._names_keep = [name.encode() for *_, name in allocations]
        self.allocs = (Allocation * max(1, len(allocations)))(
            *[Allocation(b, n, init, param, size, name) for (b, n, init, param, size, _), name
              in zip(allocations, self._names_keep)])
        counts, trace_count, dims, trace, _ = (base + o for o in self._offsets())
        self._blocks = self._threads = None
        if self.trace_blocks is not None:
            self._blocks = np.zeros(self.config.blocks, np.uint8)
            self._blocks[list(self.trace_blocks)] = 1
        if self.trace_threads is not None:
            self._threads = np.zeros(self.config.threads_per_block, np.uint8)
            self._threads[list(self.trace_threads)] = 1
        self.desc = CheckDesc(counts=counts, counts_stride=self.stride, nparams=len(self.kernel.params),
                              extents=ctypes.addressof(self.extents), elem_sizes=ctypes.addressof(self.elem_sizes),
                              names=self.names, shared_names=self.shared_names_c,
                              trace=trace, trace_capacity=self.capacity, trace_count=trace_count,
                              trace_blocks=self._blocks.ctypes.data if self._blocks is not None else None,
                              trace_threads=self._threads.ctypes.data if self._threads is not None else None,
                              shared_dims=dims, slot_base=slots.base, slot_shift=slots.shift, nslots=slots.count,
                              device_lo=self.device_section[0], device_hi=self.device_section[1],
                              device_vars=ctypes.addressof(self.device_vars), device_names=self.device_names,
                              ndevice=self.ndevice, nallocs=len(allocations), allocs=ctypes.addressof(self.allocs),
                              device_elem_sizes=ctypes.addressof(self.device_elem_sizes),
                              global_races=int(config.global_races))
        self.base = base
        return self.desc

    def report(self, schedule):
        counts = np.ctypeslib.as_array((ctypes.c_uint64 * (self.stride * self.workers)).from_address(self.base))
        counts = counts.reshape(self.workers, self.stride).sum(axis=0)
        rep = LaunchReport(kernel=self.kernel.name, grid=self.config.grid, block=self.config.block, schedule=schedule)
        for i, p in enumerate(self.kernel.params):
            if p.pointer:
                rep.global_counts[p.name] = Counts(int(counts[2 * i]), int(counts[2 * i + 1]))
        off = 2 * len(self.kernel.params)
        dims = self._shared_dims()
        for sid, name in enumerate(self.shared_names):
            if not dims[sid].any() and not counts[off + 2 * sid:off + 2 * sid + 2].any():
                continue   # not in this kernel
            key = name if name not in rep.shared_counts else f"{name}#{sid}"
            rep.shared_counts[key] = Counts(int(counts[off + 2 * sid]), int(counts[off + 2 * sid + 1]))
            rep.shared_shapes[key] = tuple(int(d) for d in dims[sid] if d)
        if self.trace_blocks is not None:
            rep.trace, rep.trace_truncated = self._read_trace()
        return rep

    def _shared_dims(self):
        """Each shared array's dimensions, as the workers recorded them (0: no such axis)."""
        dims_at = self.base + self._offsets()[2]
        return np.ctypeslib.as_array((ctypes.c_uint32 * (3 * MAX_SHARED_ARRAYS)).from_address(dims_at)).reshape(-1, 3)

    def _read_trace(self):
        _, tc, _, first, _ = (self.base + o for o in self._offsets())
        written = np.ctypeslib.as_array((ctypes.c_uint64 * self.workers).from_address(tc))
        dims = self._shared_dims()
        records, truncated = [], False
        for w in range(self.workers):
            n = int(written[w])
            truncated |= n > self.capacity
            buf = (TraceRecord * self.capacity).from_address(first + w * self.capacity * ctypes.sizeof(TraceRecord))
            records.extend(buf[i] for i in range(min(n, self.capacity)))
        lines = self.lines([r.pc for r in records])
        out = []
        for r, line in zip(records, lines):
            if r.array >= SHARED_ID_BASE:
                sid = r.array - SHARED_ID_BASE
                name, shape = self.shared_names[sid], tuple(int(d) for d in dims[sid] if d)
                index = tuple(int(v) for v in np.unravel_index(r.index, shape)) if len(shape) > 1 else int(r.index)
            else:
                name, index = self.kernel.params[r.array].name, int(r.index)
            out.append(Access(findings.coords(r.block, self.config.grid), int(r.interval),
                              findings.coords(r.thread, self.config.block), name, index, "RW"[r.op], int(line),
                              int(r.width)))
        return out, truncated


ALIGN = 256


class Arena:
    """One growing MAP_SHARED mapping per process, reused by every launch: the workers'
    status and checked mode's counts and traces."""

    def __init__(self):
        self.lock = threading.Lock()
        self.map = None
        self.view = None

    def reserve(self, nbytes):
        if self.map is None or len(self.map) < nbytes:
            self.view = None
            size = max(nbytes, 1 << 20)
            self.map = mmap.mmap(-1, size + (size >> 2))   # anonymous: MAP_SHARED
            self.view = np.frombuffer(self.map, dtype=np.uint8)
        return self.view


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
PROT_NONE, PROT_RW = 0, 3
MAP_SHARED, MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS, MAP_NORESERVE = 0x01, 0x02, 0x10, 0x20, 0x4000
MAP_FAILED = ctypes.c_void_p(-1).value


class Slots:
    """The arrays of a launch, each alone in a slot of 2**shift bytes of address space,
    at the slot's middle, mapped MAP_SHARED so that the workers' writes come back. Nothing
    else is ever mapped in a slot: an address names the array it was computed from, however
    far past either end an index runs (checked mode's provenance; include/kc_checked.h),
    and an unchecked run faults there instead of writing into another array."""

    def __init__(self, count=64):
        self.count = count
        self.mapped = [0] * count
        for shift in (36, 34, 32, 30, 28):   # a smaller reservation where address space is limited
            base = _libc.mmap(None, count << shift, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            if base not in (None, MAP_FAILED):
                self.base, self.shift = base, shift
                return
        raise KernelRuntimeError("the CPU runtime could not reserve address space for the kernel's arrays")

    @property
    def largest(self):
        """The most bytes one slot holds."""
        return 1 << (self.shift - 1)

    def place(self, slot, nbytes):
        """The address of `nbytes` mapped at slot `slot`'s middle."""
        if slot >= self.count:
            raise KernelRuntimeError(f"the CPU runtime launches kernels with at most {self.count} distinct arrays")
        if nbytes > self.largest:
            raise KernelRuntimeError(f"an array of {nbytes} bytes is larger than the CPU runtime's slots "
                                     f"({1 << (self.shift - 1)} bytes)")
        at = self.base + (slot << self.shift) + (1 << (self.shift - 1))
        size = -(-max(nbytes, 1) // mmap.PAGESIZE) * mmap.PAGESIZE
        if self.mapped[slot] < size:
            got = _libc.mmap(at, size, PROT_RW, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
            if got != at:
                raise KernelRuntimeError(f"the CPU runtime could not map {size} bytes for an array: "
                                         f"{os.strerror(ctypes.get_errno())}")
            self.mapped[slot] = size
        return at


_arena = Arena()
_slots = None


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


def _layout(kernel, args):
    """The arrays of a launch as memory intervals: each pointer argument's whole allocation
    (_allocation), views of one array sharing one interval, so the kernel sees one memory,
    as on a GPU. Returns a list of (start, end) and, per pointer argument, (interval index,
    offset in it)."""
    spans = sorted({_allocation(a) for p, a in zip(kernel.params, args) if p.pointer})
    merged = []
    for lo, hi in spans:
        if merged and lo < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    where = {}
    for p, a in zip(kernel.params, args):
        if p.pointer:
            ptr = a.__array_interface__["data"][0]
            k = next(i for i, (lo, hi) in enumerate(merged) if lo <= ptr < hi or (lo == ptr == hi))
            where[id(a)] = (k, ptr - merged[k][0])
    return merged, where


def _wait(pids, deadline):
    """Wait for every pid; return {pid: wait status}, or None if the deadline passed.
    Children still running are killed and reaped on the way out, whatever happens."""
    done = {}
    try:
        try:
            fds = {os.pidfd_open(pid): pid for pid in pids}
        except (AttributeError, OSError):
            fds = None
        if fds is not None:
            poller = select.poll()
            for fd in fds:
                poller.register(fd, select.POLLIN)
            try:
                while len(done) < len(pids):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    for fd, _ in poller.poll(max(1, int(left * 1000))):
                        poller.unregister(fd)
                        done[fds[fd]] = os.waitpid(fds[fd], 0)[1]
            finally:
                for fd in fds:
                    os.close(fd)
        else:  # no pidfd (old kernels, some sandboxes): poll with a growing pause
            pause = 1e-4
            while len(done) < len(pids):
                for pid in pids:
                    if pid not in done:
                        got, status = os.waitpid(pid, os.WNOHANG)
                        if got:
                            done[pid] = status
                if len(done) < len(pids):
                    if time.monotonic() > deadline:
                        return None
                    time.sleep(pause)
                    pause = min(pause * 2, 0.01)
        return done
    finally:
        for pid in pids:
            if pid not in done:
                try:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass


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


def run(spawn, kernel, config, args, *, time_limit, workers, stack_size, order=None, end_line=0, shared_limit=0,
        check=None, context=None, schedule="forward"):
    """Launch `spawn` (a kc_spawn_<i> of a compiled library) with checked arguments.
    `order`: the schedule, linear thread ids as uint32 (None: forward). `check`: a
    CheckSetup for checked mode, whose report is returned; `context` reads findings."""
    global _slots
    with _arena.lock:
        if _slots is None:
            _slots = Slots()
        intervals, where = _layout(kernel, args)
        starts = [_slots.place(k, hi - lo) for k, (lo, hi) in enumerate(intervals)]
        for k, (lo, hi) in enumerate(intervals):
            ctypes.memmove(starts[k], lo, hi - lo)
        values, arrays = [], []
        for p, a in zip(kernel.params, args):
            if p.pointer:
                k, off = where[id(a)]
                values.append(ctypes.c_void_p(starts[k] + off))
                arrays.append((p.name, starts[k] + off, a.nbytes))
            else:
                values.append(ctypes.create_string_buffer(a.tobytes(), max(a.nbytes, 8)))
        argv = (ctypes.c_void_p * max(1, len(values)))(*[ctypes.addressof(v) for v in values])
        extents = [a.nbytes if p.pointer else 0 for p, a in zip(kernel.params, args)]
        report = execute(spawn, kernel, config, argv, arrays, slots=_slots, extents=extents, time_limit=time_limit,
                         workers=workers, stack_size=stack_size, order=order, end_line=end_line,
                         shared_limit=shared_limit, check=check, context=context, schedule=schedule)
        _copy_back(kernel, args, where, starts, intervals)
        return report


def execute(spawn, kernel, config, argv, arrays, *, slots, extents, time_limit, workers, stack_size, order=None,
            end_line=0, shared_limit=0, check=None, context=None, schedule="forward", allocations=(), output_fd=None):
    """Run a launch whose arguments are in place: `argv` points at each parameter's value,
    `arrays` names the memory they point into ((name, address, bytes), for crash messages).
    The kernel's printf goes to `output_fd`, or (None) to this process's sys.stdout.
    Raises the launch's KernelError; returns checked mode's report (else None)."""
    status_bytes = ctypes.sizeof(WorkerStatus) * workers
    if check is not None:
        status_bytes += -(-check.nbytes() // ALIGN) * ALIGN
    view = _arena.reserve(status_bytes)
    base = view.ctypes.data
    status = (WorkerStatus * workers).from_address(base)
    ctypes.memset(base, 0, status_bytes)
    check_desc = None
    if check is not None:
        check_desc = check.describe(base + ctypes.sizeof(WorkerStatus) * workers, extents, slots, allocations)
    desc = LaunchDesc(grid=(ctypes.c_uint32 * 3)(*config.grid), block=(ctypes.c_uint32 * 3)(*config.block),
                      shared_mem=config.shared_mem, shared_limit=shared_limit, stack_size=stack_size,
                      workers=workers, args=ctypes.cast(argv, ctypes.POINTER(ctypes.c_void_p)),
                      status=ctypes.cast(ctypes.c_void_p(base), ctypes.POINTER(WorkerStatus)),
                      order=order.ctypes.data if order is not None else None, end_line=end_line,
                      parent_pid=os.getpid(), time_limit_s=int(time_limit) + 5,
                      check=ctypes.pointer(check_desc) if check_desc is not None else None)
    pids = (ctypes.c_int32 * workers)()
    with tempfile.TemporaryFile() as out:
        desc.output_fd = out.fileno() if output_fd is None else output_fd
        rc = spawn(ctypes.byref(desc), pids)
        if rc != 0:
            raise KernelRuntimeError(f"could not start the CPU runtime's workers: {os.strerror(-rc)}")
        try:
            waited = _wait(list(pids), time.monotonic() + time_limit)
        finally:
            if check_desc is not None and check_desc.gshadow:   # the race shadow spawn mapped
                _libc.munmap(ctypes.c_void_p(check_desc.gshadow), ctypes.c_size_t(check_desc.gshadow_bytes))
        out.seek(0)
        printed = out.read().decode(errors="replace")
    if printed:
        sys.stdout.write(printed)
    if waited is None:
        raise _timeout(kernel, config, status, workers, time_limit)
    failed = [w for w in range(workers) if status[w].code != OK or waited[pids[w]] != 0]
    if failed:
        w = min(failed, key=lambda w: (status[w].code != CHECK_FAILED, status[w].block))
        if status[w].code == CHECK_FAILED:
            raise findings.to_exception(status[w].message.decode(), context, arrays)
        raise _failure(kernel, config, status[w], waited[pids[w]], arrays, stack_size)
    return check.report(schedule) if check is not None else None


def _copy_back(kernel, args, where, starts, intervals):
    """Every allocation whose bytes the kernel changed gets them back, through whichever
    parameter points into it (a write through a const_cast pointer, or through a view past
    its own elements, reaches the caller too, as on a GPU)."""
    for k, (lo, hi) in enumerate(intervals):
        if hi == lo:
            continue
        now = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(starts[k]))
        mine = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(lo))
        if np.array_equal(now, mine):
            continue
        for p, a in zip(kernel.params, args):
            if p.pointer and where[id(a)][0] == k and not _writable(a):
                raise KernelRuntimeError(f"kernel `{kernel.name}` wrote into `{p.name}`, a read-only array (through a "
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


def _failure(kernel, config, st, wait_status, arrays, stack_size):
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


def _timeout(kernel, config, status, workers, time_limit):
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
