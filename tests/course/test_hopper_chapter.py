"""What chapter 9 (book/09_hopper.ipynb) tells a reader, held to the stored runs and to
kernels/hopper.cu: every number of its prose is computed here from the runs timed on the GPU
alone (data/hopper-h100-gpu-time.json, hopper-h200-gpu-time.json), from the launch-timed runs
where host time is the point (data/hopper-h100.json, hopper-h200.json), from chapter 8's stored
tuning runs, or from the kernels' own macros; the lecture's steps are mapped as the slides number
them; the kernel is shown in pieces read from the file. No test here reads logs/: the chapter
only links to them."""
import json
import re

import numpy as np

import cudacheck
from tests.support import ROOT
from tiling_course import hopper, sources
from tiling_course.measure import hopperdata, tuning
from tiling_course.measure.hopperdata import TIMED

CHAPTER = ROOT / "book" / "09_hopper.ipynb"
HOPPER_CU = ROOT / "kernels" / "hopper.cu"
# The 16-bit kernels.
KERNELS_16 = tuple(k for k in hopper.KERNELS if hopper.KERNEL_PRECISIONS[k] == ("bf16", "fp16"))


def cells():
    return json.loads(CHAPTER.read_text())["cells"]


def markdown():
    return [("".join(c["source"])) for c in cells() if c["cell_type"] == "markdown"]


def prose():
    return " ".join(" ".join(markdown()).split())


def code():
    return "\n".join("".join(c["source"]) for c in cells() if c["cell_type"] == "code")


def span(values, digits=2):
    """A range as the chapter writes it: "0.51 to 0.60"."""
    return f"{min(values):.{digits}f} to {max(values):.{digits}f}"


def pairs(run):
    return [(k, p) for k in run.kernels for p in run.precisions if run.record(k, p)]


def ratios(kernels, shape="square", timing="device"):
    """The fractions of cuBLAS of `kernels` at every precision each was measured in, on both GPUs."""
    return [run.ratio(k, p, shape) for run in hopperdata.datasets(timing) for k, p in pairs(run) if k in kernels]


def define(name):
    return int(re.search(rf"^#define {name} (\d+)", HOPPER_CU.read_text(), re.M)[1])


# ---- The measurements ------------------------------------------------------------------------

def test_the_tables_are_both_gpus_runs_on_the_gpus_time():
    """The tables, the figure and the prose read the GPU-time runs of both GPUs, every kernel
    right on every shape, of kernels that compile to today's code."""
    runs = hopperdata.datasets()
    assert [r.device for r in runs] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert all(r.timing == "device" and "--timing device" in r.meta.command for r in runs)
    for run in runs:
        assert set(pairs(run)) == set(hopper.PAIRS) and all(run.checks(k, p)[0] for k, p in pairs(run))
        assert run.shape_name("square") == "4096^3" and run.shape_name("awkward") == "1000x1500x700"
    src = code()
    assert 'hopperdata.table(gpu="H100")' in src and 'hopperdata.table(gpu="H200")' in src
    assert "hopperdata.plot()" in src
    assert "datasets(\"launch\")" not in src and "hopperdata.table(hopperdata.datasets" not in src


def test_the_fractions_the_chapter_quotes_are_the_gpu_time_runs():
    text = prose()
    quoted = {
        ("matmul_tma_wgmma",): "At 4096^3 the first kernel reaches {} of cuBLAS",
        ("matmul_warp_specialized",): "(`matmul_warp_specialized`) takes it to {}",
        ("matmul_persistent",): "persistent blocks to {}",
        ("matmul_clustered",): "clusters to {}",
        ("matmul_async_store",): "(`matmul_async_store`) to {} of cuBLAS on both GPUs, in BF16 and FP16",
    }
    for kernels, words in quoted.items():
        assert words.format(span(ratios(kernels))) in text, (kernels, span(ratios(kernels)))
    assert min(ratios(("matmul_async_store",))) >= 1          # "to cuBLAS's speed"
    h100 = hopperdata.datasets()[0]
    assert f"{h100.tflops('matmul_async_store', 'bf16'):.0f} TFLOP/s in BF16 on the H100" in text
    assert max(r.tflops(k, p) for r in hopperdata.datasets() for k, p in pairs(r)) == h100.tflops("matmul_async_store",
                                                                                              "bf16")


