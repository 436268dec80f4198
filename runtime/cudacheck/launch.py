"""Launch configuration: grid and block sizes and shared memory, checked before any
launch on either backend, against the limits every current NVIDIA GPU shares."""
from dataclasses import dataclass, replace
from numbers import Integral

from .errors import LaunchConfigError

MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)
MAX_CLUSTER_SIZE = 8   # blocks per cluster, the portable limit (Hopper opts into 16)
# Shared memory (static + dynamic) a block gets without opting in to more (CUDA's default),
# and the most it can opt into (H100 and H200: 227 KiB; the CPU runtime states the same).
DEFAULT_SHARED_LIMIT = 48 * 1024
OPTIN_SHARED_LIMIT = 227 * 1024


# The GPU the CPU runtime describes (cudaGetDeviceProperties): an H100 SXM5, compute
# capability 9.0, and what one of its SMs holds at once.
DESCRIBED_GPU = "H100 SXM5"
SM_COUNT = 132
MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM, SHARED_PER_SM, SHARED_RESERVED_PER_BLOCK = 32, 2048, 228 * 1024, 1024


def blocks_per_sm(threads_per_block, shared_per_block=0):
    """How many blocks of this size one SM of the described GPU holds at once, counting threads
    (in whole warps), blocks and shared memory (with the 1 KiB the GPU reserves per block);
    registers may lower it further (cudaOccupancyMaxActiveBlocksPerMultiprocessor counts them)."""
    warps = -(-threads_per_block // 32)
    return min(MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM // (32 * warps),
               SHARED_PER_SM // (shared_per_block + SHARED_RESERVED_PER_BLOCK))


def resident_blocks(threads_per_block, shared_per_block=0):
    """How many blocks of this size the described GPU holds at once (blocks_per_sm on each SM)."""
    return SM_COUNT * blocks_per_sm(threads_per_block, shared_per_block)


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple
    block: tuple
    shared_mem: int
    cluster: tuple = (1, 1, 1)   # blocks per cluster along each axis (the kernel's __cluster_dims__)
    cooperative: bool = False    # a cooperative launch: every block resident at once, grid.sync() allowed

    @property
    def cluster_size(self):
        x, y, z = self.cluster
        return x * y * z

    @property
    def threads_per_block(self):
        x, y, z = self.block
        return x * y * z

    @property
    def blocks(self):
        x, y, z = self.grid
        return x * y * z


def _dims(value, what):
    if isinstance(value, Integral):
        value = (value,)
    try:
        dims = tuple(value)
    except TypeError:
        raise LaunchConfigError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}") from None
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, Integral) for d in dims):
        raise LaunchConfigError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


# How a kernel opts into more dynamic shared memory, by the API that launches it
OPT_IN_CUPY = "the kernel's max_dynamic_shared_size_bytes (the GPU's opt-in, as in CuPy)"
OPT_IN_RUNTIME_API = "the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize with cudaFuncSetAttribute"


