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


def cells():
    return json.loads(CHAPTER.read_text())["cells"]


def prose():
    return " ".join(" ".join("".join(c["source"]) for c in cells() if c["cell_type"] == "markdown").split())


def span(values, digits=2):
    """A range as the chapter writes it: "0.51 to 0.60"."""
    return f"{min(values):.{digits}f} to {max(values):.{digits}f}"


def ratios(kernels, shape="square"):
    return [run.ratio(k, p, shape) for run in hopper.datasets() for k in kernels for p in run.precisions]


def test_the_chapter_quotes_both_gpus_stored_runs():
    runs = hopper.datasets()
    assert [r.device for r in runs] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    for run in runs:
        assert run.kernels == list(hopper.KERNELS) and run.precisions == ["bf16", "fp16"]
        assert all(run.checks(k, p)[0] for k in run.kernels for p in run.precisions)
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
    cublas = [run.cublas_tflops(k, p) for run in runs for k in run.kernels for p in run.precisions]
    assert f"{span(cublas, 0)} TFLOP/s over the runs" in text
    assert all(r < 1 for r in ratios(hopper.KERNELS)), "the chapter says none reaches cuBLAS at 4096^3"
    awkward = ratios(hopper.KERNELS, "awkward")
    first = ratios(("matmul_tma_wgmma",), "awkward")
    assert f"the kernels reach {span(awkward)} of its speed, the first one {span(first)}" in text
    ms = [run.entry(k, p, "awkward")["ms"] for run in runs for k in run.kernels for p in run.precisions]
    assert f"at {span(ms)} ms a product" in text


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
    assert f"{span(ratios(hopper.KERNELS[1:]))} from the producer and consumers on" in caption
    for kernels, name in ((("matmul_tma_wgmma",), "tma_wgmma"), (("matmul_warp_specialized",), "warp_specialized"),
                          (("matmul_persistent",), "persistent"),
                          (("matmul_clustered", "matmul_async_store"), "clustered and async_store")):
        assert f"{name} {span(ratios(kernels))}" in alt
    assert "512 tiles on 132 multiprocessors make 3.88 waves" in prose() and f"{512 / 132:.2f}" == "3.88"
    assert (4096 // 128) * (4096 // 256) == 512
