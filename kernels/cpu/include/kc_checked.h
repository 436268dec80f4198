// Checked mode: every global and shared access of a kernel goes through the types
// below, which check bounds, count, trace, and find races and uninitialized reads.
//
// How a kernel gets here: in checked mode kernels/cpu/checked.py rewrites, within each
// line, pointer declarations `T* p` to `::kc::ptr<T> p` and `__shared__ T a[N][M];` to
// `static ::kc::shared_array<T, N, M> a{"a", id};`. Indexing then yields a `ref<T>`, a
// stand-in for the element that records the access when it is read or assigned. The
// source line of each access comes from std::source_location, captured where an index
// is converted to `Index`, i.e. at the subscript itself.
//
// Races. Every shared element has a shadow: its last write and up to two reads, each
// with the thread, the barrier interval (`epoch`, advanced when a __syncthreads()
// releases the block), the warp's __syncwarp count, the line, and the thread's position
// in its own interval (`seq`). Two accesses by different threads conflict when at least
// one writes and nothing orders them: same interval, and not both in one warp with a
// __syncwarp() between. The hazard is named by program order (seq), not by the order
// this run happened to take: the write first is read-after-write, the read first is
// write-after-read, so the verdict is the same under every schedule.
//
// Uninitialized reads. A read of a shared element no thread has written in this block
// is held until the interval ends: if another thread writes it before then, that is a
// race; otherwise it is an uninitialized read.
//
// Which finding is reported. An out-of-bounds access ends the run at once. A race or an
// uninitialized read is held (the first of each) until the barrier interval ends,
// because a divergent barrier, found only then, is often its cause: a barrier skipped
// by some threads lets them race with the others. So at the end of an interval the
// report is, in order: a divergent barrier, the first race, the first uninitialized read.
#pragma once
#include <source_location>
#include <type_traits>

