"""Written exam questions with worked answers, chapter by chapter, beside the clicker
questions of tiling_course.quiz. Every number in an answer is computed here, from the same
formulas and device limits the chapters use (perfplots' CC90_LIMITS and T4_LIMITS), so a
change there reaches the answers; tests/course/test_questionbank.py checks them against checked
mode's counts.

    questionbank.markdown()   every question and worked answer, for slides or a handout
    questionbank.gift()       the questions in Moodle's GIFT format, for the LMS's question bank

GIFT, not QTI: Moodle imports it as it is, it is plain text that reads well in a diff, and
it states a numeric answer with its tolerance ({#2048:0}); an essay question ({}) carries
the worked answer as the grader's information. (Canvas imports QTI; Moodle can export a
GIFT bank as QTI.)
"""
from dataclasses import dataclass

from . import perfplots


@dataclass(frozen=True)
class Question:
    chapter: str
    id: str
    text: str            # Markdown
    worked: str          # the worked answer, Markdown
    answer: float | None = None   # a numeric question's answer; None: a written one


def loads_per_thread_naive(width):
    """Global loads of one thread of the naive kernel: a row of M and a column of N."""
    return 2 * width


def loads_per_thread_tiled(width, tile):
    """One element of M and one of N per phase, Width / tile phases."""
    return 2 * width // tile


def tile_intensity(tile):
    """FLOP per byte of global memory loaded, for one phase of a block: 2 tile^3 FLOPs
    (a multiply and an add per term) over 2 tile^2 floats of 4 bytes."""
    return 2 * tile ** 3 / (2 * tile * tile * 4)


def questions():
    w, t = 1024, 16
    out = [
        Question("01_naive", "E1.1", f"How many global-memory loads does one thread of the naive kernel make for "
                 f"`Width` = {w}?", f"It reads a row of `M` and a column of `N`, `Width` elements each: 2 x {w} = "
                 f"{loads_per_thread_naive(w):,} loads (one multiply-add per pair).", loads_per_thread_naive(w)),
        Question("02_tiling", "E2.1", f"How many global-memory loads does one thread of the tiled kernel make for "
                 f"`Width` = {w} and {t} x {t} tiles?", f"{w} / {t} = {w // t} phases, one element of `M` and one "
                 f"of `N` per phase: {loads_per_thread_tiled(w, t)} loads, {t} times fewer than the naive "
                 "kernel's.", loads_per_thread_tiled(w, t)),
    ]
    for tile in (16, 32):
        out.append(Question(
            "02_tiling", f"E2.{2 if tile == 16 else 3}", f"What is the arithmetic intensity (FLOP per byte "
            f"loaded from global memory) of the tiled kernel with {tile} x {tile} tiles, in float32?",
            f"Per phase a block loads 2 x {tile}² floats = {2 * tile * tile * 4:,} bytes and computes {tile}³ "
            f"multiply-adds = {2 * tile ** 3:,} FLOPs: {tile_intensity(tile):g} FLOP/B, that is `tile` / 4 (the "
            "naive kernel's is 0.25).", tile_intensity(tile)))
    out.append(Question(
        "03_syncthreads", "E3.1", "The tiled kernel's loop body loads the tiles, then computes from them. Where "
        "does it need `__syncthreads()`, and what does each barrier prevent?",
        "Two barriers. After the loads: no thread may read a tile element before the thread that loads it has "
        "written it (read after write). After the computation: no thread may overwrite a tile with the next "
        "phase's element while another still reads the current one (write after read). A barrier waits for the "
        "threads of one block only."))
    for name, limits in (("an H100 (compute capability 9.0)", perfplots.CC90_LIMITS),
                         ("a T4 (compute capability 7.5)", perfplots.T4_LIMITS)):
        for tile in (16, 32):
            o = perfplots.occupancy(tile, limits)
            n = len([q for q in out if q.chapter == "05_performance"]) + 1
            out.append(Question(
                "05_performance", f"E5.{n}", f"How many blocks of the tiled kernel with {tile} x {tile} tiles "
                f"can be resident on one multiprocessor of {name}, and how many warps is that?",
                f"A block is {o['threads']} threads = {o['warps']} warps and {o['smem']:,} bytes of shared memory. "
                f"Warps allow {limits['warps_per_sm']} / {o['warps']} = {o['by_warps']} blocks, the block limit "
                f"{limits['blocks_per_sm']}, shared memory {o['by_smem']}: so {o['blocks']} blocks, "
                f"{o['blocks'] * o['warps']} warps. More than one block per multiprocessor, as on every GPU "
                "since the lecture's.", o["blocks"]))
    return out


def markdown():
    lines = ["# Question bank: written questions with worked answers", ""]
    for q in questions():
        lines += [f"## {q.id} ({q.chapter})", "", q.text, "", f"**Answer.** {q.worked}", ""]
    return "\n".join(lines)


def gift():
    out = ["// The tiled-matmul book's question bank, in Moodle's GIFT format (tiling_course.questionbank).", ""]
    for q in questions():
        out.append(f"$CATEGORY: tiled-matmul/{q.chapter}")
        body = _gift_escape(q.text)
        if q.answer is None:
            out.append(f"::{q.id}::[markdown]{body} {{}}")
        else:
            out.append(f"::{q.id}::[markdown]{body} {{#{q.answer:g}:0 #{_gift_escape(q.worked)}}}")
        out.append("")
    return "\n".join(out)


def _gift_escape(text):
    # GIFT's special characters, escaped with a backslash.
    for ch in "\\~=#{}:":
        text = text.replace(ch, "\\" + ch)
    return text
