"""stmatrix and ldmatrix .sync.aligned.m8n8 on the CPU runtime (issue 44, item 1; fast.cu's kernel 12
stores its result tile with stmatrix): a warp stores (loads) 1, 2 or 4 matrices of 8 x 8 16-bit
elements from (into) its registers, in the PTX ISA's fragment layout (thread t holds elements
(t / 4, 2 (t % 4)) and the next of each matrix), lane l giving the address of row l % 8 of matrix
l / 8; with .trans each matrix is transposed on the way. Kernels written here, plain and checked,
on random 16-bit values, bit for bit."""
import numpy as np
import pytest

import cudacheck

KERNEL = r'''
template <int N, bool TRANS>
__global__ void store(const unsigned short* in, unsigned short* out) {
    __shared__ alignas(128) unsigned short tile[4 * 64];
    const int t = threadIdx.x, r = t / 4, c = 2 * (t % 4);
    unsigned reg[4];
    for (int i = 0; i < 4; ++i)
        reg[i] = (unsigned)in[i * 64 + r * 8 + c] | (unsigned)in[i * 64 + r * 8 + c + 1] << 16;
    unsigned row = (unsigned)__cvta_generic_to_shared(&tile[(t / 8) * 64 + (t % 8) * 8]);
    for (int i = t; i < 4 * 64; i += 32) tile[i] = 0xffff;
    __syncwarp();
    if (N == 4 && TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 [%0], {%1, %2, %3, %4};"
                     :: "r"(row), "r"(reg[0]), "r"(reg[1]), "r"(reg[2]), "r"(reg[3]) : "memory");
    else if (N == 4)
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                     :: "r"(row), "r"(reg[0]), "r"(reg[1]), "r"(reg[2]), "r"(reg[3]) : "memory");
    else if (N == 2)
        asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};"
                     :: "r"(row), "r"(reg[0]), "r"(reg[1]) : "memory");
    else
        asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(row), "r"(reg[0]) : "memory");
    __syncwarp();
    for (int i = t; i < 4 * 64; i += 32) out[i] = tile[i];
}
'''
CASES = {"store<4, true>": (4, True), "store<4, false>": (4, False), "store<2, true>": (2, True),
         "store<1, false>": (1, False)}


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_stmatrix_stores_each_matrix_from_the_fragment_layout(check, rng):
    module = cudacheck.RawModule(KERNEL, backend="cpu", check=check, name_expressions=tuple(CASES))
    x = rng.integers(0, 0xffff, 4 * 64, dtype=np.uint16)      # 0xffff marks what is not stored
    for expr, (n, trans) in CASES.items():
        out = np.zeros(4 * 64, np.uint16)
        module.get_function(expr)((1,), (32,), (x, out))
        want = x.reshape(4, 8, 8).copy()
        if trans:
            want = want.transpose(0, 2, 1)
        want[n:] = 0xffff
        assert np.array_equal(out.reshape(4, 8, 8), want), expr


LOAD = r"""
template <int N, bool TRANS>
__global__ void load(const unsigned short* in, unsigned short* out) {
    __shared__ alignas(128) unsigned short tile[4 * 64];
    const int t = threadIdx.x, r = t / 4, c = 2 * (t % 4);
    for (int i = t; i < 4 * 64; i += 32) tile[i] = in[i];
    __syncwarp();
    unsigned row = (unsigned)__cvta_generic_to_shared(&tile[(t / 8) * 64 + (t % 8) * 8]);
    unsigned reg[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
    if (N == 4 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(reg[0]), "=r"(reg[1]), "=r"(reg[2]), "=r"(reg[3]) : "r"(row));
    else if (N == 4)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(reg[0]), "=r"(reg[1]), "=r"(reg[2]), "=r"(reg[3]) : "r"(row));
    else if (N == 2)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(reg[0]), "=r"(reg[1])
                     : "r"(row));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(reg[0]) : "r"(row));
    for (int i = 0; i < 4; ++i) {
        out[i * 64 + r * 8 + c] = (unsigned short)reg[i];
        out[i * 64 + r * 8 + c + 1] = (unsigned short)(reg[i] >> 16);
    }
}
"""
LOADS = {expr.replace("store", "load"): case for expr, case in CASES.items()}


@pytest.mark.parametrize("check", [False, True], ids=["plain", "checked"])
def test_ldmatrix_loads_each_matrix_into_the_fragment_layout(check, rng):
    module = cudacheck.RawModule(LOAD, backend="cpu", check=check, name_expressions=tuple(LOADS))
    x = rng.integers(0, 0xffff, 4 * 64, dtype=np.uint16)
    for expr, (n, trans) in LOADS.items():
        out = np.zeros(4 * 64, np.uint16)
        module.get_function(expr)((1,), (32,), (x, out))
        want = x.reshape(4, 8, 8).copy()
        if trans:
            want = want.transpose(0, 2, 1)
        want[n:] = 0xffff                                  # registers the instruction does not load
        assert np.array_equal(out.reshape(4, 8, 8), want), expr
