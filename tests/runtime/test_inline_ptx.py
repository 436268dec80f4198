"""Inline PTX on the CPU runtime (frontend/ptx.py, cpu/src/kc_ptx.h): each translated
instruction against a NumPy model of its PTX semantics on fresh random inputs, control flow,
elect.sync, mbarrier handshakes between warps (plain and checked), a wait that nothing
completes, misused barriers, and the instructions outside the subset refused by name."""
import time

import numpy as np
import pytest

import cudacheck


def run(src, name, grid, block, args, check=False, **launch):
    cudacheck.RawModule(src, backend="cpu", check=check).get_function(name)(grid, block, args, **launch)
    return args


def line_of(src, text):
    return next(i for i, s in enumerate(src.splitlines(), 1) if text in s)


# The instructions of two operands, each checked against binary_model: 32-bit ones on x and y
# (a shift on x by n, 0 to 39), 64-bit ones on X and Y (a shift by n + 30).
BINARY = ["add.u32", "sub.s32", "mul.lo.u32", "and.b32", "or.b32", "xor.b32", "shl.b32", "shr.u32", "shr.s32",
          "add.u64", "sub.s64", "mul.lo.u64", "and.b64", "or.b64", "xor.b64", "shl.b64", "shr.b64", "shr.s64"]


def binary_model(op, a, b):
    """a op b as PTX computes it: arithmetic wraps around; a shift by the width or more gives
    0, or the sign alone (shr.s)."""
    base, t = op.split(".")[0], op.split(".")[-1]
    width = int(t[1:])
    u, s = (np.uint32, np.int32) if width == 32 else (np.uint64, np.int64)
    if base in ("shl", "shr"):
        k = np.minimum(b, width - 1).astype(u)
        if base == "shr" and t[0] == "s":
            return (a.view(s) >> k.astype(s)).view(u)
        return np.where(b >= width, u(0), a << k if base == "shl" else a >> k).astype(u)
    with np.errstate(over="ignore"):
        return {"add": a + b, "sub": a - b, "mul": a * b, "and": a & b, "or": a | b, "xor": a ^ b}[base].astype(u)


def binary_statement(k, op):
    wide = op.endswith("64")
    c, a, b = ("l", "X", "Y") if wide else ("r", "x", "y")
    if op.startswith("sh"):
        c2, b = "r", "n + 30" if wide else "n"
    else:
        c2 = c
    return f'{{ {"unsigned long long" if wide else "unsigned"} d; asm("{op} %0, %1, %2;" : "={c}"(d) : "{c}"({a}), ' \
           f'"{c2}"({b})); D[{k}] = d; }}'


INTEGERS = r"""
extern "C" __global__ void ints(const unsigned* a, const unsigned* b, const unsigned* s,
                                const unsigned long long* A, const unsigned long long* B,
                                unsigned* o, unsigned long long* O) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    unsigned x = a[i], y = b[i], n = s[i];
    unsigned long long X = A[i], Y = B[i];
    unsigned* r = o + 10 * i;
    unsigned long long* D = O + STRIDE * i;
    STATEMENTS
    asm("{ .reg .b32 t; xor.b32 t, %1, 0x0F0F0F0F; not.b32 %0, t; }" : "=r"(r[0]) : "r"(x));
    asm("{ .reg .pred p; setp.lt.s32 p, %1, %2; selp.u32 %0, %1, %2, p; }" : "=r"(r[1]) : "r"(x), "r"(y));
    asm("{ .reg .pred p, q; setp.hs.u32 p|q, %1, %2; selp.u32 %0, 1, 0, q; }" : "=r"(r[2]) : "r"(x), "r"(y));
    asm("cvt.u32.u64 %0, %1;" : "=r"(r[3]) : "l"(X));
    unsigned acc = x;
    asm("add.s32 %0, %0, -5;" : "+r"(acc));
    r[4] = acc;
    asm("add.u32 %0, %1, 1;" : "=r"(r[5]) : "0"(y));
    asm("{\n\t.reg .pred p;\n\t"
        "setp.gt.u64 p, %[X], %[Y];\n\t"
        "setp.ne.and.b32 p, %[x], %[k], p;\n\t"
        "selp.b32 %[d], 7, 9, p;\n\t}" : [d] "=r"(r[6]) : [X] "l"(X), [Y] "l"(Y), [x] "r"(x & 3), [k] "n"(2));
    unsigned long long wide[3];
    asm("cvt.s64.s32 %0, %1;" : "=l"(wide[0]) : "r"(x));
    asm("{ .reg .pred p; setp.le.s64 p, %1, %2; selp.b64 %0, %1, %2, p; }" : "=l"(wide[1]) : "l"(X), "l"(Y));
    asm("{ .reg .b64 t<2>; xor.b64 t0, %1, %2; mov.b64 t1, t0; cvt.u64.u32 %0, %3; add.u64 %0, %0, t1; }"
        : "=l"(wide[2]) : "l"(X), "l"(Y), "r"(y));
    for (int k = 0; k < 3; ++k) {
        r[7 + k] = (unsigned)wide[k];
        D[FIRST + k] = wide[k];
    }
}""".replace("STATEMENTS", "\n    ".join(binary_statement(k, op) for k, op in enumerate(BINARY))).replace(
    "STRIDE", str(len(BINARY) + 3)).replace("FIRST", str(len(BINARY)))


