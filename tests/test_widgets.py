"""The book's widgets build under the installed ipywidgets (8.x, requirements.txt) and under
Colab's 7.7.1 (.venv-colab, made by scripts/colab_env_check.sh; skipped without it), and are
wired for a page without a kernel: every state embedded, one Tab level per control, and a
front-end link from each control's index to every Tab of its level, in the embedded state.
tests/test_widgets_browser.py clicks them on the built site."""
import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tiling_course import switch, widgets

ROOT = Path(__file__).resolve().parent.parent
SPECS = {"thread-map": widgets.thread_explorer_spec, "tile": widgets.tile_explorer_spec,
         "barriers": widgets.barrier_explorer_spec, "occupancy": widgets.occupancy_explorer_spec,
         "edge": widgets.edge_explorer_spec, "phases": widgets.phase_stepper_spec, "rungs": widgets.rung_explorer_spec}
BUILDERS = {"thread-map": widgets.thread_explorer, "tile": widgets.tile_explorer,
            "barriers": widgets.barrier_explorer, "occupancy": widgets.occupancy_explorer,
            "edge": widgets.edge_explorer, "phases": widgets.phase_stepper, "rungs": widgets.rung_explorer}

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
NAMES = ["thread_explorer", "tile_explorer", "barrier_explorer", "occupancy_explorer", "edge_explorer",
         "phase_stepper", "rung_explorer"]


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
        assert d["states"] == sorted(switch.all_states(controls, render)), name
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


def test_widgets_build_under_colabs_ipywidgets():
    python = ROOT / ".venv-colab" / "bin" / "python"
    if not python.exists():
        pytest.skip(".venv-colab is missing (scripts/colab_env_check.sh makes it)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "course"), str(ROOT / "runtime")]))
    described = _describe(str(python), env)
    assert described["version"] == "7.7.1"
    _check(described)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_state_is_embedded_and_named_once(name):
    box = BUILDERS[name]()
    _, _, controls, render, _ = SPECS[name]()
    assert box.states == switch.all_states(controls, render)
    for key, content in box.states.items():
        assert content.count(f"data-state='{html.escape(key, quote=True)}'") == 1
    assert box.layout is not None and f"tc-switch-{name}" in box._dom_classes


def test_sweep_reaches_every_state():
    sys.path.insert(0, str(ROOT / "tests"))
    pytest.importorskip("selenium")
    from test_widgets_browser import _sweep
    for sizes, start in (([5], [3]), ([3, 3], [1, 1]), ([2, 5], [0, 3])):
        walk = _sweep(start, sizes)
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
