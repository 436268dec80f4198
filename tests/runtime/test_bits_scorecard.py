"""scripts/bits_scorecard.py's machinery without the three checkouts: cutting items out of a file
that is a whole program, running a case of our own on the CPU runtime into an .npz, packing the
files a table reads and finding them again, and the comparison's counts (identical elements,
ulps, absolute difference) on outputs whose differences are known. The real corpus runs in the
scorecard itself (logs/2026-12-06-bits-scorecard.md)."""
import argparse
import json

import bits_scorecard as scorecard
import numpy as np
import pytest

# A whole program as the projects write them: host headers, host functions and a main around
# the device code, a template with specializations, a macro, attributes before the name.
PROGRAM = r'''#include <stdio.h>
#include <cublas_v2.h>
#define SCALE(x) ((x) * 0.5f)   // a macro the kernel uses
const int UNUSED = 3;
template <typename T> __device__ T twice(T x) { return x + x; }
template <> __device__ float twice<float>(float x) { return 2.0f * x; }
struct alignas(16) Pair { float a, b; };
__constant__ float shift;
// "}" and "{" in a comment or a string do not end an item
void host_only(const char* s = "}{") { printf("%s", s); }
__global__ void __launch_bounds__(128) softplus(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = SCALE(twice(logf(1.0f + expf(in[i])))) + shift; }
}
int main() { host_only(); return 0; }
'''


def test_items_are_named_as_declared():
    names = [scorecard.item_name(item) for item in scorecard.top_level(PROGRAM)]
    assert names == [None, None, "SCALE", "UNUSED", "twice", "twice", "Pair", "shift", "host_only", "softplus", "main"]


def test_extract_takes_the_named_items_in_the_files_order_and_every_specialization():
    code = scorecard.extract(PROGRAM, ("softplus", "twice", "SCALE"))
    assert "host_only" not in code and "cublas" not in code and "main" not in code and "UNUSED" not in code
    assert code.index("#define SCALE") < code.index("T twice(T x)") < code.index("twice<float>") < \
        code.index("softplus(")


def test_extract_names_what_the_file_lacks():
    with pytest.raises(ValueError, match=r"tiny\.cu defines no softmax, relu at top level"):
        scorecard.extract(PROGRAM, ("softplus", "softmax", "relu"), "tiny.cu")


def softplus_launch(rng):
    n = 1000 + int(rng.integers(1, 200))                # a partial last block
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    return scorecard.Launch((scorecard.cdiv(n, 128),), (128,), [np.zeros(n, np.float32), x, np.int32(n)],
                            {0: "out"}, constants={"shift": np.float32([rng.uniform(1, 2)])})


TINY = scorecard.Case("tiny/softplus",
                      (scorecard.Part("llm.c", "dev/cuda/tiny.cu", ("SCALE", "twice", "shift", "softplus")),),
                      "softplus", softplus_launch)


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "llm.c"
    (root / "dev/cuda").mkdir(parents=True)
    (root / "dev/cuda/tiny.cu").write_text(PROGRAM)
    return root


def test_a_case_runs_on_the_cpu_runtime_into_an_npz(checkout, tmp_path, rng):
    seed = int(rng.integers(1 << 30))
    out = tmp_path / "cpu.npz"
    meta = scorecard.run_all([TINY], {"llm.c": checkout}, "cpu", seed, out, "test")
    entry = meta["cases"]["tiny/softplus"]
    assert entry["status"] == "ok" and entry["math"] == ["expf", "logf"] and entry["outputs"] == ["out"]
    stored = np.load(out)
    assert json.loads(str(stored["__meta__"]))["seed"] == seed
    launch = TINY.build(scorecard.case_rng(seed, TINY))
    x, shift = launch.args[1].astype(np.float64), float(launch.constants["shift"][0])
    np.testing.assert_allclose(stored["tiny/softplus::out"], np.log1p(np.exp(x)) + shift, rtol=1e-6, atol=1e-6)
    # The same run again is bit-identical, and a run of other inputs is refused, not compared.
    again = tmp_path / "again.npz"
    scorecard.run_all([TINY], {"llm.c": checkout}, "cpu", seed, again, "test")
    lines = []
    assert scorecard.compare(out, again, lines.append) == 1.0
    other = tmp_path / "other.npz"
    meta = scorecard.run_all([TINY], {"llm.c": checkout}, "cpu", seed, other, "test")
    data = dict(np.load(other))
    meta["cases"]["tiny/softplus"]["inputs"] = "0" * 16
    data["__meta__"] = np.array(json.dumps(meta))
    np.savez(other, **data)
    lines = []
    scorecard.compare(out, other, lines.append)
    assert any("inputs differ" in line for line in lines)


def test_a_case_that_does_not_compile_is_recorded_and_the_others_run(checkout, tmp_path):
    broken = scorecard.Case("tiny/broken", TINY.parts, "softplus", softplus_launch, prelude="#define twice(x) (x\n")
    meta = scorecard.run_all([broken, TINY], {"llm.c": checkout}, "cpu", 1, tmp_path / "cpu.npz", "test")
    assert meta["cases"]["tiny/broken"]["status"].startswith("CompileError")
    assert meta["cases"]["tiny/softplus"]["status"] == "ok"


