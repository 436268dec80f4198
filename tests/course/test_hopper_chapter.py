"""What chapter 9 (book/09_hopper.ipynb) tells a reader, held to the stored runs
(data/hopper-h100.json, data/hopper-h200.json), the logs it cites and kernels/hopper.cu:
every range of fractions of cuBLAS it quotes is computed here from the runs, the counters
and the 8192^3 figures from their log, the block counts from the tiles, and every CUDA
excerpt in its text is a run of lines of the file, so that none can drift from the kernels."""
import json
import math
import re
import textwrap

import numpy as np
from conftest import ROOT

import cudacheck
from tiling_course import hopper
from tiling_course.hopper import TIMED

CHAPTER = ROOT / "book" / "09_hopper.ipynb"
NCU_LOG = ROOT / "logs" / "2026-11-27-h100-ncu-cluster-arrive-membar.md"
EPILOGUE_LOG = ROOT / "logs" / "2026-11-28-h100-hopper-epilogue.md"
SCHEDULES_LOG = ROOT / "logs" / "2026-11-28-h100-hopper-schedules.md"
GPU_TIME_LOG = ROOT / "logs" / "2026-11-28-h200-gpu-time-and-power.md"
HELD_LOG = ROOT / "logs" / "2026-11-28-h200-held-boxes.md"
HOPPER_CU = ROOT / "kernels" / "hopper.cu"


def cells():
    return json.loads(CHAPTER.read_text())["cells"]


def prose():
    return " ".join(" ".join("".join(c["source"]) for c in cells() if c["cell_type"] == "markdown").split())


def span(values, digits=2):
    """A range as the chapter writes it: "0.51 to 0.60"."""
    return f"{min(values):.{digits}f} to {max(values):.{digits}f}"


# The 16-bit kernels, and the (kernel, precision) pairs each run stored.
KERNELS_16 = tuple(k for k in hopper.KERNELS if hopper.KERNEL_PRECISIONS[k] == ("bf16", "fp16"))


def pairs(run):
    return [(k, p) for k in run.kernels for p in run.precisions if run.record(k, p)]


def ratios(kernels, shape="square"):
    """The fractions of cuBLAS of `kernels` at every precision each was measured in, on both GPUs."""
    return [run.ratio(k, p, shape) for run in hopper.datasets() for k, p in pairs(run) if k in kernels]


def test_the_chapter_quotes_both_gpus_stored_runs():
    runs = hopper.datasets()
    assert [r.device for r in runs] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert all(set(pairs(run)) == set(hopper.PAIRS) for run in runs)
    for run in runs:
        assert all(run.checks(k, p)[0] for k, p in pairs(run))
        assert run.size("square") == "4096^3" and run.size("awkward") == "1000x1500x700"
    text = prose()
    quoted = {
        ("matmul_tma_wgmma",): "the first kernel reaches",
        ("matmul_warp_specialized",): "producer warpgroup takes the product to",
        ("matmul_persistent",): "persistent blocks to",
        ("matmul_clustered", "matmul_async_store"): "come out at",
    }
    for kernels, words in quoted.items():
        assert f"{words} {span(ratios(kernels))}" in text, (kernels, span(ratios(kernels)))
    cublas = [run.cublas_tflops(k, p) for run in runs for k, p in pairs(run) if k in KERNELS_16]
    assert f"{span(cublas, 0)} TFLOP/s over the runs in BF16 and FP16" in text
    reaching = [(run.device.split()[1], k, p) for run in runs for k, p in pairs(run)
                if k in KERNELS_16 and run.ratio(k, p) >= 1]
    assert reaching == [("H200", "matmul_async_store", "fp16")]
    assert "In these tables only `matmul_async_store` in FP16 on the H200 reaches cuBLAS at this size" in text
    # The H100's runs are of the kernels before whole waves: its grids say so.
    walking = ("matmul_persistent", "matmul_clustered", "matmul_async_store")
    grids = {run.device.split()[1]: {run.entry(k, p)["grid"][0] for k, p in pairs(run) if k in walking} for run in runs}
    assert grids == {"H100": {132}, "H200": {128}}
    assert "their grid of 132 blocks for 512 tiles shows it, where the H200's has 128" in text
    awkward = ratios(KERNELS_16, "awkward")
    first = ratios(("matmul_tma_wgmma",), "awkward")
    assert f"the kernels reach {span(awkward)} of its speed, the first one {span(first)}" in text
    ms = [run.entry(k, p, "awkward")["ms"] for run in runs for k, p in pairs(run) if k in KERNELS_16]
    assert f"at {span(ms)} ms a product" in text


