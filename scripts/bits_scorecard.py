"""Bit for bit: the CPU runtime against a GPU on kernels written elsewhere.

The differential corpus (tests/support/cuda_corpus) is this repository's own code. This script
runs kernels from three public projects, unchanged, with the compiler options each project's own
build uses, on the CPU runtime and (on a GPU host) through CuPy, with the same inputs, and
compares every float output element bit for bit:

  - NVIDIA's cuda-samples: BlackScholes (`__expf`, `__logf`, `__fdividef`, `rsqrtf`), n-body's
    body-body interaction (`rsqrtf`, shared-memory tiles), simpleGL's sine wave (`sinf`, `cosf`) and
    quasirandomGenerator's inverse normal CDF (`__logf`, a rational polynomial); CMake builds them
    with nvcc's defaults;
  - karpathy's llm.c, dev/cuda/: softmax, layernorm, GELU, matmul, cross-entropy and AdamW
    kernels, several variants each; its Makefile builds them with `--use_fast_math`, so each is run
    both so (`fast-math` cases) and with nvcc's defaults (`default` cases), which tells what the
    runtime computes differently from what fast math changes;
  - siboehm's SGEMM_CUDA: the SGEMM ladder, kernels 1-10 (6-10 load float4), nvcc's defaults.

A case names the items (functions, structs, macros, variables) it takes from a source file; the
script cuts them out of the checkout's file (`extract`), since the files are whole programs whose
host code and host headers (cuBLAS, <cstdio>) neither NVRTC nor the CPU runtime compiles, and
puts a few lines of its own before them where the project relies on its host build (`M_PI` and
`INFINITY` from <math.h>, `uint` from <sys/types.h>, llm.c's `floatX`, which gelu_forward.cu sets
to bf16).

    python scripts/bits_scorecard.py --cuda-samples CS --llmc LLMC --sgemm SGEMM --cpu /tmp/cpu.npz
    python scripts/bits_scorecard.py ... --pack /tmp/bits-pack     # only the files the table needs
    PYTHONPATH=runtime python scripts/bits_scorecard.py --sources /tmp/bits-pack --gpu /tmp/gpu.npz  # GPU host
    python scripts/bits_scorecard.py --compare /tmp/cpu.npz /tmp/gpu.npz

(--sources DIR stands for the three checkouts as DIR/cuda-samples, DIR/llm.c, DIR/SGEMM_CUDA:
what --pack writes. A bare mirror is made a tree with `git -C MIRROR archive HEAD PATHS | tar -x`.)
Inputs come from --seed (printed, and stored in the .npz) and the case's name; each case's
inputs are hashed into the .npz too, so --compare refuses two runs that did not see the same
bytes. --compare prints per case and output: elements, the bit-identical share, the largest
difference in ulps (of the output's own format, float32 or bf16) and in absolute value, and the
math functions the kernel's code calls; then the share over every float output, over the cases
built with and without fast math, and how far each llm.c kernel's two builds agree on each side.
A case that fails (a compile error, a refusal) is recorded with its message and the others run.
"""
import argparse
import ctypes
import hashlib
import json
import re
import shutil
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# The commits the table was written against (the items it takes, the launch shapes it copies).
REPOS = {
    "cuda-samples": ("NVIDIA/cuda-samples", "c94ff366aed18c797b8a85dfaac7817b0228b420"),
    "llm.c": ("karpathy/llm.c", "f1e2ace651495b74ae22d45d1723443fd00ecd3a"),
    "SGEMM_CUDA": ("siboehm/SGEMM_CUDA", "60cba6f9b20a198116c76f18de8047f44df8c8b8"),
}

# nvcc's defaults, which CMake builds of cuda-samples and SGEMM_CUDA keep, said. Through CuPy their
# -ftz=false counts for nothing (CuPy appends -ftz=true, and NVRTC takes the last), on a GPU and on
# the CPU runtime alike: both run these builds flushed.
NVCC_DEFAULT = ("-ftz=false",)
# llm.c's dev/cuda/Makefile: -O3 --use_fast_math, -std=c++17 (-O3 is NVRTC's default).
LLMC_FAST = ("--use_fast_math", "-std=c++17")
LLMC_DEFAULT = ("-ftz=false", "-std=c++17")

# Math functions and intrinsics whose result a GPU may round otherwise than a CPU: the compare
# table lists those a kernel's code calls.
MATH = re.compile(r"\b(__expf|__logf|__sinf|__cosf|__tanf|__powf|__fdividef|__frcp_rn|__fsqrt_rn|__saturatef|"
                  r"expf|exp2f|exp10f|expm1f|logf|log2f|log10f|log1pf|sinf|cosf|tanf|sincosf|tanhf|erff|erfcf|"
                  r"powf|sqrtf|rsqrtf|cbrtf|hypotf|fdividef|fmaf|fma|exp|log|rsqrt|sqrt)\s*\(")


