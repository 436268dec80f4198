"""Which product of `p*q + r*s` nvcc fuses, against the front end's choice (frontend/ranks.py).

Generates random kernels whose statements each store one sum of two products to an output of
their own (`o3[0] = a*b + c*d;`), compiles them with `nvcc -ptx -arch=sm_90`, and reads from the
PTX which product the fma.rn multiplies: the fma that a statement's store takes, its multiplied
operands traced back (through every instruction) to the kernel parameters, special registers and
shared arrays they come from, against each product's own. The front end's choice is read from
its rewrite of the same source (`::kc::mad_` fuses the left product, `::kc::add_mul_` the right).

    PYTHONPATH=runtime python -m scripts.contraction_rank_probe --kernels 600 --seed 1
    PYTHONPATH=runtime python -m scripts.contraction_rank_probe --file k.cu --instance 'sgemm<128, 8>'
    PYTHONPATH=runtime python -m scripts.contraction_rank_probe --corpus   # the differential corpus

Prints the agreement, by the features a statement's products use; needs nvcc on PATH.

--file reads any source instead, compiled with -lineinfo: an fma of a sum's line (its `.loc`) is
that sum's when what its multiplied operands read, and what its addend reads, are the one
product's and the other's (parameters, shared arrays, special registers, a vector's lanes, float
literals; a local counts for all its assignments but the sum's own statement); sums whose two
products read the same are not matched. --instance instantiates a template kernel (nvcc compiles
a template only where host code takes an instance's address); --corpus reads the differential
corpus's sources with their cases' options and instances.
"""
import argparse
import bisect
import random
import re
import struct
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from cudacheck.frontend import Reader
from cudacheck.frontend.ranks import Contraction

SCALARS, ARRAYS, VECTORS = 6, 3, 2
PRELUDE = """__device__ float scale(float a) { return a * 0.75f; }
__device__ float twice_loaded(const float* p, int i) { return p[i] * p[i + 1]; }
"""


