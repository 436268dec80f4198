// <cuda_pipeline_primitives.h> on the CPU runtime: the pipeline primitives of the CUDA C++
// Programming Guide, asynchronous copies from global to shared memory (cp.async on compute
// capability 8.0 and later; the header copies synchronously on older GPUs).
//
//   __pipeline_memcpy_async(dst, src, size_and_align, zfill = 0)
//       copies size_and_align bytes (4, 8 or 16) from global memory at src to shared memory at
//       dst, both aligned to that size; the last zfill bytes are written as zeros instead of
//       read (zfill == size_and_align reads nothing).
//   __pipeline_commit()          closes the batch of copies issued since the last commit
//   __pipeline_wait_prior(n)     waits until all but the newest n committed batches have landed
//
// A copy lands at some moment between its issue and its thread's wait, and is visible to
// other threads only after a barrier that follows that wait. The runtime performs it at the
// wait (kc_memory.cpp), so a kernel that reads too early sees the old contents, as it may on
// a GPU; checked mode reports any access of a destination whose copy is in flight
// (AsyncCopyRaceError), and a read by another thread without the barrier as a race. A size
// other than 4, 8 or 16, a zfill above it (a GPU traps) or a misaligned address (a GPU
// faults) ends the launch with InvalidOperandError or MisalignedAddressError in both modes;
// checked mode also requires dst in shared and src in global memory.
#pragma once
#include "../src/kc_warp.h"

// `site`: the caller's line, filled in by the compiler; never pass it.
inline __attribute__((noinline)) void __pipeline_memcpy_async(void* __restrict__ dst_shared,
                                                              const void* __restrict__ src_global,
                                                              size_t size_and_align, size_t zfill = 0,
                                                              kc::Site site = kc::Site::here()) {
    kc::async_copy(dst_shared, src_global, size_and_align, zfill, __builtin_return_address(0), site.line);
}
inline void __pipeline_commit() { kc::async_commit(); }
inline void __pipeline_wait_prior(size_t prior) { kc::async_wait_prior(prior); }
