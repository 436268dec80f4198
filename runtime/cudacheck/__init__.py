"""cudacheck: CUDA C kernels launched from Python with CuPy's RawModule/RawKernel API, on a
GPU through CuPy or on a CPU runtime that runs the same source and, in checked mode, turns
an out-of-bounds access, a race on shared or global memory or a divergent barrier into an exception
naming the thread, block, array, element and line. run_program runs a whole CUDA C program
(host code and kernels) the same two ways."""
from . import errors
from .config import config
from .errors import *  # noqa: F403 (every exception and warning: errors.__all__)
from .gpu import gpu_available
from .module import Function, RawKernel, RawModule, resolve_backend
from .program import ProgramResult, run_program

__all__ = ["RawModule", "RawKernel", "Function", "gpu_available", "resolve_backend", "config", "run_program",
           "ProgramResult", *errors.__all__]
