"""A whole CUDA C program (host code and kernels) on the CPU runtime.

Build: clang finds the launches (frontend.find_launches), whose line-preserving edits turn
`kernel<<<grid, block, shared, stream>>>(args)` into a call of the launcher; the front end
reads the edited source as a program; g++ compiles it after cuda_cpu.h with the CUDA
runtime API of include/kc_host.h, and links kc_host.cpp beside the usual runtime.

Run: the program's main runs in a forked child of this process, in its own process group,
its stdin, stdout and stderr on files. Nothing of it can harm the caller: a crash, an
endless loop (the whole group is killed at the time limit) or exit() ends the child only,
and the child dies with the caller. In the child, every runtime API call that touches
device memory comes here (HostRuntime): device memory lives in slots of address space as
a RawKernel's arrays do, mapped shared, PROT_NONE while host code runs (a host dereference
faults, as it does on a GPU) and readable by the workers a launch forks, which run the
kernel exactly as a RawKernel launch does (runner.execute). The child reports through a
pickle file (exit code, checked mode's reports and warnings, or the exception that ended
it) and, when it dies of a signal, through a shared record that names the faulting address
and the frames of the program's library (include/kc_host.cpp), read back to source lines.
"""
import ctypes
import mmap
import os
import pickle
import signal
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..config import config
from ..errors import (
    CompileError,
    DeviceMemoryError,
    DoubleFreeError,
    HostCrashError,
    HostDeviceAccessError,
    KernelError,
    KernelRuntimeError,
    KernelTimeoutError,
    LaunchConfigError,
    MemoryLeakWarning,
    ResultNeverCopiedWarning,
    UninitializedReadError,
    UseAfterFreeError,
)
from ..frontend import SOURCE_NAME, analyze, find_launches
from ..launch import DEFAULT_SHARED_LIMIT, OPTIN_SHARED_LIMIT, check_launch
from ..listing import numbered
from . import SourceLines, compiler, findings, runner, share_device_memory, system

# cudaError_t values (include/kc_host.h), for what a call returns.
CUDA_ERRORS = {"cudaSuccess": 0, "cudaErrorInvalidValue": 1, "cudaErrorMemoryAllocation": 2}
H2H, H2D, D2H, D2D, DEFAULT = range(5)
KIND_NAMES = ["cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost", "cudaMemcpyDeviceToDevice",
              "cudaMemcpyDefault"]
DEVICE_SLOTS = 256
EXIT_REPORTED = 86   # the child's exit status when it ended with an exception in its report


@dataclass
class ProgramBuild:
    source: str          # as written: what messages quote
    code: str            # with the launches rewritten (same lines)
    program: object      # the front end's Program
    launches: list       # frontend.Launch, by the ID the launcher receives
    path: str            # the compiled library
    check: bool


def build(source, options=(), check=False):
    """Compile a whole program for the CPU runtime (cached like kernels)."""
    launches, edits = find_launches(source, options)
    code = compiler.edited(source, edits)
    exprs = tuple(sorted({launch.kernel for launch in launches if "<" in launch.kernel}))
    program = analyze(code, options, exprs, program=True)
    if program.main_params < 0:
        raise CompileError(f"{SOURCE_NAME} has no main(): run_program runs a whole program. For kernels alone, "
                           "use cudacheck.RawModule or RawKernel.", backend="cpu")
    path = compiler.build(code, program, [], options, checked=check, main_params=program.main_params, listing=source)
    return ProgramBuild(source, code, program, launches, str(path), check)


# ---- shared between the child and the caller ----------------------------------------------

class HostCrash(ctypes.Structure):   # include/kc_host.cpp
    _fields_ = [("signal", ctypes.c_int32), ("is_write", ctypes.c_int32), ("address", ctypes.c_uint64),
                ("nframes", ctypes.c_int32), ("pad", ctypes.c_int32), ("frames", ctypes.c_uint64 * 32)]


