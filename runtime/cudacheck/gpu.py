"""The GPU backend: CuPy's RawModule, with the same checks as the CPU runtime and
errors a student can act on."""
import glob
import os
import shutil
from functools import lru_cache
from pathlib import Path

from .arguments import check_arguments
from .errors import CompileError, GPUContextError, KernelRuntimeError
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

    def has_function(self, name):
        """Whether NVRTC compiled a kernel of this name (or name expression)."""
        if name not in self.functions:
            try:
                self.functions[name] = self.module.get_function(name)
            except Exception:   # CuPy raises the driver's "named symbol not found", or a KeyError
                return False
        return True

    def launch(self, name, grid, block, args, shared_mem=0, optin=None):
        cupy = self.cupy
        fn = self.functions[name]
        cfg = check_launch(grid, block, shared_mem, optin=optin, static=fn.shared_size_bytes,
                           optin_limit=self.shared_optin, max_threads=fn.max_threads_per_block)
        kernel = self.kernels.get(name)
        values = args if kernel is None else check_arguments(kernel, args, cupy.ndarray,
                                                             "pass a CuPy array (cupy.asarray(x) copies one)")
        if optin is not None and fn.max_dynamic_shared_size_bytes != optin:
            fn.max_dynamic_shared_size_bytes = optin
        try:
            fn(cfg.grid, cfg.block, tuple(values), shared_mem=cfg.shared_mem)
            cupy.cuda.get_current_stream().synchronize()
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as e:
            raise _runtime_error(name, e) from None

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


def _runtime_error(name, e):
    text = str(e)
    if any(s in text for s in _STICKY):
        return GPUContextError(
            f"kernel `{name}` failed on the GPU: {text}.\n"
            "The kernel most likely read or wrote outside an array. This error poisons the CUDA context: every "
            "later GPU call in this process fails too, so restart the Python process (in Colab or Jupyter: "
            "restart the runtime/kernel) before using the GPU again.\n"
            "To find the access, re-run the kernel with backend='cpu', check=True: checked mode names the "
            "thread, the block, the array and the index.")
    return KernelRuntimeError(f"kernel `{name}` failed on the GPU: {text}")
