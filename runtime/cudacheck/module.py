"""RawModule and RawKernel: CuPy's API, on a GPU or on the CPU runtime.

    mod = cudacheck.RawModule(code=src, options=("-DTILE_WIDTH=16",))
    k = mod.get_function("tiled")
    k((Width // 16, Width // 16), (16, 16), (M, N, P, np.int32(Width)))

The same code moves to plain CuPy by changing the import.
"""
from . import frontend
from .errors import CompileError, KernelError, UnsupportedFeatureError
from .gpu import GpuModule, gpu_available
from .listing import numbered

BACKENDS = ("auto", "gpu", "cpu")


def check_backend(backend, check=False):
    """ValueError unless `backend` is one of BACKENDS, and not "gpu" in checked mode."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    if check and backend == "gpu":
        raise ValueError("checked mode runs on the CPU runtime: use backend='cpu' (or 'auto') with check=True")


def resolve_backend(backend, check=False):
    """The backend a module with these settings runs on: "gpu" or "cpu"."""
    check_backend(backend, check)
    if check:
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
    enable_cooperative_groups, translate_cucomplex, jitify: CuPy's, passed to it on a GPU
    (a cooperative launch, for grid.sync(); the CPU runtime refuses grid-wide groups).
    """

    def __init__(self, code, *, options=(), name_expressions=(), backend="auto", check=False,
                 enable_cooperative_groups=False, translate_cucomplex=False, jitify=False):
        if not isinstance(code, str) or not code.strip():
            raise TypeError("code must be the CUDA C source, as a non-empty string")
        self.code = code
        self.options = tuple(options)
        self.check = bool(check)
        self.backend = resolve_backend(backend, self.check)
        self.name_expressions = tuple(name_expressions or ())
        try:
            self.program = frontend.analyze(code, self.options, self.name_expressions)
        except (CompileError, UnsupportedFeatureError, KeyError):
            # On a GPU, NVRTC decides what compiles, as in CuPy: a source the front end cannot
            # read (CUB, cuRAND, libcu++ headers) still runs, its launches unchecked.
            if self.backend == "cpu":
                raise
            self.program = None
        self.kernels = dict(self.program.kernels) if self.program else {}
        runnable = self.kernels
        if self.backend == "cpu":
            runnable = {n: k for n, k in self.kernels.items() if self._unsupported(k) is None}
            from .cpu import CpuModule
            self.impl = CpuModule(code, self.program, runnable, self.options, check=self.check)
        else:
            cupy_options = {k: v for k, v in (("enable_cooperative_groups", enable_cooperative_groups),
                                              ("translate_cucomplex", translate_cucomplex), ("jitify", jitify)) if v}
            self.impl = GpuModule(code, runnable, self.options, self.name_expressions, cupy_options)

    def _unsupported(self, kernel):
        """(line, construct) if the CPU runtime cannot run this kernel, else None."""
        template = kernel.name.split("<")[0].strip()
        return self.program.unsupported.get(kernel.name) or self.program.unsupported.get(template)

    def get_function(self, name):
        key = " ".join(name.split())
        if key not in self.kernels and self.backend == "gpu" and self.impl.has_function(key):
            return Function(self, key)   # a kernel the front end did not see: found by NVRTC
        if key not in self.kernels:
            have = ", ".join(self.kernels) or "none"
            hint = (" A template kernel's instance must be listed in name_expressions." if "<" in key else "")
            raise KeyError(f"no kernel {name!r} in this module (kernels found: {have}).{hint}")
        bad = self._unsupported(self.kernels[key]) if self.backend == "cpu" else None
        if bad is not None:
            line, construct = bad
            raise UnsupportedFeatureError(
                f"kernel `{key}` uses {construct} (line {line}), which the CPU runtime does not provide; the other "
                f"kernels of this module run. It can run on a GPU with backend='gpu'.\n{numbered(self.code, {line})}",
                backend="cpu")
        return Function(self, key)

    def get_global(self, name):
        """The memory of a `__device__` or `__constant__` variable, as CuPy's get_global
        returns it: an object with copy_from_host(mem, size) and copy_to_host(mem, size),
        where mem is an address (array.ctypes.data) or a ctypes pointer."""
        return self.impl.get_global(name)


class Function:
    """One kernel of a RawModule, called as k(grid, block, args, shared_mem=0)."""

    def __init__(self, module, name):
        self.module = module
        self.name = name
        self.signature = module.kernels.get(name)   # None: a GPU kernel the front end could not read
        self.last_launch = None  # checked mode: the LaunchReport of the latest call
        # CuPy's opt-in to more than 48 KiB of dynamic shared memory per block, which a GPU
        # refuses without it: set it to the bytes the launch needs, on either backend.
        # None: not opted in (static + dynamic shared memory may total 48 KiB, as on a GPU).
        self.max_dynamic_shared_size_bytes = None

    @property
    def backend(self):
        return self.module.backend

    def __call__(self, grid, block, args, *, shared_mem=0, time_limit=None, **cpu_options):
        """Launch the kernel and wait for it. grid and block: an int or a tuple of 1 to
        3 ints. args: a tuple matching the kernel's parameters.

        CPU runtime only: time_limit (seconds; default cudacheck.config.time_limit);
        schedule ("forward", "reverse" or "random") and seed: the order a block's threads
        run in; in checked mode, trace (blocks to record, as (x, y) tuples) and
        trace_threads (threads to record; default all). A checked launch leaves its
        counts and trace in self.last_launch.
        """
        if self.backend == "gpu":
            if cpu_options:
                raise TypeError(f"{', '.join(cpu_options)}: options of the CPU runtime, not of backend='gpu'")
            self.module.impl.launch(self.name, grid, block, args, shared_mem, self.max_dynamic_shared_size_bytes)
            return
        self.last_launch = self.module.impl.launch(self.name, grid, block, args, shared_mem,
                                                   self.max_dynamic_shared_size_bytes, time_limit, **cpu_options)

    def launcher(self, grid, block, args, shared_mem=0):
        """A function that launches this kernel again with these arguments, without the
        checks or the wait: for timing loops on a GPU, after one checked call."""
        return self.module.impl.launcher(self.name, grid, block, args, shared_mem, self.max_dynamic_shared_size_bytes)

    def __repr__(self):
        params = ", ".join(p.text for p in self.signature.params) if self.signature else "..."
        return f"<kernel {self.name}({params}) on {self.backend}>"


def RawKernel(code, name, *, options=(), backend="auto", check=False):
    """One kernel of `code`, as cupy.RawKernel: RawKernel(code, "tiled")(grid, block, args)."""
    exprs = (name,) if "<" in name else ()
    return RawModule(code, options=options, name_expressions=exprs, backend=backend, check=check).get_function(name)
