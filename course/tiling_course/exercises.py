"""The book's exercises, each defined once, and their checker.

    from tiling_course import exercises
    print(exercises.starter("naive-1"))          # the kernel the reader edits
    exercises.check("naive-1", source)           # truthy on a pass; shows what failed
    exercises.show_solution("naive-1")           # the solution, as a cuda code block

Most exercises are kernels to write or to fix. A "fix" exercise's starter is a correct
kernel with a mistake put in, written as an edit of the right source (as in
course/tiling_course/corpus.py); a "write" exercise starts from a skeleton with TODOs. The checker
runs the reader's kernel through tiling_course.tryout: checked mode on the CPU runtime, on
fresh random inputs and awkward shapes, then the GPU if there is one, every product
compared with NumPy in float64. A few exercises also ask something of how the kernel
gets its answer (loads it saves, barriers it passes, coalesced accesses), which the
counts and the trace of the checked run show. "value" exercises ask for a number the
reader finds with checked mode's counters, and are checked against a real run.

Every exercise also lists known wrong answers and the failure each must give; the
tests run them all (tests/test_exercises.py).
"""
import math
from collections import defaultdict
from dataclasses import dataclass

from . import corpus, matmul, tryout
from .corpus import BOUNDS_LOAD_M, BOUNDS_LOAD_N, TILED_FIRST_BARRIER, TILED_SECOND_BARRIER
from cudacheck.listing import strip_comments


# --------------------------------------------------------------------------- sources

@dataclass(frozen=True)
class Edit:
    """A source written as an edit of another: `base` is a kernel of tiling_course.matmul (its
    .cu file, or only its own function for a file of several), another Edit, or text;
    each (old, new) pair replaces the first occurrence of old, which must be there."""
    base: object
    edits: tuple = ()

    def text(self):
        src = _text(self.base)
        for old, new in self.edits:
            if old not in src:
                raise ValueError(f"an edit's text is not in its base source: {old!r}")
            src = src.replace(old, new, 1)
        return src


@dataclass(frozen=True)
class Book:
    """A kernel of the book (a key of tiling_course.matmul.KERNELS). For a .cu file that holds
    several kernels: its #ifndef block and this kernel's own comment and function."""
    kernel: str

    def text(self):
        src = matmul.source(self.kernel)
        name = matmul.KERNELS[self.kernel].function
        paragraphs = src.split("\n\n")
        if sum("__global__" in p for p in paragraphs) <= 1:
            return src
        keep = [p[p.index("#ifndef"):] if "#ifndef" in p else p for p in paragraphs
                if "#ifndef" in p or f" {name}(" in p]
        return "\n\n".join(keep).rstrip() + "\n"


def _text(src):
    if isinstance(src, str):
        return src
    if isinstance(src, (Edit, Book)):
        return src.text()
    if callable(src):
        return src()
    raise TypeError(f"not a source: {src!r}")


def _corpus(name):
    """A wrong kernel of tiling_course.corpus, as a source."""
    def text():
        return corpus.WRONG[name].source()
    return text


@dataclass(frozen=True)
class Wrong:
    """A known wrong answer and the failure the checker must report for it: an
    exception's class name ("OutOfBoundsError", "CompileError", ...), "wrong values",
    "requirement" (right product, but not what the exercise asks), or for a value
    exercise "wrong value"."""
    name: str
    what: str
    source: object      # a source (kernel exercises) or the wrong number (value exercises)
    expect: str


@dataclass(frozen=True)
class Exercise:
    id: str
    chapter: str            # the chapter notebook's stem, e.g. "01_naive"
    title: str
    kind: str               # "write", "fix" or "value"
    statement: str          # Markdown
    hint: str               # Markdown, shown with every failure
    starter: object         # a source; for a value exercise, Python code that sets `variable`
    solution: object
    starter_fails: str = ""  # the failure the starter gives, as Wrong.expect (the tests check it)
    wrong: tuple = ()
    explanation: str = ""   # Markdown, shown under the solution
    variable: str = ""      # the notebook variable the starter cell sets
    # kernel exercises
    launch: tryout.Launch | None = None
    tiles: tuple = (16,)
    shapes: tuple = ()
    requirement: object = None   # requirement(report, shape, tile, code) -> None or why not
    trace: tuple | None = None   # blocks checked mode records, for the requirement
    # value exercises
    answer: object = None        # () -> the expected number, from a real run
    tolerance: float = 0.0       # relative
    unit: str = ""

    @property
    def var(self):
        return self.variable or self.id.replace("-", "") + "_src"


# ---------------------------------------------------------------------- requirements

def _global_loads(report, position):
    """Loads of the kernel's `position`-th pointer parameter (0: M, 1: N, 2: P)."""
    counts = list(report.global_counts.items())
    return counts[position] if position < len(counts) else (None, None)


def staged_loads(position, bound, where):
    """A requirement: the `position`-th input is loaded at most bound(m, k, n, tile) times,
    which only staging it through shared memory achieves; `where` says how."""
    def requirement(report, shape, tile, code):
        name, counts = _global_loads(report, position)
        if counts is None:
            return "the kernel has too few pointer parameters"
        most = bound(*shape, tile)
        if counts.loads > most:
            return (f"it loads `{name}` from global memory {counts.loads:,} times, and {where} it would be "
                    f"at most {most:,}.")
        return None
    return requirement


def coalesced(report, shape, tile, code):
    """A requirement: in the traced block, neighbouring threads of one warp (threadIdx.x
    and threadIdx.x + 1) touch, at each step of their loops, the same element of a global
    array or neighbouring ones, never elements far apart."""
    glob = set(report.global_counts)
    steps = defaultdict(list)   # (array, op, thread) -> indices, in program order
    for a in report.trace or ():
        if a.array in glob:
            steps[a.array, a.op, a.thread].append(a.index)
    bx, by, _ = report.block
    for (array, op, (x, y, z)), first in sorted(steps.items()):
        if x + 1 >= bx:
            continue
        if (x + bx * (y + by * z)) // 32 != (x + 1 + bx * (y + by * z)) // 32:
            continue
        second = steps.get((array, op, (x + 1, y, z)), [])
        for i, j in zip(first, second):
            if abs(j - i) > 1:
                verb = "read" if op == "R" else "write"
                return (f"its accesses are not coalesced: threads ({x}, {y}, {z}) and ({x + 1}, {y}, {z}), "
                        f"neighbours in one warp, {verb} `{array}[{i}]` and `{array}[{j}]` at the same step, "
                        f"{abs(j - i)} elements apart. A warp's loads combine into few memory transactions "
                        f"only when consecutive `threadIdx.x` touch consecutive elements (or the same one).")
    return None


