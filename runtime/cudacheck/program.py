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
from collections.abc import Mapping
from dataclasses import dataclass, field

from .config import config
from .errors import CompileError, KernelCrashError, KernelError, KernelTimeoutError
from .frontend import SOURCE_NAME
from .gpu import device_present
from .listing import compile_error_report
from .module import check_backend
from .options import user_flags


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


def run_program(source, backend="auto", check=False, args=(), options=(), time_limit=None, stdin=None, cwd=None):
    """Compile and run a whole CUDA C program (a source with a main).

    source: the program's one .cu file, as a string; or a program of several files, as a
    mapping of each file's name (a path, relative to `cwd`) to its text: its CUDA units (.cu)
    and its plain host units (.c compiled as C, .cpp as C++, as nvcc hands them to the host
    compiler), linked together; main may be in any of them. A unit's quoted #includes are
    found in its own folder first, as a compiler finds them for the file. On the CPU runtime
    several CUDA units are read as one translation unit, in the order given
    (cpu/local_includes.py says what that changes).
    backend: "gpu" (nvcc and a GPU), "cpu" (the CPU runtime), or "auto" (the GPU when nvcc
    and a GPU are present). check: checked mode (CPU runtime): kernels checked as RawKernel
    launches are, and host code's use of device memory too. args: the program's command-line
    arguments; options: compiler options (-DNAME=value, -Ipath), for every unit;
    time_limit: seconds (default cudacheck.config.time_limit); stdin: text or bytes for its
    standard input; cwd: the folder it runs in, where it opens its input and output files
    (default: this process's on the CPU runtime, a fresh temporary folder on a GPU).

    Returns a ProgramResult. Raises a KernelError subclass for what stops the program:
    CompileError, KernelTimeoutError, KernelCrashError (HostCrashError, HostDeviceAccessError
    for host code), and in checked mode the CheckError family (kernel findings,
    DeviceMemoryError, UseAfterFreeError, DoubleFreeError, UninitializedReadError,
    LaunchConfigError for a failed launch the program never checked). The exception's
    `stdout` and `stderr` hold what the program printed before it.

    On the CPU runtime the program's host code starts as a fresh process does: memory it
    malloc's (or new's) and never wrote reads zero (src/kc_host_heap.cpp).
    """
    units = program_units(source, cwd)
    check_backend(backend, check)
    if cwd is not None and not os.path.isdir(cwd):
        raise FileNotFoundError(f"cwd={cwd!r} is not a folder: pass the folder the program runs in "
                                "(where it finds its input files)")
    options = tuple(_include_from(option, cwd) for option in options)
    if backend == "gpu" or (backend == "auto" and not check and gpu_present()):
        return _run_gpu(units, args, options, time_limit, stdin, cwd)
    from .cpu import host, local_includes
    cuda = [(text, folder) for name, text, folder in units if name.endswith(CUDA_SUFFIX)]
    hosts = [unit for unit in units if not unit[0].endswith(CUDA_SUFFIX)]
    code = local_includes.joined(cuda, [o[2:] for o in user_flags(options) if o.startswith("-I")])
    outcome = host.run(host.build(code, options, check, tuple(hosts)), args, stdin, time_limit, cwd)
    return ProgramResult(outcome.stdout, outcome.stderr, outcome.exit_code, "cpu", outcome.reports, outcome.warnings)


# A program's units, by suffix: its CUDA unit and the host compiler's languages (cpu/host_units.py).
CUDA_SUFFIX = ".cu"
HOST_SUFFIXES = (".c", ".cpp", ".cc", ".cxx")


def program_units(source, cwd):
    """[(name, text, folder)], the CUDA units first (in the order given), from run_program's
    `source`; a TypeError or ValueError naming what is wrong with it."""
    if isinstance(source, str):
        if not source.strip():
            raise TypeError("source must be the program's CUDA C source, as a non-empty string")
        return [(SOURCE_NAME, source, os.path.abspath(cwd or "."))]
    if not isinstance(source, Mapping) or not source:
        raise TypeError("source must be the program's CUDA C source as a string, or a mapping of its files' names "
                        f"to their texts ({{'main.c': ..., 'kernels.cu': ...}}), not {type(source).__name__}")
    bad = [name for name, text in source.items() if not isinstance(name, str) or not isinstance(text, str)]
    if bad:
        raise TypeError(f"source maps file names to texts, both strings; {bad[0]!r} is not")
    odd = [name for name in source if not name.endswith((CUDA_SUFFIX, *HOST_SUFFIXES))]
    if odd:
        raise ValueError(f"{odd[0]!r} is neither a CUDA unit (.cu) nor a host unit ({', '.join(HOST_SUFFIXES)}): "
                         "pass the files the program's build compiles; headers are found through #include")
    cuda = [name for name in source if name.endswith(CUDA_SUFFIX)]
    if not cuda:
        raise ValueError("the program has no .cu file: run_program runs a CUDA program, whose kernels are in its "
                         ".cu files (its .c and .cpp files are host code)")
    base = os.path.abspath(cwd or ".")
    folder = {name: os.path.dirname(os.path.join(base, name)) for name in source}
    ordered = cuda + [name for name in source if name not in cuda]
    return [(name, source[name], folder[name]) for name in ordered]



def _include_from(option, cwd):
    """An -I option with a relative folder, relative to `cwd` (where nvcc would run)."""
    flags = user_flags([option])
    if cwd is None or not flags or not flags[0].startswith("-I") or os.path.isabs(flags[0][2:]):
        return option
    return "-I" + os.path.join(os.path.abspath(cwd), flags[0][2:])


def _run_gpu(units, args, options, time_limit, stdin, cwd):
    nvcc = nvcc_path()
    if nvcc is None:
        raise KernelError("backend='gpu' runs a program with nvcc, and there is no nvcc on PATH or in "
                          "/usr/local/cuda/bin: install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads; "
                          "on Debian/Ubuntu the `cuda-toolkit` package), or run it with backend='cpu'.")
    limit = config.time_limit if time_limit is None else time_limit
    with tempfile.TemporaryDirectory(prefix="cudacheck-nvcc-") as tmp:
        exe, files, includes = os.path.join(tmp, "program"), [], []
        for i, (name, text, folder) in enumerate(units):
            # each unit in a folder of its own (names may repeat across folders); nvcc compiles
            # a .c file as C and a .cpp as C++, each on its own, and links them
            path = os.path.join(tmp, f"unit{i}", os.path.basename(name)) if len(units) > 1 else \
                os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            files.append(os.path.relpath(path, tmp))
            includes.append(f"-I{folder}")   # its quoted #includes: its folder after its copy's
        # -arch=native: code for the GPU that is here; -lineinfo: compute-sanitizer names lines.
        proc = subprocess.run([nvcc, "-O2", "-arch=native", "-lineinfo", *options, *includes, *files, "-o", exe],
                              capture_output=True, text=True, cwd=tmp)
        if proc.returncode != 0:
            log = proc.stderr + proc.stdout
            raise CompileError(compile_error_report(units[0][1], log, units[0][0], f"{units[0][0]} did not compile "
                                                    "with nvcc:"), log=log, backend="gpu")
        data = stdin.encode() if isinstance(stdin, str) else stdin
        child = subprocess.Popen([exe, *map(str, args)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, cwd=cwd or tmp, start_new_session=True)
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
