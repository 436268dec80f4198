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
    """A grid, block or shared-memory size that no GPU would launch. `cuda_error` is the
    code a GPU's launch leaves for cudaGetLastError: cudaErrorInvalidValue for every bad
    grid, block and shared-memory size, and for a block of more threads than the kernel's
    __launch_bounds__ allows, as CUDA 13.0 on an H100 returns them (tests/runtime/launch_probe.cu;
    logs/2026-11-23-h100-programs.md, logs/2026-12-06-h100-gpu-checks.md). Older CUDA releases
    answered a bad grid or block with cudaErrorInvalidConfiguration. A cooperative launch
    whose blocks do not all fit on the GPU at once is cudaErrorCooperativeLaunchTooLarge."""

    def __init__(self, message, line=0, cuda_error="cudaErrorInvalidValue"):
        super().__init__(message)
        self.cuda_error = cuda_error
        self.line = line  # a whole program's launch line (0 for a launch from Python)


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


class _AtLine:
    """An error or warning about a whole program's host code: `line` is where (0: not known)."""

    def __init__(self, message, line=0):
        super().__init__(message)
        self.line = line


class HostCrashError(_AtLine, KernelCrashError):
    """A whole program's host code (its main) died of a signal: the line it was at, when known."""


class HostDeviceAccessError(HostCrashError):
    """Host code read or wrote device memory (a cudaMalloc pointer) directly. It faults on
    a GPU too; the message names the allocation and the line."""


class CheckError(KernelRuntimeError):
    """A finding of checked mode (check=True). Its attributes name the kernel, the block
    and thread (as (x, y, z) tuples), the array, the index and the source line. Where that line
    lies in a function the kernel calls (an inline PTX helper, a __device__ function inlined into
    it), `calls` is the chain of calls that reach it, outermost first: ((line, function), ...),
    from the kernel's line calling the first function down to (line, the function holding it);
    () where the line is the kernel's own or its place is not known."""

    calls = ()

    def __init__(self, message, **details):
        super().__init__(message)
        self.details = details
        for key, value in details.items():
            setattr(self, key, value)


class OutOfBoundsError(CheckError):
    """A read or write outside a global or shared array (compute-sanitizer: memcheck)."""


class RaceError(CheckError):
    """Two threads touched one element, at least one writing, with nothing ordering the two:
    on shared memory (SharedMemoryRaceError) or on global memory (GlobalMemoryRaceError).
    Catch this to catch both."""


class SharedMemoryRaceError(RaceError):
    """Two threads touched one shared element between barriers, one writing (racecheck)."""


class GlobalMemoryRaceError(RaceError):
    """Two threads of one launch touched one element of global memory (an array argument, a
    __device__ variable, a cudaMalloc allocation), at least one writing and not both atomic,
    with nothing ordering them: in one block, no barrier between; in different blocks, no
    __threadfence() and atomic or volatile flag between (compute-sanitizer checks shared
    memory only). `other_block`, `other_thread` and `other_line` name the other access. `scope`
    is "block" where a scope did not cover both threads (an atomicAdd_block of another block, a
    flag published after __threadfence_block()), else ""."""


class ClusterExitRaceError(RaceError):
    """A block of a thread-block cluster reached another block's shared memory (an arrival on its
    mbarrier through a mapa address) with nothing ordering that access before the other block
    exits. CUDA leaves an access to an exited block's shared memory undefined, and only the
    cluster barrier orders the two: the accessing thread arrives at it after the access
    (barrier.cluster.arrive, cluster.sync()) and a thread of the other block waits for that
    phase before exiting. `block`, `thread` and `line` name the access, `target_block` the
    block whose shared memory it reached, `released` the cluster barrier's phase (counted from
    1) at which the accessing thread arrived after it (-1: it never arrived again) and `waited`
    the last phase the target's threads waited for (0: none). Reported once the cluster has
    finished, whichever of its blocks finished first."""


class ForwardProgressError(CheckError):
    """Threads that wait for something only another block can do (spinning on a flag or a
    lock another block sets) while that block cannot run: the kernel relies on blocks making
    progress side by side, which CUDA promises only for a cooperative launch whose blocks all
    fit on the GPU at once. `line` is the loop's, `address` the location it polls. Also a
    block whose threads wait at a barrier that nothing that can still run will complete: an
    mbarrier's phase (`address`, its shared address) or a named barrier (`barrier`, its id).
    And grid.sync() (cooperative groups) in a launch that is not cooperative, or where a block
    has returned without reaching it (`returned`, that block), which a GPU never completes."""


class BarrierDivergenceError(CheckError):
    """Threads of one block reached different barriers, or some exited while others
    waited (synccheck)."""


class WarpDivergenceError(BarrierDivergenceError):
    """A warp operation (__syncwarp, a shuffle, a vote) whose mask names a lane that does
    not take part in it, or a shuffle that reads such a lane (synccheck)."""


