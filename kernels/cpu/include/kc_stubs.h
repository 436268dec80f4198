// Included by the launch stubs at the end of the kernel's translation unit
// (kernels/cpu/compiler.py writes one stub per kernel):
//   static void kc_body_K(void** a) { ::kc::invoke(&name, a); }
//   KC_VISIBLE int kc_spawn_K(const kc::LaunchDesc* d, int32_t* pids) { return kc::spawn(kc_body_K, d, pids); }
#pragma once
#include "kc_abi.h"

#define KC_VISIBLE extern "C" __attribute__((visibility("default")))

namespace kc {
int spawn(void (*body)(void**), const LaunchDesc* d, int32_t* pids);

template <int... I> struct seq {};
template <int N, int... I> struct make_seq : make_seq<N - 1, N - 1, I...> {};
template <int... I> struct make_seq<0, I...> { using type = seq<I...>; };
template <class T> struct unqualified { using type = T; };
template <class T> struct unqualified<const T> { using type = T; };
template <class T> struct unqualified<volatile T> { using type = T; };
template <class T> struct unqualified<const volatile T> { using type = T; };

// Calls kernel f with its arguments: a[i] points to the value of parameter i.
template <class... P, int... I>
inline void invoke_impl(void (*f)(P...), void** a, seq<I...>) {
    f(*static_cast<typename unqualified<P>::type*>(a[I])...);
}
template <class... P>
inline void invoke(void (*f)(P...), void** a) {
    invoke_impl(f, a, typename make_seq<int(sizeof...(P))>::type{});
}
}  // namespace kc
