"""The CPU runtime: CUDA C compiled by the machine's C++ compiler, blocks run in
isolated worker processes, the threads of a block as fibers (see include/)."""
import os

import numpy as np

from ..config import config
from ..launch import check_launch
from ..arguments import check_arguments
from . import compiler, runner


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class CpuModule:
    """Every kernel of one source, compiled into one library."""

    def __init__(self, source, kernels, options):
        compiler.check_supported(source)
        self.kernels = kernels          # name -> signature.Kernel
        functions = [k.name for k in kernels.values()]
        self.lib = compiler.load(compiler.build(source, functions, options))
        self.spawns = {}
        for i, name in enumerate(kernels):
            fn = getattr(self.lib, f"kc_spawn_{i}")
            fn.restype = np.ctypeslib.ctypes.c_int
            self.spawns[name] = fn

    def launch(self, name, grid, block, args, shared_mem=0, time_limit=None):
        kernel = self.kernels[name]
        cfg = check_launch(grid, block, shared_mem)
        values = check_arguments(kernel, args, np.ndarray, "pass a NumPy array (cupy.asnumpy(x) copies one back)")
        runner.run(self.spawns[name], kernel, cfg, values,
                   time_limit=config.time_limit if time_limit is None else time_limit,
                   workers=config.workers or _cores(), stack_size=config.stack_size)