namespace kc {

struct Index {
    long long v;
    unsigned line;
    Index(long long v_, std::source_location l = std::source_location::current()) : v(v_), line(l.line()) {}
};

struct AccessRec {
    uint32_t epoch;   // barrier interval of the access; 0: none
    uint16_t tid;
    uint16_t wepoch;  // the warp's __syncwarp count at the access
    uint32_t line;
    uint32_t seq;
};
struct Shadow { AccessRec w, r1, r2; };

// What a checked pointer points into: a parameter's array or a shared array.
struct Region {
    const char* name;
    char* base;
    uint64_t bytes;
    int32_t id;            // parameter index, or SHARED_ID_BASE + shared id
    bool shared;
    uint32_t elem_size;    // shared: size of the declared element (the shadow's granule)
    Shadow* shadow;        // shared: one per element
    uint32_t ndim;
    uint32_t dims[3];
};

enum Op : uint8_t { READ = 0, WRITE = 1 };

struct CheckState {
    CheckDesc* desc = nullptr;
    uint64_t* counts = nullptr;       // this worker's counters
    uint32_t epoch = 1;
    int interval_line = 0;            // line of the __syncthreads() that opened the interval (0: kernel start)
    uint16_t warp_epoch[32] = {};
    bool tracing = false;             // is the current block traced?
    TraceRecord* trace = nullptr;     // this worker's trace buffer
    uint64_t* trace_count = nullptr;
    Region* shared[MAX_SHARED_ARRAYS] = {};
    int nshared = 0;
    Region params[64];
    struct { bool set; const Region* r; uint64_t elem; uint16_t tid; uint32_t line; } pending{};
    char pending_race[1024] = {};     // the first race of the interval, as JSON
};
CheckState chk;

// ---- reporting: a finding is written as JSON into the worker's status, then the worker
// ends; runner.py turns it into the matching Python exception.
[[noreturn]] inline void report(const char* json) {
    snprintf(my_status->message, sizeof my_status->message, "%s", json);
    my_status->code = CHECK_FAILED;
    fflush(stdout);
    _exit(5);
}

inline int index_json(char* out, size_t n, const Region* r, uint64_t elem) {
    if (r->ndim <= 1) return snprintf(out, n, "[%llu]", (unsigned long long)elem);
    if (r->ndim == 2)
        return snprintf(out, n, "[%llu,%llu]", (unsigned long long)(elem / r->dims[1]), (unsigned long long)(elem % r->dims[1]));
    uint64_t plane = uint64_t(r->dims[1]) * r->dims[2];
    return snprintf(out, n, "[%llu,%llu,%llu]", (unsigned long long)(elem / plane),
                    (unsigned long long)((elem % plane) / r->dims[2]), (unsigned long long)(elem % r->dims[2]));
}

inline int dims_json(char* out, size_t n, const Region* r) {
    if (r->ndim == 0) return snprintf(out, n, "[%llu]", (unsigned long long)(r->bytes / (r->elem_size ? r->elem_size : 1)));
    if (r->ndim == 1) return snprintf(out, n, "[%u]", r->dims[0]);
    if (r->ndim == 2) return snprintf(out, n, "[%u,%u]", r->dims[0], r->dims[1]);
    return snprintf(out, n, "[%u,%u,%u]", r->dims[0], r->dims[1], r->dims[2]);
}

[[noreturn]] inline void out_of_bounds(const Region* r, const long long* idx, int nidx, long long extent_elems,
                                       unsigned elem_size, unsigned line, const char* what) {
    char buf[1024], ix[256], dims[128];
    int k = snprintf(ix, sizeof ix, "[");
    for (int i = 0; i < nidx; ++i) k += snprintf(ix + k, sizeof ix - k, i ? ",%lld" : "%lld", idx[i]);
    snprintf(ix + k, sizeof ix - k, "]");
    if (r && r->ndim >= 2) dims_json(dims, sizeof dims, r);
    else snprintf(dims, sizeof dims, "[%lld]", extent_elems);
    snprintf(buf, sizeof buf,
             "{\"kind\":\"oob\",\"array\":\"%s\",\"shared\":%d,\"index\":%s,\"dims\":%s,\"elem_size\":%u,"
             "\"line\":%u,\"op\":\"%s\",\"block\":%u,\"thread\":%u}",
             r ? r->name : "(null)", r ? int(r->shared) : 0, ix, dims, elem_size, line, what,
             my_status->block, cur->linear);
    report(buf);
}

// ---- the accounting of one access --------------------------------------------------
inline bool ordered(const AccessRec& a, const Thread* t) {
    return a.epoch != chk.epoch || a.tid == t->linear ||
           (a.tid / 32 == t->linear / 32 && a.wepoch != chk.warp_epoch[t->linear / 32]);
}

inline void race(const Region* r, uint64_t elem, const char* hazard, const AccessRec& other,
                 const char* other_op, const char* this_op, unsigned line) {
    if (chk.pending_race[0]) return;
    char* buf = chk.pending_race;
    char ix[128], dims[64];
    index_json(ix, sizeof ix, r, elem);
    dims_json(dims, sizeof dims, r);
    snprintf(buf, sizeof chk.pending_race,
             "{\"kind\":\"race\",\"array\":\"%s\",\"index\":%s,\"dims\":%s,\"hazard\":\"%s\",\"block\":%u,"
             "\"thread\":%u,\"line\":%u,\"op\":\"%s\",\"other_thread\":%u,\"other_line\":%u,\"other_op\":\"%s\","
             "\"interval_line\":%d}",
             r->name, ix, dims, hazard, my_status->block, cur->linear, line, this_op, other.tid, other.line,
             other_op, chk.interval_line);
}

inline void trace(const Region* r, int64_t elem, unsigned line, Op op) {
    CheckDesc* d = chk.desc;
    if (d->trace_threads && !d->trace_threads[cur->linear]) return;
    uint64_t n = (*chk.trace_count)++;
    if (n < d->trace_capacity)
        chk.trace[n] = TraceRecord{my_status->block, chk.epoch, cur->linear, r->id, elem, line, op, {}};
}

inline void shared_element(const Region* r, uint64_t elem, unsigned line, Op op) {
    Shadow& s = r->shadow[elem];
    Thread* t = cur;
    AccessRec me{chk.epoch, uint16_t(t->linear), chk.warp_epoch[t->linear / 32], line, t->seq};
    if (op == READ) {
        if (s.w.epoch && !ordered(s.w, t))
            race(r, elem, s.w.seq < me.seq ? "RAW" : "WAR", s.w, "write", "read", line);
        if (!s.w.epoch && !chk.pending.set) chk.pending = {true, r, elem, uint16_t(t->linear), line};
        // Keep up to two readers of this interval; a slot is reused when it is from an
        // older interval or the same thread.
        if (!s.r1.epoch || s.r1.epoch != chk.epoch || s.r1.tid == me.tid) s.r1 = me;
        else if (!s.r2.epoch || s.r2.epoch != chk.epoch || s.r2.tid == me.tid) s.r2 = me;
    } else {
        if (s.w.epoch && !ordered(s.w, t)) race(r, elem, "WAW", s.w, "write", "write", line);
        for (const AccessRec* rd : {&s.r1, &s.r2})
            if (rd->epoch && !ordered(*rd, t)) race(r, elem, rd->seq < me.seq ? "WAR" : "RAW", *rd, "read", "write", line);
        s.w = me;
    }
}

// Records an access of `size` bytes at byte offset `off` of region r (bounds already checked).
inline void access(const Region* r, uint64_t off, unsigned size, unsigned line, Op op) {
    int slot = r->shared ? 2 * (int(chk.desc->nparams) + (r->id - SHARED_ID_BASE)) : 2 * r->id;
    chk.counts[slot + op]++;
    uint64_t granule = r->shared ? r->elem_size : size;
    if (chk.tracing) trace(r, int64_t(off / granule), line, op);
    if (!r->shared) return;
    for (uint64_t e = off / granule; e <= (off + size - 1) / granule; ++e) shared_element(r, e, line, op);
    cur->seq++;
}

// ---- the stand-ins ---------------------------------------------------------------------
template <class T> struct ptr;

// A subscript outside a dimension of a shared array (Mds[0][20] of a 16 x 16 array) may
// still land inside the array's memory; it is remembered here so that the element's
// first read or write can report the indices as written.
struct BadSubscript { long long idx[3]; int n; };
BadSubscript bad_subscripts[64];
unsigned nbad;

// One element: reading it (conversion to T) or assigning it checks its bounds and
// records the access. Forming it (&a[n] as an end pointer) is not an access.
template <class T>
struct ref {
    T* addr;
    const Region* r;
    long long off;      // byte offset from the region's start; may be out of range
    unsigned line;
    int bad;            // index into bad_subscripts, or -1
    using V = std::remove_cv_t<T>;
    void verify(Op op) const {
        const char* what = op == READ ? "read" : "write";
        if (bad >= 0) {
            const BadSubscript& b = bad_subscripts[bad];
            out_of_bounds(r, b.idx, b.n, 0, sizeof(T), line, what);
        }
        if (!r || off < 0 || off + (long long)sizeof(T) > (long long)r->bytes) {
            long long idx = r ? (off >= 0 ? off / (long long)sizeof(T) : -((-off + (long long)sizeof(T) - 1) / (long long)sizeof(T))) : 0;
            out_of_bounds(r, &idx, 1, r ? (long long)(r->bytes / sizeof(T)) : 0, sizeof(T), line, what);
        }
    }
    V load() const { verify(READ); access(r, uint64_t(off), sizeof(T), line, READ); return *addr; }
    void store(V v) const { verify(WRITE); access(r, uint64_t(off), sizeof(T), line, WRITE); *addr = v; }
    operator V() const { return load(); }
    const ref& operator=(V v) const { store(v); return *this; }
    const ref& operator=(const ref& o) const { store(o.load()); return *this; }
    template <class U> const ref& operator=(const ref<U>& o) const { store(V(o.load())); return *this; }
    template <class U> const ref& operator+=(const U& v) const { store(load() + v); return *this; }
    template <class U> const ref& operator-=(const U& v) const { store(load() - v); return *this; }
    template <class U> const ref& operator*=(const U& v) const { store(load() * v); return *this; }
    template <class U> const ref& operator/=(const U& v) const { store(load() / v); return *this; }
    V operator++(int) const { V v = load(); store(v + 1); return v; }
    const ref& operator++() const { store(load() + 1); return *this; }
    V operator--(int) const { V v = load(); store(v - 1); return v; }
    const ref& operator--() const { store(load() - 1); return *this; }
    ptr<T> operator&() const { return ptr<T>(addr, r); }
};

// A pointer that knows which array it points into.
template <class T>
struct ptr {
    T* p = nullptr;
    const Region* r = nullptr;
    ptr() = default;
    ptr(std::nullptr_t) {}
    ptr(T* p_, const Region* r_) : p(p_), r(r_) {}
    template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
    ptr(const ptr<U>& o) : p(o.p), r(o.r) {}

