// The layouts, constants and entry points of a launch that the runtime's C++ and the Python
// side share, declared once: here (and a whole program's in kc_host_abi.h). Python reads both
// files with clang (runtime/cudacheck/cpu/abi.py) and builds its ctypes structures from them,
// field by field, and the types of every function it calls from their prototypes;
// tests/runtime/test_abi.py checks every size, offset and parameter against g++'s. So they
// include nothing but <stdint.h> (and each other), declare structs of plain fields (integers,
// floats, pointers, fixed arrays, other structs of these files), integer constants
// (constexpr or enum) and extern "C" prototypes, and a field or a parameter changes here and
// nowhere else.
#pragma once
#include <stdint.h>

namespace kc {

enum StatusCode : int32_t { OK = 0, RUNNING = 1, ASSERT_FAILED = 2, CRASHED = 3, OUT_OF_MEMORY = 4, CHECK_FAILED = 5 };

struct WorkerStatus {            // one per worker, in shared memory
    int32_t code;
    int32_t signal;
    uint32_t block;              // linear id of the block running now or at the failure
    uint32_t thread;             // linear id of the thread running now or at the failure
    uint64_t blocks_done;
    uint64_t fault_address;
    int32_t line;
    int32_t stack_overflow;      // the fault hit a fiber's guard page
    uint32_t stalled;            // its block's threads all poll memory that nothing changes (kc_poll.cpp)
    uint32_t pad;
    uint64_t progress;           // advanced whenever its block gets further
    char message[16384];         // assert text, or checked mode's finding as JSON
    char note[1024];             // checked mode's first warning (a finding that does not end the run), as JSON
    char repeat[1024];           // checked mode: the first same-value write of one thread index of two blocks
                                 // (a global_race finding that Python judges at the launch's end)
    uint32_t same_value_pcs[16]; // checked mode: instructions where other same-value writes met
    uint32_t n_same_value_pcs;
    uint32_t pad2;
};

struct LaunchDesc {
    uint32_t grid[3];
    uint32_t block[3];
    uint64_t shared_mem;         // dynamic shared memory per block, bytes
    uint64_t shared_limit;       // static + dynamic shared memory a block may have (the GPU's limit)
    uint64_t stack_size;
    uint32_t workers;
    int32_t output_fd;           // the workers' stdout and stderr (kernel printf)
    void** args;                 // one pointer per kernel parameter, to its value
    WorkerStatus* status;        // `workers` entries
    const uint32_t* order;       // schedule: linear thread ids in the order they run (null: forward)
    int32_t end_line;            // source line of the kernel's closing brace
    int32_t parent_pid;          // the caller: workers die with it
    uint32_t time_limit_s;       // a worker's own alarm, past the caller's time limit
    uint32_t cluster[3];         // blocks per cluster along each axis (1, 1, 1: none; kc_cluster.cpp)
    uint32_t cooperative;        // a cooperative launch: every block at once, grid.sync() allowed (kc_grid.cpp)
    struct CheckDesc* check;     // checked mode's inputs and outputs (null when unchecked)
};

// One access, recorded when checked mode traces a block.
struct TraceRecord {
    uint32_t block, interval, thread;
    int32_t array;               // parameter index, or SHARED_ID_BASE + shared array id
    int64_t index;               // index of the first element it touches, in the array's declared elements
    uint32_t pc;                 // where in the library the access is (checked.py maps it to a line)
    uint8_t op;                  // 0 read, 1 write
    uint8_t width;               // elements it covers: 4 for a float4 load from a float array
    uint8_t pad[2];
};
// A tensor map of the CPU runtime (cudacheck.tensor_map_2d of a NumPy array): the 128 bytes a
// kernel takes by value as its `TensorMap`, in place of the driver's opaque encoding, read by
// the TMA copy (kc_async.cpp). `address` is the matrix's in the launch: each launch maps the
// map's source array as it maps an array argument and writes the mapped address here
// (cpu/forked_launch.py). `magic` tells a map of this layout from any other 128 bytes.
constexpr uint32_t TENSOR_MAP_MAGIC = 0x4b43544du;   // "KCTM"
struct CpuTensorMap {
    uint32_t magic;
    uint32_t element_size;       // bytes: 1, 2, 4 or 8
    uint64_t address;            // element (0, 0)
    uint64_t rows, cols;         // the matrix's sizes, in elements
    uint64_t row_pitch;          // bytes from one row to the next (a multiple of 16)
    uint32_t box_rows, box_cols; // the box a load copies, in elements
    uint32_t swizzle;            // bytes: 0, 32, 64 or 128
    uint32_t oob_nan;            // elements outside the matrix load as NaN (else zeros)
    // A map of rank 3 to 5 (0 or 2: a 2-D one): dimensions 2-4, each a stack of the 2-D boxes
    // above, the box of each dimension laid out after those of the dimensions before it.
    uint32_t rank;
    uint32_t box_outer[3];       // the box's elements in dimensions 2-4 (1 where absent)
    uint64_t dims_outer[3];      // the tensor's sizes in dimensions 2-4 (1 where absent)
    uint64_t strides_outer[3];   // bytes from one element to the next in dimensions 2-4
    // The driver's element strides of dimensions 1-4, less one (0: a copy takes every element;
    // s - 1: every s-th, ceil(box / s) of them, next to each other in shared memory; dimension
    // 0 has none without interleave).
    uint8_t skip[4];
    uint8_t reserved[4];         // up to the 128 bytes of a CUtensorMap
};

// A texture object of the CPU runtime: what cudaCreateTextureObject (kc_host_texture.cpp) or
// cudacheck.texture.TextureObject (texture.py) describes, read by tex1Dfetch, tex1D, tex2D and
// tex3D (cuda/include/texture_indirect_functions.h). A kernel's cudaTextureObject_t is its
// address: in a whole program it lives in the host process's heap, in a Python launch in the
// Python process, and the workers, forked from that process, read it there. `data` is texel
// (0, 0, 0) of the launch's copy (a Python launch maps the texture's array as it maps an array
// argument and writes its address here). The enums are the CUDA runtime's values.
constexpr uint32_t TEXTURE_MAGIC = 0x4b435458u;   // "KCTX"
struct CpuTexture {
    uint32_t magic;
    uint32_t channels;           // 1, 2 or 4, each of channel_bits bits
    uint32_t channel_bits;       // 8, 16 or 32
    uint32_t channel_kind;       // cudaChannelFormatKind: 0 signed, 1 unsigned, 2 float
    uint64_t data;               // texel (0, 0, 0)
    uint64_t pitch;              // bytes from one row to the next
    uint64_t slice_pitch;        // bytes from one 2-D slice to the next
    uint32_t width, height, depth;
    uint32_t address_mode[3];    // cudaTextureAddressMode per dimension: 0 wrap, 1 clamp, 2 mirror, 3 border
    uint32_t filter_mode;        // cudaTextureFilterMode: 0 point, 1 linear
    uint32_t read_normalized;    // cudaReadModeNormalizedFloat: 8- and 16-bit integers read as floats
    uint32_t normalized_coords;  // coordinates in [0, 1) rather than [0, size)
    float border_color[4];
};

constexpr int32_t SHARED_ID_BASE = 1000;
constexpr int MAX_SHARED_ARRAYS = 64;
constexpr int MAX_PARAMS = 64;
constexpr int MAX_SLOTS = 1024;  // slots of a whole program's device memory (runtime/cudacheck/cpu/device_memory.py)

// A whole program's device allocation, for checked mode: every live one is a region, so an
// access through a pointer the kernel was not passed directly (in a struct, a __device__
// variable) is checked too, and `init` shadows each byte's initialization (initcheck).
struct Allocation {
    uint64_t base, bytes;
    uint8_t* init;               // one byte per byte: nonzero once a copy, memset or kernel wrote it
    int64_t param;               // the parameter it is passed as (its name and counts), or -1
    uint64_t elem_size;          // bytes of the element it is indexed in
    const char* name;
};

struct CheckDesc {
    uint64_t* counts;            // per worker: loads and stores of each parameter, then of each shared array
    uint32_t counts_stride;      // entries per worker: 2 * nparams + 2 * MAX_SHARED_ARRAYS
    uint32_t nparams;
    const uint64_t* extents;     // bytes of each pointer parameter's array (0: not a pointer)
    const uint32_t* elem_sizes;  // bytes of each pointer parameter's element as declared
    const char* const* names;    // each parameter's name
    const char* const* shared_names;  // each shared variable's name, by id
    TraceRecord* trace;          // per worker: trace_capacity records
    uint64_t trace_capacity;
    uint64_t* trace_count;       // per worker: records written (may exceed the capacity: then truncated)
    const uint8_t* trace_blocks; // one byte per linear block id, 1 = trace it (null: trace nothing)
    const uint8_t* trace_threads;// one byte per linear thread id, 1 = trace it (null: every thread)
    uint32_t* shared_dims;       // out: 3 dimensions of each shared array, by id
    uint64_t slot_base;          // the arrays' slots: array i lives alone in a slot of 2^slot_shift bytes
    uint32_t slot_shift;
    uint32_t nslots;
    uint64_t device_lo, device_hi;     // the __device__ variables' section
    const uint64_t* device_vars; // (address, bytes) of each __device__ variable
    const char* const* device_names;
    uint32_t ndevice;
    uint32_t nallocs;            // a whole program's launch: its device allocations (else 0)
    const Allocation* allocs;
    const uint32_t* device_elem_sizes;  // bytes of each __device__ variable's element
    uint32_t global_races;       // check global memory for races (kc_check_global_races.cpp)
    uint32_t pad;
    uint64_t gshadow;            // out: the launch's race shadow, mapped by spawn (the caller unmaps it)
    uint64_t gshadow_bytes;
    // Each pointer parameter's allocation, where its array is a view into a larger one (x[3:]):
    // the bytes of it before the array's start, and from that start to its end (else 0, 0: the
    // array is the allocation). Bounds are the allocation's, as on a GPU.
    const uint64_t* leads;
    const uint64_t* spans;
};

}  // namespace kc

// ---- entry points -------------------------------------------------------------------------
// The functions of a kernel's library that the Python side calls through ctypes (abi.bind
// types each from its prototype here). Every definition sees its prototype, so g++ checks the
// one against the other.

// Maps the section of __device__ variables shared between the workers (kc_memory.cpp): 0, or -errno.
extern "C" __attribute__((visibility("default"))) int kc_share_device_memory(void** start, uint64_t* bytes);

// A kernel module's only (kc_module.cpp): frees what its static C++ library allocated when it
// was loaded. Called before each dlclose of the module's library.
extern "C" __attribute__((visibility("default"))) void kc_release_library();

// Numbered families, generated per kernel and per __device__ variable of the source
// (runtime/cudacheck/cpu/compiler.py): kc_spawn_0, kc_spawn_1, ... Each member is declared
// with its family's type before it is defined; abi.bind gives kc_spawn_3 kc_spawn_n's types.
typedef int kc_spawn_n(const kc::LaunchDesc* d, int32_t* pids);   // forks the launch's workers: 0, or -errno
typedef void* kc_device_var_n();                                   // the variable's address
typedef void kc_cluster_n(uint32_t* dims);   // a kernel's __cluster_dims__ (missing ones 0)
