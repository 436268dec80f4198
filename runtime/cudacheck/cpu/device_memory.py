"""A whole program's device memory, in the child that runs it (cpu/host.py): its cudaMalloc
allocations, each alone in a slot of address space (system.Slots) as a RawKernel's arrays
are, mapped shared, PROT_NONE while host code runs (a host dereference faults, as it does on
a GPU) and opened for the duration of a copy or a launch; and the ledger the caller reads
after the child died, which names the allocation a faulting address lies in."""
import ctypes
import mmap
from dataclasses import dataclass

import numpy as np

from ..errors import KernelRuntimeError
from . import abi, system

DEVICE_SLOTS = 256


class AllocationRecord(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint64), ("size", ctypes.c_uint64), ("line", ctypes.c_int32),
                ("free_line", ctypes.c_int32)]


class Ledger(ctypes.Structure):
    """What the caller reads after the child died: its crash, and its allocations (to name
    the one a faulting address lies in)."""
    _fields_ = [("crash", abi.HostCrash), ("count", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("records", AllocationRecord * (4 * DEVICE_SLOTS))]


@dataclass
class Allocation:
    start: int
    size: int
    line: int
    name: str
    init: np.ndarray                # one byte per byte, shared with the workers: written yet?
    free_line: int = 0
    record: int = 0                 # its index in the ledger
    written_by: tuple | None = None  # (kernel, launch line) that wrote it last, until something reads it

    def describe(self):
        return f"`{self.name}` ({self.size} bytes, cudaMalloc at line {self.line})"


class DeviceMemory:
    """The program's cudaMalloc allocations, each alone in a slot (system.Slots), so that
    an address names the allocation it lies in, freed ones included (a freed slot is
    remapped inaccessible and not reused while others are free)."""

    def __init__(self, ledger, names):
        self.slots = system.Slots(DEVICE_SLOTS)
        self.ledger, self.names = ledger, names
        self.by_slot = {}

    def slot_of(self, address):
        k = (address - self.slots.base) >> self.slots.shift
        return k if 0 <= k < self.slots.count else None

    def find(self, address):
        """The allocation (live or freed) whose slot holds `address`, or None: host memory."""
        k = self.slot_of(address) if address else None
        return self.by_slot.get(k) if k is not None else None

    def live(self):
        return [a for a in self.by_slot.values() if not a.free_line]

    def allocate(self, size, line):
        """A new allocation, or None where the device (or this machine) cannot hold it: the
        program's cudaMalloc then returns cudaErrorMemoryAllocation, as on a GPU."""
        free = [k for k in range(self.slots.count) if k not in self.by_slot]
        reusable = sorted((a.record, k) for k, a in self.by_slot.items() if a.free_line)
        if (not free and not reusable) or size > self.slots.largest:
            return None
        k = free[0] if free else reusable[0][1]
        try:
            start = self.slots.place(k, size)
        except KernelRuntimeError:   # the machine could not map it
            return None
        system.protect(start, size, system.PROT_NONE)
        init_map = mmap.mmap(-1, max(size, 1))
        n = self.ledger.count % len(self.ledger.records)
        self.ledger.records[n] = AllocationRecord(start, size, line, 0)
        self.ledger.count += 1
        a = Allocation(start, size, line, self.names.get(str(line), "device memory"),
                       np.frombuffer(init_map, np.uint8)[:size], record=n)
        a.keep = init_map
        self.by_slot[k] = a
        return a

    def release(self, a, line):
        a.free_line = line
        self.ledger.records[a.record].free_line = line
        self.slots.vacate(self.slot_of(a.start))   # a later access faults


class Opened:
    """Allocations readable and writable for the duration of a copy or a launch."""

    def __init__(self, *allocations):
        self.allocations = [a for a in allocations if a is not None and not a.free_line]

    def __enter__(self):
        for a in self.allocations:
            system.protect(a.start, a.size, system.PROT_RW)

    def __exit__(self, *exc):
        for a in self.allocations:
            system.protect(a.start, a.size, system.PROT_NONE)
