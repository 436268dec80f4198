"""Chapter 9's Hopper kernels in the course: tiling_course.hopper (the one launch rule),
measure.hopperdata (the stored runs, the table and the figure) and the checker's task,
tasks.HopperMatmul.

Without a GPU: every kernel of hopper.cu, the clustered ones too, passes the checker in checked
mode at BF16 and FP16 on fresh random inputs; each
way of breaking the pipeline (no wait for a full slot, the wrong bytes announced, a flipped
parity, a warp skipping the wgmma, a producer not waiting for a free slot, a result buffer
rewritten before its TMA store was waited for, or stored with no proxy fence) gives checked
mode's named error at its line, in a message that fits a phone; a wrong store names the
thread that made it; the stored runs are measure.bench_hopper's, in the one measurement model, and
every number the table, the figure and the accessors show is the file's. On an H100 or
H200: the task passes on the GPU too, the clustered kernels included."""
import json
import math
import re
from dataclasses import asdict

import pytest
from matplotlib.figure import Figure

import cudacheck
from tiling_course import exercises, hopper, matmul, sources, style, tasks, tryout
from tiling_course.measure import hopperdata, model
from tiling_course.perfplots import NoData

HOPPER = sources.read(hopper.FILE)
MESSAGE_CHARS = 1400                 # as tests/course/test_exercises.py: a message fits a phone
# The helpers' lines a finding names: the instruction, inside the helper the kernel calls (and
# error.calls, the calls that reach it, the kernel's first).
WGMMA_N128 = "wgmma.mma_async.sync.aligned.m64n128k16"      # matmul_tma_wgmma's (K1_BN = 128)
WGMMA_N256 = "wgmma.mma_async.sync.aligned.m64n256k16"      # the warp-specialized kernels' (WS_BN = 256)
COPY = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0]"
WAIT = "mbarrier.try_wait.parity.shared::cta.b64"
K1_FULL_WAIT = "        mbar_wait(full0 + 8 * s, (t / K1_STAGES) & 1);\n"
CONSUMER_WAIT = "mbar_wait<(CLUSTER_SIZE > 1)>(full0 + 8 * s, (it / STAGES) & 1);"
# The consumers' wait as a whole line, which exercise hp-1's starter leaves out: left out the same
# way here, the test and the exercise build one library (a cold hopper.cu build is 10-20 s here).
CONSUMER_WAIT_LINE = f"        {CONSUMER_WAIT}   // step 3a's wait\n"
PRODUCER_WAIT = "mbar_wait(empty0 + 8 * s, ((it / WS_STAGES) & 1) ^ 1);"
EXPECT = "mbar_arrive_expect_tx(bar, ROWS * ROW_BYTES + chunks * CHUNK_BYTES);"
WGMMA_CALL = "            wgmma<BN_>(d[mt], da, db);"
SKIP_WARP_3 = "            if (threadIdx.x % 128 / 32 != 3)   // warp 3 of each warpgroup skips it\n" + WGMMA_CALL


def line_of(code, text):
    """The line number of the one line of `code` holding `text`."""
    (line,) = [i for i, s in enumerate(code.splitlines(), 1) if text in s]
    return line


def tried(kernel, edits, rng, prec="bf16", shapes=None):
    """(the edited hopper.cu, tryout's Outcome on it, checked on the CPU runtime only, on the
    task's shapes unless `shapes` are given)."""
    code = matmul.apply_edits(HOPPER, edits, f"a wrong {kernel}", hopper.FILE)
    return code, tryout.run(code, tasks.HopperMatmul(kernel, prec), shapes=shapes, gpu=False, quiet=True, rng=rng)


@pytest.mark.parametrize("kernel,prec", hopper.PAIRS)
def test_the_book_kernels_pass_in_checked_mode(kernel, prec, rng):
    out = tryout.run(None, tasks.HopperMatmul(kernel, prec), gpu=False, quiet=True, rng=rng)
    assert out, out.message
    sizes = ", ".join(f"{m}x{k}·{k}x{n}" for m, k, n in tasks.hopper.SHAPES)
    assert out.message.startswith(f"✓ `{kernel}` ({prec.upper()} inputs) matches NumPy in float64 on its "
                                  f"{prec.upper()}-rounded inputs on {sizes}, run on the CPU runtime in checked mode")


