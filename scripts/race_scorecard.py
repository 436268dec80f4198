"""Checked mode and compute-sanitizer against published, labeled GPU race suites.

Runs every case of GPUVerify's CUDA test suite and of DRACC's CUDA micro-benchmarks through
checked mode (CPU runtime), or, with --gpu on a machine with a GPU, through compute-sanitizer's
racecheck, memcheck, synccheck and initcheck, and prints per suite and label the true and false
positives and negatives of each tool side by side (Markdown), with a per-case JSON and CSV log.
Not part of `make test`: it needs the suites, which are not in this repository (licence, size).

Getting the suites (the commits this script was written against):

    git clone https://github.com/mc-imperial/gpuverify /tmp/suites/gpuverify
    git -C /tmp/suites/gpuverify checkout 49219770aad01231edd0d8e0fa3ed036006cf32a
    git clone https://github.com/RWTH-HPC/DRACC /tmp/suites/dracc
    git -C /tmp/suites/dracc checkout ef76b1d7c48f79ad5f2d36f796de8c8c826382b3

Neither suite has a race that comes from a scope (an atomicAdd_block or a __threadfence_block()
used between blocks), so this repository's own labeled cases of those, scripts/scoped_races/
(its README says how they are written), run with --scoped.

Running it (--gpuverify takes the clone or its testsuite/CUDA, --dracc the clone or CUDA/src):

    python scripts/race_scorecard.py --gpuverify /tmp/suites/gpuverify --dracc /tmp/suites/dracc \\
        --json cpu.json --csv cpu.csv                        # checked mode, here
    python scripts/race_scorecard.py --gpuverify ... --dracc ... --gpu --json gpu.json   # on a GPU
    python scripts/race_scorecard.py --gpuverify ... --dracc ... --merge-gpu gpu.json    # side by side
    python scripts/race_scorecard.py --scoped scripts/scoped_races     # our scoped cases (with the others too)

Ground truth. GPUVerify: a case's first line is `//pass` (verified free of races and barrier
divergence for its launch) or `//xfail:KIND`, whose kind (NOT_ALL_VERIFIED, BUGLE_ERROR, ...)
does not say what is wrong; the expected messages below it and the source do, so each xfail
case is labeled by hand in GPUVERIFY_LABELS, with the reason. Passing cases are no-bug except
those whose verdict rests on something a real launch does not give (GPUVERIFY_LABELS too).
DRACC: the file name ends in yes (a defect), no (none) or other (a defect that does not fail);
its README's coverage tables and each file's first comment say which defect, so DRACC_LABELS
sorts the defects into races between GPU threads on global memory and other bugs (DRACC_RELABELED
corrects one label the source contradicts, saying why). Cases about
neither a bug nor its absence (failing assertions, specification errors, tool errors) are in
the label `other`, counted separately.

Launching a GPUVerify kernel. Its grid and block come from the header's --gridDim/--blockDim
(-D options too); a block of more than 1024 threads, which GPUVerify verifies symbolically but
no GPU launches, has its largest dimension halved until it fits (recorded in the log). Every
kernel of the file is launched, each with fresh arguments built from its signature:
  - a pointer: an array of max(2**20, 4 x the launch's threads) elements (at most 2**24), of
    small random values (integers 0..3, floats in [0, 1)), so that values used as indices stay
    in range; a struct element gets small values in its numeric fields; void*: bytes. The
    suite's kernels index far past their threads (A[i + gid*WIDTH], i < 100*blockDim.x), and a
    smaller array turns a correct kernel into an out-of-bounds one;
  - a scalar: the value the header names (`//x = 185`, GPUVerify's counterexample), else the
    kernel's simple preconditions (`__requires(n == 143)`, `<`, `>=`, `!=`, `== blockDim.x`),
    else 16 for an integer (small, so loops end), 0.5 for a float, true for a bool;
  - a function pointer, a pointer to pointers or a struct holding pointers: no argument can be
    built, and the case is `no-harness`.
The random values come from the case's name, so the GPU harness gets the same bytes. GPUVerify's
specification annotations (__requires, __invariant, __assert, ...) are defined away by a prelude,
and the cooperative-groups and cuRAND headers that GPUVerify's own cuda.h brings are included;
line numbers in the log are then offset by the prelude's lines (`line_offset`). DRACC's cases are
whole programs with a main, run unchanged by cudacheck.run_program.

Time limits: --time-limit per kernel launch (cudacheck.config.time_limit, 10 s), --program-time-limit
per whole program (90 s: DRACC's matrix-vector programs fill a 25600 x 25600 matrix in host code),
--gpu-timeout per sanitizer run (300 s).

Outcome of a case under checked mode (of several kernels, the one first in PRIORITY speaks): race,
divergence, oob, uninit, forward-progress, other-finding (another checked-mode finding, or a
program warning such as a leak), crash (KernelRuntimeError: a signal, a stack overflow), timeout,
refused (CompileError, UnsupportedFeatureError, ArgumentError, or a bare KernelError naming what
the runtime declines: the first line is logged), no-harness (nothing the script can launch), clean; runtime-bug for
anything else (a Python exception that is not a cudacheck.KernelError, a case process that died
or hung): every case must run or be refused by name, so these are listed first. Under a
sanitizer tool: its own finding (race, oob, divergence, uninit), timeout, failed (the harness
exited non-zero with no sanitizer error), clean, or not-compiled (nvcc refused the case, which is
then left out of every tool's score, checked mode's too, and counted in its own column).

Scoring, per tool: a race-* case is a TP if the tool reported a race, else an FN (with how many
of those it reported something else for); barrier-divergence likewise with a divergence; an
other-bug case is detected by any report; a no-bug case is an FP if the tool reported anything
(a crash or timeout included), else a TN. Cases refused, without a harness, not compiled or hit
by a runtime bug are excluded and counted (`excl`).
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

TOOLS = ("racecheck", "memcheck", "synccheck", "initcheck")
# What a sanitizer tool's error means, in checked mode's outcome names.
TOOL_FINDING = {"racecheck": "race", "memcheck": "oob", "synccheck": "divergence", "initcheck": "uninit"}
LABELS = ("race-global", "race-shared", "barrier-divergence", "other-bug", "no-bug", "other")
FINDINGS = ("race", "divergence", "oob", "uninit", "forward-progress", "other-finding")
# Stores of one value that nothing orders: a race by the memory model, reported as a warning
# (SameValueWriteWarning), not an error: on a no-bug case it is no false alarm, on a race case no hit.
SAME_VALUE = "same-value"
EXCLUDED = ("runtime-bug", "not-compiled", "refused", "no-harness")
# Which kernel's outcome speaks for a case of several kernels: a runtime bug above all (it must
# be seen), then findings, then failures, then what leaves the case unchecked, and clean last.
PRIORITY = ("runtime-bug",) + FINDINGS + ("crash", "timeout", "failed", "refused", "no-harness", SAME_VALUE, "clean")

GPUVERIFY_COMMIT = "49219770aad01231edd0d8e0fa3ed036006cf32a"
DRACC_COMMIT = "ef76b1d7c48f79ad5f2d36f796de8c8c826382b3"

WARP_SYNC = ("other", "passes only with lockstep warps (--warp-sync): lanes exchange data with no __syncwarp, "
                      "a race under independent thread scheduling (Volta and later)")
FRESH = ("race-global", "header: possible write-write race on q.p[..][0]: every thread writes element 0 of one "
                        "global array")
# Labels of GPUVerify's xfail cases, and of the passing cases that are not plain no-bug (keyed by
# the case's folder under testsuite/CUDA).
GPUVERIFY_LABELS = {
    "atomics/add_tid": ("race-global", "thread 0 adds 0, so two threads get one old value from atomicAdd and both "
                                       "write A[j]"),
    "atomics/add_zero": ("race-global", "atomicAdd(i, 0) gives every thread one value; all write A[j]"),
    "cooperative_groups/fail/race": ("race-global", "A[idx] = A[idx + 1]: each thread reads what its neighbour "
                                                    "writes, unsynchronized"),
    "curand_tests/fail/curand_mtgp32_block_race": ("race-global", "header: write race at 9:21: thread 0 of each "
                                                                  "block advances one shared MTGP32 state"),
    "curand_tests/fail/curand_mtgp32_race": ("race-global", "header: write race at 8:21: every thread advances one "
                                                            "shared MTGP32 state"),
    "curand_tests/fail/curand_race": ("race-global", "header: write race at 8:21: every thread advances one shared "
                                                     "curandState"),
    "curand_tests/fail/init_race": ("race-global", "header: write race at 8:4: every thread runs curand_init on one "
                                                   "shared curandState"),
    "fresh_arrays/fail/array": FRESH,
    "fresh_arrays/fail/inherit": FRESH,
    "fresh_arrays/fail/struct_char": FRESH,
    "fresh_arrays/fail/struct_float": FRESH,
    "fresh_arrays/fail/struct_nested": FRESH,
    "memcpy/fail_arrayofstruct": ("race-global", "comment: racy: both threads store pairs[42]"),
    "memcpy/fail_overstep": ("race-global", "comment: racy: a 12-byte memcpy overlaps the next thread's element"),
    "memcpy/lentoobig": ("race-global", "comment: racy: 5-byte copies into 4-byte elements overlap"),
    "memcpy/notexactdiv": ("race-global", "comment: racy: unaligned 6-byte copies overlap"),
    "memcpy/unhandled_varlen": ("race-global", "comment: racy for len > sizeof(s_t) (16 is passed); GPUVerify "
                                               "itself stops with BUGLE_ERROR"),
    "misc/fail/miscfail3": ("race-global", "header: possible read-write race: A[tid] += A[tid + offset]"),
    "misc/fail/miscfail4": ("race-global", "header: possible read-write race: A[tid] += A[tid + offset]"),
    "param_values/value_causing_race": ("race-global", "header: write race of threads 15 and 200 at x = 185 "
                                                       "(185 is passed)"),
    "pointeranalysistests/testbasicaliasing": ("race-global", "xfail: every thread of every block writes p[100]"),
    "warpsync/bad_inter_group": ("race-global", "header: read-write race on A between neighbouring blocks"),
    "warpsync/broken_shuffle": ("race-global", "reads A[warp*32 + (tid+1)%32], which another lane writes: racy "
                                               "with the suite's 16-lane warps and with independent scheduling"),
    "fail_tests/race_on_shared": ("race-shared", "all 16 threads write shared A[0]"),
    "fail_tests/shared_int": ("race-shared", "all threads write one __shared__ int"),
    "loop_unwind": ("race-shared", "header: write-write race on shared B: every thread writes B[0..9]"),
    "pointertests/cast": ("race-shared", "header: write-write race: every thread writes the same words of "
                                         "shared x"),
    "cooperative_groups/fail/block_divergence_grid_group": ("barrier-divergence", "grid synchronize reached by "
                                                                                  "even blocks only"),
    "cooperative_groups/fail/divergence_grid_group": ("barrier-divergence", "grid synchronize inside "
                                                                            "if (idx % 2 == 0)"),
    "cooperative_groups/fail/divergence_thread_block": ("barrier-divergence", "block synchronize inside "
                                                                              "if (idx % 2 == 0)"),
    "function_pointers/basic_argument_fail": ("other-bug", "header: possible null pointer access (calls a "
                                                           "function-pointer argument)"),
    "function_pointers/basic_assignment_fail": ("other-bug", "header: null pointer access: f = NULL unless i is "
                                                             "1 or 2"),
    "function_pointers/constant_value": ("other-bug", "header: null pointer access: calls (funcType)5"),
    "function_pointers/funcptr_to_ptr_add": ("other-bug", "header: null pointer access: calls a function pointer "
                                                          "moved by 5 ints"),
    "function_pointers/pass_struct/call": ("other-bug", "xfail: calls an unconstrained function-pointer argument"),
    "memcpy/null_dst": ("other-bug", "comment: null pointer access (memcpy to 0)"),
    "memcpy/null_src": ("other-bug", "comment: null pointer access (memcpy from 0)"),
    "memset/null_dst": ("other-bug", "memset(0, 0, 16): null pointer access"),
    "misc/fail/miscfail5": ("other-bug", "header: attempt to modify __constant__ memory"),
    "misc/pass/misc3": ("other-bug", "header: attempt to modify __constant__ memory (an xfail under pass/)"),
    "misc/fail/miscfail6": ("other-bug", "header: 0-sized: writes a zero-length __device__ array"),
    "atomics/test_abstraction_enforced": ("other", "xfail on an __assert (assertion only)"),
    "function_pointers/soundness_issue": ("other", "xfail on __assert(false) (assertion only)"),
    "function_pointers/unknown_function": ("other", "BUGLE_ERROR: GPUVerify cannot translate the function "
                                                    "pointer; no bug claimed"),
    "globalarray/fail": ("other", "a race only if the host changes __constant__ A; with its initializer no "
                                  "thread writes"),
    "memset/unhandled_varlen": ("other", "BUGLE_ERROR; calls bar(), which is never defined"),
    "memset/unhandled_varval": ("other", "BUGLE_ERROR; comment: not racy; calls bar(), which is never defined"),
    "misc/fail/miscfail1": ("other", "CLANG_ERROR: does not compile by design (undeclared foo)"),
    "misc/fail/miscfail2": ("other", "loop invariant might not be maintained (a specification error)"),
    "misc/fail/miscfail7": ("other", "GPUVerify loses the pointer through a size_t round trip; the kernel "
                                     "writes H[tid] only"),
    "misc/fail/miscfail8": ("other", "__assert(false) (assertion only)"),
    "param_values/value_in_assert": ("other", "__assert(a + b != c) (assertion only)"),
    "return_val/char": ("other", "BUGLE_ERROR on an __ensures; no kernel"),
    "return_val/longlong": ("other", "BUGLE_ERROR on an __ensures; no kernel"),
    "warpsync/equality_abstraction_issue": ("other", "xfail on the __assert of line 10, under lockstep warps"),
    "atomics/device_global": ("other", "passes with --only-divergence: races were not checked"),
    "annotation_tests/test_axiom": ("other", "race-free only under __axiom(blockIdx.x == 16), which a launch of "
                                             "64 blocks breaks: the other blocks all write A[0]"),
    "warpsync/2d": WARP_SYNC,
    "warpsync/intragroup_scan": WARP_SYNC,
    "warpsync/scan_warp": WARP_SYNC,
    "warpsync/shuffle": WARP_SYNC,
}

# DRACC: the defect of each racy or buggy case, by number (README coverage tables, first comment).
DRACC_RACES = {1: "atomicity violation: d_countervar[0]++ by every thread (inter and intra block)",
               2: "atomicity violation: counter++ by one thread of each block (inter block)",
               3: "atomicity violation: counter++ by every thread of one block (intra block)",
               4: "order violation: countervar[tid] = countervar[tid-1] + 1 (inter and intra block)",
               5: "order violation: backward dependence across blocks (inter block)",
               6: "order violation: backward dependence across threads (intra block)",
               22: "the threshold test reads the counter others atomicAdd (inter and intra block)",
               23: "the threshold test reads a counter others atomicAdd_block; blocks race on it too"}
DRACC_OTHER = {7: "unbounded recursion overflows the stack ('Other' on the accelerator)",
               8: "missing data allocation: copies into a cudaMalloc that never happened",
               9: "missing data allocation: cudaMalloc too small for the copy",
               10: "missing data: the matrix is never copied to the device (uninitialized reads)",
               11: "missing data: half the matrix is copied (uninitialized reads)",
               12: "outdated data: the result is never copied back",
               13: "outdated data: half the result is copied back",
               14: "missing data deallocation: no cudaFree (ending 'other': runs fine, a tool should report)",
               15: "out-of-bounds mapping: copies 2*C ints into a C-int allocation",
               16: "out-of-bounds mapping: copies 2*C ints out of a C-int allocation",
               17: "missing data: source and destination of the copy in are swapped",
               18: "outdated data: source and destination of the copy out are swapped",
               19: "failed data allocation: more device memory than exists",
               20: "launch with a grid dimension past the limit",
               21: "launch with a block dimension past the limit",
               24: "host-device order violation: the host reads an async copy's result with no wait",
               25: "host-device order violation: a copy on another stream does not wait for the kernel",
               26: "host-device atomicity violation: the host updates data an async kernel reads"}

# Where the suite's own label is wrong, the label this script uses, and why.
DRACC_RELABELED = {29: ("other-bug", "relabeled: the file name says no defect, but Mult adds into d_c, which nothing "
                                     "ever wrote (no cudaMemcpy or cudaMemset of d_c): an uninitialized read")}

# GPUVerify's specification language, defined away: it tells the verifier what to prove or
# assume and is no part of what a kernel computes. __axiom stands at namespace scope.
SPEC_PRELUDE = """\
#define __requires(e) ((void)0)
#define __ensures(e) ((void)0)
#define __invariant(e) ((void)0)
#define __global_invariant(e) ((void)0)
#define __assert(e) ((void)0)
#define __assume(e) ((void)0)
#define __requires_fresh_array(p) ((void)0)
#define __axiom(e) static_assert(true, "")"""
SPEC_WORDS = re.compile(r"\b__(requires|ensures|invariant|global_invariant|assert|assume|axiom|requires_fresh_array)"
                        r"\s*\(")
