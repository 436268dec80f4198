"""A kernel's by-value parameter of a type aligned beyond 16 bytes (CUtensorMap: 64, a struct
declared __align__(32)) reaches the kernel intact wherever the caller's buffer for it lies.

The launch stubs (src/kc_stubs.h) read each parameter from a buffer Python allocated,
16-byte aligned at most. Read in place through a pointer of the parameter's type, g++ may copy
it with 32-byte aligned AVX moves (GCC 13 does with -mfma), which fault on such an address:
chapter 9's kernels crashed so (logs/2026-12-06-h100-mfma-crash.md). GCC 12 copies with those
moves too when told to (-mtune-ctrl=avx256_move_by_pieces), which is how this machine's g++ is
made to show the fault here."""
import subprocess

import numpy as np
import pytest

import cudacheck
from cudacheck.cpu import compiler
from cudacheck.frontend import SRC_DIR

# A kernel body called as the launch stubs call one, with its 64-byte aligned parameter read
# from `offset` bytes past a 64-byte boundary; it writes the bytes it received to stdout.
STUB_PROGRAM = r'''#include <cstdio>
#include <cstdlib>
#include "kc_stubs.h"
struct alignas(64) Box { float v[32]; };
__attribute__((noipa)) void kernel(Box b, int n) { fwrite(b.v, sizeof(float), n, stdout); }
__attribute__((noipa)) void body(void** a) { kc::invoke(&kernel, a); }
int main(int argc, char** argv) {
    alignas(64) static unsigned char buf[64 + sizeof(Box)];
    unsigned char* at = buf + atoi(argv[1]);
    if (fread(at, 1, sizeof(Box), stdin) != sizeof(Box)) return 3;
    int n = 32;
    void* a[] = {at, &n};
    body(a);
}
'''

# g++ 12's tuning that copies aggregates with 32-byte moves, as GCC 13's does.
WIDE_MOVES = "-mtune-ctrl=avx256_move_by_pieces,avx256_store_by_pieces"


@pytest.fixture(scope="module")
def stub_program(tmp_path_factory):
    if "-mfma" not in compiler.CXXFLAGS:
        pytest.skip("the runtime builds without AVX here (no FMA), so no 32-byte moves to test")
    tmp = tmp_path_factory.mktemp("stub")
    (tmp / "box.cpp").write_text(STUB_PROGRAM)
    subprocess.run([cudacheck.config.cxx, *compiler.CXXFLAGS, WIDE_MOVES, f"-I{SRC_DIR}", str(tmp / "box.cpp"),
                    "-o", str(tmp / "box")], check=True, capture_output=True)
    return tmp / "box"


@pytest.mark.parametrize("offset", [0, 8, 16, 32, 48])
def test_the_stub_copies_an_over_aligned_parameter_from_any_address(stub_program, offset, rng):
    box = rng.standard_normal(32).astype(np.float32)
    proc = subprocess.run([str(stub_program), str(offset)], input=box.tobytes(), capture_output=True)
    assert proc.returncode == 0, f"the stub died (status {proc.returncode}) reading the parameter at offset {offset}"
    assert proc.stdout == box.tobytes()


# A 64-byte aligned struct of `size` floats: small enough for g++ to copy inline, and large
# enough (1 KiB) that it copies with a call of memcpy, which checked mode's runtime provides.
SPREAD = r'''
struct __align__(64) Coeffs { float c[SIZE]; int n; };
extern "C" __global__ void spread(Coeffs k, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k.n) out[i] = k.c[i % SIZE];
}'''


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("size", [16, 256])
def test_an_aligned_struct_by_value_reaches_the_kernel_bit_for_bit(size, check, rng):
    kernel = cudacheck.RawKernel(SPREAD, "spread", options=(f"-DSIZE={size}",), backend="cpu", check=check)
    coeffs = np.zeros((), kernel.signature.params[0].dtype)
    n = int(rng.integers(size + 1, 3 * size))
    coeffs["c"] = rng.standard_normal(size).astype(np.float32)
    coeffs["n"] = n
    out = np.full(n + 5, np.nan, np.float32)
    kernel((-(-n // 64),), (64,), (coeffs, out))
    assert np.array_equal(out[:n].view(np.uint32), np.resize(coeffs["c"], n).view(np.uint32))
    assert np.isnan(out[n:]).all()
