"""cuBLAS, the reference every kernel is timed against, at each of the book's precisions.

One call, `Cublas().gemm(M, N, out, precision)`, computes out = M @ N for row-major CuPy
arrays: FP32 through sgemm in cuBLAS's default math mode (true FP32: TF32 off), the others
through cublasGemmEx with float accumulation and a float result, as the book's
tensor-core kernels do: FP16 or BF16 inputs, or float inputs multiplied in TF32
(CUBLAS_COMPUTE_32F_FAST_TF32). cuBLAS is column-major, and a row-major matrix read
column-major is its transpose, so each call computes out^T = N^T M^T.
"""
import numpy as np

# cudaDataType and cublasComputeType_t values (library_types.h, cublas_api.h)
CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF = 0, 2, 14
CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32 = 68, 77
CUBLAS_GEMM_DEFAULT = -1
INPUT_TYPE = {"tf32": CUDA_R_32F, "fp16": CUDA_R_16F, "bf16": CUDA_R_16BF}


class Cublas:
    def __init__(self):
        import cupy
        from cupy.cuda import cublas, device
        self._cublas, self._handle = cublas, device.get_cublas_handle()
        cublas.setMathMode(self._handle, cublas.CUBLAS_DEFAULT_MATH)
        self.tf32 = cublas.getMathMode(self._handle) != cublas.CUBLAS_DEFAULT_MATH
        # Set once, not per timed call: the benchmark runs on the current stream, and
        # nothing else in it calls cuBLAS between the reference's launches.
        cublas.setStream(self._handle, cupy.cuda.get_current_stream().ptr)
        cublas.setPointerMode(self._handle, cublas.CUBLAS_POINTER_MODE_HOST)
        self._one, self._zero = np.ones(1, np.float32), np.zeros(1, np.float32)

    def gemm(self, M, N, out, precision="fp32"):
        (m, k), n = M.shape, N.shape[1]
        cublas, handle, one, zero = self._cublas, self._handle, self._one.ctypes.data, self._zero.ctypes.data
        if precision == "fp32":
            cublas.sgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, m, k, one,
                         N.data.ptr, n, M.data.ptr, k, zero, out.data.ptr, n)
            return
        kind = INPUT_TYPE[precision]
        compute = CUBLAS_COMPUTE_32F_FAST_TF32 if precision == "tf32" else CUBLAS_COMPUTE_32F
        cublas.gemmEx(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, m, k, one,
                      N.data.ptr, kind, n, M.data.ptr, kind, k, zero, out.data.ptr, CUDA_R_32F, n,
                      compute, CUBLAS_GEMM_DEFAULT)