REQUIRES = re.compile(r"__requires\s*\(\s*(\w+)\s*(==|!=|<=|>=|<|>)\s*(-?\d+|blockDim\.[xyz]|gridDim\.[xyz])\b")
DEFAULT_INT, DEFAULT_FLOAT = 16, 0.5
MIN_ELEMENTS, MAX_ELEMENTS = 1 << 20, 1 << 24


@dataclass
class Case:
    id: str                       # "gpuverify/atomics/add_tid", "dracc/DRACC_CUDA_001_Counter_no_lock_yes"
    suite: str
    path: str
    label: str
    reason: str
    program: bool = False         # a whole program (DRACC) rather than kernels to launch
    grid: tuple = (1, 1, 1)
    block: tuple = (1, 1, 1)
    options: tuple = ()
    values: dict = field(default_factory=dict)    # scalar arguments the header names
    notes: str = ""               # the verifier's flags, a clamped block


class NoHarness(Exception):
    """A kernel whose arguments this script cannot build (the message says which parameter)."""


# ---------------------------------------------------------------- the suites and their labels

def dims(text):
    """--blockDim=64 or --blockDim=[4,4] as a 3-tuple."""
    values = [int(v) for v in text.strip("[]").split(",")]
    return tuple(values + [1] * (3 - len(values)))