def test_the_tf32_paragraph_is_both_gpus_runs_and_chapter_8s():
    from tiling_course import tuning
    h100, h200 = hopper.datasets()
    text = prose()
    (sq100, aw100), (sq200, aw200) = ([run.ratio("matmul_tf32", "tf32", shape) for shape in TIMED]
                                      for run in (h100, h200))
    assert f"`matmul_tf32` reaches {sq100:.2f} of cuBLAS's TF32 product at 4096^3 on the H100, at " \
           f"{h100.tflops('matmul_tf32', 'tf32'):.0f} TFLOP/s, and {aw100:.2f} on the awkward shape; on the " \
           f"H200, {sq200:.2f} at {h200.tflops('matmul_tf32', 'tf32'):.0f} TFLOP/s, and {aw200:.2f}." in text
    slower = []
    for run in (h100, h200):
        sixteen = [run.cublas_tflops(k, p) for k, p in pairs(run) if k in KERNELS_16]
        slower.append(run.cublas_tflops("matmul_tf32", "tf32") / (sum(sixteen) / len(sixteen)))
    assert f"runs at {slower[0]:.2f} (H100) and {slower[1]:.2f} (H200) of its 16-bit speed in TF32" in text
    assert all(0.45 < s < 0.6 for s in slower), "about half: TF32 at half the 16-bit rate"
    assert min(sq100, sq200) >= max(ratios(KERNELS_16)) - 0.03, "as close to cuBLAS as the 16-bit kernels"
    wmma = next(t for t in tuning.tunings() if t.device == h100.device).best("wmma_pipelined", "tf32")
    assert f"`wmma_pipelined`, without `wgmma`, reached {wmma['frac_cublas']:.2f} of cuBLAS" in text


def test_the_block_counts_of_the_awkward_shape():
    m, n = 1000, 1500
    small = math.ceil(m / 64) * math.ceil(n / 128)
    large = math.ceil(m / 128) * math.ceil(n / 256)
    assert (small, large) == (192, 48)
    assert f"make {small} blocks for the 132 multiprocessors, where 128 x 256 tiles make {large}" in prose()
    assert all(run.records[0]["versions"]["sm_count"] == 132 for run in hopper.datasets())


def test_the_counters_and_the_larger_size_are_the_logs():
    log = NCU_LOG.read_text()
    text = prose()
    assert "nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coopA_NNT" in log and "clusters of 2" in log
    busy = re.search(r"tensor pipe active[^|]*\| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", log)
    persistent, cublas = busy[1], busy[3]
    assert f"busy in {cublas}% of its cycles, `matmul_persistent` in {persistent}%" in text
    table = log.split("At 8192^3")[1].split("```")[1]
    at_8192 = [float(x) for x in re.findall(r"^\s+matmul_\w+\s+\S+ ok\s+[\d.]+\s+[\d.]+\s+([\d.]+)", table, re.M)]
    assert len(at_8192) == 6
    assert f"reach {span(at_8192)} of cuBLAS at 8192^3" in text