def test_cublas_is_the_same_in_chapters_8_and_9():
    """cuBLAS's FP16 product at 4096^3 in this chapter's runs, beside chapter 8's stored tuning
    runs (tuning-*.json), as each chapter quotes it."""
    text, ch8 = prose(), " ".join(" ".join("".join(c["source"]) for c in json.loads(
        (ROOT / "book" / "08_tensor_cores.ipynb").read_text())["cells"] if c["cell_type"] == "markdown").split())
    here = {run.device: [run.cublas_tflops(k, "fp16") for k in KERNELS_16] for run in hopperdata.datasets()}
    there = {t.device: [r.cublas_tflops for r in t.records if r.ok and r.precision == "fp16"]
             for t in tuning.tunings()}
    h100, h200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
    assert (f"cuBLAS's FP16 product ran at {span(here[h100], 0)} TFLOP/s on the H100, as in the "
            f"{span(there[h100], 0)} of chapter 8, and at {span(here[h200], 0)} on the H200, a little under chapter "
            f"8's {span(there[h200], 0)}, measured on another day") in text
    assert round(min(there[h100])) <= round(min(here[h100])) and max(here[h100]) <= max(there[h100])   # "as in"
    assert max(here[h200]) < min(there[h200]) and max(here[h200]) / min(there[h200]) > 0.98  # "a little under"
    assert {t.meta.day for t in tuning.tunings()}.isdisjoint({r.date for r in hopperdata.datasets()})
    assert f"cuBLAS FP16 ran at {span(there[h100], 0)} TFLOP/s on the H100" in ch8
    assert f"at {span(there[h100], 0)} TFLOP/s on the H100 and {span(there[h200], 0)} on the H200" in ch8


def test_the_tf32_and_awkward_shape_sentences():
    h100, h200 = hopperdata.datasets()
    text = prose()
    (sq100, aw100), (sq200, aw200) = ([run.ratio("matmul_tf32", "tf32", shape) for shape in TIMED]
                                      for run in (h100, h200))
    assert (f"`matmul_tf32` reaches {sq100:.2f} (H100) and {sq200:.2f} (H200) of cuBLAS in TF32 at 4096^3, where "
            f"chapter 8's `wmma_pipelined` reached") in text
    assert f"but {aw100:.2f} and {aw200:.2f} on the awkward shape, 1000 x 1500 x 700" in text
    wmma = next(t for t in tuning.tunings() if t.device == h100.device).best("wmma_pipelined", "tf32")
    assert f"`wmma_pipelined` reached {wmma.frac_cublas:.2f}" in text
    awkward = ratios(KERNELS_16, "awkward")
    cublas = [run.cublas_tflops(k, p, "awkward") for run in (h100, h200) for k, p in pairs(run) if k in KERNELS_16]
    ms = [run.entry(k, p, "awkward").ms for run in (h100, h200) for k, p in pairs(run) if k in KERNELS_16]
    assert (f"There the 16-bit kernels reach {span(awkward)} of cuBLAS's speed (it runs that shape at "
            f"{span(cublas, 0)} TFLOP/s), in {span(ms, 3)} ms of GPU time") in text
    assert min(awkward) > 1


def test_host_time_is_quoted_from_the_launch_timed_runs_only_where_it_is_the_point():
    text = prose()
    host = [us for run in hopperdata.datasets() for k, p in pairs(run) if k in KERNELS_16
            for us in run.host_us(k, p, "awkward")]
    assert f"Submitting a launch from Python took the host {span(host, 0)} µs on the awkward shape" in text
    launch = hopperdata.datasets("launch")
    assert [r.source for r in launch] == ["hopper-h100.json", "hopper-h200.json"]
    assert all(r.timing == "launch" for r in launch)
    lead = ratios(KERNELS_16, "awkward", "launch")
    cublas = [run.cublas_tflops(k, "fp16") for run in launch for k in KERNELS_16]
    assert (f"the kernels' lead there shrinks to {span(lead)} of cuBLAS's speed, and cuBLAS's FP16 product seems to "
            f"run at {span(cublas, 0)} TFLOP/s at 4096^3") in text
    assert "`hopper-h100.json` and `hopper-h200.json`" in text
    # the launch-timed figures appear in that paragraph alone
    launch_paragraphs = [p for p in " ".join(markdown()).split("\n\n") if "637" in p or "Timed from the launch" in p]
    assert len(launch_paragraphs) == 1


