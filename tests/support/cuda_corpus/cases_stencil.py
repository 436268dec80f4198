"""Stencils (src/stencil_*.cu): 1-D three- and five-point stencils with halo cells in shared
memory, periodic upwind advection, temporal blocking, a 2-D heat step with a cooperatively
loaded tile, a double-precision nine-point Laplacian, Game of Life on a torus with a shared
tile, and 3-D seven-point stencils (PMPP ch. 8 register tiling; a naive 3-D grid)."""
import numpy as np

from .case import Bug, Case, Launch


def _cdiv(a, b):
    return max(1, -(-a // b))


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- 1-D three-point
def _st3_setup(rng, n):
    w = rng.standard_normal(3).astype(np.float32)
    return Launch((_cdiv(n, 128),), (128,), (_f32(rng, n), np.zeros(n, np.float32),
                                             np.float32(w[0]), np.float32(w[1]), np.float32(w[2]), np.int32(n)))


def _st3_ref(args, n):
    x = np.pad(args[0].astype(np.float64), 1)
    wl, wc, wr = (float(a) for a in args[2:5])
    return {1: wl * x[:-2] + wc * x[1:-1] + wr * x[2:]}


# ---------------------------------------------------------------- 1-D five-point, constant weights
_W5 = {}


def _st5_setup(rng, n):
    w = rng.standard_normal(5).astype(np.float32)
    _W5["w"] = w
    return Launch((_cdiv(n, 64),), (64,), (_f32(rng, n), np.zeros(n, np.float32), np.int32(n)), globals={"weights": w})


def _st5_ref(args, n):
    x = np.pad(args[0].astype(np.float64), 2)
    w = _W5["w"].astype(np.float64)
    return {1: sum(w[k] * x[k:k + n] for k in range(5))}


# ---------------------------------------------------------------- periodic upwind
def _upwind_setup(rng, n):
    return Launch((_cdiv(n, 128),), (128,), (_f32(rng, n), np.zeros(n, np.float32), np.float32(rng.uniform(0.1, 0.9)),
                                             np.int32(n)))


def _upwind_ref(args, n):
    u = args[0].astype(np.float64)
    c = float(args[2])
    return {1: u - c * (u - np.roll(u, 1))}


# ---------------------------------------------------------------- temporal blocking
def _temporal_setup(rng, n):
    return Launch((_cdiv(n, 64),), (72,), (_f32(rng, n), np.zeros(n, np.float32), np.float32(rng.uniform(0.1, 0.45)),
                                           np.int32(n)))


def _temporal_ref(args, n):
    u = args[0].astype(np.float64)
    a = float(args[2])
    for _ in range(4):
        p = np.pad(u, 1)
        u = p[1:-1] + a * (p[:-2] - 2 * p[1:-1] + p[2:])
    return {1: u}


# ---------------------------------------------------------------- 2-D heat
def _heat_setup(rng, s):
    ny, nx = s
    return Launch((_cdiv(nx, 16), _cdiv(ny, 8)), (16, 8), (_f32(rng, s), np.zeros(s, np.float32), np.int32(nx),
                                                          np.int32(ny), np.float32(rng.uniform(0.05, 0.25))))


def _heat_ref(args, s):
    u = args[0].astype(np.float64)
    a = float(args[4])
    v = u.copy()
    v[1:-1, 1:-1] = u[1:-1, 1:-1] + a * (u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1])
    return {1: v}


# ---------------------------------------------------------------- 9-point Laplacian (double)
def _lap9_setup(rng, s):
    h, w = s
    return Launch((_cdiv(w, 14), _cdiv(h, 14)), (16, 16), (rng.standard_normal(s), np.zeros(s), np.int32(h),
                                                          np.int32(w)))


def _lap9_ref(args, s):
    h, w = s
    p = np.pad(args[0], 1)
    c = lambda dy, dx: p[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]  # noqa: E731
    edge = c(0, -1) + c(0, 1) + c(-1, 0) + c(1, 0)
    corner = c(-1, -1) + c(-1, 1) + c(1, -1) + c(1, 1)
    return {1: (4 * edge + corner - 20 * c(0, 0)) / 6}


# ---------------------------------------------------------------- Game of Life
def _life_setup(rng, s):
    h, w = s
    return Launch((_cdiv(w, 16), _cdiv(h, 16)), (16, 16), ((rng.random(s) < 0.35).astype(np.uint8),
                                                          np.zeros(s, np.uint8), np.int32(h), np.int32(w)))


def _life_ref(args, s):
    c = args[0].astype(np.int64)
    n = sum(np.roll(c, (dy, dx), (0, 1)) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    return {1: ((n == 3) | ((c == 1) & (n == 2))).astype(np.uint8)}


# ---------------------------------------------------------------- 3-D, register tiling
_COEF = {}


def _reg3d_setup(rng, s):
    nz, ny, nx = s
    coef = rng.uniform(-1, 1, 7).astype(np.float32)
    _COEF["c"] = coef
    return Launch((_cdiv(nx, 6), _cdiv(ny, 6), _cdiv(nz, 6)), (8, 8, 1),
                  (_f32(rng, s), _f32(rng, s), np.int32(nx), np.int32(ny), np.int32(nz)), globals={"coef": coef})


def _reg3d_ref(args, s):
    a = args[0].astype(np.float64)
    c = _COEF["c"].astype(np.float64)
    out = args[1].astype(np.float64)  # the boundary is never written
    i = slice(1, -1)
    out[i, i, i] = (c[0] * a[i, i, i] + c[1] * a[i, i, :-2] + c[2] * a[i, i, 2:] + c[3] * a[i, :-2, i]
                    + c[4] * a[i, 2:, i] + c[5] * a[:-2, i, i] + c[6] * a[2:, i, i])
    return {1: out}


# ---------------------------------------------------------------- 3-D, clamped, 3-D grid
def _clamp3d_setup(rng, s):
    nz, ny, nx = s
    return Launch((_cdiv(nx, 8), _cdiv(ny, 8), _cdiv(nz, 4)), (8, 8, 4),
                  (_f32(rng, s), np.zeros(s, np.float32), np.int32(nx), np.int32(ny), np.int32(nz),
                   np.float32(rng.uniform(-1, 1)), np.float32(rng.uniform(-1, 1))))


def _clamp3d_ref(args, s):
    p = np.pad(args[0].astype(np.float64), 1, mode="edge")
    nz, ny, nx = s
    c = lambda dz, dy, dx: p[1 + dz:1 + dz + nz, 1 + dy:1 + dy + ny, 1 + dx:1 + dx + nx]  # noqa: E731
    nb = c(0, 0, -1) + c(0, 0, 1) + c(0, -1, 0) + c(0, 1, 0) + c(-1, 0, 0) + c(1, 0, 0)
    return {1: float(args[5]) * c(0, 0, 0) + float(args[6]) * nb}


CASES = [
    Case("st_1d_3pt", "stencil_1d3", "stencil1d_3pt", _st3_setup, _st3_ref, (1, 7, 128, 300, 1009),
         options=("-DBLOCK=128",), rtol=1e-5, atol=1e-5,
         style="CUDA training '1-D stencil': shared tile with one halo cell per side, BLOCK from -D",
         bugs=(Bug("right_halo_missing",
                   (("    if (threadIdx.x == BLOCK - 1) tile[BLOCK + 1] = (g + 1 < n) ? in[g + 1] : 0.0f;\n", ""),),
                   "UninitializedReadError", 300, thread=(127, 0, 0), block=(0, 0, 0), array="tile", index=(129,),
                   what="The right halo cell is never loaded: the block's last thread reads it uninitialized."),
               Bug("right_halo_guard_off_by_one", (("(g + 1 < n) ? in[g + 1]", "(g + 1 <= n) ? in[g + 1]"),),
                   "OutOfBoundsError", 256, thread=(127, 0, 0), block=(1, 0, 0), array="in", index=(256,),
                   what="`<=` in the right halo's guard: the last full block reads one past the array."),
               Bug("barrier_in_guard",
                   (("    __syncthreads();\n    if (g < n) out[g] =",
                     "    if (g < n) {\n    __syncthreads();\n    out[g] ="),
                    ("wr * tile[l + 1];\n}", "wr * tile[l + 1]; }\n}")),
                   "BarrierDivergenceError", 300, block=(2, 0, 0),
                   what="The barrier sits inside `if (g < n)`: "
                        "in the partial last block only some threads reach it."))),
    Case("st_1d_5pt_const", "stencil_1d5", "stencil_1d", _st5_setup, _st5_ref, (1, 2, 64, 150, 997),
         rtol=1e-5, atol=1e-5, style="NVIDIA 'CUDA C/C++ Basics' stencil_1d (RADIUS halo, weights in __constant__)",
         bugs=(Bug("left_halo_unguarded",
                   (("temp[lindex - RADIUS] = gindex - RADIUS >= 0 ? in[gindex - RADIUS] : 0.0f;",
                     "temp[lindex - RADIUS] = in[gindex - RADIUS];"),),
                   "OutOfBoundsError", 150, thread=(0, 0, 0), block=(0, 0, 0), array="in", index=(-2,),
                   what="The slides' original halo load has no guard: block 0 reads in[-2]."),
               Bug("weights_past_radius", (("offset <= RADIUS; offset++)", "offset <= RADIUS + 1; offset++)"),),
                   "OutOfBoundsError", 150, thread=(0, 0, 0), block=(0, 0, 0), array="weights", index=(5,),
                   what="The tap loop runs one offset too far and reads past the constant weights."))),
    Case("st_upwind_periodic", "stencil_upwind", "upwind_periodic", _upwind_setup, _upwind_ref, (1, 2, 128, 300, 1000),
         rtol=1e-5, atol=1e-5, style="periodic 1-D advection, upwind difference, halo wrapping to the far end",
         bugs=(Bug("barrier_missing", (("    __syncthreads();\n", ""),),
                   "SharedMemoryRaceError", 300, block=(0, 0, 0), array="s", index=(1,),
                   what="No barrier between the tile's load and its use: thread 1 reads the cell thread 0 stored."),)),
    Case("st_heat_temporal", "stencil_temporal", "heat_temporal", _temporal_setup, _temporal_ref, (1, 5, 64, 200, 777),
         rtol=1e-5, atol=1e-5, style="temporal blocking (trapezoid tiles): S heat steps inside shared memory",
         bugs=(Bug("barrier_before_store_missing",
                   (("        __syncthreads();\n        s[t] = v;", "        s[t] = v;"),),
                   "SharedMemoryRaceError", 300, block=(0, 0, 0), array="s", index=(3,),
                   what="Each thread stores its new value while its neighbours may still read the old one."),)),
    Case("st_heat2d_coop_load", "stencil_heat2d", "heat2d_step", _heat_setup, _heat_ref,
         ((1, 1), (2, 3), (8, 16), (20, 40), (37, 29)), rtol=1e-5, atol=1e-5,
         style="2-D five-point heat step; tile + halo loaded by a strided loop over the flattened tile",
         bugs=(Bug("load_loop_short",
                   (("k < (BY + 2) * (BX + 2); k += BX * BY)", "k < (BY + 1) * (BX + 2); k += BX * BY)"),),
                   "UninitializedReadError", (20, 40), thread=(1, 7, 0), block=(0, 0, 0), array="tile", index=(9, 2),
                   what="The load loop stops a row short: the bottom halo row is never stored."),)),
    Case("st_laplace9_double", "stencil_laplace9", "laplace9_double", _lap9_setup, _lap9_ref,
         ((1, 1), (3, 2), (14, 14), (20, 30), (45, 17)), rtol=1e-12, atol=1e-12,
         style="PMPP tiling strategy 1 (block = input tile, rim threads only load), double, nine points",
         bugs=(Bug("inner_guard_off_by_one", (("tx >= 1 && tx < IN_T - 1 &&", "tx >= 1 && tx < IN_T &&"),),
                   "OutOfBoundsError", (20, 30), thread=(15, 1, 0), block=(0, 0, 0), array="s", index=(1, 16),
                   what="The rim column computes too: thread 15 reads s[ty][16], past the tile."),)),
    Case("st_life_shared_torus", "stencil_life", "life_tile", _life_setup, _life_ref,
         ((1, 1), (3, 5), (16, 16), (20, 20), (33, 47)),
         style="Game of Life on a torus: shared tile with wrapped halo rows, columns and corners",
         bugs=(Bug("corner_missing",
                   (("    if (threadIdx.x == 0 && threadIdx.y == 0) s[0][0] = cur[yu * w + xl];\n", ""),),
                   "UninitializedReadError", (20, 20), thread=(0, 0, 0), block=(0, 0, 0), array="s", index=(0, 0),
                   what="The top-left corner of the halo is never loaded."),
               Bug("left_halo_not_wrapped", (("s[ty][0] = cur[yc * w + xl];", "s[ty][0] = cur[yc * w + x - 1];"),),
                   "OutOfBoundsError", (20, 20), thread=(0, 0, 0), block=(0, 0, 0), array="cur", index=(-1,),
                   what="The left halo forgets the wrap-around: the first cell's neighbour is cur[-1]."))),
    Case("st_3d_pmpp_regtile", "stencil_3d_reg", "stencil3d_regtile", _reg3d_setup, _reg3d_ref,
         ((1, 1, 1), (3, 4, 5), (8, 8, 8), (7, 13, 11), (13, 6, 9)), rtol=1e-5, atol=1e-5,
         style="PMPP 8.5: 3-D seven-point stencil, z coarsening, register tiling, coefficients in __constant__",
         bugs=(Bug("barrier_before_plane_update_missing",
                   (("        __syncthreads();\n        inPrev = inCurr;", "        inPrev = inCurr;"),),
                   "SharedMemoryRaceError", (8, 8, 8), block=(0, 0, 0), array="inCurr_s",
                   what="The next plane overwrites the shared plane "
                        "while other threads still read the current one."),)),
    Case("st_3d_clamped_grid3d", "stencil_3d_clamp", "stencil3d_clamped", _clamp3d_setup, _clamp3d_ref,
         ((1, 1, 1), (2, 3, 4), (5, 6, 7), (9, 17, 10)), rtol=1e-5, atol=1e-5,
         style="naive 3-D stencil on a 3-D grid of 3-D blocks, neighbours clamped at the faces",
         bugs=(Bug("top_face_unclamped", (("zp = min(z + 1, nz - 1);", "zp = z + 1;"),),
                   "OutOfBoundsError", (5, 6, 7), thread=(0, 0, 0), block=(0, 0, 1), array="in", index=(210,),
                   what="The clamp on z + 1 is forgotten: the top plane reads the plane past the volume."),)),
]
