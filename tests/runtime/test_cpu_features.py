"""The runtime's g++ flags follow the processor (cudacheck/cpu/cpu_features.py): -mfma only
where /proc/cpuinfo lists FMA, so a contracted multiply-add is one instruction there and a
libm call elsewhere; g++ never contracts on its own. What the kernels compute with either is
held to the GPU's bits by test_gpu_semantics.py (fused and --fmad=false)."""
import ctypes
import subprocess

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

import cudacheck
from cudacheck.cpu import compiler, cpu_features
from cudacheck.frontend import SRC_DIR

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
flags\t\t: fpu sse sse2 {extra} avx f16c
bugs\t\t: sysret_ss_attrs
"""


@pytest.mark.parametrize("extra, machine, expected", [
    ("fma avx2", "x86_64", ("-mfma",)),
    ("avx2", "x86_64", ()),
    ("fma4", "x86_64", ()),            # AMD's four-operand FMA4 is another instruction set
    ("fma avx2", "aarch64", ()),       # FMA is in AArch64's baseline: no flag
])
def test_flags_follow_cpuinfo(tmp_path, extra, machine, expected):
    info = tmp_path / "cpuinfo"
    info.write_text(CPUINFO.format(extra=extra))
    assert cpu_features.flags(machine=machine, cpuinfo=info) == expected


def test_no_cpuinfo_means_no_flag(tmp_path):
    assert cpu_features.flags(machine="x86_64", cpuinfo=tmp_path / "missing") == ()


def test_compiler_flags_are_this_machines():
    """The flags are in CXXFLAGS, which every cache key of the compiler includes, and g++
    never contracts a*b + c the front end left alone."""
    assert ("-mfma" in compiler.CXXFLAGS) == bool(cpu_features.flags())
    assert "-ffp-contract=off" in compiler.CXXFLAGS


def _undefined(path):
    with open(path, "rb") as f:
        dynsym = ELFFile(f).get_section_by_name(".dynsym")
        return {s.name for s in dynsym.iter_symbols() if s["st_shndx"] == "SHN_UNDEF"}


# The front end's fused multiply-add (cpu/src/kc_gpu_arith.h), alone in a library.
FUSED = r'''#include "kc_gpu_arith.h"
extern "C" __attribute__((visibility("default")))
void fused(const float* a, const float* b, const float* c, float* out, int n) {
    for (int i = 0; i < n; ++i) out[i] = kc::mul_add<kc::arith::after, false, false>(a[i], b[i], c[i]);
}'''


def _fused_library(tmp_path, flags):
    src, lib = tmp_path / "fused.cpp", tmp_path / f"fused{len(flags)}.so"
    src.write_text(FUSED)
    subprocess.run([cudacheck.config.cxx, *flags, "-shared", f"-I{SRC_DIR}", str(src), "-o", str(lib)], check=True)
    f = ctypes.CDLL(str(lib)).fused
    f.argtypes = [np.ctypeslib.ndpointer(np.float32, flags="C")] * 4 + [ctypes.c_int]
    return f, "fmaf" in _undefined(lib)


@pytest.mark.skipif(not cpu_features.flags(), reason="this processor has no FMA (or is not x86-64)")
def test_fma_instruction_and_libm_call_give_the_same_bits(rng, tmp_path):
    """The runtime's flags make the fused multiply-add an instruction; without -mfma it is a
    call of libm's fmaf: the same bits either way, unlike a*b + c rounded twice."""
    a, b, c = (rng.uniform(-1, 1, 100_000).astype(np.float32) for _ in range(3))
    results = []
    for flags in (compiler.CXXFLAGS, [f for f in compiler.CXXFLAGS if f != "-mfma"]):
        fused, calls_libm = _fused_library(tmp_path, flags)
        assert calls_libm == ("-mfma" not in flags)
        out = np.empty_like(a)
        fused(a, b, c, out, len(a))
        results.append(out)
    assert np.array_equal(results[0], results[1])
    assert not np.array_equal(results[0], a * b + c)


def test_a_kernels_multiply_add_is_an_instruction_where_the_cpu_has_fma(rng):
    src = r'''extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }'''
    k = cudacheck.RawKernel(src, "axpy", backend="cpu")
    x, y = rng.uniform(-1, 1, 1000).astype(np.float32), rng.uniform(-1, 1, 1000).astype(np.float32)
    out = y.copy()
    k((4,), (256,), (out, x, np.float32(0.3), np.int32(1000)))
    assert np.allclose(out, np.float32(0.3) * x + y, atol=1e-6)
    assert ("fmaf" in _undefined(k.module.impl.path)) != bool(cpu_features.flags())
