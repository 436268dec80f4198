// The host side of a whole program on the CPU runtime: the CUDA runtime API of kc_host.h.
// Compiled once per variant and linked only into programs (runtime/cudacheck/cpu/host.py).
//
// Every call that touches device memory (cudaMalloc, cudaFree, cudaMemcpy, cudaMemset) and
// every launch goes to the Python side through the callbacks kc_program_run receives: it
// owns the allocations (in the launcher's slots, PROT_NONE while host code runs, so that
// a host dereference of device memory faults as on a GPU), checks each call against them
// and launches kernels in worker processes as RawKernel launches do. What needs no
// allocation (the error state, events, the device query) is here.
#define KC_PROGRAM
#include <stdio.h>   // cuda_cpu.h gives a whole program's units none (as nvcc)
#include <dlfcn.h>
#include <initializer_list>
#include <execinfo.h>
#include <malloc.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../include/cuda_cpu.h"
#include "kc_host_abi.h"

namespace kc {

void forget_inherited_free_lists();   // kc_host_heap.cpp: the program's heap starts with none

static HostCallbacks cb;
static HostCrash* crash;
static uintptr_t lib_base;
static cudaError_t last_error = cudaSuccess;
const void* launched_fn;

static cudaError_t record(int rc) {
    if (rc != cudaSuccess) last_error = cudaError_t(rc);
    return cudaError_t(rc);
}
cudaError_t host_error(cudaError_t e) { return record(e); }

// cudaFuncSetAttribute's opt-in to more dynamic shared memory, per kernel.
static struct { const void* fn; int64_t bytes; } optins[256];
static int noptins;

cudaError_t host_launch(int id, int line, void (*body)(void**), const void* fn, dim3 grid, dim3 block, size_t shared,
                        void** args) {
    int64_t optin = -1;
    for (int i = 0; i < noptins; ++i)
        if (optins[i].fn == fn) optin = optins[i].bytes;
    uint32_t g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    launched_fn = fn;
    return record(cb.launch(id, line, reinterpret_cast<void*>(body), g, b, uint64_t(shared), optin, args));
}

[[noreturn]] static void end_program(int code) {
    fflush(stdout);
    fflush(stderr);
    cb.end(code);
    _exit(code & 0xff);
}

static void on_host_signal(int sig, siginfo_t* info, void* context) {
    crash->signal = sig;
    crash->address = reinterpret_cast<uint64_t>(info->si_addr);
    crash->is_write = -1;
#if defined(__x86_64__)
    if (sig == SIGSEGV) crash->is_write = (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
    (void)context;
#endif
    // The frames inside the program's library, for their source lines (the fault may be
    // in the C library's memcpy, called from main): the faulting instruction itself, then
    // the return addresses of its callers, less one (inside the call instruction).
#if defined(__x86_64__)
    uintptr_t pc = uintptr_t(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    uintptr_t pc = uintptr_t(static_cast<ucontext_t*>(context)->uc_mcontext.pc);
#else
    uintptr_t pc = 0;
#endif
    void* pcs[64];
    int n = backtrace(pcs, 64), k = 0, first = 0;
    while (first < n && reinterpret_cast<uintptr_t>(pcs[first]) != pc) ++first;   // skip the handler's frames
    if (first == n) first = 0;
    auto mine = [](uintptr_t a) {
        Dl_info d;
        return dladdr(reinterpret_cast<void*>(a), &d) && reinterpret_cast<uintptr_t>(d.dli_fbase) == lib_base;
    };
    for (int i = first; i < n && k < 32; ++i) {
        uintptr_t a = reinterpret_cast<uintptr_t>(pcs[i]);
        if (mine(a)) crash->frames[k++] = a - lib_base - (a == pc ? 0 : 1);
    }
    crash->nframes = k;
    fflush(stdout);
    fflush(stderr);
    signal(sig, SIG_DFL);
    raise(sig);
}

}  // namespace kc

using namespace kc;

// exit() from the program ends it here: its output flushed, the Python side told, and
// nothing else of the (forked) Python process run. Only the program's own calls bind to
// it: the library binds its calls to its own functions (-Bsymbolic-functions), and ctypes
// loads it RTLD_LOCAL, so no other library sees it. (It is exported all the same: a
// definition takes the default visibility of the C library's declaration.)
extern "C" void exit(int code) noexcept { end_program(code); }

extern "C" int kc_program_run(const HostCallbacks* callbacks, HostCrash* out, int argc, char** argv) {
    cb = *callbacks;
    crash = out;
    Dl_info d;
    if (dladdr(reinterpret_cast<void*>(&kc_program_run), &d)) lib_base = reinterpret_cast<uintptr_t>(d.dli_fbase);
    void* warm[1];
    backtrace(warm, 1);   // loads the unwinder now, not in the signal handler
    install_fatal_signal_handler(&on_host_signal);
    signal(SIGPIPE, SIG_DFL);
    // A fresh process's mmap threshold (glibc's 128 KiB), which the Python process this one
    // was forked from has raised: a large block is a fresh mmap, all zero (kc_host_heap.cpp).
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    forget_inherited_free_lists();
    // A fresh process's C library random numbers: rand()/random() as seeded with 1, and the
    // drand48 family's state all zero with its default multiplier (what seed48 of zeros sets),
    // not whatever the forked Python process (its libraries) drew before. A program that never
    // seeds them (Rodinia's b+tree) draws the sequence it draws from a shell.
    srand(1);
    unsigned short zero[3] = {0, 0, 0};
    seed48(zero);
    end_program(kc_main(argc, argv));
}

cudaError_t cudaMalloc(void** devPtr, size_t size, int line) { return record(cb.malloc(devPtr, size, line)); }
cudaError_t cudaFree(void* devPtr, int line) { return devPtr ? record(cb.free(devPtr, line)) : cudaSuccess; }
// Free is the device's memory less what the program's allocations hold (the ledger's count).
cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    if (!free || !total) return record(cudaErrorInvalidValue);
    *total = p.totalGlobalMem;
    *free = p.totalGlobalMem - cb.held();
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void** ptr, size_t size) {
    *ptr = malloc(size ? size : 1);
    return record(*ptr ? cudaSuccess : cudaErrorMemoryAllocation);
}
cudaError_t cudaFreeHost(void* ptr) {
    free(ptr);
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind, int line) {
    return record(cb.memcpy(dst, src, count, int(kind), line));
}
// Launches finish before the launch returns here, so a copy on a stream is a copy.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t, int line) {
    return record(cb.memcpy(dst, src, count, int(kind), line));
}
cudaError_t cudaMemset(void* devPtr, int value, size_t count, int line) {
    return record(cb.memset(devPtr, value, count, line));
}
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t, int line) {
    return record(cb.memset(devPtr, value, count, line));
}
// A launch has finished (or failed, ending the program with its exception) before it
// returns, so there is nothing to wait for; launch configuration errors are not reported
// here, only by cudaGetLastError, as on a GPU.
cudaError_t cudaDeviceSynchronize(void) { cb.synchronize(); return cudaSuccess; }

