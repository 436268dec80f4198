"""fast.cu's twelve H100 GEMM kernels on the CPU runtime, plain and checked (issue 44, item 1).

    .venv/bin/python scripts/fastcu_scorecard.py /path/to/fast.cu [--size 256] [--k 256] [--kernels 1-12] [--patched]

Takes a checkout of pranjalssh/fast.cu (none of its code is in this repository) and, for each of
examples/matmul/matmul_N.cuh, compiles its device code as written, with cudacheck.RawModule
on the CPU runtime, and runs it with a Python equivalent of its host function runKernelN: the
same template arguments, grid, block and dynamic shared memory, the tensor maps its
create_tensor_map would encode (cudacheck.tensor_map_2d for kernels 2-6; tensor_map_tiled for
7-12's 64-column slabs), the debug buffer matmul.cu passes, and kernels 11-12's Hilbert
schedule (createHilbert). The result is compared with float64 NumPy of the BF16 inputs and a
table printed: per kernel, plain and checked, "pass" with the largest scaled error, or the
error that stopped it (its class and first line); "defect named" where that error is one of the
defects of fast.cu's code that checked mode names (FIXES). Kernels 6-12 run at 2048 x 2048 at least.

--patched: for each kernel whose checked run named such a defect, its minimal fix is applied to a
copy of the file's text (the checkout is not touched) and the copy run checked again, fix after
fix, until it passes or stops at something that is not one of them; each run is a row.

What stands in for nvcc's host side, and nothing else: the host functions of each file (the
tensor-map helpers, runKernelN, the Hilbert schedule, the host variables they cache maps in,
and the `using` that exports runKernelN) are left out, since NVRTC, whose rules the CPU runtime keeps, has no
host API; matmul.cu's host headers are replaced by PRELUDE, which declares what they gave
the device code (the fixed-width integers, `uint`, std::move). Every kernel and device
function is compiled from the file's own text.
"""
import argparse
import re
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import cudacheck

# What matmul.cu's includes give the device code under nvcc, declared as an NVRTC program must:
# libcu++'s barrier and the CUDA headers, and the C library's types and std::move, which
# NVRTC has no header for. Then matmul.cu's own two lines before its kernels.
PRELUDE = r"""#include <cuda.h>
#include <cuda/barrier>
#include <cuda_bf16.h>
typedef unsigned long long uint64_t;
typedef unsigned int uint32_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned char uint8_t;
typedef unsigned int uint;
namespace std { template <class T> __device__ T&& move(T& t) { return static_cast<T&&>(t); } }
typedef __nv_bfloat16 bf16;
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))
"""
# The host definitions of the files: their names, and the lines of host variables and exports.
HOST_FUNCTIONS = re.compile(r"\b(create_tensor_map|allocate_and_create_tensor_map|runKernel\d+|rot|d2xy|createHilbert)"
                            r"\s*\(")
HOST_LINES = re.compile(r"^\s*(CUtensorMap\s*\*?\s*d_tma_map_\w+(\s*=\s*0)?\s*;|int _prev_m\b.*;|"
                        r"using M\d+::runKernel\d+\s*;|#include\s*<cassert>|int\s*\*_dspace\s*;)\s*$", re.M)


def _kernel_ends(text):
    """The offsets of the closing braces of the file's clustered kernels (`__global__` ...
    `__cluster_dims__` ... `{ ... }`)."""
    ends = []
    for m in re.finditer(r"__global__[^;{]*__cluster_dims__[^;{]*\{", text):
        depth, i = 0, m.end() - 1
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        ends.append(i)
    return ends


def end_with_cluster_barrier(text):
    """Each clustered kernel ends with barrier.cluster.arrive + wait, written before its closing
    brace on the brace's line: no block exits while another of its cluster may still arrive on its
    mbarriers (ClusterExitRaceError). fast.cu's kernels have one at their start only."""
    for end in reversed(_kernel_ends(text)):
        text = (text[:end] + 'asm volatile("barrier.cluster.arrive;\\n" : :); '
                'asm volatile("barrier.cluster.wait;\\n" : :); ' + text[end:])
    return text


