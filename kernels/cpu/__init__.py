"""The CPU runtime: CUDA C compiled by the machine's C++ compiler, blocks run in
isolated worker processes, the threads of a block as fibers (see include/)."""
import os

import numpy as np

from ..arguments import check_arguments
from ..config import config
from ..launch import check_launch
from . import compiler, findings, runner

SCHEDULES = ("forward", "reverse", "random")


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def schedule_order(schedule, nthreads, seed=None):
    """The order the threads of a block run in: linear ids as uint32 (None: forward)."""
    if schedule == "forward":
        return None
    if schedule == "reverse":
        return np.arange(nthreads - 1, -1, -1, dtype=np.uint32)
    if schedule == "random":
        return np.random.default_rng(seed).permutation(nthreads).astype(np.uint32)
    raise ValueError(f"schedule must be one of {SCHEDULES}, not {schedule!r}")


def _linear(point, dims, what):
    """(x, y, z) or an int, as a linear id within dims; ValueError if outside."""
    p = (point,) if isinstance(point, (int, np.integer)) else tuple(point)
    p = p + (0,) * (3 - len(p))
    if len(p) != 3 or any(not 0 <= v < d for v, d in zip(p, dims)):
        raise ValueError(f"{what} {point} is outside {dims}")
    return p[0] + dims[0] * (p[1] + dims[1] * p[2])


class CpuModule:
    """Every kernel of one source, compiled into one library."""

    def __init__(self, source, kernels, options, check=False):
        compiler.check_supported(source)
        self.source = source
        self.check = check
        self.kernels = kernels          # name -> signature.Kernel
        # The line of each kernel's closing brace, where a thread that falls off the end exits.
        self.end_lines = {name: source.count("\n", 0, k.body_end) + 1 for name, k in kernels.items()}
        functions = [k.name for k in kernels.values()]
        path, self.shared_names = compiler.build(source, functions, options, checked=check)
        self.lib = compiler.load(path)
        self.spawns = {}
        for i, name in enumerate(kernels):
            fn = getattr(self.lib, f"kc_spawn_{i}")
            fn.restype = np.ctypeslib.ctypes.c_int
            self.spawns[name] = fn

    def launch(self, name, grid, block, args, shared_mem=0, time_limit=None, schedule="forward", seed=None,
               trace=None, trace_threads=None):
        kernel = self.kernels[name]
        cfg = check_launch(grid, block, shared_mem)
        values = check_arguments(kernel, args, np.ndarray, "pass a NumPy array (cupy.asnumpy(x) copies one back)")
        order = schedule_order(schedule, cfg.threads_per_block, seed)
        if (trace is not None or trace_threads is not None) and not self.check:
            raise ValueError("traces are recorded in checked mode: compile with check=True")
        workers = max(1, min(config.workers or _cores(), cfg.blocks))
        setup = None
        if self.check:
            setup = runner.CheckSetup(
                kernel, cfg, workers, self.shared_names,
                trace_blocks=None if trace is None else [_linear(b, cfg.grid, "traced block") for b in trace],
                trace_threads=None if trace_threads is None else [_linear(t, cfg.block, "traced thread")
                                                                   for t in trace_threads])
        return runner.run(self.spawns[name], kernel, cfg, values,
                          time_limit=config.time_limit if time_limit is None else time_limit,
                          workers=workers, stack_size=config.stack_size, order=order, end_line=self.end_lines[name],
                          check=setup, context=findings.Context(kernel, cfg, self.source), schedule=schedule)
