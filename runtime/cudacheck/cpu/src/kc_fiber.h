// Fibers: the threads of one CUDA block, switched cooperatively on one OS thread.
//
// A fiber is a stack and a saved stack pointer. kc_switch(&from_sp, to_sp) saves the
// callee-saved registers on the current stack, stores the stack pointer in *from_sp,
// loads to_sp and restores the registers saved there. That is all a switch costs
// (a few nanoseconds), which is why the runtime does not use swapcontext: glibc's
// version also saves the signal mask with a system call on every switch.
//
// On x86-64 the switch ends in an indirect jump to the saved return address, not a `ret`. The
// processor predicts a `ret` from its stack of return addresses, which holds the place the
// thread switched out from (after its own call of __syncthreads()), while the thread switched
// in resumes where it switched out, another call: at the tiled kernel's two barriers a phase,
// every `ret` was mispredicted, and each misprediction threw away the work under way, the next
// thread's chain of multiply-adds overlapping the switch. A jump is predicted from where the
// last one went: within a pass of the scheduler every thread resumes at the same place. (The
// tiled kernel at Width 256: 0.6-0.7 of the CPU time, logs/2026-12-06-cpu-runtime-speed.md.)
#pragma once
#include <cstddef>
#include <cstdint>

namespace kc {

using FiberEntry = void (*)(void*);

// The switch and the first frame of a fiber, in assembly for each architecture below.
extern "C" void kc_switch(void** from_sp, void* to_sp);
extern "C" void kc_fiber_trampoline();

#if defined(__x86_64__)
asm(R"(
    .text
    .p2align 4
    .globl kc_switch
    .hidden kc_switch
    .type kc_switch,@function
kc_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    popq %rcx
    jmpq *%rcx
    .size kc_switch,.-kc_switch

    .p2align 4
    .globl kc_fiber_trampoline
    .hidden kc_fiber_trampoline
    .type kc_fiber_trampoline,@function
kc_fiber_trampoline:
    movq %r12, %rdi
    callq *%r13
    ud2
    .size kc_fiber_trampoline,.-kc_fiber_trampoline
)");

// Lays out a fresh stack so that the first kc_switch into it "returns" into the
// trampoline, which calls entry(arg) with a 16-byte aligned stack. entry never returns.
inline void* fiber_init(void* stack_lo, size_t size, FiberEntry entry, void* arg) {
    uintptr_t top = (reinterpret_cast<uintptr_t>(stack_lo) + size) & ~uintptr_t(15);
    // Seven words are popped by kc_switch (six registers and the address it jumps to); after them the trampoline
    // must see rsp % 16 == 0 so that its call is ABI-aligned: top - 72 + 56 = top - 16.
    void** sp = reinterpret_cast<void**>(top - 9 * 8);
    sp[0] = nullptr;                                     // r15
    sp[1] = nullptr;                                     // r14
    sp[2] = reinterpret_cast<void*>(entry);              // r13
    sp[3] = arg;                                         // r12
    sp[4] = nullptr;                                     // rbx
    sp[5] = nullptr;                                     // rbp
    sp[6] = reinterpret_cast<void*>(&kc_fiber_trampoline);  // return address
    sp[7] = sp[8] = nullptr;
    return sp;
}

#elif defined(__aarch64__)
asm(R"(
    .text
    .p2align 4
    .globl kc_switch
    .hidden kc_switch
    .type kc_switch,%function
kc_switch:
    sub sp, sp, #176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #176
    ret
    .size kc_switch,.-kc_switch

    .p2align 4
    .globl kc_fiber_trampoline
    .hidden kc_fiber_trampoline
    .type kc_fiber_trampoline,%function
kc_fiber_trampoline:
    mov x0, x19
    blr x20
    brk #0
    .size kc_fiber_trampoline,.-kc_fiber_trampoline
)");

inline void* fiber_init(void* stack_lo, size_t size, FiberEntry entry, void* arg) {
    uintptr_t top = (reinterpret_cast<uintptr_t>(stack_lo) + size) & ~uintptr_t(15);
    void** sp = reinterpret_cast<void**>(top - 176);
    for (int i = 0; i < 22; ++i) sp[i] = nullptr;
    sp[0] = arg;                                               // x19
    sp[1] = reinterpret_cast<void*>(entry);                    // x20
    sp[11] = reinterpret_cast<void*>(&kc_fiber_trampoline);    // x30 (link register)
    return sp;
}

#else
#error "the CPU runtime's fibers support x86-64 and AArch64 Linux"
#endif

}  // namespace kc
