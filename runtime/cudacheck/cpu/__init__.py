"""The CPU runtime: CUDA C compiled by the machine's C++ compiler, blocks run in
isolated worker processes, the threads of a block as fibers (see src/; include/ holds the
headers a kernel may include)."""
import ctypes
import os
import shutil
import subprocess
import tempfile
import weakref
from functools import lru_cache

import numpy as np

from ..arguments import check_arguments
from ..config import config
from ..errors import KernelError
from ..frontend import SOURCE_NAME, dtype_from
from ..launch import DEFAULT_SHARED_LIMIT, OPTIN_SHARED_LIMIT, as_cooperative, check_launch, with_cluster
from ..tensormap import TensorMap
from ..texture import TextureObject
from . import abi, checked, compiler, findings, forked_launch

SCHEDULES = ("forward", "reverse", "random")


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


def function_name(name):
    """addr2line's name of a function, shortened for a message: no parameters, template arguments
    (the quoted call shows them), return type or namespace; a lambda's body as `a lambda in f`."""
    parts, word, depth, lam = [], "", 0, False   # the name's components, split at its top-level ::
    i = 0
    while i < len(name):
        c = name[i]
        if c in "(<{":
            if depth == 0 and name.startswith(("{lambda(", "<lambda("), i):
                lam = True
            depth += 1
        elif c in ")>}":
            depth = max(depth - 1, 0)
        elif depth == 0 and name.startswith("::", i):
            parts.append((word, lam))
            word, lam = "", False
            i += 2
            continue
        elif depth == 0:
            word += c
        i += 1
    parts.append((word, lam))
    names = []
    for word, lam in parts:
        word = word.replace(" const", "").strip().rsplit(" ", 1)[-1]   # a return type before it
        if lam:
            return "a lambda in " + (names[-1] if names else "the kernel")
        if word and word != "operator":
            names.append(word)
    return names[-1] if names else name.strip()