class Kernel:
    """One random kernel: its source lines, and per statement line the two products'
    markers (the parameters and shared arrays their values come from)."""

    def __init__(self, rng, name, statements):
        self.rng, self.name = rng, name
        self.lines, self.sums = [], {}    # line index (in self.lines) -> (output, markers1, markers2, features)
        self.locals, self.vectors = [], []   # (name, markers, feature, depth)
        self.outputs = 0
        self.depth = 0
        self._emit("__shared__ float shm[64];")
        self._emit("shm[threadIdx.x % 64] = gS[threadIdx.x];")
        self._emit("__syncthreads();")
        for _ in range(statements):
            self._item()
        while self.depth:
            self._close()

    def _emit(self, text):
        self.lines.append("    " * (self.depth + 1) + text)

    def _close(self):
        self.depth -= 1
        self._emit("}")
        # locals declared inside the closed scope go out of scope
        self.locals = [x for x in self.locals if x[3] <= self.depth]
        self.vectors = [x for x in self.vectors if x[3] <= self.depth]

    # -- leaves: (text, markers, feature) --
    def _leaf(self, nested=True):
        r = self.rng
        choices = ["param", "global", "global_tid", "shared", "tid", "int_load"]
        if self.vectors:
            choices += ["lane"] * 3
        if self.locals:
            choices += ["local"] * 3
        if nested:
            choices += ["nested", "call"]
        choices += ["math"]
        kind = r.choice(choices)
        if kind == "param":
            i = r.randrange(SCALARS)
            return f"s{i}", {f"s{i}"}, "param"
        if kind == "global":
            a = r.randrange(ARRAYS)
            return f"g{a}[{r.randrange(8)}]", {f"g{a}"}, "global"
        if kind == "global_tid":
            a = r.randrange(ARRAYS)
            return f"g{a}[threadIdx.x + {r.randrange(4)}]", {f"g{a}"}, "global"
        if kind == "shared":
            return f"shm[{r.randrange(64)}]", {"shm"}, "shared"
        if kind == "tid":
            text = r.choice(["(float)threadIdx.x", f"(float)(threadIdx.x + {r.randrange(1, 9)})",
                             "(float)(blockIdx.x * blockDim.x + threadIdx.x)"])
            return text, {"%tid.x"}, "tid"
        if kind == "int_load":
            return f"(float)gi[threadIdx.x + {r.randrange(4)}]", {"gi"}, "int_load"
        if kind == "lane":
            name, markers, feature, _ = r.choice(self.vectors)
            lanes = "xyzw" if feature == "float4" else "xy"
            return f"{name}.{r.choice(lanes)}", set(markers), feature
        if kind == "local":
            name, markers, feature, _ = r.choice(self.locals)
            return name, set(markers), feature
        if kind == "nested":
            (a, ma, _), (b, mb, _) = self._leaf(False), self._leaf(False)
            return f"({a} * {b})", ma | mb, "nested"
        if kind == "call":
            a, ma, _ = self._leaf(False)
            if r.random() < 0.5:
                return f"scale({a})", ma, "call"
            g = r.randrange(ARRAYS)
            return f"twice_loaded(g{g}, {r.randrange(6)})", {f"g{g}"}, "call"
        a, ma, _ = self._leaf(False)
        return f"{r.choice(['sqrtf', 'fabsf', 'expf'])}({a})", ma, "math"

    def _product(self):
        (a, ma, fa), (b, mb, fb) = self._leaf(), self._leaf()
        return f"{a} * {b}", ma | mb, {fa, fb}

    # -- items --
    def _item(self):
        r = self.rng
        roll = r.random()
        if roll < 0.12:
            self._vector()
        elif roll < 0.24:
            self._local()
        elif roll < 0.32 and self.depth < 2:
            self._emit(f"if (threadIdx.x < {r.randrange(1, 32)}u) {{")
            self.depth += 1
        elif roll < 0.38 and self.depth < 2:
            j = f"j{len(self.lines)}"
            self._emit(f"for (int {j} = 0; {j} < n; ++{j}) {{")
            self.depth += 1
            g = f"g{r.randrange(ARRAYS)}"
            self.locals.append((f"{g}[{j}]", {g}, "loop", self.depth))
        elif roll < 0.45 and self.depth:
            self._close()
        elif roll < 0.52:
            self._conditional_local()
        else:
            self._sum_statement()

    def _vector(self):
        r = self.rng
        v = r.randrange(VECTORS)
        name = f"t{len(self.lines)}"
        if r.random() < 0.7:
            self._emit(f"float4 {name} = reinterpret_cast<const float4*>(gv{v})[threadIdx.x + {r.randrange(4)}];")
            self.vectors.append((name, {f"gv{v}"}, "float4", self.depth))
        else:
            self._emit(f"float2 {name} = reinterpret_cast<const float2*>(gv{v})[threadIdx.x + {r.randrange(4)}];")
            self.vectors.append((name, {f"gv{v}"}, "float2", self.depth))

    def _local(self):
        name = f"l{len(self.lines)}"
        if self.rng.random() < 0.5:
            text, markers, _ = self._leaf()
        else:
            text, markers, _ = self._product()
        self._emit(f"float {name} = {text};")
        self.locals.append((name, markers, "local", self.depth))

    def _conditional_local(self):
        r = self.rng
        name = f"c{len(self.lines)}"
        (a, ma, _), (b, mb, _) = self._leaf(False), self._leaf(False)
        self._emit(f"float {name} = {a};")
        self._emit(f"if (threadIdx.x % {r.randrange(2, 5)}u == 0u) {name} = {b};")
        self.locals.append((name, ma | mb, "if_value", self.depth))

    def _sum_statement(self):
        (p1, m1, f1), (p2, m2, f2) = self._product(), self._product()
        if m1 <= m2 or m2 <= m1:
            return   # the PTX could not tell the products apart
        out = self.outputs
        self.outputs += 1
        where = "loop" if any("for (" in line for line in self.lines) else "straight"
        if self.rng.random() < 0.3:
            name = f"v{len(self.lines)}"
            self.sums[len(self.lines)] = (out, m1, m2, f1 | f2 | {where})
            self._emit(f"float {name} = {p1} + {p2};")
            self._emit(f"o{out}[0] = {name};")
            self.locals.append((name, m1 | m2, "local_sum", self.depth))
        else:
            self.sums[len(self.lines)] = (out, m1, m2, f1 | f2 | {where})
            self._emit(f"o{out}[0] = {p1} + {p2};")

    def source(self):
        params = [f"const float* g{a}" for a in range(ARRAYS)] + [f"const float* gv{v}" for v in range(VECTORS)]
        params += ["const float* gS", "const int* gi", "int n"] + [f"float s{i}" for i in range(SCALARS)]
        params += [f"float* o{k}" for k in range(self.outputs)]
        head = f'extern "C" __global__ void {self.name}({", ".join(params)}) {{'
        return [head] + self.lines + ["}"], params