# ---- cutting items out of a source file ------------------------------------------------------

def _skip_literal(text, i):
    """The index past the comment or string literal at i, or i if there is none."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return len(text) if end < 0 else end + 2
    if text[i] in "\"'":
        j = i + 1
        while j < len(text) and text[j] != text[i]:
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return i


def top_level(text):
    """The file's top-level items in order, each as its text (with the comments before it): a
    preprocessor line (with its continuations), a declaration ending in `;`, or a definition
    ending at its closing brace (and a `;` right after it)."""
    items, start, depth, i = [], 0, 0, 0
    while i < len(text):
        j = _skip_literal(text, i)
        if j != i:
            i = j
            continue
        c = text[i]
        if c == "#" and depth == 0 and text[text.rfind("\n", 0, i) + 1:i].strip() == "":
            end = i
            while True:
                end = text.find("\n", end)
                if end < 0 or text[end - 1] != "\\":
                    break
                end += 1
            end = len(text) if end < 0 else end
            items.append(text[start:end])
            start = i = end
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                rest = re.match(r"\s*;", text[i + 1:])
                i += 1 + (rest.end() if rest else 0)
                items.append(text[start:i])
                start = i
                continue
        elif c == ";" and depth == 0:
            items.append(text[start:i + 1])
            start = i + 1
        i += 1
    return [item for item in items if _code(item).strip()]


def _code(item):
    """An item without its comments."""
    out, i = [], 0
    while i < len(item):
        j = _skip_literal(item, i)
        if j != i and item[i] == "/":
            out.append(" ")
        else:
            j = j if j != i else i + 1
            out.append(item[i:j])
        i = j
    return "".join(out)


# Words before a `(` that are not the name being declared.
_NOT_NAMES = {"__launch_bounds__", "alignas", "__align__", "__attribute__", "decltype", "sizeof", "operator"}


def item_name(item):
    """The name an item declares or defines (a macro, a function, a struct, a variable, a
    typedef, a namespace), or None."""
    code = _code(item).strip()
    m = re.match(r"#\s*define\s+(\w+)", code)
    if m or code.startswith("#"):
        return m and m.group(1)
    head = re.split(r"[{;]", code, maxsplit=1)[0]
    for pattern in (r"^\s*namespace\s+(\w+)", r"^\s*using\s+(\w+)\s*=", r"\btypedef\b.*?(\w+)\s*$",
                    r"^(?:template\s*<[^{]*?>\s*)?(?:struct|class|union)\s+(?:alignas\s*\([^)]*\)\s*)?(\w+)"):
        m = re.search(pattern, head, re.S)
        if m:
            return m.group(1)
    for m in re.finditer(r"(\w+)\s*(?:<[^<>(){};]*>)?\s*\(", head):
        if m.group(1) not in _NOT_NAMES:
            return m.group(1)
    m = re.search(r"(\w+)\s*(?:\[[^\]]*\]\s*)*(?:=.*)?$", head, re.S)
    return m and m.group(1)


def extract(text, names, where="the file"):
    """The items of `text` that define one of `names`, in the file's order (every specialization
    of a template). ValueError naming the names the file does not define."""
    items = top_level(text)
    found = {item_name(item) for item in items}
    missing = [n for n in names if n not in found]
    if missing:
        raise ValueError(f"{where} defines no {', '.join(missing)} at top level: the checkout is not the commit "
                         f"this table was written for, or the name is misspelled")
    return "\n".join(item.strip("\n") for item in items if item_name(item) in names) + "\n"


# ---- the table -------------------------------------------------------------------------------

@dataclass
class Part:
    """Items taken from one file of one project."""
    repo: str              # a key of REPOS
    path: str              # the file, in the checkout
    names: tuple           # what extract takes from it


@dataclass
class Launch:
    """One launch: its shape and arguments, the outputs to compare (argument index -> name)
    and __constant__ variables to set first (name -> array)."""
    grid: tuple
    block: tuple
    args: list
    outputs: dict
    shared: int = 0
    constants: dict = field(default_factory=dict)


@dataclass
class Case:
    """One kernel of a project, as its build compiles it and its launcher launches it."""
    name: str
    parts: tuple           # Parts, concatenated in order after the prelude
    kernel: str            # the kernel's name, or its template instance (a name expression)
    build: object          # build(rng) -> Launch: fresh inputs
    options: tuple = NVCC_DEFAULT
    prelude: str = ""      # what the project's host build supplies (see the docstring)
    between: str = ""      # lines after the first part (a typedef of a struct that part defines)
    inputs: str = ""       # the name its random inputs come from, if not its own: one kernel's two builds
                           # get the same inputs, so each backend's two outputs show what fast math changed

    def code(self, sources):
        texts = []
        for i, part in enumerate(self.parts):
            path = Path(sources[part.repo]) / part.path
            texts.append(extract(path.read_text(), part.names, f"{part.repo}/{part.path}"))
            if i == 0 and self.between:
                texts.append(self.between)
        return self.prelude + "".join(texts)

    @property
    def fast_math(self):
        return any("fast_math" in o for o in self.options)


def f32(rng, *shape, low=None, high=None):
    """Random float32: standard normal, or uniform in [low, high)."""
    if low is None:
        return rng.standard_normal(shape).astype(np.float32)
    return rng.uniform(low, high, shape).astype(np.float32)


def bf16(values):
    """float32 values rounded to bfloat16 (to nearest even), as its 16-bit patterns."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def cdiv(a, b):
    return -(-a // b)


CS = "Samples/5_Domain_Specific/"


def black_scholes(rng):
    n = 2 * 20011                                   # a thread per pair: the last block partly idle
    s, x, t = f32(rng, n, low=5, high=30), f32(rng, n, low=1, high=100), f32(rng, n, low=0.25, high=10)
    call, put = np.zeros(n, np.float32), np.zeros(n, np.float32)
    return Launch((cdiv(n // 2, 128),), (128,), [call, put, s, x, t, np.float32(0.02), np.float32(0.30),
                                                 np.int32(n)], {0: "call", 1: "put"})


def nbody(rng):
    n, block = 640, 128                            # the sample needs whole tiles of bodies
    pos = np.concatenate([f32(rng, n, 3) * 4, f32(rng, n, 1, low=0.5, high=1.5)], axis=1)
    vel = np.concatenate([f32(rng, n, 3), np.zeros((n, 1), np.float32)], axis=1)
    new = np.zeros_like(pos)
    return Launch((n // block,), (block,), [new, pos, vel, np.uint32(0), np.uint32(n), np.float32(0.016),
                                            np.float32(0.995), np.int32(n // block)],
                  {0: "newPos", 2: "vel"}, shared=block * 16, constants={"softeningSquared": np.float32([0.01])})


def sine_wave(rng):
    w, h = 200, 136                                 # the sample's grid covers whole 8 x 8 blocks only
    pos = np.zeros((h, w, 4), np.float32)
    return Launch((w // 8, h // 8), (8, 8), [pos, np.uint32(w), np.uint32(h), np.float32(rng.uniform(0, 100))],
                  {0: "pos"})


def inverse_cnd(rng):
    n = 100003
    return Launch((128,), (128,), [np.zeros(n, np.float32), rng.integers(0, 2 ** 32, n, dtype=np.uint32),
                                   np.uint32(n)], {0: "out"})


def rows(rng, n=37, c=1000):
    """llm.c's (N, C) rows: an awkward count of rows and a row length no block divides."""
    return n, c, f32(rng, n, c) * 3


def softmax(grid, block, shared=lambda b: 0, c=1000):
    def build(rng):
        n, c_, inp = rows(rng, c=c)
        out = np.zeros_like(inp)
        return Launch((grid(n, block),), (block,), [out, inp, np.int32(n), np.int32(c_)], {0: "out"},
                      shared=shared(block))
    return build


def layernorm(grid, block, c=771):
    def build(rng):
        n, c_, inp = rows(rng, c=c)
        w, b = f32(rng, c_), f32(rng, c_)
        out, mean, rstd = np.zeros_like(inp), np.zeros(n, np.float32), np.zeros(n, np.float32)
        return Launch((grid(n, block),), (block,), [out, mean, rstd, inp, w, b, np.int32(n), np.int32(c_)],
                      {0: "out", 1: "mean", 2: "rstd"})
    return build


def gelu(per_thread):
    def build(rng):
        n = 8 * 4099                                  # kernel 2 takes 8 bf16 at once
        inp = bf16(f32(rng, n) * 3).view(np.uint16)
        out = np.zeros(n, np.uint16)
        return Launch((cdiv(n, 128 * per_thread),), (128,), [out, inp, np.int32(n)], {0: "out"})
    return build


def matmul(grid, with_rows, bt=67, c=96, oc=160):
    """llm.c's matmul_forward: out (BT, OC) = inp (BT, C) weight (OC, C)^T + bias; kernel 1 takes
    BT as an argument (with_rows), kernel 4 needs whole 128 x 128 tiles."""
    def build(rng):
        inp, w, bias = f32(rng, bt, c), f32(rng, oc, c), f32(rng, oc)
        out = np.zeros((bt, oc), np.float32)
        sizes = ([np.int32(bt)] if with_rows else []) + [np.int32(c), np.int32(oc)]
        return Launch(grid(bt, oc), (16, 16), [out, inp, w, bias] + sizes, {0: "out"})
    return build


def crossentropy(rng):
    b, t, v = 3, 37, 501
    logits = f32(rng, b * t, v)
    probs = (np.exp(logits) / np.exp(logits).sum(1, keepdims=True)).astype(np.float32)
    targets = rng.integers(0, v, b * t).astype(np.int32)
    losses = np.zeros(b * t, np.float32)
    return Launch((cdiv(b * t, 128),), (128,), [losses, probs, targets, np.int32(b), np.int32(t), np.int32(v)],
                  {0: "losses"})


def adamw(rng):
    n = 10007
    params, grads, m, v = f32(rng, n), f32(rng, n), f32(rng, n) * 0.1, np.abs(f32(rng, n)) * 0.01
    step = 7
    return Launch((cdiv(n, 512),), (512,), [params, grads, m, v, np.int64(n), np.float32(1e-3), np.float32(0.9),
                                            np.float32(0.999), np.float32(1 - 0.9 ** step),
                                            np.float32(1 - 0.999 ** step), np.float32(1e-8), np.float32(0.01)],
                  {0: "params", 2: "m", 3: "v"})


def sgemm(grid, block, m, n, k):
    """siboehm's runner: C = alpha A B + beta C, row-major, alpha 0.5 and beta 3 as sgemm.cu."""
    def build(rng):
        a, b, c = f32(rng, m, k), f32(rng, k, n), f32(rng, m, n)
        return Launch(grid(m, n), block, [np.int32(m), np.int32(n), np.int32(k), np.float32(0.5), a, b,
                                          np.float32(3.0), c], {7: "C"})
    return build


LLMC_COMMON = Part("llm.c", "dev/cuda/common.h", ("warpReduceSum",))
# gelu_forward.cu defines ENABLE_BF16 before common.h, which then makes floatX bf16.
BF16 = "#include <cuda_bf16.h>\ntypedef __nv_bfloat16 floatX;\n"
CG = "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
M_PI = "#define M_PI 3.14159265358979323846\n"      # <math.h>'s, which nvcc's host build has
UINT = "typedef unsigned int uint;\n"                # <sys/types.h>'s, likewise
INF = "#include <math_constants.h>\n#define INFINITY CUDART_INF_F\n"   # <math.h>'s, likewise


def llmc(name, file, names, kernel, build, prelude="", common=False, between="", parts=()):
    """One llm.c kernel, built both as its Makefile builds it and with nvcc's defaults: the items
    `names` of dev/cuda/`file`, after warpReduceSum from common.h if `common` and `parts`."""
    parts = ((LLMC_COMMON,) if common else ()) + tuple(parts) + (Part("llm.c", f"dev/cuda/{file}", names),)
    return [Case(f"llm.c/{name}/{flavour}", parts, kernel, build, opts, prelude, between, f"llm.c/{name}")
            for flavour, opts in (("fast-math", LLMC_FAST), ("default", LLMC_DEFAULT))]


def siboehm(n, file, names, kernel, grid, block, square=False):
    m, nn, k = (77, 93, 61) if square else (128, 256, 64)   # 1-2 check bounds; the rest need whole tiles
    return Case(f"SGEMM_CUDA/{n}", (Part("SGEMM_CUDA", f"src/kernels/{file}", names),), kernel,
                sgemm(grid, block, m, nn, k), NVCC_DEFAULT, UINT)


def tiles(bm, bn):
    return lambda m, n: (cdiv(n, bn), cdiv(m, bm))


def squares(m, n):
    return (cdiv(m, 32), cdiv(n, 32))


ROWS = lambda n, b: cdiv(n, b)     # noqa: E731 (one thread per row)
WARPS = lambda n, b: cdiv(n * 32, b)   # noqa: E731 (one warp per row)
BLOCKS = lambda n, b: n            # noqa: E731 (one block per row)

CASES = [
    Case("cuda-samples/BlackScholes", (Part("cuda-samples", CS + "BlackScholes/BlackScholes_kernel.cuh",
                                            ("cndGPU", "BlackScholesBodyGPU", "BlackScholesGPU")),),
         "BlackScholesGPU", black_scholes),
    Case("cuda-samples/nbody", (Part("cuda-samples", CS + "nbody/bodysystem.h", ("vec3", "vec4")),
                                Part("cuda-samples", CS + "nbody/bodysystemcuda.cu",
                                     ("softeningSquared", "softeningSquared_fp64", "SharedMemory", "rsqrt_T",
                                      "getSofteningSquared", "bodyBodyInteraction", "computeBodyAccel",
                                      "integrateBodies"))),
         "integrateBodies<float>", nbody, prelude=CG + "namespace cg = cooperative_groups;\n"),
    Case("cuda-samples/simpleGL", (Part("cuda-samples", CS + "simpleGL/simpleGL.cu", ("simple_vbo_kernel",)),),
         "simple_vbo_kernel", sine_wave),
    Case("cuda-samples/quasirandom-inverseCND",
         (Part("cuda-samples", CS + "quasirandomGenerator/quasirandomGenerator_kernel.cu",
               ("MUL", "MoroInvCNDgpu", "inverseCNDKernel")),), "inverseCNDKernel", inverse_cnd),
    *llmc("softmax1", "softmax_forward.cu", ("softmax_forward_kernel1",), "softmax_forward_kernel1",
          softmax(ROWS, 32), INF),
    *llmc("softmax2", "softmax_forward.cu", ("softmax_forward_kernel2",), "softmax_forward_kernel2",
          softmax(BLOCKS, 128, lambda b: 4 * b), INF),
    *llmc("softmax3", "softmax_forward.cu", ("warpReduceMax", "softmax_forward_kernel3"), "softmax_forward_kernel3",
          softmax(BLOCKS, 32, lambda b: 4 * b), INF, common=True),
    *llmc("softmax_online1", "softmax_forward.cu", ("softmax_forward_online_kernel1",),
          "softmax_forward_online_kernel1", softmax(ROWS, 32), INF),
    *llmc("softmax7", "softmax_forward.cu", ("warpReduceMax", "softmax_forward_kernel7"), "softmax_forward_kernel7",
          softmax(BLOCKS, 256, lambda b: 2 * b // 32 * 4), INF, common=True),
    *llmc("layernorm1", "layernorm_forward.cu", ("layernorm_forward_kernel1",), "layernorm_forward_kernel1",
          layernorm(ROWS, 32)),
    *llmc("layernorm3", "layernorm_forward.cu", ("layernorm_forward_kernel3",), "layernorm_forward_kernel3",
          layernorm(WARPS, 128), CG),
    *llmc("layernorm4", "layernorm_forward.cu", ("layernorm_forward_kernel4",), "layernorm_forward_kernel4",
          layernorm(WARPS, 128), CG),
    *llmc("layernorm5", "layernorm_forward.cu", ("layernorm_forward_kernel5",), "layernorm_forward_kernel5",
          layernorm(BLOCKS, 256), CG),
    *llmc("gelu1", "gelu_forward.cu", ("GELU_SCALING_FACTOR", "gelu_forward_kernel1"), "gelu_forward_kernel1",
          gelu(1), M_PI + BF16),
    *llmc("gelu2", "gelu_forward.cu", ("GELU_SCALING_FACTOR", "gelu_forward_kernel2"), "gelu_forward_kernel2",
          gelu(8), M_PI + BF16, between="typedef Packed128<floatX> x128;\n",
          parts=(Part("llm.c", "dev/cuda/common.h", ("Packed128", "load128cs", "store128")),)),
    *llmc("matmul1", "matmul_forward.cu", ("matmul_forward_kernel1",), "matmul_forward_kernel1",
          matmul(lambda bt, oc: (cdiv(bt, 16), cdiv(oc, 16)), True)),
    *llmc("matmul4", "matmul_forward.cu", ("ld_vec", "st_vec", "matmul_forward_kernel4"), "matmul_forward_kernel4",
          matmul(lambda bt, oc: (cdiv(bt, 128), cdiv(oc, 128)), False, bt=128, c=96, oc=256)),
    *llmc("crossentropy1", "crossentropy_forward.cu", ("crossentropy_forward_kernel1",),
          "crossentropy_forward_kernel1", crossentropy),
    *llmc("adamw2", "adamw.cu", ("lerp", "adamw_kernel2"), "adamw_kernel2", adamw),
    siboehm(1, "1_naive.cuh", ("sgemm_naive",), "sgemm_naive", squares, (32, 32), square=True),
    siboehm(2, "2_kernel_global_mem_coalesce.cuh", ("sgemm_global_mem_coalesce",), "sgemm_global_mem_coalesce<32>",
            squares, (1024,), square=True),
    siboehm(3, "3_kernel_shared_mem_blocking.cuh", ("sgemm_shared_mem_block",), "sgemm_shared_mem_block<32>",
            squares, (1024,)),
    siboehm(4, "4_kernel_1D_blocktiling.cuh", ("sgemm1DBlocktiling",), "sgemm1DBlocktiling<64, 64, 8, 8>",
            tiles(64, 64), (512,)),
    siboehm(5, "5_kernel_2D_blocktiling.cuh", ("sgemm2DBlocktiling",), "sgemm2DBlocktiling<128, 128, 8, 8, 8>",
            tiles(128, 128), (256,)),
    siboehm(6, "6_kernel_vectorize.cuh", ("sgemmVectorize",), "sgemmVectorize<128, 128, 8, 8, 8>",
            tiles(128, 128), (256,)),
    siboehm(7, "7_kernel_resolve_bank_conflicts.cuh", ("sgemmResolveBankConflicts",),
            "sgemmResolveBankConflicts<128, 128, 8, 8, 8>", tiles(128, 128), (256,)),
    siboehm(8, "8_kernel_bank_extra_col.cuh", ("sgemmResolveBankExtraCol",),
            "sgemmResolveBankExtraCol<128, 128, 8, 8, 8>", tiles(128, 128), (256,)),
    siboehm(9, "9_kernel_autotuned.cuh", ("CEIL_DIV", "K9_NUM_THREADS", "sgemmAutotuned"),
            "sgemmAutotuned<128, 128, 16, 8, 8>", tiles(128, 128), (256,)),
    siboehm(10, "10_kernel_warptiling.cuh", ("WARPSIZE", "wt", "sgemmWarptiling"),
            "sgemmWarptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>", tiles(128, 128), (128,)),
]


# ---- running ---------------------------------------------------------------------------------

def case_rng(seed, case):
    return np.random.default_rng([seed, zlib.crc32((case.inputs or case.name).encode())])


def inputs_digest(launch):
    """A hash of every argument's bytes before the launch, and of the constants."""
    h = hashlib.sha256()
    for a in list(launch.args) + [launch.constants[k] for k in sorted(launch.constants)]:
        h.update(np.asarray(a).tobytes())
    return h.hexdigest()[:16]


def run_case(case, sources, backend, seed):
    """The case's outputs (name -> NumPy array) and its inputs' digest, on "cpu" or "gpu"."""
    import cudacheck
    launch = case.build(case_rng(seed, case))
    digest = inputs_digest(launch)
    exprs = (case.kernel,) if "<" in case.kernel else ()
    mod = cudacheck.RawModule(case.code(sources), options=case.options, name_expressions=exprs, backend=backend)
    for name, value in launch.constants.items():
        value = np.ascontiguousarray(value)
        mod.get_global(name).copy_from_host(ctypes.c_void_p(value.ctypes.data), value.nbytes)   # CuPy's form
    if backend == "gpu":
        import cupy
        args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in launch.args]
    else:
        args = launch.args
    mod.get_function(case.kernel)(launch.grid, launch.block, tuple(args), shared_mem=launch.shared)
    if backend == "gpu":
        import cupy
        cupy.cuda.runtime.deviceSynchronize()
        args = [cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else a for a in args]
    return {out: np.asarray(args[i]) for i, out in launch.outputs.items()}, digest


def math_used(code):
    """The math functions the code calls (comments left out)."""
    return sorted(set(MATH.findall(_code(code))))


def run_all(cases, sources, backend, seed, out_path, device):
    """Every case on one backend, into an .npz: outputs as CASE::OUTPUT, and a JSON __meta__."""
    meta = {"backend": backend, "device": device, "seed": seed, "time": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                      time.gmtime()), "cases": {}}
    arrays = {}
    for case in cases:
        t0 = time.time()
        entry = {"options": list(case.options), "fast_math": case.fast_math}
        try:
            entry["math"] = math_used(case.code(sources))
            outputs, entry["inputs"] = run_case(case, sources, backend, seed)
            for name, value in outputs.items():
                arrays[f"{case.name}::{name}"] = value
                entry.setdefault("outputs", []).append(name)
            status = "ok"
        except Exception as e:   # noqa: BLE001 (recorded and shown; the other cases run)
            status = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
        entry["status"], entry["seconds"] = status, round(time.time() - t0, 2)
        meta["cases"][case.name] = entry
        print(f"{case.name:34s} {entry['seconds']:7.1f} s  {status}", flush=True)
    np.savez_compressed(out_path, __meta__=np.array(json.dumps(meta)), **arrays)
    return meta


# ---- comparing -------------------------------------------------------------------------------

def ordered(values):
    """Float bits as integers whose difference counts ulps of the values' own format (+0 and -0
    one value): float32, or bfloat16 given as its uint16 patterns."""
    v = np.asarray(values)
    bits, sign = ((v.astype(np.int64), 0x8000) if v.dtype == np.uint16 else
                  (v.astype(np.float32).view(np.uint32).astype(np.int64), 0x80000000))
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


def as_float(values):
    v = np.asarray(values)
    return (v.astype(np.uint32) << 16).view(np.float32) if v.dtype == np.uint16 else v.astype(np.float32)


def compare_arrays(a, b):
    """(elements, identical elements, max ulp difference, max abs difference) of two outputs of
    one kind; NaN against NaN counts as identical only with the same bits."""
    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError(f"outputs differ in shape or type: {a.shape} {a.dtype} against {b.shape} {b.dtype}")
    same = int((a.view(np.uint8).reshape(a.size, -1) == b.view(np.uint8).reshape(b.size, -1)).all(1).sum())
    fa, fb = as_float(a).astype(np.float64), as_float(b).astype(np.float64)
    both = np.isfinite(fa) & np.isfinite(fb)
    ulp = int(np.abs(ordered(a) - ordered(b))[both].max(initial=0))
    absdiff = float(np.abs(fa - fb)[both].max(initial=0.0))
    return a.size, same, ulp, absdiff


def compare(cpu_path, gpu_path, out=print):
    """The table of --compare; returns the share of bit-identical float elements."""
    cpu, gpu = np.load(cpu_path), np.load(gpu_path)
    mc, mg = json.loads(str(cpu["__meta__"])), json.loads(str(gpu["__meta__"]))
    if mc["seed"] != mg["seed"]:
        raise SystemExit(f"the runs used different seeds ({mc['seed']} and {mg['seed']}): run both with one --seed")
    out(f"# {Path(cpu_path).name} ({mc['backend']}, {mc['device']}) against {Path(gpu_path).name} "
        f"({mg['backend']}, {mg['device']}), seed {mc['seed']}")
    out(f"{'case':34s} {'output':8s} {'elements':>9s} {'identical':>10s} {'max ulp':>8s} {'max abs':>9s}  math")
    totals = {}
    for name, ec in mc["cases"].items():
        eg = mg["cases"].get(name)
        if eg is None or ec["status"] != "ok" or eg["status"] != "ok":
            why = "not in the GPU run" if eg is None else (ec["status"] if ec["status"] != "ok" else
                                                          "GPU: " + eg["status"])
            out(f"{name:34s} {'-':8s} {why}")
            continue
        if ec["inputs"] != eg["inputs"]:
            out(f"{name:34s} {'-':8s} inputs differ (digest {ec['inputs']} against {eg['inputs']}): not compared")
            continue
        for output in ec["outputs"]:
            key = f"{name}::{output}"
            n, same, ulp, absdiff = compare_arrays(cpu[key], gpu[key])
            for group in ("all", "fast-math" if ec["fast_math"] else "default"):
                t = totals.setdefault(group, [0, 0])
                t[0] += n
                t[1] += same
            out(f"{name:34s} {output:8s} {n:9d} {100 * same / n:9.2f}% {ulp:8d} {absdiff:9.2e}  "
                f"{' '.join(ec['math']) or '-'}")
    for group, (n, same) in totals.items():
        label = {"all": "every float output", "fast-math": "built with fast math",
                 "default": "built with nvcc's defaults"}[group]
        out(f"# {label}: {same}/{n} elements bit-identical ({100 * same / max(n, 1):.3f}%)")
    out("# one kernel's two builds (fast math, nvcc's defaults) on the same inputs: the share of their "
        "elements that agree, on each backend")
    for family, (fast, default) in _builds(mc).items():
        shares = [_agreement(run, meta, fast, default) for run, meta in ((cpu, mc), (gpu, mg))]
        out(f"{family:34s} {'':8s} " + "  ".join(f"{side}: {'-' if v is None else f'{100 * v:6.2f}%'}"
                                                 for side, v in zip(("CPU", "GPU"), shares)))
    n, same = totals.get("all", (0, 0))
    return same / n if n else 0.0


def _builds(meta):
    """inputs name -> (fast-math case, default case), for the kernels run both ways."""
    pairs = {}
    for name, entry in meta["cases"].items():
        if name.rsplit("/", 1)[-1] in ("fast-math", "default"):
            pairs.setdefault(name.rsplit("/", 1)[0], {})[entry["fast_math"]] = name
    return {k: (v[True], v[False]) for k, v in pairs.items() if len(v) == 2}


def _agreement(run, meta, a, b):
    """The share of bit-identical elements between two cases' outputs in one run, or None."""
    ea, eb = meta["cases"].get(a), meta["cases"].get(b)
    if not ea or not eb or ea["status"] != "ok" or eb["status"] != "ok":
        return None
    counts = [compare_arrays(run[f"{a}::{o}"], run[f"{b}::{o}"]) for o in ea["outputs"]]
    return sum(c[1] for c in counts) / sum(c[0] for c in counts)


# ---- sources ---------------------------------------------------------------------------------

def needed_files(cases):
    return sorted({(p.repo, p.path) for c in cases for p in c.parts})


def pack(cases, sources, dest):
    """Copy only the files the cases read into dest/REPO/PATH (what --sources takes)."""
    dest = Path(dest)
    for repo, path in needed_files(cases):
        target = dest / repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(sources[repo]) / path, target)
    (dest / "REPOS.json").write_text(json.dumps(REPOS, indent=1) + "\n")
    return dest


def resolve_sources(args, cases):
    """repo key -> checkout directory, from --sources or the per-project options; SystemExit
    naming a checkout that is missing or lacks a file the cases read."""
    given = {"cuda-samples": args.cuda_samples, "llm.c": args.llmc, "SGEMM_CUDA": args.sgemm}
    if args.sources:
        given = {k: v or Path(args.sources) / k for k, v in given.items()}
    needed = {repo for repo, _ in needed_files(cases)}
    for repo in sorted(needed):
        if given[repo] is None:
            flag = {"cuda-samples": "--cuda-samples", "llm.c": "--llmc", "SGEMM_CUDA": "--sgemm"}[repo]
            raise SystemExit(f"no checkout of {REPOS[repo][0]}: pass {flag} PATH or --sources PACKDIR "
                             f"(or --only to leave its cases out)")
        missing = [p for r, p in needed_files(cases) if r == repo and not (Path(given[repo]) / p).is_file()]
        if missing:
            raise SystemExit(f"{given[repo]} is not a checkout of {REPOS[repo][0]} at {REPOS[repo][1][:12]}: "
                             f"it lacks {', '.join(missing)}")
    return given


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cuda-samples", type=Path, help="a checkout of NVIDIA/cuda-samples")
    ap.add_argument("--llmc", type=Path, help="a checkout of karpathy/llm.c")
    ap.add_argument("--sgemm", type=Path, help="a checkout of siboehm/SGEMM_CUDA")
    ap.add_argument("--sources", type=Path, help="a directory --pack wrote, in place of the three checkouts")
    ap.add_argument("--only", help="run only the cases whose name matches this regular expression")
    ap.add_argument("--seed", type=int, default=20261206)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--cpu", type=Path, metavar="OUT.npz", help="run every case on the CPU runtime")
    mode.add_argument("--gpu", type=Path, metavar="OUT.npz", help="run every case through CuPy on the GPU")
    mode.add_argument("--compare", type=Path, nargs=2, metavar=("CPU.npz", "GPU.npz"))
    mode.add_argument("--pack", type=Path, metavar="DIR", help="copy the files the cases read into DIR")
    mode.add_argument("--list", action="store_true", help="print the cases and the code each compiles")
    args = ap.parse_args(argv)
    if args.compare:
        compare(*args.compare)
        return 0
    cases = [c for c in CASES if not args.only or re.search(args.only, c.name)]
    sources = resolve_sources(args, cases)
    if args.pack:
        print(f"packed {len(needed_files(cases))} files into {pack(cases, sources, args.pack)}")
        return 0
    if args.list:
        for case in cases:
            print(f"// ==== {case.name}: {case.kernel} {' '.join(case.options)}\n{case.code(sources)}")
        return 0
    print(f"seed {args.seed}", flush=True)
    if args.gpu:
        import cupy
        device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        device += f", CUDA {cupy.cuda.runtime.runtimeGetVersion()}, CuPy {cupy.__version__}"
        meta = run_all(cases, sources, "gpu", args.seed, args.gpu, device)
    else:
        import cudacheck
        meta = run_all(cases, sources, "cpu", args.seed, args.cpu,
                       f"CPU runtime, {cudacheck.compiler_version()}, {cudacheck.cpu_cores()} cores")
    failed = [n for n, e in meta["cases"].items() if e["status"] != "ok"]
    print(f"# {len(meta['cases']) - len(failed)} cases ran, {len(failed)} did not" +
          (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
