"""The one measurement model: every file of the package's data/ (and of tests/data/) that holds
what a GPU measured is a `Run` of `Record`s, written by `write` and read by `read`, whichever
program took it: the benchmark, the tuner, the Hopper benchmark, the FP32-gap sweep (timed runs),
counts taken on a GPU (Nsight Compute's counters, instructions in the machine code, outputs
compared) that the book and the READMEs quote and the tests check, or outputs (what a wrong
kernel computed, what a program printed, on a GPU).

Shapes are M x N x K everywhere: C[M x N] = A[M x K] B[K x N], so M and N are the product's
rows and columns and K its depth, and a shape is written MxNxK (4096x4096x4096, 1000x1500x700);
every command line takes it so: bench's --shapes, bench_hopper's --awkward and --small, tune's
--shape (model.shape_argument).

    from tiling_course.measure import model
    run = model.read("course/tiling_course/data/h100.json")
    run.meta.device, run.meta.date, run.meta.software     # what, when, with what
    [(r.kernel, str(r.shape), r.ms, r.frac_cublas) for r in run.records]

A file: {"schema": 2, "kind": KIND, "meta": Meta, "records": [Record, ...], "extra": {...}},
each Record's shape as {"m", "n", "k"} (or null where what ran was no matrix product). "extra"
holds what one kind of run records beyond its records (the benchmark's ceilings, the Hopper
benchmark's compile logs, the FP32 gap's counters). A run transcribed from a record of logs/
names it in meta.extra["log"]: logs/ is evidence the text may cite, and no test reads it.
"""
import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources

SCHEMA = 2
KINDS = ("bench", "hopper", "tuning", "fp32-gap", "counts", "outputs")
# The software versions a run names (Meta.software's keys, those it has, in this order).
SOFTWARE = ("cuda_runtime", "driver", "nvrtc", "nvcc", "ncu", "cupy", "numpy", "python")


@dataclass(frozen=True, order=True)
class Shape:
    """C[m x n] = A[m x k] B[k x n]: m, n the product's rows and columns, k its depth."""
    m: int
    n: int
    k: int

    @classmethod
    def parse(cls, text):
        """"MxNxK" (or one number, a cube) as a Shape; ValueError for anything else."""
        parts = text.lower().split("x")
        try:
            values = [int(p) for p in parts]
        except ValueError:
            values = []
        if len(values) == 1:
            values *= 3
        if len(values) != 3 or min(values) < 1:
            raise ValueError(f"{text!r}: a shape is MxNxK (C[MxN] = A[MxK] B[KxN]) of positive ints, "
                             "e.g. 1000x1500x700")
        return cls(*values)

    @classmethod
    def cube(cls, size):
        return cls(size, size, size)

    @property
    def square(self):
        return self.m == self.n == self.k

    @property
    def flops(self):
        return 2 * self.m * self.n * self.k

    def __str__(self):
        return f"{self.m}x{self.n}x{self.k}"

    @property
    def name(self):
        """As the book writes it: 4096^3, or 1000x1500x700."""
        return f"{self.m}^3" if self.square else str(self)


def shape_argument(text):
    """argparse's type for a shape (MxNxK): a Shape, or argparse's error."""
    import argparse
    try:
        return Shape.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


@dataclass(frozen=True)
class Meta:
    """Where, when and with what a run was measured, and the command that measured it."""
    device: str                                   # the GPU's name ("NVIDIA H100 80GB HBM3")
    date: str                                     # ISO 8601, UTC, to the day at least
    command: str                                  # the command line that wrote the file
    software: dict = field(default_factory=dict)  # SOFTWARE's versions that the run knew
    gpu: dict = field(default_factory=dict)       # the device's properties (SMs, clocks, ...)
    extra: dict = field(default_factory=dict)     # the rest (backend, repeats, the kernels' commit)

    @property
    def day(self):
        return self.date[:10]

    @classmethod
    def of(cls, flat, command=None):
        """A Meta from one flat dict of what a program knows of its run (its device as a name or
        as a dict of properties with "name"; the software's versions, "cuda_driver" as "driver";
        the date; the command), the rest kept in extra."""
        rest = dict(flat)
        device = rest.pop("device", "unknown")
        gpu = {}
        if isinstance(device, dict):
            gpu = dict(device)
            device = gpu.pop("name")
        for key in ("compute_capability", "sm_count"):
            if key in rest:
                gpu[key] = rest.pop(key)
        if "cuda_driver" in rest:
            rest["driver"] = rest.pop("cuda_driver")
        software = {key: rest.pop(key) for key in SOFTWARE if key in rest}
        date = rest.pop("date", "")
        command = rest.pop("command", "") if command is None else command
        return cls(device=device, date=date, command=command, software=software, gpu=gpu, extra=rest)


