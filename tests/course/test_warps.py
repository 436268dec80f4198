"""The warp lesson's numbers (tiling_course.warps), computed from checked-mode traces,
against what the CUDA guides say a warp's accesses cost: 32-byte sectors of global
memory, 32 four-byte banks of shared memory, broadcasts of a shared word."""
import numpy as np
import pytest

from tiling_course import matmul, warps


def first_requests(kernel, tile, m, k=None, code=None):
    """{(array, op): Request} for warp 0 of block (0, 0), the first time it runs each access."""
    report = warps.record(kernel, tile, m, k, code=code)
    return {(r.array, r.op): r for r in warps.requests(report) if r.warp == 0 and r.step == 0}


def test_a_block_is_cut_into_warps_with_x_fastest():
    assert warps.warp_of((0, 0, 0), (16, 16, 1)) == (0, 0)
    assert warps.warp_of((15, 1, 0), (16, 16, 1)) == (0, 31)     # rows 0 and 1: warp 0
    assert warps.warp_of((0, 2, 0), (16, 16, 1)) == (1, 0)
    assert warps.warp_of((31, 5, 0), (32, 32, 1)) == (5, 31)     # one row per warp
    assert warps.warp_of((3, 1, 1), (8, 2, 2)) == (0, 27)        # z after y


@pytest.mark.parametrize("tile", [16, 32])
def test_the_naive_kernel_reads_rows_of_N_coalesced_and_broadcasts_M(tile):
    """The study blog says the reads of N's columns are uncoalesced; at each step a warp
    reads a row segment of N (tile consecutive floats), all bytes used."""
    r = first_requests("naive", tile, 64)
    rows_per_warp = 32 // tile
    assert len(r["M", "R"].elements) == rows_per_warp and r["M", "R"].efficiency == 4 / 32
    assert r["N", "R"].elements == list(range(tile)) and r["N", "R"].efficiency == 1
    assert r["N", "R"].sectors == tile * 4 // 32
    assert r["P", "W"].sectors == 4 and r["P", "W"].efficiency == 1


def test_threads_mapped_across_rows_are_uncoalesced():
    swapped = matmul.apply_edits(matmul.source("naive"), [
        ("blockDim.y + threadIdx.y;", "blockDim.y + threadIdx.x;"),
        ("blockDim.x + threadIdx.x;", "blockDim.x + threadIdx.y;")], "test", "naive")
    r = first_requests("naive", 16, 64, code=swapped)
    assert r["M", "R"].sectors == 16 and r["M", "R"].bytes_used == 64        # a column of M
    assert r["P", "W"].sectors == 16 and r["P", "W"].efficiency == 0.25


def test_the_best_practices_half_warp_analysis_holds_for_a_warp():
    """simpleMultiply, TILE_DIM 16: a warp is two half-warps (two rows of the block); each
    reads one element of a (4 of a sector's 32 bytes used) and one row of b's tile."""
    r = first_requests("simpleMultiply", 16, 64, k=16)
    assert r["a", "R"].sectors == 2 and r["a", "R"].bytes_used == 8
    assert r["b", "R"].sectors == 2 and r["b", "R"].efficiency == 1
    c = first_requests("coalescedMultiply", 16, 64, k=16)
    assert c["a", "R"].efficiency == 1 and c["a", "R"].sectors == 4
    assert c["aTile", "R"].passes == 1 and len(c["aTile", "R"].elements) == 2   # broadcast


@pytest.mark.parametrize("tile", [16, 32])
def test_the_tiled_kernel_is_free_of_bank_conflicts(tile):
    r = first_requests("tiled", tile, 64)
    for key in [("Mds", "W"), ("Nds", "W"), ("Mds", "R"), ("Nds", "R")]:
        assert r[key].space == "shared" and r[key].passes == 1, key


@pytest.mark.parametrize("tile, pad, store, load", [
    (32, 0, 32, 32), (32, 1, 1, 1), (32, 2, 2, 2),   # 33 apart: 32 banks; 34 apart: 16 banks
    (16, 0, 8, 8), (16, 1, 2, 1), (16, 2, 1, 1),     # two rows per warp: pad 1 still collides
])
def test_a_transposed_tile_conflicts_until_padded(tile, pad, store, load):
    src = matmul.source("tiled_transposed").replace("#define PAD 0", f"#define PAD {pad}")
    r = first_requests("tiled_transposed", tile, 64, code=src)
    assert (r["Nds", "W"].passes, r["Nds", "R"].passes) == (store, load)
    words = sorted({tx * (tile + pad) + ty for tx in range(tile) for ty in range(32 // tile)})
    banks = np.bincount(np.array(words) % 32, minlength=32)
    assert r["Nds", "W"].passes == banks.max()    # the same count, done by hand


def test_vector_accesses_cost_their_bytes():
    """Rung 4 loads float4s: a request of 8-byte or 16-byte accesses is served per half-
    or quarter-warp, and a float4 per lane covers 4 elements."""
    report = warps.record("ladder4_vectorized", 16, 128, 64, 128)
    vec = [r for r in warps.requests(report) if max(n for _, _, n in r.lanes) == 4]
    assert vec
    for r in vec:
        assert len(r.elements) <= 4 * len(r.lanes)
        if r.space == "global":
            assert r.sectors >= len(r.elements) * 4 // 32
        else:
            assert r.ideal_passes == -(-len(r.lanes) // 8)


def test_a_request_made_by_hand():
    r = warps.Request((0, 0, 0), 0, 1, "s", "R", 0, "shared", tuple((lane, 32 * lane, 1) for lane in range(32)))
    assert r.passes == 32 and r.conflict == 32
    r = warps.Request((0, 0, 0), 0, 1, "g", "R", 0, "global", tuple((lane, 7, 1) for lane in range(32)))
    assert r.sectors == 1 and r.bytes_used == 4 and r.elements == [7]
    r = warps.Request((0, 0, 0), 0, 1, "g", "R", 0, "global", tuple((lane, 6 + lane, 1) for lane in range(32)))
    assert r.sectors == 5    # 128 bytes from byte 24: not aligned to a sector, so one more
