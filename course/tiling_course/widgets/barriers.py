"""Chapter 3's widgets: the barrier explorer, and the race replay (predict first)."""
import html
from functools import lru_cache

from .base import GRID_STYLE, NO_GUESS, build, grid, grids, predict

BARRIER_OPTIONS = [("kept", True), ("removed", False)]


def barrier_kernel(first, second):
    """The tiled kernel with each of its two barriers kept or removed, as a corpus.WrongKernel
    (the two single removals are the corpus's no_first_barrier and no_second_barrier)."""
    from .. import corpus
    if first and not second:
        return corpus.WRONG["no_second_barrier"]
    if second and not first:
        return corpus.WRONG["no_first_barrier"]
    edits = () if first else ((corpus.TILED_FIRST_BARRIER, ""), (corpus.TILED_SECOND_BARRIER, ""))
    name = "tiled" if first else "no_barriers"
    return corpus.WrongKernel(name, "tiled", "", edits, corpus.WRONG["no_first_barrier"].shape, "")


def barrier_facts(first, second):
    """What checked mode reports for the kernel with these barriers, and how many elements
    of P the stored unchecked GPU run got wrong (None: no stored run)."""
    import numpy as np

    from cudacheck import KernelError

    from .. import corpus, demos
    bug = barrier_kernel(first, second)
    try:
        bug.run(backend="cpu", check=True)
        finding = None
    except KernelError as e:
        finding = (type(e).__name__, demos.wrap(str(e)))
    gpu = corpus.stored_gpu_result(bug.name) if bug.name != "tiled" else None
    wrong = None
    if gpu is not None:
        M, N = bug.inputs(np.random.default_rng(0))
        ref = M.astype(np.float64) @ N.astype(np.float64)
        bound = 2 * M.shape[1] * 2.0 ** -24 * (np.abs(M.astype(np.float64)) @ np.abs(N.astype(np.float64)))
        wrong = (int((np.abs(gpu[0] - ref) > bound).sum()), gpu[0].size, gpu[1])
    return {"kernel": bug.name, "finding": finding, "gpu_wrong": wrong}


def _barrier_state(first, second):
    f = barrier_facts(first, second)
    m, k, n, tile = 32, 32, 32, 16
    head = (f"The tiled kernel with the first barrier {'kept' if first else 'removed'} and the second "
            f"{'kept' if second else 'removed'}, checked on {m} x {k} by {k} x {n}, TILE_WIDTH {tile}: ")
    if f["finding"] is None:
        head += "checked mode finds nothing."
        body = ""
    else:
        head += f"checked mode stops at the first conflict, a {f['finding'][0]}:"
        body = (f"<pre style='white-space: pre-wrap; font-size: 0.85em'>{html.escape(f['finding'][1])}</pre>")
    if f["gpu_wrong"] is not None:
        bad, total, label = f["gpu_wrong"]
        gpu = f"Unchecked on the reference GPU ({label}): {bad} of {total} elements of P wrong."
    elif f["kernel"] == "tiled":
        gpu = ("This is the book's tiled kernel, both barriers in place: its products are right on every GPU "
               "and on the CPU runtime.")
    else:
        gpu = "The book stores no GPU run of this version."
    return f"<p class='tc-state-text'>{html.escape(head)}</p>{body}<p class='tc-state-text'>{html.escape(gpu)}</p>"


def barrier_explorer_spec():
    controls = [("first __syncthreads()", BARRIER_OPTIONS), ("second __syncthreads()", BARRIER_OPTIONS)]
    return ("barriers", "Keep or remove each of the two barriers: the box shows what checked mode reports "
            "for that kernel, and what the stored GPU run got wrong.", controls, _barrier_state,
            ("kept", "kept"))


def barrier_explorer():
    """First and second barrier kept or removed -> checked mode's finding (run now) and the
    stored unchecked GPU run's wrong elements."""
    return build(barrier_explorer_spec())


# --------------------------------------------------------------------------- the race replay

RACE_A = ((1.0, 2.0), (3.0, 4.0))
RACE_ORDERS = [("(1, 0) first", "forward"), ("(0, 1) first", "reverse"), ("lock step", "lock step")]
RACE_GUESSES = [NO_GUESS, "3", "2", "0"]
RACE_WHAT = {"3": "3, the element that belongs there", "2": "2, its own element, unchanged",
             "0": "0, what the tile held before anyone stored"}


