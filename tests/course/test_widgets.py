"""The book's widgets build under the installed ipywidgets (8.x, requirements.txt) and under
Colab's 7.7.1 (.venv-colab with the wheel installed: tests/conftest.py's colab_install), and are
wired for a page without a kernel: every state embedded, one Tab level per control, and a
front-end link from each control's index to every Tab of its level, in the embedded state.
tests/site/test_widgets_browser.py clicks them on the built site."""
import functools
import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tiling_course import registry, switch, widgets

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
# Every widget of the book, from the course's registry (switch name -> its spec, its builder,
# the function's name), so that a widget added to a chapter there is tested here.
SPECS = {w.name: w.spec for w in registry.widgets()}
BUILDERS = {w.name: w.builder for w in registry.widgets()}
NAMES = [w.function for w in registry.widgets()]
# The widgets that ask for a prediction first, one for each part of the book (chapters 1-4, 5-6, 7-8).
PREDICT = {w.name: w.function for w in registry.widgets() if w.predict}


@functools.cache
def _states(name):
    """{state key: HTML} of the widget `name`, every state rendered once for this module
    (switch.all_states): the rungs and the thread map draw a figure for each state, seconds
    apiece, and seven tests here read them. Each widget's own build (its builder) is not
    this: test_every_state_is_embedded_and_named_once compares the two."""
    _, _, controls, render, _ = SPECS[name]()
    return switch.all_states(controls, render)


@pytest.fixture(autouse=True, scope="module")
def _states_forgotten():
    """The rendered states leave with the module: a test process that keeps megabytes of
    pictures makes every later launch's fork slower."""
    yield
    _states.cache_clear()


# Run by this interpreter and by .venv-colab's: builds every widget and describes its wiring.
DESCRIBE = r"""
import json, sys
import ipywidgets as w
from ipywidgets.embed import embed_data
from tiling_course import widgets
out = {"version": w.__version__}
for name in sys.argv[1:]:
    box = getattr(widgets, name)()
    tabs = [m for m in w.Widget.widgets.values() if isinstance(m, w.Tab)] if hasattr(w.Widget, "widgets") else []
    state = embed_data(views=[box])["manager_state"]["state"]
    links = [s["state"] for s in state.values() if s["model_name"] == "LinkModel"]
    ids = {b.model_id: k for k, b in enumerate(box.controls)}
    out[name] = {
        "states": sorted(box.states), "index": [b.index for b in box.controls],
        "options": [list(b.options) for b in box.controls],
        "links": [[ids.get(l["source"][0].replace("IPY_MODEL_", "")), l["source"][1], l["target"][1]]
                  for l in links if l["source"][0].replace("IPY_MODEL_", "") in ids],
        "link_targets_are_tabs": all(state[l["target"][0].replace("IPY_MODEL_", "")]["model_name"] == "TabModel"
                                     for l in links),
        "selected": [sorted({t.selected_index for t in lk}) for lk in
                     [[l.target[0] for l in box.links if l.source[0] is b] for b in box.controls]],
        "hint": box.children[0].value,
    }
print(json.dumps(out))
"""