class AllocationRecord(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint64), ("size", ctypes.c_uint64), ("line", ctypes.c_int32),
                ("free_line", ctypes.c_int32)]


class Ledger(ctypes.Structure):
    """What the caller reads after the child died: its crash, and its allocations (to name
    the one a faulting address lies in)."""
    _fields_ = [("crash", HostCrash), ("count", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("records", AllocationRecord * (4 * DEVICE_SLOTS))]


class HostCallbacks(ctypes.Structure):
    _fields_ = [("malloc", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64,
                                            ctypes.c_int)),
                ("free", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)),
                ("memcpy", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                            ctypes.c_int, ctypes.c_int)),
                ("memset", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                                            ctypes.c_int)),
                ("launch", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                            ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                                            ctypes.c_uint64, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p))),
                ("errors_checked", ctypes.CFUNCTYPE(None)),
                ("synchronize", ctypes.CFUNCTYPE(None)),
                ("end", ctypes.CFUNCTYPE(None, ctypes.c_int))]


# ---- device memory, in the child ----------------------------------------------------------

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


# ---- the runtime API's calls, in the child ------------------------------------------------

class HostRuntime:
    """The Python side of include/kc_host.cpp's calls. A plain run answers a misuse as a GPU
    does (an error code); checked mode raises the finding, naming the line."""

    def __init__(self, pb, lib, ledger, result_path, deadline):
        self.pb, self.lib, self.check = pb, lib, pb.check
        self.memory = DeviceMemory(ledger, pb.program.allocations)
        self.result_path, self.deadline = result_path, deadline
        self.lines = SourceLines(pb.path)
        self.devices, self.device_section = share_device_memory(lib, pb.program)
        self.reports, self.warnings = [], []
        self.unchecked = []          # launches that failed since the program last read the error state
        # Device printf waits here until the program synchronizes, as a GPU's printf buffer does.
        self.device_output = os.memfd_create("device-printf")
        self.spawn = lib.kc_spawn_body
        self.spawn.restype = ctypes.c_int
        self.spawn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

    # Each callback runs under guard: an exception ends the program with it.
    def callbacks(self):
        def guard(fn, default=None):
            def call(*args):
                try:
                    return fn(*args)
                except BaseException as e:   # noqa: BLE001 - whatever it is, it ends the program, reported
                    self.finish(None, e)
                return default
            return call
        self._callbacks = HostCallbacks(*[t(guard(getattr(self, name), 0 if name not in ("errors_checked", "end")
                                                    else None))
                                          for (name, t) in HostCallbacks._fields_])
        return self._callbacks

    def refuse(self, error):
        """A misuse: checked mode raises it; a plain run returns the code a GPU returns."""
        if self.check:
            raise error
        return CUDA_ERRORS["cudaErrorInvalidValue"]

    def quote(self, line):
        return numbered(self.pb.source, {line}) if line else ""

    def malloc(self, out, size, line):
        a = self.memory.allocate(size, line)
        if a is None:
            out[0] = None
            return CUDA_ERRORS["cudaErrorMemoryAllocation"]
        out[0] = a.start
        return 0

    def free(self, ptr, line):
        a = self.memory.find(ptr)
        if a is None or ptr != a.start:
            what = "host memory" if a is None else f"inside {a.describe()}, not its start"
            return self.refuse(DeviceMemoryError(
                f"cudaFree at line {line} is given {ptr:#x}, {what}: cudaFree takes a pointer cudaMalloc returned; "
                f"host memory is released with free() or delete[].\n{self.quote(line)}", line=line))
        if a.free_line:
            return self.refuse(DoubleFreeError(
                f"cudaFree at line {line} frees {a.describe()} a second time: line {a.free_line} freed it already. "
                f"Free each allocation once (and set the pointer to nullptr after freeing it, so that a second "
                f"cudaFree(nullptr) does nothing).\n{numbered(self.pb.source, {a.free_line, line})}",
                line=line, array=a.name, free_line=a.free_line))
        self.result_unread(a, f"freed at line {line}")
        self.memory.release(a, line)
        return 0

    def result_unread(self, a, when):
        if self.check and a.written_by:
            kernel, at = a.written_by
            self.warnings.append(ResultNeverCopiedWarning(
                f"kernel `{kernel}` (launched at line {at}) wrote {a.describe()}, and nothing read it before it was "
                f"{when}: no cudaMemcpy back to the host, no later kernel. If the host needs the result, copy it "
                f"back with cudaMemcpy(host, {a.name}, bytes, cudaMemcpyDeviceToHost) after the launch.", line=at))

    def _operand(self, ptr, device, size, line, call, role):
        """Check one side of a copy: the allocation it lies in (None for host memory)."""
        a = self.memory.find(ptr)
        if a is not None and a.free_line:
            raise UseAfterFreeError(
                f"{call} at line {line} uses {a.describe()} as its {role}, after cudaFree freed it at line "
                f"{a.free_line}. Free device memory only after its last use.\n"
                f"{numbered(self.pb.source, {a.free_line, line})}", line=line, array=a.name, free_line=a.free_line)
        if device and a is None:
            raise DeviceMemoryError(
                f"{call} at line {line}: its {role} is host memory, where the direction says device memory. Check "
                f"the order of the arguments, cudaMemcpy(destination, source, bytes, kind), and the kind "
                f"(cudaMemcpyHostToDevice copies from the host to the device).\n{self.quote(line)}", line=line)
        if not device and a is not None:
            raise DeviceMemoryError(
                f"{call} at line {line}: its {role} is {a.describe()}, device memory, where the direction says host "
                f"memory. Check the order of the arguments, cudaMemcpy(destination, source, bytes, kind), and the "
                f"kind.\n{self.quote(line)}", line=line, array=a.name)
        if a is not None and ptr - a.start + size > a.size:
            off = ptr - a.start
            raise DeviceMemoryError(
                f"{call} at line {line} {'writes' if role == 'destination' else 'reads'} {size} bytes "
                f"{f'from offset {off} ' if off else ''}of {a.describe()}: {ptr - a.start + size - a.size} bytes past "
                f"its end (a GPU returns cudaErrorInvalidValue). The size is in bytes: n * sizeof(element), at most "
                f"the size given to cudaMalloc.\n{numbered(self.pb.source, {a.line, line})}",
                line=line, array=a.name, size=size, extent=a.size)
        return a

    def synchronize(self):
        """A point where CUDA flushes device printf (a launch's start, a blocking copy or
        memset, cudaDeviceSynchronize and the stream and event synchronizations, the end):
        the host's own output so far goes first, then what kernels printed since the last."""
        system.flush_c_stdio()
        size = os.lseek(self.device_output, 0, os.SEEK_END)
        if not size:
            return
        os.lseek(self.device_output, 0, os.SEEK_SET)
        data = os.read(self.device_output, size)
        os.ftruncate(self.device_output, 0)
        os.lseek(self.device_output, 0, os.SEEK_SET)
        while data:
            data = data[os.write(1, data):]

    def memcpy(self, dst, src, size, kind, line):
        self.synchronize()
        self.check_launches()
        if kind not in range(5):
            return self.refuse(DeviceMemoryError(f"cudaMemcpy at line {line}: {kind} is not a cudaMemcpyKind.\n"
                                                 f"{self.quote(line)}", line=line))
        call = f"cudaMemcpy({KIND_NAMES[kind]})"
        try:
            if kind == DEFAULT:   # the direction from the pointers, as unified addressing does
                d = self._operand(dst, self.memory.find(dst) is not None, size, line, call, "destination")
                s = self._operand(src, self.memory.find(src) is not None, size, line, call, "source")
            else:
                d = self._operand(dst, kind in (H2D, D2D), size, line, call, "destination")
                s = self._operand(src, kind in (D2H, D2D), size, line, call, "source")
        except DeviceMemoryError as e:
            return self.refuse(e)
        if s is not None and self.check:
            self.check_initialized(s, src - s.start, size, line, d is None)
        with Opened(d, s):
            ctypes.memmove(dst, src, size)
        if d is not None:
            d.init[dst - d.start:dst - d.start + size] = s.init[src - s.start:src - s.start + size] if s else 1
            d.written_by = None
        if s is not None:
            s.written_by = None
        return 0

    def check_initialized(self, a, off, size, line, to_host):
        missing = np.flatnonzero(a.init[off:off + size] == 0)
        if not len(missing) or not to_host:
            return
        first, count = off + int(missing[0]), len(missing)
        raise UninitializedReadError(
            f"cudaMemcpy at line {line} copies {size} bytes of {a.describe()} to the host, and {count} of them "
            f"(the first at byte {first}) were never written: no cudaMemcpy, cudaMemset or kernel stored them, so the "
            f"host receives whatever the memory held. If a kernel should have written them, check that its grid "
            f"covers every element: round the number of blocks up, (n + threads - 1) / threads, and guard the "
            f"kernel with `if (i < n)`.\n{numbered(self.pb.source, {a.line, line})}",
            line=line, array=a.name, index=(first,))

    def memset(self, ptr, value, size, line):
        self.synchronize()
        self.check_launches()
        try:
            a = self._operand(ptr, True, size, line, "cudaMemset", "destination")
        except DeviceMemoryError as e:
            return self.refuse(e)
        with Opened(a):
            ctypes.memset(ptr, value, size)
        a.init[ptr - a.start:ptr - a.start + size] = 1
        return 0

    def errors_checked(self):
        self.unchecked.clear()

    def check_launches(self):
        """Checked mode: a launch that failed, and the program went on without asking
        cudaGetLastError, is reported at its next use of device memory or at its end."""
        if self.check and self.unchecked:
            line, name, error = self.unchecked[0]
            raise LaunchConfigError(
                f"the launch of kernel `{name}` at line {line} did not run: {error}\nA GPU does not run it either; "
                f"cudaGetLastError() returns {error.cuda_error}, but this program never asked, so it went on as if "
                f"the kernel had run. Check every launch: `kernel<<<...>>>(...); CHECK(cudaGetLastError());`.\n"
                f"{self.quote(line)}", line)

    def launch(self, ident, line, body, grid, block, shared, optin, argv):
        self.synchronize()
        self.check_launches()
        launch = self.pb.launches[ident]
        kernel = self.pb.program.kernels[launch.kernel]
        try:
            cfg = check_launch(tuple(grid[:3]), tuple(block[:3]), shared, optin=None if optin < 0 else optin,
                               static=max(self.pb.program.static_shared.get(kernel.name, 0), 0))
        except LaunchConfigError as e:
            self.unchecked.append((line, kernel.name, e))
            return CUDA_ERRORS[e.cuda_error]
        used, arrays, extents = {}, [], []
        for i, p in enumerate(kernel.params):
            if not p.pointer:
                extents.append(0)
                continue
            ptr = ctypes.c_void_p.from_address(argv[i]).value or 0
            a = self.memory.find(ptr)
            if ptr and (a is None or a.free_line):
                what = (f"{a.describe()}, which cudaFree freed at line {a.free_line}" if a is not None else
                        "host memory: a GPU cannot read it (the kernel would stop with an illegal address)")
                error = (UseAfterFreeError if a is not None else DeviceMemoryError)(
                    f"the launch of kernel `{kernel.name}` at line {line} passes `{p.name}` = {what}. Pass device "
                    f"memory from cudaMalloc, copied in with cudaMemcpy.\n{self.quote(line)}",
                    line=line, array=p.name)
                raise error
            extents.append(a.size - (ptr - a.start) if a is not None else 0)
            if a is not None:
                used.setdefault(a.start, (i, p))
                arrays.append((p.name, ptr, a.size - (ptr - a.start)))
        check = None
        workers = runner.worker_count(cfg)
        allocations = []
        if self.check:
            for a in self.memory.live():
                i, p = used.get(a.start, (-1, None))
                allocations.append((a.start, a.size, a.init.ctypes.data, i, p.itemsize if p else 1,
                                    p.name if p else a.name))
            check = runner.CheckSetup(kernel, cfg, workers, [s.name for s in self.pb.program.shared], self.lines,
                                      devices=list(self.devices.items()), device_section=self.device_section)
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise KernelTimeoutError(f"the program ran out of its time limit before the launch at line {line}")
        context = findings.Context(kernel, cfg, self.pb.source, self.lines, self.pb.program)
        plan = runner.LaunchPlan(kernel, cfg, lambda desc, pids: self.spawn(body, desc, pids), time_limit=left,
                                 workers=workers,
                                 shared_limit=DEFAULT_SHARED_LIMIT if optin < 0 else OPTIN_SHARED_LIMIT,
                                 check=check, context=context, output_fd=self.device_output)
        with Opened(*self.memory.live()):
            report = runner.execute(plan, runner.LaunchMemory(argv, arrays, extents, self.memory.slots, allocations))
        if report is not None:
            report.line = line
            self.reports.append(report)
            by_name = {p.name: self.memory.find(ctypes.c_void_p.from_address(argv[i]).value or 0)
                       for i, p in enumerate(kernel.params) if p.pointer}
            for name, counts in report.global_counts.items():
                a = by_name.get(name)
                if a is not None and counts.loads:
                    a.written_by = None
                if a is not None and counts.stores:
                    a.written_by = (kernel.name, line)
        return 0

    def end(self, code):
        self.synchronize()
        self.check_launches()
        if self.check:
            for a in self.memory.live():
                self.result_unread(a, "the program ended")
                self.warnings.append(MemoryLeakWarning(
                    f"{a.describe()} was never freed: the program ended with it allocated. A process's device "
                    f"memory is released when it exits, but a long-running program (or a notebook) leaks it: "
                    f"cudaFree({a.name}) once it is no longer needed.", line=a.line))
        self.finish(code, None)

    def finish(self, code, error):
        """Write what the caller reads; on an exception, end the child now."""
        with open(self.result_path, "wb") as f:
            pickle.dump({"exit_code": code, "error": error, "reports": self.reports, "warnings": self.warnings}, f)
        if error is not None:
            system.flush_c_stdio()
            os._exit(EXIT_REPORTED)


