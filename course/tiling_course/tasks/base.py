"""The task interface (the package's docstring describes it) and what every task's
writers() uses: the threads a checked run's trace shows storing one element."""


class Task:
    """The interface above; Matmul, BlockTranspose and Histogram implement it."""
    name = ""
    rank = 0
    reference = ""
    result = ""
    verdict = ""
    holder = "whose tile holds it"

    def default_shapes(self, tile):
        raise NotImplementedError

    def describe(self, shape):
        raise NotImplementedError

    def size(self, shape):
        raise NotImplementedError

    def inputs(self, shape, rng):
        raise NotImplementedError

    def run(self, code, inputs, tile, backend, check, **options):
        raise NotImplementedError

    def compile(self, code, tile, backend, check):
        raise NotImplementedError

    def compare(self, result, inputs, tile):
        raise NotImplementedError

    def writers(self, code, inputs, tile, row, col):
        raise NotImplementedError

    def tile_note(self, tiles):
        raise NotImplementedError

    def source(self):
        """The kernel to try when the caller gives no code."""
        raise ValueError(f"no source of `{self.name}` to try: pass the kernel's CUDA C")


def stores(report, position, flat):
    """The threads (x, y, z) that a checked run's trace shows storing element `flat` of
    the kernel's `position`-th array parameter."""
    out = list(report.global_counts)[position]
    return sorted({a.thread for a in report.trace if a.array == out and a.op == "W" and a.index == flat})