@dataclass(frozen=True)
class Record:
    """One kernel, at one precision and configuration, on one shape: checked, then timed (or,
    in a run of counts, counted: its counts in extra; in a run of outputs, run: ok where it ran
    to its end, what it output in extra)."""
    kernel: str
    shape: Shape | None                # None: no matrix product (a counted instruction, a case)
    precision: str = "fp32"            # the inputs: fp32, tf32, fp16, bf16 (float accumulation)
    config: dict = field(default_factory=dict)   # the tile, the tuned macros, the launch
    ok: bool = False                   # the product was right (a wrong one is not timed)
    ms: float | None = None            # median time
    tflops: float | None = None        # 2 m n k / ms
    cublas_ms: float | None = None     # cuBLAS at the same precision, timed beside it
    cublas_tflops: float | None = None
    frac_cublas: float | None = None   # cuBLAS's time / the kernel's (above 1: faster than cuBLAS)
    error: float | None = None         # the largest error, relative to the reference's scale
    label: str | None = None           # the shape's role in the run ("square", "awkward", "small")
    extra: dict = field(default_factory=dict)    # what else the writer measured (spread, registers)

    def to_dict(self):
        return asdict(self)      # the shape as {"m", "n", "k"}, or None

    @classmethod
    def from_dict(cls, d):
        return cls(**{**d, "shape": Shape(**d["shape"]) if d["shape"] is not None else None})


@dataclass(frozen=True)
class Run:
    """One file of data/ (or a live measurement): its kind, meta and records."""
    kind: str
    meta: Meta
    records: tuple
    extra: dict = field(default_factory=dict)
    source: str = "live"               # the file's name, or "live"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"a run's kind is one of {', '.join(KINDS)}, not {self.kind!r}")

    def to_dict(self):
        return {"schema": SCHEMA, "kind": self.kind, "meta": asdict(self.meta),
                "records": [r.to_dict() for r in self.records], "extra": self.extra}

    @classmethod
    def from_dict(cls, d, source="live"):
        if d.get("schema") != SCHEMA:
            raise ValueError(f"{source}: not a measurement of schema {SCHEMA} (tiling_course.measure.model)")
        return cls(d["kind"], Meta(**d["meta"]), tuple(Record.from_dict(r) for r in d["records"]),
                   d.get("extra", {}), source)

    def select(self, **fields):
        """The records whose fields equal the keywords' values, in the run's order."""
        return [r for r in self.records if all(getattr(r, f) == v for f, v in fields.items())]


class View:
    """What every view of a stored run shares: the run (of the subclass's KIND, made by WHO),
    its file, meta, device, day and records. perfdata.Dataset, hopperdata.Measured,
    tuning.Tuning and tuning.Gap add what their tables and figures read."""
    KIND = WHO = None

    def __init__(self, run):
        if run.kind != self.KIND:
            raise ValueError(f"{run.source}: a {run.kind} run, not {self.WHO}")
        self.run = run

    @property
    def source(self):
        """The file it came from, or "live"."""
        return self.run.source

    @property
    def meta(self):
        return self.run.meta

    @property
    def device(self):
        return self.run.meta.device

    @property
    def date(self):
        return self.run.meta.day

    @property
    def records(self):
        return self.run.records

    @property
    def size(self):
        """The timed cube's width, where every record's shape is one size x size x size."""
        (size,) = {r.shape.m for r in self.run.records}
        return size


def write(run, path):
    """The one writer: `run` as JSON at `path` (NaN refused: a missing value is null)."""
    from pathlib import Path
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(run.to_dict(), indent=1, allow_nan=False, default=str) + "\n")


def read(path):
    """The one reader: a file written by `write` (a path, or a file of importlib.resources)."""
    from pathlib import Path
    path = Path(path) if isinstance(path, str) else path
    return Run.from_dict(json.loads(path.read_text()), source=path.name)


def data_file(name):
    """A file of the package's data/ folder, read through importlib.resources (so an installed
    copy reads what the repository does)."""
    return resources.files("tiling_course").joinpath("data", name)


@lru_cache(maxsize=1)
def _stored():
    folder = resources.files("tiling_course").joinpath("data")
    # A copy without its data (a package built without data/) has no runs and says so where drawn.
    if not folder.is_dir():
        return ()
    # Every file is a run (read refuses one that is not: one parser for every data file).
    return tuple(read(path) for path in sorted(folder.iterdir(), key=lambda p: p.name) if path.name.endswith(".json"))


def stored(kind=None, prefix=""):
    """The runs of data/ (of one kind, and whose file names start with `prefix`), by file name:
    H100 before H200."""
    return tuple(r for r in _stored() if (kind is None or r.kind == kind) and r.source.startswith(prefix))


def stored_run(name):
    """The run of data/ in the file `name`, or None where data/ has no such file."""
    return next((r for r in _stored() if r.source == name), None)
