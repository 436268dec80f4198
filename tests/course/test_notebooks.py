"""What the notebooks repeat stays in step with its one source (scripts/sync_notebooks.py):
the Colab set-up cell with _config.yml's repository URL, the kernel cells with
kernels/*.cu. (nbval executes the notebooks themselves.)"""
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]   # tests/<group>/this file
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def load_sync():
    spec = importlib.util.spec_from_file_location("sync_notebooks", ROOT / "scripts" / "sync_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


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
