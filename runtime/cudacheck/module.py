"""RawModule and RawKernel: CuPy's API, on a GPU or on the CPU runtime.

    mod = cudacheck.RawModule(code=src, options=("-DTILE_WIDTH=16",))
    k = mod.get_function("tiled")
    k((Width // 16, Width // 16), (16, 16), (M, N, P, np.int32(Width)))

    k = cudacheck.RawKernel(src, "tiled", options=("-DTILE_WIDTH=16",))   # compiled at its first call

The same code moves to plain CuPy by changing the import.

When the source is compiled: on first use, as in CuPy. A RawKernel compiles at its first
call, at compile(), or at the first attribute that needs the compiled kernel (kernel,
attributes, num_regs, signature, ...); a RawModule at its first get_function, get_global,
compile() or read of program, kernels or impl. A source that does not compile raises its
CompileError there, and so does a name the source has no kernel of (KeyError); settings
that cannot work (empty code, an unknown backend) raise when the object is made.
get_function returns a RawKernel.
"""
from . import frontend
from .config import config
from .errors import CompileError, KernelError, UnsupportedFeatureError
from .gpu import GpuModule, gpu_available
from .launch import DEFAULT_SHARED_LIMIT, MAX_THREADS_PER_BLOCK
from .listing import numbered

BACKENDS = ("auto", "gpu", "cpu")
# CuPy's values of the same argument: the compiler that builds the kernel for the GPU. A
# RawModule or RawKernel takes them too, meaning the GPU with that compiler, so that code
# written for CuPy runs unchanged after the one-import swap (and, written with them, runs
# unchanged back in CuPy).
CUPY_BACKENDS = ("nvrtc", "nvcc")


def check_backend(backend, check=False, accepted=BACKENDS):
    """ValueError unless `backend` is one of `accepted`, and not a GPU's in checked mode."""
    if backend not in accepted:
        raise ValueError(f"backend must be one of {accepted}, not {backend!r}")
    if check and backend not in ("auto", "cpu"):
        raise ValueError(f"checked mode runs on the CPU runtime, and backend={backend!r} is the GPU: use "
                         "backend='cpu' (or 'auto') with check=True")


def resolve_backend(backend, check=False):
    """The backend a module with these settings runs on: "gpu" or "cpu" (CuPy's "nvrtc"
    and "nvcc" are the GPU)."""
    check_backend(backend, check, BACKENDS + CUPY_BACKENDS)
    if check:
        return "cpu"
    if backend == "auto":
        return "gpu" if gpu_available() else "cpu"
    if backend != "cpu" and not gpu_available():
        raise KernelError(f"backend={backend!r} needs CuPy and a CUDA GPU, and none is available here; "
                          "use backend='cpu' (or 'auto') to run on the CPU runtime")
    return "cpu" if backend == "cpu" else "gpu"


