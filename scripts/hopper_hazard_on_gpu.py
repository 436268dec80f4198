"""On an H100 or H200: one hazard of the hazard kernel of tests/runtime/test_hopper_checked.py
(tests/support/hopper.py's HAZARDS; its mode:
0 correct, 1 no thread waits before the wgmma, 2 a read of the tile before the wait, 3 a
store into an operand while the wgmma is in flight), run on the GPU, printing how far its
product is from the exact one: what compute-sanitizer is run on to see whether it names the
hazard (logs/2026-11-27-h100-sanitizer-hopper-hazards.md).

    for m in 0 1 2 3; do for t in racecheck synccheck memcheck initcheck; do
        compute-sanitizer --tool $t python -m scripts.hopper_hazard_on_gpu $m; done; done

(from the repository's root, as a module: it imports tests.support)
"""
import sys

import cupy as cp
import numpy as np

import cudacheck
from tests.support.hopper import HAZARDS, HAZARDS_SHARED, OPTIONS, bf16

mode = int(sys.argv[1])
f = cudacheck.RawModule(HAZARDS, options=OPTIONS, backend="gpu").get_function("hazards")
rng = np.random.default_rng(0)
(A, Af), (B, Bf) = bf16(rng.standard_normal((64, 64), np.float32)), bf16(rng.standard_normal((16, 8), np.float32))
Ad = cp.asarray(A)
tmap = cudacheck.tensor_map_2d(Ad, 64, 64, element="bf16", swizzle=128)
D, out = cp.zeros((64, 8), cp.float32), cp.zeros(1, cp.int32)
f((1,), (128,), (tmap, cp.asarray(B), D, np.int32(mode), out), shared_mem=HAZARDS_SHARED)
cp.cuda.runtime.deviceSynchronize()
exact = Af[:, :16].astype(np.float64) @ Bf.astype(np.float64)
print("mode", mode, "max |D - exact|", float(np.abs(cp.asnumpy(D) - exact).max()), flush=True)
