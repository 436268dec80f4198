"""The GPU backend: CuPy's RawModule, with the same checks as the CPU runtime and
errors a student can act on.

A launch is asynchronous, as CuPy's: it is queued on the current stream and returns, so
launches, copies and streams overlap as they do in CuPy. Its checks cost little after the
first launch of a kernel with given argument types and launch shape (both are cached: the
full check of arguments.py runs again only where a fast check fails, to name what is
wrong). A fault shows at the next synchronisation, as CUDA reports it: through
cudacheck.synchronize() (or the next launch), which names the launches since the last one;
a launch with sync=True, or every launch where config.launch_blocking is set (the
environment's CUDACHECK_LAUNCH_BLOCKING=1 or CUDA_LAUNCH_BLOCKING=1), waits for its kernel,
so its error stops the cell at the launch's own line.
"""
import glob
import os
import shutil
from collections import deque
from functools import lru_cache
from numbers import Integral, Real
from pathlib import Path

import numpy as np

from .arguments import check_arguments
from .errors import CompileError, GPUContextError, KernelRuntimeError, LaunchConfigError
from .launch import check_launch
from .listing import compile_error_report


def device_present():
    """Whether the NVIDIA driver shows a GPU here: a device node (/dev/nvidia0, ..., or WSL's
    /dev/dxg). Without one no GPU can be seen, by CuPy or by a program nvcc compiled."""
    return bool(glob.glob("/dev/nvidia[0-9]*") or glob.glob("/dev/dxg"))


@lru_cache(maxsize=1)
def gpu_available():
    """True when CuPy is installed and sees at least one CUDA GPU. Where no device node is
    present, CuPy (0.2 s to import) is not loaded to be told so: a CPU-only notebook, test
    or grader starts that much sooner."""
    if not device_present():
        return False
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU here"
        return False


# CUDA errors after which the context is unusable until the process restarts.
_STICKY = ("IllegalAddress", "LaunchFailure", "MisalignedAddress", "Assert", "IllegalInstruction",
           "HardwareStackError", "InvalidPc", "LaunchTimeout", "ILLEGAL_ADDRESS", "LAUNCH_FAILED", "ASSERT")


class GpuModule:
    """kernels: those the front end read (their launches are checked against their
    signatures); any other kernel NVRTC compiled is found by name and launched as CuPy
    launches it."""

    def __init__(self, source, kernels, options, name_expressions=(), cupy_options=None, log_stream=None):
        import cupy
        self.cupy = cupy
        self.kernels = kernels
        # Kernels with C++ linkage (templates, namespaces, no extern "C") are found by their
        # name expressions; NVRTC reports each one's mangled name.
        expressions = list(dict.fromkeys([k.name for k in kernels.values() if k.linkage == "C++"]
                                         + list(name_expressions)))
        try:
            self.module = _compiled_with_crt(cupy, source, options, expressions, cupy_options or {}, log_stream)
        except cupy.cuda.compiler.CompileException as e:
            log = str(e)
            title = "kernel.cu did not compile with NVRTC (backend='gpu'):"
            raise CompileError(compile_error_report(source, log, None, title), log=log, backend="gpu") from None
        self.functions = {name: self.module.get_function(name) for name in kernels}
        self.shared_optin = cupy.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]
        # (name, grid, block, shared_mem, optin, *argument types) -> (its LaunchConfig, the fast
        # checks of arguments of those types, the launch's record for _since_sync)
        self._fast = {}

    def has_function(self, name):
        """Whether NVRTC compiled a kernel of this name (or name expression)."""
        if name not in self.functions:
            try:
                self.functions[name] = self.module.get_function(name)
            except Exception:   # CuPy raises the driver's "named symbol not found", or a KeyError
                return False
        return True

    def launch(self, name, grid, block, args, shared_mem=0, optin=None, sync=False):
        """Queue the kernel on the current stream, after the checks; sync: wait for it."""
        try:   # a launch shape and argument types checked before: only the fast checks
            cfg, plan, record, fn = self._fast[(name, grid, block, shared_mem, optin, *map(type, args))]
            values = plan(args)
        except (KeyError, TypeError, _Refused):   # new, unhashable (a list), or refused: the full checks
            cfg, values, record, fn = self._checked(name, grid, block, args, shared_mem, optin)
        if optin is not None and fn.max_dynamic_shared_size_bytes != optin:
            fn.max_dynamic_shared_size_bytes = optin
        try:
            fn(cfg.grid, cfg.block, values, shared_mem=cfg.shared_mem)
        except (self.cupy.cuda.runtime.CUDARuntimeError, self.cupy.cuda.driver.CUDADriverError) as e:
            raise _runtime_error(e, (*_since_sync, record)) from None
        _since_sync.append(record)
        if sync:
            synchronize()

    def _checked(self, name, grid, block, args, shared_mem, optin):
        """The full checks of a launch (launch.py's and arguments.py's, which name what is
        wrong), and, where they pass, the fast checks of later launches of this shape with
        arguments of these types: (config, the arguments as the kernel takes them, the
        launch's record, the function)."""
        fn = self.functions[name]
        cfg = check_launch(grid, block, shared_mem, optin=optin, static=fn.shared_size_bytes,
                           optin_limit=self.shared_optin, max_threads=fn.max_threads_per_block)
        kernel = self.kernels.get(name)
        if kernel is None:   # a kernel the front end did not read: its arguments as given, as CuPy's
            values, plan = tuple(args), tuple
        else:
            values = tuple(check_arguments(kernel, args, self.cupy.ndarray,
                                           "pass a CuPy array (cupy.asarray(x) copies one)"))
            plan = _fast_plan(kernel.params, args)
        record = (name, cfg.grid, cfg.block)
        if isinstance(grid, (int, tuple)) and isinstance(block, (int, tuple)) and type(args) is tuple:
            self._fast[(name, grid, block, shared_mem, optin, *map(type, args))] = (cfg, plan, record, fn)
        return cfg, values, record, fn

    def launcher(self, name, grid, block, args, shared_mem=0, optin=None):
        """Launches without checks or synchronization: for timing loops, after one checked call."""
        fn = self.functions[name]
        if optin is not None:
            fn.max_dynamic_shared_size_bytes = optin
        return lambda: fn(grid, block, args, shared_mem=shared_mem)

    def get_global(self, name):
        return self.module.get_global(name)