def fit_block(block):
    """Halve the largest dimension until the block has at most 1024 threads, as a GPU needs."""
    block = list(block)
    while block[0] * block[1] * block[2] > 1024:
        axis = block.index(max(block))
        block[axis] = max(1, block[axis] // 2)
    return tuple(block)


def gpuverify_label(key, verdict):
    if key in GPUVERIFY_LABELS:
        return GPUVERIFY_LABELS[key]
    if verdict == "pass":
        return "no-bug", "//pass: verified free of races and barrier divergence for its launch"
    return "other", f"//{verdict}: not classified by this script"


def read_launch(case, header):
    """The header's launch (--blockDim, --gridDim, -D options) into case; the verifier's own
    flags, and a block fitted to a GPU's limit, into case.notes."""
    notes = []
    for flag in header.lstrip("/").split():
        name, _, value = flag.partition("=")
        if name == "--blockDim":
            case.block = dims(value)
        elif name == "--gridDim":
            case.grid = dims(value)
        elif name.startswith("-D"):
            case.options += (flag,)
        else:
            notes.append(flag)
    block = fit_block(case.block)
    if block != case.block:
        notes.append(f"block {case.block} fitted to {block}")
        case.block = block
    case.notes = " ".join(notes)


def gpuverify_case(root, path):
    lines = path.read_text(errors="replace").splitlines()
    key = str(path.parent.relative_to(root))
    label, reason = gpuverify_label(key, lines[0].lstrip("/").strip().lower())
    case = Case(f"gpuverify/{key}", "GPUVerify", str(path), label, reason)
    read_launch(case, lines[1])
    # The expected output's "//x = 185" lines: the arguments of GPUVerify's counterexample.
    values = (re.fullmatch(r"//\s*(\w+) = (-?\d+)", ln.strip()) for ln in lines[2:8])
    case.values = {m[1]: int(m[2]) for m in values if m}
    return case


def gpuverify_cases(root):
    root = root / "testsuite" / "CUDA" if (root / "testsuite" / "CUDA").is_dir() else root
    return [gpuverify_case(root, p) for p in sorted(root.rglob("kernel.cu"))]


def scoped_case(path):
    """One of this repository's scoped cases: GPUVerify's layout, its label on the first line."""
    lines = path.read_text().splitlines()
    label, _, reason = lines[0].lstrip("/").partition(":")
    if label not in LABELS:
        raise SystemExit(f"{path}: the first line must be //LABEL: why, LABEL one of {', '.join(LABELS)}")
    case = Case(f"scoped/{path.stem}", "Scoped (ours)", str(path), label, reason.strip())
    read_launch(case, lines[1])
    return case


def dracc_case(path):
    number, ending = int(path.stem.split("_")[2]), path.stem.rsplit("_", 1)[1]
    first = path.read_text(errors="replace").split("*/")[0].strip("/* \n").splitlines()[0]
    if number in DRACC_RELABELED:
        label, reason = DRACC_RELABELED[number]
    elif ending == "no":
        label, reason = "no-bug", "file name ends in _no: no defect"
    elif number in DRACC_RACES:
        label, reason = "race-global", DRACC_RACES[number]
    else:
        label, reason = "other-bug", DRACC_OTHER.get(number, "a defect not sorted by this script")
    return Case(f"dracc/{path.stem}", "DRACC", str(path), label, f"{reason} (file: {first})", program=True)


def dracc_cases(root):
    root = root / "CUDA" / "src" if (root / "CUDA" / "src").is_dir() else root
    return [dracc_case(p) for p in sorted(root.glob("DRACC_CUDA_*.cu"))]


def prepared_source(case):
    """The case's source as it is compiled: GPUVerify's kernels get the declarations that
    GPUVerify's own cuda.h gave them; DRACC's programs run unchanged."""
    source = Path(case.path).read_text(errors="replace")
    if case.program:
        return source, 0
    head = [SPEC_PRELUDE] if SPEC_WORDS.search(source) else []
    if "cooperative_groups" in source:
        head.append("#include <cooperative_groups.h>")
    if re.search(r"\bcurand", source):
        head.append("#include <curand_kernel.h>")
    prelude = "\n".join(head)
    return (prelude + "\n" + source, prelude.count("\n") + 1) if head else (source, 0)


# ---------------------------------------------------------------- arguments from a signature

def elements(case):
    """How many elements each array argument gets (see the docstring's policy)."""
    threads = 1
    for n in case.grid + case.block:
        threads *= n
    return min(max(MIN_ELEMENTS, 4 * threads), MAX_ELEMENTS)


def small_values(rng, dtype, count):
    """Small random values: integers 0..3 stay valid indices, floats lie in [0, 1)."""
    if dtype.kind == "f":
        return rng.random(count).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, count).astype(bool)
    return rng.integers(0, 4, count).astype(dtype)


