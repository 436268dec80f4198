"""What this machine's processor adds to the runtime's g++ flags (compiler.CXXFLAGS).

A multiply-add that nvcc contracts, the front end writes as one fused multiply-add
(src/kc_gpu_arith.h: __builtin_fmaf). x86-64's baseline instruction set has no FMA, so
without -mfma g++ makes each of them a call of libm's fmaf, which spills every live float
register around it; with -mfma it is one vfmadd instruction (the tiled kernel at Width 256:
about 0.72x the workers' CPU time). Both round once, so both give the GPU's bits; but a
library built with -mfma dies of SIGILL on a processor without FMA, so the flag is given only
where this one has it. It is in CXXFLAGS, which every cache key of the compiler includes: a cache
shared with a machine without FMA never hands it a library built with the flag.

AArch64 has fused multiply-add in its baseline and needs no flag.
"""
import platform
from pathlib import Path


def has_fma(cpuinfo="/proc/cpuinfo"):
    """Whether the kernel reports FMA among the processor's flags (Linux clears a flag the
    OS cannot use, such as AVX's registers where it does not save them). False where it
    cannot tell."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return False
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            return "fma" in value.split()
    return False


def flags(machine=None, cpuinfo="/proc/cpuinfo"):
    """The g++ flags this processor allows beyond the baseline: ("-mfma",) on an x86-64 with
    FMA (it implies AVX, so g++ may also vectorise with 256-bit registers), otherwise none."""
    machine = machine or platform.machine()
    return ("-mfma",) if machine in ("x86_64", "AMD64") and has_fma(cpuinfo) else ()
