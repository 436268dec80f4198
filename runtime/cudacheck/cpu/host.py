"""A whole CUDA C program (host code and kernels) on the CPU runtime.

Build: clang finds the launches (frontend.find_launches), whose line-preserving edits turn
`kernel<<<grid, block, shared, stream>>>(args)` into a call of the launcher; the front end
reads the edited source as a program; g++ compiles it after cuda_cpu.h with the CUDA
runtime API of src/kc_host.h, and links kc_host.cpp beside the usual runtime.

Run: the program's main runs in a forked child of this process, in its own process group,
its stdin, stdout and stderr on files. Nothing of it can harm the caller: a crash, an
endless loop (the whole group is killed at the time limit) or exit() ends the child only,
and the child dies with the caller. In the child, every runtime API call that touches
device memory, and every launch, comes to host_api.py (HostRuntime), which keeps the
program's device memory in device_memory.py's slots and runs each kernel exactly as a
RawKernel launch does (forked_launch.execute). The child reports through a pickle file (exit code,
checked mode's reports and warnings, or the exception that ended it) and, when it dies of a
signal, through a shared record (device_memory.Ledger) that names the faulting address and
the frames of the program's library (src/kc_host.cpp), read back to source lines.
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

from ..config import config
from ..errors import (
    CompileError,
    HostCrashError,
    HostDeviceAccessError,
    KernelError,
    KernelTimeoutError,
    UnsupportedFeatureError,
)
from ..frontend import SOURCE_NAME, analyze, find_launches, joined_launch_brackets
from ..listing import numbered
from . import SourceLines, abi, compiler, forked_launch, system
from .device_memory import Ledger
from .host_api import HostRuntime
from .host_units import compile_unit, defines_main


@dataclass
class ProgramBuild:
    source: str          # as written: what messages quote
    code: str            # with the launches rewritten (same lines)
    program: object      # the front end's Program
    launches: list       # frontend.Launch, by the ID the launcher receives
    path: str            # the compiled library
    check: bool


def build(source, options=(), check=False, host_units=()):
    """Compile a whole program for the CPU runtime (cached like kernels). host_units: its
    plain C and C++ units, (name, text, folder) each (host_units.py)."""
    source = joined_launch_brackets(source)
    launches, edits = find_launches(source, options)
    code = compiler.edited(source, edits)
    exprs = tuple(sorted({launch.kernel for launch in launches if "<" in launch.kernel}))
    program = analyze(code, options, exprs, program=True)
    objects = [compile_unit(name, text, folder, options) for name, text, folder in host_units]
    mains = [name for (name, _, _), obj in zip(host_units, objects) if defines_main(obj)]
    if program.main_params >= 0 and mains or len(mains) > 1:
        where = ([SOURCE_NAME] if program.main_params >= 0 else []) + mains
        raise CompileError(f"main() is defined in {where[0]} and in {where[1]}: a program has one main (the "
                           "linker refuses the second).", backend="cpu")
    main_params = program.main_params if program.main_params >= 0 else compiler.MAIN_IN_HOST_UNIT
    if not mains and program.main_params < 0:
        raise CompileError(f"{SOURCE_NAME} has no main(): run_program runs a whole program. For kernels alone, "
                           "use cudacheck.RawModule or RawKernel.", backend="cpu")
    clustered = sorted({k for k in (launch.kernel for launch in launches) if k in program.kernels and
                        program.kernels[k].cluster})
    if clustered:   # (a kernel launch here passes no __cluster_dims__ to the workers)
        raise UnsupportedFeatureError(
            f"kernel `{clustered[0]}` runs in thread-block clusters (__cluster_dims__), which the CPU runtime runs "
            "for a kernel launched from Python (cudacheck.RawModule), not yet from a whole program's host code. It "
            "can run on a GPU with backend='gpu'.", backend="cpu")
    path = compiler.build(code, program, [], options, checked=check, main_params=main_params, listing=source,
                          host_objects=objects)
    return ProgramBuild(source, code, program, launches, str(path), check)


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str
    reports: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


def run(pb, args=(), stdin=None, time_limit=None, cwd=None):
    """Run a built program in a forked child (in the folder `cwd`, else this process's);
    return its Outcome or raise its KernelError (with the output so far as the exception's
    `stdout` and `stderr`)."""
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
                _child(pb, paths, ledger, argv, deadline - 0.25, cwd)
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


def _child(pb, paths, ledger, argv, deadline, cwd):
    os.setpgid(0, 0)
    if cwd is not None:
        os.chdir(cwd)
    system.die_with_parent()
    for fd, name, flags in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY | os.O_CREAT),
                            (2, "stderr", os.O_WRONLY | os.O_CREAT)):
        f = os.open(paths[name], flags, 0o600)
        os.dup2(f, fd)
        os.close(f)
    try:
        lib = compiler.load(pb.path)
    except KernelError as e:   # a function called and defined nowhere: the parent raises it
        with open(paths["result"], "wb") as f:
            pickle.dump({"error": e, "exit_code": None, "reports": [], "warnings": []}, f)
        os._exit(0)
    rt = HostRuntime(pb, lib, ledger, paths["result"], deadline)
    callbacks = rt.callbacks()
    c_argv = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
    abi.bind(lib, "kc_program_run")(ctypes.byref(callbacks), ctypes.byref(ledger.crash), len(argv), c_argv)


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
    name = forked_launch.SIGNAL_NAMES.get(sig, f"signal {sig}")
    told = outputs["stderr"].strip().splitlines()[-1:] if sig == signal.SIGABRT else []
    return HostCrashError(
        f"the program's host code crashed with {name}{at}" + (f" ({told[0]})" if told else "")
        + (f", at address {crash.address:#x}" if sig in (signal.SIGSEGV, signal.SIGBUS) else "") + f".{where}\n"
        "Look for a pointer that is null, uninitialized or freed, or an index past a host array's end.", line)
