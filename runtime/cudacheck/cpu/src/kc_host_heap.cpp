// The heap a whole program's host code sees: the memory of a fresh process.
//
// A program run by cudacheck.run_program starts in a child forked from the Python process
// (runtime/cudacheck/cpu/host.py), so glibc's heap there is Python's: its free chunks hold
// whatever Python left in them. A program that reads malloc'd memory it never wrote (as
// Rodinia's nw does) would read that garbage, where the same program started from a shell
// reads zeros: a fresh process's heap has only ever been extended by the kernel's zeroed
// pages, and a block of 128 KiB or more is a fresh mmap.
//
// The program keeps glibc's allocator, and every pointer stays glibc's (so that free(),
// realloc() in getline, or a delete inside libstdc++ work on any of them, whoever
// allocated it). What changes is only what the program's own blocks hold when it receives
// them: this unit, linked into the program's library only, defines the malloc family and
// operator new, which the library's own calls bind to (it is linked -Bsymbolic-functions)
// and no one else's (ctypes loads it RTLD_LOCAL: Python, the C library and libstdc++ keep
// glibc's). Each block glibc hands the program is zeroed where it lies
// outside every block the program was handed before (`spans`), and left as it is where it
// lies inside one: memory the program freed and gets back keeps what the program (or
// glibc's free lists) left in it, as in a fresh process. A block glibc mmap'd is the
// kernel's zero pages, untouched (no page is made resident). kc_program_run
// (kc_host.cpp) sets the mmap threshold back to a fresh process's 128 KiB: the Python
// process has raised it (glibc raises it when a large block is freed).
//
// glibc's free lists are Python's too: its bins, and the thread's tcache of up to 7 chunks
// per small size. Where a tcache list was full, a block the program freed went to the bins
// and its next malloc of that size got one of Python's chunks (zeroed), not its own block
// back with what it wrote there, as a fresh process gets it. So before main,
// forget_inherited_free_lists() takes every free chunk of those lists and keeps it: the
// program's free lists start as empty as a fresh process's.
//
// The alternative, a freshly exec'd process, would need the program's CUDA calls answered
// across processes and its device memory mapped in both; a fresh Python would not help
// (its own start fills the heap).
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <atomic>
#include <new>

extern "C" {
void* __libc_malloc(size_t size) noexcept;
void* __libc_calloc(size_t count, size_t size) noexcept;
void* __libc_realloc(void* ptr, size_t size) noexcept;
void* __libc_memalign(size_t alignment, size_t size) noexcept;
void* __libc_valloc(size_t size) noexcept;
void* __libc_pvalloc(size_t size) noexcept;
}

