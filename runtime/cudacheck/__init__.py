"""cudacheck: CUDA C kernels launched from Python with CuPy's RawModule/RawKernel API, on a
GPU through CuPy or on a CPU runtime that runs the same source and, in checked mode, turns
an out-of-bounds access, a race on shared or global memory or a divergent barrier into an exception
naming the thread, block, array, element and line. run_program runs a whole CUDA C program
(host code and kernels) the same two ways.

The public API is what this module exports (__all__); the course, the benchmarks and the
scripts use it and nothing else of the runtime (its submodules are its own):

Kernels, as CuPy's: RawModule(code, options=, name_expressions=, backend=, check=,
    enable_cooperative_groups=) and its get_function(name) and get_global(name); RawKernel(code,
    name, options, backend, check=, enable_cooperative_groups=), compiled at its first use
    (module.py says when each compiles); Function, the same class as RawKernel under its
    earlier name. resolve_backend(backend, check) names
    the backend a module would run on; gpu_available() says whether CuPy sees a GPU.
    check_options(options) raises the CompileError a launch would for an option the CPU
    runtime refuses.
    A GPU launch is asynchronous, as CuPy's: synchronize() waits for the GPU and raises the
    error of a kernel that faulted, naming it (k(..., sync=True), or config.launch_blocking,
    makes a launch wait).
Whole programs: run_program(source, backend=, check=, ...) returns a ProgramResult.
Settings: config, whose fields every launch reads (config.time_limit, config.workers,
    config.stack_size, config.global_races, config.cache_dir, config.cxx,
    config.launch_blocking).
Errors: KernelError and its subclasses, and the warnings (the names of errors.__all__).
Limits every current NVIDIA GPU shares, which both backends hold a launch to:
    MAX_THREADS_PER_BLOCK (1024 threads per block); DEFAULT_SHARED_LIMIT (48 KiB of shared
    memory, static and dynamic, a block gets without opting in); OPTIN_SHARED_LIMIT (227 KiB,
    the most a kernel's max_dynamic_shared_size_bytes may opt into, as on an H100).
The front end: analyze(code, options=(), name_expressions=()) is what it reads in a source
    (a Program: kernels and their parameters, shared and device variables).
This machine, for reports and cache keys: cpu_cores(), compiler_version(cxx=None),
    nvcc_path(), header_digest() (a digest of the CPU runtime's headers).
The runtime's data: encode_gpu_math_tables(measured), for the script that measures the
    GPU's special-function approximations; encode_gpu_lg2_table(t0, t1, fixes) and
    GPU_LG2_BINADES (a tuple of str: the result binades of its fixes), for the one that
    measures lg2.approx.
Tensor maps for Hopper's tensor memory accelerator (kernels/hopper.cu): tensor_map_2d(array,
    box_rows, box_cols, ...) a TensorMap a kernel takes by value; pad_rows(array) a copy whose
    rows start 16 bytes apart as the TMA needs; tensor_map_tiled(array, dims, strides, box, ...) one of
    1 to 5 dimensions, with the driver's cuTensorMapEncodeTiled arguments; TensorMapError.
Texture objects: the module texture, a mirror of CuPy's cupy.cuda.texture (ChannelFormatDescriptor,
    CUDAarray, ResourceDescriptor, TextureDescriptor, TextureObject and the runtime's constants),
    whose TextureObject a kernel takes as a cudaTextureObject_t on both backends; TextureError.
"""
from . import errors, texture
from .config import config
from .environment import (
    GPU_LG2_BINADES,
    compiler_version,
    cpu_cores,
    encode_gpu_lg2_table,
    encode_gpu_math_tables,
    header_digest,
    nvcc_path,
)
from .errors import *  # noqa: F403 (every exception and warning: errors.__all__)
from .frontend import analyze
from .gpu import gpu_available, synchronize
from .launch import DEFAULT_SHARED_LIMIT, MAX_THREADS_PER_BLOCK, OPTIN_SHARED_LIMIT
from .module import Function, RawKernel, RawModule, resolve_backend
from .options import check_options
from .program import ProgramResult, run_program
from .tensormap import TensorMap, TensorMapError, pad_rows, tensor_map_2d, tensor_map_tiled
from .texture import TextureError

__all__ = ["RawModule", "RawKernel", "Function", "gpu_available", "synchronize", "resolve_backend", "check_options",
           "config",
           "run_program", "ProgramResult", "MAX_THREADS_PER_BLOCK", "DEFAULT_SHARED_LIMIT", "OPTIN_SHARED_LIMIT",
           "analyze", "cpu_cores", "compiler_version", "nvcc_path", "header_digest", "encode_gpu_math_tables",
           "encode_gpu_lg2_table", "GPU_LG2_BINADES",
           "TensorMap", "TensorMapError", "pad_rows", "tensor_map_2d", "tensor_map_tiled", "texture", "TextureError",
           *errors.__all__]
