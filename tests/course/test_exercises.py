"""The book's exercises (course/tiling_course/exercises/: a TOML file per chapter, and the
checker): every solution passes its checker, every known wrong answer is rejected with the
failure it should give, every starter fails (so no exercise comes solved), the checker
never raises, a change to a book kernel reaches the exercises made from it, a value
exercise's answer is what its solution computes, the checker's tasks (a matrix product,
the block transpose of tiling_course.tasks) run through its one loop with the messages the
lessons need, the data files are validated, and the chapters' exercise cells
(exercises.cells, which scripts/sync_notebooks.py writes into the notebooks) have the
expected form.

Fresh random inputs on every run, as the book's checker uses. The kernels are compiled
once, up front, on every core (compiling is most of the time), then checked in order."""
import dataclasses
import math
import os
import re
import shutil
import tomllib
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

import nbformat
import numpy as np
import pytest

import cudacheck
from cudacheck import KernelError
from tiling_course import exercises, hopper, matmul, registry, sources, tasks, tryout
from tiling_course.exercises import checker, requirements

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
ALL = list(exercises.EXERCISES.values())
KERNEL_EXERCISES = [e for e in ALL if e.kind in ("write", "fix")]
VALUE_EXERCISES = [e for e in ALL if e.kind == "value"]
PROGRAM_EXERCISES = [e for e in ALL if e.kind == "program"]
CHAPTER_STEMS = [c.stem for c in registry.CHAPTERS if c.exercises]
# A checker's message fits a phone: at most this many characters (about ten lines of a narrow
# screen, the code block of a finding included).
MESSAGE_CHARS = 1400


def _sources(ex):
    yield exercises.solution(ex.id)
    yield exercises.starter(ex.id)
    for _, src in exercises.wrong_answers(ex.id):
        yield src


@pytest.fixture(scope="session", autouse=True)
def compiled():
    """Build every source the tests check, for checked mode, in parallel: the checks
    then find them in the compile cache (and in matmul's, for this process). A region
    exercise's source is its function alone; the checker compiles it put in its file
    (Exercise.whole), and so does this (alone it does not compile)."""
    jobs = {(ex.whole(src)[0], ex.task, tile) for ex in KERNEL_EXERCISES for src in _sources(ex) for tile in ex.tiles}

    def build(job):
        src, task, tile = job
        try:
            task.compile(src, tile, "cpu", True)
        except (KernelError, KeyError):
            pass   # the wrong answers that do not compile fail again, in their test

    workers = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(build, sorted(jobs, key=repr)))


def _answer(ex, code):
    """Run a value exercise's Python code; the value it sets."""
    namespace = {}
    exec(compile(code, f"<{ex.id}>", "exec"), namespace)
    return namespace[ex.var]


@pytest.mark.parametrize("ex", ALL, ids=lambda e: e.id)
def test_solution_passes(ex):
    answer = _answer(ex, exercises.solution(ex.id)) if ex.kind == "value" else exercises.solution(ex.id)
    result = exercises.check(ex.id, answer, quiet=True)
    assert result, result.message
    assert result.kind == "pass" and result.message.startswith("✓")


WRONG = [pytest.param(ex, w, src, id=f"{ex.id}:{w.name}") for ex in ALL for w, src in exercises.wrong_answers(ex.id)]


@pytest.mark.parametrize("ex,wrong,source", WRONG)
def test_wrong_answer_is_rejected(ex, wrong, source):
    result = exercises.check(ex.id, source, quiet=True)
    assert not result, f"{wrong.name} ({wrong.what}) passed"
    assert result.kind == wrong.expect, result.message
    assert ex.hint in result.message
    assert len(result.message.replace(ex.hint, "")) <= MESSAGE_CHARS, (len(result.message), result.message)
    if wrong.expect == "wrong values":
        d = result.details
        assert {"row", "col", "expected", "got", "threads", "block"} <= set(d)
        element = d.get("element", f"{d['array']}[{d['row']}][{d['col']}]")
        assert f"{element} should be" in result.message and str(d["block"]) in result.message
        if len(d["threads"]) <= tryout.LISTED:
            assert all(str(t) in result.message for t in d["threads"])
        else:
            assert f"{len(d['threads'])} threads" in result.message
        assert result.shape is not None
    elif ex.kind == "program":
        assert wrong.expect == "exit code" or re.search(r"line \d+", result.message), result.message
    elif ex.kind != "value" and wrong.expect != "requirement":
        assert type(result.error).__name__ == wrong.expect
        assert str(result.error).splitlines()[0] in result.message


@pytest.mark.parametrize("ex", ALL, ids=lambda e: e.id)
def test_starter_fails_with_a_message_that_fits_a_phone(ex):
    answer = _answer(ex, exercises.starter(ex.id)) if ex.kind == "value" else exercises.starter(ex.id)
    result = exercises.check(ex.id, answer, quiet=True)
    assert not result, f"the starter of {ex.id} already passes"
    assert result.kind == ex.starter_fails, result.message
    assert len(result.message.replace(ex.hint, "")) <= MESSAGE_CHARS, (ex.id, len(result.message), result.message)