# -- PTX --
_INSTR = re.compile(r"^\s*(@!?%\w+\s+)?([a-z][\w.]*)\s+(.*?);\s*$")


def ptx_functions(ptx):
    """{entry name: (parameter names in order, instructions [(opcode, operands text, `.loc`
    (file, line, column) or None)])}."""
    out = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)\s*\{(.*?)\n\}", ptx, re.S):
        params = re.findall(r"\.param\s+\.\w+\s+(?:\.ptr\s+\S+\s+)?(\w+)", m.group(2))
        loc, instrs = None, []
        for line in m.group(3).splitlines():
            lm = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)", line)
            if lm:
                loc = (lm.group(1), int(lm.group(2)), int(lm.group(3)))
                continue
            i = _INSTR.match(line)
            if i:
                instrs.append((i.group(2), i.group(3), loc))
        out[m.group(1)] = (params, instrs)
    return out


def _operands(text):
    return [o.strip() for o in re.split(r",(?![^{]*\})", text)]


class Dataflow:
    """Every register's definitions, and what a register's value comes from (parameters,
    special registers, symbols), over all of them."""

    def __init__(self, params, instrs):
        self.params, self.defs, self.instrs = params, {}, instrs
        for op, text in instrs:
            if op.startswith(("st.", "bra", "ret", "bar", "membar", "fence", "red.", "@")):
                continue
            ops = _operands(text)
            dests = re.findall(r"%\w+", ops[0]) if ops else []
            for d in dests:
                self.defs.setdefault(d, []).append((op, ops[1:], dests.index(d)))
        self.memo = {}

    def reach(self, reg):
        if not reg.startswith("%"):
            return {reg[1:]} if re.fullmatch(r"0f[0-9A-F]{8}", reg) else set()   # an immediate operand
        if reg in self.memo:
            return self.memo[reg]
        self.memo[reg] = set()
        out, stack, seen = set(), [reg], set()
        while stack:
            r = stack.pop()
            if r in seen:
                continue
            seen.add(r)
            for op, srcs, lane in self.defs.get(r, []):
                if op.startswith("ld.") and ".v" in op:
                    out.add(f"lane:{lane}")
                for s in srcs:
                    for p in re.findall(r"\[(\w+)\]", s):
                        out.add(p)
                    for tok in re.findall(r"%[\w.]+|[A-Za-z_$][\w$]*", s):
                        if tok.startswith("%") and re.fullmatch(r"%[a-z]+\d+", tok):
                            stack.append(tok)
                        else:   # a special register, a parameter, a shared array's symbol
                            out.add("shm" if "shm" in tok else tok)
        self.memo[reg] = out
        return out

    def source_of(self, reg):
        """The instruction that gives a register its value, through moves."""
        seen = set()
        while reg not in seen:
            seen.add(reg)
            defs = self.defs.get(reg, [])
            if len(defs) != 1:
                return None
            op, srcs, _ = defs[0]
            if op.startswith("mov.") and re.fullmatch(r"%[a-z]+\d+", srcs[0]):
                reg = srcs[0]
                continue
            return op, srcs
        return None


def fused_side(flow, output_param, markers):
    """'left', 'right', 'none' (no fma), 'unclear' or None (no store found) for a statement
    that stores to `output_param`: which product the stored fma multiplies."""
    found = set()
    for op, text in flow.instrs:
        if not op.startswith("st.global"):
            continue
        addr, value = _operands(text)[:2]
        base = re.findall(r"%rd\d+", addr)
        if not base or output_param not in flow.reach(base[0]):
            continue
        src = flow.source_of(value)
        if src is None or not src[0].startswith("fma.rn"):
            found.add("none")
            continue
        a, b, c = src[1][:3]
        fused, addend = flow.reach(a) | flow.reach(b), flow.reach(c)
        m1, m2 = markers
        left = m1 <= fused and m2 <= addend
        right = m2 <= fused and m1 <= addend
        found.add("left" if left and not right else "right" if right and not left else "unclear")
    if not found:
        return None
    return found.pop() if len(found) == 1 else "unclear"