class RawModule:
    """A CUDA C source compiled for one backend; its kernels via get_function(name).

    code: the CUDA C source. options: compiler options, e.g. ("-DTILE_WIDTH=16",).
    name_expressions: template instances to compile, e.g. ("tiled<16>",).
    backend: "auto" (the GPU when CuPy sees one), "gpu" or "cpu"; or CuPy's "nvrtc" or
    "nvcc": the GPU, the kernel compiled by that compiler, as CuPy compiles it.
    check: checked mode (CPU runtime): every access bounds-checked and counted, shared
    memory checked for races and uninitialized reads, barriers for divergence.
    enable_cooperative_groups: every launch of the module's kernels is cooperative, as in CuPy:
    all the grid's blocks run at once, so cooperative_groups::this_grid().sync() may synchronise
    them, and a grid larger than the GPU holds at once is a LaunchConfigError
    (cudaErrorCooperativeLaunchTooLarge). translate_cucomplex, jitify: CuPy's, passed to it on a GPU.

    The source is compiled at the module's first use (see this module's docstring); those
    settings are its attributes, with `program` (what the front end read: None on a GPU
    for a source it cannot read), `kernels` (name -> signature) and `impl` (the backend's
    compiled module).
    """

    def __init__(self, code, *, options=(), name_expressions=(), backend="auto", check=False,
                 enable_cooperative_groups=False, translate_cucomplex=False, jitify=False):
        self._settings(code, options, name_expressions, backend, check, enable_cooperative_groups,
                       translate_cucomplex, jitify)

    @classmethod
    def _deferred(cls, code, *settings):
        """A module whose compilation waits for its first use (a RawKernel's)."""
        module = cls.__new__(cls)
        module._settings(code, *settings)
        return module

    def _settings(self, code, options, name_expressions, backend, check, enable_cooperative_groups,
                  translate_cucomplex, jitify):
        if not isinstance(code, str) or not code.strip():
            raise TypeError("code must be the CUDA C source, as a non-empty string")
        self.code = code
        self.options = tuple(options)
        self.check = bool(check)
        self.backend = resolve_backend(backend, self.check)
        self.compiler = "nvcc" if backend == "nvcc" else "nvrtc"   # on a GPU: CuPy's backend
        self.name_expressions = tuple(name_expressions or ())
        self.enable_cooperative_groups = bool(enable_cooperative_groups)
        self.translate_cucomplex = bool(translate_cucomplex)
        self.jitify = bool(jitify)
        self._compiled = None   # (program, kernels, impl) once compiled

    def compile(self, log_stream=None):
        """Compile the source, if it is not compiled yet: CompileError (or, on the CPU
        runtime, UnsupportedFeatureError) if it does not compile. log_stream: CuPy's, where
        NVRTC's output goes on a GPU (sys.stdout or a file); the CPU runtime has none."""
        if self._compiled is not None:
            return
        try:
            program = frontend.analyze(self.code, self.options, self.name_expressions)
        except (CompileError, UnsupportedFeatureError, KeyError):
            # On a GPU, NVRTC decides what compiles, as in CuPy: a source the front end cannot
            # read (CUB, cuRAND, libcu++ headers) still runs, its launches unchecked.
            if self.backend == "cpu":
                raise
            program = None
        kernels = dict(program.kernels) if program else {}
        if self.backend == "cpu":
            runnable = {n: k for n, k in kernels.items() if _unsupported(program, k) is None}
            from .cpu import CpuModule
            impl = CpuModule(self.code, program, runnable, self.options, check=self.check)
        else:
            cupy_options = {k: v for k, v in (("enable_cooperative_groups", self.enable_cooperative_groups),
                                              ("translate_cucomplex", self.translate_cucomplex),
                                              ("jitify", self.jitify)) if v}
            if self.compiler != "nvrtc":   # CuPy's default, left unsaid
                cupy_options["backend"] = self.compiler
            impl = GpuModule(self.code, kernels, self.options, self.name_expressions, cupy_options, log_stream)
        self._compiled = (program, kernels, impl)

    @property
    def program(self):
        """What the front end read of the source (frontend.Program); None on a GPU for a
        source it cannot read."""
        self.compile()
        return self._compiled[0]

    @property
    def kernels(self):
        """The kernels the front end found: name -> signature (frontend.Kernel)."""
        self.compile()
        return self._compiled[1]

    @property
    def impl(self):
        """The backend's compiled module (cpu.CpuModule or gpu.GpuModule)."""
        self.compile()
        return self._compiled[2]

    def get_function(self, name):
        """The kernel `name` (a template instance: one of name_expressions), as a RawKernel;
        KeyError if the source has none of that name, UnsupportedFeatureError if the CPU
        runtime cannot run it."""
        key = " ".join(name.split())
        if key not in self.kernels and self.backend == "gpu" and self.impl.has_function(key):
            return RawKernel._of(self, key)   # a kernel the front end did not see: found by NVRTC
        if key not in self.kernels:
            have = ", ".join(self.kernels) or "none"
            hint = (" A template kernel's instance must be listed in name_expressions." if "<" in key else "")
            raise KeyError(f"no kernel {name!r} in this module (kernels found: {have}).{hint}")
        bad = _unsupported(self.program, self.kernels[key]) if self.backend == "cpu" else None
        if bad is not None:
            line, construct = bad
            raise UnsupportedFeatureError(
                f"kernel `{key}` uses {construct} (line {line}), which the CPU runtime does not provide; the other "
                f"kernels of this module run. It can run on a GPU with backend='gpu'.\n{numbered(self.code, {line})}",
                backend="cpu")
        return RawKernel._of(self, key)

    def get_global(self, name):
        """The memory of a `__device__` or `__constant__` variable, as CuPy's get_global
        returns it: an object with copy_from_host(mem, size) and copy_to_host(mem, size),
        where mem is an address (array.ctypes.data) or a ctypes pointer."""
        return self.impl.get_global(name)


def _unsupported(program, kernel):
    """(line, construct) if the CPU runtime cannot run this kernel, else None."""
    template = kernel.name.split("<")[0].strip()
    return program.unsupported.get(kernel.name) or program.unsupported.get(template)


