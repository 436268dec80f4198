// Included by the launch stubs at the end of the kernel's translation unit
// (runtime/cudacheck/cpu/compiler.py writes one stub per kernel):
//   static void kc_body_K(void** a) { ::kc::invoke(&name, a); }
//   KC_VISIBLE kc_spawn_n kc_spawn_K;   (its prototype: kc_abi.h)
//   KC_VISIBLE int kc_spawn_K(const kc::LaunchDesc* d, int32_t* pids) { return kc::spawn(kc_body_K, d, pids); }
// A whole program's host code (kc_host.h) includes it too.
#pragma once
#include <signal.h>

#include "kc_abi.h"

#define KC_VISIBLE extern "C" __attribute__((visibility("default")))

namespace kc {
int spawn(void (*body)(void**), const LaunchDesc* d, int32_t* pids);

// Sends SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT to `handler` on a stack of its own (the
// fault may be a stack overflow), and lets SIGINT and SIGTERM kill the process again where
// the caller ignores or handles them (Jupyter does). A kernel's workers (kc_launch.cpp)
// and a whole program's main (kc_host.cpp) install their own handler with it.
void install_fatal_signal_handler(void (*handler)(int, siginfo_t*, void*));

// (Names no kernel #defines: the stubs come after the kernel's source and its macros.)
template <int... KcI> struct seq {};
template <int KcN, int... KcI> struct make_seq : make_seq<KcN - 1, KcN - 1, KcI...> {};
template <int... KcI> struct make_seq<0, KcI...> { using type = seq<KcI...>; };
template <class KcT> struct unqualified { using type = KcT; };
template <class KcT> struct unqualified<const KcT> { using type = KcT; };
template <class KcT> struct unqualified<volatile KcT> { using type = KcT; };
template <class KcT> struct unqualified<const volatile KcT> { using type = KcT; };

// A parameter's value copied from where the caller put it (a[i]) into storage aligned for its
// type. The caller's buffers (ctypes) are 16-byte aligned at most, while a parameter's type may
// ask for more (CUtensorMap: 64, a struct declared __align__(32)); read in place through a
// pointer of its type, g++ may copy it with moves that fault on a lesser address (with AVX,
// 32-byte vmovdqa: the SIGSEGV of logs/2026-12-06-h100-mfma-crash.md). A kernel's parameter
// types are trivially copyable, as CUDA passes them as bytes.
template <class KcT> struct arg_copy {
    alignas(KcT) unsigned char bytes[sizeof(KcT)];
    explicit arg_copy(const void* p) { __builtin_memcpy(bytes, p, sizeof(KcT)); }
    KcT& value() { return *reinterpret_cast<KcT*>(bytes); }
};

// Calls kernel f with its arguments: a[i] points to the value of parameter i (at any alignment).
template <class... KcP, int... KcI>
inline void invoke_impl(void (*f)(KcP...), void** a, seq<KcI...>) {
    f(arg_copy<typename unqualified<KcP>::type>(a[KcI]).value()...);
}
template <class... KcP>
inline void invoke(void (*f)(KcP...), void** a) {
    invoke_impl(f, a, typename make_seq<int(sizeof...(KcP))>::type{});
}
}  // namespace kc