def _translate(markers, name, params):
    """Markers as the PTX names them: a parameter's `name_param_i`, a shared array's symbol."""
    names = [p.split()[-1] for p in params]
    out = set()
    for m in markers:
        if m in names:
            out.add(f"{name}_param_{names.index(m)}")
        else:
            out.add(m)
    return out


def front_end_choices(source):
    """{line number: 'left', 'right' or 'unknown'} of the front end's choice for each sum of two
    products: the rank model's answer (the rewrite fuses the left product where it is unknown)."""
    reader = Reader(source, (), (), False)
    tu = reader.parse(source)
    contraction = Contraction(reader.ci, list(tu.cursor.get_children()), reader.code)
    starts = [0] + [i + 1 for i, b in enumerate(reader.code) if b == 10]
    out = {}
    for extent in contraction.sums:
        line = bisect.bisect_right(starts, extent[0])
        d = contraction.decision(extent)
        out[line] = "unknown" if d is None else "right" if d else "left"
    return out


def nvcc_ptx(source, tmp):
    cu, ptx = Path(tmp) / "k.cu", Path(tmp) / "k.ptx"
    cu.write_text(source)
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-w", str(cu), "-o", str(ptx)], check=True)
    return ptx.read_text()


def probe(kernels, seed, statements=10, verbose=False):
    rng = random.Random(seed)
    ks = [Kernel(rng, f"k{i}", statements) for i in range(kernels)]
    lines, where = PRELUDE.splitlines(), {}
    for k in ks:
        text, params = k.source()
        for idx, (out, m1, m2, feats) in k.sums.items():
            where[len(lines) + 2 + idx] = (k, out, m1, m2, feats, params)   # 1-based, after the head
        lines.extend(text)
    source = "\n".join(lines) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        ptx = nvcc_ptx(source, tmp)
    functions = ptx_functions(ptx)
    flows = {name: Dataflow(params, [(op, text) for op, text, _ in instrs])
             for name, (params, instrs) in functions.items()}
    ours = front_end_choices(source)
    tally, by_feature, misses = Counter(), {}, []
    for line, (k, out, m1, m2, feats, params) in sorted(where.items()):
        flow = flows[k.name]
        names = [p.split()[-1] for p in params]
        output = f"{k.name}_param_{names.index(f'o{out}')}"
        side = fused_side(flow, output, (_translate(m1, k.name, params), _translate(m2, k.name, params)))
        if side not in ("left", "right"):
            tally[f"nvcc: {side}"] += 1
            if verbose:
                print("unclear", k.name, line, source.splitlines()[line - 1].strip(), m1, m2)
            continue
        mine = ours.get(line)
        tally[f"model {mine}"] += 1
        agree = mine == side or (mine == "unknown" and side == "left")
        tally["agree" if agree else "differ"] += 1
        tally[f"nvcc fuses {side}"] += 1
        for f in feats:
            by_feature.setdefault(f, Counter())["agree" if agree else "differ"] += 1
        if not agree:
            misses.append((k.name, line, source.splitlines()[line - 1].strip(), side, mine))
    return tally, by_feature, misses, source


_REGISTERS = {"threadIdx": "%tid", "blockIdx": "%ctaid", "blockDim": "%ntid", "gridDim": "%nctaid"}