    ref<T> at(long long i, unsigned line) const {
        long long off = r ? (reinterpret_cast<const char*>(p) - r->base) + i * (long long)sizeof(T) : 0;
        return ref<T>{p + i, r, off, line, -1};
    }
    ref<T> operator[](Index i) const { return at(i.v, i.line); }
    ref<T> operator*() const { return at(0, 0); }
    ptr operator+(long long d) const { return ptr(p + d, r); }
    ptr operator-(long long d) const { return ptr(p - d, r); }
    friend ptr operator+(long long d, const ptr& q) { return q + d; }
    long long operator-(const ptr& o) const { return p - o.p; }
    ptr& operator+=(long long d) { p += d; return *this; }
    ptr& operator-=(long long d) { p -= d; return *this; }
    ptr& operator++() { ++p; return *this; }
    ptr operator++(int) { ptr q = *this; ++p; return q; }
    ptr& operator--() { --p; return *this; }
    ptr operator--(int) { ptr q = *this; --p; return q; }
    explicit operator bool() const { return p != nullptr; }
    bool operator==(const ptr& o) const { return p == o.p; }
    auto operator<=>(const ptr& o) const { return p <=> o.p; }
};

// reinterpret_cast<float4*>(q) on a checked pointer (the rewrite routes it here).
template <class To, class U>
inline ptr<std::remove_pointer_t<To>> pointer_cast(const ptr<U>& q) {
    return ptr<std::remove_pointer_t<To>>(reinterpret_cast<To>(q.p), q.r);
}
template <class P> struct is_checked_ptr : std::false_type {};
template <class T> struct is_checked_ptr<ptr<T>> : std::true_type {};
template <class To, class U>
    requires(!is_checked_ptr<std::remove_cvref_t<U>>::value)
inline To pointer_cast(U&& v) { return reinterpret_cast<To>(v); }

// a[i][j] on a shared array: indices collect here until the last one, then every one is
// checked against its own dimension.
template <class T>
struct Subscript {
    T* base;
    const Region* r;
    long long idx[3];
    int n;
    unsigned line;
    auto operator[](Index i) const {
        Subscript s = *this;
        s.idx[s.n++] = i.v;
        s.line = i.line;
        return s;
    }
    ref<T> element() const {
        long long flat = 0;
        int bad = -1;
        for (int k = 0; k < n; ++k) {
            if (bad < 0 && (idx[k] < 0 || idx[k] >= (long long)r->dims[k])) {
                bad = int(nbad++ % 64);
                bad_subscripts[bad] = BadSubscript{{idx[0], idx[1], idx[2]}, n};
            }
            flat = flat * r->dims[k] + idx[k];
        }
        return ref<T>{base + flat, r, flat * (long long)sizeof(T), line, bad};
    }
    // A partial subscript (a row) decays to a pointer to its first element.
    operator ptr<T>() const {
        long long flat = 0;
        for (int k = 0; k < int(r->ndim); ++k) flat = flat * r->dims[k] + (k < n ? idx[k] : 0);
        return ptr<T>(base + flat, r);
    }
};

template <class T, int Left>
struct Sub {
    Subscript<T> s;
    auto operator[](Index i) const {
        Subscript<T> t = s[i];
        if constexpr (Left == 1) return t.element();
        else return Sub<T, Left - 1>{t};
    }
    operator ptr<T>() const { return ptr<T>(s); }
};

inline void register_shared(Region* r) {
    if (chk.nshared < MAX_SHARED_ARRAYS) chk.shared[chk.nshared++] = r;
    uint32_t* dims = chk.desc->shared_dims + 3 * (r->id - SHARED_ID_BASE);
    for (int k = 0; k < 3; ++k) dims[k] = k < int(r->ndim) ? r->dims[k] : 0;
    memset(r->shadow, 0, sizeof(Shadow) * (r->bytes / r->elem_size));
}

// __shared__ T name[D...]; D empty for a scalar.
template <class T, unsigned... D>
struct shared_array {
    static constexpr unsigned N = (1u * ... * D);
    static constexpr int rank = sizeof...(D);
    T data[N > 0 ? N : 1];
    Shadow shadow[N > 0 ? N : 1];
    Region region;
    shared_array(const char* name, int id) {
        unsigned dims[3] = {D..., };
        region = Region{name, reinterpret_cast<char*>(data), sizeof(T) * (N > 0 ? N : 1), SHARED_ID_BASE + id, true,
                        sizeof(T), shadow, unsigned(rank), {rank > 0 ? dims[0] : 1, rank > 1 ? dims[1] : 1,
                        rank > 2 ? dims[2] : 1}};
        register_shared(&region);
    }
    auto operator[](Index i) const {
        Subscript<T> s{const_cast<T*>(data), &region, {}, 0, 0};
        if constexpr (rank == 1) return s[i].element();
        else return Sub<T, rank - 1>{s[i]};
    }
    operator ptr<T>() const { return ptr<T>(const_cast<T*>(data), &region); }
    ptr<T> operator+(long long d) const { return ptr<T>(*this) + d; }
    // A scalar (rank 0): the variable itself is the element. Its line is not known (0).
    ref<T> self() const { return ref<T>{const_cast<T*>(data), &region, 0, 0, -1}; }
    operator T() const requires(rank == 0) { return self().load(); }
    const shared_array& operator=(T v) const requires(rank == 0) { self().store(v); return *this; }
    template <class U> const shared_array& operator+=(const U& v) const requires(rank == 0) { self() += v; return *this; }
    template <class U> const shared_array& operator-=(const U& v) const requires(rank == 0) { self() -= v; return *this; }
    template <class U> const shared_array& operator*=(const U& v) const requires(rank == 0) { self() *= v; return *this; }
};

// extern __shared__ T name[]; sized by the launch's shared_mem.
template <class T>
struct dynamic_shared {
    Region region;
    dynamic_shared(const char* name, int id) {
        uint64_t n = launch->shared_mem / sizeof(T);
        region = Region{name, reinterpret_cast<char*>(dyn_smem), n * sizeof(T), SHARED_ID_BASE + id, true,
                        sizeof(T), static_cast<Shadow*>(calloc(n ? n : 1, sizeof(Shadow))), 1, {unsigned(n), 1, 1}};
        register_shared(&region);
    }
    operator ptr<T>() const { return ptr<T>(reinterpret_cast<T*>(region.base), &region); }
    ref<T> operator[](Index i) const { return ptr<T>(*this).at(i.v, i.line); }
    ptr<T> operator+(long long d) const { return ptr<T>(*this) + d; }
};

// Pointer parameters become checked pointers over the parameter's array.
template <class T>
struct Arg<ptr<T>> {
    static ptr<T> make(void** a, int i) {
        Region& r = chk.params[i];
        r = Region{chk.desc->names[i], *static_cast<char**>(a[i]), chk.desc->extents[i], i, false, 0, nullptr, 1, {0, 1, 1}};
        return ptr<T>(reinterpret_cast<T*>(r.base), &r);
    }
};

// atomics on checked pointers: bounds-checked and counted as a load and a store.
#define KC_CHECKED_ATOMIC(NAME)                                                                 \
    template <class T, class... V> inline T NAME(ptr<T> q, V... v) {                            \
        ref<T> e = q.at(0, 0);                                                                  \
        e.verify(WRITE);                                                                        \
        chk.counts[(e.r->shared ? 2 * (int(chk.desc->nparams) + e.r->id - SHARED_ID_BASE) : 2 * e.r->id)]++; \
        chk.counts[(e.r->shared ? 2 * (int(chk.desc->nparams) + e.r->id - SHARED_ID_BASE) : 2 * e.r->id) + 1]++; \
        return ::NAME(e.addr, v...);                                                            \
    }
}  // namespace kc
namespace kc {
KC_CHECKED_ATOMIC(atomicAdd) KC_CHECKED_ATOMIC(atomicSub) KC_CHECKED_ATOMIC(atomicExch)
KC_CHECKED_ATOMIC(atomicMax) KC_CHECKED_ATOMIC(atomicMin) KC_CHECKED_ATOMIC(atomicAnd)
KC_CHECKED_ATOMIC(atomicOr) KC_CHECKED_ATOMIC(atomicXor) KC_CHECKED_ATOMIC(atomicCAS)
}  // namespace kc
#undef KC_CHECKED_ATOMIC
using kc::atomicAdd, kc::atomicSub, kc::atomicExch, kc::atomicMax, kc::atomicMin, kc::atomicAnd, kc::atomicOr,
    kc::atomicXor, kc::atomicCAS;

