"""Simulation and image processing (src/team_misc.cu)."""
import numpy as np

from .case import Bug, Case, Launch

N = (1, 9, 128, 333)
IMG = ((1, 1), (7, 9), (33, 65))


def _nbody(rng, n):
    b = rng.standard_normal((n, 4)).astype(np.float32)
    b[:, 3] = rng.random(n)
    return Launch((max(1, -(-n // 64)),), (64,), (b, np.zeros((n, 3), np.float32), n, 0.01), 64 * 16)


def _nbody_ref(args, n):
    b = args[0].astype(np.float64)
    d = b[None, :, :3] - b[:, None, :3]
    r2 = (d ** 2).sum(-1) + np.float32(0.01)
    return {1: (d * (b[None, :, 3] / r2 ** 1.5)[..., None]).sum(1)}


def _filters(rows):
    def setup(rng, s):
        h, w = s
        grid = (-(-w // 64), h) if rows else (-(-w // 16), -(-h // 16))
        return Launch(grid, (64,) if rows else (16, 16),
                      (rng.standard_normal(s).astype(np.float32), np.zeros(s, np.float32),
                       rng.standard_normal(5).astype(np.float32), h, w))

    def reference(args, s):
        x, w = args[0].astype(np.float64), args[2].astype(np.float64)
        axis = 1 if rows else 0
        pad = np.pad(x, ((0, 0), (2, 2)) if rows else ((2, 2), (0, 0)))
        n = s[axis]
        return {1: sum(w[k] * (pad[:, k:k + n] if rows else pad[k:k + n, :]) for k in range(5))}
    return setup, reference


def _blur(rng, s):
    h, w = s
    return Launch((-(-w // 16), -(-h // 16)), (16, 16), (rng.integers(0, 256, (h, w, 4)).astype(np.uint8),
                                                        np.zeros((h, w, 4), np.uint8), h, w))


def _blur_ref(args, s):
    img = args[0].astype(np.int64)
    h, w = s
    out = np.zeros_like(img)
    for y in range(h):
        for x in range(w):
            win = img[max(0, y - 1):y + 2, max(0, x - 1):x + 2].reshape(-1, 4)
            out[y, x] = win.sum(0) // len(win)
    return {1: out}


def _hash_ref(args, n):
    x = args[0].astype(np.uint64)
    m = np.uint64(0xFFFFFFFF)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x7FEB352D)) & m
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x846CA68B)) & m
    x ^= x >> np.uint64(16)
    return {1: x, 2: np.array([(x % 2 == 0).sum()])}


def _letters(rng, n):
    text = rng.choice(np.frombuffer(b"abcdefghijklmnopqrstuvwxyz ,.ABC", np.uint8), n).astype(np.int8)
    return Launch((3,), (64,), (text, np.zeros(26, np.uint32), n))


def _softmax_ref(args, s):
    x = args[0].astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    return {1: e / e.sum(1, keepdims=True)}


CASES = [
    Case("nbody_accel", "team_misc", "nbody_accel", _nbody, _nbody_ref, (1, 9, 64, 100), rtol=1e-3, atol=1e-3,
         style="GPU Gems 3, ch. 31: all-pairs n-body with float4 bodies tiled through shared memory",
         bugs=(Bug("tile_reused_too_early",
                   (("            a.z += dz * s;\n        }\n        __syncthreads();",
                     "            a.z += dz * s;\n        }"),),
                   "SharedMemoryRaceError", 100, block=(0, 0, 0), array="tile",
                   what="The barrier after using a tile is gone: fast threads overwrite it with the next tile."),)),
    Case("filter_rows", "team_misc", "filter_rows", *_filters(True), IMG, rtol=1e-5, atol=1e-5,
         style="separable filter, row pass with an apron in shared memory (CUDA samples convolutionSeparable)",
         bugs=(Bug("apron_not_loaded", (("        row[threadIdx.x] = (l >= 0) ? in[y * width + l] : 0.0f;\n", ""),),
                   "UninitializedReadError", (7, 9), block=(0, 0, 0), array="row", index=(0,),
                   what="The left apron is never loaded."),)),
    Case("filter_columns", "team_misc", "filter_columns", *_filters(False), IMG, rtol=1e-5, atol=1e-5,
         style="separable filter, column pass from global memory"),
    Case("box_blur_rgba", "team_misc", "box_blur_rgba", _blur, _blur_ref, IMG,
         style="3 x 3 box blur on uchar4 pixels with int4 accumulators",
         bugs=(Bug("edge_test_missing", (("            if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;\n", ""),),
                   "OutOfBoundsError", (7, 9), block=(0, 0, 0), thread=(0, 0, 0), array="in",
                   what="Without the edge test the corner pixel reads before the image."),)),
    Case("threshold", "team_misc", "threshold",
         lambda rng, n: Launch((max(1, -(-n // 128)),), (128,), (rng.integers(0, 256, n).astype(np.uint8),
                                                                np.zeros(n, np.uint8), 100, n)),
         lambda a, n: {1: np.where(a[0] > 100, 255, 0)}, N, style="unsigned char image threshold"),
    Case("hash_even", "team_misc", "hash_even",
         lambda rng, n: Launch((max(1, -(-n // 128)),), (128,),
                               (rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32),
                                np.zeros(n, np.uint32), np.zeros(1, np.int32), n)),
         _hash_ref, N, style="integer hashing (xorshift-multiply) in a __device__ function"),
    Case("normalize3", "team_misc", "normalize3",
         lambda rng, n: Launch((max(1, -(-n // 64)),), (64,), (rng.standard_normal((n, 3)).astype(np.float32), n)),
         lambda a, n: {0: a[0] / np.linalg.norm(a[0].astype(np.float64), axis=1, keepdims=True)}, N,
         rtol=1e-6, atol=1e-6,
         style="float3 arrays, rnorm3df"),
    Case("sum_squares_double", "team_misc", "sum_squares_double",
         lambda rng, n: Launch((max(1, -(-n // 64)),), (64,), (rng.standard_normal(n), np.zeros(1), n)),
         lambda a, n: {1: np.array([(a[0] ** 2).sum()])}, N, rtol=1e-12, deterministic=False,
         style="double-precision atomicAdd"),
    Case("letter_counts", "team_misc", "letter_counts", _letters,
         lambda a, n: {1: np.bincount(a[0][(a[0] >= 97) & (a[0] <= 122)].astype(np.int64) - 97, minlength=26)},
         (1, 50, 1000),
         style="char input, a shared histogram of 26 letters"),
    Case("softmax_rows", "team_misc", "softmax_rows",
         lambda rng, s: Launch((s[0],), (128,), (rng.standard_normal(s).astype(np.float32), np.zeros(s, np.float32),
                                                 s[1])),
         _softmax_ref, ((1, 1), (3, 100), (5, 300)), rtol=1e-5, atol=1e-6,
         style="row softmax, a block per row, two shared-memory reductions",
         bugs=(Bug("max_read_after_reuse", (("    m = red[0];\n    __syncthreads();", "    m = red[0];"),),
                   "SharedMemoryRaceError", (3, 100), block=(0, 0, 0), array="red",
                   what="No barrier between reading the row maximum from red[0] and reusing red for the sums."),)),
]
