"""A whole program's launch that no GPU runs (too many threads, a grid dimension over its
limit, a zero dimension, too much dynamic shared memory): the kernel does not run,
cudaGetLastError returns the code CUDA 13.0 on an H100 returns (cudaErrorInvalidValue,
logs/2026-11-23-h100-programs.md) with CUDA's text, the error is not sticky, a following
cudaDeviceSynchronize succeeds, and the ProgramResult names the launch's line, the kernel
and the code (LaunchFailedWarning) whether or not the program asked. The same launches
within the limits run and compute what NumPy computes."""
import numpy as np
import pytest

import cudacheck

PROGRAM = r'''#include <cstdio>
#include <cstdlib>

__global__ void scale(const float* in, float* out, int n, float f) {
    long block = blockIdx.x + (long)gridDim.x * (blockIdx.y + (long)gridDim.y * blockIdx.z);
    long i = block * (blockDim.x * blockDim.y * blockDim.z)
             + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    if (i < n) out[i] = in[i] * f;
}

__global__ void scale_staged(const float* in, float* out, int n, float f) {
    __shared__ float staging[12288];   // 48 KiB of static shared memory: all a block gets unasked
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    staging[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = staging[threadIdx.x] * f;
}

// argv: grid x y z, block x y z, dynamic shared bytes, staged kernel?, opt-in bytes (0: none),
// ask cudaGetLastError?; stdin: n, f, then n floats.
int main(int argc, char** argv) {
    dim3 grid(strtoul(argv[1], 0, 10), strtoul(argv[2], 0, 10), strtoul(argv[3], 0, 10));
    dim3 block(strtoul(argv[4], 0, 10), strtoul(argv[5], 0, 10), strtoul(argv[6], 0, 10));
    size_t shared = strtoul(argv[7], 0, 10);
    int staged = atoi(argv[8]), optin = atoi(argv[9]), ask = atoi(argv[10]);
    int n;
    float f;
    if (scanf("%d %a", &n, &f) != 2) return 3;
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) if (scanf("%a", &h[i]) != 1) return 3;
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpy(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0, n * sizeof(float));
    if (optin) cudaFuncSetAttribute(scale, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    if (staged)
        scale_staged<<<grid, block, shared>>>(d_in, d_out, n, f);
    else
        scale<<<grid, block, shared>>>(d_in, d_out, n, f);
    if (ask) {
        cudaError_t e = cudaGetLastError();
        printf("launch %s (%s), ", cudaGetErrorName(e), cudaGetErrorString(e));
        cudaError_t s = cudaDeviceSynchronize();
        printf("synchronize %s, then %s\n", cudaGetErrorName(s), cudaGetErrorName(cudaGetLastError()));
    }
    cudaMemcpy(h, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) printf("%a\n", h[i]);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h);
    return 0;
}
'''
LAUNCH_LINES = {staged: PROGRAM.splitlines().index(f"        {name}<<<grid, block, shared>>>(d_in, d_out, n, f);") + 1
                for staged, name in ((False, "scale"), (True, "scale_staged"))}

# name: (grid, block, dynamic shared bytes, the staged kernel, opt-in bytes)
INVALID = {
    "2048 threads in x": ((1, 1, 1), (2048, 1, 1), 0, False, 0),
    "32 x 32 x 2 threads, each axis legal": ((1, 1, 1), (32, 32, 2), 0, False, 0),
    "blockDim.z of 65": ((1, 1, 1), (1, 1, 65), 0, False, 0),
    "a zero block dimension": ((1, 1, 1), (32, 0, 1), 0, False, 0),
    "a zero grid dimension": ((1, 1, 0), (32, 1, 1), 0, False, 0),
    "gridDim.y of 65536": ((1, 65536, 1), (32, 1, 1), 0, False, 0),
    "gridDim.z of 65536": ((1, 1, 65536), (32, 1, 1), 0, False, 0),
    "gridDim.x of 2^31": ((2**31, 1, 1), (32, 1, 1), 0, False, 0),
    "49153 bytes of dynamic shared memory": ((1, 1, 1), (32, 1, 1), 49153, False, 0),
    "48 KiB static and 4 dynamic": ((1, 1, 1), (32, 1, 1), 4, True, 0),
    "one byte past the opt-in": ((1, 1, 1), (32, 1, 1), 100001, False, 100000),
}
# The same launches at their limits, which run.
VALID = {
    "1024 threads": ((1, 1, 1), (1024, 1, 1), 0, False, 0),
    "a 3-D grid of 3-D blocks": ((2, 3, 2), (8, 4, 2), 0, False, 0),
    "49152 bytes of dynamic shared memory": ((4, 1, 1), (32, 1, 1), 49152, False, 0),
    "48 KiB static, no dynamic": ((4, 1, 1), (32, 1, 1), 0, True, 0),
    "all of the opt-in": ((4, 1, 1), (32, 1, 1), 100000, False, 100000),
}


