"""What a checked launch leaves behind: access counts and, if asked for, a trace."""
from collections import namedtuple
from dataclasses import dataclass, field

# One access of a traced block: the barrier interval it happened in (1 = before the
# first __syncthreads()), the thread (x, y, z), the array, the index (a tuple for a
# multi-dimensional shared array), "R" or "W", and the source line.
# index: the first element the access touches (a tuple for a shared array of several
# dimensions); width: how many elements it covers (4 for a float4 load of a float array).
Access = namedtuple("Access", "block interval thread array index op line width", defaults=(1,))


@dataclass(frozen=True)
class Counts:
    loads: int
    stores: int


@dataclass
class LaunchReport:
    """Counts of one checked launch, per global parameter and per shared array."""
    kernel: str
    grid: tuple
    block: tuple
    schedule: str
    global_counts: dict = field(default_factory=dict)   # parameter name -> Counts
    shared_counts: dict = field(default_factory=dict)   # shared array name -> Counts
    shared_shapes: dict = field(default_factory=dict)   # shared array name -> its dimensions
    trace: list | None = None                            # list of Access, in the order they ran
    trace_truncated: bool = False

    global_loads = property(lambda self: sum(c.loads for c in self.global_counts.values()))
    global_stores = property(lambda self: sum(c.stores for c in self.global_counts.values()))
    shared_loads = property(lambda self: sum(c.loads for c in self.shared_counts.values()))
    shared_stores = property(lambda self: sum(c.stores for c in self.shared_counts.values()))

    def __str__(self):
        rows = [f"{self.kernel} grid {self.grid} block {self.block}:"]
        for kind, counts in (("global", self.global_counts), ("shared", self.shared_counts)):
            for name, c in counts.items():
                rows.append(f"  {kind:6} {name:>8}: {c.loads:>12,} loads {c.stores:>12,} stores")
        return "\n".join(rows)