class SourceLines:
    """Where in the kernel's source an instruction of its library is: addr2line reads the
    line table checked mode compiles in, and the first frame in kernel.cu wins (an access
    in a helper inlined into the kernel is the helper's line). calls(pc) gives the whole inline
    chain in kernel.cu, from the kernel's call down to that line."""

    def __init__(self, path):
        self.path = str(path)
        self.known = {}
        self.chains = {}   # pc -> ((line, function), ...) in kernel.cu, outermost first

    def _read(self, pcs):
        todo = sorted({int(p) for p in pcs} - self.known.keys())
        if not todo:
            return
        try:
            out = subprocess.run(["addr2line", "-i", "-f", "-C", "-a", "-e", self.path, *map(hex, todo)],
                                 capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        pc, frames, function = None, {}, None
        for line in out.splitlines():
            if line.startswith("0x") and function is None:
                pc = int(line, 16)
                frames[pc] = []
            elif pc is None:
                continue
            elif function is None:
                function = line
            else:   # file:line (discriminator n), after its function's line
                where, _, num = line.rpartition(":")
                num = num.split()[0] if num.split() else ""
                if os.path.basename(where) == SOURCE_NAME and num.isdigit() and int(num) > 0:
                    frames[pc].append((int(num), function_name(function)))
                function = None
        for p in todo:
            chain = frames.get(p, [])
            self.known[p] = chain[0][0] if chain else 0
            self.chains[p] = tuple(reversed(chain))

    def __call__(self, pcs):
        self._read(pcs)
        return [self.known[int(p)] for p in pcs]

    def calls(self, pc):
        """The inline chain of the instruction at pc, as ((line, function), ...), outermost first:
        the kernel's line calling the first helper, ..., the helper's own line last; () where the
        instruction is the kernel's own (a chain of one frame) or its line is unknown."""
        self._read([pc])
        chain = self.chains[int(pc)]
        return chain if len(chain) > 1 else ()


class DeviceGlobal:
    """A `__device__` or `__constant__` variable's memory, shared by every worker of the
    module's launches: CuPy's MemoryPointer interface (copy_from_host, copy_to_host), plus
    `array`, a NumPy view of it."""

    def __init__(self, address, size, dtype, shape, owner):
        self.ptr = address
        self.size = size
        self._owner = owner   # keeps the library mapped
        memory = (ctypes.c_char * size).from_address(address)
        memory.owner = owner   # and so does the array, which outlives this object where a caller keeps only it
        self.array = np.ctypeslib.as_array(memory).view(np.uint8)
        if dtype is not None and size % dtype.itemsize == 0:
            self.array = self.array.view(dtype).reshape(shape or (size // dtype.itemsize,))

    @staticmethod
    def _address(mem):
        if isinstance(mem, int):
            return mem
        if isinstance(mem, np.ndarray):
            return mem.ctypes.data
        return ctypes.cast(mem, ctypes.c_void_p).value

    def copy_from_host(self, mem, size):
        if size > self.size:
            raise ValueError(f"copy of {size} bytes into a variable of {self.size}")
        ctypes.memmove(self.ptr, self._address(mem), size)

    def copy_to_host(self, mem, size):
        if size > self.size:
            raise ValueError(f"copy of {size} bytes from a variable of {self.size}")
        ctypes.memmove(self._address(mem), self.ptr, size)

    def memset(self, value, size):
        ctypes.memset(self.ptr, value, size)


def _cluster_dims(lib, i):
    """Kernel i's __cluster_dims__, as its launch stub evaluates them (0: not given)."""
    dims = (ctypes.c_uint32 * 3)()
    abi.bind(lib, f"kc_cluster_{i}")(dims)
    return tuple(dims)


def share_device_memory(lib, program):
    """Map a loaded library's device-variable section shared, so that every worker of its
    launches sees one copy; return ({name: (address, size, var)}, (section start, end))."""
    if not program.device_vars:
        return {}, (0, 0)
    start, size = ctypes.c_void_p(), ctypes.c_uint64()
    rc = abi.bind(lib, "kc_share_device_memory")(ctypes.byref(start), ctypes.byref(size))
    if rc != 0:
        raise KernelError(f"the CPU runtime could not share the module's __device__ variables: {os.strerror(-rc)}")
    lo, hi = start.value or 0, (start.value or 0) + size.value
    out = {}
    for i, var in enumerate(program.device_vars):
        addr = abi.bind(lib, f"kc_device_var_{i}")()
        if not lo <= addr < hi:
            raise KernelError(f"`{var.name}` (line {var.line}): the CPU runtime shares __device__ variables "
                              "declared at namespace scope; a static member of a class template is not supported")
        out[var.name] = (addr, var.size, var)
    return out, (lo, hi)


@lru_cache(maxsize=None)
def _private_dir():
    d = tempfile.mkdtemp(prefix="kernels-modules-")
    weakref.finalize(_private_dir, shutil.rmtree, d, True)
    return d


class CpuModule:
    """Every kernel of one source, compiled into one library."""

    def __init__(self, source, program, kernels, options, check=False):
        self.source = source
        self.program = program
        self.check = check
        self.kernels = kernels          # name -> frontend.Kernel
        path = compiler.build(source, program, list(kernels.values()), options, checked=check)
        if program.device_vars:
            # Device variables belong to this module: a private copy of the library, so that
            # two modules of one source do not share them (the loader maps a path once).
            private = tempfile.NamedTemporaryFile(dir=_private_dir(), suffix=".so", delete=False)
            private.close()
            shutil.copyfile(path, private.name)
            path = private.name
        self.path = path
        self.lib = compiler.load(path)
        # Unloaded with the module, not at exit: every launch forks its workers, and a fork
        # copies each mapping of every library the process holds (a test session that kept
        # its hundreds of kernels loaded forked three times slower by its end).
        weakref.finalize(self, compiler.unload_module, self.lib).atexit = False
        self.lines = SourceLines(path)
        self.spawns = {name: abi.bind(self.lib, f"kc_spawn_{i}") for i, name in enumerate(kernels)}
        self.clusters = {name: _cluster_dims(self.lib, i) for i, (name, k) in enumerate(kernels.items()) if k.cluster}
        self.device, self.device_section = share_device_memory(self.lib, self.program)

    def get_global(self, name):
        key = name.strip().lstrip(":")
        if key not in self.device:
            have = ", ".join(self.device) or "none"
            raise KeyError(f"no __device__ or __constant__ variable {name!r} in this module (variables: {have})")
        addr, size, var = self.device[key]
        dtype = dtype_from(var.descr)
        return DeviceGlobal(addr, size, dtype, var.shape, self)

    def launch(self, name, grid, block, args, shared_mem=0, optin=None, time_limit=None, schedule="forward", seed=None,
               trace=None, trace_threads=None, cooperative=False):
        """Function.__call__ on the CPU runtime: the call's settings, checked, become one
        forked_launch.LaunchPlan, which forked_launch.run carries to the workers. cooperative:
        the module's enable_cooperative_groups (a cooperative launch, as CuPy's)."""
        kernel = self.kernels[name]
        cfg = check_launch(grid, block, shared_mem, optin=optin)
        if name in self.clusters:
            cfg = with_cluster(cfg, self.clusters[name], name)
        if cooperative:
            cfg = as_cooperative(cfg, name, max(self.program.static_shared.get(name, 0), 0))
        values = check_arguments(kernel, args, np.ndarray, "pass a NumPy array (cupy.asnumpy(x) copies one back)")
        maps = {i: a for i, a in enumerate(args)
                if isinstance(a, (TensorMap, TextureObject)) and a.source is not None}
        order = schedule_order(schedule, cfg.threads_per_block, seed)
        if (trace is not None or trace_threads is not None) and not self.check:
            raise ValueError("traces are recorded in checked mode: compile with check=True")
        workers = forked_launch.worker_count(cfg)
        setup = None
        context = findings.Context(kernel, cfg, self.source, self.lines, self.program)
        if self.check:
            setup = checked.CheckSetup(
                kernel, cfg, workers, [s.name for s in self.program.shared], self.lines,
                devices=list(self.device.items()), device_section=self.device_section,
                trace_blocks=None if trace is None else [_linear(b, cfg.grid, "traced block") for b in trace],
                trace_threads=None if trace_threads is None else [_linear(t, cfg.block, "traced thread")
                                                                   for t in trace_threads])
        plan = forked_launch.LaunchPlan(kernel, cfg, self.spawns[name],
                                 time_limit=config.time_limit if time_limit is None else time_limit,
                                 workers=workers,
                                 shared_limit=DEFAULT_SHARED_LIMIT if optin is None else OPTIN_SHARED_LIMIT,
                                 order=order, schedule=schedule, check=setup, context=context)
        return forked_launch.run(plan, values, maps)

