"""A whole program's CUDA runtime API, in the child that runs it (cpu/host.py): the Python
side of src/kc_host.cpp's calls (abi.HostCallbacks). Every call that touches device memory
(cudaMalloc, cudaFree, cudaMemcpy, cudaMemset) is checked against the program's allocations
(device_memory.py), and every launch runs its kernel in workers exactly as a RawKernel launch
does (forked_launch.execute). A plain run answers a misuse as a GPU does (an error code); checked
mode raises the finding, naming the line. The child reports to the caller through a pickle
file: its exit code, checked mode's reports and warnings, or the exception that ended it."""
import ctypes
import os
import pickle
import time
import warnings

import numpy as np

from ..errors import (
    DeviceMemoryError,
    DoubleFreeError,
    KernelTimeoutError,
    LaunchConfigError,
    LaunchFailedWarning,
    MemoryLeakWarning,
    ResultNeverCopiedWarning,
    UninitializedReadError,
    UnsupportedFeatureError,
    UseAfterFreeError,
)
from ..launch import DEFAULT_SHARED_LIMIT, OPT_IN_RUNTIME_API, OPTIN_SHARED_LIMIT, as_cooperative, check_launch
from ..listing import numbered
from . import SourceLines, abi, findings, forked_launch, share_device_memory, system, texture_writes
from .checked import CheckSetup
from .device_memory import DeviceMemory, Opened

# cudaError_t values (src/kc_host.h), for what a call returns.
CUDA_ERRORS = {"cudaSuccess": 0, "cudaErrorInvalidValue": 1, "cudaErrorMemoryAllocation": 2,
                "cudaErrorLaunchOutOfResources": 701, "cudaErrorCooperativeLaunchTooLarge": 720}
H2H, H2D, D2H, D2D, DEFAULT = range(5)
KIND_NAMES = ["cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost", "cudaMemcpyDeviceToDevice",
              "cudaMemcpyDefault"]
EXIT_REPORTED = 86   # the child's exit status when it ended with an exception in its report


class HostRuntime:
    """The Python side of src/kc_host.cpp's calls. A plain run answers a misuse as a GPU
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
        self.spawn = abi.bind(lib, "kc_spawn_body")

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
        self._callbacks = abi.HostCallbacks(*[t(guard(getattr(self, name), 0 if name not in ("errors_checked", "end")
                                                        else None))
                                              for (name, t) in abi.HostCallbacks._fields_])
        return self._callbacks

    def refuse(self, error):
        """A misuse: checked mode raises it; a plain run returns the code a GPU returns."""
        if self.check:
            raise error
        return CUDA_ERRORS["cudaErrorInvalidValue"]

    def quote(self, line):
        return numbered(self.pb.source, {line}) if line else ""

    def held(self):
        return sum(a.size for a in self.memory.live())

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
                f"{self.quote(line)}", line, cuda_error=error.cuda_error)

    @staticmethod
    def texture_watch(kernel, argv):
        """Checked mode: the texels of the launch's texture objects (its cudaTextureObject_t
        arguments), to tell whether the kernel writes them (texture_writes.py)."""
        spans = []
        for i, p in enumerate(kernel.params):
            if not p.pointer and "cudaTextureObject_t" in p.text:
                span = texture_writes.texel_span(ctypes.c_uint64.from_address(argv[i]).value)
                if span is not None:
                    spans.append((p.name, *span))
        return texture_writes.Watch(kernel.name, spans)

    def launch(self, ident, line, body, grid, block, shared, optin, argv):
        self.synchronize()
        self.check_launches()
        if ident < 0:   # frontend/launches.py: _dependent_launch, an instance no call names
            raise UnsupportedFeatureError(
                f"the launch at line {line} is in a function template, of a kernel instance made from the template's "
                f"parameters, and this instance of the template is called where the CPU runtime cannot see its "
                f"arguments (from another template, or through a function pointer). Call the template with its "
                f"arguments written out (`run<192, 8>(...)`), or run the program on a GPU (backend='gpu')."
                f"\n{self.quote(line)}", backend="cpu")
        launch = self.pb.launches[ident]
        kernel = self.pb.program.kernels[launch.kernel]
        try:
            static = max(self.pb.program.static_shared.get(kernel.name, 0), 0)
            cfg = check_launch(tuple(grid[:3]), tuple(block[:3]), shared, optin=None if optin < 0 else optin,
                               static=static, opt_in_how=OPT_IN_RUNTIME_API)
            if launch.cooperative:
                cfg = as_cooperative(cfg, kernel.name, static)
        except LaunchConfigError as e:
            self.unchecked.append((line, kernel.name, e))
            self.warnings.append(LaunchFailedWarning(
                f"the launch of kernel `{kernel.name}` at line {line} did not run: cudaLaunchKernel returned "
                f"{e.cuda_error} (error {CUDA_ERRORS[e.cuda_error]}): {e}. On a GPU it does not run either, and "
                f"nothing says so unless the program asks cudaGetLastError() (compute-sanitizer reports it: \"Program "
                f"hit {e.cuda_error} (error {CUDA_ERRORS[e.cuda_error]}) ... on CUDA API call to cudaLaunchKernel\")."
                f"\n{self.quote(line)}",
                line=line, kernel=kernel.name, cuda_error=e.cuda_error))
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
        workers = forked_launch.worker_count(cfg)
        allocations = []
        if self.check:
            for a in self.memory.live():
                i, p = used.get(a.start, (-1, None))
                allocations.append((a.start, a.size, a.init.ctypes.data, i, p.itemsize if p else 1,
                                    p.name if p else a.name))
            check = CheckSetup(kernel, cfg, workers, [s.name for s in self.pb.program.shared], self.lines,
                                      devices=list(self.devices.items()), device_section=self.device_section)
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise KernelTimeoutError(f"the program ran out of its time limit before the launch at line {line}")
        context = findings.Context(kernel, cfg, self.pb.source, self.lines, self.pb.program)
        plan = forked_launch.LaunchPlan(kernel, cfg, lambda desc, pids: self.spawn(body, desc, pids), time_limit=left,
                                 workers=workers,
                                 shared_limit=DEFAULT_SHARED_LIMIT if optin < 0 else OPTIN_SHARED_LIMIT,
                                 check=check, context=context, output_fd=self.device_output)
        with Opened(*self.memory.live()), warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")   # checked mode's warnings (SameValueWriteWarning): the program's
            launch_memory = forked_launch.LaunchMemory(argv, arrays, extents, self.memory.slots, allocations)
            watch = self.texture_watch(kernel, argv) if self.check else None
            try:
                report = forked_launch.execute(plan, launch_memory)
            except LaunchConfigError as e:   # found by the kernel's first statement (__launch_bounds__)
                self.unchecked.append((line, kernel.name, e))
                return CUDA_ERRORS[e.cuda_error]
            if watch is not None:
                watch.check()
        self.warnings.extend(w.message for w in warned)
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
