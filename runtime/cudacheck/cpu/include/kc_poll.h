// Plain runs of a kernel that reads through volatile pointers (compiler.py: POLL_FLAGS). The
// kernel's unit is instrumented as checked mode's is, but here every entry point does nothing
// except a volatile read's, which hands the location to poll() (kc_runtime.cpp): a thread
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
extern "C" void __tsan_init() {}
extern "C" void __tsan_func_entry(void*) {}
extern "C" void __tsan_func_exit() {}
extern "C" void __tsan_vptr_update(void**, void*) {}
extern "C" void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }   // __threadfence()
extern "C" void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
// A guarded static's initialization, as checked mode performs it (kc_checked.h).
#define KC_TSAN_ATOMIC(N, T)                                                                                   \
    extern "C" T __tsan_atomic##N##_load(const volatile T* a, int) { return __atomic_load_n(a, __ATOMIC_SEQ_CST); } \
    extern "C" void __tsan_atomic##N##_store(volatile T* a, T v, int) { __atomic_store_n(a, v, __ATOMIC_SEQ_CST); }
KC_TSAN_ATOMIC(8, uint8_t) KC_TSAN_ATOMIC(16, uint16_t) KC_TSAN_ATOMIC(32, uint32_t) KC_TSAN_ATOMIC(64, uint64_t)
#undef KC_TSAN_ATOMIC
