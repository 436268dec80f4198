"""The exceptions a kernel can raise, on either backend.

Every one derives from KernelError, so a notebook can catch them all, and every
message says what went wrong, where, and what to do about it.
"""


class KernelError(Exception):
    """Base class of everything a kernel launch or compilation can raise."""


class CompileError(KernelError):
    """The source does not compile. The message holds the compiler's log beside the
    numbered source lines it points at."""

    def __init__(self, message, log="", backend=""):
        super().__init__(message)
        self.log = log
        self.backend = backend


class UnsupportedFeatureError(CompileError):
    """The source uses something CUDA accepts but the CPU runtime does not provide."""


class ArgumentError(KernelError, TypeError):
    """Arguments that do not match the kernel's parameters (count, kind, element type)."""


class LaunchConfigError(KernelError, ValueError):
    """A grid, block or shared-memory size that no GPU would launch."""


class KernelRuntimeError(KernelError):
    """The kernel started and then failed while running."""


class KernelCrashError(KernelRuntimeError):
    """A CPU launch died of a signal (most often an access outside every array)."""


class KernelAssertionError(KernelRuntimeError):
    """An assert() in the kernel failed."""


class KernelTimeoutError(KernelRuntimeError):
    """The kernel ran past its time limit and was stopped."""


class GPUContextError(KernelRuntimeError):
    """The GPU reported an error that poisons the CUDA context (an illegal address)."""




class CheckError(KernelRuntimeError):
    """A finding of checked mode (check=True). Its attributes name the kernel, the block
    and thread (as (x, y, z) tuples), the array, the index and the source line."""

    def __init__(self, message, **details):
        super().__init__(message)
        self.details = details
        for key, value in details.items():
            setattr(self, key, value)


class OutOfBoundsError(CheckError):
    """A read or write outside a global or shared array (compute-sanitizer: memcheck)."""


class SharedMemoryRaceError(CheckError):
    """Two threads touched one shared element between barriers, one writing (racecheck)."""


class BarrierDivergenceError(CheckError):
    """Threads of one block reached different barriers, or some exited while others
    waited (synccheck)."""


class WarpDivergenceError(BarrierDivergenceError):
    """A warp operation (__syncwarp, a shuffle, a vote) whose mask names a lane that does
    not take part in it, or a shuffle that reads such a lane (synccheck)."""


class UninitializedReadError(CheckError):
    """A shared element read before any thread of the block wrote it (initcheck)."""


__all__ = [name for name in dir() if name.endswith("Error")]