def integers_model(x, y, n, X, Y):
    """The results of `ints` but the two-operand instructions': ten 32-bit ones, three 64-bit."""
    u32, u64 = np.uint32, np.uint64
    xs, ys, Xs, Ys = x.view(np.int32), y.view(np.int32), X.view(np.int64), Y.view(np.int64)
    with np.errstate(over="ignore"):
        wide = [xs.astype(np.int64).view(u64), np.where(Xs <= Ys, X, Y), (X ^ Y) + y.astype(u64)]
        r = [~(x ^ u32(0x0F0F0F0F)), np.where(xs < ys, x, y), (x < y).astype(u32), (X & u64(0xFFFFFFFF)).astype(u32),
             x - u32(5), y + u32(1), np.where((X > Y) & ((x & 3) != 2), 7, 9).astype(u32),
             *(w.astype(u32) for w in wide)]
    return np.stack(r, 1), np.stack(wide, 1)


@pytest.mark.parametrize("check", [False, True])
def test_integer_instructions_match_ptx_semantics(rng, check):
    n, k = 96, len(BINARY) + 3
    x, y = (rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(2))
    y[:8] = x[:8]   # equal operands: the comparisons' edge
    s = rng.integers(0, 40, n).astype(np.uint32)
    X, Y = (rng.integers(0, 2**64, n, dtype=np.uint64) for _ in range(2))
    o32, o64 = np.zeros(10 * n, np.uint32), np.zeros(k * n, np.uint64)
    run(INTEGERS, "ints", 2, n // 2, (x, y, s, X, Y, o32, o64), check=check)
    o32, o64 = o32.reshape(n, 10), o64.reshape(n, k)
    for j, op in enumerate(BINARY):
        a, b = (X, Y) if op.endswith("64") else (x, y)
        if op.startswith("sh"):
            b = s + 30 if op.endswith("64") else s
        np.testing.assert_array_equal(o64[:, j], binary_model(op, a, b).astype(np.uint64), err_msg=op)
    r, wide = integers_model(x, y, s, X, Y)
    np.testing.assert_array_equal(o32, r)
    np.testing.assert_array_equal(o64[:, len(BINARY):], wide)


def test_an_operand_keeps_the_builds_other_rewrites(rng):
    # a*b + c in an operand is fused into one multiply-add, as nvcc contracts it there too
    src = r'''extern "C" __global__ void k(const float* a, const float* b, const float* c, float* y) {
    int i = threadIdx.x;
    asm("mov.f32 %0, %1;" : "=f"(y[2 * i]) : "f"(a[i] * b[i] + c[i]));
    y[2 * i + 1] = a[i] * b[i] + c[i];
}'''
    a, b, c = (rng.standard_normal(256).astype(np.float32) for _ in range(3))
    y = run(src, "k", 1, 256, (a, b, c, np.zeros(512, np.float32)))[3]
    np.testing.assert_array_equal(y[0::2], y[1::2])
    assert not np.array_equal(y[0::2], a * b + c)   # NumPy rounds the product first


SPECIAL = r'''
extern "C" __global__ void regs(unsigned* o) {
    unsigned* r = o + 14 * (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
                            + blockDim.x * blockDim.y * blockDim.z * (blockIdx.x + gridDim.x * blockIdx.y));
    asm("mov.u32 %0, %%laneid;" : "=r"(r[0]));
    asm("mov.u32 %0, %%warpid;" : "=r"(r[1]));
    asm("mov.u32 %0, %%tid.x;\n\tmov.u32 %1, %%tid.y;\n\tmov.u32 %2, %%tid.z;" : "=r"(r[2]), "=r"(r[3]), "=r"(r[4]));
    asm("mov.u32 %0, %%ntid.x; mov.u32 %1, %%ntid.y; mov.u32 %2, %%ntid.z;" : "=r"(r[5]), "=r"(r[6]), "=r"(r[7]));
    asm("mov.u32 %0, %%ctaid.x; mov.u32 %1, %%ctaid.y;" : "=r"(r[8]), "=r"(r[9]));
    asm("mov.u32 %0, %%nctaid.x; mov.u32 %1, %%nctaid.y; mov.u32 %2, %%ctaid.z;"
        : "=r"(r[10]), "=r"(r[11]), "=r"(r[12]));
    unsigned short h;
    asm("mov.u16 %0, 0xBEEF;" : "=h"(h));
    r[13] = h;
}'''


def test_special_registers():
    grid, block = (3, 2), (20, 2, 2)
    n = 6 * 80
    o = run(SPECIAL, "regs", grid, block, (np.zeros(14 * n, np.uint32),))[0].reshape(n, 14)
    t = np.arange(n) % 80
    bx, by = np.arange(n) // 80 % 3, np.arange(n) // 240
    expect = [t % 32, t // 32, t % 20, t // 20 % 2, t // 40, [20] * n, [2] * n, [2] * n, bx, by, [3] * n, [2] * n,
              [0] * n, [0xBEEF] * n]
    for j, e in enumerate(expect):
        np.testing.assert_array_equal(o[:, j], e, err_msg=f"register {j}")


LOOPS = r'''
// sum of 1..n with a loop of labels and a predicated branch; the set bits of v with @!p
__device__ unsigned triangle(unsigned n) {
    unsigned out;
    asm("{\n"
        ".reg .pred done;\n"
        ".reg .b32 i, acc;\n"
        "mov.u32 i, 0;\n"
        "mov.u32 acc, 0;\n"
        "LOOP:\n"
        "setp.ge.u32 done, i, %1;\n"
        "@done bra END;\n"
        "add.u32 i, i, 1;\n"
        "add.u32 acc, acc, i;\n"
        "bra.uni LOOP;\n"
        "END:\n"
        "mov.u32 %0, acc;\n"
        "}" : "=r"(out) : "r"(n));
    return out;
}
extern "C" __global__ void loops(const unsigned* v, unsigned* out) {
    int i = threadIdx.x;
    unsigned bits;
    asm("{ .reg .pred z, more; .reg .b32 w, bit;\n"
        "  mov.b32 w, %1; mov.u32 %0, 0;\n"
        "  { AGAIN: and.b32 bit, w, 1; setp.eq.u32 z, bit, 0; @!z add.u32 %0, %0, 1;\n"
        "    shr.u32 w, w, 1; setp.ne.u32 more, w, 0; @more bra AGAIN; }\n"
        "  { AGAIN: bra END; }\n"     // the same label in another scope is another label
        "  END: }" : "=r"(bits) : "r"(v[i]));
    unsigned t = 0;
    for (int k = 0; k < 3; ++k)
        if (k != 1) t += triangle(v[i] % 1000 + k);
        else asm("add.u32 %0, %0, 1000000;" : "+r"(t));
    out[2 * i] = bits;
    out[2 * i + 1] = t;
}'''


@pytest.mark.parametrize("check", [False, True])
def test_labels_and_predicated_branches_in_a_loop(rng, check):
    v = rng.integers(0, 2**32, 64, dtype=np.uint32)
    out = run(LOOPS, "loops", 1, 64, (v, np.zeros(128, np.uint32)), check=check)[1].reshape(64, 2)
    np.testing.assert_array_equal(out[:, 0], [bin(int(x)).count("1") for x in v])
    m = (v % 1000).astype(np.int64)
    np.testing.assert_array_equal(out[:, 1], m * (m + 1) // 2 + (m + 2) * (m + 3) // 2 + 1000000)


ELECT = r'''
extern "C" __global__ void elect(unsigned* out) {
    int i = threadIdx.x;
    unsigned leader, elected, odd_leader = 99;
    asm volatile("{ .reg .pred p; elect.sync %0|p, %2; selp.u32 %1, 1, 0, p; }"
                 : "=r"(leader), "=r"(elected) : "r"(0xffffffffu));
    if (i % 2)
        asm volatile("elect.sync %0|_, %1;" : "=r"(odd_leader) : "r"(0xaaaaaaaau));
    out[3 * i] = leader;
    out[3 * i + 1] = elected;
    out[3 * i + 2] = odd_leader;
}'''


@pytest.mark.parametrize("check", [False, True])
def test_elect_sync_elects_one_lane_of_each_warp(check):
    n = 80   # two warps and a half one
    out = run(ELECT, "elect", 1, n, (np.zeros(3 * n, np.uint32),), check=check)[0].reshape(n, 3)
    for w in range(3):
        lanes = out[32 * w:32 * w + 32]
        assert lanes[:, 1].sum() == 1 and lanes[0, 1] == 1
        assert (lanes[:, 0] == 0).all()
        assert (lanes[1::2, 2] == 1).all() and (lanes[0::2, 2] == 99).all()


CVTA = r'''
extern "C" __global__ void window(const float* x, float* y, unsigned long long* offsets) {
    __shared__ float s[64];
    extern __shared__ float dyn[];
    int i = threadIdx.x;
    unsigned long long a, b;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(&s[i]));
    offsets[2 * i] = a;
    offsets[2 * i + 1] = __cvta_generic_to_shared(&dyn[i]);
    float* p;
    asm("cvta.shared.u64 %0, %1;" : "=l"(p) : "l"(a));
    *p = x[i];
    *(float*)__cvta_shared_to_generic(offsets[2 * i + 1]) = 2.0f * x[i];
    asm volatile("" ::: "memory");
    asm("{ .reg .u64 t; cvta.to.global.u64 t, %1; cvta.global.u64 %0, t; }" : "=l"(b) : "l"(y + i));
    __syncthreads();
    *(float*)b = s[63 - i] + dyn[i];
}'''


@pytest.mark.parametrize("check", [False, True])
def test_the_shared_window_maps_back(rng, check):
    x = rng.standard_normal(64).astype(np.float32)
    _, y, off = run(CVTA, "window", 1, 64, (x, np.zeros(64, np.float32), np.zeros(128, np.uint64)), check=check,
                    shared_mem=256)
    np.testing.assert_array_equal(y, x[::-1] + 2 * x)
    s, d = off[0::2].astype(np.int64), off[1::2].astype(np.int64)
    assert (np.diff(s) == 4).all() and (np.diff(d) == 4).all() and (s < 2**32).all() and (d < 2**32).all()


WAIT = r'''
__device__ void wait(unsigned bar, unsigned parity) {
    asm volatile("{\n"
                 ".reg .pred P1;\n"
                 "LAB_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
                 "@P1 bra DONE;\n"
                 "bra LAB_WAIT;\n"
                 "DONE:\n"
                 "}" :: "r"(bar), "r"(parity) : "memory");
}
__device__ void arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
__device__ void init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count));
}
'''

HANDSHAKE = WAIT + r'''
// warp 1 produces a row of 32 per round into `buf`, warp 0 consumes it: `full` and `empty`
// alternate their phases, one per round.
extern "C" __global__ void handshake(const float* in, float* out, int rounds) {
    __shared__ float buf[32];
    __shared__ unsigned long long full, empty;
    unsigned fa, ea = (unsigned)__cvta_generic_to_shared(&empty);
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(fa) : "l"(&full));
    int t = threadIdx.x, lane = t % 32;
    if (t == 0) {
        init(fa, 32);
        init(ea, 32);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (t >= 32)
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    for (int r = 0; r < rounds; ++r) {
        if (t >= 32) {
            if (r > 0) wait(ea, (r - 1) & 1);
            buf[lane] = in[r * 32 + lane];
            arrive(fa);
        } else {
            wait(fa, r & 1);
            float v[1][1] = {{buf[lane]}};
            asm volatile("" : "+f"(v[0][0])::"memory");   // a register fence, as around wgmma
            out[r * 32 + lane] = v[0][0] * 2.0f;
            arrive(ea);
        }
    }
}'''


@pytest.mark.parametrize("check", [False, True])
def test_an_mbarrier_handshake_between_two_warps_over_rounds(rng, check):
    rounds = 5   # the phases flip each round: parity 0, 1, 0, ...
    x = rng.standard_normal(32 * rounds).astype(np.float32)
    _, y, _ = run(HANDSHAKE, "handshake", 1, 64, (x, np.zeros_like(x), rounds), check=check)
    np.testing.assert_array_equal(y, 2 * x)


def test_checked_mode_finds_a_write_the_barrier_does_not_order(rng):
    late = HANDSHAKE.replace("buf[lane] = in[r * 32 + lane];\n            arrive(fa);",
                             "arrive(fa);\n            buf[lane] = in[r * 32 + lane];")
    x = rng.standard_normal(64).astype(np.float32)
    with pytest.raises(cudacheck.SharedMemoryRaceError, match="buf") as e:
        run(late, "handshake", 1, 64, (x, np.zeros_like(x), 2), check=True)
    assert e.value.line in (line_of(late, "buf[lane] = in["), line_of(late, "{{buf[lane]}}"))


TOKENS = WAIT + r'''
// Both warps write, arrive with a state token, wait on it (try_wait and test_wait), then read
// what the other warp wrote. Then thread 32 arrives expecting 128 bytes of transactions, which
// the lanes of warp 1 complete 4 at a time after writing, before they arrive too (complete_tx
// is relaxed: the arrival orders the writes); warp 0 waits for the phase.
extern "C" __global__ void tokens(const float* in, float* out, unsigned* flags) {
    __shared__ float buf[64], late[32];
    __shared__ unsigned long long bars[2];   // the second's shared address is the first's + 8
    unsigned ba = (unsigned)__cvta_generic_to_shared(bars), ta = ba + 8;
    int t = threadIdx.x, lane = t % 32;
    if (t < 2)
        init(ba + 8 * t, t ? 33 : 64);
    __syncthreads();
    buf[t] = in[t];
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(ba) : "memory");
    unsigned done = 0;
    if (t < 32) {
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(ba), "l"(state) : "memory");
    } else {
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.test_wait.acquire.cta.shared::cta.b64 p, [%1], %2;"
                         " selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(ba), "l"(state) : "memory");
    }
    out[t] = buf[63 - t];
    if (t == 32) {
        unsigned early;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(ta), "r"(128) : "memory");
        asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(early) : "r"(ta));
        flags[0] = early;   // the arrival alone does not complete the phase: its bytes are pending
    }
    __syncwarp();
    if (t >= 32) {
        late[lane] = in[t] + 1.0f;
        asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], 4;" :: "r"(ta) : "memory");
        arrive(ta);
    } else {
        wait(ta, 0);
        out[64 + lane] = late[31 - lane];
    }
}'''


@pytest.mark.parametrize("check", [False, True])
def test_state_tokens_and_transaction_bytes(rng, check):
    x = rng.standard_normal(64).astype(np.float32)
    _, y, flags = run(TOKENS, "tokens", 1, 64, (x, np.zeros(96, np.float32), np.ones(1, np.uint32)), check=check)
    np.testing.assert_array_equal(y[:64], x[::-1])
    np.testing.assert_array_equal(y[64:], x[32:][::-1] + np.float32(1))
    assert flags[0] == 0


NEVER = WAIT + r'''
extern "C" __global__ void never(float* out) {
    __shared__ unsigned long long bar;
    unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) init(a, 2);
    __syncthreads();
    if (threadIdx.x == 32) arrive(a);    // one arrival of the two
    if (threadIdx.x < 32) {
        wait(a, 0);
        out[threadIdx.x] = 1.0f;
    }
}'''


@pytest.mark.parametrize("check", [False, True])
def test_a_barrier_whose_count_is_never_reached_is_reported_with_its_line(check):
    start = time.monotonic()
    with pytest.raises(cudacheck.ForwardProgressError) as e:
        run(NEVER, "never", 1, 64, (np.zeros(64, np.float32),), check=check, time_limit=30.0)
    assert time.monotonic() - start < 15
    err = e.value
    assert err.line == line_of(NEVER, "mbarrier.try_wait.parity") and err.thread == (0, 0, 0)
    text = str(err)
    assert f"waits at line {err.line}" in text and "1 more of its 2 arrivals" in text
    # checked mode's line table also names the call of the helper `wait` the try_wait sits in
    call = f", called from line {line_of(NEVER, 'wait(a, 0);')}" if check else ""
    assert f"threads with threadIdx.x < 32 wait at an mbarrier on line {err.line}{call}; the others reached the end " \
           "of the kernel" in text
    assert err.calls == (((line_of(NEVER, "wait(a, 0);"), "never"), (err.line, "wait")) if check else ())


@pytest.mark.parametrize("body,problem", [
    ('asm volatile("mbarrier.init.shared::cta.b64 [%0], 0;" :: "r"(a));', "with a count of 0"),
    ('asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], 3;" :: "r"(a));', "arriving as 3 threads"),
    ('asm volatile("mbarrier.init.b64 [%0], 1;" :: "l"(out));', "not an 8-byte aligned address in shared"),
])
def test_a_misused_mbarrier_is_an_invalid_operand(body, problem):
    src = WAIT + r'''
extern "C" __global__ void misuse(float* out) {
    __shared__ unsigned long long bar;
    unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
    init(a, 2);
    %s
}''' % body
    with pytest.raises(cudacheck.InvalidOperandError, match=problem) as e:
        run(src, "misuse", 1, 1, (np.zeros(1, np.float32),))
    assert e.value.line == line_of(src, body)


@pytest.mark.parametrize("asm,instruction", [
    ('asm volatile("{ .reg .pred q; setp.ne.u32 q, %1, 0; bar.red.popc.u32 %0, 1, 64, q; }" : "=r"(n) : "r"(n)'
     ' : "memory");', "bar.red.popc.u32"),
    ('asm("add.sat.s32 %0, %0, 1;" : "+r"(n));', "add.sat.s32"),
    ('asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(d[0]), "=f"(d[1]) : "r"(n) : "memory");',
     "ld.shared.v2.f32"),
])
def test_an_instruction_outside_the_subset_is_refused_by_name_and_line(asm, instruction):
    src = r'''
extern "C" __global__ void uses_it(float* x) {
    float d[4] = {0, 0, 0, 0};
    unsigned n = 0;
    %s
    x[threadIdx.x] = d[0] + n;
}
extern "C" __global__ void plain(float* x) { x[threadIdx.x] = 2.0f; }''' % asm
    mod = cudacheck.RawModule(src, backend="cpu")
    with pytest.raises(cudacheck.UnsupportedFeatureError) as e:
        mod.get_function("uses_it")
    line = next(i for i, s in enumerate(src.splitlines(), 1) if instruction.split(".")[0] + "." in s)
    assert f"the inline PTX instruction `{instruction}` (line {line})" in str(e.value)
    assert "backend='gpu'" in str(e.value) and "did not compile" not in str(e.value)
    x = np.zeros(4, np.float32)
    mod.get_function("plain")(1, 4, (x,))
    assert x.tolist() == [2, 2, 2, 2]


@pytest.mark.parametrize("asm,construct", [
    ('asm("mov.u32 %0, r7;" : "=r"(n));', "with the unknown register `r7`"),
    ('asm("add.u32 %0, %1;" : "=r"(n) : "r"(n));', "`add.u32` with 2 operands"),
    ('asm("bra.uni NOWHERE;");', "the unknown label `NOWHERE`"),
    ('asm("mov.u32 %0, %1;" : "=q"(n) : "r"(n));', 'the operand constraint "=q"'),
])
def test_ptx_the_translation_cannot_read_is_refused_not_left_to_gxx(asm, construct):
    src = 'extern "C" __global__ void k(unsigned* x) {\n    unsigned n = 0;\n    %s\n    x[0] = n;\n}' % asm
    with pytest.raises(cudacheck.UnsupportedFeatureError, match="line 3") as e:
        cudacheck.RawModule(src, backend="cpu").get_function("k")
    assert construct in str(e.value) and "did not compile" not in str(e.value)


def test_templates_and_operands_written_with_macros():
    src = r'''
#define ADD "add.u32 "
#define ADD_0 ADD "%0, %0, "
#define F2(i) "+f"(d[i]), "+f"(d[i + 1])
#define R2(i) R1(i), R1(i + 4)
#define R1(i) "+r"(x[i])
extern "C" __global__ void runs(unsigned* x) {
    asm(ADD_0 "1;" : "+r"(x[threadIdx.x]));
    if (threadIdx.x == 0)
        asm("add.u32 %0, %0, 10; add.u32 %1, %1, 20;" : R2(1));
}
extern "C" __global__ void refused(float* d) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1}, %2, %3, 1, 1, 1, 0, 1;"
                 : F2(0) : "l"(0ull), "l"(0ull));
}'''
    mod = cudacheck.RawModule(src, backend="cpu")
    x = np.arange(8, dtype=np.uint32)
    mod.get_function("runs")(1, 4, (x,))
    # a template of a macro of string macros, operands a macro writes, macros within macros
    assert x.tolist() == [1, 12, 3, 4, 4, 25, 6, 7]
    # two accumulators where m64n8k16 has four: the refusal names the instruction and its line
    with pytest.raises(cudacheck.UnsupportedFeatureError,
                       match=r"instruction `wgmma\.mma_async\.sync.*` with an accumulator operand .*\(line 13\)"):
        mod.get_function("refused")


def test_a_template_device_function_with_unsupported_ptx_refuses_its_callers():
    src = r'''
template <int N> __device__ unsigned count(unsigned v) {
    unsigned n;
    asm volatile("{ .reg .pred q; setp.ne.u32 q, %1, 0; bar.red.popc.u32 %0, 1, 64, q; }"
                 : "=r"(n) : "r"(v) : "memory");
    return n;
}
extern "C" __global__ void k(float* x) { x[0] = count<1>(1u); }'''
    with pytest.raises(cudacheck.UnsupportedFeatureError, match=r"bar\.red\.popc\.u32.*through count\(\)"):
        cudacheck.RawModule(src, backend="cpu").get_function("k")


def test_sm_90a_defines_its_feature_macro():
    # as NVRTC does for -arch=sm_90a, whose kernels guard wgmma and setmaxnreg with it
    src = r'''
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "needs -arch=sm_90a"
#endif
extern "C" __global__ void k(unsigned* x) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    x[threadIdx.x] = threadIdx.x;
}'''
    x = np.zeros(32, np.uint32)
    cudacheck.RawModule(src, backend="cpu", options=("-arch=sm_90a",)).get_function("k")(1, 32, (x,))
    assert x.tolist() == list(range(32))


def test_a_call_that_template_arguments_resolve_refuses_cleanly():
    """`n128(d)` with d of a type that depends on N names its callee only in an instance: the
    refusal of n128's asm must reach the template's callers (a g++ error about an always_inline
    body left out would stop every kernel of the module), and a kernel that never reaches it runs."""
    src = r'''
#define OP(x) "add.u32 "
__device__ __forceinline__ void n64(unsigned (&d)[64]) { asm("add.u32 %0, %0, 1;" : "+r"(d[0])); }
__device__ __forceinline__ void n128(unsigned (&d)[128]) { asm(OP(1) "%0, %0, 1;" : "+r"(d[0])); }
template <int N> __device__ __forceinline__ void pick(unsigned (&d)[N]) {
    if constexpr (N == 64) n64(d); else n128(d);
}
extern "C" __global__ void uses_128(unsigned* x) { unsigned d[128] = {}; pick<128>(d); x[0] = d[0]; }
extern "C" __global__ void plain(unsigned* x) { x[0] = 7; }'''
    mod = cudacheck.RawModule(src, backend="cpu")
    with pytest.raises(cudacheck.UnsupportedFeatureError,
                       match=r"not string literals alone \(`OP`\), through n128\(\), through pick\(\) \(line 8\)"):
        mod.get_function("uses_128")
    x = np.zeros(1, np.uint32)
    mod.get_function("plain")(1, 1, (x,))
    assert x[0] == 7
