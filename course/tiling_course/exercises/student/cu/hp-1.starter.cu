// A consumer's part of one tile of P, its products in d: for each slice, wait for the slot's
// tiles (step 3a's wait), multiply them (step 3b) keeping one group of products in flight,
// and hand the slot of the slice before back to the producer (the second __syncthreads, as
// an arrival on its empty mbarrier: one per consumer warp). `it` counts the slices of every tile so far,
// which picks the slot and its phase. CLUSTER_SIZE > 1: the slot's tiles were multicast to
// every block of the cluster, so the slot is free only when every block's consumers are done
// with it: lane r of each warp arrives on block r's barrier. during(t) runs once slice t's
// products are issued, while they run (matmul_async_store sends the tile before's last
// results then).
template <int STAGES, int CLUSTER_SIZE, typename During = NoWork>
__device__ __forceinline__ void consume_tile(float (&d)[WS_MT][WS_BN / 2], unsigned& it, int slices, unsigned base,
                                             unsigned full0, unsigned empty0, int c, int lane,
                                             During during = During()) {
    auto release = [&](unsigned slice) {
        unsigned bar = empty0 + 8 * (slice % STAGES);
        if constexpr (CLUSTER_SIZE > 1) {
            if (lane < CLUSTER_SIZE)
                mbar_arrive_cluster(bar, lane);
        } else if (lane == 0) {
            mbar_arrive(bar);
        }
    };
    zero(d);
    for (int t = 0; t < slices; ++t, ++it) {
        int s = it % STAGES;
        unsigned slot = base + s * WS_STAGE_BYTES;
        fence_acc(d);                                                       // step 3b
        wgmma_fence();
        mma_slice<WS_BN, WS_MT>(d, slot + c * WS_WG_M * ROW_BYTES, slot + WS_A_BYTES);
        wgmma_commit();
        during(t);
        wgmma_wait<1>();                        // slice t-1's products are done: its slot is free
        fence_acc(d);
        if (t > 0)
            release(it - 1);
    }
    wgmma_wait<0>();
    fence_acc(d);
    if (slices > 0)
        release(it - 1);
}