static size_t limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};   // CUDA's defaults on an H100
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
    if (unsigned(limit) >= sizeof limits / sizeof limits[0]) return record(cudaErrorUnsupportedLimit);
    limits[limit] = value;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
    if (!value) return record(cudaErrorInvalidValue);
    if (unsigned(limit) >= sizeof limits / sizeof limits[0]) return record(cudaErrorUnsupportedLimit);
    *value = limits[limit];
    return cudaSuccess;
}
cudaError_t cudaDeviceReset(void) { cb.synchronize(); return cudaSuccess; }
cudaError_t cudaGetLastError(void) {
    cb.errors_checked();
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) {
    cb.errors_checked();
    return last_error;
}

static const struct { cudaError_t code; const char* name; const char* text; } error_table[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidChannelDescriptor, "cudaErrorInvalidChannelDescriptor", "invalid channel descriptor"},
    {cudaErrorInvalidFilterSetting, "cudaErrorInvalidFilterSetting", "invalid filter setting"},
    {cudaErrorUnsupportedLimit, "cudaErrorUnsupportedLimit", "limit is not supported on this architecture"},
    {cudaErrorInvalidHostPointer, "cudaErrorInvalidHostPointer", "invalid host pointer"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration", "__global__ function call is not configured"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorCooperativeLaunchTooLarge, "cudaErrorCooperativeLaunchTooLarge",
     "too many blocks in cooperative launch"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};
const char* cudaGetErrorString(cudaError_t error) {
    for (const auto& e : error_table)
        if (e.code == error) return e.text;
    return "unrecognized error code";
}
const char* cudaGetErrorName(cudaError_t error) {
    for (const auto& e : error_table)
        if (e.code == error) return e.name;
    return "cudaErrorUnknown";
}

