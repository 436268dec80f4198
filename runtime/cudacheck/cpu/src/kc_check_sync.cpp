// Checked mode's synchronisation check (kc_check.h), as compute-sanitizer's synccheck: the
// scheduler (kc_scheduler.cpp) calls it before it releases a block barrier (check_barrier: every
// thread of the block must wait at one __syncthreads(), and none may have exited), a warp
// operation (check_warp_group: every lane of the mask in it, doing the same operation, and a
// shuffle reading lanes that take part) or a warp-collective operation (check_collective: all
// 32 lanes of the warp at one wmma call, with one pointer, ldm and layout).
#include "kc_check.h"

namespace kc {

// ---- warp-collective operations (wmma: kc_warp.h) --------------------------------------------

// A collective (wmma) operation that not every lane of warp w reaches as one call with one
// set of arguments: where each lane is, as the finding's JSON.
[[noreturn]] static void collective_misuse(unsigned w, const Thread& t, unsigned arrived, const char* problem,
                                           unsigned lane, int key) {
    static char buf[sizeof(WorkerStatus::message)];
    const Collective* c = reinterpret_cast<const Collective*>(t.value);
    unsigned lo = w * 32, n = sched.nthreads - lo < 32 ? sched.nthreads - lo : 32;
    int k = finding(buf, sizeof buf, Finding::collective,
                     "\"problem\":\"%s\",\"what\":\"%s\",\"block\":%u,\"warp\":%u,"
                     "\"line\":%d,\"arrived\":%u,\"lanes\":%u,\"lane\":%u,\"key\":%d,\"states\":\"",
                     problem, c->what, my_status->block, w, t.line, arrived, n, lane, key);
    for (unsigned l = 0; l < n; ++l) {
        const Thread& u = sched.threads[lo + l];
        buf[k++] = (arrived >> l) & 1u ? 'C' : u.state == AT_SYNCTHREADS ? 'S' : u.state == AT_WARP ? 'W'
                   : u.state == EXITED ? 'E' : 'R';
    }
    k += snprintf(buf + k, sizeof buf - k, "\",\"lines\":[");
    for (unsigned l = 0; l < n; ++l) {
        const Thread& u = sched.threads[lo + l];
        k += snprintf(buf + k, sizeof buf - k, l ? ",%d" : "%d", u.state == EXITED ? u.exit_line : u.line);
    }
    k += snprintf(buf + k, sizeof buf - k, "],\"values\":[");
    for (unsigned l = 0; l < n && key >= 0; ++l) {
        const Thread& u = sched.threads[lo + l];
        unsigned long long v = (arrived >> l) & 1u ? reinterpret_cast<const Collective*>(u.value)->key[key] : 0;
        k += snprintf(buf + k, sizeof buf - k, l ? ",%llu" : "%llu", v);
    }
    snprintf(buf + k, sizeof buf - k, "]}");
    report(buf);
}

static unsigned collective_arrivals(unsigned w, const Thread& t) {
    unsigned lo = w * 32, m = 0;
    CollectiveRun run = reinterpret_cast<const Collective*>(t.value)->run;
    for (unsigned l = 0; l < 32 && lo + l < sched.nthreads; ++l) {
        const Thread& u = sched.threads[lo + l];
        if (u.state == AT_WARP && u.op == COLLECTIVE && u.line == t.line &&
            reinterpret_cast<const Collective*>(u.value)->run == run)
            m |= 1u << l;
    }
    return m;
}

// The group of warp w at a collective is about to be released: all 32 lanes must be at the
// one call, with the same arguments.
void check_collective(unsigned w, unsigned group) {
    unsigned lo = w * 32;
    const Thread& t = sched.threads[lo + __builtin_ctz(group)];
    const Thread* lead = &t;
    for (unsigned l = 0; l < 32; ++l)   // the call most lanes are at names the operation
        if ((group >> l) & 1u && sched.threads[lo + l].op == COLLECTIVE) { lead = &sched.threads[lo + l]; break; }
    unsigned arrived = collective_arrivals(w, *lead);
    if (sched.nthreads - lo < 32) collective_misuse(w, *lead, arrived, "short_warp", 0, -1);
    if (arrived != 0xffffffffu) collective_misuse(w, *lead, arrived, "partial", 0, -1);
    const Collective* first = reinterpret_cast<const Collective*>(lead->value);
    for (unsigned l = 0; l < 32; ++l) {
        const Collective* c = reinterpret_cast<const Collective*>(sched.threads[lo + l].value);
        for (int k = 0; k < 3; ++k)
            if (c->key[k] != first->key[k]) collective_misuse(w, *lead, arrived, "arguments", l, k);
    }
}

// ---- warp operations -------------------------------------------------------------------------

void check_warp_released(unsigned w, unsigned mask) {
    chk.warp_epoch[w]++;
    check_mbarrier_warp_sync(w, mask);
}

[[noreturn]] static void warp_misuse(unsigned w, unsigned mask, int line, const char* problem, unsigned lane) {
    char buf[512];
    finding(buf, sizeof buf, Finding::warp,
             "\"block\":%u,\"warp\":%u,\"mask\":%u,\"line\":%d,\"problem\":\"%s\",\"lane\":%u}",
             my_status->block, w, mask, line, problem, lane);
    report(buf);
}

// A warp operation is about to release: every lane of its mask must be in it, doing the
// same operation, and a shuffle must read lanes that take part.
void check_warp_group(unsigned w, unsigned mask, int line) {
    unsigned lo = w * 32;
    for (unsigned l = 0; l < 32; ++l) {
        if (!((mask >> l) & 1u)) continue;
        if (lo + l >= sched.nthreads) continue;   // lanes past the block's last thread do not exist
        const Thread& u = sched.threads[lo + l];
        if (u.state == EXITED) warp_misuse(w, mask, line, "exited", l);
        if (u.line != line || u.op != sched.threads[lo + __builtin_ctz(mask)].op) warp_misuse(w, mask, line, "different", l);
    }
    for (unsigned l = 0; l < 32; ++l) {
        if (!((mask >> l) & 1u)) continue;
        const Thread& t = sched.threads[lo + l];
        if (t.op < SHFL_IDX || t.op > SHFL_XOR) continue;
        unsigned seg = l & ~unsigned(t.width - 1), src = l;
        if (t.op == SHFL_IDX) src = seg + (unsigned(t.arg) & unsigned(t.width - 1));
        else if (t.op == SHFL_UP && l >= seg + unsigned(t.arg)) src = l - t.arg;
        else if (t.op == SHFL_DOWN && l + unsigned(t.arg) < seg + unsigned(t.width)) src = l + t.arg;
        else if (t.op == SHFL_XOR && (((l ^ unsigned(t.arg)) & ~unsigned(t.width - 1)) == seg)) src = l ^ unsigned(t.arg);
        if (src < 32 && !((mask >> src) & 1u)) warp_misuse(w, mask, line, "source", src);
    }
}

// ---- block barriers --------------------------------------------------------------------------

// Before the block's waiting threads are released: they must all wait at one
// __syncthreads(), and none may have exited. Otherwise report where each thread is.
void check_barrier(int end_line) {
    if (chk.sub.set) check_interval_end();
    int line = -1;
    bool divergent = false;
    for (unsigned i = 0; i < sched.nthreads && !divergent; ++i) {
        const Thread& t = sched.threads[i];
        if (t.state != AT_SYNCTHREADS) divergent = true;
        else if (line < 0) line = t.line;
        else if (t.line != line) divergent = true;
    }
    if (divergent)   // a warp waiting at a wmma call that some of its lanes never reach
        for (unsigned i = 0; i < sched.nthreads; ++i) {
            const Thread& t = sched.threads[i];
            if (t.state == AT_WARP && t.op == COLLECTIVE)
                collective_misuse(i / 32, t, collective_arrivals(i / 32, t), sched.nthreads - i / 32 * 32 < 32
                                  ? "short_warp" : "partial", 0, -1);
        }
    if (!divergent) {
        check_interval_end();
        for (unsigned i = 0; i < sched.nthreads; ++i) sched.threads[i].seq = 0;
        chk.epoch++;
        chk.interval_line = line;
        return;
    }
    divergent_barrier(end_line);
}

}  // namespace kc
