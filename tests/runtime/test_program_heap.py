"""A whole program's host code starts as a fresh process does (src/kc_host_heap.cpp): memory
it malloc's, calloc's, realloc's or new's and never wrote reads what it reads in a process
started from a shell, which is zero (a large block is a fresh mmap, a small one comes from a
heap the kernel's zero pages extended), and a block it freed and gets back keeps what it left
there. The reference is the same source compiled with g++ and run as a process of its own,
on this machine's glibc; plain and checked runs must print exactly what it prints. The C and
C++ libraries' own allocations (strdup, getline, std::string, iostreams, exceptions) mix with
the program's, each freed by the other's code."""
import subprocess

import pytest

import cudacheck

UNWRITTEN = r'''#include <cstdio>
#include <cstdlib>
#include <cstring>

// A weighted sum of bytes read through volatile, so that the compiler reads what lies there.
static unsigned long sum(const void* p, size_t n) {
    const volatile unsigned char* b = static_cast<const volatile unsigned char*>(p);
    unsigned long s = 0;
    for (size_t i = 0; i < n; ++i) s += b[i] * (i % 251 + 1);
    return s;
}
static void fill(void* p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; ++i) static_cast<volatile unsigned char*>(p)[i] = v;
}

// argv: the large block's bytes, the small block's, new[]'s floats, the block realloc grows
// (from, to), calloc's bytes, and the block freed and taken again.
int main(int argc, char** argv) {
    size_t large = strtoul(argv[1], 0, 10), small = strtoul(argv[2], 0, 10), floats = strtoul(argv[3], 0, 10);
    size_t from = strtoul(argv[4], 0, 10), to = strtoul(argv[5], 0, 10), zeroed = strtoul(argv[6], 0, 10);
    size_t again = strtoul(argv[7], 0, 10);
    void* big = malloc(large);
    void* little = malloc(small);
    float* newed = new float[floats];
    char* grown = static_cast<char*>(malloc(from));
    fill(grown, from, 7);
    grown = static_cast<char*>(realloc(grown, to));
    void* cleared = calloc(zeroed, 1);
    void* reused = malloc(again);
    fill(reused, again, 0xab);
    free(reused);
    reused = malloc(again);
    // grown: what realloc copied, then past the slack and glibc's header words of the chunk that
    // followed (a fresh process keeps the word that held its size);
    // reused: past the two words glibc's free list keeps in a freed block (a pointer and a key
    // that differ from run to run).
    printf("large %lu\nsmall %lu\nnew %lu\ngrown %lu %lu\ncalloc %lu\nreused %lu\n", sum(big, large),
           sum(little, small), sum(newed, floats * sizeof(float)), sum(grown, from),
           sum(grown + from + 32, to - from - 32), sum(cleared, zeroed),
           sum(static_cast<char*>(reused) + 16, again - 16));
    return 0;
}
'''

MIXED = r'''#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    // The C library's blocks freed by the program, the program's grown by the C library.
    char* copy = strdup(argv[1]);
    size_t cap = 4;
    char* line = static_cast<char*>(malloc(cap));
    std::string words;
    while (getline(&line, &cap, stdin) > 0) words += line;
    free(line);
    // The C++ library's: strings past the small-string buffer, streams, containers, exceptions.
    std::ostringstream out;
    std::map<std::string, std::vector<int>> seen;
    std::istringstream in(words);
    std::string w;
    for (int i = 0; in >> w; ++i) seen[w + std::string(40, '.')].push_back(i);
    for (const auto& [k, v] : seen) out << k.substr(0, k.size() - 40) << ':' << v.size() << ' ';
    try {
        throw std::runtime_error(std::string(copy) + std::string(100, '!'));
    } catch (const std::exception& e) {
        out << strlen(e.what());
    }
    std::cout << out.str() << std::endl;
    free(copy);
    return 0;
}
'''


