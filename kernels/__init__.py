"""kernels: CUDA C kernels for the tiled-matmul book, on a GPU through CuPy or on the
CPU runtime, with checks that turn a wrong kernel into a clear Python exception."""
from .config import config
from .errors import (ArgumentError, BarrierDivergenceError, CheckError, CompileError, GPUContextError,
                     KernelAssertionError, KernelCrashError, KernelError, KernelRuntimeError, KernelTimeoutError,
                     LaunchConfigError, OutOfBoundsError, SharedMemoryRaceError, UninitializedReadError,
                     UnsupportedFeatureError, WarpDivergenceError)
from .gpu import gpu_available
from .module import RawKernel, RawModule
from .exercises import check

__all__ = ["RawModule", "RawKernel", "gpu_available", "config", "KernelError", "CompileError",
           "UnsupportedFeatureError", "ArgumentError", "LaunchConfigError", "KernelRuntimeError",
           "KernelCrashError", "KernelAssertionError", "KernelTimeoutError", "GPUContextError", "CheckError",
           "OutOfBoundsError", "SharedMemoryRaceError", "BarrierDivergenceError", "WarpDivergenceError", "UninitializedReadError", "check"]