def struct_array(rng, dtype, count):
    out = np.zeros(count, dtype)
    for name in dtype.names:
        sub = dtype.fields[name][0]
        if sub.kind in "biuf" and not sub.shape:
            out[name] = small_values(rng, sub, count)
    return out


def pointer_argument(param, n, rng):
    dtype = param.dtype
    if dtype is None:
        if param.base != "void":
            raise NoHarness(f"parameter `{param.text}` points to {param.base}, which holds pointers or has no layout")
        return small_values(rng, np.dtype(np.uint8), 16 * n)
    if dtype.names:
        return struct_array(rng, dtype, n)
    return small_values(rng, dtype, n * param.lanes)


def required_value(name, body, value, launch):
    """The value of scalar `name` that the kernel's simple __requires preconditions allow."""
    equal = None
    for var, op, rhs in REQUIRES.findall(body):
        if var != name:
            continue
        bound = launch[rhs] if rhs in launch else int(rhs)
        if op == "==":
            equal = bound
        elif op == "!=" and value == bound:
            value = bound + 1
        elif op in ("<", "<="):
            value = min(value, bound - (op == "<"))
        elif op in (">", ">="):
            value = max(value, bound + (op == ">"))
    return value if equal is None else equal


def scalar_argument(param, case, body, rng):
    dtype = param.dtype
    if dtype is None:
        raise NoHarness(f"parameter `{param.text}` is a struct holding pointers, passed by value")
    if dtype.names:
        return struct_array(rng, dtype, 1)[0]
    if dtype.kind == "f":
        return dtype.type(DEFAULT_FLOAT)
    if dtype.kind == "b":
        return np.bool_(True)
    launch = {f"{what}.{axis}": dim[i] for what, dim in (("blockDim", case.block), ("gridDim", case.grid))
              for i, axis in enumerate("xyz")}
    value = case.values.get(param.name, required_value(param.name, body, DEFAULT_INT, launch))
    info = np.iinfo(dtype)
    return dtype.type(min(max(value, info.min), info.max))