// Events read the host's clock: a launch has run by the time the next event is recorded.
struct KcEvent { double ms; bool recorded; };
cudaError_t cudaEventCreate(cudaEvent_t* event) {
    *event = new KcEvent{0.0, false};
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
    if (!event) return record(cudaErrorInvalidResourceHandle);
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    *event = KcEvent{t.tv_sec * 1e3 + t.tv_nsec / 1e6, true};
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    if (!event) return record(cudaErrorInvalidResourceHandle);
    cb.synchronize();
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (!start || !end) return record(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded) return record(cudaErrorInvalidResourceHandle);
    *ms = float(end->ms - start->ms);
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
    delete event;
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* stream) {
    *stream = reinterpret_cast<cudaStream_t>(new char(0));
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { cb.synchronize(); return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    delete reinterpret_cast<char*>(stream);
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
    *count = 1;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : record(cudaErrorInvalidDevice); }

// An NVIDIA H100 SXM5 80 GB, as cudaGetDeviceProperties reports it (CUDA 12.x).
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
    if (device != 0) return record(cudaErrorInvalidDevice);
    *p = cudaDeviceProp{};
    snprintf(p->name, sizeof p->name, "NVIDIA H100 80GB HBM3 (as described by the cudacheck CPU runtime)");
    p->totalGlobalMem = 85024112640ull;          // 79.2 GiB
    p->sharedMemPerBlock = 48 * 1024;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
    p->totalConstMem = 65536;
    p->major = 9;
    p->minor = 0;
    p->textureAlignment = 512;
    p->multiProcessorCount = 132;
    p->concurrentKernels = 1;
    p->ECCEnabled = 1;
    p->asyncEngineCount = 3;
    p->unifiedAddressing = 1;
    p->memoryBusWidth = 5120;                    // bits
    p->l2CacheSize = 50 * 1024 * 1024;
    p->persistingL2CacheMaxSize = 32440320;
    p->maxThreadsPerMultiProcessor = 2048;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->regsPerMultiprocessor = 65536;
    p->managedMemory = 1;
    p->cooperativeLaunch = 1;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->maxBlocksPerMultiProcessor = 32;
    p->reservedSharedMemPerBlock = 1024;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return cudaErrorInvalidDevice;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = int(p.sharedMemPerBlock); break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = 1980000; break;          // kHz
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrMemoryClockRate: *value = 2619000; break;    // kHz
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = int(p.sharedMemPerMultiprocessor); break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = int(p.sharedMemPerBlockOptin); break;
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *value = int(p.reservedSharedMemPerBlock); break;
    default: return record(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

extern "C" const KernelShared kc_kernel_shared[];   // (compiler.py: after the program's source)

// Threads (in whole warps), blocks and shared memory per SM, from the device's properties, as
// launch.py's blocks_per_sm counts them for a cooperative launch's limit.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          size_t dynamicSMemSize) {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    const KernelShared* k = kc_kernel_shared;
    while (k->fn && k->fn != func) ++k;
    if (!numBlocks || !k->fn) return record(cudaErrorInvalidDeviceFunction);
    if (blockSize <= 0 || blockSize > p.maxThreadsPerBlock) return record(cudaErrorInvalidValue);
    int warps = (blockSize + p.warpSize - 1) / p.warpSize;
    size_t shared = k->bytes + dynamicSMemSize + p.reservedSharedMemPerBlock;
    int by_threads = p.maxThreadsPerMultiProcessor / (warps * p.warpSize);
    int by_shared = int(p.sharedMemPerMultiprocessor / shared);
    int n = p.maxBlocksPerMultiProcessor;
    if (by_threads < n) n = by_threads;
    if (by_shared < n) n = by_shared;
    *numBlocks = n;
    return cudaSuccess;
}

// The opt-in to more than 48 KiB of dynamic shared memory; the launch checks against it
// (with the kernel's static shared memory) as the Python launch path does.
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) return cudaSuccess;
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 || value > 227 * 1024)
        return record(cudaErrorInvalidValue);
    for (int i = 0; i < noptins; ++i)
        if (optins[i].fn == func) {
            optins[i].bytes = value;
            return cudaSuccess;
        }
    if (noptins == 256) return record(cudaErrorInvalidValue);
    optins[noptins++] = {func, value};
    return cudaSuccess;
}

// A hint: checked (a kernel of the program, a known preference) and otherwise without effect. What
// is not a kernel is an invalid resource handle (what CUDA 13 on an H200 returns for a host
// function's address), not cudaErrorInvalidDeviceFunction.
static bool is_kernel(const void* func) {
    const KernelShared* k = kc_kernel_shared;
    while (k->fn && k->fn != func) ++k;
    return k->fn != nullptr;
}
cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig) {
    if (!is_kernel(func)) return record(cudaErrorInvalidResourceHandle);
    return record(unsigned(cacheConfig) <= cudaFuncCachePreferEqual ? cudaSuccess : cudaErrorInvalidValue);
}
static cudaFuncCache device_cache = cudaFuncCachePreferNone;
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache cacheConfig) {
    if (unsigned(cacheConfig) > cudaFuncCachePreferEqual) return record(cudaErrorInvalidValue);
    device_cache = cacheConfig;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* cacheConfig) {
    if (!cacheConfig) return record(cudaErrorInvalidValue);
    *cacheConfig = device_cache;
    return cudaSuccess;
}

// The launcher's entry for a program's launch (kc_host_abi.h).
extern "C" int kc_spawn_body(void (*body)(void**), const LaunchDesc* d, int32_t* pids) {
    return spawn(body, d, pids);
}

// cuda.h's message for a tensor map the driver would refuse (kc::tensor_map_refused).
extern "C" void kc_say_tensor_map_refused(const char* why) {
    fprintf(stderr, "cuTensorMapEncodeTiled (cudacheck's CPU runtime): %s\n", why);
}