def test_compare_counts_identical_elements_ulps_and_absolute_differences(rng):
    a = rng.standard_normal(500).astype(np.float32)
    b = a.copy()
    picked = rng.choice(500, 7, replace=False)
    for i, steps in zip(picked, (1, 1, 1, 1, 1, -2, 5)):   # ulps moved, up or down
        for _ in range(abs(steps)):
            b[i] = np.nextafter(b[i], np.float32(np.inf if steps > 0 else -np.inf))
    n, same, ulp, absdiff = scorecard.compare_arrays(a, b)
    assert (n, same, ulp) == (500, 493, 5)
    assert absdiff == np.abs(a.astype(np.float64) - b).max()
    # Signed zeros are one value (0 ulps) but not bit-identical; bf16 patterns count in bf16 ulps.
    assert scorecard.compare_arrays(np.float32([0.0]), np.float32([-0.0]))[1:3] == (0, 0)
    h = scorecard.bf16(np.float32([1.0, 3.0]))
    assert scorecard.compare_arrays(h, h + np.uint16(1)) == (2, 0, 1, pytest.approx(2.0 ** -7 * 2))


def test_bf16_rounds_to_nearest_even():
    # 1 + 2^-8 lies halfway between bf16 1.0 and 1 + 2^-7: to even, 1.0; 1 + 3*2^-8 rounds up.
    got = scorecard.as_float(scorecard.bf16(np.float32([1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5])))
    assert list(got) == [1.0, 1 + 2 ** -6, -2.5]


def test_pack_copies_only_what_the_cases_read_and_stands_for_the_checkouts(checkout, tmp_path):
    (checkout / "dev/cuda/other.cu").write_text("never read")
    packed = scorecard.pack([TINY], {"llm.c": checkout}, tmp_path / "pack")
    files = sorted(str(p.relative_to(packed)) for p in packed.rglob("*") if p.is_file())
    assert files == ["REPOS.json", "llm.c/dev/cuda/tiny.cu"]
    args = argparse.Namespace(cuda_samples=None, llmc=None, sgemm=None, sources=packed)
    assert scorecard.resolve_sources(args, [TINY])["llm.c"] == packed / "llm.c"
    (packed / "llm.c/dev/cuda/tiny.cu").unlink()
    with pytest.raises(SystemExit, match=r"lacks dev/cuda/tiny\.cu"):
        scorecard.resolve_sources(args, [TINY])
    with pytest.raises(SystemExit, match="pass --llmc PATH or --sources PACKDIR"):
        scorecard.resolve_sources(argparse.Namespace(cuda_samples=None, llmc=None, sgemm=None, sources=None), [TINY])


def test_every_case_of_the_table_reads_a_file_and_names_its_kernel():
    names = [c.name for c in scorecard.CASES]
    assert len(names) == len(set(names))
    for case in scorecard.CASES:
        assert case.parts and case.kernel.split("<")[0] in case.parts[-1].names, case.name
        assert all(p.repo in scorecard.REPOS for p in case.parts)


def test_the_command_line_runs_compares_and_packs(checkout, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(scorecard, "CASES", [TINY])
    cpu = tmp_path / "cpu.npz"
    assert scorecard.main(["--llmc", str(checkout), "--seed", "7", "--cpu", str(cpu)]) == 0
    assert scorecard.main(["--llmc", str(checkout), "--pack", str(tmp_path / "pack")]) == 0
    again = tmp_path / "again.npz"
    assert scorecard.main(["--sources", str(tmp_path / "pack"), "--seed", "7", "--cpu", str(again)]) == 0
    capsys.readouterr()
    assert scorecard.main(["--compare", str(cpu), str(again)]) == 0
    printed = capsys.readouterr().out
    assert "tiny/softplus" in printed and "expf logf" in printed and "(100.000%)" in printed
    other = tmp_path / "other.npz"
    scorecard.main(["--llmc", str(checkout), "--seed", "8", "--cpu", str(other)])
    with pytest.raises(SystemExit, match="different seeds"):
        scorecard.main(["--compare", str(cpu), str(other)])


@pytest.mark.gpu
def test_the_gpu_side_runs_the_same_case_and_matches_the_cpu_bit_for_bit(checkout, tmp_path, rng):
    """The --gpu path (CuPy arrays, a __constant__ set through get_global, the outputs copied back)
    on the case of our own, whose expf, logf, FMA and IEEE adds the CPU runtime gives bit for bit."""
    seed = int(rng.integers(1 << 30))
    runs = {side: tmp_path / f"{side}.npz" for side in ("cpu", "gpu")}
    for side, path in runs.items():
        meta = scorecard.run_all([TINY], {"llm.c": checkout}, side, seed, path, side)
        assert meta["cases"]["tiny/softplus"]["status"] == "ok", meta
    assert scorecard.compare(runs["cpu"], runs["gpu"], lambda line: None) == 1.0