# Every thread of block (0, 0) stores P[0], in turns ordered by barriers (so checked mode finds
# no race): the wrong element has 256 writers, and the message must not list them one by one.
ALL_STORE_P0 = """
extern "C" __global__ void matmul_naive(const float* M, const float* N, float* P, int Width) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < Width; ++k)
        sum += M[row * Width + k] * N[k * Width + col];
    P[row * Width + col] = sum;
    __syncthreads();
    for (int t = 0; t < blockDim.x * blockDim.y; ++t) {
        if (threadIdx.y * blockDim.x + threadIdx.x == t)
            P[0] += 1.0f;
        __syncthreads();
    }
}
"""


def test_a_wrong_element_with_many_writers_is_summarised():
    out = tryout.run(ALL_STORE_P0, "naive", tile=16, shapes=[(16, 16, 16)], quiet=True, gpu=False)
    assert out.kind == "wrong values" and (out.details["row"], out.details["col"]) == (0, 0)
    assert len(out.details["threads"]) == 256      # the details keep every writer
    assert ("All 256 threads of block (0, 0, 0) (blocks of 16 x 16 threads) store it." in out.message
            and "(15, 15, 0)" not in out.message and len(out.message) < 400), out.message


# Every thread stores 0.0f into P[0] and nothing else: unordered stores of one value, which checked
# mode reports as a SameValueWriteWarning, not an error.
SAME_VALUE_P0 = """
extern "C" __global__ void matmul_naive(const float* M, const float* N, float* P, int Width) {
    P[0] = 0.0f;
}
"""


def test_a_same_value_warning_is_told_in_the_lesson_once_and_not_printed(recwarn):
    out = tryout.run(SAME_VALUE_P0, "naive", tile=16, shapes=[(16, 16, 16)], quiet=True, gpu=False)
    assert out.kind == "wrong values"
    assert out.message.count("Checked mode also notes (`SameValueWriteWarning`)") == 1, out.message
    assert "both write P[0] with nothing ordering the two writes" in out.message
    assert not [w for w in recwarn if issubclass(w.category, cudacheck.SameValueWriteWarning)]
    right = tryout.run(None, "naive", tile=16, shapes=[(16, 16, 16)], quiet=True, gpu=False)
    assert right and "also notes" not in right.message     # a kernel without such stores gets no note


def test_who_stores_names_few_threads_and_summarises_many():
    where = "block (0, 0, 0) (blocks of 16 x 16 threads)"
    two = tryout.who_stores([(1, 0, 0), (0, 0, 0)], (16, 16), where)
    assert two == f"Threads (0, 0, 0) and (1, 0, 0) of {where} all"
    row = [(x, 3, 0) for x in range(16)]
    assert tryout.who_stores(row, (16, 16), where) == f"The 16 threads with threadIdx.y == 3 of {where}"
    some = [(x, y, 0) for y in range(2) for x in range(5)]
    assert tryout.who_stores(some, (16, 16), where) == f"10 threads of {where}, (0, 0, 0) to (4, 1, 0),"
    full = [(x, y, 0) for y in range(16) for x in range(16)]
    assert tryout.who_stores(full, (16, 16), where) == f"All 256 threads of {where}"


def test_fix_starters_are_edits_of_the_solution():
    for ex in ALL:
        if ex.kind == "fix":
            base = ex.starter.base or dataclasses.replace(ex.starter, edits=())   # {solution = true} or the same source
            assert ex.starter.edits and base == ex.solution, ex.id
            assert exercises.starter(ex.id) != exercises.solution(ex.id)


def test_every_chapter_has_at_least_three_exercises_mostly_kernels():
    for stem in CHAPTER_STEMS:
        assert len(exercises.chapter(stem)) >= 3, stem
        assert (ROOT / "book" / f"{stem}.ipynb").exists()
    assert len(KERNEL_EXERCISES) > 2 * len(VALUE_EXERCISES)
    assert len({e.id for e in ALL}) == len(ALL)
    for ex in ALL:
        assert ex.kind in ("write", "fix", "value", "program") and ex.title and ex.statement and ex.hint, ex.id
        assert ex.wrong, f"{ex.id} lists no wrong answer"
        if ex.kind == "value":
            assert ex.variable and ex.unit and ex.task is None and ex.launch is None
        elif ex.kind == "program":   # with its default shape and an awkward one (m != k != n, no tile's multiple)
            assert () in ex.runs and any(len(r) >= 3 and len(set(r[:3])) == 3 for r in ex.runs), ex.id
        else:
            assert ex.task is not None and ex.shapes and ex.tiles
            assert all(len(shape) == ex.task.rank for shape in ex.shapes), ex.id


