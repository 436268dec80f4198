"""What the notebooks repeat stays in step with its one source (scripts/sync_notebooks.py):
the Colab set-up cell with _config.yml's repository URL, the kernel cells with
kernels/*.cu. (nbval executes the notebooks themselves.)"""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def load_sync():
    import sync_notebooks
    return sync_notebooks


def test_notebooks_are_in_step_with_their_sources():
    assert load_sync().main(check=True) == 0


def test_every_chapter_starts_with_the_set_up_cell_and_asks_colab_for_a_gpu():
    sync = load_sync()
    for nb_path in NOTEBOOKS:
        nb = json.loads(nb_path.read_text())
        first = next(c for c in nb["cells"] if c["cell_type"] == "code")
        assert "".join(first["source"]) == sync.setup_cell_source()
        pip = [line for line in "".join(first["source"]).splitlines() if "pip install" in line]
        # It names the repository of _config.yml and nothing else; what pip adds for it in
        # Colab is tests/site/test_wheel.py's to check (libclang and jupyterquiz, never CuPy or
        # ipywidgets).
        assert len(pip) == 1 and f'"git+{sync.repository_url()}"' in pip[0]
        assert not any(p in pip[0].lower() for p in ("cupy", "ipywidgets", "--no-deps"))
        assert nb["metadata"].get("accelerator") == "GPU"


def test_kernel_cells_exist_for_the_lecture_kernels():
    tags = {t for nb in NOTEBOOKS for c in json.loads(nb.read_text())["cells"]
            for t in c.get("metadata", {}).get("tags", []) if t.startswith("kernel:")}
    assert {"kernel:naive.cu", "kernel:tiled.cu", "kernel:tiled_bounds.cu"} <= tags


def test_every_chapter_is_in_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text()
    for nb in NOTEBOOKS:
        assert f"book/{nb.stem}" in toc


def test_notebooks_hold_no_error_outputs():
    for nb in NOTEBOOKS:
        for cell in json.loads(nb.read_text())["cells"]:
            for out in cell.get("outputs", []):
                assert out.get("output_type") != "error", f"{nb.name} holds an error output"


def test_cell_ids_are_unique():
    """nbformat requires it; sync_notebooks.py gives a new exercise cell an id no other cell has."""
    for nb in NOTEBOOKS:
        ids = [c.get("id") for c in json.loads(nb.read_text())["cells"]]
        assert len(ids) == len(set(ids)), f"{nb.name}: {sorted(i for i in set(ids) if ids.count(i) > 1)}"


def test_a_new_exercise_cell_gets_an_id_no_cell_has(monkeypatch):
    sync = load_sync()
    nb = json.loads((ROOT / "book" / "02_tiling.ipynb").read_text())
    start = next(i for i, c in enumerate(nb["cells"]) if "".join(c["source"]).startswith("## Exercises"))
    nb["cells"][start + 3]["source"] = ["changed by the test"]       # the first exercise's starter
    nb["cells"].insert(start, {"cell_type": "markdown", "id": "exercise-003", "metadata": {}, "source": ["x"]})
    assert sync.sync_exercises(nb, "02_tiling")
    ids = [c["id"] for c in nb["cells"]]
    assert len(ids) == len(set(ids))


def test_every_widget_a_chapter_shows_has_its_state_saved():
    """A committed chapter is what Colab and GitHub show before anything runs: each widget
    view among its outputs, and every model that view refers to, has its state saved in the
    notebook's metadata (nbconvert --execute saves it), so that it draws without a kernel."""
    import re
    for nb_path in NOTEBOOKS:
        nb = json.loads(nb_path.read_text())
        state = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
        shown = [out["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
                 for c in nb["cells"] for out in c.get("outputs", [])
                 if "application/vnd.jupyter.widget-view+json" in out.get("data", {})]
        seen, todo = set(), list(shown)
        while todo:
            model = todo.pop()
            if model in seen:
                continue
            assert model in state, f"{nb_path.name}: widget model {model} is shown but not saved (re-execute it)"
            seen.add(model)
            todo += re.findall(r"IPY_MODEL_([0-9a-f]{32})", json.dumps(state[model]["state"]))
        assert not shown or len(seen) > len(shown), nb_path.name   # a view refers to models of its own


def test_every_cell_before_the_exercises_was_run_in_the_committed_chapter():
    """A cell added to a chapter without running it has no output in Colab before it runs, on
    GitHub, or in a deck built from the committed chapters (a widget missing from its slide):
    every code cell up to the exercises carries an execution count."""
    for nb_path in NOTEBOOKS:
        for cell in json.loads(nb_path.read_text())["cells"]:
            if cell["cell_type"] == "markdown" and "".join(cell["source"]).startswith("## Exercises"):
                break
            if cell["cell_type"] == "code":
                assert cell.get("execution_count"), \
                    f"{nb_path.name}: a cell was never run: {''.join(cell['source'])[:80]!r} (re-execute the chapter)"


def test_no_chapter_carries_what_its_run_printed_to_stderr():
    """A committed chapter shows its outputs in Colab, on GitHub and in the decks: a warning its
    run printed there (matplotlib's "findfont: ... not found" from a broken font cache, a library's
    deprecation) is noise from the machine that ran it, not part of the book."""
    for nb_path in NOTEBOOKS:
        for cell in json.loads(nb_path.read_text())["cells"]:
            for out in cell.get("outputs", []):
                assert not (out.get("output_type") == "stream" and out.get("name") == "stderr"), \
                    f"{nb_path.name}: {''.join(out['text'])[:120]!r} (re-execute the chapter)"