def test_the_gpus_time_alone_is_the_stored_run_and_its_log():
    """The paragraph on the GPU's time: the stored device-timed run (every kernel right, no
    repeat leaked), the two rounds of its log for the repeatability, and the sustained runs'
    clocks and cycles."""
    run, text = hopper.gpu_timed(), prose()
    assert f"on the {run.label}, the 16-bit" in text and run.device == "NVIDIA H200"
    assert "--timing device" in run.meta["command"]
    entries = [run.entry(k, p, s) for k, p in pairs(run) for s in TIMED]
    assert all(run.checks(k, p)[0] for k, p in pairs(run)) and set(pairs(run)) == set(hopper.PAIRS)
    assert all(e["timing"] == "device" for e in entries)
    later = [run.ratio(k, p) for k, p in pairs(run) if k in KERNELS_16 and k != "matmul_tma_wgmma"]
    assert f"kernels after the first reach {span(later)} of cuBLAS at 4096^3" in text
    awkward = [(k, p) for k, p in pairs(run) if k in KERNELS_16]
    assert f"On the awkward shape they reach {span([run.ratio(k, p, 'awkward') for k, p in awkward])} of cuBLAS's" \
           in text
    ms = [run.entry(k, p, "awkward")["ms"] for k, p in awkward]
    host = [us / 1000 for k, p in awkward for us in run.entry(k, p, "awkward")["host_us"]]
    assert f"takes the GPU {span(ms)} ms, about as long as the host takes to submit it ({span(host, 3)} ms)" in text
    # The log's two device-timed rounds: each fraction repeats to within 0.001.
    log = GPU_TIME_LOG.read_text()
    rounds = re.findall(r"^\| matmul_\w+ \| (?:BF16|FP16) \| [\d.]+, [\d.]+ \| ([\d.]+), ([\d.]+) \|", log, re.M)
    assert len(rounds) == 6 and max(abs(float(a) - float(b)) for a, b in rounds) <= 0.001 + 1e-9
    assert "repeats to within 0.001 from one run to the next" in text
    # What moved the kernels last (section 6): the instruction counts, the two changes kept.
    section = log.split("## 6.")[1]
    inst = [int(x.replace(",", "")) for x in re.search(r"\| instructions \(smsp__inst_executed.sum\) \| ([\d,]+) \| "
                                                        r"([\d,]+) \|", section).groups()]
    assert f"counted {inst[0] / inst[1]:.1f} times cuBLAS's instructions for `matmul_async_store`" in text
    probes = {(k, d): [float(x) for x in re.findall(r"[\d.]+", bf16)]
              for k, d, bf16 in re.findall(r"^\| 11:\d\d \| (matmul_\w+) \| ([^|]+?) \| ([\d., ]+) \|", section, re.M)}
    before, uniform = probes[("matmul_async_store", "-")], probes[("matmul_async_store", "UNIFORM=1")]
    assert f"went from {min(before):.3f} to {min(uniform):.3f} of cuBLAS in BF16" in text
    assert max(before) <= min(uniform)
    kernels = HOPPER_CU.read_text()
    assert "`warpgroup_index()`" in text and "__shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0)" in kernels
    assert re.search(r"#define CL_GROUP_M 8 ", kernels) and "groups of 8 rows of pairs instead of 4" in text
    # The sustained runs before the uniform registers (section 3, 11:10).
    watts = [float(x) for row in re.findall(r"power \(W\) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", log) for x in row]
    assert len(watts) == 18 and all(690 < w < 700 for w in watts)
    earlier = log.split("## 3.")[1].split("## 4.")[0].split("| 11:10 | 1 |")[1]
    old = [int(x) for x in re.search(r"SM clock \(MHz\) \| (\d+) \| (\d+) \| (\d+) \|", earlier).groups()]
    assert f"Before the uniform registers it ran at {old[1]} MHz beside cuBLAS's {old[0]}" in text


def held_rows(section, cells):
    """The rows of a Markdown table of the held-boxes log whose cells match the regular
    expressions `cells`."""
    return re.findall(r"^\| " + " \\| ".join(cells) + r" \|$", section, re.M)