# ---- the caller's side --------------------------------------------------------------------

@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str
    reports: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


def run(pb, args=(), stdin=None, time_limit=None):
    """Run a built program in a forked child; return its Outcome or raise its KernelError
    (with the output so far as the exception's `stdout` and `stderr`)."""
    limit = config.time_limit if time_limit is None else time_limit
    ledger_map = mmap.mmap(-1, ctypes.sizeof(Ledger))
    ledger = Ledger.from_buffer(ledger_map)
    with tempfile.TemporaryDirectory(prefix="cudacheck-program-") as tmp:
        paths = {name: os.path.join(tmp, name) for name in ("stdin", "stdout", "stderr", "result")}
        with open(paths["stdin"], "wb") as f:
            f.write(stdin.encode() if isinstance(stdin, str) else (stdin or b""))
        # The child's own kernel launches stop themselves just inside the limit, with the
        # launch's message; the child's group is killed a moment after it.
        deadline = time.monotonic() + limit
        argv = ["program", *map(str, args)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # fork() in a threaded process (Jupyter)
            pid = os.fork()
        if pid == 0:
            try:
                _child(pb, paths, ledger, argv, deadline - 0.25)
            finally:
                os._exit(70)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass   # the child did it first, or already ended
        # Past the deadline, the child's whole process group (its workers too) is killed.
        waited = system.wait_for([pid], deadline + 1.0, group=True)
        status = None if waited is None else waited[pid]
        del ledger
        outputs = {}
        for name in ("stdout", "stderr"):
            with open(paths[name], "rb") as f:
                outputs[name] = f.read().decode(errors="replace")
        result = None
        if os.path.exists(paths["result"]) and os.path.getsize(paths["result"]):
            with open(paths["result"], "rb") as f:
                result = pickle.load(f)
    ledger = Ledger.from_buffer_copy(ledger_map)
    ledger_map.close()
    error = _outcome_error(pb, status, result, ledger, limit, outputs)
    if error is not None:
        error.stdout, error.stderr = outputs["stdout"], outputs["stderr"]
        raise error
    return Outcome(result["exit_code"], outputs["stdout"], outputs["stderr"], result["reports"], result["warnings"])


def _child(pb, paths, ledger, argv, deadline):
    os.setpgid(0, 0)
    system.die_with_parent()
    for fd, name, flags in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY | os.O_CREAT),
                            (2, "stderr", os.O_WRONLY | os.O_CREAT)):
        f = os.open(paths[name], flags, 0o600)
        os.dup2(f, fd)
        os.close(f)
    lib = compiler.load(pb.path)
    rt = HostRuntime(pb, lib, ledger, paths["result"], deadline)
    callbacks = rt.callbacks()
    c_argv = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
    main = ctypes.cast(lib.kc_main, ctypes.c_void_p)
    lib.kc_program_run.restype = ctypes.c_int
    lib.kc_program_run(ctypes.byref(callbacks), ctypes.byref(ledger.crash), main, len(argv), c_argv)


