// Slice `slice` of k for the block tile at (brow, bcol): a ROWS x 64 tile of M in one box,
// and the 64 x COLS tile of N in boxes of 64 columns, side by side (8,192 bytes apart). A
// box of N wholly right of column n is not loaded: only P's columns beyond n, which are
// never stored, would read it. The barrier is told the bytes of the boxes loaded.
template <int ROWS, int COLS>
__device__ __forceinline__ void load_slice(unsigned a_dst, unsigned b_dst, unsigned bar, const TensorMap* mapM,
                                           const TensorMap* mapN, int slice, int brow, int bcol, int n) {
    int chunks = (n - bcol + CHUNK - 1) / CHUNK;
    if (chunks > COLS / CHUNK)
        chunks = COLS / CHUNK;
    mbar_arrive_expect_tx(bar, ROWS * BK + chunks * CHUNK_BYTES);
    tma_load(a_dst, mapM, slice * BK, brow, bar);
    for (int j = 0; j < chunks; ++j)
        tma_load(b_dst + j * CHUNK_BYTES, mapN, bcol + j * CHUNK, slice * BK, bar);
}
