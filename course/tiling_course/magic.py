"""The %%cuda cell magic: a notebook cell that holds CUDA C.

    %%cuda tiled_src
    extern "C" __global__ void matmul_tiled(...) { ... }

stores the cell's source in the variable `tiled_src` and compiles it at once (checked
mode on the CPU runtime, and NVRTC when a GPU is present), so a typo shows up in this
cell, beside its numbered lines, rather than later. Loaded by tiling_course.notebook.setup().
"""
import re

from cudacheck import KernelError, RawModule, gpu_available


def cuda(line, cell):
    name = line.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        print("Usage: %%cuda VARIABLE, then the CUDA C source on the following lines.")
        return
    from IPython import get_ipython
    get_ipython().user_ns[name] = cell
    backends = ["cpu"] + (["gpu"] if gpu_available() else [])
    try:
        for backend in backends:
            mod = RawModule(cell, backend=backend, check=backend == "cpu")
    except KernelError as e:
        print(f"{type(e).__name__}: {e}")
        return
    found = ", ".join(f"`{k}`" for k in mod.kernels) or "no __global__ function"
    where = " and the GPU (NVRTC)" if "gpu" in backends else ""
    from IPython.display import Markdown, display
    display(Markdown(f"Compiled {found} for the CPU runtime's checked mode{where}; source saved as `{name}`."))


def register(ipython):
    ipython.register_magic_function(cuda, magic_kind="cell", magic_name="cuda")
