"""What this machine gives the runtime, for the course, the benchmarks and the scripts to
report and to key their caches by; and the encoders of the runtime's own data files of the
GPU's special-function tables, for the scripts that measure them on a GPU."""
from .config import config
from .cpu.gpumath import LG2_CLASSES as GPU_LG2_BINADES  # noqa: F401 (re-exported: the lg2 table's binades)
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


def encode_gpu_lg2_table(t0, t1, fixes):
    """The CPU runtime's data file of lg2.approx (cpu/gpumath.py states its rule), as
    {file name: bytes}, from what scripts/record_gpu_lg2_table.py measures on a GPU: t0 and t1,
    the results' bits on [1, 2) and [1/2, 1) by mantissa (uint32, 2^23 each), and fixes,
    {binade: bool array over the mantissa} where the result is one unit below the rule, for
    each binade of GPU_LG2_BINADES."""
    from .cpu.gpumath import LG2_DATA, encode_lg2
    if set(fixes) != set(GPU_LG2_BINADES):
        raise ValueError(f"fixes must name the binades {GPU_LG2_BINADES}, not {sorted(fixes)}")
    return {LG2_DATA.name: encode_lg2(t0, t1, [fixes[c] for c in GPU_LG2_BINADES])}
