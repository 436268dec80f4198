// The async proxy of translated inline PTX (kc_ptx.h): the TMA's tensor copies into shared
// memory and back to global memory, the warpgroup multiply (wgmma), and the proxy fence
// (fence.proxy.async), which checked mode records. All are performed at
// once, where a GPU runs them in the background: a copy's bytes are in place before it
// completes its transaction on the mbarrier (the phase completes only once every byte expected
// has arrived, as on a GPU), a store's before its bulk group is committed, and a wgmma's
// products are in the accumulators before the warpgroup goes on (wgmma.wait_group and
// cp.async.bulk.wait_group then have nothing to wait for, but checked mode counts their groups:
// a GPU still reads the operands, and a store's source, until they retire).
#include <string.h>

#include "kc_runtime.h"

namespace kc {

// ---- swizzles ---------------------------------------------------------------------------------
// The TMA writes a box, and wgmma reads its operands, through one permutation of shared-memory
// addresses (CUDA C++ Programming Guide, "Tensor memory access": swizzle modes; PTX ISA,
// wgmma "Shared Memory Matrix Layout"): with the S-byte swizzle (S = 32, 64 or 128), the
// 16-byte chunk bits 4 .. 4+log2(S/16)-1 of an address are XORed with bits 7 .. 7+log2(S/16)-1,
// so within each group of 8 rows of 128 bytes (1,024 bytes for S = 128) the chunk c of row r
// lands at chunk c ^ r. Addresses are offsets in the shared window (kc_ptx.h), which the
// kernel aligns as it would on a GPU (1,024 bytes for the 128-byte swizzle).
static uint64_t swizzled(uint64_t a, uint32_t bytes) {
    uint64_t bits = bytes == 128 ? 7 : bytes == 64 ? 3 : bytes == 32 ? 1 : 0;
    return a ^ ((a >> 3) & (bits << 4));
}

static char* shared_bytes(uint64_t offset, size_t size, const char* what, int line) {
    char* p = static_cast<char*>(shared_address(offset));
    if (!in_shared(p, size)) operand_error("async_shared", what, p, offset, size, line);
    return p;
}

// An element's bytes, copied or zeroed by a loop the compiler may not turn into memcpy or
// memset: checked mode's library replaces those with instrumented ones (kc_check_access.cpp),
// which would account the copy's bytes as the issuing thread's own access of an array it does
// not know; the copy is accounted by its own hooks (kc_check_async.cpp).
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void put(char* to, const char* from,
                                                                                  uint64_t es) {
    for (uint64_t b = 0; b < es; ++b) to[b] = from ? from[b] : 0;
}

// ---- the TMA: cp.async.bulk.tensor.2d (kc_abi.h: CpuTensorMap) ---------------------------------
static const CpuTensorMap* tensor_map(const void* map, const char* what, int line) {
    const CpuTensorMap* m = static_cast<const CpuTensorMap*>(map);
    if (m->magic != TENSOR_MAP_MAGIC) operand_error("tensor_map", what, map, m->magic, TENSOR_MAP_MAGIC, line);
    return m;
}

void tma_box_aligned(uint64_t at, const char* what, int line) {
    if (at % 128) operand_error("tma_dst", what, shared_address(at), at % 128, 128, line);
}

void tma_load_2d(uint64_t dst, const void* map, int32_t x, int32_t y, uint64_t bar, int line) {
    KC_ASM_CALL;
    tma_box_aligned(dst, "cp.async.bulk.tensor", line);
    tma_copy_in(dst, map, x, y, bar, line);
}

void tma_copy_in(uint64_t dst, const void* map, int32_t x, int32_t y, uint64_t bar, int line) {
    const char* what = "cp.async.bulk.tensor";
    const CpuTensorMap* m = tensor_map(map, what, line);
    uint32_t rows = box_taken(m->box_rows, m->skip[0]);
    uint64_t es = m->element_size, row = m->box_cols * es, bytes = row * rows;
#ifdef KC_CHECKED
    check_tma_box(dst, m, x, y, line, cur ? cur->asm_pc : nullptr);   // the box fits its shared array
#endif
    char* box = shared_bytes(dst, bytes, what, line);
    char* window = box - dst;
    const char* src = reinterpret_cast<const char*>(uintptr_t(m->address));
    for (uint32_t i = 0; i < rows; ++i) {
        int64_t r = int64_t(y) + int64_t(i) * (m->skip[0] + 1);
        for (uint32_t j = 0; j < m->box_cols; ++j) {
            int64_t c = int64_t(x) + j;
            uint64_t at = swizzled(dst + i * row + j * es, m->swizzle);
            char* to = window + at;
#ifdef KC_CHECKED
            check_tma_write(at, uint32_t(es), bar, line);
#endif
            if (r >= 0 && c >= 0 && uint64_t(r) < m->rows && uint64_t(c) < m->cols)
                put(to, src + uint64_t(r) * m->row_pitch + uint64_t(c) * es, es);
            else if (!m->oob_nan)
                put(to, nullptr, es);
            else   // the element type's canonical NaN: all ones but the sign
                for (uint64_t b = 0; b < es; ++b) to[b] = char(b + 1 == es ? 0x7f : 0xff);
        }
    }
    // Every byte of the box counts, those written as fill too.
#ifdef KC_CHECKED
    check_tma_done(bar);
#endif
    mbarrier_complete_tx(shared_address(bar), uint32_t(bytes), line);
}

// cp.async.bulk.tensor.2d, shared to global: each element of the box inside the matrix, from
// where the map's swizzle put it (with element strides, those a load takes, back where it took them).
static void copy_out(const void* map, int32_t x, int32_t y, uint64_t src, int line) {
    const char* what = "cp.async.bulk.tensor (store)";
    const CpuTensorMap* m = tensor_map(map, what, line);
    uint32_t rows = box_taken(m->box_rows, m->skip[0]);
    uint64_t es = m->element_size, row = m->box_cols * es;
    char* window = shared_bytes(src, row * rows, what, line) - src;
    char* dst = reinterpret_cast<char*>(uintptr_t(m->address));
    for (uint32_t i = 0; i < rows; ++i) {
        int64_t r = int64_t(y) + int64_t(i) * (m->skip[0] + 1);
        for (uint32_t j = 0; j < m->box_cols; ++j) {
            int64_t c = int64_t(x) + j;
            uint64_t at = swizzled(src + i * row + j * es, m->swizzle);
#ifdef KC_CHECKED
            check_tma_store_read(at, uint32_t(es), line);   // read until its bulk group is waited for
#endif
            if (r >= 0 && c >= 0 && uint64_t(r) < m->rows && uint64_t(c) < m->cols)
                put(dst + uint64_t(r) * m->row_pitch + uint64_t(c) * es, window + at, es);
        }
    }
}

void tma_store_2d(const void* map, int32_t x, int32_t y, uint64_t src, int line) {
    KC_ASM_CALL;
    tma_box_aligned(src, "cp.async.bulk.tensor (store)", line);
    copy_out(map, x, y, src, line);
}

// ---- copies of 1 to 5 dimensions: each 2-D slice of the box --------------------------------------
// A map of rank 3 to 5 stacks 2-D boxes (kc_abi.h: CpuTensorMap's dimensions 2-4), the slices laid
// out one after another in shared memory as a GPU's TMA lays out the box, dimension 2 fastest.
// f(the slice's 2-D map, its offset in the box): a map of the slice's matrix, or of none where the
// slice lies outside the tensor (every element of it fill). Coordinates past the copy's `n` are 0.
// With element strides, the slices taken are every (skip + 1)-th of each dimension.
template <class F>
static void for_each_slice(const CpuTensorMap* m, const int32_t* c, int n, F f) {
    uint64_t slice = uint64_t(m->box_cols) * box_taken(m->box_rows, m->skip[0]) * m->element_size;
    uint32_t box[3], outer = m->rank > 2 ? m->rank - 2 : 0;
    for (uint32_t d = 0; d < 3; ++d) box[d] = d < outer ? box_taken(m->box_outer[d], m->skip[d + 1]) : 1;
    uint64_t s = 0;
    for (uint32_t i4 = 0; i4 < box[2]; ++i4)
        for (uint32_t i3 = 0; i3 < box[1]; ++i3)
            for (uint32_t i2 = 0; i2 < box[0]; ++i2, ++s) {
                CpuTensorMap part = *m;
                part.rank = 2;
                const uint32_t i[3] = {i2, i3, i4};
                for (uint32_t d = 0; d < 3; ++d) {
                    int64_t at = int64_t(int(d) + 2 < n ? c[d + 2] : 0) + int64_t(i[d]) * (m->skip[d + 1] + 1);
                    if (at < 0 || uint64_t(at) >= (d < outer ? m->dims_outer[d] : 1))
                        part.rows = 0;   // outside the tensor: the whole slice is fill
                    else if (d < outer)
                        part.address += uint64_t(at) * m->strides_outer[d];
                }
                f(part, s * slice);
            }
}

void tma_load_nd(uint64_t dst, const void* map, const int32_t* c, int n, uint64_t bar, int line) {
    KC_ASM_CALL;
    tma_box_aligned(dst, "cp.async.bulk.tensor", line);
    for_each_slice(tensor_map(map, "cp.async.bulk.tensor", line), c, n, [&](const CpuTensorMap& part, uint64_t at) {
        tma_copy_in(dst + at, &part, c[0], n > 1 ? c[1] : 0, bar, line);
    });
}

void tma_load_multicast_nd(uint64_t dst, const void* map, const int32_t* c, int n, uint64_t bar, uint16_t mask,
                           int line) {
    KC_ASM_CALL;
    tma_box_aligned(cluster_local(dst, "cp.async.bulk.tensor (multicast)", line), "cp.async.bulk.tensor", line);
    for_each_slice(tensor_map(map, "cp.async.bulk.tensor", line), c, n, [&](const CpuTensorMap& part, uint64_t at) {
        tma_multicast_slice(dst + at, &part, c[0], n > 1 ? c[1] : 0, bar, mask, line);
    });
}

void tma_store_nd(const void* map, const int32_t* c, int n, uint64_t src, int line) {
    KC_ASM_CALL;
    tma_box_aligned(src, "cp.async.bulk.tensor (store)", line);
    for_each_slice(tensor_map(map, "cp.async.bulk.tensor (store)", line), c, n,
                   [&](const CpuTensorMap& part, uint64_t at) {
                       copy_out(&part, c[0], n > 1 ? c[1] : 0, src + at, line);
                   });
}

// cp.async.bulk.commit_group and wait_group[.read]: the stores are performed at once; checked
// mode counts each thread's bulk groups, to know which stores may still read their source
// (kc_check_async.cpp).
void bulk_commit(int) {
    KC_ASM_CALL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#ifdef KC_CHECKED
    check_bulk_commit();
#endif
}

void bulk_wait(uint32_t n, int) {
    KC_ASM_CALL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#ifdef KC_CHECKED
    // Once, where the wait finds a group of this thread still reading: the store was performed
    // at its issue, so without a yield the issuing thread could run on from the store through
    // this wait before any other thread runs, and a write by another thread that nothing orders
    // after the wait (a barrier before the wait rather than after it) would always land after
    // it, unseen. One yield gives every other runnable thread of the block a turn inside the
    // window (those after this one in the order at once, those before it at the next pass, before
    // this one resumes). Unlike wgmma.wait_group, one thread issues and waits (bulk groups are
    // per thread), so no other thread reaches the wait a pass later and one yield is enough; a
    // correct kernel's writers wait at the barrier after the wait and do not move.
    if (bulk_in_flight(n)) yield_to_scheduler();
    check_bulk_wait(n);
#else
    (void)n;
#endif
}

// ---- fence.proxy.async (kc_ptx.h) -------------------------------------------------------------
// Nothing to order here; checked mode records the fence's place in the thread's program, for
// the check of the async proxy's reads of bytes threads wrote (kc_check_async.cpp).
void fence_proxy_async(int line, ProxySpace space) {
    KC_ASM_CALL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#ifdef KC_CHECKED
    check_proxy_fence(line, space == PROXY_GLOBAL);
#else
    (void)line, (void)space;
#endif
}

// ---- wgmma: the warpgroup's rendezvous ----------------------------------------------------------
// A wgmma is one operation of the warpgroup's 128 threads (4 warps). Each thread leaves the
// addresses of its accumulators (locals of the translated asm statement, on its own stack), and
// in the RS form (A from registers) a copy of its four A registers, and yields to the
// scheduler; the 128th to arrive computes the whole 64 x N product for all of them, and the
// others find it done when they run again.
constexpr unsigned WARPGROUP = 128, MAX_WARPGROUPS = 1024 / WARPGROUP;
enum WgmmaType : uint32_t { BF16 = 0, F16 = 1, TF32 = 2 };   // the front end's codes (ptx_async.py)
// What every thread of the warpgroup must pass alike; not the A registers, each thread's own.
struct Operands {
    uint64_t desc_a, desc_b;
    uint32_t n, type, scale_d, trans_a, trans_b;
    int32_t scale_a, scale_b;
    bool a_registers;   // the RS form: A from registers, desc_a unused (0)
    bool operator!=(const Operands& o) const {   // field by field: the padding is indeterminate
        return desc_a != o.desc_a || desc_b != o.desc_b || n != o.n || type != o.type || scale_d != o.scale_d ||
               trans_a != o.trans_a || trans_b != o.trans_b || scale_a != o.scale_a || scale_b != o.scale_b ||
               a_registers != o.a_registers;
    }
};
struct Warpgroup {
    unsigned arrived = 0;
    uint64_t generation = 0;
    Operands ops;
    int line;                 // the wgmma the first arrival reached
    uint32_t here[4];         // the threads that have arrived, a mask per warp
    float* const* d[WARPGROUP];
    uint32_t a[WARPGROUP][4];   // the RS form: each thread's A registers, copied at its arrival
};
static Warpgroup groups[MAX_WARPGROUPS];

// A matrix descriptor (PTX ISA, wgmma "Matrix Descriptor Format"), its fields in bytes.
struct Descriptor {
    uint64_t start, lbo, sbo;
    uint32_t swizzle;   // bytes: 0, 128, 64, 32 (modes 0 to 3)
};

static Descriptor decode(uint64_t d, int line) {
    static const uint32_t bytes[4] = {0, 128, 64, 32};
    if ((d >> 49) & 7)   // the base offset: for a pattern not anchored at its own alignment, not modelled
        operand_error("wgmma_base_offset", "wgmma.mma_async", nullptr, (d >> 49) & 7, 0, line);
    return {(d & 0x3fff) << 4, ((d >> 16) & 0x3fff) << 4, ((d >> 32) & 0x3fff) << 4, bytes[d >> 62]};
}

// The shared offset of element (r, k) of an operand: r its row of M (A) or column of N (B), k
// its step of the K of the shape (16 for 16-bit types, 8 for tf32). The canonical layouts (PTX
// ISA, wgmma "Shared Memory Matrix Layout"; CUTLASS's GmmaDescriptor names them so), in
// elements of es bytes (2: bf16, f16; 4: tf32, K-major only), T = 8 to 16 bytes:
//   K-major, S-byte swizzle:  r in groups of 8 rows S bytes apart, the groups SBO apart;
//                             k contiguous (k * es bytes into a row)
//   K-major, no swizzle:      core matrices of 8 rows of 16 bytes (8 16-bit values, 4 tf32),
//                             r's next SBO, k's (16 / es values on) LBO
//   MN-major, S-byte swizzle: r contiguous over S bytes, the next S bytes LBO on;
//                             k in groups of 8 rows S bytes apart, the groups SBO apart
//   MN-major, no swizzle:     core matrices (8 values of r by 8 rows of k), r's next SBO, k's LBO
// and then the swizzle, on the whole address.
static uint64_t element(const Descriptor& m, bool mn_major, uint32_t r, uint32_t k, uint32_t es) {
    uint64_t a;
    uint32_t per = 16 / es;   // values of k in a core matrix's row of 16 bytes
    if (!mn_major)
        a = m.swizzle ? (r / 8) * m.sbo + (r % 8) * m.swizzle + k * es
                      : (r / 8) * m.sbo + (r % 8) * 16 + (k / per) * m.lbo + (k % per) * es;
    else if (m.swizzle) {
        uint32_t span = m.swizzle / 2;   // values of r per S bytes
        a = (r / span) * m.lbo + (r % span) * 2 + (k / 8) * m.sbo + (k % 8) * m.swizzle;
    } else
        a = (r / 8) * m.sbo + (r % 8) * 2 + (k / 8) * m.lbo + (k % 8) * 16;
    return swizzled(m.start + a, m.swizzle);
}

// The TF32 value the tensor core multiplies for a 32-bit operand: a .b32 register of A (the RS
// form) or the 4 bytes of an element in shared memory, both a float's bits. TF32 keeps float's
// sign, 8 exponent bits and the top 10 of its 23 mantissa bits. What the tensor core does with
// a float whose low 13 bits are not zero is what this models: it ignores them (truncation:
// bits & 0xffffe000; a NaN whose payload is only there becomes an infinity). That this is what
// an H100 does, and not round-to-nearest, is checked on the GPU by
// tests/runtime/test_wgmma_registers.py::test_gpu_matches_the_cpu_runtime (inputs whose low 13
// bits tell the two apart, one k nonzero: exact either way). Change it here alone if it rounds.
static float tf32(uint32_t bits) { return __builtin_bit_cast(float, bits & 0xffffe000u); }

// An operand's value: the 16 bits of a bf16 or an f16 (the low half of `bits`), or tf32's 32.
static float value(uint32_t bits, uint32_t type) {
    if (type == BF16) return __builtin_bit_cast(float, uint32_t(uint16_t(bits)) << 16);   // float's upper half
    if (type == F16) return float(__builtin_bit_cast(_Float16, uint16_t(bits)));
    return tf32(bits);
}

// A (64 x K) from the warpgroup's registers (the RS form), as the PTX ISA's "register fragment
// layout for matrix A" of m64nNk8 (tf32) and m64nNk16 (bf16, f16) puts it: thread t (warp w =
// t / 32, lane l) holds rows r = 16w + l/4 and r + 8 of it:
//   tf32:     a0 = A[r][l%4], a1 = A[r+8][l%4], a2 = A[r][l%4+4], a3 = A[r+8][l%4+4]
//   16-bit:   a0 = A[r][c], A[r][c+1] (c = 2(l%4); the low half first), a1 the same columns of
//             row r+8, a2 = A[r][c+8], A[r][c+9], a3 those of row r+8.
static void registers_a(const Warpgroup& g, float (&A)[64][16]) {
    const Operands& o = g.ops;
    for (uint32_t t = 0; t < WARPGROUP; ++t) {
        uint32_t w = t / 32, l = t % 32, r = 16 * w + l / 4;
        for (uint32_t j = 0; j < 4; ++j) {
            uint32_t row = r + 8 * (j % 2), bits = g.a[t][j];
            if (o.type == TF32) {
                A[row][l % 4 + 4 * (j / 2)] = o.scale_a * value(bits, o.type);
            } else {
                uint32_t col = 2 * (l % 4) + 8 * (j / 2);
                A[row][col] = o.scale_a * value(bits & 0xffffu, o.type);
                A[row][col + 1] = o.scale_a * value(bits >> 16, o.type);
            }
        }
    }
}

// D (64 x N) = A (64 x K) B (K x N) + (scale_d ? D : 0), K = 16 (bf16, f16) or 8 (tf32), D spread
// over the warpgroup as the PTX ISA's "register fragment layout for accumulator matrix D" of
// m64nNk16 and m64nNk8 says: thread t (warp w = t / 32, lane l) holds, for each 8 columns j,
// d[4j], d[4j+1] at row 16w + l/4, columns 8j + 2(l%4) and the next, and d[4j+2], d[4j+3] eight
// rows below. Each product of 16-bit values, or of tf32 values (11 significant bits each), is
// exact in float; the K of a step are summed in float, in order of k, onto the accumulator (a
// GPU's order and internal precision within a step are not specified: results may differ from
// it by float rounding).
static void multiply(Warpgroup& g, [[maybe_unused]] unsigned wg, int line) {
    const Operands& o = g.ops;
    uint32_t K = o.type == TF32 ? 8 : 16, es = o.type == TF32 ? 4 : 2;
    Descriptor db = decode(o.desc_b, line);
    // Element (m or n, k) of an operand, read from shared memory where its descriptor puts it.
    auto operand = [&](const Descriptor& d, bool trans, uint32_t mn, uint32_t k, float scale) {
        uint64_t at = element(d, trans, mn, k, es);
#ifdef KC_CHECKED
        check_wgmma_operand(at, es, wg, line);
#endif
        const char* p = shared_bytes(at, es, "wgmma.mma_async", line);
        uint32_t bits = es == 4 ? *reinterpret_cast<const uint32_t*>(p) : *reinterpret_cast<const uint16_t*>(p);
        return scale * value(bits, o.type);
    };
    static float A[64][16], B[16][256];
    if (o.a_registers) {
        registers_a(g, A);
    } else {
        Descriptor da = decode(o.desc_a, line);
        for (uint32_t i = 0; i < 64; ++i)
            for (uint32_t k = 0; k < K; ++k) A[i][k] = operand(da, o.trans_a, i, k, o.scale_a);
    }
    for (uint32_t k = 0; k < K; ++k)
        for (uint32_t n = 0; n < o.n; ++n) B[k][n] = operand(db, o.trans_b, n, k, o.scale_b);
    for (uint32_t t = 0; t < WARPGROUP; ++t) {
        uint32_t w = t / 32, l = t % 32;
        for (uint32_t j = 0; j < o.n / 8; ++j)
            for (uint32_t h = 0; h < 4; ++h) {
                uint32_t row = 16 * w + l / 4 + 8 * (h / 2), col = 8 * j + 2 * (l % 4) + h % 2;
                float* d = g.d[t][4 * j + h];
                float acc = o.scale_d ? *d : 0.0f;
                for (uint32_t k = 0; k < K; ++k) acc += A[row][k] * B[k][col];
                *d = acc;
            }
    }
}

// A wgmma that not all 128 threads of the warpgroup reach together (.sync.aligned): some have
// left, or wait at a __syncthreads() they cannot pass while this one waits for them, or reached
// a wgmma on another line. Where each thread is, as JSON (kc_findings.def: warpgroup).
[[noreturn]] static void warpgroup_error(unsigned wg, const Warpgroup& g, int line, const char* problem) {
    char* buf = my_status->message;
    size_t n = sizeof my_status->message;
    int k = finding(buf, n, Finding::warpgroup,
                    "\"block\":%u,\"warpgroup\":%u,\"pc\":%u,\"line\":%d,\"what\":\"wgmma.mma_async\","
                    "\"problem\":\"%s\","
                    "\"arrived\":[%u,%u,%u,%u],\"states\":\"",
                    my_status->block, wg, asm_pc(), line, problem, g.here[0], g.here[1], g.here[2], g.here[3]);
    for (unsigned i = 0; i < WARPGROUP; ++i) {
        const Thread& u = sched.threads[wg * WARPGROUP + i];
        buf[k++] = (g.here[i / 32] >> (i % 32)) & 1 ? 'A' : u.state == AT_SYNCTHREADS ? 'S' : u.state == AT_WARP ? 'W'
                   : u.state == EXITED ? 'E' : u.mbarrier_line ? 'M' : 'R';
    }
    k += snprintf(buf + k, n - k, "\",\"lines\":[");
    for (unsigned i = 0; i < WARPGROUP; ++i) {
        const Thread& u = sched.threads[wg * WARPGROUP + i];
        int at = (g.here[i / 32] >> (i % 32)) & 1 ? g.line : u.state == EXITED ? u.exit_line
                 : u.state == RUNNABLE ? u.mbarrier_line : u.line;
        k += snprintf(buf + k, n - k, i ? ",%d" : "%d", at);
    }
    snprintf(buf + k, n - k, "]}");
    my_status->code = CHECK_FAILED;
    fflush(stdout);
    _exit(5);
}

void wgmma_mma(float* const* d, uint32_t n, uint64_t desc_a, const uint32_t* a, uint64_t desc_b, bool scale_d,
               int32_t scale_a, int32_t scale_b, uint32_t trans_a, uint32_t trans_b, uint32_t type, bool own,
               int line) {
    KC_ASM_CALL;
    const char* what = "wgmma.mma_async";
    unsigned wg = cur->linear / WARPGROUP, first = wg * WARPGROUP, me = cur->linear - first;
    if (first + WARPGROUP > sched.nthreads)
        operand_error("wgmma_block", what, nullptr, sched.nthreads, first + WARPGROUP, line);
    Warpgroup& g = groups[wg];
    // The operands are the warpgroup's: every thread must pass the same ones, at the same wgmma
    // (but for the A registers of the RS form, each thread's own part of A).
    Operands o{desc_a, desc_b, n, type, scale_d, trans_a, trans_b, scale_a, scale_b, a != nullptr};
    if (g.arrived == 0) {
        g.ops = o;
        g.line = line;
    } else if (line != g.line) {
        warpgroup_error(wg, g, line, "different");
    } else if (o != g.ops) {
        bool a_differs = desc_a != g.ops.desc_a;   // (in the RS form, 0 for all: B's then, if either)
        operand_error("wgmma_operands", what, nullptr, a_differs ? desc_a : desc_b, a_differs ? g.ops.desc_a
                      : g.ops.desc_b, line);
    }
    g.d[me] = d;
#ifdef KC_CHECKED
    if (own) check_wgmma_accumulators(d, n / 2, line);
#else
    (void)own;
#endif
    if (a)
        for (unsigned j = 0; j < 4; ++j) g.a[me][j] = a[j];
    g.here[me / 32] |= 1u << (me % 32);
    uint64_t generation = g.generation;
    sched.progress++;
    if (++g.arrived == WARPGROUP) {
#ifdef KC_CHECKED
        check_wgmma_begin(cur ? cur->asm_pc : nullptr);
#endif
        multiply(g, wg, line);
        g.arrived = 0;
        g.here[0] = g.here[1] = g.here[2] = g.here[3] = 0;
        g.generation++;
        return;
    }
    while (g.generation == generation) {
        // A thread that left, or waits at a block barrier (which this one's threads never reach
        // while they wait here), can never arrive.
        for (unsigned i = first; i < first + WARPGROUP; ++i) {
            uint8_t state = sched.threads[i].state;
            if (!((g.here[(i - first) / 32] >> (i % 32)) & 1) && (state == EXITED || state == AT_SYNCTHREADS))
                warpgroup_error(wg, g, line, "missing");
        }
        yield_to_scheduler();
    }
}

// commit_group and wait_group: the products are computed at the mma; checked mode counts the
// groups, to know which operands a group may still be reading (kc_check_async.cpp).
void wgmma_commit(int) {
    KC_ASM_CALL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#ifdef KC_CHECKED
    check_wgmma_commit();
#endif
}

void wgmma_wait(uint32_t n, int) {
    KC_ASM_CALL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
#ifdef KC_CHECKED
    // Twice: the warpgroup's last thread to issue the wgmma comes here a pass before the others,
    // and the others reach it only after their hand-backs of the slot; two passes let every
    // other thread run after those before the groups retire.
    if (wgmma_in_flight(n)) {
        yield_to_scheduler();
        yield_to_scheduler();
    }
    check_wgmma_wait(n);
#else
    (void)n;
#endif
}

}  // namespace kc
