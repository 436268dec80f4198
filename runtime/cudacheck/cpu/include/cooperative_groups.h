// The basic cooperative groups on the CPU runtime: the block and its tiles of up to a
// warp. Each operation is the intrinsic it stands for on a GPU (__syncthreads,
// __syncwarp and the *_sync shuffles and votes with the tile's mask), so checked mode
// checks them the same way. The grid group of a cooperative launch: its sync() is a barrier of
// every thread of the grid (kc_grid.cpp). Multi-grid groups and clusters are not provided (the
// front end refuses a kernel that uses them).
#pragma once

namespace cooperative_groups {

struct dim3_index { unsigned x, y, z; };

// Any group: the block (tile 0) or a tile of `tile` threads of a warp (a power of two up to
// 32), as code written for every kind of group takes it (`void reduce(thread_group g)`).
class thread_group {
public:
    explicit thread_group(unsigned tile = 0) : tile_(tile) {}
    void sync(int line = __builtin_LINE()) const {
        if (tile_) ::kc::warp_op(::kc::SYNCWARP, tile_mask(), 0, 0, 32, line);
        else ::kc::syncthreads(line);
    }
    unsigned thread_rank() const { return tile_ ? block_rank() % tile_ : block_rank(); }
    unsigned size() const { return tile_ ? tile_ : blockDim.x * blockDim.y * blockDim.z; }
    unsigned num_threads() const { return size(); }

protected:
    static unsigned block_rank() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
    unsigned tile_mask() const {
        return tile_ >= 32 ? 0xffffffffu : (((1u << tile_) - 1u) << (block_rank() % 32 / tile_ * tile_));
    }
    unsigned tile_;
};

class thread_block : public thread_group {
public:
    thread_block() : thread_group(0) {}
    void sync(int line = __builtin_LINE()) const { ::kc::syncthreads(line); }
    unsigned thread_rank() const { return block_rank(); }
    unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
    unsigned num_threads() const { return size(); }
    dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
    dim3 dim_threads() const { return group_dim(); }
};

inline thread_block this_thread_block() { return thread_block(); }
inline void sync(const thread_block& g, int line = __builtin_LINE()) { g.sync(line); }

// A tile of Size threads (a power of two, at most 32) within a warp.
template <unsigned Size>
class thread_block_tile : public thread_group {
    static_assert(Size > 0 && Size <= 32 && (Size & (Size - 1)) == 0,
                  "tiled_partition<N>: N must be a power of two no larger than 32");

public:
    thread_block_tile() : thread_group(Size) {}
    static constexpr unsigned lanes = Size;
    unsigned lane() const { return thread_block().thread_rank() % 32; }
    unsigned mask() const {
        return Size == 32 ? 0xffffffffu : (((1u << Size) - 1u) << (lane() / Size * Size));
    }
    void sync(int line = __builtin_LINE()) const { ::kc::warp_op(::kc::SYNCWARP, mask(), 0, 0, 32, line); }
    unsigned thread_rank() const { return thread_block().thread_rank() % Size; }
    static constexpr unsigned size() { return Size; }
    static constexpr unsigned num_threads() { return Size; }
    unsigned meta_group_rank() const { return thread_block().thread_rank() / Size; }
    unsigned meta_group_size() const { return (thread_block().size() + Size - 1) / Size; }

    template <class T> T shfl(T v, int src, int line = __builtin_LINE()) const { return ::kc::shfl(::kc::SHFL_IDX, mask(), v, line, src, int(Size)); }
    template <class T> T shfl_up(T v, unsigned d, int line = __builtin_LINE()) const { return ::kc::shfl(::kc::SHFL_UP, mask(), v, line, int(d), int(Size)); }
    template <class T> T shfl_down(T v, unsigned d, int line = __builtin_LINE()) const {
        return ::kc::shfl(::kc::SHFL_DOWN, mask(), v, line, int(d), int(Size));
    }
    template <class T> T shfl_xor(T v, unsigned m, int line = __builtin_LINE()) const { return ::kc::shfl(::kc::SHFL_XOR, mask(), v, line, int(m), int(Size)); }
    // Votes answer for the tile: ballot's bit i is the tile's thread i.
    unsigned ballot(int p, int line = __builtin_LINE()) const {
        unsigned all = unsigned(::kc::warp_op(::kc::BALLOT, mask(), p != 0, 0, 32, line));
        return Size == 32 ? all : (all >> (lane() / Size * Size)) & ((1u << Size) - 1u);
    }
    int any(int p, int line = __builtin_LINE()) const { return int(::kc::warp_op(::kc::ANY, mask(), p != 0, 0, 32, line)); }
    int all(int p, int line = __builtin_LINE()) const { return int(::kc::warp_op(::kc::ALL, mask(), p != 0, 0, 32, line)); }
    template <class T> unsigned match_any(T v, int line = __builtin_LINE()) const {
        unsigned m = ::kc::match(::kc::MATCH_ANY, mask(), v, line, nullptr);
        return Size == 32 ? m : (m >> (lane() / Size * Size)) & ((1u << Size) - 1u);
    }
};

// The grid: every thread of the launch. Ranks count blocks and threads in the order of their
// linear ids (x fastest); size(), thread_rank() and the block counts are 64-bit, as in CUDA.
class grid_group {
public:
    void sync(int line = __builtin_LINE()) const { ::kc::grid_sync(line); }
    // Whether the launch is cooperative (cudaLaunchCooperativeKernel, or enable_cooperative_groups
    // from Python): only then may the grid synchronise.
    bool is_valid() const { return ::kc::grid_cooperative(); }
    unsigned long long num_blocks() const {
        return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
    }
    unsigned long long block_rank() const {
        return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    }
    unsigned long long num_threads() const { return num_blocks() * thread_block().size(); }
    unsigned long long size() const { return num_threads(); }
    unsigned long long thread_rank() const { return block_rank() * thread_block().size() + thread_block().thread_rank(); }
    dim3 dim_blocks() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
    dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 group_dim() const { return dim_blocks(); }
};

inline grid_group this_grid() { return grid_group(); }
inline void sync(const grid_group& g, int line = __builtin_LINE()) { g.sync(line); }

template <unsigned Size>
inline thread_block_tile<Size> tiled_partition(const thread_block&) { return thread_block_tile<Size>(); }
template <unsigned Size>
inline void sync(const thread_block_tile<Size>& g, int line = __builtin_LINE()) { g.sync(line); }
// tiled_partition(group, n): a tile of n threads (a power of two up to 32) as a thread_group.
inline thread_group tiled_partition(const thread_group&, unsigned n) { return thread_group(n); }
inline void sync(const thread_group& g, int line = __builtin_LINE()) { g.sync(line); }

}  // namespace cooperative_groups