def _outcome_error(pb, status, result, ledger, limit, outputs):
    if status is None:
        return KernelTimeoutError(
            f"the program did not finish within the time limit of {limit:g} s and was stopped (its kernels had "
            f"finished: the time went in host code). Look for a loop in main whose condition never changes. If the "
            f"program is merely slow, raise the limit: time_limit=seconds (or cudacheck.config.time_limit).")
    if result is not None and result["error"] is not None:
        return result["error"]
    if result is not None and os.WIFEXITED(status):
        return None
    crash = ledger.crash
    sig = crash.signal or (os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0)
    if not sig:
        return KernelError(f"the program's process ended unexpectedly (status {status})")
    offsets = [int(crash.frames[i]) for i in range(crash.nframes)]
    line = next((n for n in SourceLines(pb.path)(offsets) if n), 0) if offsets else 0
    at = f" at line {line}" if line else ""
    where = f"\n{numbered(pb.source, {line})}" if line else ""
    records = [ledger.records[i] for i in range(min(ledger.count, len(ledger.records)))]
    hit = next((r for r in reversed(records) if r.start <= crash.address < r.start + system.pages(r.size)), None)
    if sig in (signal.SIGSEGV, signal.SIGBUS) and hit is not None:
        name = pb.program.allocations.get(str(hit.line), "device memory")
        verb = {1: "wrote", 0: "read"}.get(crash.is_write, "accessed")
        freed = f", after cudaFree freed it at line {hit.free_line}" if hit.free_line else ""
        return HostDeviceAccessError(
            f"host code {verb} device memory{at}: byte {crash.address - hit.start} of `{name}` (cudaMalloc at line "
            f"{hit.line}){freed}. A cudaMalloc pointer is an address on the GPU; host code cannot dereference it (on "
            f"a GPU the program crashes with a segmentation fault too). Copy the data to a host array with "
            f"cudaMemcpy(host, {name}, bytes, cudaMemcpyDeviceToHost) and use that.{where}", line)
    name = runner.SIGNAL_NAMES.get(sig, f"signal {sig}")
    told = outputs["stderr"].strip().splitlines()[-1:] if sig == signal.SIGABRT else []
    return HostCrashError(
        f"the program's host code crashed with {name}{at}" + (f" ({told[0]})" if told else "")
        + (f", at address {crash.address:#x}" if sig in (signal.SIGSEGV, signal.SIGBUS) else "") + f".{where}\n"
        "Look for a pointer that is null, uninitialized or freed, or an index past a host array's end.", line)