def _describe(python, env=None):
    proc = subprocess.run([python, "-c", DESCRIBE, *NAMES], capture_output=True, text=True, timeout=600,
                          env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _check(described):
    for fn, (name, spec) in zip(NAMES, SPECS.items()):
        d = described[fn]
        _, hint, controls, render, initial = spec()
        labels = [[str(label) for label, _ in options] for _, options in controls]
        assert d["options"] == labels
        assert d["states"] == sorted(_states(name)), name
        start = [opts.index(str(x)) for opts, x in zip(labels, initial)]
        assert d["index"] == start, name
        assert d["selected"] == [[i] for i in start], f"{name}: Tabs not at the controls' start: {d['selected']}"
        # control k is linked to every Tab of level k: 1, n0, n0*n1, ... Tabs
        expected, tabs = [], 1
        for k, opts in enumerate(labels):
            expected += [[k, "index", "selected_index"]] * tabs
            tabs *= len(opts)
        assert sorted(d["links"]) == sorted(expected), f"{name}: links {d['links']}"
        assert d["link_targets_are_tabs"], name
        assert html.escape(hint) in d["hint"] and switch.STYLE in d["hint"], name


def test_widgets_build_under_the_installed_ipywidgets():
    import ipywidgets
    assert ipywidgets.__version__ == "8.1.9"
    _check(_describe(sys.executable))


def test_widgets_build_under_colabs_ipywidgets(colab_install):
    """Slow (conftest marks it): the fixture builds the wheel, makes .venv-colab if it is
    missing or stale, and installs the wheel there, for what the book adds to Colab (libclang,
    which the CPU runtime needs). The widgets are this checkout's, first on the path."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "course"), str(ROOT / "runtime")]))
    described = _describe(str(colab_install.python), env)
    assert described["version"] == "7.7.1"
    _check(described)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_state_is_embedded_and_named_once(name):
    box = BUILDERS[name]()
    assert box.states == _states(name)
    for key, content in box.states.items():
        assert content.count(f"data-state='{html.escape(key, quote=True)}'") == 1
    assert box.layout is not None and f"tc-switch-{name}" in box._dom_classes


def test_sweep_reaches_every_state():
    pytest.importorskip("selenium")
    from tests.support.browser import sweep_states
    for sizes, start in (([5], [3]), ([3, 3], [1, 1]), ([2, 5], [0, 3])):
        walk = sweep_states(start, sizes)
        assert walk[-1] == start and len({tuple(c) for c in walk}) == len(walk)
        n = 1
        for s in sizes:
            n *= s
        assert len(walk) == n


def test_thread_map_facts_agree_with_the_grid():
    f = widgets.thread_map_facts(6, 4)
    assert (f["grid"], f["threads"], f["working"], f["idle"], f["overhanging"]) == (2, 64, 36, 28, 3)
    assert widgets.thread_map_facts(8, 4)["overhanging"] == 0


def test_barrier_states_match_the_corpus():
    assert widgets.barrier_facts(True, True)["finding"] is None
    for first, second, name in ((False, True, "no_first_barrier"), (True, False, "no_second_barrier")):
        f = widgets.barrier_facts(first, second)
        assert f["kernel"] == name and f["finding"][0] == "SharedMemoryRaceError"
    assert widgets.barrier_facts(False, False)["finding"][0] == "SharedMemoryRaceError"


def test_edge_states_match_the_bounds():
    """Chapter 4: a thread loads from M (or N) exactly when its element of the tile lies
    inside the matrix, and stores 0.0f otherwise; the figure's case agrees with edge_loads."""
    tile = widgets.EDGE_TILE
    for width in widgets.EDGE_WIDTHS:
        for bx, by in widgets.EDGE_BLOCKS:
            for ph in range(-(-width // tile)):
                f = widgets.edge_facts(width, (bx, by), ph)
                for tx in range(tile):
                    for ty in range(tile):
                        m = (by * tile + ty, ph * tile + tx)
                        n = (ph * tile + ty, bx * tile + tx)
                        for src, rc in (("M", m), ("N", n)):
                            inside = rc[0] < width and rc[1] < width
                            assert f[src]["loaded"].get((tx, ty)) == (rc if inside else None)
                            assert ((tx, ty) in f[src]["zero"]) == (not inside)
    f = widgets.edge_facts(6, (1, 1), 1)
    assert len(f["M"]["loaded"]) == len(f["N"]["loaded"]) == 4


def test_phase_stepper_sums_end_at_the_stored_p():
    f = widgets.phase_facts()
    width, tile, (bx, by) = f["width"], f["tile"], f["block"]
    assert len(f["phases"]) == width // tile
    for t, s in f["phases"][-1]["sums"].items():
        assert s == f["P"][by * tile + t[1], bx * tile + t[0]]
    for ph, p in enumerate(f["phases"]):
        for (tx, ty), terms in p["terms"].items():
            assert [(m, n) for m, n in terms] == [((by * tile + ty, ph * tile + k), (ph * tile + k, bx * tile + tx))
                                                  for k in range(tile)]


def test_rung_facts_divide_the_tile_among_the_threads():
    for _, kernel in widgets.RUNGS:
        f = widgets.rung_facts(kernel)
        assert f["bm"] * f["bn"] == f["threads"] * f["per_thread"], kernel
    assert widgets.rung_facts("tiled")["per_thread"] == 1


def test_rung_explorer_reaches_rung_6_with_its_stored_measurements():
    """Chapter 6 has six rungs, and so has its widget: rung 6 is a state, drawn from a checked
    run of ladder6_pipelined, whose one dynamic shared array is shown as its two tiles, and
    every rung's state quotes the stored measurements of both GPUs at Width 4096."""
    from tiling_course import matmul
    from tiling_course.measure import perfdata, tuning
    from tiling_course.perfplots import LADDER

    kernels = [k for _, k in widgets.RUNGS]
    assert kernels == LADDER + ["ladder6_pipelined"]
    assert [label for label, _ in widgets.RUNGS][-1] == "rung 6"
    rendered = _states("rungs")
    states = {kernel: html.unescape(rendered[switch.state_key([label])]) for label, kernel in widgets.RUNGS}
    assert len(rendered) == len(widgets.RUNGS) == 7

    f = widgets.rung_facts("ladder6_pipelined")
    c = matmul.PIPELINE_DEFAULTS["ladder6_pipelined"]
    assert (f["bm"], f["bn"]) == (c["BM"], c["BN"])
    assert f["views"] == {"Ms": (c["STAGES"], c["BK"], c["BM"] + c["MPAD"]), "Ns": (c["STAGES"], c["BK"], c["BN"])}
    assert f["shared"]["smem"][0] * 4 == matmul.pipeline_shared_bytes("ladder6_pipelined", "fp32")

    # Rung 6: the tuner's fastest correct configuration on each GPU, which is the source's
    # defaults, so the picture shows the tiles that were measured.
    defaults = widgets.source_defaults("ladder6_pipelined")
    rung6 = widgets.rung_measured("ladder6_pipelined")
    assert [d for d, *_ in rung6] == [t.device for t in tuning.tunings()] and len(rung6) == 2
    for (_, tflops, frac, where), t in zip(rung6, tuning.tunings()):
        best = t.best("ladder6_pipelined")
        assert (tflops, frac) == (best.tflops, best.frac_cublas)
        assert all(defaults[k] == v for k, v in best.config.items()), best.config
        assert where.endswith("the source's defaults, which the picture shows")
    text = states["ladder6_pipelined"]
    for device, tflops, frac, _ in rung6:
        assert f"{tflops:.1f} TFLOP/s on the {device}, {frac:.2f} of cuBLAS" in text
    assert "Ms[2][16][132], Ns[2][16][256]" in text

    # Rungs up to 5: the ladder's benchmark, the numbers of the chapter's ladder table.
    for kernel in LADDER:
        expected = [(ds.device, ds.result(kernel, 32, 4096)) for ds in perfdata.datasets()]
        got = widgets.rung_measured(kernel)
        assert [(d, t, fr) for d, t, fr, _ in got] == [(d, r.tflops, r.frac_cublas) for d, r in expected]
        text = states[kernel]
        assert all(f"{t:.1f} TFLOP/s on the {d}" in text for d, t, _, _ in got), kernel


# ---- the predict-first widgets --------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PREDICT))
def test_a_predict_widget_shows_nothing_before_the_guess(name):
    """Every state whose guess is "?" holds the question only; every other state says whether
    the guess was right, and exactly one guess per first control is."""
    _, _, controls, _, initial = SPECS[name]()
    assert initial[1] == widgets.NO_GUESS and controls[1][1][0][0] == widgets.NO_GUESS
    states = _states(name)
    for (label, _), in [[c] for c in controls[0][1]]:
        shown = {g: states[switch.state_key([label, g])] for g, _ in controls[1][1]}
        assert "Right." not in shown[widgets.NO_GUESS] and "Not this time" not in shown[widgets.NO_GUESS]
        verdicts = [("Right." in text) for g, text in shown.items() if g != widgets.NO_GUESS]
        assert sum(verdicts) <= 1 and all("Right." in t or "Not this time" in t
                                          for g, t in shown.items() if g != widgets.NO_GUESS), label


@pytest.mark.parametrize("name", sorted(PREDICT))
def test_a_predict_widgets_question_sets_its_code_as_code(name):
    """The question is HTML: a source line in it is a <code>, not Markdown's raw backticks
    (chapter 5's coalescing widget showed `P[row * Width + col] = sum;` with its backticks)."""
    texts = _states(name).values()
    assert not any("`" in text for text in texts), name
    if name == "coalesce":
        assert all("<code>" in text for text in texts)


def test_race_replay_is_the_barrier_free_transpose_run_in_each_order():
    """(1, 0) first reads tile[1][0] before (0, 1) stored it (the CPU runtime's shared memory
    starts at zero); (0, 1) first, the other way round; in lock step nothing is wrong. Checked
    mode reports the race in every case."""
    forward, reverse, step = (widgets.race_replay_facts(o) for _, o in widgets.RACE_ORDERS)
    assert forward["A"] == [[1, 0], [2, 4]] and reverse["A"] == [[1, 3], [0, 4]]
    assert step["A"] == [[1, 3], [2, 4]]
    assert {f["finding"] for f in (forward, reverse, step)} == {"SharedMemoryRaceError"}
    render = widgets.race_replay_spec()[3]
    right = {o: html.unescape(render(o, "3")) for _, o in widgets.RACE_ORDERS}
    assert "Right." in right["reverse"] and "Right." in right["lock step"] and "answer is 0" in right["forward"]


def test_coalesce_quiz_counts_sectors_as_by_hand():
    """Warp 0 of a 16 x 16 block is rows 0 and 1: the naive kernel's M is one element per row
    (2 sectors), its N one row segment of 16 floats (64 bytes, 2 sectors); with row and col
    swapped its lanes walk down a column (16 sectors); the tiled kernel's load of M's tile is
    two row segments of 16 floats (4 sectors)."""
    expected = {"naive: M": (2, 2, True), "naive: N": (2, 16, True), "swapped: M": (16, 16, False),
                "swapped: P": (16, 32, False), "tiled: M": (4, 32, True)}
    for label, case in widgets.COALESCE_CASES:
        f = widgets.coalesce_facts(*case)
        sectors, elements, coalesced = expected[label]
        assert (f["sectors"], f["elements"], f["apart"] <= 1) == (sectors, elements, coalesced), label
        assert str(f["sectors"]) in widgets.COALESCE_GUESSES


def test_host_bug_quiz_reads_the_records_and_checked_mode():
    from tiling_course import programs
    records = programs.records()["bugs"]
    for name, bug in programs.BUGS.items():
        f = widgets.host_bug_facts(name)
        code = records[name]["exit_code"]
        assert f["outcome"] == ("crashed" if code is None else "ran to the end" if code == 0 else
                                "stopped with an error"), name
        assert f["finding"] == bug.reports, name
        assert f["outcome"] in widgets.HOST_GUESSES


def test_the_questions_on_the_predict_widgets_agree_with_them():
    """Q3.7, Q5.6 and Q7.6 ask about what these widgets show; their right answers are what
    the widgets compute."""
    from tiling_course import programs, quiz

    def right(chapter, n):
        q = quiz.load(chapter)[n - 1]
        (answer,) = [a["answer"] for a in q["answers"] if a["correct"]]
        return q["question"], answer
    question, answer = right("03_syncthreads", 7)
    assert "race replay" in question and "(0, 1) first" in question and answer.startswith("<code>A[1][0]</code>")
    A = widgets.race_replay_facts("reverse")["A"]
    assert A[1][0] != widgets.RACE_A[0][1] and A[0][1] == widgets.RACE_A[1][0]   # A[1][0] wrong, A[0][1] right
    question, answer = right("05_performance", 6)
    assert "sector predictor" in question and answer.startswith("16:")
    assert widgets.coalesce_facts("naive", "swapped", "M", "R")["sectors"] == 16
    assert (widgets.coalesce_facts("naive", None, "M", "R")["sectors"], widgets.coalesce_facts(
        "naive", None, "M", "R")["bytes_used"]) == (2, 8)
    question, answer = right("07_program", 6)
    assert "host-bug predictor" in question and "never copied back" in answer
    records = programs.records()["bugs"]
    both = [name for name, r in records.items() if r["exit_code"] == 0 and r["stdout"].count("PASSED") == 2]
    assert "missing copy back" in both
    for wrong in ("size in elements", "double free", "host reads device memory"):
        assert wrong not in both


def test_each_part_of_the_book_has_a_predict_widget_in_its_chapter():
    """Chapters 1-4 (the lecture), 5-6 (performance) and 7-8 (past the lecture): one widget
    each that asks first, called in its chapter."""
    chapters = {"race-replay": "03_syncthreads", "coalesce": "05_performance", "host-bugs": "07_program"}
    assert {name: registry.chapter_of(name).stem for name in PREDICT} == chapters
    for name, stem in chapters.items():
        nb = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())
        call = f"widgets.{PREDICT[name]}()"
        calls = [c for c in nb["cells"] if c["cell_type"] == "code" and call in "".join(c["source"])]
        assert len(calls) == 1, (name, stem)