namespace kc {
namespace {

// The address ranges of every block handed to the program so far, sorted and merged, each
// with glibc's size word before it, so that neighbouring chunks merge. (Not the word before
// that: it is the previous chunk's last, whoever holds that chunk.)
struct Span { uintptr_t lo, hi; };
Span* spans;
size_t nspans, capacity;
std::atomic_flag busy = ATOMIC_FLAG_INIT;

struct Lock {
    Lock() { while (busy.test_and_set(std::memory_order_acquire)) {} }
    ~Lock() { busy.clear(std::memory_order_release); }
};

// The first span that ends after `a`.
size_t first_after(uintptr_t a) {
    size_t lo = 0, hi = nspans;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (spans[mid].hi <= a) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Records [lo, hi), merged with the spans it meets. Where no memory is left for the table
// the range goes unrecorded: later blocks there are zeroed again, never left unzeroed.
void remember(uintptr_t lo, uintptr_t hi) {
    size_t i = first_after(lo > 0 ? lo - 1 : 0), j = i;
    while (j < nspans && spans[j].lo <= hi) {
        if (spans[j].lo < lo) lo = spans[j].lo;
        if (spans[j].hi > hi) hi = spans[j].hi;
        ++j;
    }
    if (i == j) {   // a new span at i
        if (nspans == capacity) {
            size_t grown = capacity ? 2 * capacity : 4096;
            void* m = spans ? mremap(spans, capacity * sizeof(Span), grown * sizeof(Span), MREMAP_MAYMOVE)
                            : mmap(nullptr, grown * sizeof(Span), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                   -1, 0);
            if (m == MAP_FAILED) return;
            spans = static_cast<Span*>(m), capacity = grown;
        }
        memmove(spans + i + 1, spans + i, (nspans - i) * sizeof(Span));
        ++nspans;
    } else if (j > i + 1) {   // spans i..j-1 become one
        memmove(spans + i + 1, spans + j, (nspans - j) * sizeof(Span));
        nspans -= j - i - 1;
    }
    spans[i] = {lo, hi};
}

// A block glibc returned for the program: zeroed from byte `kept` on (realloc's copy is
// the program's) wherever the program never held that memory, then remembered.
void* claim(void* block, size_t kept = 0) {
    if (!block) return nullptr;
    size_t usable = malloc_usable_size(block);
    // glibc's chunk header: the size word before the block, whose bit 1 marks an mmap'd chunk
    // (fresh from the kernel, so already zero; its address range is the kernel's again once freed).
    if (reinterpret_cast<const size_t*>(block)[-1] & 2) return block;
    uintptr_t at = reinterpret_cast<uintptr_t>(block), lo = at + kept, hi = at + usable;
    Lock hold;
    for (size_t i = first_after(lo); i < nspans && spans[i].lo < hi && lo < hi; ++i) {
        if (spans[i].lo > lo) memset(reinterpret_cast<void*>(lo), 0, spans[i].lo - lo);
        lo = spans[i].hi;
    }
    if (lo < hi) memset(reinterpret_cast<void*>(lo), 0, hi - lo);
    remember(at - sizeof(size_t), hi);
    return block;
}

void* new_block(size_t size, size_t alignment) {
    for (;;) {
        void* p = alignment > alignof(max_align_t) ? claim(__libc_memalign(alignment, size ? size : 1))
                                                   : claim(__libc_malloc(size ? size : 1));
        if (p) return p;
        std::new_handler handler = std::get_new_handler();
        if (!handler) throw std::bad_alloc();
        handler();
    }
}

void* new_block_or_null(size_t size, size_t alignment) noexcept {
    try {
        return new_block(size, alignment);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}

// The main arena's free chunks as malloc_info lists them (heap nr 0, before its </heap>):
// for each bin that holds any, its smallest chunk's size word and its count. `text` is
// written by malloc_info into a stream that never allocates (so that reading it frees nothing).
struct Bin { size_t from, count; };
size_t free_bins(const char* text, Bin* out, size_t most) {
    const char* heap = strstr(text, "<heap nr=\"0\">");
    const char* end = heap ? strstr(heap, "</heap>") : nullptr;
    size_t n = 0;
    for (const char* at = heap; at && n < most; ) {
        const char* size = strstr(at, "<size from=");
        const char* unsorted = strstr(at, "<unsorted from=");
        at = !size ? unsorted : !unsorted ? size : size < unsorted ? size : unsorted;
        if (!at || at > end) break;
        size_t to, total;
        if (sscanf(strchr(at, '"'), "\"%zu\" to=\"%zu\" total=\"%zu\" count=\"%zu\"", &out[n].from, &to, &total,
                   &out[n].count) == 4)
            ++n;
        ++at;
    }
    return n;
}

}  // namespace

void forget_inherited_free_lists() {
    // malloc_info's stream: a buffer mapped here, unbuffered, never closed (fclose would
    // free the FILE into the lists just emptied; the child exits with it open). Its last byte
    // is never given to the stream, so that the text ends there even where it was cut short.
    const size_t room = 1 << 20;
    char* text = static_cast<char*>(mmap(nullptr, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    FILE* f = text == MAP_FAILED ? nullptr : fmemopen(text, room - 1, "w");
    if (f) setvbuf(f, nullptr, _IONBF, 0);
    static Bin bins[256];
    // glibc's tcache: 64 sizes of chunk, 32 to 1040 bytes, at most 7 chunks of each (its defaults).
    const size_t largest_cached = 1040, cached = 7;
    // The bins: each pass takes as many chunks of each listed size as the bin holds, and 7
    // more of a size the tcache keeps (a request takes the tcache's chunk first, and refills
    // the tcache from the bin). A larger chunk split for a smaller request leaves its
    // remainder for the next pass. A pass that takes nothing ends it: this thread allocates
    // from an arena other than the main one.
    size_t before = SIZE_MAX;
    for (int pass = 0; f && pass < 1000; ++pass) {
        fseek(f, 0, SEEK_SET);
        malloc_info(0, f);
        fputc(0, f);
        size_t n = free_bins(text, bins, 256), held = 0;
        for (size_t i = 0; i < n; ++i) held += bins[i].count;
        if (held == 0 || held >= before) break;
        before = held;
        for (size_t i = 0; i < n; ++i) {
            size_t chunk = bins[i].from & ~size_t(7);   // less the size word's flag bits
            for (size_t k = 0; k < bins[i].count + (chunk <= largest_cached ? cached : 0); ++k)
                __libc_malloc(chunk - sizeof(size_t));
        }
    }
    // The tcache's other sizes. With the bins empty, a request past the cached chunks is cut
    // from the top, so `cached` of each empty it.
    for (size_t chunk = 32; chunk <= largest_cached; chunk += 16)
        for (size_t k = 0; k < cached; ++k) __libc_malloc(chunk - sizeof(size_t));
}

}  // namespace kc

using kc::claim;

extern "C" {
void* malloc(size_t size) noexcept { return claim(__libc_malloc(size)); }
void* calloc(size_t count, size_t size) noexcept {
    void* p = __libc_calloc(count, size);   // zero throughout already: only remembered
    return p ? claim(p, malloc_usable_size(p)) : nullptr;
}
void* realloc(void* ptr, size_t size) noexcept {
    if (!ptr) return malloc(size);
    size_t old = malloc_usable_size(ptr);
    void* p = __libc_realloc(ptr, size);
    return p ? claim(p, old < size ? old : size) : nullptr;
}
void* reallocarray(void* ptr, size_t count, size_t size) noexcept {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        errno = ENOMEM;
        return nullptr;
    }
    return realloc(ptr, bytes);
}
void* memalign(size_t alignment, size_t size) noexcept { return claim(__libc_memalign(alignment, size)); }
void* aligned_alloc(size_t alignment, size_t size) noexcept { return claim(__libc_memalign(alignment, size)); }
int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
    if (alignment % sizeof(void*) || (alignment & (alignment - 1)) || !alignment) return EINVAL;
    void* p = claim(__libc_memalign(alignment, size));
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void* valloc(size_t size) noexcept { return claim(__libc_valloc(size)); }
void* pvalloc(size_t size) noexcept { return claim(__libc_pvalloc(size)); }
}

// operator new: the same fresh memory (delete stays the C++ library's: glibc's free).
void* operator new(size_t size) { return kc::new_block(size, 0); }
void* operator new[](size_t size) { return kc::new_block(size, 0); }
void* operator new(size_t size, std::align_val_t a) { return kc::new_block(size, size_t(a)); }
void* operator new[](size_t size, std::align_val_t a) { return kc::new_block(size, size_t(a)); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return kc::new_block_or_null(size, 0); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return kc::new_block_or_null(size, 0); }
void* operator new(size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
    return kc::new_block_or_null(size, size_t(a));
}
void* operator new[](size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
    return kc::new_block_or_null(size, size_t(a));
}
