"""Convolutions (src/conv_*.cu): PMPP ch. 7 1-D convolutions (basic, constant mask, tiled
with the block as the input tile, tiled with halos through the caches), 2-D tiled
convolutions with constant filters, the separable row and column passes of NVIDIA's
convolutionSeparable sample, a uchar4 box blur and RGB(A) to grayscale on uchar3/uchar4."""
import numpy as np

from .case import Bug, Case, Launch


def _cdiv(a, b):
    return max(1, -(-a // b))


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def _corr1d(x, m):
    """sum_j m[j] * x[i - r + j] with zeros outside x (the convolution of PMPP's kernels)."""
    r = len(m) // 2
    p = np.pad(x.astype(np.float64), r)
    return sum(float(m[j]) * p[j:j + len(x)] for j in range(len(m)))


def _corr2d(x, m):
    r = m.shape[0] // 2
    h, w = x.shape
    p = np.pad(x.astype(np.float64), r)
    return sum(float(m[a, b]) * p[a:a + h, b:b + w] for a in range(m.shape[0]) for b in range(m.shape[1]))


_G = {}  # the constant-memory arrays of the last setup, for the references


def _with_global(name, key, make):
    def setup(rng, shape):
        launch = make(rng, shape)
        _G[key] = launch.globals[name]
        return launch
    return setup


# ---------------------------------------------------------------- 1-D
def _basic_setup(rng, n):
    return Launch((_cdiv(n, 32),), (32,), (_f32(rng, n), _f32(rng, 7), np.zeros(n, np.float32), np.int32(7),
                                           np.int32(n)))


def _const_make(rng, n):
    return Launch((_cdiv(n, 64),), (64,), (_f32(rng, n), np.zeros(n, np.float32), np.int32(n)),
                  globals={"Mc": _f32(rng, 7)})


def _intile_make(rng, n):
    return Launch((_cdiv(n, 60),), (64,), (_f32(rng, n), np.zeros(n, np.float32), np.int32(n)),
                  globals={"F": _f32(rng, 5)})


def _caching_make(rng, n):
    return Launch((_cdiv(n, 32),), (32,), (_f32(rng, n), np.zeros(n, np.float32), np.int32(9), np.int32(n)),
                  globals={"M": _f32(rng, 16)})


# ---------------------------------------------------------------- 2-D
def _const2d_make(rng, s):
    h, w = s
    return Launch((_cdiv(w, 12), _cdiv(h, 12)), (16, 16),
                  (_f32(rng, s), np.zeros(s, np.float32), np.int32(w), np.int32(h)),
                  globals={"F_c": _f32(rng, (5, 5))})


def _cached2d_make(rng, s):
    h, w = s
    return Launch((_cdiv(w, 16), _cdiv(h, 16)), (16, 16),
                  (_f32(rng, s), np.zeros(s, np.float32), np.int32(w), np.int32(h)),
                  globals={"K3": _f32(rng, (3, 3))})


# ---------------------------------------------------------------- separable
def _rows_make(rng, s):
    h, w = s
    pitch = w + 3
    return Launch((_cdiv(w, 64), _cdiv(h, 4)), (16, 4), (_f32(rng, (h, pitch)), _f32(rng, (h, pitch)), np.int32(w),
                                                         np.int32(h), np.int32(pitch)),
                  globals={"c_Kernel": _f32(rng, 9)})


def _cols_make(rng, s):
    h, w = s
    return Launch((_cdiv(w, 16), _cdiv(h, 32)), (16, 8), (_f32(rng, s), _f32(rng, s), np.int32(w), np.int32(h),
                                                         np.int32(w)), globals={"c_Kernel": _f32(rng, 9)})


def _sep_ref(axis):
    def reference(args, s):
        h, w = s
        k = _G["sep"][::-1]          # the sample convolves: c_Kernel[R - j] * src[x + j]
        src = args[1][:, :w]
        out = args[0].astype(np.float64)
        if axis == 1:
            out[:, :w] = np.stack([_corr1d(row, k) for row in src])
        else:
            out[:, :w] = np.stack([_corr1d(col, k) for col in src.T]).T
        return {0: out}
    return reference


# ---------------------------------------------------------------- images
def _blur_setup(rng, s):
    h, w = s
    return Launch((_cdiv(w, 16), _cdiv(h, 8)), (16, 8), (rng.integers(0, 256, (h, w, 4), dtype=np.uint8),
                                                        np.zeros((h, w, 4), np.uint8), np.int32(w), np.int32(h)))


def _blur_ref(args, s):
    h, w = s
    p = np.pad(args[0].astype(np.int64), ((1, 1), (1, 1), (0, 0)), mode="edge")
    tot = sum(p[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3))
    return {1: ((tot + 4) // 9).astype(np.uint8)}


def _gray3_setup(rng, s):
    h, w = s
    return Launch((_cdiv(w, 16), _cdiv(h, 16)), (16, 16), (rng.integers(0, 256, (h, w, 3), dtype=np.uint8),
                                                          np.zeros((h, w), np.uint8), np.int32(w), np.int32(h)))


def _gray3_ref(args, s):
    p = args[0].astype(np.int64)
    return {1: ((77 * p[..., 0] + 150 * p[..., 1] + 29 * p[..., 2] + 128) >> 8).astype(np.uint8)}


def _gray4_setup(rng, n):
    return Launch((min(_cdiv(n, 128), 4),), (128,), (rng.integers(0, 256, (n, 4), dtype=np.uint8),
                                                     np.zeros(n, np.float32), np.zeros(n, np.uint8), np.int32(n)))


def _gray4_ref(args, n):
    p = args[0].astype(np.float64)
    lum = 0.299 * p[:, 0] + 0.587 * p[:, 1] + 0.114 * p[:, 2]
    return {1: lum, 2: np.minimum(255, np.rint(lum))}


SH1 = (1, 4, 60, 100, 333)
SH2 = ((1, 1), (3, 7), (12, 12), (20, 30), (41, 26))

CASES = [
    Case("cv_1d_basic_ptr_mask", "conv_1d_basic", "convolution_1D_basic_kernel", _basic_setup,
         lambda a, n: {2: _corr1d(a[0], a[1])}, SH1, rtol=1e-5, atol=1e-5,
         style="PMPP 7.2 basic 1-D convolution, mask passed as a pointer",
         bugs=(Bug("output_unguarded", (("    if (i < Width) P[i] = Pvalue;", "    P[i] = Pvalue;"),),
                   "OutOfBoundsError", 100, thread=(4, 0, 0), block=(3, 0, 0), array="P", index=(100,),
                   what="The book's listing stores P[i] with no guard: the partial last block writes past P."),)),
    Case("cv_1d_const_centred", "conv_1d_const", "convolution_1D_const", _with_global("Mc", "m", _const_make),
         lambda a, n: {1: _corr1d(a[0], _G["m"])}, SH1, rtol=1e-5, atol=1e-5,
         style="PMPP 7.3 constant-memory mask, centred offsets -HALF..HALF",
         bugs=(Bug("mask_index_shifted", (("Mc[j + HALF]", "Mc[j + HALF + 1]"),),
                   "OutOfBoundsError", 100, thread=(0, 0, 0), block=(0, 0, 0), array="Mc", index=(7,),
                   what="The mask index is shifted by one: the last tap reads past the constant mask."),)),
    Case("cv_1d_block_is_input_tile", "conv_1d_intile", "conv1d_in_tile", _with_global("F", "f", _intile_make),
         lambda a, n: {1: _corr1d(a[0], _G["f"])}, SH1, rtol=1e-5, atol=1e-5,
         style="PMPP 7.4 tiled 1-D convolution, block = input tile with halo, inner threads compute",
         bugs=(Bug("output_tile_guard_off_by_one", (("t >= 0 && t < OUT_TILE)", "t >= 0 && t <= OUT_TILE)"),),
                   "OutOfBoundsError", 200, thread=(62, 0, 0), block=(0, 0, 0), array="N_s", index=(64,),
                   what="`<=` lets one halo thread compute: its window runs past the shared tile."),)),
    Case("cv_1d_tiled_caching", "conv_1d_caching", "convolution_1D_tiled_caching_kernel",
         _with_global("M", "m16", _caching_make), lambda a, n: {1: _corr1d(a[0], _G["m16"][:9])}, SH1,
         rtol=1e-5, atol=1e-5, style="PMPP 7.5 tiled 1-D convolution, halo cells read through the caches",
         bugs=(Bug("tile_load_unguarded",
                   (("N_ds[threadIdx.x] = (i < Width) ? N[i] : 0.0f;", "N_ds[threadIdx.x] = N[i];"),),
                   "OutOfBoundsError", 100, thread=(4, 0, 0), block=(3, 0, 0), array="N", index=(100,),
                   what="The book's tile load has no guard: the partial last block reads past N."),)),
    Case("cv_2d_const_input_tile", "conv_2d_const_tile", "convolution_tiled_2D_const_mem_kernel",
         _with_global("F_c", "f2", _const2d_make), lambda a, s: {1: _corr2d(a[0], _G["f2"])}, SH2,
         rtol=1e-5, atol=1e-5, style="PMPP (4th ed.) Fig. 7.12 tiled 2-D convolution, 5x5 filter in __constant__",
         bugs=(Bug("halo_zero_fill_missing", (("    else N_s[threadIdx.y][threadIdx.x] = 0.0f;\n", ""),),
                   "UninitializedReadError", (20, 30), thread=(2, 2, 0), block=(0, 0, 0), array="N_s", index=(0, 0),
                   what="Ghost cells outside the image are never zeroed: the corner thread reads them uninitialized."),
               Bug("filter_col_loop_past_width",
                   (("fCol < 2 * FILTER_RADIUS + 1; fCol++", "fCol <= 2 * FILTER_RADIUS + 1; fCol++"),),
                   "OutOfBoundsError", (20, 30), thread=(2, 2, 0), block=(0, 0, 0), array="F_c",
                   what="The filter's column loop runs one step too far: "
                        "F_c[0][5] is past the constant filter's row."))),
    Case("cv_2d_cached_halo", "conv_2d_cached", "conv2d_cached_halo", _with_global("K3", "k3", _cached2d_make),
         lambda a, s: {1: _corr2d(a[0], _G["k3"])}, SH2, rtol=1e-5, atol=1e-5,
         style="PMPP (4th ed.) Fig. 7.15 tiled 2-D convolution, halo cells through the caches",
         bugs=(Bug("in_tile_test_off_by_one", (("tx >= 0 && tx < TILE_DIM)", "tx >= 0 && tx <= TILE_DIM)"),),
                   "OutOfBoundsError", (20, 24), thread=(15, 0, 0), block=(0, 0, 0), array="N_s", index=(0, 16),
                   what="`<=` in the in-tile test takes the right neighbour from past the shared tile."),)),
    Case("cv_separable_rows", "conv_separable", "convolutionRowsKernel", _with_global("c_Kernel", "sep", _rows_make),
         _sep_ref(1), ((1, 1), (4, 64), (9, 70), (13, 150)), rtol=1e-5, atol=1e-5,
         style="NVIDIA convolutionSeparable sample, row pass (cg barrier, halo steps), pitch > width",
         bugs=(Bug("left_halo_unguarded",
                   (("(rowIn && baseX >= -i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0",
                     "rowIn ? d_Src[i * ROWS_BLOCKDIM_X] : 0"),),
                   "OutOfBoundsError", (10, 50), thread=(0, 0, 0), block=(0, 0, 0), array="d_Src", index=(-16,),
                   what="The left halo is loaded without its test: block 0 reads 16 floats before the image."),)),
    Case("cv_separable_cols", "conv_separable", "convolutionColumnsKernel", _with_global("c_Kernel", "sep", _cols_make),
         _sep_ref(0), ((1, 1), (32, 16), (45, 20), (70, 9)), rtol=1e-5, atol=1e-5,
         style="NVIDIA convolutionSeparable sample, column pass (padded shared rows, halo steps)",
         bugs=(Bug("kernel_index_flipped_off_by_one",
                   (("c_Kernel[KERNEL_RADIUS - j] * s_Data[threadIdx.x]",
                     "c_Kernel[KERNEL_RADIUS + 1 - j] * s_Data[threadIdx.x]"),),
                   "OutOfBoundsError", (32, 16), thread=(0, 0, 0), block=(0, 0, 0), array="c_Kernel", index=(9,),
                   what="The flipped kernel index is off by one: the first tap reads c_Kernel[9]."),)),
    Case("cv_box_blur_uchar4", "conv_box_blur", "box_blur_uchar4", _blur_setup, _blur_ref, SH2,
         style="image box blur on uchar4 pixels, clamp-to-edge, integer rounding",
         bugs=(Bug("x_clamp_low_missing", (("int xx = min(max(x + dx, 0), w - 1);", "int xx = min(x + dx, w - 1);"),),
                   "OutOfBoundsError", (20, 30), thread=(0, 0, 0), block=(0, 0, 0), array="in", index=(-1,),
                   what="Only the upper clamp is kept: the left column reads the pixel before the image."),)),
    Case("cv_gray_uchar3_fixed_point", "conv_gray_uchar3", "rgb_to_gray_uchar3", _gray3_setup, _gray3_ref, SH2,
         style="PMPP ch. 3 colorToGreyscale on packed uchar3 pixels, 8-bit fixed-point weights",
         bugs=(Bug("row_guard_missing", (("if (x < w && y < h) {", "if (x < w) {"),),
                   "OutOfBoundsError", (10, 20), thread=(0, 10, 0), block=(0, 0, 0), array="rgb", index=(200,),
                   what="The row guard is forgotten: threads below the image read past it."),)),
    Case("cv_gray_uchar4_float", "conv_gray_uchar4", "rgba_to_gray_uchar4", _gray4_setup, _gray4_ref,
         (1, 5, 128, 1000, 2049), rtol=1e-5, atol=1.0,
         style="RGBA (uchar4) to grayscale, float weights, __float2int_rn, grid-stride loop"),
]