@lru_cache(maxsize=None)
def race_replay_facts(order):
    """The tile transpose without its barrier (exercise sync-5's starter), BLOCK_WIDTH 2, on
    A = RACE_A, run on the CPU runtime: `order` "forward" (threads in index order, each to
    its end), "reverse", or "lock step" (the same kernel with a __syncwarp() between the
    store and the read: every thread stores, then every thread reads). Returns A after the
    run, and what checked mode reports for the barrier-free kernel."""
    import numpy as np

    from cudacheck import KernelError, RawModule

    from .. import exercises
    src = exercises.starter("sync-5")
    if order == "lock step":
        src = src.replace("    A[index] = tile[tx][ty];", "    __syncwarp();\n    A[index] = tile[tx][ty];", 1)
    options = ("-DBLOCK_WIDTH=2",)
    A = np.array(RACE_A, np.float32)
    fn = RawModule(src, backend="cpu", options=options).get_function("block_transpose")
    fn((1, 1), (2, 2), (A, np.int32(2), np.int32(2)), **({} if order == "lock step" else {"schedule": order}))
    checked = RawModule(exercises.starter("sync-5"), backend="cpu", check=True,
                        options=options).get_function("block_transpose")
    try:
        checked((1, 1), (2, 2), (np.array(RACE_A, np.float32), np.int32(2), np.int32(2)))
        finding = None
    except KernelError as e:
        finding = type(e).__name__
    return {"A": A.tolist(), "finding": finding}


def _race_steps(order):
    threads = [(0, 0), (1, 0), (0, 1), (1, 1)]
    if order == "lock step":
        return ("all four threads store their element into the tile, then all four read (here a __syncwarp() "
                "between the store and the read makes them)")
    seq = threads if order == "forward" else threads[::-1]
    return "each thread runs to its end before the next starts: " + ", ".join(f"({x}, {y})" for x, y in seq)


def _race_state(order, guess):
    f = race_replay_facts(order)
    A = f["A"]
    question = ("Thread (1, 0) stores A[0][1] = 2 into tile[0][1], then writes A[0][1] = tile[1][0], which thread "
                "(0, 1) stores. With no barrier between store and read, what does A[0][1] hold after the kernel?")
    right = str(int(A[0][1]))
    expected = [[RACE_A[c][r] for c in range(2)] for r in range(2)]

    def cell(r, c):
        ok = A[r][c] == expected[r][c]
        return f"{A[r][c]:g}", "tc-sum" if ok else "tc-zero"
    wrong = sum(A[r][c] != expected[r][c] for r in range(2) for c in range(2))
    order_text = ("lock step, as a warp of a GPU before Volta ran it" if order == "lock step" else
                  f"the CPU runtime's {order} order")
    text = (f"Replay ({order_text}): {_race_steps(order)}. A[0][1] ends as {RACE_WHAT.get(right, right)}; "
            f"{wrong} of 4 elements wrong (orange).")
    if f["finding"]:
        text2 = (f"Checked mode reports a {f['finding']} for the barrier-free kernel whatever the order: "
                 "nothing in the kernel makes a GPU pick the lucky one, and since Volta not even a warp runs its "
                 "threads in lock step.")
    else:
        text2 = "Checked mode finds nothing."
    reveal = (f"{GRID_STYLE}<p class='tc-state-text'>{html.escape(text)}</p>"
              f"{grids(grid('A before', 2, 2, lambda r, c: (f'{RACE_A[r][c]:g}', '')), grid('A after', 2, 2, cell))}"
              f"<p class='tc-state-text'>{html.escape(text2)}</p>")
    return predict(question, guess, right, reveal)


def race_replay_spec(initial=("(1, 0) first", NO_GUESS)):
    controls = [("order", RACE_ORDERS), ("A[0][1] after", [(g, g) for g in RACE_GUESSES])]
    return ("race-replay", "The 2 x 2 tile transpose with no barrier. Pick who runs first, predict A[0][1], "
            "then see the replay, run on the CPU runtime.", controls, _race_state, initial)


def race_replay(initial=("(1, 0) first", NO_GUESS)):
    """Order of two threads x the reader's guess -> the barrier-free transpose's real result
    in that order (race_replay_facts) and checked mode's verdict."""
    return build(race_replay_spec(initial))