def test_kernel_exercises_try_awkward_shapes():
    """Every kernel exercise tries several shapes; those whose kernel takes any shape try
    1 x 1, a size that is no multiple of the tile, and m != k != n."""
    for ex in KERNEL_EXERCISES:
        assert len(ex.shapes) >= 2, ex.id
        if isinstance(ex.task, tasks.BlockTranspose):   # whole tiles, not all square, several blocks
            assert any(h != w for h, w in ex.shapes) and any(h * w > t * t for h, w in ex.shapes for t in ex.tiles)
            continue
        if isinstance(ex.task, tasks.Histogram):   # one value; several blocks, the last one part full
            assert (1, 16) in ex.shapes or any(n == 1 for n, _ in ex.shapes), ex.id
            assert any(n > 2 * t and n % t for n, _ in ex.shapes for t in ex.tiles), ex.id
            continue
        if isinstance(ex.task, tasks.HopperMatmul):   # hopper.cu's tiles: 64 deep slices, 4 slots, 64 rows
            assert (1, 1, 1) in ex.shapes and any(m != k != n != m for m, k, n in ex.shapes), ex.id
            assert any(k % 64 for _, k, _ in ex.shapes) and any(k > 4 * 64 for _, k, _ in ex.shapes), ex.id
            assert any(m % 64 and n % 64 for m, _, n in ex.shapes), ex.id
            continue
        if matmul.KERNELS[ex.launch.kernel].shapes is matmul.Shapes.ANY:
            assert (1, 1, 1) in ex.shapes, ex.id
            assert any(m != k != n != m for m, k, n in ex.shapes), ex.id
            assert any(any(d % t for d in s) for s in ex.shapes for t in ex.tiles), ex.id


@pytest.mark.parametrize("source", [None, "", 42, "this is not CUDA",
                                    'extern "C" __global__ void other(float* x) { x[0] = 1.0f; }',
                                    'extern "C" __global__ void matmul_naive(float* P) { P[0] = 1.0f; }',
                                    'extern "C" __global__ void matmul_naive(const float* M, const float* N, '
                                    'float* P, int Width) { while (true) {} }'])
def test_check_never_raises_for_a_wrong_kernel(source, monkeypatch):
    monkeypatch.setattr(cudacheck.config, "time_limit", 1.0)
    result = exercises.check("naive-1", source, quiet=True)
    assert not result and result.message.startswith("**Exercise naive-1")
    assert "**Hint:**" in result.message


def test_check_of_an_unknown_exercise_or_a_bad_value():
    assert not exercises.check("naive-99", "x", quiet=True)
    for value in (None, "a lot", True, float("nan"), [1]):
        result = exercises.check("naive-4", value, quiet=True)
        assert not result and result.kind in ("no answer", "not a number", "wrong value"), value


def test_value_answers_come_from_real_runs():
    for ex in VALUE_EXERCISES:
        expected = exercises.answer(ex.id)
        assert math.isfinite(expected) and expected > 0
        assert exercises.check(ex.id, expected, quiet=True)


@pytest.mark.parametrize("ex", VALUE_EXERCISES, ids=lambda e: e.id)
def test_a_value_answer_is_what_its_solution_computes(ex, monkeypatch):
    right = _answer(ex, exercises.solution(ex.id))
    assert exercises.answer(ex.id) == right
    # Another solution, another answer: nothing but the solution's code decides it.
    other = dataclasses.replace(ex, solution=dataclasses.replace(ex.solution, code=f"{ex.var} = 12345\n"))
    monkeypatch.setitem(exercises.EXERCISES, ex.id, other)
    assert exercises.answer(ex.id) == 12345
    assert exercises.check(ex.id, 12345, quiet=True)
    assert not exercises.check(ex.id, right, quiet=True)


def _from_book(source):
    """Whether a source is made from a kernel of the book: directly, through a wrong kernel
    of tiling_course.corpus, or through the exercise's solution."""
    return bool(source.book or source.wrong or source.base is not None and _from_book(source.base))


def test_a_change_to_a_book_kernel_reaches_the_exercises_made_from_it(monkeypatch):
    """With a line added to every kernel function of the book, every source made from one
    holds it (or stops, naming its exercise, where an edit's text is gone); the others
    are unchanged."""
    book = matmul.source
    monkeypatch.setattr(matmul, "source", lambda kernel: re.sub(r"(__global__[^{]*\{\n)", r"\1    // changed\n",
                                                                book(kernel)))
    changed = 0
    for ex in KERNEL_EXERCISES:
        for source in [ex.starter, ex.solution] + [w.source for w in ex.wrong]:
            try:
                text = source.text()
            except ValueError as e:
                assert f"exercise {ex.id}:" in str(e)
                continue
            assert ("    // changed\n" in text) == _from_book(source), (ex.id, source)
            changed += _from_book(source)
    assert changed > len(KERNEL_EXERCISES)
    assert "    // changed\n" in exercises.starter("tiling-1") and "    // changed\n" in exercises.starter("perf-2")


def test_a_change_to_a_kernel_file_reaches_the_exercises_made_from_it(monkeypatch):
    """{kernel_file = "hopper.cu"} is read on every call, as a book kernel is: a change to the
    file reaches every source made from it, and an edit whose text left it stops, naming
    its exercise."""
    made = [(ex, s) for ex in KERNEL_EXERCISES for s in [ex.starter, ex.solution] + [w.source for w in ex.wrong]
            if s.kernel_file]
    assert {ex.chapter for ex, _ in made} == {"09_hopper"} and {s.kernel_file for _, s in made} == {"hopper.cu"}
    read = sources.read
    monkeypatch.setattr(sources, "read", lambda name: "// changed\n" + read(name))
    assert all(s.text().startswith("// changed\n") for _, s in made)
    monkeypatch.setattr(sources, "read", lambda name: read(name).replace("mbar_arrive_expect_tx(bar, ROWS", "x(ROWS"))
    with pytest.raises(ValueError, match=r"exercise hp-2: .*hopper\.cu"):
        exercises.starter("hp-2")


