"""What each graded part's kernel computes and how the grader launches it: the inputs for a
shape, the launch (function, -D options, grid, block, arguments), the expected result and
how close it must be. The grader (tiling_course.grading.judge) builds the launches here, the
sandboxed runner (tiling_course.grading.launcher) performs them, and the comparison happens here,
outside the sandbox.

    Product(launch)      P = M N, a kernel of the book's form (the practice assignments a1-a3)
    RectProduct()        C = op(A) op(B) with TILE_M x TILE_K and TILE_K x TILE_N tiles; op: a
                         variant's layout (NN, NT: B given transposed, TN: A given transposed)
    Convolution()        out = in convolved with a (2 RADIUS + 1)^2 mask, TILE x TILE output
                         tiles; a variant's border: zero or clamp
    Transpose()          out = in transposed, or rotated a quarter turn (a variant's op),
                         TILE_DIM x BLOCK_ROWS threads per TILE_DIM x TILE_DIM tile

A task's params are the variant's values plus "tile" where the part has tiles. Inputs are
float32, drawn uniform in [-1, 1] from the test's seeded generator; outputs start at zero.
"""
from dataclasses import dataclass

import numpy as np

from .. import matmul, tasks
from .variants import macros

U = 2.0 ** -24   # float32's unit roundoff


