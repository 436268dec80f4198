"""The benchmark's runs as the book reads them: the package's data/*.json of kind "bench"
(written by `python -m tiling_course.measure.bench --output ...`, read by model.read) and
shipped inside the package, so an installed copy plots what the repository does.

    from tiling_course.measure import perfdata
    for ds in perfdata.datasets():
        print(ds.label, ds.ms("tiled", 16, 4096))

Every figure that shows a number labels it with `Dataset.label` (device, date,
software), and a reader's live measurement (bench.measure's model.Run) becomes a Dataset
too, so it is plotted beside the reference the same way.
"""
from . import model


class Dataset(model.View):
    """A view of one benchmark run (model.Run of kind "bench"): its results by kernel, tile
    and shape (M x N x K, the model's)."""

    KIND, WHO = "bench", "the benchmark's"

    @property
    def gpu(self):
        """The device's properties (sm_count, compute_capability, clocks, ...)."""
        return self.run.meta.gpu

    @property
    def ceilings(self):
        return self.run.extra.get("ceilings", {})

    @property
    def label(self):
        sw = self.run.meta.software
        sw = f"CUDA {sw['cuda_runtime']}, CuPy {sw['cupy']}" if sw.get("cupy") else f"NumPy {sw['numpy']}"
        origin = "measured live" if self.source == "live" else "measured"
        return f"{self.device}, {origin} {self.date} ({sw})"

    @property
    def command(self):
        """The command that recorded the data."""
        return self.run.meta.command

    def result(self, kernel, tile, m, n=None, k=None):
        """The correct result (a model.Record) of one kernel and tile at one shape, M x N x K
        (a cube if n and k are omitted), or None."""
        shape = model.Shape(m, n or m, k or m)
        return next((r for r in self.run.records if r.kernel == kernel and r.config.get("tile") == tile
                     and r.shape == shape and r.ok), None)

    def ms(self, kernel, tile, m, n=None, k=None):
        r = self.result(kernel, tile, m, n, k)
        return r.ms if r else None

    def sizes(self, kernel, tile=None):
        """The square sizes measured for a kernel (and tile), ascending."""
        return sorted({r.shape.m for r in self.run.records if r.kernel == kernel and r.ok and
                       (tile is None or r.config.get("tile") == tile) and r.shape.square})

    def tiles(self, kernel):
        return sorted({r.config["tile"] for r in self.run.records if r.kernel == kernel and "tile" in r.config})

    def speedup(self, tile, width):
        """The lecture's speed-up: time of the untiled (naive) kernel with tile x tile
        blocks over the time of the tiled kernel with tile x tile tiles, at one Width."""
        naive, tiled = self.ms("naive", tile, width), self.ms("tiled", tile, width)
        return naive / tiled if naive and tiled else None


def datasets(backend="gpu"):
    """The reference measurements in the package's data/, GPU ones by default, by file name."""
    return [Dataset(run) for run in model.stored("bench") if run.meta.extra.get("backend") == backend]


def reference(prefer=("H200", "H100")):
    """The dataset the prose quotes: the first of `prefer` that data/ holds."""
    sets = datasets()
    for name in prefer:
        for d in sets:
            if name in d.device:
                return d
    return sets[0] if sets else None
