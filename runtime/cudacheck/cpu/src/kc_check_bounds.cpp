// Checked mode's bounds check (kc_check.h), as compute-sanitizer's memcheck: an access outside
// the array its address was derived from (provenance: kc_check.h), through a null or unmapped
// pointer, or through a subscript outside a dimension of a shared or local array
// (Mds[ty][tx + 16] of a 16 x 16 array, which may still land inside its memory): caught by the
// bounds instrumentation (-fsanitize=bounds) and reported, with every index, at the access it
// leads to. An out-of-bounds access ends the run at once.
#include "kc_check.h"

namespace kc {

static const char* kind_name(const Region* r) {
    return r->kind == PARAM ? "param" : r->kind == DEVICE ? "device" : r->kind == LOCAL ? "local" : "shared";
}

[[noreturn]] void out_of_bounds(const Region* r, const char* index, const char* dims, unsigned elem_size,
                                uint32_t pc, uint32_t line, const char* what) {
    char buf[1024];
    finding(buf, sizeof buf, Finding::oob,
             "\"array\":\"%s\",\"space\":\"%s\",\"shared\":%d,\"index\":%s,\"dims\":%s,"
             "\"elem_size\":%u,\"pc\":%u,\"line\":%u,\"op\":\"%s\",\"block\":%u,\"thread\":%u,\"via\":\"%s\","
             "\"lead\":%llu,\"span\":%llu}",
             r ? r->name : "(null)", r ? kind_name(r) : "null", r && (r->kind == SHARED || r->kind == DYNAMIC), index,
             dims, elem_size, pc, line, what, my_status->block, cur->linear, chk.via ? chk.via : "",
             (unsigned long long)(r && elem_size ? r->lead / elem_size : 0),
             (unsigned long long)(r && elem_size && r->span ? r->span / elem_size : 0));
    report(buf);
}

// An access of `size` bytes at byte offset off (may be negative) outside region r.
[[noreturn]] void outside(const Region* r, int64_t off, unsigned size, uint32_t pc, const char* what, uint32_t line) {
    char ix[256], dims[128];
    unsigned unit = r->kind == SHARED && r->elem_size ? r->elem_size : size;   // else: the accessed type's
    int64_t idx = off >= 0 ? off / int64_t(unit) : -((-off + int64_t(unit) - 1) / int64_t(unit));
    if (r->ndim >= 2 && idx >= 0) index_json(ix, sizeof ix, r, uint64_t(idx));
    else snprintf(ix, sizeof ix, "[%lld]", (long long)idx);
    if (r->ndim >= 2) dims_json(dims, sizeof dims, r);
    else snprintf(dims, sizeof dims, "[%llu]", (unsigned long long)(r->bytes / unit));
    out_of_bounds(r, ix, dims, unit, pc, line, what);
}

// A subscript found outside its dimension, now met by the access it leads to (in `r`, or
// in a thread's local memory when r is null).
[[noreturn]] void bad_subscript(const Region* r, uintptr_t a, unsigned size, uint32_t pc, Op op) {
    const char* what = op == READ ? "read" : "write";
    char ix[256], dims[128];
    if (r && r->kind == SHARED && r->ndim >= 1) {
        // Rebuild the indices as written: the bad one from the instrumentation, the others
        // from the address (they are within their dimensions).
        int k = int(r->ndim) - chk.sub.rank;   // the dimension that was out of range
        if (k < 0) k = 0;
        uint64_t stride = 1;
        for (unsigned j = k + 1; j < r->ndim; ++j) stride *= r->dims[j];
        int64_t flat = int64_t(a - reinterpret_cast<uintptr_t>(r->base)) / int64_t(r->elem_size);
        int64_t rest = flat - chk.sub.index * int64_t(stride);
        long long idx[4];
        for (int j = int(r->ndim) - 1; j >= 0; --j) {
            if (j == k) {   // its digit is now 0
                rest /= int64_t(r->dims[j]);
                continue;
            }
            int64_t d = r->dims[j];
            idx[j] = ((rest % d) + d) % d;
            rest = (rest - idx[j]) / d;
        }
        idx[k] = chk.sub.index;
        int w = snprintf(ix, sizeof ix, "[");
        for (unsigned j = 0; j < r->ndim; ++j) w += snprintf(ix + w, sizeof ix - w, j ? ",%lld" : "%lld", idx[j]);
        snprintf(ix + w, sizeof ix - w, "]");
        dims_json(dims, sizeof dims, r);
        out_of_bounds(r, ix, dims, r->elem_size, pc, chk.sub.line, what);
    }
    // A local array: its accesses are not instrumented (the compiler keeps them on the
    // thread's stack or in registers), so the subscript itself is the finding.
    static Region local{"(local array)", nullptr, 0, -1, LOCAL, 0, nullptr, 0, 1, {0}, nullptr};
    snprintf(ix, sizeof ix, "[%lld]", (long long)chk.sub.index);
    snprintf(dims, sizeof dims, "[%llu]", (unsigned long long)chk.sub.bound);
    (void)what;
    out_of_bounds(&local, ix, dims, 0, 0, chk.sub.line, "index");
}

// The static shared array a bad subscript was taken of: the nearest one at or below the
// address whose dimension has the subscript's bound (the address may be past its end).
Region* subscripted(uintptr_t a) {
    Region* best = nullptr;
    for (int i = 0; i < chk.nstatic; ++i) {
        Region* r = chk.static_shared[i];
        int k = int(r->ndim) - chk.sub.rank;
        if (uintptr_t(r->base) > a || k < 0 || r->dims[k] != chk.sub.bound) continue;
        if (!best || uintptr_t(best->base) < uintptr_t(r->base)) best = r;
    }
    return best;
}

}  // namespace kc

// -fsanitize=bounds: UBSan's data layout (stable across GCC and clang).
struct KcSourceLocation { const char* file; uint32_t line, column; };
struct KcTypeDescriptor { uint16_t kind, info; char name[1]; };
struct KcOutOfBoundsData { KcSourceLocation loc; const KcTypeDescriptor* array; const KcTypeDescriptor* index; };
extern "C" void __ubsan_handle_out_of_bounds(KcOutOfBoundsData* d, uintptr_t index) {
    if (!kc::cur) return;
    int64_t v = int64_t(index);
    unsigned bits = 1u << (d->index->info >> 1);
    if (!(d->index->info & 1) || bits >= 64) v = bits >= 64 ? int64_t(index) : int64_t(index & ((1ull << bits) - 1));
    else if (bits < 64 && (index >> (bits - 1)) & 1) v = int64_t(index | ~((1ull << bits) - 1));
    // The array type's name, "float [8][16]": its rank says which dimension was out of range.
    int rank = 0;
    unsigned long long bound = 0;
    for (const char* c = d->array->name; *c; ++c)
        if (*c == '[') {
            if (!rank) bound = strtoull(c + 1, nullptr, 10);
            ++rank;
        }
    kc::chk.sub = {true, kc::cur->linear, d->loc.line, v, bound, rank};
}
extern "C" void __ubsan_handle_out_of_bounds_abort(KcOutOfBoundsData* d, uintptr_t index) {
    __ubsan_handle_out_of_bounds(d, index);
}