def ceil_div(a, b):
    return -(-a // b)


def _uniform(rng, shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def _first_wrong(array, got, ref, bad, element=None):
    """The wrong-element dict of tiling_course.tasks' compare: the worst of `bad`."""
    err = np.where(bad, np.abs(got.astype(np.float64) - ref), -1)
    row, col = (int(i) for i in np.unravel_index(np.argmax(err), err.shape))
    return dict(array=array, count=int(bad.sum()), total=int(bad.size), row=row, col=col,
                expected=float(ref[row, col]), got=float(got[row, col]))


class Task:
    """The interface (see the module's docstring)."""
    function = ""
    outputs = ()
    result = "result"        # "the right {result}"
    reference = "NumPy"

    def inputs(self, shape, params, rng):
        raise NotImplementedError

    def launch(self, shape, params):
        raise NotImplementedError

    def compare(self, outputs, inputs, params):
        raise NotImplementedError

    def describe(self, shape):
        raise NotImplementedError

    def speed(self, counts, shape, params):
        """None if the checked run's global counts ([[parameter, loads, stores], ...])
        meet the part's speed bound, else why not; tasks without one return None."""
        return None


# ----------------------------------------------------------- the book's product (a1-a3)

@dataclass(frozen=True)
class Product(Task):
    launch_of: matmul.Launch
    outputs = ("P",)
    result = "product"

    @property
    def function(self):
        return self.launch_of.name

    def inputs(self, shape, params, rng):
        m, k, n = shape
        M, N = tasks.Matmul.inputs(None, shape, rng)
        return {"M": M, "N": N, "P": np.zeros((m, n), np.float32)}

    def launch(self, shape, params):
        m, k, n = shape
        tile = params["tile"]
        grid, block, shared = self.launch_of.geometry(m, k, n, tile, check=False)
        kind = self.launch_of.spec.arguments
        sizes = {matmul.Args.WIDTH: [m], matmul.Args.MKN: [m, k, n], matmul.Args.N: [n]}[kind]
        return dict(function=self.function, options=list(self.launch_of.spec.options(tile)), grid=list(grid),
                    block=list(block), shared_mem=shared,
                    args=[["array", "M"], ["array", "N"], ["array", "P"], *(["int32", v] for v in sizes)])

    def compare(self, outputs, inputs, params):
        return tasks.compare(outputs["P"], inputs["M"], inputs["N"])

    def describe(self, shape):
        m, k, n = shape
        return f"{m}x{k} times {k}x{n}"


# ------------------------------------------------------ g1: rectangular tiles, op(A) op(B)

@dataclass(frozen=True)
class RectProduct(Task):
    function: str = "matmul_rect"
    outputs = ("C",)
    result = "product"

    def inputs(self, shape, params, rng):
        """A (m x k) and B (k x n) as the kernel receives them: the variant's transposed
        operand stored transposed, row-major (A as k x m for TN, B as n x k for NT)."""
        m, k, n = shape
        A, B = _uniform(rng, (m, k)), _uniform(rng, (k, n))
        layout = params["layout"]
        return {"A": np.ascontiguousarray(A.T) if layout == "TN" else A,
                "B": np.ascontiguousarray(B.T) if layout == "NT" else B, "C": np.zeros((m, n), np.float32)}

    @staticmethod
    def operands(inputs, params):
        """(A, B) as the product's operands, whatever layout the kernel received them in."""
        layout = params["layout"]
        return (inputs["A"].T if layout == "TN" else inputs["A"], inputs["B"].T if layout == "NT" else inputs["B"])

    def launch(self, shape, params):
        m, k, n = shape
        return dict(function=self.function, options=list(macros(params)),
                    grid=[ceil_div(n, params["TILE_N"]), ceil_div(m, params["TILE_M"])],
                    block=[params["TILE_N"], params["TILE_M"]], shared_mem=0,
                    args=[["array", "A"], ["array", "B"], ["array", "C"], ["int32", m], ["int32", k], ["int32", n]])

    def compare(self, outputs, inputs, params):
        wrong = tasks.compare(outputs["C"], *self.operands(inputs, params))
        if wrong:
            wrong["array"] = "C"
        return wrong

    def describe(self, shape):
        m, k, n = shape
        return f"m = {m}, k = {k}, n = {n}"

    def speed(self, counts, shape, params):
        m, k, n = shape
        bounds = [("A", ceil_div(n, params["TILE_N"]) * m * k, "its TILE_M x TILE_K tiles of A"),
                  ("B", ceil_div(m, params["TILE_M"]) * k * n, "its TILE_K x TILE_N tiles of B")]
        return _within(counts, bounds)


def _within(counts, bounds):
    """None if each pointer parameter (by position) is loaded at most its bound."""
    for position, (operand, most, staged) in enumerate(bounds):
        if position >= len(counts):
            return "the kernel has too few pointer parameters"
        name, loads = counts[position][0], counts[position][1]
        if loads > most:
            return (f"it loads `{name}` (the {operand} operand) from global memory {loads:,} times, and with "
                    f"{staged} staged in shared memory it would be at most {most:,}.")
    return None


# ------------------------------------------------------ g2: a 2-D convolution with a halo

@dataclass(frozen=True)
class Convolution(Task):
    function: str = "conv2d_tiled"
    outputs = ("out",)
    result = "convolution"
    reference = "NumPy's convolution"

    def inputs(self, shape, params, rng):
        h, w = shape
        r = params["RADIUS"]
        return {"in": _uniform(rng, (h, w)), "mask": _uniform(rng, ((2 * r + 1) ** 2,)),
                "out": np.zeros((h, w), np.float32)}

    def launch(self, shape, params):
        h, w = shape
        t = params["TILE"]
        return dict(function=self.function, options=list(macros(params)), grid=[ceil_div(w, t), ceil_div(h, t)],
                    block=[t, t], shared_mem=0,
                    args=[["array", "in"], ["array", "mask"], ["array", "out"], ["int32", h], ["int32", w]])

    @staticmethod
    def expected(inputs, params):
        """(the convolution in float64, the bound on float32's rounding error of each element)."""
        image, r = inputs["in"].astype(np.float64), params["RADIUS"]
        mask = inputs["mask"].astype(np.float64).reshape(2 * r + 1, 2 * r + 1)
        padded = np.pad(image, r, mode="constant" if params["border"] == "zero" else "edge")
        h, w = image.shape
        ref, size = np.zeros((h, w)), np.zeros((h, w))
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                window = padded[a:a + h, b:b + w]
                ref += mask[a, b] * window
                size += abs(mask[a, b]) * np.abs(window)
        return ref, 2 * (2 * r + 1) ** 2 * U * size + 1e-30

    def compare(self, outputs, inputs, params):
        ref, bound = self.expected(inputs, params)
        got = outputs["out"]
        bad = np.abs(got.astype(np.float64) - ref) > bound
        return _first_wrong("out", got, ref, bad) if bad.any() else None

    def describe(self, shape):
        return f"an image of {shape[0]} x {shape[1]}"

    def speed(self, counts, shape, params):
        h, w = shape
        t, r = params["TILE"], params["RADIUS"]
        most = ceil_div(h, t) * ceil_div(w, t) * (t + 2 * r) ** 2
        return _within(counts, [("image", most, "each block's tile and its halo")])


# --------------------------------------------- g3: a tiled transpose (or a quarter turn)

@dataclass(frozen=True)
class Transpose(Task):
    function: str = "transpose_tiled"
    outputs = ("out",)
    result = "result"

    def inputs(self, shape, params, rng):
        rows, cols = shape
        return {"in": _uniform(rng, (rows, cols)), "out": np.zeros((cols, rows), np.float32)}

    def launch(self, shape, params):
        rows, cols = shape
        t = params["TILE_DIM"]
        return dict(function=self.function, options=list(macros(params)), grid=[ceil_div(cols, t), ceil_div(rows, t)],
                    block=[t, params["BLOCK_ROWS"]], shared_mem=0,
                    args=[["array", "in"], ["array", "out"], ["int32", rows], ["int32", cols]])

    @staticmethod
    def expected(a, op):
        return {"transpose": a.T, "rotate_cw": np.rot90(a, -1), "rotate_ccw": np.rot90(a, 1)}[op]

    def compare(self, outputs, inputs, params):
        ref = self.expected(inputs["in"], params["op"]).astype(np.float64)
        got = outputs["out"]
        bad = got != ref
        return _first_wrong("out", got, ref, bad) if bad.any() else None

    def describe(self, shape):
        return f"`in` of {shape[0]} x {shape[1]}"


KINDS = {"rect_product": RectProduct, "convolution": Convolution, "transpose": Transpose}


def from_table(table):
    """A graded part's task from its `task` table ({kind = "rect_product"}); KeyError for
    an unknown kind."""
    table = dict(table)
    kind = table.pop("kind")
    if kind not in KINDS:
        raise KeyError(f"no graded task {kind!r}; the tasks are {', '.join(KINDS)}")
    return KINDS[kind](**table)