def test_the_figures_caption_and_alt_text_quote_the_runs():
    fig = next(c for c in cells() if "hopperdata.plot()" in "".join(c["source"]))["metadata"]["mystnb"]
    caption, alt = fig["figure"]["caption"], fig["image"]["alt"]
    assert "timed on the GPU alone" in caption and "timed on the GPU alone" in alt
    assert f"{span(ratios(KERNELS_16[1:]))} from the producer and consumers on" in caption
    h100, h200 = (run.ratio("matmul_tf32", "tf32") for run in hopperdata.datasets())
    tf32 = f"{h100:.2f} on the H100 and {h200:.2f} on the H200"
    assert f"for matmul_tf32 in TF32 {tf32}." in caption and f"tf32 {tf32}." in alt
    for kernels, name in ((("matmul_tma_wgmma",), "tma_wgmma"), (("matmul_warp_specialized",), "warp_specialized"),
                          (("matmul_persistent",), "persistent"),
                          (("matmul_clustered", "matmul_async_store"), "clustered and async_store")):
        assert f"{name} {span(ratios(kernels))}" in alt


# ---- The lecture's steps, and the kernel's own numbers -----------------------------------------

def test_the_steps_are_the_lectures_numbers():
    """Step 3b is multiply-then-wait and step 4 the guarded write (a TMA store on Hopper), in the
    chapter's table and in hopper.cu's header; step 2 is not gone."""
    first = "".join(cells()[0]["source"])
    flat = " ".join(first.split())
    rows = {m[0]: m[1] for m in re.findall(r"^\| (\d\w?)\. ([^|]+) \|", first, re.M)}
    assert list(rows) == ["1", "2", "3a", "3b", "4"]
    assert rows["3b"].startswith("multiply, then wait") and rows["4"].startswith("write the result, if in bounds")
    row4 = next(line for line in first.splitlines() if line.startswith("| 4."))
    assert "**TMA store**" in row4 and "guard" in row4
    row2 = next(line for line in first.splitlines() if line.startswith("| 2."))
    assert "**tensor map**" in row2 and "stay" in row2 and "gone" not in first
    assert "Chapters 2 to 8 did" not in flat and "chapter 8 handed the multiply to the tensor cores" in flat
    header = HOPPER_CU.read_text().split("// Six kernels")[0]
    for step in ("//   1. allocate the tiles", "//   2. the indices this thread is responsible for",
                 "//   3a. load, then wait", "//   3b. multiply, then wait", "//   4. write the result"):
        assert step in header, step
    assert "gone" not in header and "TMA store" in header
    assert "An mbarrier counts\n//      arrivals, not threads" in header
    assert "counts 8 arrivals from\n//      a block's 256 consumer threads" in header
    kernel = sources.definition(HOPPER_CU.read_text(), "matmul_tma_wgmma")
    marks = re.findall(r"// Step (\w+)", kernel)
    assert marks == ["1", "2", "3a", "3b", "4"]


def test_the_barriers_count_arrivals_as_the_chapter_says():
    text, src = prose(), HOPPER_CU.read_text()
    assert "It counts arrivals, not threads" in text and "that many threads have arrived" not in text
    assert "mbar_init(full0 + 8 * s, 1);" in src
    assert "mbar_init(empty0 + 8 * s, WS_CONSUMERS * 4);" in src and define("WS_CONSUMERS") * 4 == 8
    assert "initialised with 1, completes on the one arrival" in text and "initialised with 8, when lane 0 of each " \
                                                                          "of 8 warps has arrived" in text
    # the release: lane 0 of each consumer warp, 8 warps of 256 threads
    assert "} else if (lane == 0) {\n            mbar_arrive(bar);" in src and 128 * define("WS_CONSUMERS") == 256
    assert "#define CL_EMPTY_ARRIVALS (CLUSTER * WS_CONSUMERS * 4)" in src and define("CLUSTER") * 8 == 16
    assert "empty barrier counts 16 arrivals, 8 from the other block" in text


