// Everything the generated translation unit includes before the kernel's source.
#pragma once
#include <errno.h>
#include "cuda_cpu.h"
#include "kc_scheduler.h"
#include "kc_launch.h"

// The generated stub for kernel K is
//   static void kc_body_K(void** a) { name(*(T0*)a[0], *(T1*)a[1], ...); }
//   extern "C" int kc_spawn_K(const kc::LaunchDesc* d, int32_t* pids) { return kc::spawn(kc_body_K, d, pids); }
#define KC_VISIBLE extern "C" __attribute__((visibility("default")))

#include <utility>
namespace kc {
// Calls kernel f with its arguments; a[i] points to the value of parameter i.
template <class... P, size_t... I>
inline void invoke_impl(void (*f)(P...), void** a, std::index_sequence<I...>) {
    f(*static_cast<std::remove_cvref_t<P>*>(a[I])...);
}
template <class... P>
inline void invoke(void (*f)(P...), void** a) {
    invoke_impl(f, a, std::index_sequence_for<P...>{});
}
}  // namespace kc