def test_the_whole_waves_and_the_held_boxes_are_their_log():
    """The last two changes: each gain the chapter quotes, the counters, the stored run on the
    GPU's time, and the sustained runs, from logs/2026-11-28-h200-held-boxes.md; the kernels and
    the launch rule as the chapter says they are."""
    log, text = HELD_LOG.read_text(), prose()
    waves = log.split("## 1.")[1].split("## 2.")[0]
    cells = [r"(\d)", r"(132 blocks|whole waves, 128)", r"(matmul_\w+)", "-", r"([\d.]+)", r"([\d.]+)"]
    timed = {(r, g, k): (float(b), float(f)) for r, g, k, b, f in held_rows(waves, cells)}
    assert len(timed) == 8
    for kernel, name in (("matmul_async_store", "`matmul_async_store`'s fraction"),
                         ("matmul_persistent", "`matmul_persistent`'s")):
        gains = [round(w - b, 3) for r in "12" for w, b in zip(timed[(r, "whole waves, 128", kernel)],
                                                              timed[(r, "132 blocks", kernel)])]
        assert f"{span(gains, 3)} to {name}" in text and min(gains) > 0
    counters = log.split("## 2.")[1].split("## 3.")[0]
    dram = [float(x) for x in re.search(r"\| dram__bytes_read.sum \(MB\) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| "
                                        r"([\d.]+) \|", counters).groups()]
    assert f"read {dram[2] - dram[0]:.0f} MB less from DRAM ({dram[0]:.0f} MB, against cuBLAS's {dram[3]:.0f})" in text
    tex = [int(x.replace(",", "")) for x in re.search(r"\| lts__t_sectors_srcunit_tex_op_read.sum \| ([\d,]+) \| "
                                                      r"[\d,]+ \| [\d,]+ \| ([\d,]+) \|", counters).groups()]
    assert f"reading {tex[0] / tex[1] - 1:.0%} more from L2 than cuBLAS on the H200" in text and dram[0] < dram[3]
    held = log.split("## 3.")[1].split("## 4.")[0]
    bf16 = {}
    for d, b in held_rows(held, [r"14:\d\d", r"(\d)", "40, 232", r"[^|]+", r"([\d.]+)", r"[\d.]+"]):
        bf16.setdefault(int(d), []).append(float(b))
    quoted = [span(bf16[d], 3) if min(bf16[d]) < max(bf16[d]) else f"{bf16[d][0]:.3f}" for d in (0, 2, 4, 5)]
    assert f"Holding 0, 2, 4 or 5 boxes, `matmul_async_store` ran at {quoted[0]}, {quoted[1]}, {quoted[2]} and " \
           f"{quoted[3]} of cuBLAS in BF16" in text
    assert max(bf16[5]) == max(v for vs in bf16.values() for v in vs)
    kernels = HOPPER_CU.read_text()
    assert re.search(r"#define EPI_DEFER 5 ", kernels) and "holds the last 5 of its 8 boxes" in text
    assert "EPI_BUFS * EPI_BYTES" in kernels and hopper.whole_waves(512, 132) == 128
    run = hopper.gpu_timed()
    assert f"it reaches {run.ratio('matmul_async_store', 'bf16'):.3f} of cuBLAS in BF16 and " \
           f"{run.ratio('matmul_async_store', 'fp16'):.3f} in FP16" in text
    assert min(run.ratio("matmul_async_store", p) for p in ("bf16", "fp16")) >= 1
    again = held_rows(log.split("## 7.")[1], [r"\d", r"([\d.]+)", r"([\d.]+)"])
    bf16_again, fp16_again = ([float(r[i]) for r in again] for i in (0, 1))
    assert len(again) == 3 and min(bf16_again + fp16_again) >= 1
    assert f"and {span(bf16_again, 3)} and {span(fp16_again, 3)} in three more runs" in text
    # The sustained rounds: 1 and 2 in section 4 (with matmul_persistent), 3 in section 8.
    quantity = r"(us per launch|SM clock \(MHz\))"
    rows = {(r, q): [float(x) for x in vals[:2]] for r, q, *vals in
            held_rows(log.split("## 4.")[1].split("## 5.")[0], [r"(\d)", quantity] + [r"([\d.]+)"] * 3)
            + held_rows(log.split("## 8.")[1], [r"(\d)", quantity] + [r"([\d.]+)"] * 2)}
    fractions = [rows[(r, "us per launch")][0] / rows[(r, "us per launch")][1] for r in "123"]
    cublas_mhz, ours_mhz = ([rows[(r, "SM clock (MHz)")][i] for r in "123"] for i in (0, 1))
    assert f"`matmul_async_store` then runs at {span(fractions, 3)} of cuBLAS's speed in three runs" in text
    assert f"at {span(ours_mhz, 0)} MHz beside cuBLAS's {span(cublas_mhz, 0)}" in text


def test_the_padded_rows_the_chapter_shows():
    M = np.zeros((129, 77), np.float16)
    assert cudacheck.pad_rows(M).strides[0] // 2 == 80
    assert "rows start 80 values (160 bytes) apart" in prose()


def test_every_cuda_excerpt_is_the_kernels_own_lines():
    source = (ROOT / "kernels" / "hopper.cu").read_text()
    blocks = re.findall(r"```cuda\n(.*?)```", "\n".join("".join(c["source"]) for c in cells()
                                                       if c["cell_type"] == "markdown"), re.S)
    assert len(blocks) >= 4
    for block in blocks:
        assert block in source or textwrap.dedent(block) in textwrap.dedent(source), block


