"""Stencils and convolutions (src/team_stencils.cu), with their masks in constant memory."""
import numpy as np

from .case import Bug, Case, Launch

SHAPES_1D = (1, 3, 64, 100, 1001)
SHAPES_2D = ((1, 1), (5, 7), (16, 16), (33, 47))


def _conv1d(tile):
    def setup(rng, n):
        return Launch((max(1, -(-n // tile)),), (tile,), (rng.standard_normal(n).astype(np.float32),
                                                         np.zeros(n, np.float32), n),
                      globals={"M": rng.standard_normal(5).astype(np.float32)})
    return setup


def _conv1d_case(name, kernel, style, bugs=()):
    holder = {}

    def setup(rng, n):
        launch = _conv1d(64)(rng, n)
        holder["M"] = launch.globals["M"]
        return launch

    def reference(args, n):
        m = holder["M"].astype(np.float64)
        x = np.concatenate([np.zeros(2), args[0].astype(np.float64), np.zeros(2)])
        return {1: np.array([x[i:i + 5] @ m for i in range(n)])}
    return Case(name, "team_stencils", kernel, setup, reference, SHAPES_1D, rtol=1e-5, atol=1e-5, style=style,
                bugs=bugs)


def _conv2d_case():
    holder = {}

    def setup(rng, s):
        h, w = s
        mask = rng.standard_normal((3, 3)).astype(np.float32)
        holder["M2"] = mask
        return Launch((-(-w // 16), -(-h // 16)), (18, 18), (rng.standard_normal(s).astype(np.float32),
                                                            np.zeros(s, np.float32), h, w), globals={"M2": mask})

    def reference(args, s):
        h, w = s
        m = holder["M2"].astype(np.float64)
        x = np.pad(args[0].astype(np.float64), 1)
        return {1: sum(m[a, b] * x[a:a + h, b:b + w] for a in range(3) for b in range(3))}
    return Case("conv2d_tiled", "team_stencils", "conv2d_tiled", setup, reference, SHAPES_2D, rtol=1e-5, atol=1e-5,
                style="PMPP ch. 7: 2-D tiled convolution, input tiles with halo, mask in constant memory",
                bugs=(Bug("halo_edge_unguarded",
                          (("tile[threadIdx.y][threadIdx.x] = "
                            "(row >= 0 && row < h && col >= 0 && col < w) ? in[row * w + col] : 0.0f;",
                            "tile[threadIdx.y][threadIdx.x] = (row < h && col < w) ? in[row * w + col] : 0.0f;"),),
                          "OutOfBoundsError", (16, 16), block=(0, 0, 0), thread=(0, 0, 0), array="in",
                          what="The halo's guard forgets the negative side: "
                               "the first block reads before the image."),))


def _heat(rng, n):
    return Launch((max(1, -(-n // 128)),), (128,), (rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32),
                                                   0.25, n))


def _heat_ref(args, n):
    u = args[0].astype(np.float64)
    v = u.copy()
    if n > 2:
        v[1:-1] = u[1:-1] + np.float32(0.25) * (u[:-2] - 2 * u[1:-1] + u[2:])
    return {1: v}


def _jacobi(rng, s):
    h, w = s
    return Launch((-(-w // 16), -(-h // 16)), (16, 16), (rng.standard_normal(s).astype(np.float32),
                                                        np.zeros(s, np.float32), h, w))


def _jacobi_ref(args, s):
    a = args[0].astype(np.float64)
    b = a.copy()
    if min(s) > 2:
        b[1:-1, 1:-1] = 0.25 * (a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1])
    return {1: b}


def _life(rng, s):
    h, w = s
    return Launch((-(-w // 8), -(-h // 8)), (8, 8), ((rng.random(s) < 0.4).astype(np.uint8),
                                                    np.zeros(s, np.uint8), h, w))


def _life_ref(args, s):
    c = args[0].astype(np.int64)
    n = sum(np.roll(np.roll(c, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy)
    return {1: ((n == 3) | ((c == 1) & (n == 2))).astype(np.uint8)}


def _stencil3d(rng, s):
    nz, ny, nx = s
    return Launch((-(-nx // 6), -(-ny // 6)), (8, 8), (rng.standard_normal(s).astype(np.float32),
                                                      np.zeros(s, np.float32), nx, ny, nz, 0.5, 0.125))


def _stencil3d_ref(args, s):
    a = args[0].astype(np.float64)
    b = a.copy()
    if min(s) > 2:
        b[1:-1, 1:-1, 1:-1] = np.float32(0.5) * a[1:-1, 1:-1, 1:-1] + np.float32(0.125) * (
            a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:] + a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1] + a[:-2, 1:-1, 1:-1]
            + a[2:, 1:-1, 1:-1])
    return {1: b}


CASES = [
    _conv1d_case("conv1d_basic", "conv1d_basic", "PMPP 7.2: basic 1-D convolution, mask in constant memory",
                 bugs=(Bug("mask_index_past_width",
                           (("    for (int j = 0; j < MASK_WIDTH; j++)\n"
                             "        if (start + j >= 0 && start + j < width) pvalue += N[start + j] * M[j];",
                             "    for (int j = 0; j <= MASK_WIDTH; j++)\n"
                             "        if (start + j >= 0 && start + j < width) pvalue += N[start + j] * M[j];"),),
                           "OutOfBoundsError", 100, array="M",
                           what="The mask loop runs one step too far: it reads past the constant mask."),)),
    _conv1d_case("conv1d_tiled_halo", "conv1d_tiled_halo", "PMPP 7.4: tiled 1-D convolution with halo cells",
                 bugs=(Bug("right_halo_missing",
                           (("    if (threadIdx.x < n) N_ds[n + blockDim.x + threadIdx.x] = "
                             "(halo_right >= width) ? 0.0f : N[halo_right];\n",
                             ""),),
                           "UninitializedReadError", 100, block=(0, 0, 0), array="N_ds", index=(66,),
                           what="The right halo is never loaded: the last threads read cells no one stored."),
                       Bug("halo_barrier_missing",
                           (("0.0f : N[halo_right];\n    __syncthreads();", "0.0f : N[halo_right];"),),
                           "SharedMemoryRaceError", 100, block=(0, 0, 0), array="N_ds",
                           what="No barrier between loading the tile and using it."))),
    _conv1d_case("conv1d_tiled_caching", "conv1d_tiled_caching",
                 "PMPP 7.5: tiled 1-D convolution, halos from global memory through the caches",
                 bugs=(Bug("interior_test_off_by_one",
                           (("            if (k >= this_start && k < next_start) pvalue += N_ds",
                             "            if (k >= this_start && k <= next_start) pvalue += N_ds"),),
                           "OutOfBoundsError", 200, block=(0, 0, 0), thread=(62, 0, 0), array="N_ds", index=(64,),
                           what="`<=` takes the first cell of the next tile from this block's shared tile."),)),
    _conv2d_case(),
    Case("heat1d", "team_stencils", "heat1d", _heat, _heat_ref, SHAPES_1D, rtol=1e-5, atol=1e-5,
         style="1-D heat equation step with halo cells in shared memory",
         bugs=(Bug("left_halo_not_loaded",
                   (("    if (threadIdx.x == 0) s[0] = (i > 0 && i - 1 < n) ? u[i - 1] : 0.0f;\n", ""),),
                   "UninitializedReadError", 300, block=(1, 0, 0), array="s", index=(0,),
                   what="The left halo cell is never loaded."),)),
    Case("jacobi2d", "team_stencils", "jacobi2d", _jacobi, _jacobi_ref, SHAPES_2D, rtol=1e-5, atol=1e-5,
         style="2-D five-point Jacobi step, shared tile with a halo of one",
         bugs=(Bug("early_return_before_barrier",
                   (("    __syncthreads();\n    if (!in) return;", "    if (!in) return;\n    __syncthreads();"),),
                   "BarrierDivergenceError", (20, 20), block=(1, 0, 0),
                   what="Threads outside the grid return before the barrier the others wait at."),)),
    Case("life_step", "team_stencils", "life_step", _life, _life_ref, ((1, 1), (5, 7), (16, 16), (33, 47)),
         style="Game of Life on a torus, unsigned char cells",
         bugs=(Bug("no_wrap", (("cur[((y + dy + h) % h) * w + (x + dx + w) % w]", "cur[(y + dy) * w + (x + dx)]"),),
                   "OutOfBoundsError", (16, 16), block=(0, 0, 0), thread=(0, 0, 0), array="cur", index=(-17,),
                   what="Without the wrap-around, the corner cell reads before the grid."),)),
    Case("stencil3d_march", "team_stencils", "stencil3d_march", _stencil3d, _stencil3d_ref,
         ((1, 1, 1), (3, 4, 5), (8, 8, 8), (5, 13, 11)), rtol=1e-5, atol=1e-5,
         style="PMPP 8.5: 3-D seven-point stencil, z-marching with register tiling"),
]
