// Checked mode's core (kc_check.h): the state, the regions checked mode knows (where each
// array is, registered as a worker, a block or a shared declaration starts), the hooks the
// scheduler calls as a worker, a block and a barrier interval start and end, and the order in
// which the findings held until an interval ends are reported.
#include <dlfcn.h>
#include <unistd.h>

#include "kc_check.h"

namespace kc {

CheckState chk;

// ---- reporting: a finding is written as JSON into the worker's status, then the worker
// ends; runtime/cudacheck/cpu/findings/ turns it into the matching Python exception.
[[noreturn]] void report(const char* json) {
    snprintf(my_status->message, sizeof my_status->message, "%s", json);
    my_status->code = CHECK_FAILED;
    fflush(stdout);
    _exit(5);
}

int index_json(char* out, size_t n, const Region* r, uint64_t elem) {
    if (r->ndim <= 1) return snprintf(out, n, "[%llu]", (unsigned long long)elem);
    unsigned long long ix[4];
    for (int k = int(r->ndim) - 1; k >= 0; --k) {
        ix[k] = elem % r->dims[k];
        elem /= r->dims[k];
    }
    ix[0] += elem * r->dims[0];   // past the end: the first index runs on
    int w = snprintf(out, n, "[");
    for (unsigned k = 0; k < r->ndim; ++k) w += snprintf(out + w, n - w, k ? ",%llu" : "%llu", ix[k]);
    return w + snprintf(out + w, n - w, "]");
}

int dims_json(char* out, size_t n, const Region* r) {
    if (r->ndim <= 1) return snprintf(out, n, "[%llu]", (unsigned long long)(r->bytes / (r->elem_size ? r->elem_size : 1)));
    int w = snprintf(out, n, "[");
    for (unsigned k = 0; k < r->ndim; ++k) w += snprintf(out + w, n - w, k ? ",%u" : "%u", r->dims[k]);
    return w + snprintf(out + w, n - w, "]");
}

// ---- regions -------------------------------------------------------------------------------
Region* find_static_shared(uintptr_t a) {
    Region* before = nullptr;
    for (int i = 0; i < chk.nstatic; ++i) {
        Region* r = chk.static_shared[i];
        uintptr_t b = reinterpret_cast<uintptr_t>(r->base);
        if (a >= b && a < b + r->bytes) return r;
        if (b <= a && (!before || reinterpret_cast<uintptr_t>(before->base) < b)) before = r;
    }
    return before;
}

Region* find_device(uintptr_t a) {
    Region* before = nullptr;
    for (int i = 0; i < chk.ndevice; ++i) {
        Region* r = &chk.device[i];
        uintptr_t b = reinterpret_cast<uintptr_t>(r->base);
        if (a >= b && a < b + r->bytes) return r;
        if (b <= a && (!before || reinterpret_cast<uintptr_t>(before->base) < b)) before = r;
    }
    return before;
}

// The region an address lies in, as on_access finds it; null for memory checked mode does not
// check (a thread's stack). Reports a null or unmapped pointer.
Region* region_at(const void* p, unsigned size, uint32_t pc, Op op) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const char* what = op == READ ? "read" : "write";
    if (a - chk.slot_lo < chk.slot_span) {
        Region* r = chk.slots[(a - chk.slot_lo) >> chk.desc->slot_shift];
        if (!r) out_of_bounds(nullptr, "[0]", "[0]", size, pc, 0, what);
        for (Region* v = r; v; v = v->next)
            if (a >= uintptr_t(v->base) && a + size <= uintptr_t(v->base) + v->bytes) return v;
        return r;
    }
    if (chk.dynamic && a - uintptr_t(chk.dynamic->base) < DYNAMIC_SHARED_CAPACITY + 4096) return chk.dynamic;
    if (a - chk.shared_lo < chk.shared_hi - chk.shared_lo || a - kc_shared_lo() < kc_shared_span())
        return find_static_shared(a);
    if (a - chk.device_lo < chk.device_hi - chk.device_lo) return find_device(a);
    if (a < 65536) out_of_bounds(nullptr, "[0]", "[0]", size, pc, 0, what);
    return nullptr;
}

static Shadow* shadow_for(Region* r, uint64_t n) {
    if (r->shadow_len < n) {
        free(r->shadow);
        r->shadow = static_cast<Shadow*>(calloc(n ? n : 1, sizeof(Shadow)));
        r->shadow_len = n;
    }
    return r->shadow;
}

void shared_region(int id, const char* name, void* addr, size_t bytes, size_t elem, size_t granule, int rank,
                   const unsigned* dims, bool dynamic) {
    if (id < 0 || id >= MAX_SHARED_ARRAYS) return;
    Region* r = &chk.shared[id];
    if (r->base == addr && r->bytes == bytes && r->name) return;   // registered already in this launch
    uint32_t esize = uint32_t(elem ? elem : 1);
    *r = Region{name ? name : chk.desc->shared_names[id], static_cast<char*>(addr), bytes, SHARED_ID_BASE + id,
                uint8_t(dynamic ? DYNAMIC : SHARED), esize, r->shadow, r->shadow_len, uint32_t(rank > 0 ? rank : 1),
                {1, 1, 1, 1}, nullptr};
    for (int k = 0; k < rank && k < 4; ++k) r->dims[k] = dims[k];
    if (rank == 0) r->dims[0] = 1;
    r->granule = granule && granule < esize ? uint32_t(granule) : 0;
    uint64_t shadows = bytes / (r->granule ? r->granule : esize);
    shadow_for(r, shadows);
    memset(r->shadow, 0, sizeof(Shadow) * shadows);
    uint32_t* out = chk.desc->shared_dims + 3 * id;
    for (int k = 0; k < 3; ++k) out[k] = k < rank ? dims[k] : (k == 0 && !dynamic ? 1 : 0);
    if (dynamic) {
        out[0] = uint32_t(bytes / esize);
        chk.dynamic = r;
        return;
    }
    chk.static_shared[chk.nstatic++] = r;
    uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    if (a < chk.shared_lo) chk.shared_lo = a;
    if (a + bytes > chk.shared_hi) chk.shared_hi = a + bytes;
}

