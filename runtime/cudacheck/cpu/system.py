"""The operating system, as the CPU runtime uses it: the C library through ctypes, memory
mappings (the slots a launch's arrays live in, the arena its workers report into, page
protection) and waiting for child processes within a deadline. Nothing here knows about
kernels: forked_launch.py (a launch) and host.py (a whole program) build on it.
"""
import ctypes
import mmap
import os
import select
import signal
import threading
import time

import numpy as np

from ..errors import KernelRuntimeError

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.fflush.argtypes = [ctypes.c_void_p]
PROT_NONE, PROT_READ, PROT_RW = 0, 1, 3
MAP_SHARED, MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS, MAP_NORESERVE = 0x01, 0x02, 0x10, 0x20, 0x4000
MAP_FAILED = ctypes.c_void_p(-1).value
PR_SET_PDEATHSIG = 1


def cores():
    """The cores this process may run on: the default number of workers."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def pages(nbytes):
    """nbytes rounded up to whole pages (one page at least)."""
    return -(-max(nbytes, 1) // mmap.PAGESIZE) * mmap.PAGESIZE


def protect(start, nbytes, prot):
    """Set the protection (PROT_NONE, PROT_READ, PROT_RW) of the pages of [start, start + nbytes)."""
    _libc.mprotect(start, pages(nbytes), prot)


def unmap(start, nbytes):
    """Give back a mapping the C side made (munmap)."""
    _libc.munmap(ctypes.c_void_p(start), ctypes.c_size_t(nbytes))


def flush_c_stdio():
    """Flush the C library's output buffers (what a program's printf has not written yet)."""
    _libc.fflush(None)


def die_with_parent():
    """Have the kernel kill this process when the process that forked it ends."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Slots:
    """The arrays of a launch, each alone in a slot of 2**shift bytes of address space,
    at the slot's middle, mapped MAP_SHARED so that the workers' writes come back. Nothing
    else is ever mapped in a slot: an address names the array it was computed from, however
    far past either end an index runs (checked mode's provenance; src/kc_check.h),
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

    def _middle(self, slot):
        return self.base + (slot << self.shift) + (1 << (self.shift - 1))

    def place(self, slot, nbytes):
        """The address of `nbytes` mapped at slot `slot`'s middle."""
        if slot >= self.count:
            raise KernelRuntimeError(f"the CPU runtime launches kernels with at most {self.count} distinct arrays")
        if nbytes > self.largest:
            raise KernelRuntimeError(f"an array of {nbytes} bytes is larger than the CPU runtime's slots "
                                     f"({1 << (self.shift - 1)} bytes)")
        at = self._middle(slot)
        size = pages(nbytes)
        if self.mapped[slot] < size:
            got = _libc.mmap(at, size, PROT_RW, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
            if got != at:
                raise KernelRuntimeError(f"the CPU runtime could not map {size} bytes for an array: "
                                         f"{os.strerror(ctypes.get_errno())}")
            self.mapped[slot] = size
        return at

    def vacate(self, slot):
        """The pages of slot `slot` go; the slot stays reserved and inaccessible, so that a
        later access there faults."""
        _libc.mmap(self._middle(slot), self.mapped[slot], PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0)
        self.mapped[slot] = 0


class Arena:
    """One growing MAP_SHARED mapping, reused by every launch of a process: the workers'
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


def wait_for(pids, deadline, group=False):
    """Wait for every child in `pids`; return {pid: wait status}, or None if the deadline
    (time.monotonic()) passed. Children still running are killed (`group`: with their
    process groups) and reaped on the way out, whatever happens."""
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
                _kill(pid, group)


def _kill(pid, group):
    """SIGKILL a child (and its process group), then reap it."""
    for kill in ((os.killpg, os.kill) if group else (os.kill,)):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