// printf with elements as arguments: pass their values, not the stand-ins.
namespace kc {
template <class T> inline const T& printf_arg(const T& v) { return v; }
template <class T> inline std::remove_cv_t<T> printf_arg(const ref<T>& e) { return e.load(); }
template <class... A> inline int checked_printf(const char* f, const A&... a) { return (printf)(f, printf_arg(a)...); }

inline int thread_exit_line(int line) { cur->exit_line = line; return 0; }
}  // namespace kc
#define printf(...) ::kc::checked_printf(__VA_ARGS__)

// ---- hooks the scheduler calls in checked mode ------------------------------------------
namespace kc {
inline void check_worker_start(const LaunchDesc* d, unsigned w) {
    chk.desc = d->check;
    chk.counts = chk.desc->counts + uint64_t(w) * chk.desc->counts_stride;
    chk.trace = chk.desc->trace + uint64_t(w) * chk.desc->trace_capacity;
    chk.trace_count = chk.desc->trace_count + w;
}

inline void check_block_start(uint32_t block) {
    chk.epoch = 1;
    chk.interval_line = 0;
    memset(chk.warp_epoch, 0, sizeof chk.warp_epoch);
    chk.pending.set = false;
    chk.pending_race[0] = 0;
    chk.tracing = chk.desc->trace_blocks && chk.desc->trace_blocks[block];
    for (int i = 0; i < chk.nshared; ++i)
        memset(chk.shared[i]->shadow, 0, sizeof(Shadow) * (chk.shared[i]->bytes / chk.shared[i]->elem_size));
    for (unsigned i = 0; i < sched.nthreads; ++i) sched.threads[i].exit_line = sched.threads[i].seq = 0;
}

// The interval ends (a barrier releases or the block is done): a read still pending is
// an uninitialized read.
inline void check_interval_end() {
    if (chk.pending_race[0]) report(chk.pending_race);
    if (!chk.pending.set) return;
    char buf[512], ix[128], dims[64];
    index_json(ix, sizeof ix, chk.pending.r, chk.pending.elem);
    dims_json(dims, sizeof dims, chk.pending.r);
    snprintf(buf, sizeof buf,
             "{\"kind\":\"uninit\",\"array\":\"%s\",\"index\":%s,\"dims\":%s,\"block\":%u,\"thread\":%u,\"line\":%u}",
             chk.pending.r->name, ix, dims, my_status->block, chk.pending.tid, chk.pending.line);
    report(buf);
}

inline void check_warp_released(unsigned w) { chk.warp_epoch[w]++; }

// Before the block's waiting threads are released: they must all wait at one
// __syncthreads(), and none may have exited. Otherwise report where each thread is.
inline void check_barrier(int end_line) {
    int line = -1;
    bool divergent = false;
    for (unsigned i = 0; i < sched.nthreads && !divergent; ++i) {
        const Thread& t = sched.threads[i];
        if (t.state != AT_SYNCTHREADS) divergent = true;
        else if (line < 0) line = t.line;
        else if (t.line != line) divergent = true;
    }
    if (!divergent) {
        check_interval_end();
        for (unsigned i = 0; i < sched.nthreads; ++i) sched.threads[i].seq = 0;
        chk.epoch++;
        chk.interval_line = line;
        return;
    }
    static char buf[sizeof(WorkerStatus::message)];
    int k = snprintf(buf, sizeof buf, "{\"kind\":\"divergence\",\"block\":%u,\"end_line\":%d,\"states\":\"", my_status->block, end_line);
    for (unsigned i = 0; i < sched.nthreads; ++i) {
        uint8_t s = sched.threads[i].state;
        buf[k++] = s == AT_SYNCTHREADS ? 'S' : s == AT_SYNCWARP ? 'W' : s == EXITED ? 'E' : 'R';
    }
    k += snprintf(buf + k, sizeof buf - k, "\",\"lines\":[");
    for (unsigned i = 0; i < sched.nthreads && k < int(sizeof buf) - 16; ++i) {
        const Thread& t = sched.threads[i];
        k += snprintf(buf + k, sizeof buf - k, i ? ",%d" : "%d", t.state == EXITED ? t.exit_line : t.line);
    }
    snprintf(buf + k, sizeof buf - k, "]}");
    report(buf);
}
}  // namespace kc
