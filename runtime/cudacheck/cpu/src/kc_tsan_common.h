// The instrumentation's entry points that checked mode (kc_check_access.cpp) and plain runs of a
// kernel with volatile reads (kc_poll.h) share: no work at a function's entry and exit, and
// the atomic loads and stores of a guarded static's initialization (a `__shared__` array of a
// class whose default constructor is not constexpr, such as __half's), performed as they are,
// unchecked (the guard is the compiler's, not the kernel's).
#pragma once

extern "C" void __tsan_init() {}
extern "C" void __tsan_func_entry(void*) {}
extern "C" void __tsan_func_exit() {}
extern "C" void __tsan_vptr_update(void**, void*) {}
extern "C" void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
#define KC_TSAN_ATOMIC(N, T)                                                                                   \
    extern "C" T __tsan_atomic##N##_load(const volatile T* a, int) { return __atomic_load_n(a, __ATOMIC_SEQ_CST); } \
    extern "C" void __tsan_atomic##N##_store(volatile T* a, T v, int) { __atomic_store_n(a, v, __ATOMIC_SEQ_CST); }
KC_TSAN_ATOMIC(8, uint8_t) KC_TSAN_ATOMIC(16, uint16_t) KC_TSAN_ATOMIC(32, uint32_t) KC_TSAN_ATOMIC(64, uint64_t)
#undef KC_TSAN_ATOMIC