class SourceMarkers:
    """What a source expression's value comes from: the parameters (by name), the global and
    shared variables and the special registers it reads, through the function's locals (every
    value assigned to a local counts for each read of it)."""

    def __init__(self, reader, fn, exclude=None):
        """exclude: (start, end) offsets of an expression whose own assignment is left out (a
        statement `t.y = a*r + b*t.y` reads t.y as it was before it)."""
        self.K, self.code, self.fn = reader.ci.CursorKind, reader.code, fn
        self.locals = {}
        assignments = []
        for n in fn.walk_preorder():
            kids = list(n.get_children())
            if n.kind == self.K.VAR_DECL and kids:
                assignments.append(((n.hash, None), kids[-1]))
            elif n.kind in (self.K.BINARY_OPERATOR, self.K.COMPOUND_ASSIGNMENT_OPERATOR) and len(kids) == 2:
                op = self.code[kids[0].extent.end.offset:kids[1].extent.start.offset].strip()
                if op.endswith(b"=") and op not in (b"==", b"!=", b"<=", b">="):
                    root = self._root(kids[0])
                    if root is not None:
                        assignments.append((root, kids[1]))
        if exclude is not None:
            assignments = [(k, e) for k, e in assignments
                           if not (e.extent.start.offset <= exclude[0] and exclude[1] <= e.extent.end.offset)]
        changed = True
        while changed:   # to a fixed point: a local's markers grow with what is assigned to it
            changed = False
            for key, expr in assignments:
                have = self.locals.setdefault(key, set())
                new = self.of(expr) - have
                if new:
                    have |= new
                    changed = True

    def _root(self, c):
        """(The local an assignment's target belongs to, the lane it assigns or None), through
        lanes and subscripts."""
        lane = None
        while c.kind in (self.K.MEMBER_REF_EXPR, self.K.ARRAY_SUBSCRIPT_EXPR, self.K.UNEXPOSED_EXPR,
                         self.K.PAREN_EXPR):
            if c.kind == self.K.MEMBER_REF_EXPR and c.spelling in ("x", "y", "z", "w"):
                lane = c.spelling
            kids = list(c.get_children())
            if not kids:
                return None
            c = kids[0]
        d = c.referenced if c.kind == self.K.DECL_REF_EXPR else None
        return (d.hash, lane) if d is not None and self._local(d) else None

    def _local(self, d):
        return d.kind == self.K.VAR_DECL and d.semantic_parent is not None \
            and d.semantic_parent.kind in (self.K.FUNCTION_DECL, self.K.FUNCTION_TEMPLATE) \
            and d.storage_class.name != "STATIC" \
            and "kc_shared" not in {a.spelling for a in d.get_children() if a.kind == self.K.ANNOTATE_ATTR}

    def of(self, c):
        out = set()
        skip = set()   # the locals read through a lane: counted with the lane's markers
        for n in c.walk_preorder():
            text = self.code[n.extent.start.offset:n.extent.end.offset]
            name = re.match(rb"\w*", text).group(0).decode()
            kids = list(n.get_children())
            if n.kind == self.K.MEMBER_REF_EXPR and name in _REGISTERS:
                out.add(_REGISTERS[name])
            elif n.kind == self.K.MEMBER_REF_EXPR and n.spelling in "xyzw" and kids \
                    and kids[0].type.get_canonical().spelling[-1:] in "234":
                out.add(f"lane:{'xyzw'.index(n.spelling)}")   # a vector's lane: a vector load's destination
                root = self._root(n)
                if root is not None:
                    out |= self.locals.get(root, set()) | self.locals.get((root[0], None), set())
                    skip.update(x.hash for x in n.walk_preorder() if x.kind == self.K.DECL_REF_EXPR)
            elif n.kind == self.K.FLOATING_LITERAL and n.type.get_canonical().kind.name == "FLOAT":
                value = float(text.decode().rstrip("fF"))
                out.add("f" + struct.pack(">f", value).hex().upper())   # PTX's immediate 0fXXXXXXXX
            d = n.referenced if n.kind == self.K.DECL_REF_EXPR else None
            if d is None or n.hash in skip:
                continue
            if d.kind == self.K.PARM_DECL and d.semantic_parent is not None and d.semantic_parent == self.fn:
                out.add("param:" + d.spelling)
            elif d.kind == self.K.VAR_DECL:
                if self._local(d):
                    out |= set().union(*(v for (h, _), v in self.locals.items() if h == d.hash))
                elif d.location.file is not None and d.location.file.name == self.fn.location.file.name:
                    out.add("sym:" + d.spelling)
        return out


