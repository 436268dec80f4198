"""Checked mode's side of a launch: the buffers its workers count and trace into (in the
shared arena), the description of the launch's memory that the checks read (abi.CheckDesc),
and the report read back from them (report.LaunchReport)."""
import ctypes
from functools import lru_cache

import numpy as np

from ..config import config as settings
from ..frontend import dtype_from
from ..report import Access, Counts, LaunchReport
from . import abi, findings
from .abi import MAX_SHARED_ARRAYS, SHARED_ID_BASE


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
        self.leads, self.spans = (ctypes.c_uint64 * n)(), (ctypes.c_uint64 * n)()
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
        return counts, trace_count, dims, trace, trace + ctypes.sizeof(abi.TraceRecord) * self.capacity * self.workers

    def nbytes(self):
        return self._offsets()[-1]

    def describe(self, base, extents, slots, allocations=(), views=()):
        """Fill a CheckDesc whose outputs start at address `base` (zeroed) of the arena.
        extents: bytes of each parameter's array (0: not a pointer). allocations: a whole
        program's device allocations, as (base, bytes, init shadow address, parameter index
        or -1, element size, name): then these are the regions checked. views: each
        parameter's allocation, as (bytes before its array, bytes from its start to the end),
        where the array is a view into a larger one (none given: each array is its allocation)."""
        for i, n in enumerate(extents):
            self.extents[i] = n
        for i, (lead, span) in enumerate(views):
            self.leads[i], self.spans[i] = lead, span
        self._names_keep = [name.encode() for *_, name in allocations]
        self.allocs = (abi.Allocation * max(1, len(allocations)))(
            *[abi.Allocation(b, n, init, param, size, name) for (b, n, init, param, size, _), name
              in zip(allocations, self._names_keep)])
        counts, trace_count, dims, trace, _ = (base + o for o in self._offsets())
        self._blocks = self._threads = None
        if self.trace_blocks is not None:
            self._blocks = np.zeros(self.config.blocks, np.uint8)
            self._blocks[list(self.trace_blocks)] = 1
        if self.trace_threads is not None:
            self._threads = np.zeros(self.config.threads_per_block, np.uint8)
            self._threads[list(self.trace_threads)] = 1
        self.desc = abi.CheckDesc(counts=counts, counts_stride=self.stride, nparams=len(self.kernel.params),
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
                                  global_races=int(settings.global_races), leads=ctypes.addressof(self.leads),
                                  spans=ctypes.addressof(self.spans))
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
            rep.trace, rep.trace_truncated = self._read_trace(dims)
        return rep

    def _shared_dims(self):
        """Each shared array's dimensions, as the workers recorded them (0: no such axis)."""
        dims_at = self.base + self._offsets()[2]
        return np.ctypeslib.as_array((ctypes.c_uint32 * (3 * MAX_SHARED_ARRAYS)).from_address(dims_at)).reshape(-1, 3)

    def _read_trace(self, dims):
        _, tc, _, first, _ = (self.base + o for o in self._offsets())
        written = [int(n) for n in np.ctypeslib.as_array((ctypes.c_uint64 * self.workers).from_address(tc))]
        truncated = any(n > self.capacity for n in written)
        # The workers' buffers (capacity records each, one after another) viewed as one structured
        # array and read a field at a time: reading them one record at a time cost a Python object
        # per field, most of a traced run's time.
        buffers = np.ctypeslib.as_array((abi.TraceRecord * (self.workers * self.capacity)).from_address(first))
        records = np.concatenate([buffers[w * self.capacity:][:min(n, self.capacity)] for w, n in enumerate(written)])
        names, indices = self._elements(records["array"], records["index"], dims)
        lines = self.lines(records["pc"].tolist())
        # One tuple per block and per thread, shared by their accesses: a trace of a million
        # accesses otherwise holds two million small tuples, the most of its memory.
        block_of = lru_cache(maxsize=None)(lambda b: findings.coords(b, self.config.grid))
        thread_of = lru_cache(maxsize=None)(lambda t: findings.coords(t, self.config.block))
        fields = (records[f].tolist() for f in ("block", "interval", "thread", "op", "width"))
        return [Access(block_of(b), interval, thread_of(t), name, index, "RW"[op], int(line), width)
                for b, interval, t, op, width, name, index, line in zip(*fields, names, indices, lines)], truncated

    def _elements(self, arrays, indices, dims):
        """Each traced access's array (its name) and element: an index, or a shared array's
        indices along its dimensions (dims: _shared_dims())."""
        names, out = [None] * len(arrays), indices.tolist()
        for array in np.unique(arrays).tolist():
            at = np.flatnonzero(arrays == array)
            if array >= SHARED_ID_BASE:
                sid = array - SHARED_ID_BASE
                name, shape = self.shared_names[sid], tuple(int(d) for d in dims[sid] if d)
                if len(shape) > 1:
                    for k, element in zip(at.tolist(), zip(*(axis.tolist() for axis in
                                                              np.unravel_index(indices[at], shape)))):
                        out[k] = element
            else:
                name = self.kernel.params[array].name
            for k in at.tolist():
                names[k] = name
        return names, out