def test_the_default_shapes_reuse_every_slot_and_walk_tiles():
    """k = 300 is five slices through four slots; matmul_persistent's CPU grid of CPU_SMS blocks
    has fewer blocks than the 2 x 2 tiles, so a block walks two."""
    m, k, n = tasks.hopper.SHAPES[2]
    fn = hopper.compile("matmul_persistent", backend="cpu")
    cfg = hopper.config(fn.module, "matmul_persistent")
    assert -(-k // 64) > cfg["stages"]
    tiles = -(-m // cfg["block_m"]) * -(-n // cfg["block_n"])
    assert hopper.grid("matmul_persistent", cfg, m, n, hopper.CPU_SMS) == (hopper.CPU_SMS,) and tiles > hopper.CPU_SMS
    assert all(k % 64 for _, k, _ in tasks.hopper.SHAPES[:3])


def test_whole_waves_is_the_fewest_workers_that_take_as_few_rounds(rng):
    for units, at_once in zip(rng.integers(1, 5000, 300), rng.integers(1, 300, 300)):
        workers, rounds = hopper.whole_waves(units, at_once), -(-units // at_once)
        assert 1 <= workers <= min(units, at_once) and -(-units // workers) == rounds
        assert workers == 1 or -(-units // (workers - 1)) > rounds
    assert hopper.whole_waves(0, 132) == 0


def test_the_grids_at_4096_cubed_on_132_sms_are_whole_waves():
    """512 tiles (or 256 pairs) on 132 SMs (66 clusters of two) take 4 rounds either way: 128
    blocks, each walking 4 tiles (64 clusters, 4 pairs); the awkward 1000 x 1500 x 700 product
    keeps a block per tile (a cluster per pair)."""
    for kernel, prec in (("matmul_persistent", "bf16"), ("matmul_async_store", "bf16"), ("matmul_tf32", "tf32")):
        cfg = hopper.config(hopper.compile(kernel, prec, backend="cpu").module, kernel)
        assert hopper.grid(kernel, cfg, 4096, 4096, 132, 66 if kernel in hopper.CLUSTER else None) == (128,)
        assert hopper.grid(kernel, cfg, 1000, 1500, 132) == (48,)


def test_the_task_is_named_by_an_exercise_table_and_refuses_what_hopper_cu_lacks():
    assert tasks.from_table({"task": "hopper", "kernel": "matmul_tma_wgmma", "precision": "fp16"}) == \
        tasks.HopperMatmul("matmul_tma_wgmma", "fp16")
    with pytest.raises(KeyError, match="no kernel 'matmul_tiled' in hopper.cu"):
        tasks.from_table({"task": "hopper", "kernel": "matmul_tiled"})
    with pytest.raises(ValueError, match="matmul_persistent multiplies in bf16 or fp16; got precision='tf32'"):
        tasks.HopperMatmul(precision="tf32")
    with pytest.raises(ValueError, match="matmul_tf32 multiplies in tf32; got precision='bf16'"):
        tasks.HopperMatmul("matmul_tf32")


# ---- Hazards: each a small edit of hopper.cu, each named by checked mode at its line -------

def assert_finding(out, cls, code, line_text, shape=tasks.hopper.SHAPES[0]):
    """The failure is checked mode's `cls` at the line holding line_text, on `shape`, said in
    a message that names the kernel, the shape, the place and the line, and fits a phone."""
    assert out.kind == cls.__name__ and isinstance(out.error, cls), out.message
    line = line_of(code, line_text)
    assert out.error.line == line and out.shape == shape
    m, k, n = shape
    assert out.message.startswith(f"✗ `{out.error.kernel}` on {m}x{k} times {k}x{n}, the CPU runtime in checked "
                                  f"mode: **{cls.__name__}**")
    assert f"line {line}" in out.message and len(out.message) <= MESSAGE_CHARS, out.message


@pytest.mark.parametrize("kernel,wait,wgmma", [("matmul_tma_wgmma", K1_FULL_WAIT, WGMMA_N128),
                                               ("matmul_persistent", CONSUMER_WAIT_LINE, WGMMA_N256)],
                         ids=["matmul_tma_wgmma", "matmul_persistent"])
def test_a_wgmma_of_a_slot_nobody_waited_for(kernel, wait, wgmma, rng):
    code, out = tried(kernel, [(wait, "")], rng)
    assert_finding(out, cudacheck.TileNotReadyError, code, wgmma)
    e = out.error
    assert e.op == "wgmma" and e.copy_line == line_of(code, COPY) and e.phase == 0
    assert e.warpgroup == (0 if kernel == "matmul_tma_wgmma" else 1)    # the first consumer
    assert f"the TMA copy on line {e.copy_line}" in out.message and "before its mbarrier phase completed" in out.message
    # the wgmma's asm sits in helpers: error.calls is the chain from the kernel, the call of mma_slice
    # (in the kernel, or in consume_tile) among them; the message names the helper and its call at least
    call, caller = ((line_of(code, "mma_slice<K1_BN, 1>(d, slot"), kernel) if kernel == "matmul_tma_wgmma" else
                    (line_of(code, "mma_slice<WS_BN, WS_MT>(d, slot"), "consume_tile"))
    assert (call, caller) in e.calls and e.calls[0][1] == kernel and e.calls[-1][0] == e.line
    assert f"in {e.calls[-1][1]}, called from line {e.calls[-2][0]} in wgmma" in out.message



def test_the_persistent_kernels_missing_wait_is_exercise_hp1s_starter():
    """The test above on matmul_persistent checks the source that exercise hp-1's starter makes
    (its region spliced into hopper.cu), byte for byte, so the two share one build."""
    starter = sources.splice(HOPPER, "consume_tile", exercises.starter("hp-1"))[0]
    assert starter == matmul.apply_edits(HOPPER, [(CONSUMER_WAIT_LINE, "")], "hp-1's starter", hopper.FILE)

def test_fewer_bytes_announced_than_a_box_brings(rng):
    """M's tile counted in elements (ROWS * BK), not bytes: the phase's bytes go below zero
    within one box."""
    code, out = tried("matmul_tma_wgmma", [(EXPECT, EXPECT.replace("ROWS * ROW_BYTES", "ROWS * BK"))], rng)
    assert_finding(out, cudacheck.TransactionCountError, code, COPY)
    assert (out.error.expected, out.error.delivered) == (20480, 24576)       # 64 x 64 + 2 boxes of N, 3 boxes
    assert "expect_tx announced 20480 bytes, the copies delivered 24576 (4096 too many)" in out.message


def test_a_whole_box_fewer_announced_completes_the_phase_early(rng):
    """One box of N fewer: the phase completes when the others have landed, the last box's
    bytes count toward the slot's next phase, and the wgmma reads that box before it is
    visible: checked mode names the cause at the read (issue 44), the expect_tx that announced
    too few bytes, not the read's missing wait."""
    edit = EXPECT.replace("chunks * CHUNK_BYTES", "(chunks - 1) * CHUNK_BYTES")
    code, out = tried("matmul_persistent", [(EXPECT, edit)], rng)
    assert_finding(out, cudacheck.TransactionCountError, code, WGMMA_N256)
    assert out.error.phase == 1 and out.error.copy_line == line_of(code, COPY)
    assert "announced fewer bytes than the copies issued for that phase bring" in out.message


def test_more_bytes_announced_than_the_boxes_bring_stall_and_say_so(rng):
    edit = EXPECT.replace("chunks * CHUNK_BYTES", "(chunks + 1) * CHUNK_BYTES")
    code, out = tried("matmul_tma_wgmma", [(EXPECT, edit)], rng)
    assert_finding(out, cudacheck.TransactionStallError, code, WAIT)   # a TransactionCountError, a stall
    assert isinstance(out.error, cudacheck.ForwardProgressError)
    assert (out.error.expected, out.error.delivered) == (32768, 24576)
    assert "expected 32768 bytes with expect_tx and its copies delivered 24576" in out.message
    assert "A GPU hangs here" in out.message


@pytest.mark.parametrize("wait,flipped,thread,needs", [
    (CONSUMER_WAIT, CONSUMER_WAIT.replace("(it / STAGES) & 1", "((it / STAGES) & 1) ^ 1"), (128, 0, 0),
     "phase of parity 1, which still needs 1 more of its 1 arrival"),
    (PRODUCER_WAIT, PRODUCER_WAIT.replace("((it / WS_STAGES) & 1) ^ 1", "(it / WS_STAGES) & 1"), (0, 0, 0),
     "phase of parity 0, which still needs 8 more of its 8 arrivals")], ids=["consumer", "producer"])
def test_a_wait_for_the_wrong_parity(wait, flipped, thread, needs, rng):
    """The consumer asking for parity 1 of a slot whose phase 0 has completed waits for a phase
    nobody will fill; the producer asking for parity 0 of a fresh `empty` barrier waits for
    consumers that wait for it. (On a GPU the consumer's may instead pass at once, if the copy
    has not landed yet: parity 1 is then the phase before the barrier's first.) Checked mode
    names the wait's parity as the cause (WaitParityError, a TileNotReadyError that stalls)."""
    code, out = tried("matmul_persistent", [(wait, flipped)], rng)
    assert_finding(out, cudacheck.WaitParityError, code, WAIT)
    assert isinstance(out.error, cudacheck.ForwardProgressError) and "parity" in str(out.error).split("\n")[0]
    assert out.error.thread == thread and needs in out.message
    # the try_wait sits in mbar_wait: the message names the wait's call, the kernel's line
    call = line_of(code, flipped)
    assert f"waits at line {out.error.line}, called from line {call}," in out.message
    assert f"in mbar_wait, called from line {call} in " in out.message and out.error.calls[-2][0] == call


@pytest.mark.parametrize("kernel,wgmma,missing", [("matmul_tma_wgmma", WGMMA_N128, [3]),
                                                  ("matmul_persistent", WGMMA_N256, [7])],
                         ids=["matmul_tma_wgmma", "matmul_persistent"])
def test_a_warp_that_skips_the_wgmma(kernel, wgmma, missing, rng):
    code, out = tried(kernel, [(WGMMA_CALL, SKIP_WARP_3)], rng, prec="fp16")
    assert_finding(out, cudacheck.WarpgroupCollectiveError, code, wgmma)
    assert out.error.missing == missing and f"not reached by warp {missing[0]}" in out.message


def test_a_producer_that_does_not_wait_for_a_free_slot(rng):
    """Only the shape whose slots are reused shows it: the producer runs ahead and refills a
    slot no consumer has waited for yet. Checked mode names that copy (issue 44), before the
    deadlock it leads to here (a consumer waiting for a phase already passed)."""
    code, out = tried("matmul_persistent", [(f"                {PRODUCER_WAIT}   // the slot is free\n", "")], rng)
    assert_finding(out, cudacheck.StageOverwriteError, code, COPY, shape=tasks.hopper.SHAPES[2])
    assert out.error.thread == (0, 0, 0) and "no thread has even waited for that fill's phase" in out.message


HAND_BACK = """        wgmma_wait<1>();                        // slice t-1's products are done: its slot is free
        fence_acc(d);
        if (t > 0)
            release(it - 1);
"""
EARLY_HAND_BACK = """        if (t > 0)
            release(it - 1);
        wgmma_wait<1>();
        fence_acc(d);
"""


@pytest.mark.parametrize("kernel", ["matmul_warp_specialized", "matmul_persistent", "matmul_clustered"])
def test_a_slot_handed_back_before_its_wgmma_group_retires(kernel, rng):
    """The slot of slice t-1 handed back before wgmma.wait_group 1 retires slice t-1's group: the
    producer may refill it while that wgmma still reads it. The runtime multiplies at the wgmma;
    the wait lets every other thread run before it retires the group, so the refill lands in
    the window, where checked mode sees it."""
    code, out = tried(kernel, [(HAND_BACK, EARLY_HAND_BACK)], rng)
    assert_finding(out, cudacheck.WgmmaOperandRaceError, code, COPY, shape=tasks.hopper.SHAPES[2])
    assert "still reads it" in out.message and "in flight" in out.message


STORE_WAIT = ("    if (t == 0)\n"
              "        bulk_wait_read<EPI_BUFS - 2>();                    // 2: the next buffer is free\n")
TMA_STORE = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
ST_SHARED = "st.shared.v2.f32"


def test_a_result_buffer_rewritten_before_its_tma_store_is_waited_for(rng):
    """matmul_async_store without the wait_group.read before the named barrier: box b + 1
    rewrites the buffer box b - 1's store may still be reading. The first shape shows it (n =
    130: each consumer sends five boxes of its tile); the write reported is st.shared's, inside
    the helper st_shared_v2, and the store's line is tma_store's, inside its helper too."""
    code, out = tried("matmul_async_store", [(STORE_WAIT, "")], rng)
    assert_finding(out, cudacheck.TmaStoreSourceRaceError, code, ST_SHARED)
    assert isinstance(out.error, cudacheck.SharedMemoryRaceError)
    assert out.error.store_line == line_of(code, TMA_STORE) and f"line {out.error.store_line}" in out.message
    assert out.error.store_thread[0] % 128 == 0 and out.error.store_thread[0] >= 128   # a consumer's thread 0
    assert "wait_group.read" in out.message and "may still be reading it" in out.message


STORE_FENCE = "    fence_proxy_async();                                   // 1\n"


def test_a_result_box_stored_with_no_proxy_fence_after_its_writes(rng):
    """matmul_async_store without the fence.proxy.async after the warpgroup's st.shared: the
    TMA store reads the box through the async proxy with no fence of its writers between (the
    PTX ISA requires one; a GPU may store stale bytes). The first box of the first shape shows
    it; the write reported is st.shared's, inside st_shared_v2, and the store's line is
    tma_store's, inside its helper too."""
    code, out = tried("matmul_async_store", [(STORE_FENCE, "")], rng)
    assert_finding(out, cudacheck.ProxyFenceError, code, ST_SHARED)
    assert isinstance(out.error, cudacheck.SharedMemoryRaceError)
    assert out.error.async_line == line_of(code, TMA_STORE) and f"line {out.error.async_line}" in out.message
    assert out.error.op == "store" and out.error.issuer[0] % 128 == 0 and out.error.issuer[0] >= 128
    assert out.error.fence_line == 0 and "fence.proxy.async.shared::cta" in out.message


SHARED_FENCE = ('asm volatile("fence.proxy.async.shared::cta;" ::: "memory");\n}\n\n'
                '__device__ __forceinline__ void named_barrier')


def test_a_result_box_fenced_for_global_memory_only(rng):
    """matmul_async_store with fence.proxy.async.global in place of .shared::cta: on an H200 its
    4096^3 product was wrong in 6 of 6 runs (logs/2026-11-28-h200-proxy-fence-state-space.md).
    Checked mode reports it, naming the fence that orders global memory only."""
    code, out = tried("matmul_async_store", [(SHARED_FENCE, SHARED_FENCE.replace(".shared::cta;", ".global;"))], rng)
    assert_finding(out, cudacheck.ProxyFenceError, code, ST_SHARED)
    at = out.error.global_fence_line
    assert at and "fence.proxy.async.global" in code.splitlines()[at - 1]
    assert f"its fence.proxy.async.global on line {at} orders global memory only" in out.message


def test_a_result_box_fenced_one_way_passes(rng):
    """The one-way fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster orders the
    threads' stores before the TMA store's read (right on the H200 at 4096^3 in 4 of 4 runs)."""
    one_way = "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;"
    code, out = tried("matmul_async_store", [(SHARED_FENCE, SHARED_FENCE.replace("fence.proxy.async.shared::cta;",
                                                                                 one_way))], rng)
    assert out, out.message


# ---- Held boxes: a consumer's last EPI_DEFER boxes sent during the next tile ------------------

# k = 100 is two slices, fewer than EPI_DEFER; n = 270 is two tiles of N, so the CPU runtime's one
# cluster walks two pairs of tiles and holds boxes across them.
HELD_SHAPE = (200, 100, 270)
HELD_FLUSH = "                stores.flush(slices);\n"


def test_boxes_held_over_a_short_k_are_sent_before_the_next_tiles(rng):
    out = tryout.run(None, tasks.HopperMatmul("matmul_async_store"), shapes=[HELD_SHAPE], gpu=False, quiet=True,
                     rng=rng)
    assert out, out.message


def test_boxes_held_and_never_flushed_leave_their_columns_unwritten(rng):
    """Without flush(slices), the boxes of the first tile that the second tile's two slices did
    not take (boxes 5 to 7 of 8: columns 160 to 255) are overwritten by the second tile's held
    boxes and never sent: those elements of P stay NaN, and no thread stores them."""
    _, out = tried("matmul_async_store", [(HELD_FLUSH, "")], rng, shapes=[HELD_SHAPE])
    assert out.kind == "wrong values", out.message
    assert 160 <= out.details["col"] < 256 and math.isnan(out.details["got"]), out.message
    assert "nor of any other block, stores it" in out.message


# ---- Wrong values: who stores the element ----------------------------------------------------

def test_a_wrong_store_names_the_thread_that_made_it(rng):
    pair = "*reinterpret_cast<FloatPair*>(p) = FloatPair{x, y};"
    code, out = tried("matmul_persistent", [(pair, pair.replace("{x, y}", "{x, x}"))], rng)
    assert out.kind == "wrong values", out.message
    row, col, (t, _, _) = out.details["row"], out.details["col"], out.details["threads"][0]
    assert len(out.details["threads"]) == 1 and col % 2 == 1         # the second of a pair
    # store_tile's layout: consumer t // 128 - 1 has rows 64 c ..., warp w rows 16 w + lane / 4 (+ 8)
    warp, lane = t % 128 // 32, t % 32
    assert row % 128 // 64 == t // 128 - 1 and row % 64 % 8 == lane // 4 and row % 64 // 16 == warp
    assert col % 8 // 2 == lane % 4
    assert f"Thread {(t, 0, 0)} of block {out.details['block']} (blocks of 384 x 1 threads) stores it." in out.message


def test_an_element_never_stored_names_its_tiles_block(rng):
    guard = "    if (r >= m)\n        return;"
    code, out = tried("matmul_tma_wgmma", [(guard, guard.replace("m)", "m - 1)"))], rng)     # the last row never stored
    assert out.kind == "wrong values" and out.details["row"] == tasks.hopper.SHAPES[0][0] - 1, out.message
    block = (out.details["col"] // 128, out.details["row"] // 64, 0)
    assert f"No thread of block {block} (blocks of 128 x 1 threads), nor of any other block, stores it." \
        in out.message


# ---- The stored runs --------------------------------------------------------------------------

def stored(timing="device"):
    """The files of data/ as JSON, H100 first: the one measurement model's (measure/model.py)."""
    return [json.loads(model.data_file(f).read_text()) for f in hopperdata.TIMINGS[timing]
            if model.data_file(f).is_file()]


def test_each_stored_run_is_bench_hoppers_output_with_its_meta():
    """Both GPUs, both timings: measure.bench_hopper's runs in the one model, each with the
    commit of the kernels it timed, and the timing its command asked for in every timed record."""
    for timing, names in (("device", ["hopper-h100-gpu-time.json", "hopper-h200-gpu-time.json"]),
                          ("launch", ["hopper-h100.json", "hopper-h200.json"])):
        runs = stored(timing)
        assert [r.source for r in hopperdata.datasets(timing)] == names and len(runs) == 2
        assert [r.device for r in hopperdata.datasets(timing)] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
        for d, run in zip(runs, hopperdata.datasets(timing)):
            assert d["schema"] == model.SCHEMA and d["kind"] == "hopper"
            assert set(d["extra"]) == {"kernels", "defines", "tolerance_factor", "summary"}
            meta = d["meta"]
            first = next(r["versions"] for r in d["extra"]["kernels"] if r.get("versions"))
            assert meta == {**asdict(model.Meta.of(first, command=meta["command"])),
                            "extra": {"host": first["host"], "kernels": meta["extra"]["kernels"],
                                      "command_as_run": meta["extra"]["command_as_run"]}}
            assert re.fullmatch(r"kernels/hopper\.cu of commit [0-9a-f]{7}", meta["extra"]["kernels"])
            assert meta["command"].startswith("python -m tiling_course.measure.bench_hopper ")
            assert meta["extra"]["command_as_run"] == meta["command"].replace(
                "python -m tiling_course.measure.bench_hopper", "python scripts/bench_hopper.py")
            assert ("--timing device" in meta["command"]) == (timing == "device") == (run.timing == "device")
            assert {e["extra"]["timing"] for e in d["records"] if e["ms"] is not None} == {timing}
            # every kernel at each of its precisions, in bench_hopper's order, each on three shapes
            assert [(r["kernel"], r["precision"]) for r in d["extra"]["kernels"]] == list(hopper.PAIRS)
            assert [(r["kernel"], r["precision"]) for r in d["records"]] == [p for p in hopper.PAIRS for _ in range(3)]
            assert all(run.checks(k, p)[0] for k, p in hopper.PAIRS)


def test_bench_hopper_writes_the_meta_it_is_read_with(tmp_path):
    """Here without a GPU the worker fails, and says so; the file still has its meta."""
    from tiling_course.measure import bench_hopper as bench
    argv = ["--kernels", "matmul_persistent", "--precisions", "fp16", "--in-process", "--output",
            str(tmp_path / "out.json")]
    bench.main(argv)
    run = model.read(tmp_path / "out.json")
    assert run.kind == "hopper" and set(run.extra) == {"kernels", "defines", "tolerance_factor", "summary"}
    assert run.meta.command == "python -m tiling_course.measure.bench_hopper " + " ".join(argv)
    assert [(k["kernel"], k["precision"]) for k in run.extra["kernels"]] == [("matmul_persistent", "fp16")]


def test_shapes_on_bench_hoppers_command_line_are_m_by_n_by_k():
    from tiling_course.measure import bench_hopper as bench
    opts = bench.arguments(["--awkward", "1000x1500x700", "--small", "7"])
    assert opts.awkward == model.Shape(1000, 1500, 700) and opts.small == model.Shape(7, 7, 7)
    with pytest.raises(SystemExit):
        bench.arguments(["--awkward", "1000x1500"])


def test_the_accessors_are_the_files_numbers():
    for run, d in zip(hopperdata.datasets(), stored()):
        meta = d["meta"]
        assert run.label.startswith(f"{meta['device']}, measured {meta['date'][:10]}, GPU time (CUDA "
                                    "runtime ") and run.label.endswith(f", {meta['extra']['kernels']})")
        for e in d["records"]:
            k, p, s = e["kernel"], e["precision"], e["label"]
            if s == "small":
                continue
            m, n, kk = (e["shape"][x] for x in "mnk")
            assert run.ratio(k, p, s) == e["frac_cublas"] == pytest.approx(e["cublas_ms"] / e["ms"])
            assert run.tflops(k, p, s) == e["tflops"] == pytest.approx(2 * m * n * kk / e["ms"] / 1e9)
            assert run.cublas_tflops(k, p, s) == e["cublas_tflops"]
            # bench_hopper's own summary printed the same ratio
            assert re.search(rf"{k} +\S+ ok +{e['ms']:.4f} +{e['tflops']:.1f} +{e['frac_cublas']:.3f}",
                             d["extra"]["summary"])
        for k, p in hopper.PAIRS:
            ok, error, shapes = run.checks(k, p)
            assert ok and shapes == 3 and error == max(e["error"] for e in d["records"]
                                                       if (e["kernel"], e["precision"]) == (k, p))
        assert (run.shape_name(), run.shape_name("awkward")) == ("4096^3", "1000x1500x700")


def test_the_table_shows_every_kernel_with_its_numbers():
    html = hopperdata.table().data
    for run in hopperdata.datasets():
        assert run.label in html
        for k, p in ((k, p) for p in run.precisions for k in run.kernels if run.record(k, p)):
            sq, aw = run.entry(k, p, "square"), run.entry(k, p, "awkward")
            assert (f"<td>{p.upper()}</td><td><code>{k}</code></td><td>{sq.tflops:.0f} ({sq.frac_cublas:.2f})</td>"
                    f"<td>{aw.tflops:.1f} ({aw.frac_cublas:.2f})</td>"
                    f"<td>{sq.cublas_tflops:.0f} / {aw.cublas_tflops:.1f}</td><td>✓ 3 shapes") in html
    assert html.count("<tr>") - 1 == sum(len(hopper.PAIRS) if run.record("matmul_tf32", "tf32") else
                                         len(hopper.PAIRS) - 1 for run in hopperdata.datasets())
    assert isinstance(hopperdata.table(()), NoData) and isinstance(hopperdata.plot(()), NoData)


def test_the_figure_draws_each_ratio_in_the_chapters_order():
    fig = hopperdata.plot()
    assert isinstance(fig, Figure) and style.smallest_font_pt(fig) >= style.MIN_FONT_PT
    runs = hopperdata.datasets()
    assert all(run.label in fig.get_suptitle().replace("\n", " ") for run in runs)
    for ax, run in zip(fig.axes, runs):
        assert [t.get_text().replace("\n", "_") for t in ax.get_xticklabels()] == \
            [k.removeprefix("matmul_") for k in hopper.KERNELS if k in run.kernels]
        # by precision, each kernel measured in it: BF16's bars, FP16's, then TF32's
        bars = [round(b.get_height(), 9) for b in ax.patches]
        assert bars == [round(run.ratio(k, p), 9) for p in run.precisions for k in run.kernels if run.record(k, p)]
        # a kernel's bars side by side about its tick, matmul_tf32's one bar on its own
        for b in ax.patches:
            k = run.kernels[round(b.get_x() + b.get_width() / 2)]
            assert abs(b.get_x() + b.get_width() / 2 - run.kernels.index(k)) < 0.5
        assert any(list(line.get_ydata()) == [1.0, 1.0] for line in ax.get_lines())


def test_runs_here_only_on_compute_capability_9():
    if not cudacheck.gpu_available():
        assert hopper.runs_here() is False
    else:
        import cupy
        assert hopper.runs_here() == (cupy.cuda.Device().compute_capability == "90")


# ---- On an H100 or H200 ----------------------------------------------------------------------

hopper_gpu = pytest.mark.skipif(not hopper.runs_here(), reason="needs a GPU of compute capability 9.0")


@pytest.mark.gpu
@hopper_gpu
@pytest.mark.parametrize("kernel,prec", hopper.PAIRS)
def test_the_task_passes_on_the_gpu_too(kernel, prec, rng):
    out = tryout.run(None, tasks.HopperMatmul(kernel, prec), gpu=True, quiet=True, rng=rng)
    assert out and "run on the CPU runtime in checked mode and the GPU" in out.message, out.message


@pytest.mark.gpu
@hopper_gpu
@pytest.mark.parametrize("kernel,prec", hopper.PAIRS)
def test_every_kernel_launched_on_the_gpu_by_the_one_rule(kernel, prec, rng):
    task = tasks.HopperMatmul(kernel, prec)
    for shape in task.default_shapes(16):
        inputs = task.inputs(shape, rng)
        P, _ = task.run(None, inputs, 16, "gpu", False)
        assert task.compare(P.get(), inputs, 16) is None, (kernel, prec, shape)


@pytest.mark.gpu
@hopper_gpu
@pytest.mark.parametrize("prec", ["bf16", "fp16"])
def test_boxes_held_across_many_tiles_on_the_gpu(prec, rng):
    """matmul_async_store on the GPU's own grid (whole waves of the clusters that fit), where
    every cluster walks several pairs of tiles: k of 1, 2 and 4 slices (fewer than EPI_DEFER)
    sends the held boxes by flush, k of 6 slices during the next tile's products; odd rows of
    tiles (4100) put the last pairs' lower tile past the matrix."""
    task = tasks.HopperMatmul("matmul_async_store", prec)
    for shape in ((4096, 100, 4096), (3000, 64, 2900), (4100, 250, 3000), (2000, 380, 4096)):
        inputs = task.inputs(shape, rng)
        P, _ = task.run(None, inputs, 16, "gpu", False)
        assert task.compare(P.get(), inputs, 16) is None, (prec, shape)


# ---- matmul_tf32: A read into registers by every thread, the slot handed back by lane 0 ------

TF32_WAIT = "    mbar_wait(full0 + 8 * s, (it / TF_STAGES) & 1);\n"
TF32_READ = "a[i] = *reinterpret_cast<const unsigned*>(n_tile + off[i] + j * 8 * ROW_BYTES);"
TF32_SYNCWARP = "        __syncwarp();\n        if (lane == 0)\n            mbar_arrive(empty0"


def test_tf32_registers_read_from_a_slot_nobody_waited_for(rng):
    """The consumer's own loads of N's tile, with the wait gone: read before the TMA's bytes
    are known to have landed."""
    code, out = tried("matmul_tf32", [(TF32_WAIT, "")], rng, prec="tf32")
    assert_finding(out, cudacheck.TileNotReadyError, code, TF32_READ)
    assert f"the TMA copy on line {out.error.copy_line}" in out.message


def test_tf32_a_slot_handed_back_by_lane_0_without_a_syncwarp(rng):
    """Lane 0's arrival releases lane 0's reads alone: without the __syncwarp() before it, the
    other lanes' reads of the slot race with the producer's refill."""
    code, out = tried("matmul_tf32", [(TF32_SYNCWARP, TF32_SYNCWARP.replace("        __syncwarp();\n", ""))], rng,
                      prec="tf32")
    assert out.kind == "SharedMemoryRaceError" and out.shape == tasks.hopper.SHAPES[2], out.message
    # the refill (the TMA copy's asm statement, on the lines after its template) names the race
    copy = line_of(code, COPY)
    assert copy <= out.error.line <= copy + 1 and "write after read" in out.message
    assert f"line {line_of(code, TF32_READ)}" in out.message and len(out.message) <= MESSAGE_CHARS


def test_a_table_per_gpu_holds_that_gpus_rows_only():
    """The chapter shows a table per GPU (one fits a slide): each holds its own runs' rows."""
    for run in hopperdata.datasets():
        gpu = run.device.split()[1]                    # "H100", "H200"
        html = hopperdata.table(gpu=gpu).data
        others = [r.label for r in hopperdata.datasets() if r is not run]
        assert run.label in html and not any(label in html for label in others)
        assert html.count("<tr>") - 1 == len([p for p in hopper.PAIRS if run.record(*p)])
    assert isinstance(hopperdata.table(gpu="T4"), NoData)
