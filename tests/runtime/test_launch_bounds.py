"""A kernel's __launch_bounds__(maxThreadsPerBlock, ...) holds its launches to that many threads per
block, as on a GPU: a larger block is a LaunchConfigError from Python naming the bound, the block and
the fix, and in a whole program the launch does not run and cudaGetLastError() returns
cudaErrorInvalidValue, as CUDA 13 on an H100 returned it (tests/runtime/launch_probe.cu). The bound
may be a literal, a constant, a macro or a template parameter; the attribute's third argument
(maxBlocksPerCluster) and __maxnreg__ compile and change nothing else."""
import numpy as np
import pytest

import cudacheck

# Each kernel: y = 2 x + 1, its threads numbered across a 2-D block.
SOURCE = r"""
#define WIDE 256
constexpr int kNarrow = 96;

extern "C" __global__ void __launch_bounds__(128) literal(const float* x, float* y, int n) {   // LITERAL
    int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

extern "C" __global__ void __launch_bounds__(kNarrow, 2) constant(const float* x, float* y, int n) {   // CONSTANT
    int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

extern "C" __global__ void __launch_bounds__(WIDE, 1, 4) cluster_arg(const float* x, float* y, int n) {   // MACRO
    int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

extern "C" __global__ void __maxnreg__(32) registers(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS) templated(const float* x, float* y, int n) {   // TEMPLATE
    __shared__ float stage[THREADS];
    int t = threadIdx.y * blockDim.x + threadIdx.x, i = blockIdx.x * blockDim.x * blockDim.y + t;
    stage[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = 2.0f * stage[t] + 1.0f;
}
"""
LINES = {tag: i + 1 for i, text in enumerate(SOURCE.splitlines())
         for tag in ("LITERAL", "CONSTANT", "MACRO", "TEMPLATE") if text.endswith(f"// {tag}")}
INSTANCES = ("templated<64>", "templated<192>")
# kernel: (its bound, the line of its __launch_bounds__; 0: none)
BOUNDS = {"literal": (128, LINES["LITERAL"]), "constant": (96, LINES["CONSTANT"]),
          "cluster_arg": (256, LINES["MACRO"]), "templated<64>": (64, LINES["TEMPLATE"]),
          "templated<192>": (192, LINES["TEMPLATE"])}


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "checked"])
def module(request):
    return cudacheck.RawModule(SOURCE, backend="cpu", check=request.param, name_expressions=INSTANCES)


def launch(module, name, block, rng, n=None):
    threads = int(np.prod(block))
    n = n if n is not None else 3 * threads - 7   # a ragged last block
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    module.get_function(name)(((n + threads - 1) // threads,), block, (x, y, np.int32(n)))
    return x, y


@pytest.mark.parametrize("name", list(BOUNDS) + ["registers"])
def test_a_block_within_the_bound_runs(module, name, rng):
    bound = BOUNDS.get(name, (1024, 0))[0]
    for block in ((bound,), (bound // 2, 2) if bound % 2 == 0 else (bound,), (7,)):
        x, y = launch(module, name, block, rng)
        # 2x + 1 in float: exact for both the CPU and a GPU (a multiply by 2 and one rounding)
        np.testing.assert_array_equal(y, (np.float32(2) * x + np.float32(1)).astype(np.float32))


@pytest.mark.parametrize("name", list(BOUNDS))
@pytest.mark.parametrize("extra", [1, 32])
def test_a_block_over_the_bound_is_refused_as_a_gpu_refuses_it(module, name, extra, rng):
    bound, line = BOUNDS[name]
    over = bound + extra
    block = (over // 2, 2) if over % 2 == 0 else (over,)
    with pytest.raises(cudacheck.LaunchConfigError) as e:
        launch(module, name, block, rng)
    err = e.value
    assert err.cuda_error == "cudaErrorInvalidValue"
    msg = str(err)
    assert f"maxThreadsPerBlock {bound} (line {line})" in msg and f"{over} threads" in msg
    assert f"block{block + (1,) * (3 - len(block))}" in msg
    assert "invalid argument" in msg and f"Launch at most {bound} threads per block" in msg
    assert f"  line {line}: " in msg


def test_a_bound_on_an_earlier_declaration_holds_for_the_definition(rng):
    k = cudacheck.RawKernel(r"""
    extern "C" __global__ void __launch_bounds__(64) ones(float* x);
    extern "C" __global__ void ones(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }
    """, "ones", backend="cpu")
    blocks = int(rng.integers(1, 5))
    x = np.zeros(64 * blocks, np.float32)
    k((blocks,), (64,), (x,))
    np.testing.assert_array_equal(x, 1.0)
    with pytest.raises(cudacheck.LaunchConfigError, match="maxThreadsPerBlock 64 "):
        k((1,), (65,), (x,))


PROGRAM = r"""#include <cstdio>
template <int THREADS> __global__ void __launch_bounds__(THREADS) fill(int* out, int value) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}
extern "C" __global__ void __launch_bounds__(64) one(int* out) { out[threadIdx.x] = 1; }
int main() {
    int* d;
    cudaMalloc(&d, 1024 * sizeof(int));
    cudaMemset(d, 0, 1024 * sizeof(int));
    fill<128><<<2, 128>>>(d, 7);
    cudaError_t ok = cudaGetLastError();
    fill<128><<<1, 256>>>(d, 9);                    // OVER
    cudaError_t over = cudaGetLastError();
    one<<<1, 65>>>(d);
    cudaError_t over_c = cudaGetLastError();
    int h[256];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%s %s %s %s\n", cudaGetErrorName(ok), cudaGetErrorName(over), cudaGetErrorString(over),
           cudaGetErrorName(over_c));
    printf("%d %d %d\n", h[0], h[255], h[64]);
    cudaFree(d);
    return 0;
}
"""


@pytest.mark.parametrize("check", [False, True])
def test_a_program_s_launch_over_the_bound_leaves_the_error_and_does_not_run(check):
    result = cudacheck.run_program(PROGRAM, backend="cpu", check=check)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ("cudaSuccess cudaErrorInvalidValue invalid argument "
                             "cudaErrorInvalidValue\n7 7 7\n")


def test_a_program_that_never_asks_is_told_in_checked_mode():
    source = PROGRAM.replace("    cudaError_t over = cudaGetLastError();\n", "")
    source = source.replace("cudaGetErrorName(over), cudaGetErrorString(over)", "\"-\", \"-\"")
    line = next(i + 1 for i, text in enumerate(source.splitlines()) if text.endswith("// OVER"))
    with pytest.raises(cudacheck.LaunchConfigError) as e:
        cudacheck.run_program(source, backend="cpu", check=True)
    assert e.value.line == line and e.value.cuda_error == "cudaErrorInvalidValue"
    assert "never asked" in str(e.value) and "maxThreadsPerBlock 128" in str(e.value)