# CuPy's kernel attributes (cupy.RawKernel.attributes), in its order.
ATTRIBUTES = ("max_threads_per_block", "shared_size_bytes", "const_size_bytes", "local_size_bytes", "num_regs",
              "ptx_version", "binary_version", "cache_mode_ca", "max_dynamic_shared_size_bytes",
              "preferred_shared_memory_carveout")


def _attribute(name, doc):
    return property(lambda self: self.attributes[name], doc=doc + " (compiles the kernel if it is not yet).")


class RawKernel:
    """A CUDA C kernel, as cupy.RawKernel: RawKernel(code, "tiled")(grid, block, args).

    code: the CUDA C source; name: the kernel's name (a template instance as its name
    expression, "tiled<16>"); options, backend, check, enable_cooperative_groups,
    translate_cucomplex, jitify: as RawModule takes them. The source is compiled at the
    kernel's first use (see this module's docstring); RawModule.get_function returns one
    compiled.

    Attributes, as CuPy's: code, name, options, backend ("gpu" or "cpu", where it runs;
    CuPy's "nvrtc" and "nvcc" given are "gpu"), translate_cucomplex,
    enable_cooperative_groups, jitify; check; module (the RawModule); kernel, the compiled
    function (on a GPU CuPy's cupy.cuda.Function, on the CPU runtime the library's entry
    point); attributes and each of them (max_threads_per_block, shared_size_bytes, num_regs,
    ...: the driver's on a GPU; on the CPU runtime those a CPU has, -1 for the others, as CuPy
    gives -1 for an attribute its toolkit lacks); signature, the parameters the front end
    read (None for a GPU kernel it could not read); last_launch, a checked launch's
    LaunchReport (counts, trace). max_dynamic_shared_size_bytes: CuPy's opt-in to more than
    48 KiB of dynamic shared memory per block, which a GPU refuses without it: set it to the
    bytes the launch needs, on either backend (None: not opted in).
    """

    def __init__(self, code, name, options=(), backend="auto", *, translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, check=False):
        if not isinstance(name, str) or not name.strip():
            raise TypeError("name must be the kernel's name, as a non-empty string")
        module = RawModule._deferred(code, options, (name,) if "<" in name else (), backend, check,
                                     enable_cooperative_groups, translate_cucomplex, jitify)
        self._setup(module, " ".join(name.split()), found=False)

    @classmethod
    def _of(cls, module, name):
        """The kernel `name` of a compiled module, which has it (RawModule.get_function)."""
        kernel = cls.__new__(cls)
        kernel._setup(module, name, found=True)
        return kernel

    def _setup(self, module, name, found):
        self.module = module
        self.name = self.__name__ = name   # __name__: for profilers, as CuPy's
        self.last_launch = None   # checked mode: the LaunchReport of the latest call
        self.max_dynamic_shared_size_bytes = None
        self._found = found
        self._gpu = None   # the GPU module, once a launch has found it compiled

    def _ready(self):
        """The kernel's module, compiled, with the kernel found in it: compiles on first use,
        raising what RawModule.get_function raises."""
        if not self._found:
            self.module.get_function(self.name)
            self._found = True
        return self.module

    code = property(lambda self: self.module.code, doc="The CUDA C source.")
    options = property(lambda self: self.module.options, doc="The compiler options.")
    backend = property(lambda self: self.module.backend, doc='Where it runs: "gpu" or "cpu".')
    check = property(lambda self: self.module.check, doc="Whether it runs in checked mode (CPU runtime).")
    translate_cucomplex = property(lambda self: self.module.translate_cucomplex, doc="CuPy's, on a GPU.")
    enable_cooperative_groups = property(lambda self: self.module.enable_cooperative_groups,
                                         doc="Whether its launches are cooperative (grid.sync()), as CuPy's.")
    jitify = property(lambda self: self.module.jitify, doc="CuPy's, on a GPU.")

    def compile(self, log_stream=None):
        """Compile the kernel now rather than at its first call (CompileError, KeyError or
        UnsupportedFeatureError here). log_stream: as RawModule.compile takes it."""
        self.module.compile(log_stream)
        self._ready()

    @property
    def signature(self):
        """The kernel's parameters as the front end read them (frontend.Kernel); None for a
        GPU kernel it could not read."""
        return self._ready().kernels.get(self.name)

    @property
    def kernel(self):
        """The compiled function: on a GPU CuPy's (cupy.cuda.Function), on the CPU runtime
        the entry point of the kernel's library (a ctypes function)."""
        impl = self._ready().impl
        return impl.functions[self.name].kernel if self.backend == "gpu" else impl.spawns[self.name]

    @property
    def attributes(self):
        """The kernel's attributes, as CuPy's RawKernel.attributes: a dict of ATTRIBUTES. On a
        GPU the driver's; on the CPU runtime the most threads per block, the static shared
        memory (-1 where it depends on template parameters) and the dynamic shared memory a
        launch may use, and -1 for what a CPU does not have (registers, PTX and binary
        versions, constant and local memory, cache mode, carveout)."""
        impl = self._ready().impl
        if self.backend == "gpu":
            attrs = dict(impl.functions[self.name].attributes)
        else:
            static = self.module.program.static_shared.get(self.name, -1)
            attrs = dict.fromkeys(ATTRIBUTES, -1)
            attrs.update(max_threads_per_block=MAX_THREADS_PER_BLOCK, shared_size_bytes=static,
                         max_dynamic_shared_size_bytes=DEFAULT_SHARED_LIMIT - max(static, 0))
        if self.max_dynamic_shared_size_bytes is not None:
            attrs["max_dynamic_shared_size_bytes"] = self.max_dynamic_shared_size_bytes
        return attrs

    max_threads_per_block = _attribute("max_threads_per_block", "The most threads per block it launches with")
    shared_size_bytes = _attribute("shared_size_bytes", "Bytes of static shared memory it uses")
    const_size_bytes = _attribute("const_size_bytes", "Bytes of constant memory it uses (GPU)")
    local_size_bytes = _attribute("local_size_bytes", "Bytes of local memory per thread (GPU)")
    num_regs = _attribute("num_regs", "Registers per thread (GPU)")
    ptx_version = _attribute("ptx_version", "The PTX version it was compiled for, 10 * major + minor (GPU)")
    binary_version = _attribute("binary_version", "The binary's architecture, 10 * major + minor (GPU)")
    cache_mode_ca = _attribute("cache_mode_ca", "Whether it was compiled with -Xptxas --dlcm=ca (GPU)")
    preferred_shared_memory_carveout = _attribute("preferred_shared_memory_carveout",
                                                  "The shared memory carveout it prefers, in percent (GPU)")

    def __call__(self, grid, block, args, *, shared_mem=0, sync=None, time_limit=None, **cpu_options):
        """Launch the kernel (compiling it first, at the first call). grid and block: an int or
        a tuple of 1 to 3 ints. args: a tuple matching the kernel's parameters.

        On a GPU the launch is asynchronous, as CuPy's: it returns once the kernel is queued,
        and a fault shows at the next cudacheck.synchronize() (or the next launch), naming the
        launches since the last one. sync=True waits for the kernel, so its error stops at this
        line (default: cudacheck.config.launch_blocking). On the CPU runtime a launch always
        returns when the kernel is done.

        CPU runtime only: time_limit (seconds; default cudacheck.config.time_limit);
        schedule ("forward", "reverse" or "random") and seed: the order a block's threads
        run in; in checked mode, trace (blocks to record, as (x, y) tuples) and
        trace_threads (threads to record; default all). A checked launch leaves its
        counts and trace in self.last_launch.
        """
        gpu = self._gpu
        if gpu is None:
            impl = self._ready().impl
            if self.backend == "gpu":
                self._gpu = gpu = impl   # later calls go straight to it: a launch's host cost is CuPy's
        if gpu is not None:
            if cpu_options:
                raise TypeError(f"{', '.join(cpu_options)}: options of the CPU runtime, not of backend='gpu'")
            gpu.launch(self.name, grid, block, args, shared_mem, self.max_dynamic_shared_size_bytes,
                       config.launch_blocking if sync is None else sync)
            return
        self.last_launch = impl.launch(self.name, grid, block, args, shared_mem, self.max_dynamic_shared_size_bytes,
                                       time_limit, cooperative=self.enable_cooperative_groups, **cpu_options)

    def launcher(self, grid, block, args, shared_mem=0):
        """A function that launches this kernel again with these arguments, without the
        checks or the wait: for timing loops on a GPU, after one checked call."""
        return self._ready().impl.launcher(self.name, grid, block, args, shared_mem,
                                           self.max_dynamic_shared_size_bytes)

    def __repr__(self):
        if not self._found:
            return f"<kernel {self.name} on {self.backend}, compiled at its first use>"
        signature = self.signature
        params = ", ".join(p.text for p in signature.params) if signature else "..."
        return f"<kernel {self.name}({params}) on {self.backend}>"


# The class of a kernel under its name of earlier releases: RawModule.get_function returned a
# Function, and RawKernel(...) was a function returning one.
Function = RawKernel