STORE_CALL = re.compile(r"\bstore_async\(&tensorMapC")
BAR_SYNC = 'asm volatile("bar.sync'


def fence_before_store(text):
    """fence.proxy.async.shared::cta by each thread that wrote C's tile, written on the line of the
    named barrier (bar.sync) that hands the tile to the thread issuing the TMA store, before it: the
    generic proxy's stores made visible to the async proxy that reads them (ProxyFenceError)."""
    for m in reversed(list(STORE_CALL.finditer(text))):
        at = text.rfind(BAR_SYNC, 0, m.start())
        if at < 0:
            raise ValueError(f"no bar.sync before the TMA store on line {text.count(chr(10), 0, m.start()) + 1}")
        text = text[:at] + 'asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); ' + text[at:]
    return text


@dataclass(frozen=True)
class Fix:
    """A defect of fast.cu's code that checked mode names (FIXES: by the class it raises), and the
    minimal change that removes it (`apply`: text -> text, every line kept where it was)."""
    name: str
    apply: object


FIXES = {"ClusterExitRaceError": Fix("cluster barrier at the kernel's end", end_with_cluster_barrier),
         "ProxyFenceError": Fix("fence.proxy.async before the TMA store", fence_before_store)}


def device_code(text):
    """The file without its host definitions (HOST_FUNCTIONS, HOST_LINES), each line where it was."""
    cut = []
    for m in HOST_FUNCTIONS.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        head = text[start:m.start()]
        if not head.strip() or "(" in head or "=" in head or ";" in head or head.strip().startswith(("//", "return")):
            continue   # a call or a use, not a definition
        prev = text.rfind("\n", 0, start - 1) + 1         # `template <...>` alone on the line before
        above = text[prev:start].strip()
        if above.startswith("template") and above.endswith(">"):
            start = prev
        body = text.index("{", m.end())
        if ";" in text[m.end():body]:
            continue   # a declaration
        depth, i = 0, body
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        cut.append((start, i))
    cut += [(m.start(), m.end()) for m in HOST_LINES.finditer(text)]
    out, at = [], 0
    for start, end in sorted(cut):
        if start < at:
            continue
        out.append(text[at:start])
        out.append("\n" * text.count("\n", start, end))   # lines keep their numbers
        at = end
    out.append(text[at:])
    return "".join(out)


@dataclass
class Host:
    """runKernelN's launch, in Python: its kernel instance, launch shape and arguments."""
    expr: str
    block: int
    grid: object              # a function of (M, N) -> grid tuple
    shared: int = 0           # dynamic shared memory (sizeof(SMem<...>))
    maps: tuple = ()          # (BlockMajorSize, BlockMinorSize) of the A and B maps, as create_tensor_map<...>;
                              # kernels 2-5 read them through pointers, 6-12 by value: the signature says which
    rank: int = 0             # 0: kernels 2-6's 2-D maps; 3 or 5: 7-12's maps of 64-column slabs
    c_map: tuple = ()         # kernels 10-12: (BlockMajorSize, BlockMinorSize[, box row]) of C's map (no swizzle),
                              # passed first
    debug: bool = False       # the DB argument matmul.cu passes
    layout: str = "cm"        # C column-major (M x N stored N x M): fast.cu's; "rm": kernel 1's row-major
    hilbert: bool = False     # kernels 11-12: runKernelN's createHilbert schedule, passed last (dspace)
    min_size: int = 256       # M and N a multiple of it: the persistent kernels' schedule (Schedule<1, ...,
                              # 16, 8>) asserts whole groups of 16 x 8 tiles, 2048 x 2048 at least


def smem(bm, bn, bk, q=1):
    return 2 * (bm * bk + bk * bn) * q          # SMem<BM, BN, BK, QSIZE>: two bf16 arrays


