"""The Hopper task: P = M @ N by a kernel of kernels/hopper.cu (or a reader's copy of it),
launched by tiling_course.hopper's one rule, its BF16, FP16 or TF32 inputs' product compared with
NumPy in float64 within float accumulation's bound (measure.bench_hopper's tolerance)."""
import itertools
from dataclasses import dataclass

from .. import hopper, matmul, sources
from .matrix import Product, RoundedInputs

# (m, k, n): tiles cut at every edge and k not a multiple of the slice (64 16-bit values, or
# 32 floats for matmul_tf32); m not a multiple of 16 rows; k = 300, five slices through four
# slots (ten for TF32: each slot reused, its phase parity flipped), with 2 x 2 tiles of
# matmul_persistent's 128 x 256 (1 x 3 of matmul_tf32's 256 x 128) so that each of its
# CPU_SMS blocks walks two tiles; and the smallest product. Each runs checked in well under a
# second.
SHAPES = ((70, 100, 130), (129, 77, 250), (200, 300, 270), (1, 1, 1))


@dataclass(frozen=True)
class HopperMatmul(RoundedInputs, Product):
    """P = M @ N by `kernel` of hopper.cu at `precision` ("bf16" or "fp16"; "tf32" for
    matmul_tf32), compiled with -arch=sm_90a -std=c++17 (and -DHOPPER_FP16); `tile` does not apply (the tiles are
    hopper.cu's macros). On the CPU runtime the persistent grid has `sms` blocks, and a
    clustered kernel's grid `sms` / 2 clusters of two."""
    kernel: str = "matmul_persistent"
    precision: str = "bf16"
    sms: int = hopper.CPU_SMS
    holder = "nor of any other block"

    def __post_init__(self):
        hopper.require(self.kernel, self.precision)

    @property
    def name(self):
        return self.kernel

    def default_shapes(self, tile):
        return list(SHAPES)

    def compile(self, code, tile, backend, check):
        return hopper.compile(self.kernel, self.precision, backend, code, check)

    def run(self, code, inputs, tile, backend, check, **options):
        sms = self.sms if backend == "cpu" else None        # a GPU's own SMs
        return hopper.run(*inputs, self.kernel, self.precision, backend, code, check, sms=sms, **options)

    def writers(self, code, inputs, tile, row, col):
        """Who stores P[row][col], from a checked run tracing every block (a persistent
        block's tiles are not where its index says): the block that does, else the block
        storing most of the element's tile, no thread of which stores it (nor of any other)."""
        fn = self.compile(code, tile, "cpu", True)
        cfg = hopper.config(fn.module, self.kernel)
        (m, _), n = inputs[0].shape, inputs[1].shape[1]
        gx, gy = (*hopper.grid(self.kernel, cfg, m, n, self.sms), 1)[:2]
        _, fn = self.run(code, inputs, tile, "cpu", True, trace=list(itertools.product(range(gx), range(gy))))

        def tile_of(index):
            return index // n // cfg["block_m"], index % n // cfg["block_n"]
        flat = row * n + col
        trace = matmul.take_report(fn).trace
        stores = [a for a in trace if a.array == "P" and a.op == "W" and tile_of(a.index) == tile_of(flat)]
        mine = [a for a in stores if a.index == flat] or stores
        blocks = [a.block for a in mine] or [(0, 0, 0)]
        block = max(set(blocks), key=blocks.count)
        return block, (cfg["threads"], 1), sorted({a.thread for a in mine if a.block == block and a.index == flat})

    def source(self):
        return sources.read(hopper.FILE)