def test_the_sizes_the_chapter_quotes_are_the_kernels():
    text = prose()
    assert (define("K1_BM"), define("K1_BN"), define("K1_STAGES")) == (64, 128, 4)
    assert "one warpgroup computing a 64 x 128 tile of `P`; thread 0 keeps 4 slices in flight through 4 slots" in text
    assert (define("WS_WG_M"), define("WS_BN"), define("WS_STAGES")) == (64, 256, 4)
    assert "each computing 64 rows of a 128 x 256 tile of `P`. Each of the 4 slots" in text
    assert define("GROUP_M") == 8 and "in groups of 8 rows of tiles" in text
    assert (define("EPI_ROWS"), define("EPI_COLS"), define("EPI_DEFER")) == (64, 32, 5)
    assert "each consumer writes 64 x 32 floats" in text
    tiles = (4096 // (2 * define("WS_WG_M"))) * (4096 // define("WS_BN"))
    rounds = -(-tiles // 132)
    assert (tiles, rounds, hopper.whole_waves(tiles, 132)) == (512, 4, 128)
    assert "512 tiles at 4096^3 on 132 multiprocessors take 4 rounds, so its grid is 128 blocks of 4 tiles each" in text
    assert all(run.entry("matmul_persistent", p).extra["grid"] == [128]
               for run in hopperdata.datasets() for p in ("bf16", "fp16"))
    assert all(run.meta.gpu["sm_count"] == 132 for run in hopperdata.datasets())


def test_the_padded_rows_the_chapter_shows():
    M = np.zeros((129, 77), np.float16)
    assert cudacheck.pad_rows(M).strides[0] // 2 == 80
    assert "rows start 80 values (160 bytes) apart" in prose()


# ---- The kernel in pieces, and what the chapter runs -------------------------------------------

def test_the_kernel_is_shown_in_pieces_read_from_the_file():
    """No cell holds hopper.cu; each piece the chapter shows is a definition of it, found once;
    no Markdown excerpt can drift from it."""
    src = code()
    assert "%%cuda hopper_src" not in src and not any("kernel:hopper.cu" in c.get("metadata", {}).get("tags", [])
                                                      for c in cells())
    assert "hopper_src = sources.read(hopper.FILE)" in src
    shown = [name for call in re.findall(r"show\.piece\(hopper\.FILE, ([^)]*)\)", src)
             for name in re.findall(r'"(\w+)"', call)]
    assert {"load_slice", "mma_slice", "matmul_tma_wgmma", "store_tile", "consume_tile",
            "warp_specialized"} <= set(shown)
    text = HOPPER_CU.read_text()
    lines = sum(len(sources.definition(text, name).splitlines()) for name in shown)
    assert lines < len(text.splitlines()) / 3
    for block in re.findall(r"```cuda\n(.*?)```", "\n".join(markdown()), re.S):
        assert block in text, block


def test_the_chapter_checks_every_kernel_of_the_file_and_four_mistakes():
    runs = "\n".join(c for c in code().split("\n\n") if "tryout.run" in c)
    for kernel in hopper.KERNELS:
        assert f'"{kernel}"' in runs, kernel
    mistakes = [c for c in cells() if c["cell_type"] == "code" and "apply_edits(hopper_src" in "".join(c["source"])]
    assert len(mistakes) == 4
    src = HOPPER_CU.read_text()
    for old in ('"        mbar_wait(full0 + 8 * s, (t / K1_STAGES) & 1);"',
                '"    mbar_arrive_expect_tx(bar, ROWS * ROW_BYTES + chunks * CHUNK_BYTES);"',
                '"        mma_slice<K1_BN, 1>(d, slot, slot + K1_A_BYTES);"'):
        assert old in code() and json.loads(old) in src


def test_a_lesson_not_a_lab_notebook():
    """At most about 2,500 words of prose; the tuning history is a paragraph that links to the
    logs, with no number in it."""
    words = sum(len(re.findall(r"\S+", m)) for m in markdown())
    assert words <= 2650, words
    last = next(m for m in markdown() if m.startswith("## The last percent"))
    assert len(re.findall(r"\(https://github\.com/[\w-]+/[\w-]+/blob/main/logs/[\w.-]+\.md\)", last)) >= 4
    assert not re.search(r"\d\.\d", re.sub(r"\([^)]*\)", "", last))
    for phrase in ("before the last two changes", "went from", "six more probes", "Six more probes"):
        assert phrase not in prose(), phrase