def kernel_arguments(case, kernel, source):
    """One argument per parameter, the same on every run and machine (seeded by the names)."""
    rng = np.random.default_rng(zlib.crc32(f"{case.id}:{kernel.name}".encode()))
    body = "\n".join(source.splitlines()[kernel.line - 1:kernel.end_line])
    n = elements(case)
    return [pointer_argument(p, n, rng) if p.pointer else scalar_argument(p, case, body, rng) for p in kernel.params]


# ---------------------------------------------------------------- checked mode, one case per process

def outcome_of(error):
    """A cudacheck exception as an outcome name."""
    import cudacheck as cc
    kinds = [(getattr(cc, "RaceError", cc.SharedMemoryRaceError), "race"), (cc.BarrierDivergenceError, "divergence"),
             (cc.OutOfBoundsError, "oob"), (cc.UninitializedReadError, "uninit"),
             (getattr(cc, "ForwardProgressError", None), "forward-progress"), (cc.KernelTimeoutError, "timeout"),
             (cc.CompileError, "refused"), (cc.ArgumentError, "refused"), (cc.CheckError, "other-finding"),
             (cc.HostDeviceAccessError, "other-finding"), (cc.LaunchConfigError, "other-finding"),
             (cc.KernelAssertionError, "other-finding"), (cc.KernelRuntimeError, "crash"),
             # The bare base class: the runtime declining something it names, as a refusal does.
             (cc.KernelError, "refused")]
    return next((name for cls, name in kinds if cls is not None and isinstance(error, cls)), "runtime-bug")


def verdict(outcome, error=None, **extra):
    """A case's or kernel's result: its outcome and the first line of what was raised."""
    if error is None:
        return {"outcome": outcome, "error": "", **extra}
    lines = [ln.strip() for ln in str(error).strip().splitlines() if ln.strip()] or [""]
    line = lines[0]
    if line.endswith(":") and len(lines) > 1:   # a heading: its first diagnostic says what went wrong
        line += " " + next((ln for ln in lines[1:] if "error" in ln), lines[1])
    return {"outcome": outcome, "error": f"{type(error).__name__}: {line[:300]}", **extra}


def guarded(run):
    """run()'s verdict; an exception becomes one, so that only a dead process escapes."""
    import cudacheck
    try:
        return run()
    except NoHarness as e:
        return verdict("no-harness", e)
    except cudacheck.KernelError as e:
        return verdict(outcome_of(e), e)
    except Exception as e:   # whatever else the runtime lets out is the finding here
        return verdict("runtime-bug", e)


def worst(verdicts):
    """The verdict that speaks for a case of several kernels."""
    return min(verdicts, key=lambda v: PRIORITY.index(v["outcome"]))


def checked_kernel(case, module, name, source):
    import cudacheck

    def run():
        function = module.get_function(name)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            function(case.grid, case.block, kernel_arguments(case, function.signature, source))
        same = [w.message for w in warned if isinstance(w.message, cudacheck.SameValueWriteWarning)]
        return verdict(SAME_VALUE, same[0]) if same else verdict("clean")
    return {"kernel": name, **guarded(run)}


def checked_kernels(case):
    import cudacheck
    source, offset = prepared_source(case)
    module = cudacheck.RawModule(source, options=case.options, backend="cpu", check=True)
    kernels = [checked_kernel(case, module, name, source) for name in module.kernels]
    if not kernels:
        return verdict("no-harness", NoHarness("no __global__ function to launch"), line_offset=offset)
    return {**worst(kernels), "kernels": kernels, "line_offset": offset}


def checked_program(case, time_limit):
    import cudacheck
    result = cudacheck.run_program(Path(case.path).read_text(errors="replace"), backend="cpu", check=True,
                                   time_limit=time_limit)
    others = [w for w in result.warnings if not isinstance(w, cudacheck.SameValueWriteWarning)]
    if others or result.warnings:
        return verdict("other-finding" if others else SAME_VALUE, (others or result.warnings)[0],
                       warnings=[type(w).__name__ for w in result.warnings])
    return verdict("clean", stdout=result.stdout[-300:])


