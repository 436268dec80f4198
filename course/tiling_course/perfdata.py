"""The one path by which the book reads GPU measurements: the package's data/*.json, written
by `python -m tiling_course.bench --output ...` (schema 1, see bench.py) and shipped inside
the package, so an installed copy plots what the repository does.

    from tiling_course import perfdata
    for ds in perfdata.datasets():
        print(ds.label, ds.ms("tiled", 16, 4096))

Every figure that shows a number labels it with `Dataset.label` (device, date,
software), and a reader's live measurement (the same structure, from bench.measure)
becomes a Dataset too, so it is plotted beside the reference the same way.
"""
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


def data_file(name):
    """A file of the package's data/ folder, read through importlib.resources."""
    return resources.files(__package__).joinpath("data", name)


@dataclass
class Dataset:
    meta: dict
    ceilings: dict
    results: list
    source: str = "live"          # the file it came from, or "live"

    @classmethod
    def from_dict(cls, d, source="live"):
        if d.get("schema") != 1:
            raise ValueError(f"{source}: not a tiling_course.bench file of schema 1")
        return cls(d["meta"], d.get("ceilings", {}), d["results"], source)

    @property
    def device(self):
        return self.meta["device"]["name"]

    @property
    def date(self):
        return self.meta["date"][:10]

    @property
    def label(self):
        sw = f"CUDA {self.meta['cuda_runtime']}, CuPy {self.meta['cupy']}" if self.meta.get("cupy") else \
            f"NumPy {self.meta['numpy']}"
        origin = "measured live" if self.source == "live" else "measured"
        return f"{self.device}, {origin} {self.date} ({sw})"

    @property
    def command(self):
        """The command that recorded the data, as it is spelled today: the stored runs
        predate the package's name, when the benchmark was the module kernels.bench."""
        return self.meta.get("command", "").replace("python -m kernels.bench", "python -m tiling_course.bench")

    def result(self, kernel, tile, m, k=None, n=None):
        """The result of one kernel at one shape (square if k and n are omitted), or None."""
        k, n = k or m, n or m
        for r in self.results:
            if r["kernel"] == kernel and r["tile"] == tile and (r["m"], r["k"], r["n"]) == (m, k, n) and r["ok"]:
                return r
        return None

    def ms(self, kernel, tile, m, k=None, n=None):
        r = self.result(kernel, tile, m, k, n)
        return r["ms_median"] if r else None

    def sizes(self, kernel, tile=None):
        """The square sizes measured for a kernel (and tile), ascending."""
        return sorted({r["m"] for r in self.results if r["kernel"] == kernel and r["ok"] and
                       (tile is None or r["tile"] == tile) and r["m"] == r["k"] == r["n"]})

    def tiles(self, kernel):
        return sorted({r["tile"] for r in self.results if r["kernel"] == kernel and r["tile"] is not None})

    def speedup(self, tile, width):
        """The lecture's speed-up: time of the untiled (naive) kernel with tile x tile
        blocks over the time of the tiled kernel with tile x tile tiles, at one Width."""
        naive, tiled = self.ms("naive", tile, width), self.ms("tiled", tile, width)
        return naive / tiled if naive and tiled else None


@lru_cache(maxsize=1)
def _load_all():
    out = []
    folder = resources.files(__package__).joinpath("data")
    # A copy without its data (a package built without data/) plots nothing and says so.
    paths = sorted((p for p in folder.iterdir() if p.name.endswith(".json")), key=lambda p: p.name) \
        if folder.is_dir() else []
    for path in paths:
        d = json.loads(path.read_text())
        if d.get("schema") == 1:
            out.append(Dataset.from_dict(d, source=path.name))
    return tuple(out)


def datasets(backend="gpu"):
    """The reference measurements in the package's data/, GPU ones by default, by device name."""
    return [d for d in _load_all() if d.meta.get("backend") == backend]


def reference(prefer=("H200", "H100")):
    """The dataset the prose quotes: the first of `prefer` that data/ holds."""
    sets = datasets()
    for name in prefer:
        for d in sets:
            if name in d.device:
                return d
    return sets[0] if sets else None
