// Plain runs of a kernel that reads through volatile pointers (compiler.py: POLL_FLAGS). The
// kernel's unit is instrumented as checked mode's is, but here every entry point does nothing
// except a volatile read's, which hands the location to poll() (kc_poll.cpp): a thread
// spinning on a flag another thread sets lets the others of its block run, and a block that
// waits for a block that cannot run is reported instead of hanging. Kernels without
// `volatile` are built without any of this.
#pragma once

#define KC_TSAN(N)                                                                           \
    extern "C" void __tsan_read##N(void*) {}                                                 \
    extern "C" void __tsan_write##N(void*) {}                                                \
    extern "C" void __tsan_unaligned_read##N(void*) {}                                       \
    extern "C" void __tsan_unaligned_write##N(void*) {}                                      \
    extern "C" void __tsan_volatile_write##N(void*) {}                                       \
    extern "C" void __tsan_volatile_read##N(void* p) { kc::poll(p, N, __builtin_return_address(0), 0); }
KC_TSAN(1) KC_TSAN(2) KC_TSAN(4) KC_TSAN(8) KC_TSAN(16)
#undef KC_TSAN
extern "C" void __tsan_read_range(void*, unsigned long) {}
extern "C" void __tsan_write_range(void*, unsigned long) {}
extern "C" void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }   // __threadfence()
#include "kc_tsan_common.h"