def file_sums(source, options=()):
    """{function name: (its parameter names, [(line of the '+', left product's markers, right
    product's markers, the model's choice, the sum's text)])} for the sums of two products in a
    source's kernels and device functions."""
    reader = Reader(source, tuple(options), (), False)
    tu = reader.parse(source)
    contraction = Contraction(reader.ci, list(tu.cursor.get_children()), reader.code)
    K, code = reader.ci.CursorKind, reader.code
    starts = [0] + [i + 1 for i, b in enumerate(code) if b == 10]

    def product(c):
        while c.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR) and len(list(c.get_children())) == 1:
            c = next(c.get_children())
        kids = list(c.get_children())
        ok = c.kind == K.BINARY_OPERATOR and len(kids) == 2 and \
            code[kids[0].extent.end.offset:kids[1].extent.start.offset].strip() == b"*"
        return c if ok else None

    out = {}
    for fn in tu.cursor.walk_preorder():
        if fn.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) or not fn.is_definition() \
                or fn.location.file is None or fn.location.file.name != tu.spelling:
            continue
        for n in fn.walk_preorder():
            kids = list(n.get_children())
            if n.kind != K.BINARY_OPERATOR or len(kids) != 2 \
                    or code[kids[0].extent.end.offset:kids[1].extent.start.offset].strip() != b"+" \
                    or n.type.get_canonical().kind.name not in ("FLOAT", "DOUBLE", "DEPENDENT", "UNEXPOSED"):
                continue
            left, right = product(kids[0]), product(kids[1])
            if left is None or right is None:
                continue
            markers = SourceMarkers(reader, fn, (n.extent.start.offset, n.extent.end.offset))
            d = contraction.decision((n.extent.start.offset, n.extent.end.offset))
            plus = kids[0].extent.end.offset + len(code[kids[0].extent.end.offset:kids[1].extent.start.offset]) \
                - len(code[kids[0].extent.end.offset:kids[1].extent.start.offset].lstrip())
            params = [a.spelling for a in fn.get_children() if a.kind == K.PARM_DECL]
            out.setdefault(fn.spelling, (params, []))[1].append(
                (bisect.bisect_right(starts, plus), markers.of(left), markers.of(right),
                 "unknown" if d is None else "right" if d else "left",
                 code[n.extent.start.offset:n.extent.end.offset].decode(errors="replace")))
    return out


def ptx_fmas(ptx, main_file):
    """{entry: [(line, registers the fused product reads, registers the addend reads)]}: every
    fma of the main file's lines, its operands traced back (parameters as `param:i`)."""
    files = {m.group(1) for m in re.finditer(r'\.file\s+(\d+)\s+"([^"]*)"', ptx) if m.group(2).endswith(main_file)}
    out = {}
    for name, (params, instrs) in ptx_functions(ptx).items():
        flow = Dataflow(params, [(op, text) for op, text, _ in instrs])
        rows = out.setdefault(name, [])
        for op, text, loc in instrs:
            if op.startswith("fma.rn.f") and loc is not None and loc[0] in files:
                a, b, c = _operands(text)[1:4]
                rows.append((loc[1], flow.reach(a) | flow.reach(b), flow.reach(c)))
    return out


def _ptx_markers(found, entry, params, names, shared):
    """PTX's sources as SourceMarkers names them."""
    out = set()
    for t in found:
        m = re.fullmatch(re.escape(entry) + r"_param_(\d+)", t)
        if m and int(m.group(1)) < len(names):
            out.add("param:" + names[int(m.group(1))])
        elif t.startswith("%"):
            out.add(t.split(".")[0])
        elif t.startswith(("lane:", "f")) and (t.startswith("lane:") or re.fullmatch(r"f[0-9A-F]{8}", t)):
            out.add(t)
        else:
            out.update("sym:" + s for s in shared if t == s or t.endswith(f"{len(s)}{s}"))
    return out


