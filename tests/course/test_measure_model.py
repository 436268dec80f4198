"""The one measurement model (tiling_course.measure.model): every data file the book and the tests
read is one of its runs, written by its one writer and read by its one reader, labelled with the
device, date and software it was measured with; shapes are M x N x K everywhere, on every
command line too."""

import pytest

from tests.support import ROOT
from tiling_course.measure import bench, bench_hopper, model, perfdata
from tiling_course.measure.model import Record, Run, Shape

DATA = sorted((ROOT / "course" / "tiling_course" / "data").glob("*.json")) + \
    sorted((ROOT / "tests" / "data").glob("*.json"))


@pytest.mark.parametrize("path", DATA, ids=lambda p: p.name)
def test_every_data_file_is_a_run_of_the_one_model_as_its_writer_writes_it(path, tmp_path):
    run = model.read(path)
    assert run.kind in model.KINDS and run.source == path.name
    assert run.meta.device and run.meta.date[:4] == "2026" and run.meta.command and run.meta.software, path.name
    assert all(isinstance(r, Record) and (r.shape is None or isinstance(r.shape, Shape)) for r in run.records)
    model.write(run, tmp_path / path.name)                     # the one writer writes it byte for byte
    assert (tmp_path / path.name).read_bytes() == path.read_bytes()


def test_the_package_data_is_what_stored_reads():
    names = sorted(p.name for p in DATA if p.parent.name == "data" and p.parent.parent.name == "tiling_course")
    assert [r.source for r in model.stored()] == names
    assert [r.source for r in model.stored("bench")] == ["h100.json", "h200.json"] == \
        [d.source for d in perfdata.datasets()]
    assert model.stored_run("no-such.json") is None


def test_a_shape_is_m_by_n_by_k():
    s = Shape.parse("1000x3000x500")          # C[1000 x 3000] = A[1000 x 500] B[500 x 3000]
    assert (s.m, s.n, s.k) == (1000, 3000, 500) and str(s) == "1000x3000x500" and s.name == "1000x3000x500"
    assert Shape.parse("4096") == Shape.cube(4096) and Shape.cube(4096).name == "4096^3"
    assert Shape(2, 3, 4).flops == 2 * 2 * 3 * 4
    for bad in ("10x20", "0x1x1", "axbxc", "1x2x3x4"):
        with pytest.raises(ValueError, match="MxNxK"):
            Shape.parse(bad)


def test_every_command_line_takes_shapes_as_m_by_n_by_k():
    assert bench.parse_args(["--shapes", "1000x500x3000"]).shapes == [Shape(m=1000, n=500, k=3000)]
    opts = bench_hopper.arguments(["--awkward", "1000x1500x700", "--small", "129x250x77"])
    assert (opts.awkward, opts.small) == (Shape(1000, 1500, 700), Shape(129, 250, 77))
    for argv in (["--shapes", "10x20"], ["--shapes", "0x1x2"]):
        with pytest.raises(SystemExit):
            bench.parse_args(argv)


def test_a_run_goes_through_json_unchanged(tmp_path):
    run = Run("bench", model.Meta(device="d", date="2026-12-06", command="c", software={"numpy": "2"}),
              (Record("tiled", Shape(3, 4, 5), config={"tile": 8}, ok=True, ms=1.5, tflops=2.0,
                      extra={"ms_all": [1.5]}), Record("nvrtc", None, ok=False)), {"ceilings": {}})
    model.write(run, tmp_path / "r.json")
    assert model.read(tmp_path / "r.json") == Run(**{**run.__dict__, "source": "r.json"})
    with pytest.raises(ValueError, match="kind"):
        Run("benchmark", run.meta, ())
    (tmp_path / "old.json").write_text('{"schema": 1, "meta": {}, "results": []}')
    with pytest.raises(ValueError, match="schema 2"):
        model.read(tmp_path / "old.json")


def test_meta_of_a_flat_dict_splits_device_software_and_the_rest():
    meta = model.Meta.of({"device": {"name": "GPU", "sm_count": 132}, "date": "2026-12-06", "cuda_driver": "13.0",
                          "cupy": "14.2.0", "host": "vm", "compute_capability": "9.0"}, command="python -m x")
    assert meta == model.Meta(device="GPU", date="2026-12-06", command="python -m x",
                              software={"driver": "13.0", "cupy": "14.2.0"},
                              gpu={"sm_count": 132, "compute_capability": "9.0"}, extra={"host": "vm"})