def barriers_per_phase(most):
    """A requirement: block (0, 0) passes at most `most` barriers per phase of the tiled
    loop (ceil(k / tile) phases), counted from the trace's barrier intervals."""
    def requirement(report, shape, tile, code):
        m, k, n = shape
        phases = -(-k // tile)
        intervals = [a.interval for a in report.trace or ()]
        if not intervals or not phases:
            return None
        crossed = max(intervals) - 1
        if crossed > most * phases:
            return (f"block (0, 0) passes {crossed} barriers in {phases} phase{'s' if phases > 1 else ''}; the "
                    f"exercise asks for at most {most} per phase.")
        return None
    return requirement


def no_block_barrier(report, shape, tile, code):
    """A requirement: the source calls no __syncthreads() (a cheaper barrier is enough)."""
    if "__syncthreads" in strip_comments(code):
        return ("it calls `__syncthreads()`, which makes every warp of the block wait; the threads that share "
                "data here are all in one warp, so a cheaper barrier is enough.")
    return None


def _both(*requirements):
    def requirement(report, shape, tile, code):
        for r in requirements:
            unmet = r(report, shape, tile, code)
            if unmet:
                return unmet
        return None
    return requirement


# ----------------------------------------------------------------------- value answers

def _idle_threads():
    from . import traces
    grid, block, _ = matmul.geometry("naive", 40, 40, 40, 16)
    report = traces.counts("naive", 40, 16)
    return grid[0] * grid[1] * block[0] * block[1] - report.global_counts["P"].stores


def _loads_per_element_of_N():
    from . import traces
    return traces.counts("tiled", 64, 16).global_counts["N"].loads / 64 ** 2


def _intensity():
    from . import traces
    report = traces.counts("tiled", 64, 8)
    return 2 * 64 ** 3 / (4 * (report.global_loads + report.global_stores))


# ------------------------------------------------------------------ the source texts

_NAIVE_ROW_COL = ("    int row = blockIdx.y * blockDim.y + threadIdx.y;  // which element this thread computes\n"
                  "    int col = blockIdx.x * blockDim.x + threadIdx.x;\n")
_NAIVE_GUARD = ("    if (row >= Width || col >= Width)                 // the grid may overhang the matrix\n"
                "        return;\n")
_NAIVE_SUM = "        sum += M[row * Width + k] * N[k * Width + col];\n"

NAIVE_SKELETON = r'''// Exercise: one thread per element of P = M x N, all matrices Width x Width,
// row-major (element (row, col) of a matrix sits at row * Width + col).
extern "C" __global__ void matmul_naive(const float* M, const float* N, float* P, int Width) {
    int row = 0;  // TODO: the row of P this thread computes (blockIdx.y, blockDim.y, threadIdx.y)
    int col = 0;  // TODO: its column (the .x coordinates)
    // TODO: the grid may overhang the matrix: threads outside it must not touch memory
    float sum = 0.0f;
    // TODO: add up M[row][i] * N[i][col] for i = 0 .. Width - 1
    P[row * Width + col] = sum;
}
'''

NAIVE_RECT_STARTER = r'''// Exercise: P (m x n) = M (m x k) times N (k x n), row-major, one thread per element
// of P. The body is still the square kernel's, with one Width for everything: make it
// right for any m, k and n.
extern "C" __global__ void matmul_naive_rect(const float* M, const float* N, float* P,
                                             int m, int k, int n) {
    int Width = m;  // TODO: there is no single Width any more
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= Width || col >= Width)
        return;
    float sum = 0.0f;
    for (int i = 0; i < Width; ++i)
        sum += M[row * Width + i] * N[i * Width + col];
    P[row * Width + col] = sum;
}
'''

NAIVE_RECT = r'''// P (m x n) = M (m x k) times N (k x n), row-major, one thread per element of P.
// A row of M has k elements, a row of N and of P has n; P has m rows.
extern "C" __global__ void matmul_naive_rect(const float* M, const float* N, float* P,
                                             int m, int k, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n)
        return;
    float sum = 0.0f;
    for (int i = 0; i < k; ++i)
        sum += M[row * k + i] * N[i * n + col];
    P[row * n + col] = sum;
}
'''

_TILED_LOADS = ("        Mds[ty][tx] = M[row * Width + ph * TILE_WIDTH + tx];\n"
                "        Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + col];\n")

TILED_N_STARTER = r'''// Exercise: the naive kernel's loop, with N's tiles staged in shared memory (M is still
// read from global memory). Width is a multiple of TILE_WIDTH; blocks are
// TILE_WIDTH x TILE_WIDTH threads, one element of P each.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled_n(const float* M, const float* N, float* P, int Width) {
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];  // TODO: use it
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0.0f;
    // TODO: phase by phase, load one tile of N into Nds, then take the products from it
    for (int i = 0; i < Width; ++i)
        sum += M[row * Width + i] * N[i * Width + col];
    P[row * Width + col] = sum;
}
'''

TILED_N = r'''// The naive kernel's loop, with N's tiles staged in shared memory (M is still read
// from global memory). Width is a multiple of TILE_WIDTH; blocks are
// TILE_WIDTH x TILE_WIDTH threads, one element of P each.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled_n(const float* M, const float* N, float* P, int Width) {
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0.0f;
    for (int ph = 0; ph < Width / TILE_WIDTH; ++ph) {
        Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + col];
        __syncthreads();  // Nds is complete
        for (int i = 0; i < TILE_WIDTH; ++i)
            sum += M[row * Width + ph * TILE_WIDTH + i] * Nds[i][tx];
        __syncthreads();  // everyone is done with Nds before the next phase overwrites it
    }
    P[row * Width + col] = sum;
}
'''

DOUBLE_BUFFER_STARTER = r'''// Exercise: the tiled kernel with one __syncthreads() per phase instead of two. Give
// it two pairs of tiles and use them in alternate phases, so that a phase never writes
// the tiles that the previous phase's slow threads may still be reading.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled(const float* M, const float* N, float* P, int Width) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];  // TODO: two of each
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    int num_tiles = Width / TILE_WIDTH;

    float sum = 0.0f;
    for (int ph = 0; ph < num_tiles; ++ph) {
        Mds[ty][tx] = M[row * Width + ph * TILE_WIDTH + tx];
        Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + col];
        __syncthreads();  // read after write: the tiles are complete
        for (int k = 0; k < TILE_WIDTH; ++k)
            sum += Mds[ty][k] * Nds[k][tx];
        __syncthreads();  // TODO: with two pairs of tiles, this one can go
    }
    P[row * Width + col] = sum;
}
'''

DOUBLE_BUFFER = r'''// The tiled kernel with one __syncthreads() per phase: two pairs of tiles, used in
// alternate phases. Phase ph + 1 writes the other pair, which nobody reads in phase ph;
// and before phase ph + 2 overwrites this pair, every thread has passed the barrier of
// phase ph + 1, which it reaches only after it finished reading in phase ph.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_tiled(const float* M, const float* N, float* P, int Width) {
    __shared__ float Mds[2][TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[2][TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    int num_tiles = Width / TILE_WIDTH;

    float sum = 0.0f;
    for (int ph = 0; ph < num_tiles; ++ph) {
        int b = ph % 2;  // this phase's pair of tiles
        Mds[b][ty][tx] = M[row * Width + ph * TILE_WIDTH + tx];
        Nds[b][ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + col];
        __syncthreads();  // read after write: the tiles are complete
        for (int k = 0; k < TILE_WIDTH; ++k)
            sum += Mds[b][ty][k] * Nds[b][k][tx];
    }
    P[row * Width + col] = sum;
}
'''

_BOUNDS_HEADER = ("// The tiled kernel for any shapes: P (m x n) = M (m x k) times N (k x n), row-major.\n"
                  "// Threads whose element of a tile lies outside M or N load 0.0f instead: the zero adds\n"
                  "// nothing to the sum, and every thread still reaches both barriers. Only threads that\n"
                  "// own an element of P write it.\n")
_BOUNDS_WRITE = "    if (row < m && col < n)\n        P[row * n + col] = sum;\n"
_BOUNDS_LOOP = '''    float sum = 0.0f;
    for (int ph = 0; ph < num_tiles; ++ph) {
        int mcol = ph * TILE_WIDTH + tx;  // column of M this thread loads
        int nrow = ph * TILE_WIDTH + ty;  // row of N this thread loads
        Mds[ty][tx] = (row < m && mcol < k) ? M[row * k + mcol] : 0.0f;
        Nds[ty][tx] = (nrow < k && col < n) ? N[nrow * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE_WIDTH; ++i)
            sum += Mds[ty][i] * Nds[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
'''
_BOUNDS_LOOP_IN_BRANCH = '''    float sum = 0.0f;
    if (row < m && col < n) {  // only the threads that own an element of P take part
        for (int ph = 0; ph < num_tiles; ++ph) {
            int mcol = ph * TILE_WIDTH + tx;  // column of M this thread loads
            int nrow = ph * TILE_WIDTH + ty;  // row of N this thread loads
            Mds[ty][tx] = (mcol < k) ? M[row * k + mcol] : 0.0f;
            Nds[ty][tx] = (nrow < k) ? N[nrow * n + col] : 0.0f;
            __syncthreads();
            for (int i = 0; i < TILE_WIDTH; ++i)
                sum += Mds[ty][i] * Nds[i][tx];
            __syncthreads();
        }
        P[row * n + col] = sum;
    }
'''

COARSE_STARTER = r'''// Exercise: thread coarsening. Each thread computes two elements of P, in the same
// row, TILE_WIDTH columns apart, so a block of TILE_WIDTH x TILE_WIDTH threads computes
// a TILE_WIDTH x 2*TILE_WIDTH tile of P, and the grid has half as many blocks across.
// Each tile of M the block loads serves both halves. Any m, k, n.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_coarse(const float* M, const float* N, float* P,
                                         int m, int k, int n) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];  // TODO: a tile of N for each half
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * 2 * TILE_WIDTH + tx;  // the first of this thread's two columns
    int num_tiles = (k + TILE_WIDTH - 1) / TILE_WIDTH;

    float sum = 0.0f;  // TODO: and a sum for column col + TILE_WIDTH
    for (int ph = 0; ph < num_tiles; ++ph) {
        int mcol = ph * TILE_WIDTH + tx;
        int nrow = ph * TILE_WIDTH + ty;
        Mds[ty][tx] = (row < m && mcol < k) ? M[row * k + mcol] : 0.0f;
        Nds[ty][tx] = (nrow < k && col < n) ? N[nrow * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE_WIDTH; ++i)
            sum += Mds[ty][i] * Nds[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        P[row * n + col] = sum;
    // TODO: the second element
}
'''

COARSE = r'''// Thread coarsening: each thread computes two elements of P, in the same row,
// TILE_WIDTH columns apart; a block of TILE_WIDTH x TILE_WIDTH threads computes a
// TILE_WIDTH x 2*TILE_WIDTH tile of P. Each tile of M is loaded once for both halves,
// and each value read from Mds is used twice, from a register. Any m, k, n.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

extern "C" __global__ void matmul_coarse(const float* M, const float* N, float* P,
                                         int m, int k, int n) {
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds0[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds1[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col0 = blockIdx.x * 2 * TILE_WIDTH + tx;
    int col1 = col0 + TILE_WIDTH;
    int num_tiles = (k + TILE_WIDTH - 1) / TILE_WIDTH;

    float sum0 = 0.0f, sum1 = 0.0f;
    for (int ph = 0; ph < num_tiles; ++ph) {
        int mcol = ph * TILE_WIDTH + tx;
        int nrow = ph * TILE_WIDTH + ty;
        Mds[ty][tx] = (row < m && mcol < k) ? M[row * k + mcol] : 0.0f;
        Nds0[ty][tx] = (nrow < k && col0 < n) ? N[nrow * n + col0] : 0.0f;
        Nds1[ty][tx] = (nrow < k && col1 < n) ? N[nrow * n + col1] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE_WIDTH; ++i) {
            float a = Mds[ty][i];
            sum0 += a * Nds0[i][tx];
            sum1 += a * Nds1[i][tx];
        }
        __syncthreads();
    }
    if (row < m && col0 < n)
        P[row * n + col0] = sum0;
    if (row < m && col1 < n)
        P[row * n + col1] = sum1;
}
'''

COALESCED_STARTER = r'''// Exercise: simpleMultiply, with A's tile read from global memory once per block, into
// shared memory, and the products taken from there. C = A B: A is m x TILE_DIM, B is
// TILE_DIM x n, blocks of TILE_DIM x TILE_DIM threads. Use the cheapest barrier that
// is enough.
#ifndef TILE_DIM
#define TILE_DIM 16
#endif

extern "C" __global__ void coalescedMultiply(const float* a, const float* b, float* c, int n) {
    __shared__ float aTile[TILE_DIM][TILE_DIM];  // TODO: fill it, then read A from here
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < TILE_DIM; i++)
        sum += a[row * TILE_DIM + i] * b[i * n + col];
    c[row * n + col] = sum;
}
'''

_BPG_SYNCWARP = "    __syncwarp();\n"

# ------------------------------------------------------------------------ exercises

_EXERCISES = [
    # ------------------------------------------------------------------ 1. naive
    Exercise(
        id="naive-1", chapter="01_naive", title="Write the naive kernel", kind="write",
        starter_fails="wrong values",
        statement="""\
Complete the kernel so that each thread computes one element of `P = M N`, all three
matrices `Width x Width` and row-major. Three pieces are missing:

- `row` and `col`, the element this thread owns, from `blockIdx`, `blockDim` and
  `threadIdx` (`.y` counts rows, `.x` columns);
- a test that sends home the threads the rounded-up grid places outside the matrix,
  before they touch memory;
- the loop that adds up row `row` of `M` times column `col` of `N`.

The checker launches it with 16 x 16 blocks on matrices of 1 x 1, 16 x 16, 19 x 19 and
37 x 37.""",
        hint="Element (r, c) of a `Width`-column matrix is at `r * Width + c`: along a row of `M` the "
             "index steps by 1, down a column of `N` by `Width`. A thread with `row >= Width` or "
             "`col >= Width` must `return` first.",
        starter=NAIVE_SKELETON, solution=Book("naive"),
        launch=tryout.Launch("naive"), tiles=(16,), shapes=((1, 1, 1), (16, 16, 16), (19, 19, 19), (37, 37, 37)),
        explanation="The kernel of the chapter. The guard comes before any access: threads of the last "
                    "row and column of blocks that fall outside the matrix must neither read nor write.",
        wrong=(
            Wrong("no_guard", "no test for threads outside the matrix",
                  Edit(Book("naive"), ((_NAIVE_GUARD, ""),)), "OutOfBoundsError"),
            Wrong("column_of_M", "M is walked down a column instead of along a row",
                  Edit(Book("naive"), (("M[row * Width + k]", "M[k * Width + row]"),)), "wrong values"),
            Wrong("typo", "`threadIdx.row` does not exist",
                  Edit(Book("naive"), (("+ threadIdx.y;", "+ threadIdx.row;"),)), "CompileError"),
        )),
    Exercise(
        id="naive-2", chapter="01_naive", title="Fix the column of N", kind="fix",
        starter_fails="wrong values",
        statement="""\
This kernel compiles, stays inside every array, and passes a 1 x 1 test; on anything
larger its products are wrong. Checked mode has nothing to report, since no access is
out of bounds: only comparing the result with NumPy shows the bug. Read which elements
of `N` one thread reads as `k` counts up, and fix the kernel.""",
        hint="For a fixed thread, write down the indices of `N` it reads for k = 0, 1, 2. Are they "
             "consecutive (a row of `N`) or `Width` apart (a column)? Which of the two does "
             "`P[row][col]` need?",
        starter=Edit(Book("naive"), ((_NAIVE_SUM, "        sum += M[row * Width + k] * N[col * Width + k];\n"),)),
        solution=Book("naive"),
        launch=tryout.Launch("naive"), tiles=(16,), shapes=((1, 1, 1), (16, 16, 16), (19, 19, 19)),
        explanation="`N[col * Width + k]` walks along row `col` of `N`, so the kernel computed "
                    "`M` times the transpose of `N`. Column `col` of `N` is `N[k * Width + col]`.",
        wrong=(
            Wrong("row_instead_of_col", "`N[k * Width + row]`: the right stride, the wrong column",
                  Edit(Book("naive"), (("N[k * Width + col]", "N[k * Width + row]"),)), "wrong values"),
        )),
    Exercise(
        id="naive-3", chapter="01_naive", title="Rectangular matrices", kind="write",
        starter_fails="OutOfBoundsError",
        statement="""\
Generalize the naive kernel to `P (m x n) = M (m x k) N (k x n)`. The starter still
uses one `Width` for every dimension, which is right only for squares. The grid covers
`P` with 16 x 16 blocks: `ceil(n / 16)` across and `ceil(m / 16)` down. The checker tries
1x1·1x1, 5x17·17x3, 19x7·7x33 and 16x16·16x16.""",
        hint="There are three sizes now: a row of `M` has `k` elements, a row of `N` and of `P` has `n`, "
             "and `P` has `m` rows. Which one bounds `row`, which bounds `col`, which ends the loop, and "
             "which is the stride of each matrix?",
        starter=NAIVE_RECT_STARTER, solution=NAIVE_RECT,
        launch=tryout.Launch("tiled_bounds", function="matmul_naive_rect"), tiles=(16,),
        shapes=((1, 1, 1), (5, 17, 3), (19, 7, 33), (16, 16, 16)),
        explanation="Each matrix is indexed with its own row length: `M` with `k`, `N` and `P` with `n`. "
                    "Rows of `P` are bounded by `m`, columns by `n`, and the dot product runs over `k`.",
        wrong=(
            Wrong("M_stride_n", "M indexed with n elements per row",
                  Edit(NAIVE_RECT, (("M[row * k + i]", "M[row * n + i]"),)), "wrong values"),
            Wrong("guard_swapped", "`row >= n || col >= m`: the bounds of rows and columns swapped",
                  Edit(NAIVE_RECT, (("row >= m || col >= n", "row >= n || col >= m"),)), "OutOfBoundsError"),
        )),
    Exercise(
        id="naive-4", chapter="01_naive", title="How many threads idle?", kind="value",
        starter_fails="no answer",
        statement="""\
With `Width` 40 and 16 x 16 blocks, the grid is rounded up to whole blocks, and some of
its threads leave at the guard without doing anything. How many? Work it out, then
confirm it with a checked run: its report counts every store to `P`, and each thread
that passes the guard stores exactly one element.""",
        hint="Threads launched: blocks in the grid times threads per block. Threads that work: one per "
             "element of `P`, which is also `report.global_counts['P'].stores`.",
        starter='''\
from tiling_course import matmul, traces

Width, tile = 40, 16
grid, block, _ = matmul.geometry("naive", Width, Width, Width, tile)
report = traces.counts("naive", Width, tile)   # one checked run, every access counted
print("grid", grid, "block", block)
print(report)

idle = None   # TODO: how many of the threads launched store no element of P?
''',
        solution='''\
from tiling_course import matmul, traces

Width, tile = 40, 16
grid, block, _ = matmul.geometry("naive", Width, Width, Width, tile)
report = traces.counts("naive", Width, tile)
launched = grid[0] * grid[1] * block[0] * block[1]   # 3 x 3 blocks of 256 threads: 2,304
working = report.global_counts["P"].stores           # one store per element of P: 1,600
idle = launched - working
print(idle)
''',
        variable="idle", answer=_idle_threads, unit="threads",
        explanation="3 x 3 blocks of 256 threads are 2,304 threads for 1,600 elements: 704 threads, almost a "
                    "third, only test the guard. The waste shrinks as `Width` grows relative to the block.",
        wrong=(
            Wrong("launched", "all the threads launched", 2304, "wrong value"),
            Wrong("working", "the threads that work", 1600, "wrong value"),
        )),

    # ------------------------------------------------------------------ 2. tiling
    Exercise(
        id="tiling-1", chapter="02_tiling", title="Load the tiles", kind="write",
        starter_fails="wrong values",
        statement="""\
The tiled kernel with step 3's two loads taken out: every tile is filled with zeros.
Write them. In phase `ph`, a block needs the tile of `M` in its own row of tiles and in
column of tiles `ph`, and the tile of `N` in row of tiles `ph` and its own column of
tiles; each thread loads the one element at its own position `(ty, tx)` of each tile.
The checker tries `Width` 16, 32 and 48 with 16 x 16 tiles.""",
        hint="Position `(ty, tx)` of phase `ph`'s tile of `M` is row `row` and column "
             "`ph * TILE_WIDTH + tx` of `M`; of the tile of `N`, row `ph * TILE_WIDTH + ty` and column `col`.",
        starter=Edit(Book("tiled"), ((
            _TILED_LOADS,
            "        Mds[ty][tx] = 0.0f;  // TODO: this thread's element of M's tile of phase ph\n"
            "        Nds[ty][tx] = 0.0f;  // TODO: this thread's element of N's tile of phase ph\n"),)),
        solution=Book("tiled"),
        launch=tryout.Launch("tiled"), tiles=(16,), shapes=((16, 16, 16), (32, 32, 32), (48, 48, 48)),
        explanation="Phase `ph` moves `ph * TILE_WIDTH` columns along `M` and as many rows down `N`. Within "
                    "the tile, `tx` picks the column and `ty` the row, for both matrices.",
        wrong=(
            Wrong("phase_without_tile_width", "the phase offset forgets the tile width: `ph + tx`",
                  Edit(Book("tiled"), ((_TILED_LOADS,
                                        "        Mds[ty][tx] = M[row * Width + ph + tx];\n"
                                        "        Nds[ty][tx] = N[(ph + ty) * Width + col];\n"),)), "wrong values"),
        )),
    Exercise(
        id="tiling-2", chapter="02_tiling", title="Fix the inner product", kind="fix",
        starter_fails="wrong values",
        statement="""\
Here the loads and both barriers are right, but the inner loop takes the wrong elements
from one of the two tiles. Find which, and fix it.""",
        hint="Thread `(tx, ty)` needs row `ty` of `M`'s tile and column `tx` of `N`'s tile. In "
             "`Nds[a][b]`, which index is the row?",
        starter=Edit(Book("tiled"), (("Mds[ty][k] * Nds[k][tx]", "Mds[ty][k] * Nds[tx][k]"),)),
        solution=Book("tiled"),
        launch=tryout.Launch("tiled"), tiles=(16,), shapes=((16, 16, 16), (32, 32, 32)),
        explanation="`Nds[tx][k]` walks along row `tx` of the tile; the product needs column `tx`, "
                    "`Nds[k][tx]`, as `k` runs down it.",
        wrong=(
            Wrong("both_transposed", "`Mds[k][ty] * Nds[k][tx]`: now M's tile is read down a column",
                  Edit(Book("tiled"), (("Mds[ty][k] * Nds[k][tx]", "Mds[k][ty] * Nds[k][tx]"),)), "wrong values"),
        )),
    Exercise(
        id="tiling-3", chapter="02_tiling", title="Fix a kernel made for one tile size", kind="fix",
        starter_fails="OutOfBoundsError",
        statement="""\
Its author tested this kernel with `TILE_WIDTH` 16, and it passed. The checker tries 16
and then 8, and at 8 checked mode stops it. Make it correct for every tile size.""",
        hint="Look for a number in the kernel that should be `TILE_WIDTH`.",
        starter=Edit(Book("tiled"), (("for (int k = 0; k < TILE_WIDTH; ++k)", "for (int k = 0; k < 16; ++k)"),)),
        solution=Book("tiled"),
        launch=tryout.Launch("tiled"), tiles=(16, 8), shapes=((16, 16, 16), (48, 48, 48)),
        explanation="The inner loop must run over the tile, `k < TILE_WIDTH`. With a literal 16 and "
                    "8 x 8 tiles, it reads past the end of each row of `Mds` (and `Nds`).",
        wrong=(
            Wrong("phases_by_16", "the inner loop fixed, but the number of phases is Width / 16",
                  Edit(Book("tiled"), (("int num_tiles = Width / TILE_WIDTH;", "int num_tiles = Width / 16;"),)),
                  "wrong values"),
        )),
    Exercise(
        id="tiling-4", chapter="02_tiling", title="Stage only N", kind="write",
        starter_fails="requirement",
        statement="""\
A kernel halfway between the naive one and the tiled one: it stages the tiles of `N` in
shared memory, phase by phase, and reads `M` straight from global memory. The starter
is the naive loop, with `Nds` declared but unused. Use it, with the barriers it needs,
so that each element of `N` is loaded from global memory once per block that needs it.
Besides the product, the checker counts the loads of `N` in its checked run.""",
        hint="Same phases as the tiled kernel: load `Nds[ty][tx]` from row `ph * TILE_WIDTH + ty` of `N`, "
             "wait, add `M[row][ph * TILE_WIDTH + i] * Nds[i][tx]` for i in the tile, wait again.",
        starter=TILED_N_STARTER, solution=TILED_N,
        launch=tryout.Launch("tiled", function="matmul_tiled_n"), tiles=(16,),
        shapes=((16, 16, 16), (48, 48, 48)),
        requirement=staged_loads(1, lambda m, k, n, tile: -(-m // tile) * k * n,
                                 "with its tiles staged in shared memory (each element once per block row)"),
        explanation="The loads of `N` drop by the tile width, those of `M` stay as in the naive kernel. "
                    "Both barriers are still needed: `Nds[i][tx]` is read by threads other than the one "
                    "that stored it.",
        wrong=(
            Wrong("no_second_barrier", "the barrier after the products left out",
                  Edit(TILED_N, (("        __syncthreads();  // everyone is done with Nds before the next "
                                  "phase overwrites it\n", ""),)), "SharedMemoryRaceError"),
        )),
    Exercise(
        id="tiling-5", chapter="02_tiling", title="How often is an element loaded?", kind="value",
        starter_fails="no answer",
        statement="""\
The naive kernel loads every element of `N` from global memory `Width` times. How many
times does the tiled kernel load each element of `N` at `Width` 64 with `TILE_WIDTH` 16?
Reason it out, then read it off the counts of a checked run.""",
        hint="A block loads the tiles of `N` in its own column of tiles, once each. How many blocks share "
             "a column of tiles? The counts: `report.global_counts['N'].loads` over the 64 x 64 elements.",
        starter='''\
from tiling_course import traces

report = traces.counts("tiled", 64, 16)   # Width 64, TILE_WIDTH 16
print(report)

loads_per_element = None   # TODO: global loads of each element of N
''',
        solution='''\
from tiling_course import traces

report = traces.counts("tiled", 64, 16)
loads_per_element = report.global_counts["N"].loads / 64**2
print(loads_per_element)   # Width / TILE_WIDTH = 4: one load per block row of the grid
''',
        variable="loads_per_element", answer=_loads_per_element_of_N, unit="loads",
        explanation="Each element of `N` is loaded once by each of the `Width / TILE_WIDTH` = 4 blocks of "
                    "its column of tiles, against 64 times in the naive kernel: the tile width, 16, fewer.",
        wrong=(
            Wrong("naive", "the naive kernel's count", 64, "wrong value"),
            Wrong("tile", "the tile width (the saving, not the count)", 16, "wrong value"),
        )),

    # ------------------------------------------------------------------ 3. __syncthreads
    Exercise(
        id="sync-1", chapter="03_syncthreads", title="Put the barriers back", kind="fix",
        starter_fails="SharedMemoryRaceError",
        statement="""\
Both `__syncthreads()` calls are gone from this tiled kernel. Put back what is needed,
and only that. Checked mode names the first pair of threads that conflict, the element,
and whether the missing barrier is the one before the products or the one after.""",
        hint="One barrier between storing the tiles and reading them (read after write); one between "
             "the last read of a phase and the next phase's stores (write after read). A `__syncwarp()` "
             "orders only the 32 threads of one warp.",
        starter=Edit(Book("tiled"), ((TILED_FIRST_BARRIER, ""), (TILED_SECOND_BARRIER, ""))),
        solution=Book("tiled"),
        launch=tryout.Launch("tiled"), tiles=(16,), shapes=((16, 16, 16), (48, 48, 48)),
        explanation="Every thread reads tile elements that other threads stored, so it must wait until "
                    "they are stored, and no thread may overwrite them until all have been read.",
        wrong=(
            Wrong("only_first", "only the barrier before the products",
                  Edit(Book("tiled"), ((TILED_SECOND_BARRIER, ""),)), "SharedMemoryRaceError"),
            Wrong("only_second", "only the barrier after the products",
                  Edit(Book("tiled"), ((TILED_FIRST_BARRIER, ""),)), "SharedMemoryRaceError"),
            Wrong("warp_barriers", "`__syncwarp()` in both places",
                  Edit(Book("tiled"), ((TILED_FIRST_BARRIER, "        __syncwarp();\n"),
                                       (TILED_SECOND_BARRIER, "        __syncwarp();\n"))), "SharedMemoryRaceError"),
        )),
    Exercise(
        id="sync-2", chapter="03_syncthreads", title="Fix a warp barrier that should be a block barrier", kind="fix",
        starter_fails="SharedMemoryRaceError",
        statement="""\
Someone replaced `sharedABMultiply`'s `__syncthreads()` with the cheaper `__syncwarp()`,
since that is all `coalescedMultiply` needs. With `TILE_DIM` 16 a block holds 256
threads, 8 warps of two rows each. Which shared data crosses from one warp to another
here? Fix the kernel.""",
        hint="`bTile[i][threadIdx.x]` is stored by a thread of row `i`, in warp `i / 2`; the thread that "
             "reads it in its loop may be in any warp of the block.",
        starter=Edit(Book("sharedABMultiply"), (
            ("// B's tile through shared memory too: now a warp reads what other warps wrote, so the\n"
             "// whole block must wait at __syncthreads().\n",
             "// B's tile through shared memory too, ordered by a warp barrier.\n"),
            ("    __syncthreads();\n", _BPG_SYNCWARP))),
        solution=Book("sharedABMultiply"),
        launch=tryout.Launch("sharedABMultiply"), tiles=(16,), shapes=((16, 16, 16), (48, 16, 32)),
        explanation="Every thread reads a whole column of `bTile`, written by the threads of all 16 rows, "
                    "hence by all 8 warps: only a barrier of the whole block orders that.",
        wrong=(
            Wrong("barrier_after_loop", "the `__syncthreads()` moved after the loop",
                  Edit(Book("sharedABMultiply"), (("    __syncthreads();\n", ""),
                                                  ("    c[row * n + col] = sum;\n",
                                                   "    __syncthreads();\n    c[row * n + col] = sum;\n"))),
                  "SharedMemoryRaceError"),
        )),
    Exercise(
        id="sync-3", chapter="03_syncthreads", title="One barrier per phase", kind="write",
        starter_fails="requirement",
        statement="""\
The second barrier of each phase is there only because the next phase overwrites the
tiles. Give the kernel two pairs of tiles and use them in alternate phases, and one
`__syncthreads()` per phase is enough. Rewrite the tiled kernel that way. The checker
checks the product, races included, and counts the barriers block (0, 0) passes in its
checked run.""",
        hint="Declare `__shared__ float Mds[2][TILE_WIDTH][TILE_WIDTH]` (and `Nds` likewise), use pair "
             "`ph % 2` in phase `ph` for both the stores and the products, and keep the barrier between "
             "them. Then ask why phase `ph + 2` cannot overwrite pair `ph % 2` while a slow thread still "
             "reads it.",
        starter=DOUBLE_BUFFER_STARTER, solution=DOUBLE_BUFFER,
        launch=tryout.Launch("tiled"), tiles=(16,), shapes=((16, 16, 16), (48, 48, 48)),
        requirement=barriers_per_phase(1), trace=((0, 0),),
        explanation="A thread can start storing into pair `ph % 2` again only in phase `ph + 2`, after the "
                    "barrier of phase `ph + 1`, which every thread reaches only after it has finished reading "
                    "in phase `ph`. The barrier of the next phase does the second barrier's job.",
        wrong=(
            Wrong("one_pair", "one pair of tiles and one barrier",
                  Edit(Book("tiled"), ((TILED_SECOND_BARRIER, ""),)), "SharedMemoryRaceError"),
            Wrong("other_pair", "stores into pair `ph % 2`, products from the other pair",
                  Edit(DOUBLE_BUFFER, (("sum += Mds[b][ty][k] * Nds[b][k][tx];",
                                        "sum += Mds[1 - b][ty][k] * Nds[1 - b][k][tx];"),)),
                  "UninitializedReadError"),
        )),
    Exercise(
        id="sync-4", chapter="03_syncthreads", title="Fix barriers that only some threads reach", kind="fix",
        starter_fails="BarrierDivergenceError",
        statement="""\
In this version of the bounds-checked kernel, only the threads that own an element of `P`
enter the tile loop, with its two barriers. Blocks that lie wholly inside `P` are fine;
blocks at the edge are not. Fix it so that every thread of a block reaches every barrier.""",
        hint="Let every thread take part in every phase, storing `0.0f` where its element of `M` or `N` "
             "does not exist, and test `row < m && col < n` only around the final write.",
        starter=Edit(Book("tiled_bounds"), ((_BOUNDS_HEADER, "// The tiled kernel for any shapes: P (m x n) = M (m x k) "
                                             "times N (k x n), row-major.\n// Only the threads that own an element "
                                             "of P take part in the tile loop.\n"),
                                            (_BOUNDS_LOOP, _BOUNDS_LOOP_IN_BRANCH))),
        solution=Book("tiled_bounds"),
        launch=tryout.Launch("tiled_bounds"), tiles=(16,),
        shapes=((1, 1, 1), (16, 16, 16), (17, 31, 19), (40, 7, 33)),
        explanation="A `__syncthreads()` must be reached by all threads of the block or by none. Threads "
                    "outside `P` still load their share of each tile (zeros past the edge) and wait at "
                    "the barriers; they only skip the write.",
        wrong=(
            Wrong("no_barriers", "the branch kept, the barriers taken out: the outside threads' tile elements "
                  "are never stored",
                  Edit(Book("tiled_bounds"), ((_BOUNDS_LOOP, _BOUNDS_LOOP_IN_BRANCH.replace(
                      "            __syncthreads();\n", "")),)), "UninitializedReadError"),
            Wrong("unguarded_loads", "the test moved to the write, but the loads left unguarded",
                  Edit(Book("tiled_bounds"), ((BOUNDS_LOAD_M, "        Mds[ty][tx] = M[row * k + mcol];\n"),
                                              (BOUNDS_LOAD_N, "        Nds[ty][tx] = N[nrow * n + col];\n"))),
                  "OutOfBoundsError"),
        )),

    # ------------------------------------------------------------------ 4. boundaries
    Exercise(
        id="bounds-1", chapter="04_boundaries", title="Write the guards", kind="write",
        starter_fails="OutOfBoundsError",
        statement="""\
The tiled kernel for any `M (m x k)` and `N (k x n)`, with every bounds test left out:
it rounds the number of phases up, and then loads and stores as if every element
existed. Add the tests. Every thread must still reach both barriers in every phase. The
checker tries 1x1·1x1, 17x31·31x19, 40x7·7x33 and 16x16·16x16, with 16 x 16 tiles.""",
        hint="Store `0.0f` in the tile where the element lies outside `M` (`row < m`, column `< k`) or "
             "`N` (row `< k`, `col < n`): a zero adds nothing to the sum. Write `P` only where "
             "`row < m && col < n`.",
        starter=Edit(Book("tiled_bounds"), (
            (BOUNDS_LOAD_M, "        Mds[ty][tx] = M[row * k + mcol];  // TODO: 0.0f where outside M\n"),
            (BOUNDS_LOAD_N, "        Nds[ty][tx] = N[nrow * n + col];  // TODO: 0.0f where outside N\n"),
            (_BOUNDS_WRITE, "    P[row * n + col] = sum;  // TODO: only threads that own an element of P\n"))),
        solution=Book("tiled_bounds"),
        launch=tryout.Launch("tiled_bounds"), tiles=(16,),
        shapes=((1, 1, 1), (17, 31, 19), (40, 7, 33), (16, 16, 16)),
        explanation="The loads are guarded with a zero fill, so every thread takes part in every phase; "
                    "only the write asks whether the thread's element of `P` exists.",
        wrong=(
            Wrong("no_zero_fill", "guards that skip the load and store nothing",
                  _corpus("no_zero_fill"), "UninitializedReadError"),
            Wrong("early_return", "threads outside P return before the loop", _corpus("early_return"),
                  "BarrierDivergenceError"),
            Wrong("off_by_one", "`<=` where `<` is meant", _corpus("off_by_one_guard"), "OutOfBoundsError"),
            Wrong("unguarded_write", "loads guarded, the write not",
                  Edit(Book("tiled_bounds"), ((_BOUNDS_WRITE, "    P[row * n + col] = sum;\n"),)),
                  "OutOfBoundsError"),
        )),
    Exercise(
        id="bounds-2", chapter="04_boundaries", title="Fix a guard with the wrong dimension", kind="fix",
        starter_fails="wrong values",
        statement="""\
This kernel is right for every square matrix, and wrong for most rectangles. One guard
compares against the wrong one of `m`, `k` and `n`. Find it.""",
        hint="For each guard, ask which matrix the index points into, and how many rows and columns that "
             "matrix has. `N` is `k x n`.",
        starter=Edit(Book("tiled_bounds"), (("(nrow < k && col < n)", "(nrow < m && col < n)"),)),
        solution=Book("tiled_bounds"),
        launch=tryout.Launch("tiled_bounds"), tiles=(16,),
        shapes=((1, 1, 1), (17, 31, 19), (40, 7, 33), (16, 16, 16)),
        explanation="`nrow` is a row of `N`, which has `k` rows. With `m < k` the guard dropped rows of `N` "
                    "that exist; with `m > k` it would read rows that do not.",
        wrong=(
            Wrong("rows_of_P", "`nrow < n`", Edit(Book("tiled_bounds"), (("(nrow < k && col < n)",
                                                                           "(nrow < n && col < n)"),)),
                  "wrong values"),
            Wrong("off_by_one", "`nrow <= k`", Edit(Book("tiled_bounds"), (("(nrow < k && col < n)",
                                                                             "(nrow <= k && col < n)"),)),
                  "OutOfBoundsError"),
        )),
    Exercise(
        id="bounds-3", chapter="04_boundaries", title="Fix the split of dynamic shared memory", kind="fix",
        starter_fails="SharedMemoryRaceError",
        statement="""\
The dynamic-shared-memory kernel gets one array, `tiles`, of `2 * tile * tile` floats,
and carves `Mds` and `Nds` out of it. This version carves them wrong. Checked mode says
how; fix it.""",
        hint="`Mds` takes the first `tile * tile` floats. Where does `Nds` have to start so that the two "
             "do not overlap, and where does it end?",
        starter=Edit(Book("tiled_dynamic"), (("float* Nds = tiles + tile * tile;", "float* Nds = tiles + tile;"),)),
        solution=Book("tiled_dynamic"),
        launch=tryout.Launch("tiled_dynamic"), tiles=(16,), shapes=((1, 1, 1), (17, 31, 19), (40, 7, 33)),
        explanation="`Nds` starts right after `Mds`'s `tile * tile` floats. Starting it `tile` floats in, the "
                    "two tiles overlapped: a thread's element of `Nds` was another thread's element of `Mds`.",
        wrong=(
            Wrong("past_the_end", "`Nds = tiles + 2 * tile * tile`",
                  Edit(Book("tiled_dynamic"), (("float* Nds = tiles + tile * tile;",
                                                "float* Nds = tiles + 2 * tile * tile;"),)), "OutOfBoundsError"),
            Wrong("same_array", "`Nds = tiles`, the same floats as `Mds`",
                  Edit(Book("tiled_dynamic"), (("float* Nds = tiles + tile * tile;", "float* Nds = tiles;"),)),
                  "wrong values"),
        )),
    Exercise(
        id="bounds-4", chapter="04_boundaries", title="Fix the number of phases", kind="fix",
        starter_fails="wrong values",
        statement="""\
This kernel has all its guards, and no finding of checked mode, yet its products are
often wrong. The number of phases is the culprit. Fix it.""",
        hint="How many tiles of width `TILE_WIDTH` does it take to cover `k` columns of `M` when `k` is "
             "not a multiple of `TILE_WIDTH`? And when `k` is smaller than the tile?",
        starter=Edit(Book("tiled_bounds"), (("int num_tiles = (k + TILE_WIDTH - 1) / TILE_WIDTH;",
                                             "int num_tiles = k / TILE_WIDTH;"),)),
        solution=Book("tiled_bounds"),
        launch=tryout.Launch("tiled_bounds"), tiles=(16,),
        shapes=((1, 1, 1), (16, 16, 16), (17, 31, 19), (40, 7, 33), (5, 40, 7)),
        explanation="`k / TILE_WIDTH` rounds down and leaves out the last, partial tile; with `k < TILE_WIDTH` "
                    "there is no phase at all. Rounding up, `(k + TILE_WIDTH - 1) / TILE_WIDTH`, covers it, "
                    "and the guards fill the rest of the tile with zeros.",
        wrong=(
            Wrong("rounds_m", "rounds up, but counts the rows of M",
                  Edit(Book("tiled_bounds"), (("int num_tiles = (k + TILE_WIDTH - 1) / TILE_WIDTH;",
                                               "int num_tiles = (m + TILE_WIDTH - 1) / TILE_WIDTH;"),)),
                  "wrong values"),
        )),

    # ------------------------------------------------------------------ 5. performance
    Exercise(
        id="perf-1", chapter="05_performance", title="Fix uncoalesced accesses", kind="fix",
        starter_fails="requirement",
        statement="""\
This naive kernel computes the right product, but it maps threads to elements so that
neighbouring threads of a warp, `threadIdx.x` and `threadIdx.x + 1`, touch elements of
`M` and `P` a whole row apart. Make its accesses coalesced. The checker records every
access of block (0, 0) in checked mode and compares, step by step, what neighbouring
threads of one warp touch.""",
        hint="Which coordinate of `threadIdx` should select the column of `P`, so that neighbours write "
             "neighbouring elements of a row, and read the same element of `M`?",
        starter=Edit(Book("naive"), ((_NAIVE_ROW_COL,
                                      "    int row = blockIdx.y * blockDim.y + threadIdx.x;  // which element this "
                                      "thread computes\n"
                                      "    int col = blockIdx.x * blockDim.x + threadIdx.y;\n"),)),
        solution=Book("naive"),
        launch=tryout.Launch("naive"), tiles=(16,), shapes=((1, 1, 1), (20, 20, 20), (37, 37, 37)),
        requirement=coalesced, trace=((0, 0),),
        explanation="With `col` from `threadIdx.x`, the threads of a warp read the same element of `M` (a "
                    "broadcast), consecutive elements of `N`, and write consecutive elements of `P`.",
        wrong=(
            Wrong("swap_blocks_too", "blocks and threads both swapped: a correct product, still uncoalesced",
                  Edit(Book("naive"), ((_NAIVE_ROW_COL,
                                        "    int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                        "    int col = blockIdx.y * blockDim.y + threadIdx.y;\n"),)),
                  "requirement"),
            Wrong("no_guard", "coalesced, but the guard gone", Edit(Book("naive"), ((_NAIVE_GUARD, ""),)),
                  "OutOfBoundsError"),
        )),
    Exercise(
        id="perf-2", chapter="05_performance", title="Two outputs per thread", kind="write",
        starter_fails="wrong values",
        statement="""\
One of cuBLAS's tricks: a thread computes several elements of `P`, so that each value
it reads from shared memory feeds several products. Write a bounds-checked tiled kernel
whose threads compute two elements each, in one row, `TILE_WIDTH` columns apart. A
block of 16 x 16 threads then computes a 16 x 32 tile of `P`, and the grid has
`ceil(n / 32)` blocks across. Load each tile of `M` once per phase, for both halves. The
checker checks the product on awkward shapes and counts the loads of `M`.""",
        hint="Two tiles of `N` per phase (columns `col` and `col + TILE_WIDTH`), one tile of `M`, two sums. "
             "Every load and each of the two writes needs its own guard.",
        starter=COARSE_STARTER, solution=COARSE,
        launch=tryout.Launch("tiled_bounds", function="matmul_coarse", columns_per_thread=2), tiles=(16,),
        shapes=((1, 1, 1), (17, 31, 45), (40, 7, 33), (16, 16, 32)),
        requirement=staged_loads(0, lambda m, k, n, tile: -(-n // (2 * tile)) * m * k,
                                 "loading each tile once per block of 2 x TILE_WIDTH columns"),
        explanation="The block loads one tile of `M` and two of `N` per phase and does twice the work, so "
                    "`M` is loaded half as often as in the tiled kernel, and each `Mds[ty][i]` read from shared "
                    "memory feeds two multiply-adds from a register.",
        wrong=(
            Wrong("second_write_unguarded", "the second element written without its guard",
                  Edit(COARSE, (("    if (row < m && col1 < n)\n        P[row * n + col1] = sum1;\n",
                                 "    if (row < m)\n        P[row * n + col1] = sum1;\n"),)), "OutOfBoundsError"),
            Wrong("second_tile_not_filled", "the second tile of N skipped past the edge, not zero-filled",
                  Edit(COARSE, (("        Nds1[ty][tx] = (nrow < k && col1 < n) ? N[nrow * n + col1] : 0.0f;\n",
                                 "        if (nrow < k && col1 < n)\n"
                                 "            Nds1[ty][tx] = N[nrow * n + col1];\n"),)), "UninitializedReadError"),
            Wrong("M_twice", "a second copy of M's tile loaded for the second half",
                  Edit(COARSE, (("    __shared__ float Nds0", "    __shared__ float Mds1[TILE_WIDTH][TILE_WIDTH];\n"
                                                             "    __shared__ float Nds0"),
                                ("        Nds0[ty][tx] =",
                                 "        Mds1[ty][tx] = (row < m && mcol < k) ? M[row * k + mcol] : 0.0f;\n"
                                 "        Nds0[ty][tx] ="),
                                ("            sum1 += a * Nds1[i][tx];",
                                 "            sum1 += Mds1[ty][i] * Nds1[i][tx];"))),
                  "requirement"),
        )),
    Exercise(
        id="perf-3", chapter="05_performance", title="Arithmetic intensity from the counters", kind="value",
        starter_fails="no answer",
        statement="""\
The roofline needs a kernel's arithmetic intensity: floating-point operations per byte
of global memory traffic. Take the tiled kernel at `Width` 64 with `TILE_WIDTH` 8. It
does `2 Width^3` operations (a multiply and an add per step). Count its traffic from a
checked run, loads and stores both, 4 bytes each, and give its intensity in FLOP per
byte.""",
        hint="`report.global_loads` and `report.global_stores` count elements; multiply by 4 for bytes. "
             "The chapter's `TILE_WIDTH / 4` counts the loads only.",
        starter='''\
from tiling_course import traces

Width, tile = 64, 8
report = traces.counts("tiled", Width, tile)
print(report)

intensity = None   # TODO: FLOP per byte of global loads and stores
''',
        solution='''\
from tiling_course import traces

Width, tile = 64, 8
report = traces.counts("tiled", Width, tile)
flops = 2 * Width**3
traffic = 4 * (report.global_loads + report.global_stores)   # bytes
intensity = flops / traffic
print(f"{intensity:.3f} FLOP/B")   # a little under TILE_WIDTH / 4 = 2: the stores of P cost too
''',
        variable="intensity", answer=_intensity, tolerance=0.005, unit="FLOP/B",
        explanation="65,536 loads and 4,096 stores are 278,528 bytes for 524,288 operations: 1.88 FLOP/B, a "
                    "little under the loads-only `TILE_WIDTH / 4` = 2.",
        wrong=(
            Wrong("loads_only", "loads only", 2.0, "wrong value"),
            Wrong("naive", "the naive kernel's intensity", 0.25, "wrong value"),
            Wrong("not_a_number", "text", "about two", "not a number"),
        )),
    Exercise(
        id="perf-4", chapter="05_performance", title="Stage A's tile with the cheapest barrier", kind="write",
        starter_fails="requirement",
        statement="""\
Rebuild the Best Practices Guide's `coalescedMultiply` from `simpleMultiply`: each block
reads its tile of `A` from global memory once, into shared memory, and every thread
takes its row of `A` from there. Order the stores and the reads with the cheapest
barrier that is enough. The checker checks the product, counts the loads of `A`, and
looks for `__syncthreads()` in the source.""",
        hint="Thread `(x, y)` stores `aTile[y][x]` and then reads row `y` of `aTile`, which only the threads "
             "of its own row stored. With `TILE_DIM` 16, which warp are they in?",
        starter=COALESCED_STARTER, solution=Book("coalescedMultiply"),
        launch=tryout.Launch("coalescedMultiply"), tiles=(16,), shapes=((16, 16, 16), (48, 16, 32)),
        requirement=_both(staged_loads(0, lambda m, k, n, tile: m * n,
                                       "reading each block's tile of A once"), no_block_barrier),
        explanation="A row of `aTile` is stored and read by the threads of one row, which lie in one warp "
                    "(`TILE_DIM` <= 32), so `__syncwarp()` orders them. `__syncthreads()` would also be "
                    "correct, and makes every warp wait for the slowest.",
        wrong=(
            Wrong("no_barrier", "the Guide's original, with no barrier",
                  Edit(Book("coalescedMultiply"), ((_BPG_SYNCWARP, ""),)), "SharedMemoryRaceError"),
            Wrong("block_barrier", "`__syncthreads()`: correct, but more than needed",
                  Edit(Book("coalescedMultiply"), ((_BPG_SYNCWARP, "    __syncthreads();\n"),)), "requirement"),
        )),
]


# The ladder (chapter 6): fixes of the rungs' own sources.
_RUNG1_LOAD_N = "            Nds[r][tx] = (nrow < k && col < n) ? N[nrow * n + col] : 0.0f;\n"
_RUNG1_STORE = "            P[row * n + col] = sum[c];\n"
_RUNG1_SECOND_SYNC = "        }\n        __syncthreads();\n    }\n"

_EXERCISES += [
    Exercise(
        id="ladder-1", chapter="06_beyond", title="Fix the coarsened kernel's second barrier", kind="fix",
        starter_fails="SharedMemoryRaceError",
        statement="""\
Rung 1 below lost the barrier at the end of each phase. Put it back. (Checked mode
names the race; think about which of the two hazards it is before you read it.)""",
        hint="A thread that finishes its COARSE multiply-adds early starts the next phase and overwrites "
             "`Mds`/`Nds` while slower threads still read them: a write after read. The barrier goes after "
             "the compute loop, inside the phase loop.",
        starter=Edit(Book("ladder1_coarsened"), ((_RUNG1_SECOND_SYNC, "        }\n    }\n"),)),
        solution=Book("ladder1_coarsened"),
        launch=tryout.Launch("ladder1_coarsened"), tiles=(32,),
        shapes=((1, 1, 1), (35, 37, 33), (64, 40, 70)),
        explanation="Coarsening changes how many outputs a thread owns, not how the tiles are shared: both "
                    "barriers of the tiled kernel are still needed. (A barrier at the start of each phase, "
                    "before the loads, does the same job.)",
        wrong=(
            Wrong("syncwarp", "a __syncwarp() where the block barrier belongs",
                  Edit(Book("ladder1_coarsened"), ((_RUNG1_SECOND_SYNC, "        }\n        __syncwarp();\n    }\n"),)),
                  "SharedMemoryRaceError"),
        )),
    Exercise(
        id="ladder-2", chapter="06_beyond", title="Fix the coarsened kernel's guard on N", kind="fix",
        starter_fails="OutOfBoundsError",
        statement="""\
This version of rung 1 checks only the row when it loads `N`. Which matrices does that
break? Fix the guard so that every shape works.""",
        hint="The thread's column `col` can lie past the last column of `N` when `n` is not a multiple of "
             "`TILE`; such threads must store 0.0f in `Nds` too.",
        starter=Edit(Book("ladder1_coarsened"), ((_RUNG1_LOAD_N, _RUNG1_LOAD_N.replace(
            "(nrow < k && col < n)", "(nrow < k)")),)),
        solution=Book("ladder1_coarsened"),
        launch=tryout.Launch("ladder1_coarsened"), tiles=(32,),
        shapes=((1, 1, 1), (35, 37, 33), (64, 40, 70)),
        explanation="Rows of `N` are bounded by `k`, columns by `n`: a guard must check both, as in "
                    "tiled_bounds.cu.",
        wrong=(
            Wrong("col_only", "checks the column but not the row",
                  Edit(Book("ladder1_coarsened"), ((_RUNG1_LOAD_N, _RUNG1_LOAD_N.replace(
                      "(nrow < k && col < n)", "(col < n)")),)), "OutOfBoundsError"),
        )),
    Exercise(
        id="ladder-3", chapter="06_beyond", title="Fix the coarsened kernel's write", kind="fix",
        starter_fails="wrong values",
        statement="""\
Each thread of rung 1 owns `COARSE` elements of one column, `ROWS` rows apart. This
version writes them to the wrong rows. Fix the write.""",
        hint="The loop's `row` must match the rows the sums were computed for: `row0 + c * ROWS`, the same "
             "spacing as `Mds[ty + c * ROWS][i]` in the compute loop.",
        starter=Edit(Book("ladder1_coarsened"), (("        int row = row0 + c * ROWS;\n",
                                                   "        int row = row0 + c;\n"),)),
        solution=Book("ladder1_coarsened"),
        launch=tryout.Launch("ladder1_coarsened"), tiles=(32,),
        shapes=((1, 1, 1), (35, 37, 33), (64, 40, 70)),
        explanation="The compute loop and the write must agree on which rows a thread owns.",
        wrong=(
            Wrong("rows_times_coarse", "rows COARSE apart instead of ROWS apart",
                  Edit(Book("ladder1_coarsened"), (("        int row = row0 + c * ROWS;\n",
                                                    "        int row = row0 + c * COARSE;\n"),)),
                  "wrong values"),
        )),
]

EXERCISES = {e.id: e for e in _EXERCISES}
CHAPTERS = tuple(dict.fromkeys(e.chapter for e in _EXERCISES))


def chapter(stem):
    """The exercises of one chapter (its notebook's stem), in order."""
    return [e for e in _EXERCISES if e.chapter == stem]


def starter(exercise_id):
    """The source the reader starts from (Python code for a value exercise)."""
    return _text(EXERCISES[exercise_id].starter)


def solution(exercise_id):
    """The solution's source (Python code for a value exercise)."""
    return _text(EXERCISES[exercise_id].solution)


def wrong_answers(exercise_id):
    """The known wrong answers: (Wrong, its source or value)."""
    ex = EXERCISES[exercise_id]
    return [(w, w.source if ex.kind == "value" else _text(w.source)) for w in ex.wrong]


def show_solution(exercise_id):
    """Display the solution as a Markdown code block, with a word on why it works."""
    ex = EXERCISES[exercise_id]
    lang = "python" if ex.kind == "value" else "cuda"
    text = f"**Solution to exercise {ex.id}, {ex.title}**\n\n```{lang}\n{solution(exercise_id).rstrip()}\n```"
    if ex.explanation:
        text += f"\n\n{ex.explanation}"
    _display(text)


# --------------------------------------------------------------------------- checker

class Result:
    """What check() found; truthy on a pass. Shown once in a notebook, wherever check()
    is called: check() displays it, and the cell's result does not display it again."""

    def __init__(self, passed, message, kind, outcome=None):
        self.passed = passed
        self.message = message
        self.kind = kind                 # "pass", an exception's class name, "wrong values", ...
        self.outcome = outcome           # the tiling_course.tryout.Outcome, for kernel exercises
        self.error = getattr(outcome, "error", None)
        self.shape = getattr(outcome, "shape", None)
        self.details = getattr(outcome, "details", {})
        self._shown_in = None

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return self.message

    def _repr_markdown_(self):
        return self.message

    def _ipython_display_(self):
        if self._shown_in is not None and self._shown_in == _execution_count():
            return
        _display(self.message)


def _execution_count():
    try:
        from IPython import get_ipython
        ip = get_ipython()
    except ImportError:
        return None
    return None if ip is None else ip.execution_count


def _display(text):
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
        if get_ipython() is None:
            raise ImportError
        display(Markdown(text))
    except ImportError:
        print(text)


def check(exercise_id, source, quiet=False):
    """Check an answer to exercise `exercise_id`: for a kernel exercise `source` is the
    CUDA C (the variable the %%cuda cell saved), for a value exercise the number. Shows
    and returns a Result, truthy on a pass; never raises for a wrong answer."""
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        result = Result(False, f"✗ There is no exercise {exercise_id!r}; the exercises are "
                               f"{', '.join(EXERCISES)}.", "no exercise")
    else:
        try:
            result = _check_value(ex, source) if ex.kind == "value" else _check_kernel(ex, source)
        except Exception as e:   # a checker must never stop the notebook
            result = Result(False, f"✗ **Exercise {ex.id}**: the check itself failed: "
                                   f"{type(e).__name__}: {e}", "checker error")
    if not quiet:
        _display(result.message)
        result._shown_in = _execution_count()
    return result


def _head(ex, passed):
    return f"✓ **Exercise {ex.id} solved.** " if passed else f"**Exercise {ex.id} ({ex.title}): not yet.**\n\n"


def _check_kernel(ex, source):
    if not isinstance(source, str) or not source.strip():
        return Result(False, _head(ex, False) + "✗ `check` takes the kernel's CUDA C source as a string: the "
                      f"variable the `%%cuda` cell saved (`{ex.var}`).\n\n**Hint:** {ex.hint}", "no source")
    passes = []
    for tile in ex.tiles:
        out = tryout.run(source, ex.launch.kernel, tile=tile, shapes=list(ex.shapes), quiet=True,
                         launch=ex.launch, hint=ex.hint, requirement=ex.requirement, trace=ex.trace)
        if not out:
            return Result(False, _head(ex, False) + out.message, out.kind, out)
        passes.append(out)
    message = passes[0].message.removeprefix("✓ ")
    if len(ex.tiles) > 1:
        tiles = " and ".join(map(str, ex.tiles))
        message = message.replace(f"(tile {ex.tiles[0]})", f"(tiles {tiles}, each)", 1)
    if ex.requirement is not None:
        message += " " + _REQUIREMENT_PASSED.get(ex.id, "It also does what the exercise asks of it.")
    return Result(True, _head(ex, True) + message, "pass", passes[-1])


_REQUIREMENT_PASSED = {
    "tiling-4": "And it loads `N` once per block row of the grid, as staging through shared memory should.",
    "sync-3": "And block (0, 0) passes one barrier per phase.",
    "perf-1": "And neighbouring threads of a warp touch the same or neighbouring elements at every step.",
    "perf-2": "And it loads each tile of `M` once for both halves.",
    "perf-4": "And it loads each block's tile of `A` once, with no `__syncthreads()`.",
}


def _check_value(ex, value):
    head = _head(ex, False)
    hint = f"\n\n**Hint:** {ex.hint}"
    if value is None:
        return Result(False, head + f"✗ No answer yet: set `{ex.var}` to your number and run the cell again."
                      + hint, "no answer")
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return Result(False, head + f"✗ The answer should be a number, not {value!r}." + hint, "not a number")
    try:
        got = float(value)
    except (TypeError, ValueError):
        return Result(False, head + f"✗ The answer should be a number, not {value!r}." + hint, "not a number")
    expected = float(ex.answer())
    if math.isfinite(got) and abs(got - expected) <= ex.tolerance * abs(expected) + 1e-9:
        return Result(True, _head(ex, True) + f"{_fmt(got)} {ex.unit}: that is what a checked run of the "
                      "kernel counts.", "pass")
    side = "too high" if got > expected else "too low"
    return Result(False, head + f"✗ {_fmt(got)} is {side}: it is not what a checked run of the kernel "
                  "counts." + hint, "wrong value")


def _fmt(x):
    return f"{int(x):,}" if float(x).is_integer() else f"{x:.4g}"


# -------------------------------------------------------------------- notebook cells

def authoring(stem):
    """The cells to append to chapter `stem`, in the book's authoring format: Markdown
    cells separated by `+++`, code cells as ```{code-cell} ipython3 blocks."""
    cells = ["## Exercises\n\nEach exercise gives you a kernel to write or to fix (or a number to find). Edit "
             "the cell, run it, then run the check below it: it runs your kernel in checked mode on the CPU "
             "runtime, on fresh random matrices of awkward shapes, then on the GPU if there is one, compares "
             "every element with NumPy, and tells you the first thing that is wrong, with a hint. The "
             "solution is hidden under each check.",
             _code("from tiling_course import exercises")]
    for i, ex in enumerate(chapter(stem), 1):
        cells.append(f"### Exercise {i}: {ex.title}\n\n{ex.statement.rstrip()}")
        if ex.kind == "value":
            cells.append(_code(starter(ex.id).rstrip()))
        else:
            cells.append(_code(f"%%cuda {ex.var}\n{starter(ex.id).rstrip()}"))
        cells.append(_code(f'exercises.check("{ex.id}", {ex.var})'))
        cells.append(_code(f'exercises.show_solution("{ex.id}")', tags=("hide-cell",)))
    out = []
    previous = None
    for cell in cells:
        is_code = cell.startswith("```{code-cell}")
        if previous is not None:
            out.append("\n+++\n\n" if not is_code else "\n")
        out.append(cell + "\n")
        previous = is_code
    return "".join(out)


def _code(text, tags=()):
    head = "```{code-cell} ipython3\n"
    if tags:
        head += f":tags: [{', '.join(tags)}]\n"
    return f"{head}{text}\n```"