// ---- hooks the scheduler calls (kc_runtime.h) ----------------------------------------------
void check_worker_start(const LaunchDesc* d, unsigned w) {
    chk.desc = d->check;
    chk.counts = chk.desc->counts + uint64_t(w) * chk.desc->counts_stride;
    chk.trace = chk.desc->trace + uint64_t(w) * chk.desc->trace_capacity;
    chk.trace_count = chk.desc->trace_count + w;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&check_worker_start), &info)) chk.lib_base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    CheckDesc* c = chk.desc;
    chk.slot_lo = c->slot_base;
    chk.slot_span = uint64_t(c->nslots) << c->slot_shift;
    if (c->nallocs) {   // a whole program: one region per allocation, each alone in its slot
        static Region allocs[MAX_SLOTS];
        for (uint32_t i = 0; i < c->nallocs && i < uint32_t(MAX_SLOTS); ++i) {
            const Allocation& m = c->allocs[i];
            uint32_t esize = uint32_t(m.elem_size ? m.elem_size : 1);
            allocs[i] = Region{m.name, reinterpret_cast<char*>(m.base), m.bytes, int32_t(m.param), PARAM, esize,
                               nullptr, 0, 1, {uint32_t(m.bytes / esize), 1, 1, 1}, nullptr, 0, m.init};
            uint64_t s = (m.base - chk.slot_lo) >> c->slot_shift;
            if (s < c->nslots && s < uint64_t(MAX_SLOTS)) chk.slots[s] = &allocs[i];
        }
    }
    for (uint32_t i = 0; i < c->nparams && i < uint32_t(MAX_PARAMS) && !c->nallocs; ++i) {
        if (!c->extents[i]) continue;
        char* base = *static_cast<char**>(d->args[i]);
        Region* r = &chk.params[i];
        *r = Region{c->names[i], base, c->extents[i], int32_t(i), PARAM, c->elem_sizes[i], nullptr, 0, 1,
                    {uint32_t(c->extents[i] / (c->elem_sizes[i] ? c->elem_sizes[i] : 1)), 1, 1, 1}, nullptr};
        r->lead = c->leads[i];
        r->span = c->spans[i];
        uint64_t s = (reinterpret_cast<uintptr_t>(base) - chk.slot_lo) >> c->slot_shift;
        if (s < c->nslots) {
            r->next = chk.slots[s];
            chk.slots[s] = r;
        }
    }
    chk.device_lo = c->device_lo;
    chk.device_hi = c->device_hi;
    for (uint32_t i = 0; i < c->ndevice && i < 256; ++i)
        chk.device[chk.ndevice++] = Region{c->device_names[i], reinterpret_cast<char*>(c->device_vars[2 * i]),
                                           c->device_vars[2 * i + 1], -1, DEVICE,
                                           c->device_elem_sizes[i] ? c->device_elem_sizes[i] : 1, nullptr, 0, 1,
                                           {0}, nullptr};
    Region* globals[MAX_SLOTS + MAX_PARAMS + 256];
    int n = 0;
    for (uint32_t s = 0; s < c->nslots && s < uint32_t(MAX_SLOTS); ++s)
        for (Region* v = chk.slots[s]; v; v = v->next) globals[n++] = v;
    for (int i = 0; i < chk.ndevice; ++i) globals[n++] = &chk.device[i];
    global_worker_start(c, globals, n);
}

void check_block_start(uint32_t block) {
    global_block_start(block);
    check_async_block_start();
    check_held_block_start();
    chk.epoch = 1;
    chk.interval_line = 0;
    memset(chk.warp_epoch, 0, sizeof chk.warp_epoch);
    chk.pending.set = false;
    chk.pending_race[0] = 0;
    chk.sub.set = false;
    chk.tracing = chk.desc->trace_blocks && chk.desc->trace_blocks[block];
    for (int i = 0; i < MAX_SHARED_ARRAYS; ++i)
        if (chk.shared[i].shadow) memset(chk.shared[i].shadow, 0, sizeof(Shadow) * chk.shared[i].shadow_len);
    for (unsigned i = 0; i < sched.nthreads; ++i) sched.threads[i].exit_line = sched.threads[i].seq = 0;
}

// The interval ends (a barrier releases or the block is done): what each check held until
// now is reported, in this order: a local array's bad subscript, the first race, the first
// uninitialized read.
void check_interval_end() {
    global_interval_end();
    check_async_interval_end();
    if (chk.sub.set) {   // a local array's bad subscript, with no instrumented access since
        cur = &sched.threads[chk.sub.thread];
        bad_subscript(nullptr, 0, 0, 0, WRITE);
    }
    if (chk.pending_race[0]) report(chk.pending_race);
    report_pending_uninit();
}

}  // namespace kc
