"""What this machine gives the runtime, for the course, the benchmarks and the scripts to
report and to key their caches by; and the encoder of the runtime's own data file of the
GPU's special-function tables, for the script that measures them on a GPU."""
from .config import config
from .frontend import header_digest  # noqa: F401 (re-exported: the CPU runtime's headers, digested)
from .program import nvcc_path  # noqa: F401 (re-exported: nvcc, or None)


def cpu_cores():
    """The cores this process may run on: the number of workers a CPU launch spreads its
    blocks over by default (cudacheck.config.workers = None)."""
    from .cpu.system import cores
    return cores()


def compiler_version(cxx=None):
    """The first line of `cxx --version` (default: cudacheck.config.cxx, the CPU runtime's
    C++ compiler); CompileError, saying how to install one, where it cannot be run."""
    from .cpu.compiler import compiler_version
    return compiler_version(cxx or config.cxx)


def encode_gpu_math_tables(measured):
    """{table name: float32 array measured on a GPU} -> {file name: bytes}: the CPU runtime's
    data files of the special-function unit's approximations (cpu/gpumath.py says how they
    are stored; scripts/record_gpu_math_tables.py measures them). The quarter wave of
    sin.approx is the table named "sine"."""
    from .cpu.gpumath import DATA, SIN_DATA, encode, encode_sine
    return {DATA.name: encode({k: v for k, v in measured.items() if k != "sine"}),
            SIN_DATA.name: encode_sine(measured["sine"])}