def test_an_edit_whose_text_left_the_book_kernel_stops_loudly(monkeypatch):
    book = matmul.source
    monkeypatch.setattr(matmul, "source", lambda kernel: book(kernel).replace("Mds[ty][k] * Nds[k][tx]",
                                                                              "Nds[k][tx] * Mds[ty][k]"))
    with pytest.raises(ValueError, match=r"exercise tiling-2: .*tiled.*'Mds\[ty\]\[k\] \* Nds\[k\]\[tx\]'"):
        exercises.starter("tiling-2")
    assert "Nds[k][tx] * Mds[ty][k]" in exercises.solution("tiling-2")


# --------------------------------------------------------------------- the tasks
# tryout.run runs every task through one loop; a matrix product and the block transpose
# (sync-5) differ only in what tiling_course.tasks gives it.

TRANSPOSE = tasks.BlockTranspose()
PASS_TAIL = ("run on the CPU runtime in checked mode: no out-of-bounds access, race, divergent barrier or "
             "uninitialized read.")


def test_the_launch_table_names_the_task():
    assert tasks.from_table({"kernel": "tiled"}) == tasks.Matmul(matmul.Launch("tiled"))
    assert tasks.from_table({"task": "matmul", "kernel": "naive"}) == tasks.Matmul(matmul.Launch("naive"))
    assert tasks.from_table({"task": "block_transpose", "function": "bt"}) == tasks.BlockTranspose("bt")
    assert exercises.EXERCISES["sync-5"].task == TRANSPOSE and exercises.EXERCISES["sync-5"].launch is None
    assert exercises.EXERCISES["tiling-1"].task.launch == exercises.EXERCISES["tiling-1"].launch


def test_a_matrix_product_reads_as_before():
    out = tryout.run(None, "tiled", tile=4, shapes=[(8, 8, 8)], quiet=True, gpu=False)
    assert out.message == f"✓ `matmul_tiled` (tile 4) matches NumPy in float64 on 8x8·8x8, {PASS_TAIL}"


def test_the_block_transpose_reference_moves_each_element_within_its_tile():
    A = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)
    ref = TRANSPOSE.expected(A, 4)
    for r in range(8):
        for c in range(12):
            top, left = r - r % 4, c - c % 4
            assert ref[r, c] == A[top + c - left, left + r - top]


def test_a_racing_transpose_is_named_by_checked_mode():
    out = tryout.run(exercises.starter("sync-5"), TRANSPOSE, tile=8, shapes=[(8, 16)], quiet=True, gpu=False)
    assert not out and out.kind == "SharedMemoryRaceError" and out.shape == (8, 16)
    assert out.message.startswith("✗ `block_transpose` on A of 8 x 16, the CPU runtime in checked mode")
    assert "tile[" in str(out.error) and "read after write" in str(out.error)


def test_a_correct_transpose_passes_at_every_block_width():
    for tile in (1, 2, 8):
        inputs = TRANSPOSE.inputs((2 * tile, 3 * tile), np.random.default_rng())
        before = inputs[0].copy()
        A, _ = TRANSPOSE.run(exercises.solution("sync-5"), inputs, tile, "cpu", True)
        assert np.array_equal(A, TRANSPOSE.expected(before, tile)) and np.array_equal(inputs[0], before)
        out = tryout.run(exercises.solution("sync-5"), TRANSPOSE, tile=tile, quiet=True, gpu=False)
        sizes = f"{tile}x{tile}, {2 * tile}x{3 * tile}, {3 * tile}x{tile}"
        assert out.message == (f"✓ `block_transpose` (BLOCK_WIDTH {tile}) transposes every tile of A in place, bit "
                               f"for bit, on {sizes}, {PASS_TAIL}")


def test_a_transpose_with_wrong_values_names_the_element_and_its_writer():
    """One wrong element, in block (1, 1) of a 2 x 3 grid: the message names it, its value,
    and the thread that stored it."""
    src = exercises.solution("sync-5").replace(
        "A[index] = tile[tx][ty];", "A[index] = (blockIdx.x == 1 && blockIdx.y == 1 && tx == 2 && ty == 3) ? 7.0f "
                                    ": tile[tx][ty];")
    out = tryout.run(src, TRANSPOSE, tile=4, shapes=[(8, 12)], quiet=True, gpu=False)
    d = out.details
    assert out.kind == "wrong values" and out.shape == (8, 12)
    assert (d["array"], d["row"], d["col"], d["got"], d["count"], d["total"]) == ("A", 7, 6, 7.0, 1, 96)
    assert d["block"] == (1, 1, 0) and d["threads"] == [(2, 3, 0)]
    assert (f"1 of 96 elements of A differ from A with each tile transposed. A[7][6] should be {d['expected']:.6g} "
            "but is 7. Thread (2, 3, 0) of block (1, 1, 0) (blocks of 4 x 4 threads) stores it.") in out.message


