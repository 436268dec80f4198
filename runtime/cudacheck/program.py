"""Whole CUDA C programs, host code included: run_program(source) compiles a .cu file with
a main and runs it, on a GPU with nvcc or on the CPU runtime (cpu/host.py), and returns
what it printed and its exit code.

    result = cudacheck.run_program(open("program_tiled.cu").read(), check=True)
    print(result.stdout)
"""
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field

from .config import config
from .errors import CompileError, KernelCrashError, KernelError, KernelTimeoutError
from .gpu import device_present
from .listing import compile_error_report
from .module import check_backend


@dataclass
class ProgramResult:
    """What a program left: its output and exit code; on the CPU runtime, the warnings
    (cudacheck.ProgramWarning, each with its `.line`): in both modes LaunchFailedWarning for
    each launch that did not run (whether or not the program asked cudaGetLastError), in
    checked mode also memory never freed and results never copied back; and in checked
    mode each launch's LaunchReport (counts; `.line` is the launch's line)."""
    stdout: str
    stderr: str
    exit_code: int
    backend: str
    reports: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def __str__(self):
        return self.stdout + self.stderr + (f"(exit code {self.exit_code})\n" if self.exit_code else "")


def nvcc_path():
    """nvcc on PATH or in /usr/local/cuda/bin, or None."""
    return shutil.which("nvcc") or next((p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)


def gpu_present():
    """True when nvcc and an NVIDIA GPU (gpu.device_present) are both here."""
    return nvcc_path() is not None and device_present()


def run_program(source, backend="auto", check=False, args=(), options=(), time_limit=None, stdin=None):
    """Compile and run a whole CUDA C program (a source with a main).

    backend: "gpu" (nvcc and a GPU), "cpu" (the CPU runtime), or "auto" (the GPU when nvcc
    and a GPU are present). check: checked mode (CPU runtime): kernels checked as RawKernel
    launches are, and host code's use of device memory too. args: the program's command-line
    arguments; options: compiler options (-DNAME=value, -Ipath); time_limit: seconds
    (default cudacheck.config.time_limit); stdin: text or bytes for its standard input.

    Returns a ProgramResult. Raises a KernelError subclass for what stops the program:
    CompileError, KernelTimeoutError, KernelCrashError (HostCrashError, HostDeviceAccessError
    for host code), and in checked mode the CheckError family (kernel findings,
    DeviceMemoryError, UseAfterFreeError, DoubleFreeError, UninitializedReadError,
    LaunchConfigError for a failed launch the program never checked). The exception's
    `stdout` and `stderr` hold what the program printed before it.

    On the CPU runtime the program's host code starts as a fresh process does: memory it
    malloc's (or new's) and never wrote reads zero (src/kc_host_heap.cpp).
    """
    if not isinstance(source, str) or not source.strip():
        raise TypeError("source must be the program's CUDA C source, as a non-empty string")
    check_backend(backend, check)
    if backend == "gpu" or (backend == "auto" and not check and gpu_present()):
        return _run_gpu(source, args, options, time_limit, stdin)
    from .cpu import host
    outcome = host.run(host.build(source, tuple(options), check), args, stdin, time_limit)
    return ProgramResult(outcome.stdout, outcome.stderr, outcome.exit_code, "cpu", outcome.reports, outcome.warnings)


def _run_gpu(source, args, options, time_limit, stdin):
    nvcc = nvcc_path()
    if nvcc is None:
        raise KernelError("backend='gpu' runs a program with nvcc, and there is no nvcc on PATH or in "
                          "/usr/local/cuda/bin: install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads; "
                          "on Debian/Ubuntu the `cuda-toolkit` package), or run it with backend='cpu'.")
    limit = config.time_limit if time_limit is None else time_limit
    with tempfile.TemporaryDirectory(prefix="cudacheck-nvcc-") as tmp:
        src, exe = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "program")
        with open(src, "w") as f:
            f.write(source)
        # -arch=native: code for the GPU that is here; -lineinfo: compute-sanitizer names lines.
        proc = subprocess.run([nvcc, "-O2", "-arch=native", "-lineinfo", *options, "kernel.cu", "-o", exe],
                              capture_output=True, text=True, cwd=tmp)
        if proc.returncode != 0:
            log = proc.stderr + proc.stdout
            raise CompileError(compile_error_report(source, log, "kernel.cu", "kernel.cu did not compile with nvcc:"),
                               log=log, backend="gpu")
        data = stdin.encode() if isinstance(stdin, str) else stdin
        child = subprocess.Popen([exe, *map(str, args)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, cwd=tmp, start_new_session=True)
        try:
            out, err = child.communicate(data, timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            out, err = child.communicate()
            error = KernelTimeoutError(f"the program did not finish within the time limit of {limit:g} s on the GPU "
                                       "and was stopped. If it is merely slow, raise time_limit.")
            error.stdout, error.stderr = out.decode(errors="replace"), err.decode(errors="replace")
            raise error from None
    out, err = out.decode(errors="replace"), err.decode(errors="replace")
    if child.returncode < 0:
        error = KernelCrashError(f"the program died of signal {-child.returncode} on the GPU ("
                                 f"{signal.Signals(-child.returncode).name}). Run it with backend='cpu', check=True to "
                                 "find the line, or under compute-sanitizer.")
        error.stdout, error.stderr = out, err
        raise error
    return ProgramResult(out, err, child.returncode, "gpu")
