"""The C++ front end: clang reads a CUDA C source with full type information.

Both backends ask it what a source defines: its kernels (with C or C++ linkage, in
namespaces, templates with defaults, `__launch_bounds__` of any expression), each
parameter's canonical type (through typedefs, array syntax, structs), the `__shared__`,
`__device__` and `__constant__` variables, and what the CPU runtime cannot run. The CPU
backend also takes from it the few line-preserving edits its compiler needs (cpu/compiler.py),
and for a whole program the kernel launches of its host code (cpu/host.py).

By role:
- libclang.py: running clang (the index, the flags, the precompiled cuda_cpu.h) and the disk
  cache of results (a cached module parses nothing);
- model.py: what it finds (Program, Kernel, Param, SharedVar, DeviceVar, Launch);
- reader.py: the reader (analyze, Reader), with dtypes.py for C++ types as NumPy dtypes and
  arith.py for the arithmetic it rewrites as nvcc computes it (contracted multiply-adds,
  saturating conversions, clamped shifts, the GPU's special functions);
- nvrtc.py: what NVRTC refuses, refused here too;
- cpu_build.py: what the CPU runtime cannot run, and the CPU build's edits;
- ptx.py (reading: ptx_parse.py, translating: ptx_translate.py, with ptx_async.py,
  ptx_cluster.py and ptx_memory.py for mbarriers, TMA and wgmma, clusters, and memory's
  scopes): inline PTX as C++ for the CPU build, or refused by name;
- launches.py: the launch finder of whole programs (find_launches, and joined_launch_brackets
  for the spaced brackets nvcc reads as a launch).
"""
from .launches import LaunchFinder, find_launches, joined_launch_brackets
from .libclang import CUDA_ARCH_FLAG, INCLUDE_DIR, SOURCE_NAME, SRC_DIR, header_digest
from .model import DeviceVar, Kernel, Launch, Param, Program, SharedVar, dtype_from
from .reader import Reader, analyze

__all__ = ["analyze", "find_launches", "joined_launch_brackets", "Reader", "LaunchFinder", "header_digest",
           "dtype_from",
           "INCLUDE_DIR", "SRC_DIR", "SOURCE_NAME", "CUDA_ARCH_FLAG",
           "Program", "Kernel", "Param", "SharedVar", "DeviceVar", "Launch"]
