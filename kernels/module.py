"""RawModule and RawKernel: CuPy's API, on a GPU or on the CPU runtime.

    mod = kernels.RawModule(code=src, options=("-DTILE_WIDTH=16",))
    k = mod.get_function("tiled")
    k((Width // 16, Width // 16), (16, 16), (M, N, P, np.int32(Width)))

The same code moves to plain CuPy by changing the import.
"""
from .errors import KernelError
from .gpu import GpuModule, gpu_available
from .signature import find_kernels, kernel_signature

BACKENDS = ("auto", "gpu", "cpu")


def _resolve_backend(backend, check=False):
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    if check:
        if backend == "gpu":
            raise ValueError("checked mode runs on the CPU runtime: use backend='cpu' (or 'auto') with check=True")
        return "cpu"
    if backend == "auto":
        return "gpu" if gpu_available() else "cpu"
    if backend == "gpu" and not gpu_available():
        raise KernelError("backend='gpu' needs CuPy and a CUDA GPU, and none is available here; "
                          "use backend='cpu' (or 'auto') to run on the CPU runtime")
    return backend


class RawModule:
    """A CUDA C source compiled for one backend; its kernels via get_function(name).

    code: the CUDA C source. options: compiler options, e.g. ("-DTILE_WIDTH=16",).
    name_expressions: template instances to compile, e.g. ("tiled<16>",).
    backend: "auto" (the GPU when CuPy sees one), "gpu" or "cpu".
    check: checked mode (CPU runtime): every access bounds-checked and counted, shared
    memory checked for races and uninitialized reads, barriers for divergence.
    """

    def __init__(self, code, *, options=(), name_expressions=(), backend="auto", check=False):
        if not isinstance(code, str) or not code.strip():
            raise TypeError("code must be the CUDA C source, as a non-empty string")
        self.code = code
        self.options = tuple(options)
        self.check = bool(check)
        self.backend = _resolve_backend(backend, self.check)
        found = find_kernels(code)
        names = [n for n, info in found.items() if not info["template"]] + list(name_expressions or ())
        self.kernels = {}
        for name in names:
            sig = kernel_signature(code, name, found)
            self.kernels[sig.name] = sig
        if self.backend == "gpu":
            self._impl = GpuModule(code, self.kernels, self.options)
        else:
            from .cpu import CpuModule
            self._impl = CpuModule(code, self.kernels, self.options, check=self.check)

    def get_function(self, name):
        key = name.strip()
        if key not in self.kernels:
            have = ", ".join(self.kernels) or "none"
            hint = (" A template kernel's instance must be listed in name_expressions." if "<" in key else "")
            raise KeyError(f"no kernel {name!r} in this module (compiled: {have}).{hint}")
        return Function(self, key)


class Function:
    """One kernel of a RawModule, called as k(grid, block, args, shared_mem=0)."""

    def __init__(self, module, name):
        self.module = module
        self.name = name
        self.signature = module.kernels[name]
        self.last_launch = None  # checked mode: the LaunchReport of the latest call

    @property
    def backend(self):
        return self.module.backend

    def __call__(self, grid, block, args, *, shared_mem=0, time_limit=None, **cpu_options):
        """Launch the kernel and wait for it. grid and block: an int or a tuple of 1 to
        3 ints. args: a tuple matching the kernel's parameters.

        CPU runtime only: time_limit (seconds; default kernels.config.time_limit);
        schedule ("forward", "reverse" or "random") and seed: the order a block's threads
        run in; in checked mode, trace (blocks to record, as (x, y) tuples) and
        trace_threads (threads to record; default all). A checked launch leaves its
        counts and trace in self.last_launch.
        """
        if self.backend == "gpu":
            if cpu_options:
                raise TypeError(f"{', '.join(cpu_options)}: options of the CPU runtime, not of backend='gpu'")
            self.module._impl.launch(self.name, grid, block, args, shared_mem)
            return
        self.last_launch = self.module._impl.launch(self.name, grid, block, args, shared_mem, time_limit,
                                                    **cpu_options)

    def __repr__(self):
        params = ", ".join(p.text for p in self.signature.params)
        return f"<kernel {self.name}({params}) on {self.backend}>"


def RawKernel(code, name, *, options=(), backend="auto", check=False):
    """One kernel of `code`, as cupy.RawKernel: RawKernel(code, "tiled")(grid, block, args)."""
    kernel_signature(code, name)  # a KeyError naming the kernels found, before compiling
    exprs = (name,) if "<" in name else ()
    return RawModule(code, options=options, name_expressions=exprs, backend=backend, check=check).get_function(name)
