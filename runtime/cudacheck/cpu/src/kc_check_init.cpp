// Checked mode's initialization check (kc_check.h), as compute-sanitizer's initcheck.
//
// Shared memory. A read of a shared element no thread has written in this block (its shadow,
// kc_check_races.cpp, holds no write) is held until the interval ends: if another thread
// writes it before then, that is a race; otherwise it is an uninitialized read.
//
// A whole program's device memory. Each allocation has one byte per byte, shared with the
// host side (runtime/cudacheck/cpu/device_memory.py), nonzero once a copy, a memset or a
// kernel wrote it.
#include "kc_check.h"

namespace kc {

// initcheck for a whole program's device memory: a read of bytes that no copy, memset or
// kernel has written is reported; a write marks them written (in memory the host shares).
void global_init(const Region* r, int64_t off, unsigned size, uint32_t pc, bool reads, bool writes) {
    uint8_t* s = r->init + off;
    if (reads)
        for (unsigned k = 0; k < size; ++k)
            if (!s[k]) {
                char buf[512];
                uint64_t elem = r->elem_size ? r->elem_size : 1;
                finding(buf, sizeof buf, Finding::uninit,
                         "\"space\":\"global\",\"array\":\"%s\",\"index\":[%llu],\"dims\":[%llu],"
                         "\"block\":%u,\"thread\":%u,\"pc\":%u}",
                         r->name, (unsigned long long)((uint64_t(off) + k) / elem),
                         (unsigned long long)(r->bytes / elem), my_status->block, cur->linear, pc);
                report(buf);
            }
    if (writes)
        for (unsigned k = 0; k < size; ++k) s[k] = 1;
}

// A read of shared element `elem` of r that no thread of the block has written: the first is
// held until the interval ends.
void hold_uninit(const Region* r, uint64_t elem, uint16_t tid, uint32_t pc) {
    if (!chk.pending.set) chk.pending = {true, r, elem, tid, pc};
}

// The interval ends: the read held, if any, is an uninitialized read.
void report_pending_uninit() {
    if (!chk.pending.set) return;
    char buf[512], ix[128], dims[64];
    index_json(ix, sizeof ix, chk.pending.r, element_of(chk.pending.r, chk.pending.elem));
    dims_json(dims, sizeof dims, chk.pending.r);
    finding(buf, sizeof buf, Finding::uninit,
             "\"array\":\"%s\",\"index\":%s,\"dims\":%s,\"block\":%u,\"thread\":%u,\"pc\":%u}",
             chk.pending.r->name, ix, dims, my_status->block, chk.pending.tid, chk.pending.pc);
    report(buf);
}

}  // namespace kc