def _compiled(cupy, source, options, expressions, cupy_options, log_stream=None):
    module = cupy.RawModule(code=source, options=tuple(options), name_expressions=expressions or None,
                            **cupy_options)
    module.compile(log_stream)
    return module


# The toolkit's include folder, once NVRTC has failed to open a crt/ header with CuPy's own.
_crt_include = []


def _compiled_with_crt(cupy, source, options, expressions, cupy_options, log_stream=None):
    """_compiled, where CUDA's pip wheels (which CuPy may compile against) ship mma.h without
    the crt/mma.h it includes, and a toolkit has both: the first source that fails for it is
    compiled again with the toolkit's include folder, and every later source that includes
    mma.h gets that folder from the start, so it compiles once."""
    if _crt_include and "mma.h" in source:
        return _compiled(cupy, source, (*options, f"-I{_crt_include[0]}"), expressions, cupy_options, log_stream)
    try:
        return _compiled(cupy, source, options, expressions, cupy_options, log_stream)
    except cupy.cuda.compiler.CompileException as e:
        toolkit = _toolkit_include()
        if 'cannot open source file "crt/' not in str(e) or toolkit is None:
            raise
        _crt_include.append(toolkit)
        return _compiled(cupy, source, (*options, f"-I{toolkit}"), expressions, cupy_options, log_stream)


@lru_cache(maxsize=1)
def _toolkit_include():
    """The include folder of a full CUDA toolkit (CUDA_PATH, CUDA_HOME, nvcc's, or
    /usr/local/cuda), where crt/ lies beside mma.h; None if there is none."""
    nvcc = shutil.which("nvcc")
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"),
             str(Path(nvcc).resolve().parent.parent) if nvcc else None, "/usr/local/cuda"]
    return next((str(Path(r) / "include") for r in roots if r and (Path(r) / "include" / "crt" / "mma.h").exists()),
                None)


# The launches queued since the last synchronisation (the latest few): a fault CUDA reports
# at a synchronisation is one of theirs.
_since_sync = deque(maxlen=4)


class _Refused(Exception):
    """A fast check's answer for an argument the full check must look at."""