def test_the_chapter_checks_every_kernel_of_the_file():
    code = "\n".join("".join(c["source"]) for c in cells() if c["cell_type"] == "code" and "tryout.run" in
                     "".join(c["source"]))
    for kernel in hopper.KERNELS:
        assert f'"{kernel}"' in code, kernel


def test_the_figures_caption_and_alt_text_quote_the_runs():
    fig = next(c for c in cells() if "hopper.plot()" in "".join(c["source"]))["metadata"]["mystnb"]
    caption, alt = fig["figure"]["caption"], fig["image"]["alt"]
    assert f"{span(ratios(KERNELS_16[1:]))} from the producer and consumers on" in caption
    h100, h200 = (run.ratio("matmul_tf32", "tf32") for run in hopper.datasets())
    tf32 = f"{h100:.2f} on the H100 and {h200:.2f} on the H200"
    assert f"for matmul_tf32 in TF32 {tf32}." in caption and f"tf32 {tf32}." in alt
    for kernels, name in ((("matmul_tma_wgmma",), "tma_wgmma"), (("matmul_warp_specialized",), "warp_specialized"),
                          (("matmul_persistent",), "persistent"),
                          (("matmul_clustered", "matmul_async_store"), "clustered and async_store")):
        assert f"{name} {span(ratios(kernels))}" in alt
    assert "512 tiles on 132 multiprocessors make 3.88 waves" in prose() and f"{512 / 132:.2f}" == "3.88"
    assert (4096 // 128) * (4096 // 256) == 512


def test_the_stores_cost_is_the_logs():
    """The probe without P's stores beside the kernel as it is, at 4096^3 (the table's second and
    fourth columns), as the chapter quotes them."""
    log = EPILOGUE_LOG.read_text()
    table = log.split("## Without the stores")[1].split("## Cache hints")[0]
    rows = re.findall(r"^\| (\S+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", table, re.M)
    assert [r[0] for r in rows] == ["kernels/hopper.cu", "nostore"] * 2
    square = {name: [float(r[2]) for r in rows if r[0] == name] + [float(r[4]) for r in rows if r[0] == name]
              for name in ("kernels/hopper.cu", "nostore")}
    text = prose()
    assert f"`matmul_persistent` ran at {span(square['nostore'])} of cuBLAS at 4096^3; with them, at " \
           f"{span(square['kernels/hopper.cu'])} beside it" in text
    assert min(square["nostore"]) > 1 > max(square["kernels/hopper.cu"])
    assert f"128 x 256 tile of floats ({128 * 256 * 4 // 1024} KB)" in text
    staggered = log.split("## Staggering")[1]
    ratios = [float(x) for row in re.findall(r"^\| stagger \| ([\d.]+) \| ([\d.]+) \|", staggered, re.M) for x in row]
    assert len(ratios) == 4 and f"that version ran at {span(ratios)} of cuBLAS" in text


def table_rows(text):
    """(kernel, defines, precision, fraction at 4096^3, fraction at 1000x1500x700 or None) of the
    probe tables in `text` (a log's rows: time, kernel, defines, precision, the two fractions)."""
    row = r"^\| \d\d:\d\d \| ([^|]+?) \| ([^|]+?) \| (BF16|FP16) \| ([\d.]+) \| ([\d.]+|-) \|$"
    return [(k, d, p, float(sq), None if aw == "-" else float(aw)) for k, d, p, sq, aw in re.findall(row, text, re.M)]


def log_rows(section):
    """table_rows of the schedules log's section (its heading starting with `section`)."""
    return table_rows(SCHEDULES_LOG.read_text().split(f"\n## {section}")[1].split("\n## ")[0])


def test_what_else_was_tried_is_the_logs():
    """The four schedules and the kernel without its stores, as the chapter quotes them, from the
    log's tables; the third more bytes per product and the 12% of a tile, computed."""
    text = prose()
    turns = [r for r in log_rows("1.") if r[0] == "matmul_pingpong"]
    assert len(turns) == 15
    assert f"{span([r[4] for r in turns])} of cuBLAS on the 1000 x 1500 x 700 product, but " \
           f"{span([r[3] for r in turns])} at 4096^3" in text
    # Bytes from L2 per flop of a slice: (rows + columns) x 64 x 2 bytes over 2 x rows x columns x 64.
    per_flop = {tile: (tile[0] + tile[1]) * 64 * 2 / (2 * tile[0] * tile[1] * 64) for tile in ((128, 128), (128, 256))}
    assert per_flop[(128, 128)] / per_flop[(128, 256)] == 4 / 3 and "takes a third more bytes from L2" in text
    split = [r[3] for r in log_rows("5.") if r[0].endswith("(sk)")]
    as_is = [r[3] for r in log_rows("5.") if not r[0].endswith("(sk)")]
    assert len(split) == 8 and f"(Stream-K), each split tile summed by the block that finishes its share last: " \
                               f"{span(split)}" in " ".join(text.split())
    assert max(split) < min(as_is)
    pairs_, clusters, slices = (4096 // 128) * (4096 // 256) // 2, 132 // 2, 4096 // 64
    last = pairs_ - pairs_ // clusters * clusters
    assert (pairs_, last) == (256, 58) and f"the {1 - last * slices / clusters / slices:.0%} of a tile" in text
    promotions = SCHEDULES_LOG.read_text().split("## 7.")[1].split("\n## ")[0]
    tried = set(re.findall(r"^\| \d \| ([^|]+?) \|", promotions, re.M))
    assert tried == {"256 bytes (as built)", "128 bytes", "0 bytes"}
    assert "Narrower L2 promotions in the tensor maps (128 or 0 bytes, for 256) changed nothing" in text
    probes = (ROOT / "logs" / "2026-11-28-h200-hopper-probes.md").read_text()
    prefetch = table_rows(probes.split("\n## 1.")[1].split("\n## ")[0])
    ahead = [r[3] for r in prefetch if r[1] != "0"]
    assert len(ahead) == 16 and {r[1] for r in prefetch} == {"0", "8", "16", "32", "64"}
    assert max(ahead) < min(r[3] for r in prefetch if r[1] == "0")
    assert f"Prefetching into L2 the boxes of the slice 8 to 64 slices ahead (`cp.async.bulk.prefetch.tensor`) made " \
           f"both clustered kernels slower: {span(ahead)} of cuBLAS at 4096^3 on an H200" in text
    without = [r[3] for r in log_rows("4.") if r[0].endswith("(nostore)")]
    assert len(without) == 4 and f"Without its stores, `matmul_async_store` ran at {span(without)} of cuBLAS" \
        " at 4096^3 on the H100" in text
    # Results kept in registers in matmul_persistent (section 2): within the launch-timed spread.
    defer = [r[3] for r in log_rows("2.") if r[0] == "matmul_persistent (defer)"]
    plain = [r[3] for r in log_rows("2.") if r[0] == "matmul_persistent"]
    assert len(defer) == 12 and len(plain) == 4 and min(defer) <= max(plain)
    assert "did not stand out of the spread of the launch-timed runs" in text


def test_the_proxy_fence_left_out_is_the_logs():
    """The GPU runs of matmul_async_store without its fence, as the chapter quotes them, and the
    line the chapter's cell deletes is the kernel's."""
    log = (ROOT / "logs" / "2026-11-28-h100-proxy-fence.md").read_text()
    runs = re.findall(r"^\| \d \| (BF16|FP16) \| ok \| ok \| WRONG, (\d+) elements \|$", log, re.M)
    wrong = [int(n) for _, n in runs]
    assert len(wrong) == 6 and "0 hazards displayed" in log and "ERROR SUMMARY: 0 errors" in log
    assert f"a wrong 4096^3 product in each of {len(wrong)} runs ({min(wrong):,} to {max(wrong):,} wrong elements)" \
        in prose()
    spaces = (ROOT / "logs" / "2026-11-28-h200-proxy-fence-state-space.md").read_text()
    wrong_space = [int(n) for n in re.findall(r"^\| [\d:]+ \| globalfence \| \d \| (?:BF16|FP16) \| ok \| ok \| WRONG, "
                                           r"(\d+) elements \|$", spaces, re.M)]
    right_space = re.findall(r"^\| [\d:]+ \| releasefence \| \d \| (?:BF16|FP16) \| ok \| ok \| ok \|$", spaces, re.M)
    assert len(wrong_space) == 6 and len(right_space) == 4
    assert (f"the product was wrong in each of {len(wrong_space)} runs on an H200 ({min(wrong_space):,} to "
            f"{max(wrong_space):,} wrong elements), and checked mode names that fence") in prose()
    fence = "    fence_proxy_async();                                   // 1\n"
    assert fence in (ROOT / "kernels" / hopper.FILE).read_text()
