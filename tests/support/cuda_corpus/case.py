"""The format of the differential corpus: CUDA C kernels in the styles of real GPU code,
each with its launch, its inputs and a NumPy reference, and seeded bugs as edits.

A case's source is `src/<source>.cu` (one file may serve several cases). `setup(rng,
shape)` returns the Launch: grid, block, arguments (NumPy arrays and scalars, in the
kernel's parameter order) and dynamic shared memory. `reference(args, shape)` returns the
expected final contents of the arrays the kernel writes, keyed by argument index (or, for a
`__device__` variable read back after the launch, by its name), computed in NumPy (float64
for floating point) from the inputs as given. The differential test (tests/runtime/test_cuda_corpus.py)
runs every case plain and checked on every shape: the two runs must agree bit for bit (where
`deterministic`), match the reference within rtol/atol, and checked mode must report nothing.
Each Bug is an edit of the case's source that checked mode must report with the given
exception class, thread, block and element (the test builds the bugs of one source that edit
only their case's kernel together, each a renamed copy of that kernel: builds.py).
"""
import ctypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

import cudacheck
from cudacheck import DEFAULT_SHARED_LIMIT

SRC = Path(__file__).with_name("src")


@dataclass
class Launch:
    grid: tuple
    block: tuple
    args: tuple
    shared_mem: int = 0
    globals: dict = field(default_factory=dict)   # __device__/__constant__ variable name -> NumPy array
                                                   # copied in (RawModule.get_global) before the launch


@dataclass(frozen=True)
class Bug:
    name: str
    edits: tuple                 # (old, new) text pairs; each old text occurs exactly once in the source
    error: str                   # exception class of kernels: "OutOfBoundsError", "SharedMemoryRaceError", ...
    shape: object                # the shape passed to setup() for this run
    thread: tuple | None = None  # expected e.thread as (x, y, z), or None to not check it
    block: tuple | None = None   # expected e.block as (x, y, z)
    array: str | None = None     # expected e.array (parameter or shared array name)
    index: tuple | None = None   # expected e.index
    what: str = ""               # the mistake, in a sentence


@dataclass(frozen=True)
class Case:
    name: str
    source: str                  # stem of the .cu file in src/
    kernel: str                  # name for get_function; a template instance such as "scan<256>"
    setup: Callable              # (rng, shape) -> Launch
    reference: Callable          # (args, shape) -> {arg index: expected array}
    shapes: tuple                # awkward shapes: 1, primes, non-multiples of the block, ...
    options: tuple = ()          # compiler options, e.g. ("-DBLOCK=128",)
    name_expressions: tuple = () # template instances to compile
    rtol: float = 1e-5
    atol: float = 1e-6
    deterministic: bool = True   # False where the result depends on the order of float atomics across blocks
    bugs: tuple = ()
    style: str = ""              # where the style comes from (NVIDIA sample, PMPP, a student's habit, ...)

    def code(self):
        return (SRC / f"{self.source}.cu").read_text()

    def edited(self, bug):
        src = self.code()
        for old, new in bug.edits:
            if src.count(old) != 1:
                raise ValueError(f"{self.name}/{bug.name}: edit text must occur exactly once: {old!r}")
            src = src.replace(old, new)
        return src


def run(case, source, spec, backend="cpu", check=False, args=None):
    """The one launch of the corpus (its test and scripts/corpus_gpu.py): `case`'s kernel
    compiled from `source`, its device variables set, dynamic shared memory past 48 KiB
    opted into, launched as `spec` says with `args` (default spec.args: the GPU's
    copies where the caller made them). Returns the module, for its variables."""
    mod = cudacheck.RawModule(source, options=case.options, name_expressions=case.name_expressions,
                              backend=backend, check=check)
    for name, value in spec.globals.items():
        value = np.ascontiguousarray(value)
        mod.get_global(name).copy_from_host(ctypes.c_void_p(value.ctypes.data), value.nbytes)
    fn = mod.get_function(case.kernel)
    if spec.shared_mem > DEFAULT_SHARED_LIMIT:
        fn.max_dynamic_shared_size_bytes = spec.shared_mem
    fn(spec.grid, spec.block, spec.args if args is None else args, shared_mem=spec.shared_mem)
    return mod
