// Everything the generated translation unit includes before the kernel's source.
#pragma once
#include <errno.h>
#include <utility>
#include "cuda_cpu.h"
#include "kc_abi.h"

namespace kc {
// Checked mode's hooks into the scheduler and the launcher (kc_checked.h).
inline void check_worker_start(const LaunchDesc* d, unsigned w);
inline void check_block_start(uint32_t block);
inline void check_interval_end();
inline void check_warp_released(unsigned w);
inline void check_barrier(int end_line);

// Builds the value of parameter i from a[i], which points to it (kc_checked.h
// specializes this for checked pointers).
template <class P>
struct Arg { static P make(void** a, int i) { return *static_cast<P*>(a[i]); } };
}  // namespace kc

#include "kc_scheduler.h"
#include "kc_launch.h"
#ifdef KC_CHECKED
#include "kc_checked.h"
#endif

// The generated stub for kernel K is
//   static void kc_body_K(void** a) { ::kc::invoke(&name, a); }
//   extern "C" int kc_spawn_K(const kc::LaunchDesc* d, int32_t* pids) { return kc::spawn(kc_body_K, d, pids); }
#define KC_VISIBLE extern "C" __attribute__((visibility("default")))

namespace kc {
// Calls kernel f with its arguments.
template <class... P, size_t... I>
inline void invoke_impl(void (*f)(P...), void** a, std::index_sequence<I...>) {
    f(Arg<std::remove_cvref_t<P>>::make(a, int(I))...);
}
template <class... P>
inline void invoke(void (*f)(P...), void** a) {
    invoke_impl(f, a, std::index_sequence_for<P...>{});
}
}  // namespace kc