def native(source, tmp_path, args, stdin=None):
    """What the program prints as a process of its own: g++, then run."""
    src, exe = tmp_path / "program.cpp", tmp_path / "program"
    src.write_text(source)
    subprocess.run([cudacheck.config.cxx, "-O2", "-std=c++17", str(src), "-o", str(exe)], check=True)
    done = subprocess.run([str(exe), *map(str, args)], input=stdin, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.parametrize("check", [False, True])
def test_memory_the_program_never_wrote_reads_as_in_a_fresh_process(rng, tmp_path, check):
    args = (int(rng.integers(128 << 10, 16 << 20)), int(rng.integers(1, 8000)), int(rng.integers(1, 4000)),
            int(rng.integers(8, 200)), int(rng.integers(300, 100000)), int(rng.integers(1, 300000)),
            int(rng.integers(32, 1000)))
    expected = native(UNWRITTEN, tmp_path, args)
    # A fresh process: nothing but zeros where the program wrote nothing; its own bytes kept.
    weights = sum((i % 251 + 1) for i in range(args[3]))
    reused = sum((i % 251 + 1) for i in range(args[6] - 16)) * 0xab
    assert expected == (f"large 0\nsmall 0\nnew 0\ngrown {7 * weights} 0\ncalloc 0\nreused {reused}\n")
    result = cudacheck.run_program(UNWRITTEN, backend="cpu", check=check, args=args)
    assert (result.exit_code, result.stdout) == (0, expected), result.stderr


@pytest.mark.parametrize("check", [False, True])
def test_a_block_freed_and_taken_again_is_the_programs_own_whatever_the_caller_freed(rng, tmp_path, check):
    """The caller's heap, which the program's process is forked from, holds freed chunks of
    the size the program frees and takes again: more than glibc's tcache keeps, sorted into
    its bins. The program still gets its own block back, with the bytes it wrote there."""
    import ctypes
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    again = int(rng.integers(32, 1000))
    args = (200 << 10, 100, 100, 8, 300, 100, again)
    expected = native(UNWRITTEN, tmp_path, args)
    blocks = [(libc.malloc(again), libc.malloc(40)) for _ in range(60)]   # the 40 keeps them apart
    for block, _ in blocks:
        libc.free(block)
    for _ in range(7):   # the tcache's, taken back: the rest wait in the bins
        libc.malloc(again)
    libc.malloc(5000)   # sorts them into their bin
    result = cudacheck.run_program(UNWRITTEN, backend="cpu", check=check, args=args)
    assert (result.exit_code, result.stdout) == (0, expected), result.stderr


def test_the_c_and_c_plus_plus_libraries_free_what_the_program_allocated(rng, tmp_path):
    words = " ".join(rng.choice(["tile", "warp", "bank", "halo", "shared"], size=int(rng.integers(20, 200))))
    stdin = "\n".join(words[i:i + 37] for i in range(0, len(words), 37)) + "\n"
    name = "x" * int(rng.integers(1, 300))
    expected = native(MIXED, tmp_path, (name,), stdin)
    assert expected.rstrip().endswith(str(len(name) + 100))
    for check in (False, True):
        result = cudacheck.run_program(MIXED, backend="cpu", check=check, args=(name,), stdin=stdin)
        assert (result.exit_code, result.stdout) == (0, expected), result.stderr


UNSEEDED = r'''
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
    int n = atoi(argv[1]);
    long sum = 0;
    for (int i = 0; i < n; i++) sum += rand() % 1000 + random() % 1000 + lrand48() % 1000;
    printf("%d %ld %ld %ld %.17g\n", rand(), random(), lrand48(), mrand48(), drand48());
    printf("%ld\n", sum);
    return 0;
}
'''


@pytest.mark.parametrize("check", [False, True])
def test_unseeded_random_numbers_are_a_fresh_processs(rng, tmp_path, check):
    """rand(), random() and the drand48 family, never seeded by the program (Rodinia's b+tree
    draws its queries so), give a fresh process's sequence, whatever this process drew."""
    import ctypes
    libc = ctypes.CDLL(None)
    libc.srand(int(rng.integers(2, 1 << 30)))   # what a library of the caller might have done
    libc.srand48(int(rng.integers(2, 1 << 30)))
    libc.rand()
    n = int(rng.integers(1, 500))
    expected = native(UNSEEDED, tmp_path, (n,))
    result = cudacheck.run_program(UNSEEDED, backend="cpu", check=check, args=(n,))
    assert (result.exit_code, result.stdout) == (0, expected), result.stderr