def test_a_transpose_on_a_matrix_of_part_tiles_is_refused():
    out = tryout.run(exercises.solution("sync-5"), TRANSPOSE, tile=16, shapes=[(16, 20)], quiet=True, gpu=False)
    assert out.kind == "shape refused" and "cannot take A of 16 x 20" in out.message
    assert "multiples of BLOCK_WIDTH (16)" in out.message


@pytest.mark.gpu
def test_the_transpose_runs_on_the_gpu_as_on_the_cpu():
    inputs = TRANSPOSE.inputs((32, 48), np.random.default_rng())
    A, fn = TRANSPOSE.run(exercises.solution("sync-5"), inputs, 16, "gpu", False)
    assert fn.backend == "gpu" and np.array_equal(A.get(), TRANSPOSE.expected(inputs[0], 16))
    out = tryout.run(exercises.solution("sync-5"), TRANSPOSE, tile=16, quiet=True, gpu=True)
    assert out and "the CPU runtime in checked mode and the GPU" in out.message


# The histogram (sync-6): threads of a block take turns on the CPU runtime, so a racy
# histogram's plain run counts right; the checker never trusts that run.

HISTOGRAM = tasks.Histogram()


def test_a_racy_histogram_counts_right_in_a_plain_cpu_run_and_fails_the_check(monkeypatch):
    inputs = HISTOGRAM.inputs((1000, 4), np.random.default_rng())
    hist, _ = HISTOGRAM.run(exercises.starter("sync-6"), inputs, 128, "cpu", False)
    assert np.array_equal(hist, np.bincount(inputs[0], minlength=4))   # the lucky right answer
    monkeypatch.setattr(cudacheck.config, "global_races", False)      # a reader who turned the check off
    result = exercises.check("sync-6", exercises.starter("sync-6"), quiet=True)
    assert not result and result.kind == "GlobalMemoryRaceError" and result.error.array == "hist"
    assert cudacheck.config.global_races is False                      # left as the reader set it
    assert "atomicAdd" in result.message and "plain runs may still show the right result" in result.message


def test_a_volatile_count_is_no_race_but_not_a_pass():
    """The += through a volatile pointer is no data race in CUDA's memory model, so checked
    mode is silent, and the CPU runtime counts right; the requirement refuses it."""
    (source,) = [src for w, src in exercises.wrong_answers("sync-6") if w.name == "volatile_count"]
    out = tryout.run(source, HISTOGRAM, tile=128, shapes=[(389, 16)], quiet=True, gpu=False)
    assert out, out.message   # checked mode alone passes it
    result = exercises.check("sync-6", source, quiet=True)
    assert result.kind == "requirement" and "in two accesses" in result.message and "`atomicAdd`" in result.message


def test_a_histogram_passes_with_its_shapes_and_block_size_named():
    out = tryout.run(exercises.solution("sync-6"), HISTOGRAM, tile=64, shapes=[(1, 16), (200, 5)], quiet=True,
                     gpu=False)
    assert out.message == ("✓ `histogram` (64 threads per block) counts every value exactly on 1 value in 16 bins, "
                           f"200 values in 5 bins, {PASS_TAIL}")
    assert HISTOGRAM.run(exercises.solution("sync-6"), HISTOGRAM.inputs((1, 3), np.random.default_rng()), 32,
                         "cpu", True)[0].sum() == 1
    out = tryout.run(exercises.solution("sync-6"), HISTOGRAM, tile=64, shapes=[(0, 5)], quiet=True, gpu=False)
    assert out.kind == "shape refused" and "at least one value" in out.message


@pytest.mark.gpu
def test_the_histogram_runs_on_the_gpu_and_a_racy_one_loses_counts_there():
    inputs = HISTOGRAM.inputs((1 << 16, 2), np.random.default_rng())
    hist, fn = HISTOGRAM.run(exercises.solution("sync-6"), inputs, 256, "gpu", False)
    assert fn.backend == "gpu" and np.array_equal(hist.get(), np.bincount(inputs[0], minlength=2))
    hist, _ = HISTOGRAM.run(exercises.starter("sync-6"), inputs, 256, "gpu", False)
    assert hist.get().sum() < inputs[0].size
    out = tryout.run(exercises.solution("sync-6"), HISTOGRAM, tile=128, quiet=True, gpu=True)
    assert out and "the CPU runtime in checked mode and the GPU" in out.message


# ----------------------------------------------------------------- the data files

