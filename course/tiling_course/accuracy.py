"""How accurate a product is at each precision, against float64: chapter 8's table.

    from tiling_course import accuracy
    rows = accuracy.measure()          # list of Row, one per precision
    accuracy.table(rows)               # the HTML table

Every error is relative to the largest |element| of the exact product of the float32
inputs (computed in float64), and split in two: the rounding of the inputs to the
precision (precision.rounded; no kernel involved) and the kernel's own error (its result
against the float64 product of the rounded inputs it really multiplied: accumulation in
float, in the tensor cores' order). The FP32 row is rung 5, on the same inputs.
"""
from dataclasses import dataclass

import numpy as np

from . import matmul, precision, show

KERNEL_OF = {"fp32": "ladder5_warptiled", "tf32": "wmma_pipelined", "fp16": "wmma_pipelined",
             "bf16": "wmma_pipelined"}


@dataclass(frozen=True)
class Row:
    precision: str
    kernel: str
    total: float        # |P - exact| / max|exact|, largest over P
    inputs: float       # |rounded-input product - exact| / max|exact|: the precision's cost
    kernel_own: float   # |P - rounded-input product| / max|exact|: the kernel's accumulation
    unit_roundoff: float


def measure(m=192, k=512, n=160, backend="auto", rng=None, code=None):
    """One Row per precision, on fresh uniform(-1, 1) float32 inputs of m x k and k x n.
    code: the tensor-core kernels' source (kernels/tensor_cores.cu by default)."""
    rng = rng or np.random.default_rng()
    M = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    N = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    exact = M.astype(np.float64) @ N.astype(np.float64)
    scale = np.abs(exact).max()
    rows = []
    for prec in precision.PRECISIONS:
        kernel = KERNEL_OF[prec]
        P, fn = matmul.run(M, N, kernel, backend=backend, precision=prec,
                           code=code if prec != "fp32" else None)
        if fn.backend == "gpu":
            P = P.get()
        Mr, Nr = precision.rounded(M, prec), precision.rounded(N, prec)
        product = Mr.astype(np.float64) @ Nr.astype(np.float64)
        rows.append(Row(prec, kernel, float(np.abs(P - exact).max() / scale),
                        float(np.abs(product - exact).max() / scale), float(np.abs(P - product).max() / scale),
                        precision.UNIT_ROUNDOFF[prec]))
    return rows


def table(rows, shape=(192, 512, 160)):
    """The rows as the book's HTML table."""
    m, k, n = shape
    body = [[r.precision.upper(), f"<code>{r.kernel}</code>", f"{r.unit_roundoff:.1e}", f"{r.total:.1e}",
             f"{r.inputs:.1e}", f"{r.kernel_own:.1e}"] for r in rows]
    return show.table(["inputs", "kernel", "unit roundoff u", "error of P", "from rounding the inputs",
                       "the kernel's own"], body,
                      f"{m} x {k} times {k} x {n}, uniform(-1, 1) float32 inputs; errors relative to the largest "
                      "element of the exact (float64) product")