def probe_file(path, instances=(), options=()):
    """(tally, [(line, text, nvcc's, the model's)]) over the sums of two products of a file's
    kernels (a device function's sums, in the kernels that inline it)."""
    source = Path(path).read_text()
    compiled = source + "".join(f"\nstatic void* const kc_rank_instance_{i} = (void*)&{e};"
                                for i, e in enumerate(instances)) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        cu, ptx = Path(tmp) / Path(path).name, Path(tmp) / "k.ptx"
        cu.write_text(compiled)
        subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-w", "-lineinfo", *options, str(cu), "-o", str(ptx)],
                       check=True)
        fmas = ptx_fmas(ptx.read_text(), Path(path).name)
    sums = file_sums(source, [o for o in options if o.startswith(("-D", "-I", "-std"))])
    shared = set(re.findall(r"__shared__[^;]*?(\w+)\s*(?:\[|;|=)", source))
    tally, rows = Counter(), []
    for fname, (names, found) in sums.items():
        entries = [e for e in fmas if e == fname or f"{len(fname)}{fname}" in e]
        for line, m1, m2, mine, text in found:
            sides = set()
            for entry in entries:
                for fline, fused, addend in fmas[entry]:
                    if fline != line:
                        continue
                    f = _ptx_markers(fused, entry, names, names, shared)
                    a = _ptx_markers(addend, entry, names, names, shared)
                    only1, only2 = m1 - m2, m2 - m1
                    if only1 and only2 and only1 <= f and only2 <= a and not only2 <= f:
                        sides.add("left")
                    elif only1 and only2 and only2 <= f and only1 <= a and not only1 <= f:
                        sides.add("right")
            if len(sides) != 1:
                tally["unclear" if sides else "no fma found"] += 1
                continue
            side = sides.pop()
            agree = side == mine or (mine == "unknown" and side == "left")
            tally["agree" if agree else "differ"] += 1
            tally[f"nvcc fuses {side}"] += 1
            tally[f"model {mine}"] += 1
            rows.append((line, text, side, mine))
    return tally, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--statements", type=int, default=12)
    ap.add_argument("--file", nargs="+", help="sources to read instead of random kernels")
    ap.add_argument("--corpus", action="store_true",
                    help="read the differential corpus's sources (tests/support/cuda_corpus), each with its "
                         "cases' options and template instances")
    ap.add_argument("--instance", action="append", default=[], help="a template kernel to instantiate (--file)")
    ap.add_argument("--option", action="append", default=[], help="an nvcc option (--file)")
    ap.add_argument("--verbose", action="store_true", help="print the sums whose PTX is unclear")
    ap.add_argument("--save", help="write the generated source here")
    ap.add_argument("--misses", type=int, default=20, help="how many disagreements to print")
    a = ap.parse_args()
    if a.corpus:   # run from the repository's root: `python -m scripts.contraction_rank_probe --corpus`
        from tests.support.cuda_corpus import all_cases
        from tests.support.cuda_corpus.case import SRC
        builds = {}
        for case in all_cases():   # each source once per set of options, with all its instances
            builds.setdefault((case.source, case.options), set()).update(case.name_expressions)
        a.file = [(SRC / f"{src}.cu", sorted(instances), options)
                  for (src, options), instances in sorted(builds.items())]
    if a.file:
        total = Counter()
        for entry in a.file:
            f, instances, options = entry if isinstance(entry, tuple) else (entry, a.instance, a.option)
            if not any(b"+" in line and line.count(b"*") >= 2 for line in Path(f).read_bytes().splitlines()):
                continue   # no line with a sum of two products
            tally, rows = probe_file(f, instances, options)
            total.update(tally)
            print(f"{f}: " + ", ".join(f"{k}: {v}" for k, v in sorted(tally.items())))
            for line, text, side, mine in rows:
                if a.verbose or side != mine:
                    print(f"  line {line}: nvcc {side}, model {mine}: {' '.join(text.split())[:110]}")
        decided = total["agree"] + total["differ"]
        print(f"{total['agree']} of {decided} sums agree; " + ", ".join(f"{k}: {v}" for k, v in sorted(total.items())))
        return
    tally, by_feature, misses, source = probe(a.kernels, a.seed, a.statements, a.verbose)
    if a.save:
        Path(a.save).write_text(source)
    decided = tally["agree"] + tally["differ"]
    print(f"{tally['agree']} of {decided} sums agree ({100 * tally['agree'] / max(decided, 1):.2f}%); "
          f"nvcc fused the left product in {tally['nvcc fuses left']}, the right in {tally['nvcc fuses right']}; "
          + ", ".join(f"{k}: {v}" for k, v in sorted(tally.items()) if k.startswith(("nvcc:", "model"))))
    for f, c in sorted(by_feature.items()):
        print(f"  {f:12s} {c['agree']:5d} of {c['agree'] + c['differ']:5d}")
    for name, line, text, side, mine in misses[:a.misses]:
        print(f"  {name} line {line}: nvcc {side}, front end {mine}: {text}")


if __name__ == "__main__":
    main()