def checked_child(case, args):
    import cudacheck
    cudacheck.config.time_limit = args.time_limit
    # The pool already keeps a case on each core; one worker per launch keeps them from fighting.
    cudacheck.config.workers = 1
    return guarded(lambda: checked_program(case, args.program_time_limit) if case.program else checked_kernels(case))


# ---------------------------------------------------------------- compute-sanitizer, one case per process

HARNESS_HEAD = r"""
#include <cstdio>
#include <cstdlib>
// The bytes of one argument, written by race_scorecard.py beside this file.
static void *kc_file(const char *path, size_t bytes) {
    void *host = malloc(bytes ? bytes : 1);
    FILE *f = fopen(path, "rb");
    if (!f || fread(host, 1, bytes, f) != bytes) { printf("cannot read %s\n", path); exit(2); }
    fclose(f);
    return host;
}
#define KC_CHECK(call) do { cudaError_t e = (call); \
    if (e != cudaSuccess) { printf("%s: %s\n", #call, cudaGetErrorName(e)); return 3; } } while (0)
int main() {
"""


def harness_launch(case, number, symbol, arguments, folder, cooperative):
    """C++ that copies kernel `number`'s arguments to the device and launches it. cudaLaunchKernel
    takes the arguments as bytes, so the harness never has to spell a parameter's type."""
    lines, slots = ["  {"], []
    for i, value in enumerate(arguments):
        data = value.tobytes()
        name = f"k{number}_{i}.bin"
        (folder / name).write_bytes(data)
        if value.shape:   # an array (a scalar, a struct's bytes included, has shape ())
            lines.append(f'    void *d{i}; KC_CHECK(cudaMalloc(&d{i}, {len(data)})); KC_CHECK(cudaMemcpy(d{i}, '
                         f'kc_file("{name}", {len(data)}), {len(data)}, cudaMemcpyHostToDevice));')
            slots.append(f"&d{i}")
        else:
            slots.append(f'kc_file("{name}", {len(data)})')
    launch = "cudaLaunchCooperativeKernel" if cooperative else "cudaLaunchKernel"
    lines += [f"    void *args[] = {{{', '.join(slots) or 'nullptr'}}};",
              f"    KC_CHECK({launch}((const void *){symbol}, dim3{case.grid}, dim3{case.block}, args, 0, 0));",
              "    KC_CHECK(cudaGetLastError());", "    KC_CHECK(cudaDeviceSynchronize());", "  }"]
    return lines


def harness(case, folder):
    """The case's kernels and a main that launches each (or the program itself), and whether
    some kernel could not be given arguments."""
    import cudacheck
    source, _ = prepared_source(case)
    if case.program:
        return source, False
    body, unbuilt = [], False
    cooperative = "this_grid" in source   # a grid-wide barrier needs a cooperative launch
    for number, kernel in enumerate(cudacheck.analyze(source, case.options).kernels.values()):
        try:
            arguments = kernel_arguments(case, kernel, source)
        except NoHarness:
            unbuilt = True
            continue
        body += harness_launch(case, number, kernel.name, arguments, folder, cooperative)
    if not body:
        raise NoHarness("no kernel whose arguments the script can build")
    return source + HARNESS_HEAD + "\n".join(body) + "\n  return 0;\n}\n", unbuilt


def run_group(command, timeout, cwd=None):
    """(exit code, stdout, stderr) of a command run in a process group of its own, or None if
    it ran past timeout: then the whole group is killed (a sanitized program, a case's workers)."""
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return None
    return child.returncode, out, err


def sanitize(tool, folder, timeout):
    ran = run_group(["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", "--print-limit", "5", "./case"],
                    timeout, cwd=folder)
    if ran is None:
        return {"outcome": "timeout", "count": None, "error": f"past {timeout:g} s"}
    code, out = ran[0], ran[1] + ran[2]
    counts = [int(n) for n in re.findall(r"(?:ERROR SUMMARY|RACECHECK SUMMARY): (\d+) (?:error|hazard)", out)]
    if max(counts, default=0) or code == 99:
        first = re.search(r"^========= +(?!COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY)(\S.*)", out, re.M)
        return {"outcome": TOOL_FINDING[tool], "count": max(counts, default=0),
                "error": first.group(1)[:200] if first else ""}
    if code == 0:
        return {"outcome": "clean", "count": 0, "error": ""}
    said = [ln for ln in out.splitlines() if ln.strip() and not ln.startswith("=========")]
    return {"outcome": "failed", "count": 0, "error": f"exit {code}: {said[-1][:200] if said else ''}"}


