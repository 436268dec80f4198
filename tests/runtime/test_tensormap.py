"""Tensor maps (cudacheck.tensor_map_2d) and the Hopper kernels that load tiles through them
(kernels/hopper.cu). Without a GPU: every map that cannot be made is refused with what is
wrong. On an H100 or H200: every kernel, BF16 and FP16, against float64 NumPy on a small
awkward shape and against cuBLAS on awkward and square ones (tiling_course.measure.bench_hopper, the
script that measures them for the book)."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cudacheck

ROOT = Path(__file__).resolve().parents[2]


def test_a_list_is_refused_saying_what_a_map_needs():
    with pytest.raises(cudacheck.TensorMapError, match="needs a CuPy array .* or a NumPy array"):
        cudacheck.tensor_map_2d([[0.0] * 64] * 64, 64, 64)


def test_a_numpy_map_is_checked_by_the_same_rules():
    with pytest.raises(cudacheck.TensorMapError, match="pad_rows"):
        cudacheck.tensor_map_2d(np.zeros((10, 7), np.float16), 8, 8, swizzle=0)
    with pytest.raises(cudacheck.TensorMapError, match="at most 128 bytes"):
        cudacheck.tensor_map_2d(np.zeros((64, 128), np.float16), 64, 128)


@pytest.mark.gpu
def test_bad_maps_are_refused_by_name():
    import cupy
    a = cupy.zeros((100, 72), cupy.float16)
    for kwargs, message in (({"box_rows": 0, "box_cols": 64}, "box_rows=0"),
                            ({"box_rows": 64, "box_cols": 128}, "at most 128 bytes"),
                            ({"box_rows": 64, "box_cols": 64, "swizzle": 48}, "swizzle=48"),
                            ({"box_rows": 64, "box_cols": 64, "element": "fp32"}, "4 bytes")):
        with pytest.raises(cudacheck.TensorMapError, match=message):
            cudacheck.tensor_map_2d(a, **kwargs)
    with pytest.raises(cudacheck.TensorMapError, match="pad_rows"):
        cudacheck.tensor_map_2d(cupy.zeros((10, 7), cupy.float16), 8, 8, swizzle=0)
    tmap = cudacheck.tensor_map_2d(cudacheck.pad_rows(cupy.zeros((10, 7), cupy.float16)), 8, 8, swizzle=0)
    assert tmap.nbytes == 128 and tmap.box == (8, 8) and tmap.source.shape == (10, 7)


@pytest.mark.gpu
def test_every_hopper_kernel_against_float64_and_cublas(tmp_path):
    """Small shapes, so the test is quick: correctness, not speed."""
    out = subprocess.run([sys.executable, "-m", "tiling_course.measure.bench_hopper", "--size", "1024",
                          "--awkward", "300x520x200", "--small", "65x130x33", "--warmup", "1", "--repeats", "2",
                          "--output", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and ", 0 failed" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
