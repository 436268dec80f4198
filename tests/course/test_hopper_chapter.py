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

CHAPTER = ROOT / "book" / "09_hopper.ipynb"
NCU_LOG = ROOT / "logs" / "2026-11-27-h100-ncu-cluster-arrive-membar.md"
EPILOGUE_LOG = ROOT / "logs" / "2026-11-28-h100-hopper-epilogue.md"


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
    # every pair on the H100; on the H200 the 16-bit kernels (TF32 "was measured on the H100 only")
    assert set(pairs(runs[0])) == set(hopper.PAIRS)
    assert set(pairs(runs[1])) == {(k, p) for k, p in hopper.PAIRS if k in KERNELS_16}
    assert "(TF32 was measured on the H100 only)" in prose()
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
    assert all(r < 1 for r in ratios(KERNELS_16)), "the chapter says none reaches cuBLAS at 4096^3"
    awkward = ratios(KERNELS_16, "awkward")
    first = ratios(("matmul_tma_wgmma",), "awkward")
    assert f"the kernels reach {span(awkward)} of its speed, the first one {span(first)}" in text
    ms = [run.entry(k, p, "awkward")["ms"] for run in runs for k, p in pairs(run) if k in KERNELS_16]
    assert f"at {span(ms)} ms a product" in text


def test_the_tf32_paragraph_is_the_h100s_run_and_chapter_8s():
    from tiling_course import tuning
    h100 = hopper.datasets()[0]
    text = prose()
    square, awkward = h100.ratio("matmul_tf32", "tf32"), h100.ratio("matmul_tf32", "tf32", "awkward")
    assert f"`matmul_tf32` reaches {square:.2f} of cuBLAS's TF32 product at 4096^3 on the H100, at " \
           f"{h100.tflops('matmul_tf32', 'tf32'):.0f} TFLOP/s, and {awkward:.2f} on the awkward shape" in text
    sixteen = [h100.cublas_tflops(k, p) for k, p in pairs(h100) if k in KERNELS_16]
    slower = h100.cublas_tflops("matmul_tf32", "tf32") / (sum(sixteen) / len(sixteen))
    assert f"cuBLAS itself runs at {slower:.2f} of its 16-bit speed in TF32" in text and 0.45 < slower < 0.55
    assert square >= max(ratios(KERNELS_16)) - 0.03, "as close to cuBLAS as the 16-bit kernels"
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
    tf32 = hopper.datasets()[0].ratio("matmul_tf32", "tf32")
    assert f"{tf32:.2f} for matmul_tf32 in TF32" in caption and f"tf32 {tf32:.2f}." in alt
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
    assert f"`matmul_persistent` runs at {span(square['nostore'])} of cuBLAS at 4096^3; as it is, at " \
           f"{span(square['kernels/hopper.cu'])} beside it" in text
    assert min(square["nostore"]) > 1 > max(square["kernels/hopper.cu"])
    assert f"128 x 256 tile of floats ({128 * 256 * 4 // 1024} KB)" in text
    staggered = log.split("## Staggering")[1]
    ratios = [float(x) for row in re.findall(r"^\| stagger \| ([\d.]+) \| ([\d.]+) \|", staggered, re.M) for x in row]
    assert len(ratios) == 4 and f"that version ran at {span(ratios)} of cuBLAS" in text