def nvcc(folder, source, case, arch, *output):
    """Compile source in folder; the first error line, or None when it compiled."""
    (folder / "case.cu").write_text(source)
    proc = subprocess.run(["nvcc", f"-arch={arch}", "-lineinfo", *case.options, "case.cu", *output], cwd=folder,
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return None
    log = proc.stderr + proc.stdout
    return next((ln for ln in log.splitlines() if re.search(r"error|fatal", ln)), "nvcc failed")[:300]


def build(case, folder, arch):
    """Build the case's executable `case` in folder: {"outcome": "compiled", "unbuilt": ...}, or
    not-compiled (nvcc refuses the case's own source), or no-harness (the source compiles, but the
    script could not read its signatures or build its arguments, or its harness did not compile)."""
    import cudacheck
    try:
        source, unbuilt = harness(case, folder)
        error = nvcc(folder, source, case, arch, "-o", "case")
    except (NoHarness, cudacheck.CompileError) as e:   # the CPU front end reads the signatures
        source, error = None, e
    if source is not None and error is None:
        return {"outcome": "compiled", "unbuilt": unbuilt}
    alone = nvcc(folder, prepared_source(case)[0], case, arch, "-c", "-o", "case.o")
    if alone is not None:
        return {"outcome": "not-compiled", "error": alone}
    return verdict("no-harness", error if source is None else NoHarness(f"the harness did not compile: {error}"))


def gpu_child(case, timeout, arch):
    with tempfile.TemporaryDirectory(prefix="scorecard-") as tmp:
        folder = Path(tmp)
        built = build(case, folder, arch)
        if built["outcome"] != "compiled":
            return built
        tools = {tool: sanitize(tool, folder, timeout) for tool in TOOLS}
    # A kernel left out leaves the case unchecked, unless the others gave a finding.
    left_out = verdict("no-harness", NoHarness("a kernel whose arguments the script cannot build"))
    return {"outcome": "compiled", "tools": {t: left_out if built["unbuilt"] and v["outcome"] == "clean" else v
                                             for t, v in tools.items()}}


# ---------------------------------------------------------------- running cases in their own processes

def run_case(case, mode, args):
    """Run one case in a child process of its own group; a child that dies or hangs is a
    runtime bug (checked mode) rather than the end of the whole run."""
    command = [sys.executable, __file__, "--child", mode, "--time-limit", str(args.time_limit),
               "--program-time-limit", str(args.program_time_limit), "--gpu-timeout", str(args.gpu_timeout),
               "--arch", args.arch, json.dumps(asdict(case))]
    limit = 120 + 4 * max(args.time_limit, args.program_time_limit) if mode == "checked" else \
        120 + len(TOOLS) * args.gpu_timeout
    ran = run_group(command, limit)
    if ran is None:
        return {"outcome": "runtime-bug", "error": f"the case's process ran past {limit:g} s and was killed"}
    code, out, err = ran
    found = re.findall(r"^RESULT (.*)$", out, re.M)
    if found:
        return json.loads(found[-1])
    tail = (err.strip().splitlines() or [""])[-1]
    return {"outcome": "runtime-bug", "error": f"the case's process died (exit {code}): {tail[:300]}"}


def run_all(cases, mode, args):
    # Threads only wait here: every case runs in a process of its own.
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_case, case, mode, args): case for case in cases}
        results = {}
        for done, future in enumerate(cf.as_completed(futures), 1):
            case = futures[future]
            results[case.id] = future.result()
            print(f"[{done}/{len(cases)}] {case.id}: {results[case.id]['outcome']}", file=sys.stderr, flush=True)
    return results


# ---------------------------------------------------------------- scoring and the tables

def tool_outcomes(case, record):
    """Each tool's outcome for a case: checked mode's and, from a GPU run, the sanitizers'
    (every tool's outcome is not-compiled where nvcc refused the case)."""
    out = {"checked": record["checked"]["outcome"]} if "checked" in record else {}
    gpu = record.get("gpu")
    if gpu is not None and gpu["outcome"] != "compiled":
        return {tool: gpu["outcome"] for tool in [*out, *TOOLS]}
    if gpu is not None:
        out.update({tool: v["outcome"] for tool, v in gpu["tools"].items()})
    return out


def cell(label, outcomes):
    """One tool's score on the cases of one label."""
    scored = [o for o in outcomes if o not in EXCLUDED]
    excl = f" · {len(outcomes) - len(scored)} excl" if len(scored) < len(outcomes) else ""
    warned = sum(o == SAME_VALUE for o in scored)
    excl = (f" · {warned} same-value warning{'s' if warned > 1 else ''}" if warned else "") + excl
    reported = [o for o in scored if o not in ("clean", SAME_VALUE)]
    if label in ("no-bug", "other"):
        name = ("FP", "TN") if label == "no-bug" else ("reported", "clean")
        return f"{name[0]} {len(reported)} {name[1]} {len(scored) - len(reported)}{excl}"
    wanted = {"race-global": "race", "race-shared": "race", "barrier-divergence": "divergence"}.get(label)
    hits = [o for o in scored if o == wanted] if wanted else reported
    other = f" (+{len(reported) - len(hits)} other)" if len(reported) > len(hits) else ""
    return f"TP {len(hits)} FN {len(scored) - len(hits)}{other}{excl}"


def score_table(cases, records, tools):
    names = {"checked": "checked mode"}
    gpu = "racecheck" in tools
    head = ["suite", "label", "cases"] + (["nvcc fails"] if gpu else []) + [names.get(t, t) for t in tools]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for suite in sorted({c.suite for c in cases}, reverse=True):
        for label in LABELS:
            group = [c for c in cases if c.suite == suite and c.label == label]
            if not group:
                continue
            per_tool = [tool_outcomes(c, records[c.id]) for c in group]
            row = [suite, label, str(len(group))]
            if gpu:
                row.append(str(sum(o.get("racecheck") == "not-compiled" for o in per_tool)))
            row += [cell(label, [o[t] for o in per_tool if t in o]) for t in tools]
            lines.append("| " + " | ".join(row) + " |")
    return lines


def outcome_table(cases, records):
    """Checked mode's outcomes per suite and label: what the score cells add up."""
    seen = [o for o in PRIORITY if any(records[c.id].get("checked", {}).get("outcome") == o for c in cases)]
    lines = ["| suite | label | " + " | ".join(seen) + " |", "|---|---|" + "---|" * len(seen)]
    for suite in sorted({c.suite for c in cases}, reverse=True):
        for label in LABELS:
            got = [records[c.id]["checked"]["outcome"] for c in cases if c.suite == suite and c.label == label]
            if got:
                lines.append(f"| {suite} | {label} | " + " | ".join(str(got.count(o) or "") for o in seen) + " |")
    return lines


def nvcc_compiled(record):
    """Whether a GPU run found that nvcc compiles the case's source (None: no GPU run)."""
    return None if "gpu" not in record else record["gpu"]["outcome"] != "not-compiled"