HOSTS = {
    1: Host("sgemmWarptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>", 128, lambda m, n: (-(-n // 128), -(-m // 128)),
            layout="rm"),
    2: Host("M2::matmulKernel2<64, 64, 64, 64, 64, 16, 128>", 128, lambda m, n: (m // 64 * (n // 64),),
            maps=((64, 64), (64, 64))),
    3: Host("M3::matmulKernel3<128, 128, 64, 128, true>", 128, lambda m, n: (m // 128 * (n // 128),),
            smem(128, 128, 64), maps=((128, 64), (128, 64)), debug=True),
    4: Host("M4::matmulKernel4<128, 128, 64, 256, 5>", 256, lambda m, n: (m // 128 * (n // 128),),
            smem(128, 128, 64, 5), maps=((128, 64), (128, 64))),
    5: Host("M5::matmulKernel5<128, 256, 64, 384, 3>", 384, lambda m, n: (m // 128 * (n // 256),),
            smem(128, 256, 64, 3), maps=((128, 64), (256, 64))),
    6: Host("M6::matmulKernel6<128, 256, 64, 384, 3, 128>", 384, lambda m, n: (128,), smem(128, 256, 64, 3),
            maps=((128, 64), (256, 64)), min_size=2048),
    7: Host("M7::matmulKernel7<128, 256, 64, 384, 3, 128>", 384, lambda m, n: (128,), smem(128, 256, 64, 3),
            maps=((128, 64), (256, 64)), rank=5, min_size=2048),
    8: Host("M8::matmulKernel8<128, 256, 64, 384, 3, 128, 2, 1>", 384, lambda m, n: (128,), smem(128, 256, 64, 3),
            maps=((128, 64), (256, 64)), rank=3, min_size=2048),
    9: Host("M9::matmulKernel9<128, 256, 64, 384, 3, 128, 2, 1>", 384, lambda m, n: (128,), smem(128, 256, 64, 3),
            maps=((128, 64), (256, 64)), rank=3, min_size=2048),
    # SMem adds C's tile (BN x BM bf16) and 2 x QSIZE barriers, the whole rounded to its 128-byte alignment
    10: Host("M10::matmulKernel10<128, 256, 64, 384, 3, 128, 2, 1>", 384, lambda m, n: (128,),
             -(-(smem(128, 256, 64, 3) + 2 * 256 * 128 + 8 * 2 * 3) // 128) * 128, maps=((128, 64), (256, 64)),
             rank=3, c_map=(256, 128), min_size=2048),
    # 11 and 12 also take the Hilbert-curve schedule their host code computes (hilbert), and SMem has
    # its int space[128]; 12's C tile has 8 elements of padding a row, and its map's box 72 of them
    11: Host("M11::matmulKernel11<128, 256, 64, 384, 3, 128, 2, 1>", 384, lambda m, n: (128,),
             -(-(smem(128, 256, 64, 3) + 2 * 256 * 128 + 8 * 2 * 3 + 4 * 128) // 128) * 128,
             maps=((128, 64), (256, 64)), rank=3, c_map=(256, 128), hilbert=True, min_size=2048),
    12: Host("M12::matmulKernel12<128, 256, 64, 384, 3, 128, 2, 1>", 384, lambda m, n: (128,),
             -(-(smem(128, 256, 64, 3) + 2 * 256 * (128 + 16) + 8 * 2 * 3 + 4 * 128) // 128) * 128,
             maps=((128, 64), (256, 64)), rank=3, c_map=(256, 64, 72), hilbert=True, min_size=2048),
}


def fast_map(x, major, minor, row=64, *, rank, swizzle=128):
    """create_tensor_map<major, minor>(x, rows, columns) of kernels 7-12: the matrix as 64-column slabs
    (sizes 64, rows, columns / 64; strides a row's bytes and 128), the box row x major x minor / 64
    (row: 64, or kernel 12's padded 72), encoded with rank 5 (kernel 7) or 3 (8-12) of the 5 values
    each array holds."""
    rows, cols = x.shape
    return cudacheck.tensor_map_tiled(x, (64, rows, cols // 64, 1, 1)[:rank], (2 * cols, 128, 0, 0)[:rank - 1],
                                      (row, major, minor // 64, 1, 1)[:rank], element="bf16", swizzle=swizzle)


SPACE_LEN = 128   # kernels 11-12's schedule: tiles a cluster walks, at most


def hilbert(m, n, cores):
    """createHilbert(M, N, CORES, space) of kernels 11-12: the m x n tiles in the order of a Hilbert
    curve dealt to the first 64 cores in turn, then the last tiles of the first cores moved to the
    others until they hold about as many; space[core * SPACE_LEN + j] = (x << 16) | y, else -1."""
    dim = 1 << (max(m, n) - 1).bit_length()
    pos = [[] for _ in range(cores)]
    fcores, core = 64, 0
    for i in range(dim * dim):
        x, y = d2xy(dim, i)
        if x < m and y < n:
            pos[core].append((x << 16) | y)
            core = (core + 1) % fcores
    core = fcores
    for i in range(fcores):
        if len(pos[-1]) >= len(pos[0]) - 1:
            break
        pos[core].append(pos[i].pop())
        core = fcores if core + 1 == cores else core + 1
    space = np.full((cores, SPACE_LEN), -1, np.int32)
    for i, p in enumerate(pos):
        assert len(p) <= SPACE_LEN, "more tiles than a core's schedule holds"
        space[i, :len(p)] = p
    return space.ravel()


def d2xy(n, d):
    """The point at distance d along the Hilbert curve of an n x n square (fast.cu's d2xy and rot)."""
    x = y = 0
    s, t = 1, d
    while s < n:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        x, y = x + s * rx, y + s * ry
        t //= 4
        s *= 2
    return x, y


def bf16(rng, shape):
    """Random normal BF16 values: (their bits as uint16, their float64 values)."""
    bits = (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def as_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def source(checkout, n):
    return (checkout / "examples" / "matmul" / f"matmul_{n}.cuh").read_text()


def run(text, n, m, nn, k, check, rng):
    """Kernel n of the file's text, one mode, at M x N x K (M and N raised to the kernel's min_size):
    ("pass" | "wrong" | the error's class, detail, seconds)."""
    host = HOSTS[n]
    m, nn = (-(-x // host.min_size) * host.min_size for x in (m, nn))
    code = device_code(text)
    started = time.perf_counter()
    try:
        module = cudacheck.RawModule(PRELUDE + code, backend="cpu", check=check, name_expressions=(host.expr,))
        kernel = module.get_function(host.expr)
        (a, af), (b, bf) = bf16(rng, (m, k)), bf16(rng, (nn, k) if host.layout == "cm" else (k, nn))
        c = np.zeros((nn, m) if host.layout == "cm" else (m, nn), np.uint16)
        if host.c_map:
            maps = [fast_map(x, *box, rank=host.rank) for x, box in zip((a, b), host.maps)]
            args = (np.int32(m), np.int32(nn), np.int32(k), fast_map(c, *host.c_map, rank=host.rank, swizzle=0),
                    *maps)
        elif host.rank:
            maps = [fast_map(x, *box, rank=host.rank) for x, box in zip((a, b), host.maps)]
            args = (np.int32(m), np.int32(nn), np.int32(k), c, *maps)
        elif host.maps:
            maps = [cudacheck.tensor_map_2d(x, box_rows=major, box_cols=minor, element="bf16", swizzle=128)
                    for x, (major, minor) in zip((a, b), host.maps)]
            args = (np.int32(m), np.int32(nn), np.int32(k), c, *maps)
        else:
            args = (np.int32(m), np.int32(nn), np.int32(k), a, b, c)
        if host.debug:
            args += (np.full(8192 * 128, -1, np.int32),)
        if host.hilbert:   # CLUSTER_M = 2: tiles of 2 BM x BN, NUM_SM / 2 clusters
            args += (hilbert(-(-m // 256), -(-nn // 256), 64),)
        if host.shared:
            kernel.max_dynamic_shared_size_bytes = host.shared
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", cudacheck.ClusterExitWarning)
            kernel(host.grid(m, nn), (host.block,), args, shared_mem=host.shared)
    except cudacheck.KernelError as e:
        lines = str(e).splitlines()
        detail = next((x for x in lines[1:] if x.startswith("line ")), lines[0]) if len(lines) > 1 else lines[0]
        return type(e).__name__, detail[:300], time.perf_counter() - started
    seconds = time.perf_counter() - started
    exact = af @ (bf.T if host.layout == "cm" else bf)
    scale = np.abs(af) @ np.abs(bf.T if host.layout == "cm" else bf)
    got = as_float(c).T if host.layout == "cm" else as_float(c)
    err = float(np.max(np.abs(got - exact) / scale))
    # the result is rounded to BF16 (2^-9 of |C| <= scale) after float32 sums (k terms)
    ok = err <= 2.0 ** -8 + 2 * k * 2.0 ** -24
    detail = f"{m} x {nn} x {k}: max |C - exact| / (|A||B|) = {err:.2e}"
    late = [w.message for w in caught if isinstance(w.message, cudacheck.ClusterExitWarning)]
    if late:   # the defect ClusterExitRaceError names, met by this run's schedule
        detail += (f"; ClusterExitWarning: line {late[0].line}'s arrival landed after block {late[0].target_block}"
                   " exited (a GPU lands it or fails the launch, by timing)")
    return ("pass" if ok else "wrong"), detail, seconds


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkout", type=Path, help="a checkout of pranjalssh/fast.cu")
    p.add_argument("--size", type=int, default=256, help="M = N (a multiple of 256)")
    p.add_argument("--k", type=int, default=256, help="K (a multiple of 64)")
    p.add_argument("--time-limit", type=float, default=300, help="seconds a launch may take (the persistent "
                   "kernels run at 2048 x 2048 on 2 cores)")
    p.add_argument("--kernels", default="1-12", help="which kernels: 1-12, or a list such as 2,3,7")
    p.add_argument("--patched", action="store_true", help="also run checked, with each defect checked mode names "
                   "fixed in a copy of the file (FIXES), until it passes")
    args = p.parse_args(argv)
    if not (args.checkout / "examples" / "matmul" / "matmul_2.cuh").is_file():
        p.error(f"{args.checkout} is not a checkout of fast.cu (no examples/matmul/matmul_2.cuh)")
    if args.size % 256 or args.k % 64:
        p.error("--size must be a multiple of 256 and --k of 64 (the kernels' tiles divide them exactly)")
    lo, _, hi = args.kernels.partition("-")
    chosen = range(int(lo), int(hi) + 1) if hi else [int(x) for x in args.kernels.split(",")]
    rng = np.random.default_rng()
    cudacheck.config.time_limit = args.time_limit
    print(f"fast.cu at {args.checkout}, M = N = {args.size}, K = {args.k}, CPU runtime\n")
    print("| kernel | mode | result | s | detail |\n|---|---|---|---|---|")
    for n in chosen:
        text = source(args.checkout, n)
        for check in (False, True):
            result, detail, seconds = run(text, n, args.size, args.size, args.k, check, rng)
            row(n, "checked" if check else "plain", result, detail, seconds)
        fixed = []
        while args.patched and result in FIXES and FIXES[result].name not in fixed:
            fixed.append(FIXES[result].name)
            text = FIXES[result].apply(text)
            result, detail, seconds = run(text, n, args.size, args.size, args.k, True, rng)
            row(n, "checked, fixed: " + " + ".join(fixed), result, detail, seconds)
    return 0


def row(n, mode, result, detail, seconds):
    named = f"defect named: {result}" if result in FIXES else result
    print(f"| {n} | {mode} | {named} | {seconds:.1f} | {detail} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