def check_launch(grid, block, shared_mem=0, optin=None, static=0, optin_limit=OPTIN_SHARED_LIMIT,
                 max_threads=MAX_THREADS_PER_BLOCK, opt_in_how=OPT_IN_CUPY):
    """Normalize grid and block to 3-tuples and check them; raise LaunchConfigError
    naming the limit that was broken and how to stay within it (opt_in_how: how the
    launching API raises a kernel's shared-memory limit)."""
    g, b = _dims(grid, "grid"), _dims(block, "block")
    for axis, (n, lim) in enumerate(zip(b, MAX_BLOCK_DIM)):
        if n < 1:
            raise LaunchConfigError(f"block{b}: every block dimension must be at least 1 (axis {'xyz'[axis]} is {n})")
        if n > lim:
            raise LaunchConfigError(f"block{b}: blockDim.{'xyz'[axis]} may be at most {lim}, not {n}")
    threads = b[0] * b[1] * b[2]
    if threads > max_threads:
        raise LaunchConfigError(
            f"block{b} asks for {threads} threads per block; the limit is {max_threads}"
            + ("" if max_threads != MAX_THREADS_PER_BLOCK
               else " (for example, a 32 x 32 block is the largest square one)"))
    for axis, (n, lim) in enumerate(zip(g, MAX_GRID_DIM)):
        if n < 1:
            raise LaunchConfigError(
                f"grid{g}: every grid dimension must be at least 1 (gridDim.{'xyz'[axis]} is {n}); "
                "a grid computed as size // tile is 0 when size < tile: round up with (size + tile - 1) // tile")
        if n > lim:
            raise LaunchConfigError(f"grid{g}: gridDim.{'xyz'[axis]} may be at most {lim}, not {n}")
    if not isinstance(shared_mem, Integral) or shared_mem < 0:
        raise LaunchConfigError(f"shared_mem must be a byte count >= 0, not {shared_mem!r}")
    if optin is not None and (not isinstance(optin, Integral) or not 0 <= optin <= optin_limit - static):
        raise LaunchConfigError(
            f"max_dynamic_shared_size_bytes={optin!r}: a block may opt into at most {optin_limit - static} bytes of "
            f"dynamic shared memory here ({optin_limit} in all, less {static} of static shared memory)")
    limit = optin if optin is not None else DEFAULT_SHARED_LIMIT - static
    if shared_mem > limit:
        how = f"raise {opt_in_how} or use a smaller tile"
        raise LaunchConfigError(
            f"shared_mem={shared_mem} bytes of dynamic shared memory exceeds the {limit} bytes this kernel may "
            f"use per block ({'48 KiB without opting in' if optin is None else 'its opt-in'}"
            f"{f', less {static} of static shared memory' if static and optin is None else ''}); {how}")
    return LaunchConfig(g, b, int(shared_mem))


def with_cluster(config, dims, kernel):
    """config with the cluster of `kernel` (its __cluster_dims__: dims, missing ones 0), checked
    as CUDA checks a clustered launch: a grid that is not a whole number of clusters along each
    axis, or a cluster of more than 8 blocks, is refused (cudaErrorInvalidClusterSize)."""
    dims = tuple(d or 1 for d in dims)
    size = dims[0] * dims[1] * dims[2]
    if size > MAX_CLUSTER_SIZE:
        raise LaunchConfigError(f"kernel `{kernel}` has __cluster_dims__{dims}: {size} blocks per cluster, more than "
                                f"the {MAX_CLUSTER_SIZE} a launch may have (cudaErrorInvalidClusterSize)")
    for axis, (n, c) in enumerate(zip(config.grid, dims)):
        if n % c:
            raise LaunchConfigError(
                f"grid{config.grid}: kernel `{kernel}` runs in clusters of {dims} blocks (__cluster_dims__), so "
                f"the grid must be a whole number of clusters, but gridDim.{'xyz'[axis]} = {n} is not a multiple of "
                f"{c}; CUDA refuses the launch (cudaErrorInvalidClusterSize, CuPy's CUDA_ERROR_INVALID_CLUSTER_SIZE: "
                "cluster misconfiguration). Round the grid up to a multiple of the "
                "cluster, and let the extra blocks skip work that lies past the data")
    return replace(config, cluster=dims)


def as_cooperative(config, kernel, static=0):
    """config as a cooperative launch of `kernel` (static: its static shared memory per block),
    checked as CUDA checks one: grid.sync() needs every block of the grid on the GPU at once, so
    a grid of more blocks than the GPU holds is refused (cudaErrorCooperativeLaunchTooLarge).
    The CPU runtime counts threads, blocks and shared memory per SM; it cannot know the registers
    a GPU's compiler gives the kernel, which may lower the limit further."""
    shared = static + config.shared_mem
    per_sm = blocks_per_sm(config.threads_per_block, shared)
    limit = SM_COUNT * per_sm
    if config.blocks > limit:
        raise LaunchConfigError(
            f"grid{config.grid}: a cooperative launch of kernel `{kernel}` needs all its {config.blocks} blocks on the "
            f"GPU at once, but an {DESCRIBED_GPU} holds at most {limit} blocks of {config.threads_per_block} threads "
            f"and {shared} bytes of shared memory ({per_sm} per SM on its {SM_COUNT} SMs, fewer if the kernel uses "
            "many registers); CUDA refuses the launch (cudaErrorCooperativeLaunchTooLarge). Launch at most "
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor(...) x multiProcessorCount blocks, and let each thread "
            "loop over several elements (a grid-stride loop: i += gridDim.x * blockDim.x)",
            cuda_error="cudaErrorCooperativeLaunchTooLarge")
    return replace(config, cooperative=True)