def checked_sections(cases, records):
    """Checked mode's runtime bugs, its outcomes, and what it refuses that nvcc compiles."""
    bugs = [c for c in cases if records[c.id]["checked"]["outcome"] == "runtime-bug"]
    lines = [f"## Runtime bugs in checked mode: {len(bugs)} (every case must run or be refused by name)", ""]
    for c in bugs:
        also = " (nvcc refuses it too: " + records[c.id]["gpu"]["error"] + ")" if nvcc_compiled(records[c.id]) is \
            False else ""
        lines.append(f"- {c.id}: {records[c.id]['checked']['error']}{also}")
    lines += ["", "## Checked mode's outcomes", "", *outcome_table(cases, records), ""]
    refused = [c for c in cases if records[c.id]["checked"]["outcome"] == "refused" and nvcc_compiled(records[c.id])]
    if refused:
        lines += ["## Refused by checked mode, compiled by nvcc", ""]
        lines += [f"- {c.id}: {records[c.id]['checked']['error']}" for c in refused] + [""]
    return lines


def report(cases, records, meta):
    tools = [t for t in ("checked",) + TOOLS if any(t in tool_outcomes(c, records[c.id]) for c in cases)]
    lines = [f"# Race scorecard ({meta})", "", *score_table(cases, records, tools), ""]
    if "checked" in tools:
        lines += checked_sections(cases, records)
    return "\n".join(lines)


def write_csv(path, cases, records):
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "suite", "label", "reason", "grid", "block", "notes", "checked", "checked_error", *TOOLS])
        for c in cases:
            r = records[c.id]
            tools = tool_outcomes(c, r)
            out.writerow([c.id, c.suite, c.label, c.reason, c.grid, c.block, c.notes,
                          r.get("checked", {}).get("outcome", ""), r.get("checked", {}).get("error", ""),
                          *(tools.get(t, "") for t in TOOLS)])


def gpu_meta():
    def first_line(command):
        try:
            out = subprocess.run(command, capture_output=True, text=True).stdout.strip().splitlines()
        except OSError:
            return "?"
        return out[-1] if out else "?"
    return {"device": first_line(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]),
            "nvcc": first_line(["nvcc", "--version"]), "compute-sanitizer": first_line(["compute-sanitizer",
                                                                                         "--version"])}


# ---------------------------------------------------------------- command line

def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuverify", type=Path, help="GPUVerify's clone (or its testsuite/CUDA)")
    ap.add_argument("--dracc", type=Path, help="DRACC's clone (or its CUDA/src)")
    ap.add_argument("--scoped", type=Path, help="this repository's scoped cases (scripts/scoped_races)")
    ap.add_argument("--gpu", action="store_true", help="run the compute-sanitizer tools instead of checked mode")
    ap.add_argument("--merge-gpu", type=Path, help="the --json of a --gpu run, shown beside checked mode")
    ap.add_argument("--json", type=Path, help="per-case log (JSON)")
    ap.add_argument("--csv", type=Path, help="per-case log (CSV)")
    ap.add_argument("--only", help="run only the cases whose id matches this regular expression")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="cases at once (default: the cores)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="cudacheck.config.time_limit per launch (s)")
    ap.add_argument("--program-time-limit", type=float, default=90.0,
                    help="seconds per whole program (DRACC's matrix-vector cases fill a 25600 x 25600 matrix in "
                         "host code: about 30 s each in checked mode)")
    ap.add_argument("--gpu-timeout", type=float, default=300.0, help="seconds per sanitizer run")
    ap.add_argument("--arch", default="native", help="nvcc -arch for the GPU harnesses (e.g. sm_90)")
    ap.add_argument("--child", choices=("checked", "gpu"), help=argparse.SUPPRESS)
    ap.add_argument("case", nargs="?", help=argparse.SUPPRESS)
    return ap.parse_args()


def child_main(args):
    data = json.loads(args.case)
    case = Case(**{**data, "grid": tuple(data["grid"]), "block": tuple(data["block"]),
                   "options": tuple(data["options"])})
    result = checked_child(case, args) if args.child == "checked" else \
        gpu_child(case, args.gpu_timeout, args.arch)
    print("RESULT " + json.dumps(result, default=str), flush=True)


def main():
    args = parse()
    if args.child:
        return child_main(args)
    cases = ((gpuverify_cases(args.gpuverify) if args.gpuverify else []) + (dracc_cases(args.dracc) if args.dracc
                                                                           else [])
             + ([scoped_case(p) for p in sorted(args.scoped.glob("*.cu"))] if args.scoped else []))
    cases = [c for c in cases if not args.only or re.search(args.only, c.id)]
    if not cases:
        sys.exit("no cases: give --gpuverify, --dracc and/or --scoped (see --help for where to get them)")
    if args.gpu and not shutil.which("compute-sanitizer"):
        sys.exit("--gpu needs compute-sanitizer and nvcc on PATH (the CUDA Toolkit's bin folder)")
    mode = "gpu" if args.gpu else "checked"
    results = run_all(cases, mode, args)
    records = {c.id: {"case": asdict(c), mode: results[c.id]} for c in cases}
    meta = gpu_meta() if args.gpu else {}
    if args.merge_gpu:
        merged = json.loads(args.merge_gpu.read_text())
        gpu = {r["case"]["id"]: r["gpu"] for r in merged["cases"]}
        for c in cases:
            if c.id in gpu:
                records[c.id]["gpu"] = gpu[c.id]
        meta = merged["meta"]
    meta = {**meta, "gpuverify": f"{GPUVERIFY_COMMIT[:12]} ({args.gpuverify})",
            "dracc": f"{DRACC_COMMIT[:12]} ({args.dracc})", "time limits (s)": f"{args.time_limit:g} per launch, "
            f"{args.program_time_limit:g} per program"}
    if args.scoped:
        meta["scoped"] = str(args.scoped)
    print(report(cases, records, ", ".join(f"{k}: {v}" for k, v in meta.items())))
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "cases": list(records.values())}, indent=1, default=str))
    if args.csv:
        write_csv(args.csv, cases, records)


if __name__ == "__main__":
    main()