@pytest.fixture
def data(tmp_path):
    """A copy of the package's data files, to break."""
    folder = tmp_path / "exercises"
    shutil.copytree(resources.files(exercises), folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return folder


def test_a_copy_of_the_data_loads_as_the_package_does(data):
    loaded = exercises.load(data)
    assert list(loaded) == list(exercises.EXERCISES)
    for ex in loaded.values():
        assert ex.part(ex.starter.text()) == exercises.starter(ex.id)
        assert ex.part(ex.solution.text()) == exercises.solution(ex.id)


BROKEN = [  # (file, text, replacement, what the error says)
    ("01_naive.toml", 'title = "Write the naive kernel"\n', 'title = "Write the naive kernel"\ncolour = "red"\n',
     r"01_naive\.toml, exercise naive-1: unknown key colour"),
    ("01_naive.toml", 'name = "no_guard"\n', 'name = "no_guard"\nseverity = 3\n',
     r"01_naive\.toml, exercise naive-1, wrong answer no_guard: unknown key severity"),
    ("01_naive.toml", 'solution = {book = "naive"}', 'solution = {book = "naive", edit = []}',
     r"01_naive\.toml, exercise naive-1: unknown key edit"),
    ("02_tiling.toml", 'check = "staged_loads"\n', 'check = "staged_loads"\nmost = 3\n',
     r"02_tiling\.toml, exercise tiling-4: requirement staged_loads: .*'most'"),
    ("02_tiling.toml", 'bound = "ceil_div(m, tile) * k * n"', '''bound = "__import__('os').getcwd()"''',
     r"02_tiling\.toml, exercise tiling-4: .*not allowed in the formula"),
    ("01_naive.toml", 'starter_fails = "wrong values"\n', "",
     r"01_naive\.toml, exercise naive-1: starter_fails missing"),
    ("01_naive.toml", "tiles = [16]", 'tiles = "16"', r"01_naive\.toml, exercise naive-1: tiles should be list"),
    ("01_naive.toml", 'solution = {book = "naive"}', 'solution = {book = "naif"}',
     r"01_naive\.toml, exercise naive-1: no such source: book = 'naif'"),
    ("09_hopper.toml", 'solution = {kernel_file = "hopper.cu"}', 'solution = {kernel_file = "hoper.cu"}',
     r"09_hopper\.toml, exercise hp-1: no such source: kernel_file = 'hoper.cu'"),
    ("01_naive.toml", 'launch = {kernel = "naive"}', 'launch = {kernel = "naif"}',
     r"01_naive\.toml, exercise naive-1: .*no kernel 'naif'"),
    ("01_naive.toml", "[[exercise]]", "[[exercise]", r"01_naive\.toml: cannot read it as TOML"),
    ("03_syncthreads.toml", 'launch = {task = "block_transpose"', 'launch = {task = "transpose"',
     r"03_syncthreads\.toml, exercise sync-5: no task 'transpose'; the tasks are matmul, block_transpose, "
     r"histogram"),
    ("03_syncthreads.toml", 'launch = {task = "block_transpose"', 'launch = {task = "block_transpose", kernel = "x"',
     r"03_syncthreads\.toml, exercise sync-5: .*unexpected keyword argument 'kernel'"),
    ("03_syncthreads.toml", "shapes = [[16, 16], [32, 48]", "shapes = [[16, 16, 16], [32, 48]",
     r"03_syncthreads\.toml, exercise sync-5: shapes should be a list of lists of 2 integers"),
]


@pytest.mark.parametrize("name,old,new,error", BROKEN, ids=[b[3].split(": ", 1)[-1][:40] for b in BROKEN])
def test_a_broken_data_file_is_named_in_the_error(data, name, old, new, error):
    text = (data / name).read_text()
    assert old in text
    (data / name).write_text(text.replace(old, new, 1))
    with pytest.raises(exercises.DataError, match=error):
        exercises.load(data)


def test_a_missing_source_file_is_named_in_the_error(data):
    (data / "cu" / "naive-1.starter.cu").unlink()
    with pytest.raises(exercises.DataError, match=r"01_naive\.toml, exercise naive-1: cannot read .*naive-1\.starter"):
        exercises.load(data)


def test_requirement_bounds_are_formulas_not_code():
    bound = requirements.formula("ceil_div(m, tile) * k * n - (n // 2 + 1)")
    assert bound(17, 5, 4, 16) == 2 * 5 * 4 - 3
    for text in ["__import__('os').getcwd()", "m ** 2", "m / 2", "-m", "1.5", "m if k else n", "ceil_div(m)",
                 "max(m, n)", "width", "(m"]:
        with pytest.raises(ValueError):
            requirements.formula(text)


# ------------------------------------------------------------------------ the cells

def test_show_solution_prints_a_code_block(capsys):
    exercises.show_solution("naive-1")
    exercises.show_solution("perf-3")
    out = capsys.readouterr().out
    assert "```cuda\n" + exercises.solution("naive-1").rstrip() + "\n```" in out
    assert "```python\n" in out


def test_the_student_edition_loads_the_same_exercises_without_their_solutions(capsys):
    """student/ (the installed package's data) gives every exercise the same starter and,
    for a value exercise, the same verdict on its right answer and its known wrong ones,
    from a salted hash: the answer itself is in no file of it."""
    folder = resources.files(exercises).joinpath("student")
    student = exercises.load(folder)
    assert list(student) == list(exercises.EXERCISES)
    tables = {t["id"]: t for f in folder.iterdir() if f.name.endswith(".toml")
              for t in tomllib.loads(f.read_text())["exercise"]}
    for ex in student.values():
        assert ex.starter.text() == exercises.starter(ex.id)
        assert ex.solution is None and ex.wrong == () and ex.explanation == ""
        if ex.kind == "value":
            right = exercises.answer(ex.id)
            assert ex.answer_sha256 and "answer" not in tables[ex.id], ex.id
            assert right not in [v for v in tables[ex.id].values() if isinstance(v, (int, float))], ex.id
            assert exercises.accepts(student[ex.id], float(right)), ex.id
            for w in exercises.EXERCISES[ex.id].wrong:
                if isinstance(w.source, (int, float)):
                    assert not exercises.accepts(student[ex.id], float(w.source)), (ex.id, w.name)


@pytest.mark.parametrize("ex", VALUE_EXERCISES, ids=lambda e: e.id)
def test_a_value_answer_is_checked_within_its_tolerance_in_both_editions(ex):
    """The rule (exercises' docstring): within the tolerance, give or take an eighth of it;
    a whole number exactly."""
    student = exercises.load(resources.files(exercises).joinpath("student"))[ex.id]
    right = float(exercises.answer(ex.id))
    t = ex.tolerance
    inside = [right] + ([right * (1 + 0.8 * t), right * (1 - 0.8 * t)] if t else [right + 1e-10])
    outside = [right * (1 + 1.2 * t), right * (1 - 1.2 * t)] if t else [right + 1, right - 1, right + 0.5]
    for edition in (ex, student):
        assert all(exercises.accepts(edition, v) for v in inside), (edition.id, inside)
        assert not any(exercises.accepts(edition, v) for v in outside), (edition.id, outside)


def test_the_student_edition_says_where_the_solutions_are(monkeypatch, capsys):
    right = exercises.answer("naive-4")
    student = exercises.load(resources.files(exercises).joinpath("student"))
    monkeypatch.setattr(exercises, "EXERCISES", student)
    with pytest.raises(exercises.NotInThisEdition):
        exercises.solution("naive-1")
    exercises.show_solution("naive-1")
    assert "instructor edition" in capsys.readouterr().out
    with pytest.raises(exercises.NotInThisEdition):
        exercises.answer("naive-4")
    assert exercises.check("naive-4", right, quiet=True) and not exercises.check("naive-4", right + 1, quiet=True)


def test_result_shows_once_in_a_notebook_cell(monkeypatch, capsys):
    """check() displays its result; as the value of the same cell it is not shown again,
    but it is when shown from a later cell."""
    monkeypatch.setattr(checker, "execution_count", lambda: 7)
    result = exercises.check("naive-4", 1)
    assert capsys.readouterr().out.count("not yet") == 1
    result._ipython_display_()
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(checker, "execution_count", lambda: 8)
    result._ipython_display_()
    assert "not yet" in capsys.readouterr().out


@pytest.mark.parametrize("stem", exercises.CHAPTERS)
def test_chapter_cells_have_the_notebook_form(stem):
    """nbformat-4 cells: an introduction, the import, then per exercise a heading, the
    starter and the check; no solution (the notebooks are the student edition)."""
    cells = exercises.cells(stem)
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = 4   # cell ids are sync_notebooks.py's to give
    nb.cells = [nbformat.from_dict(c) for c in cells]
    nbformat.validate(nb)
    form = [(c["cell_type"], c["metadata"].get("tags", []), c["source"]) for c in cells]
    assert form[0][:2] == ("markdown", []) and form[0][2].startswith("## Exercises")
    assert form[1] == ("code", [], "from tiling_course import exercises")
    rest = form[2:]
    assert len(rest) == 3 * len(exercises.chapter(stem))
    for i, ex in enumerate(exercises.chapter(stem)):
        md, start, chk = rest[3 * i:3 * i + 3]
        assert md[0] == "markdown" and md[2].startswith(f"### Exercise {i + 1}: {ex.title}")
        assert start[:2] == ("code", [])
        options = hopper.options(ex.task.precision) if isinstance(ex.task, tasks.HopperMatmul) else ()
        into = (f"--into {ex.region[0]}:{ex.region[1]}",) if ex.region else ()
        head = {"value": "", "program": f"%%cuda_program --cpu --check --save {ex.var}\n"}.get(
            ex.kind, " ".join(("%%cuda", ex.var) + into + options) + "\n")
        assert start[2] == head + exercises.starter(ex.id).rstrip()
        assert chk == ("code", [], f'exercises.check("{ex.id}", {ex.var})')
    assert "show_solution" not in str(cells)


def test_the_student_edition_reads_the_kernels_its_value_exercises_launch(monkeypatch, tmp_path):
    """The installed package holds only student/ (no instructor cu/): cu_file must read the
    edition at hand, and the student edition must hold every kernel a value exercise launches."""
    (tmp_path / "cu").mkdir()
    (tmp_path / "cu" / "probe.cu").write_text("// the edition at hand\n")
    monkeypatch.setattr(exercises, "default_root", lambda: tmp_path)
    assert exercises.cu_file("probe.cu") == "// the edition at hand\n"
    student_root = ROOT / "course" / "tiling_course" / "exercises" / "student"
    monkeypatch.setattr(exercises, "default_root", lambda: student_root)
    names = [n for ex in VALUE_EXERCISES for n in re.findall(r'cu_file\("([^"]+)"\)', exercises.starter(ex.id))]
    assert names, "no value exercise launches a kernel of cu/ any more: drop this test"
    for name in names:
        assert "__global__" in exercises.cu_file(name)


# ---- Exercises on one function of a long file (region) ----------------------------------------

REGION_EXERCISES = [ex for ex in KERNEL_EXERCISES if ex.region]


def test_a_region_exercise_shows_and_ships_only_its_function():
    """Chapter 9's starters are one function each (consume_tile, load_slice), not the whole
    1,200-line file: in the notebook, in the student edition's files, and in the solution."""
    assert {ex.id: ex.region for ex in REGION_EXERCISES} == {
        "hp-1": ("hopper.cu", "consume_tile"), "hp-2": ("hopper.cu", "load_slice"),
        "hp-3": ("hopper.cu", "consume_tile")}
    book = sources.read("hopper.cu")
    student_cu = ROOT / "course" / "tiling_course" / "exercises" / "student" / "cu"
    for ex in REGION_EXERCISES:
        start, solution = exercises.starter(ex.id), exercises.solution(ex.id)
        assert solution == sources.definition(book, ex.region[1]) and start != solution
        assert len(start.splitlines()) < 50 and "__global__" not in start and "#define" not in start
        assert (student_cu / f"{ex.id}.starter.cu").read_text() == start
        # the check puts the reader's function in place of the book's: the solution gives the file back
        whole, lines = ex.whole(solution)
        assert whole == book and whole.splitlines()[lines[0] - 1:lines[1]] == solution.splitlines()
        assert ex.whole(book) == (book, None)          # a whole file is checked as it is
    for path in student_cu.glob("*.cu"):
        assert 'extern "C" __global__ void __launch_bounds__(WS_THREADS, 1)' not in path.read_text(), path


def test_a_region_check_says_where_the_readers_lines_went():
    ex = exercises.EXERCISES["hp-2"]
    result = exercises.check("hp-2", exercises.starter("hp-2"), quiet=True)
    first, last = (i + 1 for i in sources.span(sources.read("hopper.cu"), "load_slice"))
    assert not result and result.kind == ex.starter_fails
    assert f"(Your cell: hopper.cu:{first}–{last})" in result.message
    assert exercises.check("hp-2", exercises.solution("hp-2"), quiet=True)


def test_the_magic_compiles_a_function_in_place_and_keeps_the_cell(monkeypatch, capsys):
    import IPython.display
    from IPython.core.interactiveshell import InteractiveShell

    from tiling_course import magic
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    shell = InteractiveShell.instance()
    cell = exercises.starter("hp-2")
    magic.cuda("hp2_src --into hopper.cu:load_slice -arch=sm_90a -std=c++17", cell)
    assert shell.user_ns["hp2_src"] == cell and capsys.readouterr().out == ""
    assert shown[0].startswith("Compiled `load_slice` into hopper.cu (`matmul_tma_wgmma`, ")
    magic.cuda("hp2_src --into hopper.cu:no_such_function -arch=sm_90a", cell)
    assert "%%cuda --into: 'no_such_function': 0 definitions at the top level, not one" in capsys.readouterr().out
    magic.cuda("hp2_src --into nofile.cu:load_slice", cell)
    assert "--into takes FILE:FUNCTION" in capsys.readouterr().out


def test_span_finds_each_kind_of_definition_once():
    text = sources.read("hopper.cu")
    lines = text.splitlines()
    first, last = sources.span(text, "load_slice")
    assert lines[first].startswith("// Slice `slice` of k") and lines[last] == "}"
    first, last = sources.span(text, "matmul_tma_wgmma")
    assert lines[first].startswith("// matmul_tma_wgmma:") and "store_tile<K1_BN, 1>" in lines[last - 1]
    first, last = sources.span(text, "FloatPair")
    assert lines[last] == "};"
    assert sources.definition(text, "K1_SMEM").startswith("#define K1_SMEM ")
    with pytest.raises(KeyError, match="setmaxnreg"):       # a template's specialisations: not one
        sources.span(text, "setmaxnreg")
    part = "int f(int x) {\n    return x + 1;   // a } in a comment\n}\n"
    # the comment right above a definition is its own; braces in comments and strings do not count
    text = "// head\n\n// f's comment\n" + part + "int g() { return \"}\"[0]; }\n"
    whole, lines_ = sources.splice(text, "f", "int f(int x) { return x; }")
    assert whole == "// head\n\nint f(int x) { return x; }\nint g() { return \"}\"[0]; }\n" and lines_ == (3, 3)
    assert sources.definition(text, "g") == "int g() { return \"}\"[0]; }\n"


def test_each_checked_exercise_says_how_long_its_check_takes():
    """Colab's VM has 2 CPU cores: each kernel or program exercise carries what its solution's
    check took there (CPU seconds, the compiler's cache empty, then full), under a minute, and
    its chapter says so under the statement."""
    for ex in KERNEL_EXERCISES + PROGRAM_EXERCISES:
        assert len(ex.check_seconds) == 2, ex.id
        first, later = ex.check_seconds
        assert 0 < later <= first < 60, (ex.id, ex.check_seconds)
        cells = exercises.cells(ex.chapter)
        statement = next(c["source"] for c in cells if c["source"].startswith("### Exercise")
                         and ex.title in c["source"].splitlines()[0])
        assert f"*The check takes about {first:.0f} s the first time (it compiles) and " in statement, ex.id