def _fast_plan(params, first):
    """The checks of later launches whose arguments have the types of `first` (which passed
    the full check; the types are part of the cache's key): a function of the arguments that
    returns them as the kernel takes them, or raises _Refused where the full check must run.
    Cheap because the key fixes most of it: a NumPy scalar of the parameter's own type needs
    nothing, an array only its dtype and contiguity looked at, a Python number converting."""
    arrays, converts = [], []
    for i, (param, a) in enumerate(zip(params, first)):
        if param.pointer:
            arrays.append((i, a.dtype, param.lanes))
            continue
        want = param.dtype
        if isinstance(a, np.generic) and want is not None and type(a) is want.type and want.kind in "biufc":
            continue   # its type, fixed by the key, is its dtype
        converts.append((i, _fast_convert(want, a)))
    arrays, converts = tuple(arrays), tuple(converts)

    def plan(args):
        for i, dtype, lanes in arrays:
            a = args[i]
            # CuPy's ndarray keeps its contiguity as an attribute (cheaper than .flags)
            if (a.dtype is not dtype and a.dtype != dtype) or not getattr(a, "_c_contiguous", False) \
                    or (lanes > 1 and a.size % lanes):
                raise _Refused
        if not converts:
            return args
        values = list(args)
        for i, convert in converts:
            values[i] = convert(values[i])
        return tuple(values)
    return plan


def _fast_convert(want, first):
    """A scalar argument as the kernel takes it, for one given as `first` was (a Python number,
    a NumPy scalar of another type); raises _Refused for one only the full check may convert."""
    if isinstance(first, np.generic) and first.dtype == want:
        def same(a):
            if a.dtype != want:
                raise _Refused
            return a
        return same
    if want is not None and want.kind in "iu" and isinstance(first, Integral) and not isinstance(first, bool):
        info, make = np.iinfo(want), want.type
        lo, hi = int(info.min), int(info.max)

        def integer(a):
            if not lo <= a <= hi:
                raise _Refused
            return make(a)
        return integer
    if want is not None and want.kind == "f" and isinstance(first, Real) and not isinstance(first, bool):
        return want.type
    return _refuse   # anything else (structs, tensor maps): the full check each time


def _refuse(_):
    raise _Refused


def synchronize():
    """Wait for the GPU's work (the current device's); raise the error of a kernel that
    faulted since the last synchronisation, naming the launches it may be: CUDA reports a
    fault of an asynchronous launch at the next synchronisation, not at the launch. Where no
    GPU is in use (the CPU runtime's launches return when they are done) there is nothing to
    wait for."""
    if not _since_sync and not gpu_available():
        return
    import cupy
    try:
        cupy.cuda.Device().synchronize()
    except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as e:
        raise _runtime_error(e, tuple(_since_sync)) from None
    _since_sync.clear()


def _runtime_error(e, launches):
    """The error of a fault CUDA reported, naming the launches since the last synchronisation
    (the last is the likeliest; with sync=True it is the one)."""
    text = str(e)
    name = launches[-1][0] if launches else "?"
    which = (f"kernel `{name}` failed on the GPU" if len(launches) <= 1 else
             f"a kernel failed on the GPU, reported at this synchronisation after launches of "
             f"{', '.join(f'`{n}` (grid {g}, block {b})' for n, g, b in launches)}; the faulting one is among them "
             f"(launch with sync=True, or set CUDACHECK_LAUNCH_BLOCKING=1, to stop at its own line)")
    if "COOPERATIVE_LAUNCH_TOO_LARGE" in text or "CooperativeLaunchTooLarge" in text:
        return LaunchConfigError(
            f"{which}: {text}: a cooperative launch (enable_cooperative_groups=True) needs every block of its grid on "
            "the GPU at once, and this grid has more blocks than the GPU holds with this kernel's threads, shared "
            "memory and registers per block. Launch at most occupancy x SM count blocks (the CPU runtime's message "
            "for the same launch counts them) and let each thread loop over several elements",
            cuda_error="cudaErrorCooperativeLaunchTooLarge")
    if any(s in text for s in _STICKY):
        return GPUContextError(
            f"{which}: {text}.\n"
            "The kernel most likely read or wrote outside an array. This error poisons the CUDA context: every "
            "later GPU call in this process fails too, so restart the Python process (in Colab or Jupyter: "
            "restart the runtime/kernel) before using the GPU again.\n"
            "To find the access, re-run the kernel with backend='cpu', check=True: checked mode names the "
            "thread, the block, the array and the index.")
    return KernelRuntimeError(f"{which}: {text}")
