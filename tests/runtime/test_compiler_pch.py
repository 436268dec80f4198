"""The CPU runtime's precompiled header (cudacheck.cpu.compiler.precompiled_header): g++
takes cuda_cpu.h.gch in place of cuda_cpu.h only where the unit includes the header first
and its flags match, and otherwise reads the header without a word (-w hides
-Winvalid-pch). These tests compile with g++'s -H, which marks the precompiled header
with "!" where it is used and "x" where it is refused, so a change that makes g++ ignore
it (something before the #include in translation_unit, a flag that differs) fails here
instead of silently doubling every compile's time."""
import re
import shutil
import uuid

import pytest

import cudacheck
from cudacheck.cpu import compiler

pytestmark = pytest.mark.skipif(shutil.which(cudacheck.config.cxx) is None
                                or "clang" in compiler.compiler_version(cudacheck.config.cxx).lower(),
                                reason="the precompiled header is GCC's")

SOURCE = r'''
#ifndef TILE
#define TILE 4
#endif
extern "C" __global__ void scale(float* x, float a, int n) {
    __shared__ float s[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < TILE) s[threadIdx.x] = a;
    __syncthreads();
    if (i < n) x[i] *= s[threadIdx.x % TILE];
}
'''


def fresh(source):
    """`source` as the compile cache has never seen it, so that its unit is compiled here; the
    runtime's objects and the precompiled header come from the session's cache, built once."""
    return f"{source}\n// {uuid.uuid4()}\n"


@pytest.fixture
def kernel_compiles(monkeypatch):
    """Each kernel unit's g++ run, with -H and -Winvalid-pch (and without -w): its stderr."""
    logs = []
    run = compiler._run

    def traced(cmd):
        if any(c.endswith("unit.cpp") for c in cmd):   # a kernel's unit (compiler._build)
            traced_cmd = [c for c in cmd if c != "-w"] + ["-H", "-Winvalid-pch"]
            logs.append(run(traced_cmd).stderr)
        return run(cmd)
    monkeypatch.setattr(compiler, "_run", traced)
    return logs


def _pch_lines(log):
    return [line for line in log.splitlines() if line.endswith(compiler.PCH_NAME)]


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("options", [(), ("-DTILE=8",)], ids=["no options", "-D of the kernel's own"])
def test_the_precompiled_header_is_used(kernel_compiles, check, options):
    import numpy as np
    k = cudacheck.RawKernel(fresh(SOURCE), "scale", options=options, backend="cpu", check=check)
    x = np.arange(10, dtype=np.float32)
    k((3,), (4,), (x, np.float32(2.0), np.int32(10)))
    assert np.array_equal(x, 2 * np.arange(10, dtype=np.float32))
    (log,) = kernel_compiles
    assert "not used because" not in log and "invalid-pch" not in log, log[:2000]
    used = _pch_lines(log)
    assert used and used[0].startswith("! "), ("g++ did not take the precompiled header", log[:2000])
    # and it stands in for the header: cuda_cpu.h itself is not read
    assert not re.search(r"^\.+ \S*/include/cuda_cpu\.h$", log, re.M), log[:2000]


def test_a_macro_the_header_tests_makes_gcc_read_the_header_itself(kernel_compiles):
    """-DKC_FTZ=0 (the CPU runtime's unflushed mode) defines KC_FTZ, which the header tests: g++
    refuses the precompiled header and reads cuda_cpu.h, so the unit compiles to what it would
    without one."""
    cudacheck.RawKernel(fresh(SOURCE), "scale", options=("-DKC_FTZ=0",), backend="cpu", check=True).compile()
    (log,) = kernel_compiles
    assert _pch_lines(log)[0].startswith("x "), log[:2000]
    assert re.search(r"^\. \S*/include/cuda_cpu\.h$", log, re.M), log[:2000]


def test_the_precompiled_header_is_keyed_by_its_flags():
    cxx, cache = cudacheck.config.cxx, cudacheck.config.cache_dir
    plain = compiler.precompiled_header(cxx, compiler.CXXFLAGS, cache)
    checked = compiler.precompiled_header(cxx, (*compiler.CXXFLAGS, *compiler.CHECKED_FLAGS), cache)
    assert plain != checked
    assert (plain / compiler.PCH_NAME).is_file() and (checked / compiler.PCH_NAME).is_file()
