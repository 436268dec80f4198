"""cudacheck: CUDA C kernels launched from Python with CuPy's RawModule/RawKernel API, on a
GPU through CuPy or on a CPU runtime that runs the same source and, in checked mode, turns
an out-of-bounds access, a race on shared or global memory or a divergent barrier into an exception
naming the thread, block, array, element and line. run_program runs a whole CUDA C program
(host code and kernels) the same two ways."""
from .config import config
from .errors import (
                     ArgumentError,
                     AsyncCopyRaceError,
                     BarrierDivergenceError,
                     CheckError,
                     CompileError,
                     DeviceMemoryError,
                     DoubleFreeError,
                     ForwardProgressError,
                     GlobalMemoryRaceError,
                     GPUContextError,
                     HostCrashError,
                     HostDeviceAccessError,
                     InvalidOperandError,
                     KernelAssertionError,
                     KernelCrashError,
                     KernelError,
                     KernelRuntimeError,
                     KernelTimeoutError,
                     LaunchConfigError,
                     LeadingDimensionError,
                     MemoryLeakWarning,
                     MisalignedAddressError,
                     OutOfBoundsError,
                     ProgramWarning,
                     RaceError,
                     ResultNeverCopiedWarning,
                     SharedMemoryRaceError,
                     UninitializedReadError,
                     UnsupportedFeatureError,
                     UseAfterFreeError,
                     WarpCollectiveError,
                     WarpDivergenceError,
)
from .gpu import gpu_available
from .module import Function, RawKernel, RawModule, resolve_backend
from .program import ProgramResult, run_program

__all__ = ["RawModule", "RawKernel", "Function", "gpu_available", "resolve_backend", "config", "KernelError",
           "CompileError", "UnsupportedFeatureError", "ArgumentError", "LaunchConfigError", "KernelRuntimeError",
           "KernelCrashError", "KernelAssertionError", "KernelTimeoutError", "GPUContextError", "CheckError",
           "OutOfBoundsError", "SharedMemoryRaceError", "BarrierDivergenceError", "WarpDivergenceError",
           "UninitializedReadError", "run_program", "ProgramResult", "HostCrashError", "HostDeviceAccessError",
           "DeviceMemoryError", "UseAfterFreeError", "DoubleFreeError", "ProgramWarning", "MemoryLeakWarning",
           "ResultNeverCopiedWarning", "WarpCollectiveError", "AsyncCopyRaceError", "InvalidOperandError",
           "MisalignedAddressError", "LeadingDimensionError", "RaceError",
           "GlobalMemoryRaceError", "ForwardProgressError"]
