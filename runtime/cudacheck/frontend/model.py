"""What the front end tells its users about a source: its kernels and their parameters, its
`__shared__`, `__device__` and `__constant__` variables, what the CPU runtime cannot run and
the edits the CPU build makes (a Program), and a whole program's launches (a Launch). A
Program goes to and from JSON for the disk cache."""
import json
from dataclasses import asdict, dataclass, field

import numpy as np


def spec(descr):
    """A stored dtype description as np.dtype() takes it (JSON turned the formats' (type,
    shape) tuples into lists)."""
    if isinstance(descr, dict):
        return {**descr, "formats": [(spec(f[0]), tuple(f[1])) if isinstance(f, list) else spec(f)
                                     for f in descr["formats"]]}
    return descr


def dtype_from(descr):
    """The NumPy dtype of a stored description (None stays None)."""
    return None if descr is None else np.dtype(spec(descr))


@dataclass(frozen=True)
class Param:
    name: str
    base: str            # element type as the kernel sees it, canonical: "float", "unsigned int", "float4", "Particle"
    pointer: bool
    const: bool          # a pointer to const: the kernel cannot write through it (without const_cast)
    text: str            # the declaration as written, for messages
    descr: object = None # NumPy dtype of one element (of a vector type: of one lane), as dtype.descr; None: unknown
    lanes: int = 1
    itemsize: int = 0    # bytes of one element as the kernel declares it

    @property
    def dtype(self):
        return dtype_from(self.descr)


@dataclass(frozen=True)
class Kernel:
    name: str                      # as get_function takes it: "tiled", "ns::scale" or "tiled<16>"
    function: str                  # the C++ identifier: "tiled"
    params: tuple
    line: int                      # the line of the kernel's definition, 1-based
    end_line: int = 0              # the line of its closing brace
    linkage: str = "C"             # "C" (extern "C") or "C++" (the GPU backend passes its name expression)
    cluster: str = ""              # __cluster_dims__'s arguments as written ("CLUSTER, 1, 1"); "": none


@dataclass(frozen=True)
class SharedVar:
    id: int
    name: str
    line: int
    extern: bool                   # extern __shared__: a view of the launch's dynamic shared memory
    function: str                  # the function it is declared in ("" at namespace scope)
    size: int                      # bytes, or -1 where it depends on template parameters


@dataclass(frozen=True)
class DeviceVar:
    name: str                      # as get_global takes it
    line: int
    space: str                     # "device", "constant" or "managed"
    size: int
    descr: object = None           # NumPy dtype of its elements
    shape: tuple = ()


@dataclass
class Program:
    kernels: dict                              # get_function name -> Kernel
    templates: list                            # qualified names of template kernels
    shared: list                               # SharedVar
    device_vars: list                          # DeviceVar
    unsupported: dict                          # kernel name (or template) -> (line, construct)
    edits: list = field(default_factory=list)  # (start, end, text): the CPU build's edits of the source
    namespace_shared: list = field(default_factory=list)   # (id, qualified name) of namespace-scope __shared__
    subscripts: dict = field(default_factory=dict)          # line -> [array name, outer bound] subscripted there
    # Bytes of static __shared__ each kernel uses, its own and its callees' (templates: not known).
    static_shared: dict = field(default_factory=dict)
    # Whole programs (program=True) only:
    allocations: dict = field(default_factory=dict)         # line -> the variable a cudaMalloc there allocates
    main_params: int = -1                                   # parameters of main (-1: the program has no main)

    def to_json(self):
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        d["kernels"] = {k: Kernel(**{**v, "params": tuple(Param(**p) for p in v["params"])})
                        for k, v in d["kernels"].items()}
        d["shared"] = [SharedVar(**s) for s in d["shared"]]
        d["device_vars"] = [DeviceVar(**{**v, "shape": tuple(v["shape"])}) for v in d["device_vars"]]
        d["unsupported"] = {k: tuple(v) for k, v in d["unsupported"].items()}
        d["edits"] = [tuple(e) for e in d["edits"]]
        d["namespace_shared"] = [tuple(e) for e in d["namespace_shared"]]
        return cls(**d)


@dataclass(frozen=True)
class Launch:
    line: int
    kernel: str          # as get_function takes it; a template instance as its name expression: "tiled<16>"
    cooperative: bool = False   # cudaLaunchCooperativeKernel, not kernel<<<...>>>