def run(case, ask, rng, check=False):
    grid, block, shared, staged, optin = case
    threads = int(np.prod(grid)) * int(np.prod(block))
    n = int(rng.integers(50, 300))
    n = min(n, threads) if threads else n   # a launch that runs covers every element
    x = rng.standard_normal(n).astype(np.float32)
    f = np.float32(rng.uniform(-4, 4))
    stdin = f"{n} {float(f).hex()}\n" + "\n".join(float(v).hex() for v in x) + "\n"
    result = cudacheck.run_program(PROGRAM, backend="cpu", check=check, stdin=stdin,
                                   args=(*grid, *block, shared, int(staged), optin, int(ask)))
    lines = result.stdout.splitlines()
    said, values = (lines[0], lines[1:]) if ask else (None, lines)
    got = np.array([float.fromhex(v) for v in values], dtype=np.float32)
    return result, said, x * f, got


@pytest.mark.parametrize("name", sorted(INVALID))
def test_a_launch_no_gpu_runs_fails_as_on_a_gpu_and_is_reported(name, rng):
    case = INVALID[name]
    line = LAUNCH_LINES[case[3]]
    kernel = "scale_staged" if case[3] else "scale"
    for ask in (True, False):
        result, said, _, got = run(case, ask, rng)
        assert result.exit_code == 0, result.stderr
        if ask:
            assert said == "launch cudaErrorInvalidValue (invalid argument), synchronize cudaSuccess, then cudaSuccess"
        assert not got.any(), "the kernel must not have run: its output stays as cudaMemset left it"
        failed = [w for w in result.warnings if isinstance(w, cudacheck.LaunchFailedWarning)]
        assert len(failed) == 1 and result.warnings == failed, result.warnings
        w = failed[0]
        assert (w.line, w.kernel, w.cuda_error) == (line, kernel, "cudaErrorInvalidValue")
        assert isinstance(w, cudacheck.ProgramWarning)
        assert f"`{kernel}` at line {line} did not run" in str(w) and "cudaErrorInvalidValue (error 1)" in str(w)
        if case[2]:   # too much shared memory: the advice is the Runtime API's opt-in, not CuPy's
            assert "cudaFuncSetAttribute" in str(w) and "max_dynamic_shared_size_bytes" not in str(w), str(w)


@pytest.mark.parametrize("name", sorted(VALID))
def test_the_same_launches_within_the_limits_run_and_report_nothing(name, rng):
    result, said, expected, got = run(VALID[name], True, rng)
    assert said == "launch cudaSuccess (no error), synchronize cudaSuccess, then cudaSuccess"
    assert result.warnings == [] and result.exit_code == 0
    np.testing.assert_array_equal(got, expected)   # one float multiply: bit for bit


def test_checked_mode_reports_the_failed_launch_of_a_program_that_asks(rng):
    result, said, _, got = run(INVALID["2048 threads in x"], True, rng, check=True)
    assert said.startswith("launch cudaErrorInvalidValue") and not got.any()
    assert [(type(w), w.line) for w in result.warnings] == [(cudacheck.LaunchFailedWarning, LAUNCH_LINES[False])]


def test_checked_mode_stops_a_program_that_never_asks(rng):
    with pytest.raises(cudacheck.LaunchConfigError) as e:
        run(INVALID["gridDim.y of 65536"], False, rng, check=True)
    assert e.value.line == LAUNCH_LINES[False] and "gridDim.y may be at most 65535" in str(e.value)