class WarpCollectiveError(WarpDivergenceError):
    """A warp-collective operation (wmma::load_matrix_sync, store_matrix_sync, mma_sync) that
    not all 32 lanes of the warp reach as one call, or reach with different arguments
    (pointer, leading dimension, layout): undefined on a GPU. `arrived` lists the lanes that
    reached it."""


class AsyncCopyRaceError(SharedMemoryRaceError):
    """A shared element read or written while an asynchronous copy into it (cp.async,
    __pipeline_memcpy_async) is still in flight: before its thread waited for it with
    __pipeline_wait_prior (racecheck)."""


class TileNotReadyError(SharedMemoryRaceError):
    """Shared memory a TMA copy (cp.async.bulk.tensor) writes, read or written by a thread, or
    read as a wgmma operand, before that thread (for a wgmma: a thread of each of its warps) has
    observed the completion of the mbarrier phase the copy completes on: the async proxy's
    write is visible only through that wait (or a __syncthreads() after it). `copy_line` is
    the copy's line, `phase` the phase it completes on."""


class WgmmaOperandRaceError(SharedMemoryRaceError):
    """Shared memory a wgmma.mma_async reads as an operand, written (by a thread's store or a
    TMA copy) before the warpgroup's wgmma.wait_group retired the wgmma's group: the
    asynchronous multiply may read the new bytes or the old. `wgmma_line` is the wgmma's line."""


class WgmmaAccumulatorRaceError(RaceError):
    """A thread read or wrote one of its wgmma.mma_async accumulators (a register the wgmma
    writes asynchronously, and the C++ variable bound to it as a "+f" operand) between the wgmma
    and the wgmma.wait_group of that thread that retires its group: a race with the tensor
    cores, which may write it before or after. `line` is the access's line, `wgmma_line` the
    wgmma's, `register` the accumulator's place in the wgmma's vector operand {d0, d1, ...},
    `group` the wgmma's commit group (counted from 0; equal to `committed` when no
    commit_group followed it yet), `retired` the groups the thread's wait_group had retired."""


class TmaStoreSourceRaceError(SharedMemoryRaceError):
    """Shared memory a TMA store (cp.async.bulk.tensor, shared to global, .bulk_group) reads as
    its source, written (by a thread's store or a TMA copy) before the thread that issued the
    store waited for its bulk group (cp.async.bulk.wait_group.read, or wait_group): the
    asynchronous store may write the new bytes to global memory or the old. `store_line` is the
    store's line, `store_thread` the thread that issued it."""


class ProxyFenceError(SharedMemoryRaceError):
    """Shared memory the async proxy reads (a TMA store's source box, a wgmma's operand) whose
    last write was a thread's ordinary store (the generic proxy), with no fence.proxy.async of
    that thread after the write and before the synchronization that hands the bytes to the
    thread issuing the store or wgmma: the PTX ISA requires that cross-proxy fence, and a GPU
    may read stale bytes without it. `thread` and `line` name the write, `op` the reader
    ("store" or "wgmma"), `async_line` its line, `issuer` the thread that issued the store (a
    wgmma: the first thread of its warpgroup, `warpgroup`), `fence_line` the writer's fence after
    the write that no synchronization orders before the read (0: none seen), `global_fence_line`
    its fence.proxy.async.global that is so ordered but orders global memory only (0: none)."""


class StageOverwriteError(SharedMemoryRaceError):
    """A TMA copy refills a pipeline stage (shared memory an earlier TMA copy filled) before the
    stage's consumers handed it back: a wgmma still reads the earlier fill and nothing orders the
    consumers' release (an arrival on the stage's "empty" mbarrier) before the copy, or no thread
    has even waited for the earlier fill's phase yet. The producer skipped its wait on the empty
    barrier, or waited for the wrong phase of it. `line` is the copy's, `address` and `phase` the
    full barrier and phase it fills, `old_address`, `old_phase` and `old_line` the earlier fill's,
    `reader` the warpgroup still reading it (-1: none read it yet) and `wgmma_line` its wgmma."""


class WaitParityError(TileNotReadyError, ForwardProgressError):
    """A block that cannot finish because a thread waits on an mbarrier for a phase beyond one it
    never observed complete: its parity (or its count of the barrier's phases) is one phase ahead,
    so it waits for a phase that only its own progress would start. On a GPU the same wait, reached
    before the earlier phase completes, returns at once and the thread reads the tile before the TMA
    has written it. `skipped` is how many completed phases the thread never observed."""


class ArrivalCountError(ForwardProgressError):
    """A block that cannot finish because an mbarrier's phase got some of its arrivals and waits for
    more that will never come: mbarrier.init's count is larger than the arrivals each phase gets
    (one per consumer warp, say, against a count of threads). `expected` is the count, `arrived`
    the arrivals the phase got."""


