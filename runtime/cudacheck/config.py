"""Settings shared by every launch; change them on `cudacheck.config`.

    import cudacheck
    cudacheck.config.time_limit = 30.0   # seconds a CPU launch may run
"""
import os
from dataclasses import dataclass, field
from pathlib import Path


def _default_cache_dir():
    if os.environ.get("CUDACHECK_CACHE_DIR"):
        return Path(os.environ["CUDACHECK_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cudacheck"


@dataclass
class Config:
    """Settings shared by every launch (cudacheck.config is the one instance): change a field
    and the next launch uses it."""

    # Seconds a CPU launch may run before it is killed (KernelTimeoutError).
    time_limit: float = 10.0
    # Worker processes a CPU launch spreads its blocks over (None: one per core).
    workers: int | None = None
    # Bytes of stack each CUDA thread gets on the CPU (its local variables and arrays live
    # there): a GPU's 512 KiB of local memory per thread, plus room for calls. Only the pages
    # a thread touches cost memory. Past it, a launch fails naming the stack overflow.
    stack_size: int = 576 * 1024
    # Checked mode looks for races on global memory between any two threads of a launch
    # (as well as on shared memory). Turning it off only makes checked runs faster.
    global_races: bool = True
    # Where compiled CPU kernels are kept between runs.
    cache_dir: Path = field(default_factory=_default_cache_dir)
    # C++ compiler for the CPU runtime.
    cxx: str = os.environ.get("CXX", "g++")
    # backend='gpu': every launch waits for its kernel, so a fault stops at the launch's own
    # line (as CUDA_LAUNCH_BLOCKING=1 makes CUDA's launches wait). Off, launches are
    # asynchronous, as CuPy's, and a fault shows at the next cudacheck.synchronize().
    launch_blocking: bool = field(default_factory=lambda: any(
        os.environ.get(v, "") not in ("", "0") for v in ("CUDACHECK_LAUNCH_BLOCKING", "CUDA_LAUNCH_BLOCKING")))


config = Config()
