// The layouts and entry points a whole program's host side (kc_host.cpp) shares with the
// Python side (runtime/cudacheck/cpu/host.py, host_api.py), declared once: here, read as
// kc_abi.h is (runtime/cudacheck/cpu/abi.py). Only kc_host.cpp includes it: a program's own
// code never sees these names.
#pragma once
#include <stdint.h>

#include "kc_abi.h"

namespace kc {

// The calls of a program's CUDA runtime API that the Python side answers (host_api.py).
struct HostCallbacks {
    int (*malloc)(void** ptr, uint64_t bytes, int line);
    int (*free)(void* ptr, int line);
    int (*memcpy)(void* dst, const void* src, uint64_t bytes, int kind, int line);
    int (*memset)(void* ptr, int value, uint64_t bytes, int line);
    int (*launch)(int id, int line, void* body, const uint32_t* grid, const uint32_t* block, uint64_t shared,
                  int64_t optin, void** args);
    void (*errors_checked)(void);     // the program read the error state (cudaGetLastError, Peek)
    void (*synchronize)(void);        // a synchronization: device printf output appears (host_api.py)
    void (*end)(int exit_code);       // main returned or exit() was called: the Python side's last word
    uint64_t (*held)(void);           // the bytes the program's live cudaMalloc'd memory holds (cudaMemGetInfo)
};

// What a fatal signal in host code leaves for the caller (host.py reads it).
struct HostCrash {
    int32_t signal;
    int32_t is_write;                 // 1 write, 0 read, -1 unknown
    uint64_t address;
    int32_t nframes;
    int32_t pad;
    uint64_t frames[32];              // offsets into the program's library, innermost first
};

}  // namespace kc

// ---- entry points (see kc_abi.h's) ----------------------------------------------------------

// Runs the program's main (kc_main, kc_host.h) in the child that host.py forks, with its calls
// of the CUDA runtime API answered by `callbacks`; never returns: the program's end ends the
// process, and a fatal signal in host code leaves its account in `out`.
extern "C" __attribute__((visibility("default"))) int kc_program_run(const kc::HostCallbacks* callbacks,
                                                                     kc::HostCrash* out, int argc, char** argv);

// The launcher's entry for a program's launch (HostCallbacks::launch hands host_api.py `body`,
// a launched_body<P...>): as kc_spawn_n, the workers running `body`.
extern "C" __attribute__((visibility("default"))) int kc_spawn_body(void (*body)(void**), const kc::LaunchDesc* d,
                                                                    int32_t* pids);