class WarpgroupCollectiveError(WarpCollectiveError):
    """A warpgroup-wide instruction (wgmma.mma_async: .sync.aligned) that not all four warps of
    the warpgroup reach together, or that they reach at different lines: undefined on a GPU,
    where it hangs or computes garbage. `missing` lists the warps that did not all arrive."""


class InvalidOperandError(CheckError):
    """A wmma or asynchronous-copy call given an argument CUDA forbids: a copy size other
    than 4, 8 or 16 bytes, a zero-fill larger than the copy, a copy from shared or into
    global memory (a GPU traps or misbehaves)."""


class TransactionCountError(InvalidOperandError):
    """An mbarrier phase whose arrivals have all come while its copies completed more bytes
    than expect_tx announced: the transaction count is below zero and the phase can never
    complete. `expected` and `delivered` are the phase's bytes."""


class TransactionStallError(TransactionCountError, ForwardProgressError):
    """A block that cannot finish because an mbarrier's phase has all its arrivals but waits for
    transaction bytes no copy will bring: expect_tx announced more bytes than the phase's copies
    deliver. `expected` and `delivered` are the phase's bytes."""


class MisalignedAddressError(InvalidOperandError):
    """A wmma pointer not 32-byte aligned, or an asynchronous copy whose source or
    destination is not aligned to its size (a GPU: cudaErrorMisalignedAddress). Raised by
    plain runs too."""


class LeadingDimensionError(InvalidOperandError):
    """A wmma load or store whose leading dimension (ldm) is not a multiple of 16 bytes (8
    __half or __nv_bfloat16 elements, 4 floats): undefined on a GPU."""


class UninitializedReadError(CheckError):
    """A shared element read before any thread of the block wrote it (initcheck)."""


class DeviceMemoryError(CheckError):
    """Checked mode, host side: a runtime API call that misuses device memory (a copy past
    an allocation's end or in the wrong direction, a pointer that is not device memory)."""


class UseAfterFreeError(DeviceMemoryError):
    """Device memory used (copied, launched on) after cudaFree released it."""


class DoubleFreeError(DeviceMemoryError):
    """cudaFree of memory that was already freed."""


class TextureWriteError(CheckError):
    """Checked mode: a kernel wrote the memory a texture object it was passed reads, in the same
    launch. The CUDA Programming Guide leaves such a fetch undefined: the texture cache is not
    kept coherent with the launch's global writes. `array` names the texture parameter."""


class SameValueWriteWarning(UserWarning):
    """Checked mode: threads of one launch wrote one element of global memory, or of a block's
    shared memory, with nothing ordering the writes, each storing the value it already held
    (many threads setting a flag, `*over = true`, as Rodinia's bfs does, or `__shared__ bool
    done; done = true;`). CUDA's memory model calls this a race, but every outcome is the same
    value, so it is a warning, not a GlobalMemoryRaceError or SharedMemoryRaceError; a write of
    a different value is still that error, and so, in shared memory, is a read racing with the
    writes. Its attributes name the kernel, the array, the index, both threads and blocks and
    both lines, as the race errors' do."""

    def __init__(self, message, **details):
        super().__init__(message)
        self.details = details
        for key, value in details.items():
            setattr(self, key, value)


class ClusterExitWarning(UserWarning):
    """Plain mode: a remote mbarrier arrival, or a multicast copy, reached a block of the cluster
    after that block had exited. CUDA leaves the access undefined: a GPU lands it or fails the
    launch ("unspecified launch failure"), depending on the blocks' timing. Plain mode landed it
    (the block's shared memory is kept until its cluster ends), so the result is the one a GPU
    gives when the access comes in time; checked mode names the missing cluster barrier as a
    ClusterExitRaceError. `line` is the access's, `block`/`thread` the sender's, `target_block`
    the exited block."""

    def __init__(self, message, **details):
        super().__init__(message)
        self.details = details
        for key, value in details.items():
            setattr(self, key, value)


class ProgramWarning(_AtLine, UserWarning):
    """Something legal that a whole program most likely did not mean; `line` is where."""


class LaunchFailedWarning(ProgramWarning):
    """A whole program's launch that did not run: a grid, block or shared-memory size no GPU
    launches. Reported in both modes, whether or not the program asked cudaGetLastError (a
    GPU runs nothing and says nothing unless asked; compute-sanitizer reports every such
    launch). `kernel` is the kernel's name, `line` the launch's, `cuda_error` the code
    cudaGetLastError returns for it (LaunchConfigError says which)."""

    def __init__(self, message, line=0, kernel="", cuda_error=""):
        super().__init__(message, line)
        self.kernel, self.cuda_error = kernel, cuda_error


class MemoryLeakWarning(ProgramWarning):
    """Device memory still allocated when the program ended (legal, but free it)."""


class ResultNeverCopiedWarning(ProgramWarning):
    """A kernel wrote device memory that nothing read afterwards: no copy back to the host,
    no later kernel."""


__all__ = [name for name in dir() if name.endswith(("Error", "Warning"))]
