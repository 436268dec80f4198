"""What an exercise asks of a kernel besides the right product: properties of how it gets
there, read from the report (counts, and the trace of the blocks the exercise lists) of
its checked run. An exercise names them in [[exercise.requirement]] tables:

    [[exercise.requirement]]
    check = "staged_loads"                 # a function of CHECKS; the other keys are its parameters
    position = 1
    bound = "ceil_div(m, tile) * k * n"    # a formula (see `formula`)
    where = "with its tiles staged in shared memory"

Each check, called with its parameters, returns requirement(report, shape, tile, code):
None if the run meets it, else why not, in Markdown (tiling_course.tryout.run calls it
after each checked run whose product is right).
"""
import ast
import inspect
import operator
from collections import defaultdict

_NAMES = ("m", "k", "n", "tile")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


def formula(text):
    """A bound written in the data as arithmetic of m, k, n and tile: integers, + - * //,
    parentheses and ceil_div(a, b). Returns f(m, k, n, tile); ValueError for anything else.
    The data is not code: it is parsed and walked node by node, never eval'd."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"{text!r} is not a formula: {e.msg}") from None
    evaluate = _compile(tree.body, text)
    return lambda m, k, n, tile: evaluate(dict(m=m, k=k, n=n, tile=tile))


def _compile(node, text):
    """`node` as a function of the names' values."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return lambda names: node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return lambda names: names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        op, left, right = _OPERATORS[type(node.op)], _compile(node.left, text), _compile(node.right, text)
        return lambda names: op(left(names), right(names))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ceil_div"
            and len(node.args) == 2 and not node.keywords):
        a, b = (_compile(arg, text) for arg in node.args)
        return lambda names: -(-a(names) // b(names))
    raise ValueError(f"{ast.unparse(node)!r} is not allowed in the formula {text!r}, which may use "
                     f"{', '.join(_NAMES)}, integers, + - * //, parentheses and ceil_div(a, b)")


# ---------------------------------------------------------------------------- checks

def staged_loads(position: int, bound: str, where: str):
    """The kernel's `position`-th pointer parameter (0: M, 1: N, 2: P) is loaded at most
    `bound` times, which only staging it through shared memory achieves; `where` says how."""
    most_of = formula(bound)

    def requirement(report, shape, tile, code):
        counts = list(report.global_counts.items())
        if position >= len(counts):
            return "the kernel has too few pointer parameters"
        name, loaded = counts[position]
        most = most_of(*shape, tile)
        if loaded.loads > most:
            return (f"it loads `{name}` from global memory {loaded.loads:,} times, and {where} it would be "
                    f"at most {most:,}.")
        return None
    return requirement


def coalesced():
    """In the traced block, neighbouring threads of one warp (threadIdx.x and threadIdx.x + 1)
    touch, at each step of their loops, the same element of a global array or neighbouring
    ones (for vector accesses, neighbouring vectors), never elements far apart."""
    def requirement(report, shape, tile, code):
        glob = set(report.global_counts)
        steps = defaultdict(list)   # (array, op, thread) -> (index, width), in program order
        for a in report.trace or ():
            if a.array in glob:
                steps[a.array, a.op, a.thread].append((a.index, a.width))
        bx, by, _ = report.block
        for (array, op, (x, y, z)), first in sorted(steps.items()):
            if x + 1 >= bx:
                continue
            if (x + bx * (y + by * z)) // 32 != (x + 1 + bx * (y + by * z)) // 32:
                continue
            second = steps.get((array, op, (x + 1, y, z)), [])
            for (i, width), (j, _) in zip(first, second):
                if abs(j - i) > width:
                    verb = "read" if op == "R" else "write"
                    return (f"its accesses are not coalesced: threads ({x}, {y}, {z}) and ({x + 1}, {y}, {z}), "
                            f"neighbours in one warp, {verb} `{array}[{i}]` and `{array}[{j}]` at the same step, "
                            f"{abs(j - i)} elements apart. A warp's loads combine into few memory transactions "
                            f"only when consecutive `threadIdx.x` touch consecutive elements (or the same one).")
        return None
    return requirement


def conflict_free():
    """In the traced block, every warp's request to shared memory takes as few passes
    through the banks as its size allows: no bank conflict (tiling_course.warps)."""
    def requirement(report, shape, tile, code):
        # Imported here, not at the top: warps draws with matplotlib, which a grader never needs.
        from .. import warps

        worst = max((r for r in warps.requests(report) if r.space == "shared"), key=lambda r: r.conflict, default=None)
        if worst is None or worst.conflict == 1:
            return None
        dims = report.shared_shapes[worst.array]
        bank, words = max(((b, w) for part in worst.banks for b, w in part.items()), key=lambda bw: len(bw[1]))
        (w1, l1), (w2, l2) = list(words.items())[:2]
        lines = code.splitlines()
        line = lines[worst.line - 1].strip() if 0 < worst.line <= len(lines) else ""
        verb = "reads" if worst.op == "R" else "writes"
        return (f"its shared-memory accesses conflict: on line {worst.line} (`{line}`) warp {worst.warp} {verb} "
                f"`{worst.array}` in {worst.passes} passes where {worst.ideal_passes} would do, a "
                f"{worst.conflict:g}-way bank conflict. Lanes {l1} and {l2} need "
                f"`{worst.array}{_subscripts(w1, dims)}` and `{worst.array}{_subscripts(w2, dims)}`, different words "
                f"of bank {bank}.")
    return requirement


def _subscripts(word, dims):
    """A float array's word as its subscripts, '[r][c]', for an array of dimensions `dims`."""
    subs = []
    for d in reversed(dims or (word + 1,)):
        word, i = divmod(word, d)
        subs.append(i)
    return "".join(f"[{i}]" for i in reversed(subs))


def barriers_per_phase(most: int):
    """Block (0, 0) passes at most `most` barriers per phase of the tiled loop (ceil(k / tile)
    phases), counted from the trace's barrier intervals."""
    def requirement(report, shape, tile, code):
        m, k, n = shape
        phases = -(-k // tile)
        intervals = [a.interval for a in report.trace or ()]
        if not intervals or not phases:
            return None
        crossed = max(intervals) - 1
        if crossed > most * phases:
            return (f"block (0, 0) passes {crossed} barriers in {phases} phase{'s' if phases > 1 else ''}; the "
                    f"exercise asks for at most {most} per phase.")
        return None
    return requirement


def one_access_updates(position: int):
    """In the traced blocks, no thread updates an element of the kernel's `position`-th
    pointer parameter that another thread also stores to as a load and a later store of
    its own. An atomic read-modify-write (atomicAdd) is one access; a `+=` through a
    `volatile` pointer is two, which checked mode does not call a race (volatile accesses
    are not data races in CUDA's memory model) and which a GPU can still split, losing the
    other thread's update. The CPU runtime, whose threads of a block take turns, never
    splits it, so only this requirement keeps such a kernel's right counts from passing."""
    def requirement(report, shape, tile, code):
        names = list(report.global_counts)
        if position >= len(names):
            return "the kernel has too few pointer parameters"
        array = names[position]
        accesses = [a for a in report.trace or () if a.array == array]
        storers = defaultdict(set)   # element -> the (block, thread) that store to it
        for a in accesses:
            if a.op == "W":
                storers[a.index].add((a.block, a.thread))
        loaded = {}   # (block, thread, element) -> the line of its last load
        for a in accesses:
            key = (a.block, a.thread, a.index)
            if a.op == "R":
                loaded[key] = a.line
                continue
            others = sorted(storers[a.index] - {(a.block, a.thread)})
            if key in loaded and others:
                block, thread = others[0]
                return (f"thread {a.thread} of block {a.block} updates `{array}[{a.index}]` in two accesses, a load "
                        f"on line {loaded[key]} and a store on line {a.line}, and thread {thread} of block {block} "
                        f"stores to it too. Checked mode calls that no race when the accesses are volatile, and "
                        f"the CPU runtime, whose threads take turns, loses nothing; but unless a lock orders the "
                        f"two threads, a GPU can let the other's update land between the load and the store, and "
                        f"it is lost (`volatile` does not prevent that). The exercise asks for each update as one "
                        f"atomic read-modify-write: `atomicAdd`.")
        return None
    return requirement


CHECKS = {check.__name__: check for check in (staged_loads, coalesced, conflict_free, barriers_per_phase,
                                              one_access_updates)}


def build(tables):
    """The requirement of an exercise's [[exercise.requirement]] tables: each check in turn,
    the first unmet one's message. ValueError for an unknown check or wrong parameters, so
    that a slip in the data shows when it is loaded, not in a reader's check."""
    checks = []
    for table in tables:
        params = dict(table)
        name = params.pop("check", None)
        if name not in CHECKS:
            raise ValueError(f"unknown requirement check {name!r}; the checks are {', '.join(CHECKS)}")
        signature = inspect.signature(CHECKS[name])
        try:
            signature.bind(**params)
        except TypeError as e:
            raise ValueError(f"requirement {name}: {e}") from None
        for key, value in params.items():
            kind = signature.parameters[key].annotation
            if type(value) is not kind:
                raise ValueError(f"requirement {name}: {key} should be a {kind.__name__}, not {value!r}")
        checks.append(CHECKS[name](**params))

    def requirement(report, shape, tile, code):
        for check in checks:
            unmet = check(report, shape, tile, code)
            if unmet:
                return unmet
        return None
    return requirement
