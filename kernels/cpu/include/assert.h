// assert() is the runtime's (cuda_cpu.h): a failed assert ends the launch with a
// KernelAssertionError naming the thread. Including this must not bring back the C library's.
#pragma once
