"""CuPy's values of `backend` ("nvrtc", its default, and "nvcc": the compiler that builds the
kernel for the GPU) taken by RawModule and RawKernel as CuPy means them: the GPU, compiled by
that compiler. So `cupy.RawModule(code=src, backend="nvcc")` runs unchanged with the import
swapped to cudacheck, and code written that way runs unchanged back in CuPy."""
import numpy as np
import pytest

import cudacheck
from cudacheck import module as module_

SRC = r"""
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


@pytest.mark.parametrize("backend", ["nvrtc", "nvcc"])
def test_cupys_backends_mean_the_gpu(backend, monkeypatch):
    monkeypatch.setattr(module_, "gpu_available", lambda: True)
    mod = cudacheck.RawModule(code=SRC, backend=backend)
    kernel = cudacheck.RawKernel(SRC, "axpy", backend=backend)
    assert (mod.backend, mod.compiler) == ("gpu", backend)
    assert kernel.backend == "gpu" and kernel.module.compiler == backend


@pytest.mark.parametrize("backend", ["nvrtc", "nvcc"])
def test_without_a_gpu_they_say_so_and_how_to_run_on_the_cpu(backend, monkeypatch):
    monkeypatch.setattr(module_, "gpu_available", lambda: False)
    with pytest.raises(cudacheck.KernelError, match=f"backend='{backend}' needs CuPy and a CUDA GPU.*backend='cpu'"):
        cudacheck.RawModule(code=SRC, backend=backend)


@pytest.mark.parametrize("backend", ["nvrtc", "nvcc", "gpu"])
def test_checked_mode_refuses_every_gpu_backend(backend):
    with pytest.raises(ValueError, match=f"checked mode runs on the CPU runtime, and backend='{backend}' is the GPU"):
        cudacheck.RawKernel(SRC, "axpy", backend=backend, check=True)


def test_an_unknown_backend_names_every_accepted_value():
    with pytest.raises(ValueError, match=r"backend must be one of \('auto', 'gpu', 'cpu', 'nvrtc', 'nvcc'\), "
                                         r"not 'nvrtc '"):
        cudacheck.RawModule(code=SRC, backend="nvrtc ")


def test_programs_take_only_the_runtimes_values():
    """run_program is cudacheck's own (nvcc or the CPU runtime), not CuPy's: its backend
    stays "auto", "gpu" or "cpu"."""
    with pytest.raises(ValueError, match=r"backend must be one of \('auto', 'gpu', 'cpu'\), not 'nvcc'"):
        cudacheck.run_program("int main() { return 0; }", backend="nvcc")


@pytest.mark.parametrize("backend", ["nvrtc", "nvcc"])
def test_cupy_is_asked_for_the_compiler_it_was_named(backend, monkeypatch):
    """On a GPU the module hands CuPy its backend: "nvcc" passed on, "nvrtc" (CuPy's
    default) left unsaid, as CuPy code that does not name it."""
    seen = {}

    class FakeGpuModule:
        def __init__(self, source, kernels, options, name_expressions=(), cupy_options=None, log_stream=None):
            seen.update(cupy_options or {})

    monkeypatch.setattr(module_, "gpu_available", lambda: True)
    monkeypatch.setattr(module_, "GpuModule", FakeGpuModule)
    cudacheck.RawModule(code=SRC, backend=backend, jitify=True).compile()
    assert seen == ({"jitify": True, "backend": "nvcc"} if backend == "nvcc" else {"jitify": True})


def _axpy(backend, n, rng):
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    a = np.float32(rng.uniform(-2, 2))
    kernel = cudacheck.RawModule(code=SRC, backend=backend).get_function("axpy")
    if kernel.backend == "gpu":
        import cupy
        xd, yd = cupy.asarray(x), cupy.asarray(y)
        kernel(((n + 127) // 128,), (128,), (a, xd, yd, np.int32(n)))
        out = cupy.asnumpy(yd)
    else:
        out = y.copy()
        kernel(((n + 127) // 128,), (128,), (a, x, out, np.int32(n)))
    # a * x + y in float32: one rounding of the product and one of the sum, or one of a fused
    # multiply-add, which nvcc and NVRTC contract by default: within 2 units of the result.
    exact = np.float64(a) * x.astype(np.float64) + y.astype(np.float64)
    np.testing.assert_allclose(out, exact, rtol=2 * 2.0 ** -24, atol=2 * 2.0 ** -24 * np.abs(exact).max())
    return out


@pytest.mark.gpu
def test_nvrtc_on_the_gpu_computes_what_the_cpu_runtime_does(rng):
    n = 1000 + int(rng.integers(0, 37))
    seed = int(rng.integers(2 ** 32))
    assert np.array_equal(_axpy("nvrtc", n, np.random.default_rng(seed)), _axpy("cpu", n, np.random.default_rng(seed)))


@pytest.mark.gpu(nvcc=True)
def test_nvcc_on_the_gpu_computes_what_nvrtc_does(rng):
    n = 1000 + int(rng.integers(0, 37))
    seed = int(rng.integers(2 ** 32))
    assert np.array_equal(_axpy("nvcc", n, np.random.default_rng(seed)), _axpy("nvrtc", n, np.random.default_rng(seed)))
