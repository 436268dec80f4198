"""Which product nvcc fuses in `p*q + r*s`: the one its optimizer puts first; and whether it
fuses a product with the sums that use it at all, in one expression or held in a local.

NVVM's optimizer reorders the two operands of every commutative instruction, float additions
included (it needs no fast-math flag to do so), by a rank: the operand of lower rank goes
first, and the operands swap only when the second one's rank is strictly lower. Code generation
then fuses the multiply that comes first, within one basic block. So of two products, the
later-computed one (higher rank) is the addend's and the other is fused; when their ranks tie,
the written order stays and the left product is fused. And a product that does not vary in a
loop the sum varies in is hoisted out of the loop (after the ranking), away from the sum: the
other product is fused.

The ranks, as the optimizer (LLVM's reassociation pass) assigns them to a function's IR:
- the function's arguments: 3, 4, 5, ... in order; constants (and globals' addresses) 0;
- the basic blocks, in reverse post-order of the control-flow graph (the code after a loop
  comes before the loop's body), each a base `(3 + arguments + i) << 16`; an instruction that
  cannot be moved (a load, a store, a call, a phi, an integer division by a variable) gets its
  block's base plus 1, 2, ... in program order;
- any other instruction: the largest rank of its operands plus one (a negation adds nothing).

This module builds that model of a kernel from its libclang AST, walking it in the order clang
emits the IR: locals are values (as the optimizer promotes them to registers), a local array is
memory, a load of memory already loaded with no store to its memory (global, shared, local) or
call in between is the same load (as early common-subexpression elimination makes it), a float4
load is one load whose lanes are extracted, an `if` whose branches touch no memory (or read a
`__shared__` array at a constant index) is a select,
loops are not yet rotated or unrolled, a call of a function the source defines is inlined, and
CUDA's math functions are the calls of intrinsics measured with nvcc 13.0 (_MATH_CALLS).
Template kernels are modelled on their pattern. Contraction.fuse_right(sum) answers for the sums
of two products that the walk reached; where the model cannot follow the code (a switch, a goto,
a condition known only when compiling, as a template's parameters make it, a call of a function
a header defines, a device function whose call sites disagree, a sum of a function no kernel
calls), it answers False: the written order, the left product fused.
tests/support/contraction_rank_probe.py holds the model to nvcc's PTX.

The same walk follows each float product's value (under --use_fast_math each float quotient's,
a multiply by a reciprocal) to its uses: the sums it is an operand of, directly or read from a
local that holds it (`float p = x * y; ... c + p`; a copy `q = p` passes it on), and every other
use (a factor, a store, an argument, a phi, a select). nvcc 13.0 fuses a product into every one
of its uses or none (cuobjdump of sm_90, logs/2026-12-07-held-products.md): where each use is a
sum's operand (of two products, the one the ranks put first; of a difference, the left one), the
sums vary in the loops the product varies in (a product hoisted out of a loop is not fused into
a sum that stays in it), no call of _APART lies between, and, of a product a local holds, the uses
are all in its block or in one only its block leads to (an if's), where the optimizer sinks it.
Contraction.kept_apart and held_product give the rewriter (arith.py) these answers.
"""
import re
from dataclasses import dataclass, field

_FIRST_ARGUMENT_RANK = 3


class _Block:
    __slots__ = ("succ", "count", "base", "loop", "joined")

    def __init__(self, loop):
        self.succ, self.count, self.base, self.loop = [], 0, None, loop   # loop: the innermost one it is in
        self.joined = False   # after a math function's branches, which join before it

    def fixed(self, loop=False):
        """A new instruction of this block that cannot be moved, varying in `loop` (the
        innermost loop it is not hoisted out of; by default the block's)."""
        self.count += 1
        return _Fixed(self, self.count, self.loop if loop is False else loop)


class _Fixed:
    __slots__ = ("block", "place", "loop")

    def __init__(self, block, place, loop):
        self.block, self.place, self.loop = block, place, loop


class _Op:
    """An instruction computed from its operands: their largest rank, plus `plus`. `loop`: the
    innermost loop it varies in (None: none; out of the others, the optimizer hoists it)."""
    __slots__ = ("operands", "plus", "rank", "loop")

    def __init__(self, operands, plus, loop):
        self.operands, self.plus, self.rank, self.loop = operands, plus, False, loop


class _Constant(int):
    """A literal: rank 0, and its text, which tells two of them apart in a load's address."""

    def __new__(cls, text):
        c = super().__new__(cls, 0)
        c.text = text
        return c


def loop_of(node):
    return None if isinstance(node, int) else node.loop


def rank(node):
    """The rank of a value: an int (an argument, a constant), a _Fixed, an _Op, or None
    where the model does not know it."""
    stack = [node]
    while stack:   # operands first, without recursion: a chain of operations may be long
        n = stack[-1]
        if isinstance(n, _Op) and n.rank is False:
            pending = [o for o in n.operands if isinstance(o, _Op) and o.rank is False]
            if pending:
                stack.extend(pending)
                continue
            ranks = [_known(o) for o in n.operands]
            n.rank = None if None in ranks else max(ranks, default=0) + n.plus
        stack.pop()
    return _known(node)


def _known(node):
    if node is None or isinstance(node, int):
        return node
    if isinstance(node, _Fixed):
        return None if node.block.base is None else node.block.base + node.place
    return node.rank


_LANES = ("x", "y", "z", "w")
# CUDA's float math functions whose code is straight: (the calls of intrinsics in it, each of
# which the optimizer keeps in place, a fixed rank as a load's; how many instructions after the
# last one the result comes). Measured with nvcc 13.0: `s0*f(x) + s1*c` against chains c of x of
# every length, with and without a load between x and the call, and `s0*c + s1*y` against chains
# c of f(x) with y loaded after the call.
_MATH_CALLS = {"sqrtf": (1, 0), "fabsf": (1, 0), "rsqrtf": (1, 0), "__expf": (1, 0), "__sinf": (1, 0),
               "__cosf": (1, 0), "__log2f": (1, 0), "__exp10f": (1, 0), "exp2f": (1, 0), "floorf": (1, 0),
               "ceilf": (1, 0), "truncf": (1, 0), "rintf": (1, 0), "__saturatef": (1, 0), "__frcp_rn": (1, 0),
               "__fsqrt_rn": (1, 0), "fminf": (1, 0), "fmaxf": (1, 0), "__logf": (1, 1), "roundf": (2, 0),
               "expf": (6, 1), "exp10f": (6, 1), "tanhf": (8, 1)}
# Those whose code branches (special cases, range reduction): the code after the call is in a
# block of its own, and the result is a phi there.
_MATH_BRANCHING = {"logf", "log2f", "log10f", "log1pf", "sinf", "cosf", "tanf", "sincosf", "powf", "erff", "erfcf",
                   "atanf", "atan2f", "asinf", "acosf", "sinhf", "coshf", "expm1f", "sinpif", "cospif"}
# Of those, the ones after whose call nvcc 13.0 keeps a product computed before it apart from a
# sum after it (FMUL, then FADD), where after every other one it gave an FFMA: the optimizer sinks
# the product down to its sum, but these functions' selects become branches after that, between
# them (cuobjdump of sm_90, `float p = x * y; o = f(c) + p;` and `o = x * y + f(c)` alike, the
# operands from four arrays; from one array nvcc kept `logf`'s apart too, which a product a local
# holds is here: logs/2026-12-07-held-products.md). Under --use_fast_math sinf and cosf are
# __sinf and __cosf.
_APART = {"sinf", "cosf", "atanf", "erff", "log1pf"}
_FAST_MATH_STRAIGHT = {"sinf", "cosf"}
_REINTERPRETATIONS = {"__int_as_float", "__float_as_int", "__uint_as_float", "__float_as_uint"}
_SPECIAL_REGISTERS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
_LOADS = {"__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"}
# Calls that are instructions with effects (barriers, warp operations, atomics, output): each
# one a fixed place, and no load is reused across one.
_EFFECTS = ("__sync", "__shfl", "atomic", "__threadfence", "printf", "__ballot", "__any", "__all", "__activemask",
            "__match", "__reduce", "__nanosleep", "assert")
_MAX_INLINE_DEPTH = 8
# How deep an expression the walk follows (each level a few Python frames, and libclang's
# visits of a cursor's children need stack too: past Python's limit they would fail inside
# libclang's callbacks, where the error cannot be caught).
_MAX_NESTING = 120
_NAME = re.compile(r"\s*(?:::)?(?:std::)?(\w+)")


class _Unsupported(Exception):
    """A construct whose control flow the model does not follow."""


@dataclass(eq=False)
class _Loop:
    parent: object              # the loop around it, or None
    writes: set                 # the memories it may write (its loads of them stay in it)
    continued: list = field(default_factory=list)   # the blocks that continue
    broke: list = field(default_factory=list)       # the blocks that break


@dataclass(eq=False)
class _Site:
    """A float product (under --use_fast_math a float quotient too) where the walk computed it."""
    extent: tuple               # the product's, or `p *= y`'s, in the source
    fn: int                     # the function whose text holds it
    block: object               # the _Block it is computed in
    loop: object                # the innermost loop of the walk's it varies in (None: none)
    apart: int                  # the walk's count of _APART calls so far
    held: bool = False          # stored in a local, whose reads are its uses
    uses: list = field(default_factory=list)


@dataclass(eq=False)
class _Use:
    """One use of a _Site's value: `read`, the extent of a local's read (None: the product
    itself, an operand); fusible, whether it is an operand of a sum that may fuse it; the sum's
    block, loop and the walk's _APART count there."""
    read: tuple
    fn: int
    block: object
    loop: object
    apart: int
    fusible: bool = False


class _Walk:
    """The ranks of one kernel's values, its device functions inlined."""

    def __init__(self, ci, fn, code, definitions, sums, addressed, fast_math=False):
        """definitions: USR -> (function, body) of the source's functions; sums: where run()
        records each sum's answers; addressed: the locals whose address the kernel takes;
        fast_math: --use_fast_math (a float quotient is a product, sinf and cosf keep nothing
        apart)."""
        self.ci, self.K, self.code, self.definitions, self.sums = ci, ci.CursorKind, code, definitions, sums
        self.addressed = addressed
        self.nesting = 0   # how deep _ev is in an expression
        self.callee_writes = {}   # USR -> whether a function the source defines may write memory
        self.op_kind = ci.conf.lib.clang_getCursorBinaryOperatorKind
        self.entry = self.cur = _Block(None)
        self.env, self.loads, self.memory, self.loops, self.depth = {}, {}, set(), [], 0
        params = [a for a in fn.get_children() if a.kind == self.K.PARM_DECL]
        for i, p in enumerate(params):
            self.env[p.hash] = _FIRST_ARGUMENT_RANK + i
        self.nargs = len(params)
        self.found = []   # (sum's extent, lhs product, rhs product, the loops around it)
        self.children = {}   # a cursor's children, asked for once (libclang's visits are the walk's cost)
        self.main_file = fn.translation_unit.spelling
        self.returns = []
        self.fast_math, self.fn = fast_math, fn.hash
        self.sites = {}     # product node -> its _Site
        self.read_uses = {}   # a local's read (its extent) -> the _Use recorded for it, the last time
        self.pairs = []     # ([the two _Use], lhs, rhs, loops) of sums of two products
        self.apart = 0      # _APART calls walked so far
        self.entries = []   # the block each loop of self.loops is entered from

    def run(self, body):
        self._stmt(body)
        order, seen = [], set()

        def visit(b):   # depth first, successors in order; reverse post-order below
            stack = [(b, iter(b.succ))]
            seen.add(id(b))
            while stack:
                node, it = stack[-1]
                nxt = next((s for s in it if id(s) not in seen), None)
                if nxt is None:
                    order.append(node)
                    stack.pop()
                else:
                    seen.add(id(nxt))
                    stack.append((nxt, iter(nxt.succ)))
        visit(self.entry)
        for i, b in enumerate(reversed(order)):
            b.base = (_FIRST_ARGUMENT_RANK + self.nargs + i) << 16
        for extent, lhs, rhs, loops in self.found:
            self.sums.setdefault(extent, set()).add(self._right(lhs, rhs, loops))
        for uses, lhs, rhs, loops in self.pairs:   # of two products, the one the ranks put first
            right = self._right(lhs, rhs, loops) is True
            uses[0].fusible, uses[1].fusible = not right, right

    def fused_sites(self):
        """(site, whether its uses fuse it) for each product that some sum uses (run() first).
        A product is fused into every one of its uses or none: where each is a sum's operand
        (of two products, the first), in the loops the product varies in (not hoisted apart
        from it), with no _APART call between, and, of a product a local holds, all in one block:
        the product's, or one that only the product's block leads to (the optimizer sinks the
        product into it). Where that block follows a join (an if's, a loop's, a math function's
        branches), nvcc 13.0 fuses in some kernels and not in others
        (logs/2026-12-07-held-products.md): not fused here, as before this model; a product in
        its sum's expression is fused there, as before."""
        preds = {}
        for b in self._blocks():
            for s in b.succ:
                preds.setdefault(id(s), []).append(b)
        for site in self.sites.values():
            if not any(u.fusible for u in site.uses):
                continue
            block = site.uses[0].block
            sunk = block is site.block or (not block.joined and preds.get(id(block)) == [site.block])
            yield site, (sunk and all(u.block is block for u in site.uses) or not site.held) and all(
                u.fusible and u.fn == site.fn and u.loop is site.loop and u.apart == site.apart for u in site.uses)

    def _blocks(self):
        """The blocks reachable from the entry."""
        seen, stack = {id(self.entry)}, [self.entry]
        while stack:
            b = stack.pop()
            yield b
            for s in b.succ:
                if id(s) not in seen:
                    seen.add(id(s))
                    stack.append(s)

    def _right(self, lhs, rhs, loops):
        """Whether the right product is fused. A product that does not vary in the loop the sum
        varies in is hoisted out of it, away from the sum: code generation, which fuses within a
        block, then fuses the other; else the one the ranks put first."""
        if lhs is None or rhs is None:
            return None
        dl, dr = self._depth(loop_of(lhs), loops), self._depth(loop_of(rhs), loops)
        if dl != dr:
            return dl < dr
        lr, rr = rank(lhs), rank(rhs)
        return None if lr is None or rr is None else rr < lr

    def _kids(self, c):
        key = c.hash
        kids = self.children.get(key)
        if kids is None:
            kids = self.children[key] = list(c.get_children())
        return kids

    # -- loops --
    def _loop(self):
        return self.loops[-1] if self.loops else None

    def _anchor(self, loop):
        """The innermost loop of the walk's that `loop` (a value's) is, or lies in."""
        while loop is not None and not any(loop is x for x in self.loops):
            loop = loop.parent
        return loop

    def _depth(self, loop, loops):
        while loop is not None and not any(loop is x for x in loops):
            loop = loop.parent
        return 0 if loop is None else next(i for i, x in enumerate(loops) if x is loop) + 1

    def _op(self, *operands, plus=1):
        if any(o is None or isinstance(o, dict) for o in operands):
            return None
        anchored = [self._anchor(loop_of(o)) for o in operands]
        loop = max(anchored, key=lambda x: self._depth(x, self.loops), default=None)
        return _Op(operands, plus, loop)

    # -- blocks --
    def _block(self):
        b = _Block(self._loop())
        if self.cur is not None:
            self.cur.succ.append(b)
        self.cur, self.loads = b, {}
        return b

    def _here(self):
        """The current block (a fresh unreachable one after a return, break or continue)."""
        if self.cur is None:
            self.cur = _Block(self._loop())
        return self.cur

    def _fixed(self):
        return self._here().fixed()

    def _effect(self, space=None):
        """A store to memory `space` (None: a call, which may write any): no load of it is reused
        across it."""
        self.loads = {k: v for k, v in self.loads.items() if space is not None and k[2] != space}
        return self._fixed()

    def _space(self, c):
        """The memory an lvalue lies in, by the variable its address starts from: 'shared',
        'local' (an array of the function's) or 'global' (anything else). Accesses of
        different ones never alias: the optimizer knows their address spaces apart."""
        K = self.K
        while True:
            c = self._strip(c)
            kids = self._kids(c)
            if c.kind == K.DECL_REF_EXPR:
                d = c.referenced
                if d is None:
                    return "global"
                if "kc_shared" in {a.spelling for a in d.get_children() if a.kind == K.ANNOTATE_ATTR}:
                    return "shared"
                return "local" if d.hash in self.memory else "global"
            if c.kind in (K.ARRAY_SUBSCRIPT_EXPR, K.MEMBER_REF_EXPR, K.UNARY_OPERATOR, K.CSTYLE_CAST_EXPR,
                          K.CXX_REINTERPRET_CAST_EXPR, K.CXX_STATIC_CAST_EXPR) and kids:
                c = [k for k in kids if k.kind.is_expression()][0]
                continue
            return "global"

    # -- statements --
    def _stmt(self, c):
        K, k = self.K, c.kind
        if k == K.COMPOUND_STMT:
            for ch in c.get_children():
                self._stmt(ch)
        elif k == K.DECL_STMT:
            for d in c.get_children():
                if d.kind == K.VAR_DECL:
                    self._declare(d)
        elif k == K.IF_STMT:
            self._if(c)
        elif k == K.FOR_STMT:
            self._for(c)
        elif k == K.WHILE_STMT:
            kids = self._kids(c)
            self._while(kids[0], None, kids[-1])
        elif k == K.DO_STMT:
            self._do(c)
        elif k == K.RETURN_STMT:
            kids = self._kids(c)
            value = self._ev(kids[0]) if kids else 0
            if self.depth == 0:
                self._here().fixed()   # the return instruction
                self.cur = None
            else:   # an inlined callee's: its value, if it is the callee's one return
                self.returns.append(value)
        elif k in (K.BREAK_STMT, K.CONTINUE_STMT):
            if not self.loops:
                raise _Unsupported("a break outside a loop")
            loop = self.loops[-1]
            (loop.broke if k == K.BREAK_STMT else loop.continued).append(self._here())
            self.cur = None
        elif k == K.NULL_STMT:
            pass
        elif k in (K.SWITCH_STMT, K.GOTO_STMT, K.LABEL_STMT, K.ASM_STMT, K.CXX_TRY_STMT, K.CASE_STMT,
                   K.DEFAULT_STMT, K.INDIRECT_GOTO_STMT):
            raise _Unsupported(k.name)
        else:
            self._ev(c)

    def _declare(self, d):
        K = self.K
        init = [ch for ch in d.get_children() if ch.kind.is_expression()]
        tk = d.type.get_canonical().kind
        if "kc_shared" in {a.spelling for a in d.get_children() if a.kind == K.ANNOTATE_ATTR} \
                or d.storage_class.name == "STATIC":
            return   # a global: each read of it a load
        if tk in (self.ci.TypeKind.CONSTANTARRAY, self.ci.TypeKind.INCOMPLETEARRAY, self.ci.TypeKind.LVALUEREFERENCE,
                  self.ci.TypeKind.RVALUEREFERENCE) or d.hash in self.addressed:
            # memory: its allocation sits at the top of the entry block, its lifetime starts here
            self.memory.add(d.hash)
            self.entry.count += 1
            self._fixed()
            if init:
                self._ev(init[-1])
                self._effect()   # the initializer's memset or stores
            return
        self.env[d.hash] = self._ev(init[-1]) if init else 0
        if init and d.type.get_canonical().kind.name in ("FLOAT", "DOUBLE"):
            self._stored(init[-1], self.env[d.hash])

    def _if(self, c):
        kids = self._kids(c)
        if not kids[0].kind.is_expression():
            raise _Unsupported("an if with a declaration")
        cond, then = kids[0], kids[1]
        other = kids[2] if len(kids) > 2 else None
        if self._constant(cond):   # folded by the compiler (a template's parameter): which branch is unknown
            raise _Unsupported("a condition known when compiling")
        self._ev(cond)
        if self._pure(then) and (other is None or self._pure(other)):
            self._select(then, other)
            return
        head, env0, loads0 = self._here(), dict(self.env), dict(self.loads)
        then_b = _Block(self._loop())
        else_b = _Block(self._loop()) if other is not None else None
        head.succ.extend([then_b, else_b] if other is not None else [then_b])
        self.cur = then_b
        self._stmt(then)
        ends = [(self.cur, self.env)]
        self.env, self.loads = dict(env0), dict(loads0)
        if other is not None:
            self.cur = else_b
            self._stmt(other)
            ends.append((self.cur, self.env))
        else:
            ends.append((head, env0))
        self._join(ends)

    def _constant(self, c):
        """Whether an expression reads no variable, memory, register or call."""
        K = self.K
        for n in c.walk_preorder():
            if n.kind in (K.CALL_EXPR, K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR):
                return False
            d = n.referenced if n.kind == K.DECL_REF_EXPR else None
            if d is not None and d.kind in (K.PARM_DECL, K.VAR_DECL) and not d.type.is_const_qualified():
                return False
        return True

    def _join(self, ends):
        """The block after an if or a loop: its predecessors' values merged by phis."""
        live = [(b, env) for b, env in ends if b is not None]
        end = _Block(self._loop())
        for b, _ in live:
            b.succ.append(end)
        self.cur, self.loads = end, {}
        if not live:
            self.cur = None
            return
        merged = dict(live[0][1])
        for key in list(merged):
            values = [env.get(key) for _, env in live]
            if any(v is not values[0] for v in values):
                if all(key in env for _, env in live):   # (else a local of one branch: out of scope here)
                    for v in values:
                        self._consumed(v)   # by the phi
                merged[key] = end.fixed()
        self.env = merged

    def _select(self, then, other):
        """An if whose branches compute without memory: selects, in the current block."""
        env0 = dict(self.env)
        self._stmt(then)
        env_then, self.env = self.env, dict(env0)
        if other is not None:
            self._stmt(other)
        for key, v in list(self.env.items()):
            if env_then.get(key) is not v and key in env0:   # (a local of the branch: out of scope after it)
                self._consumed(env_then.get(key))
                self._consumed(v)
                self.env[key] = self._op(env_then.get(key), v)

    def _pure(self, c):
        """Whether a statement computes without memory, calls or control flow of its own, but
        for reads of a `__shared__` array at a constant index, which the optimizer may run
        before the branch (the address is known to be valid): the if becomes a select."""
        K = self.K
        if self._writes([c]):
            return False
        for n in c.walk_preorder():
            if n.kind == K.ARRAY_SUBSCRIPT_EXPR and self._shared_constant(n):
                continue
            if n.kind in (K.ARRAY_SUBSCRIPT_EXPR, K.CALL_EXPR, K.RETURN_STMT, K.BREAK_STMT, K.CONTINUE_STMT,
                          K.FOR_STMT, K.WHILE_STMT, K.DO_STMT, K.IF_STMT, K.CXX_NEW_EXPR, K.ASM_STMT):
                return False
            if n.kind == K.UNARY_OPERATOR and self._unary_token(n) in ("*", "&"):
                return False
            if n.kind == K.MEMBER_REF_EXPR and self._arrow(n):
                return False
            d = n.referenced if n.kind == K.DECL_REF_EXPR else None
            if d is not None and d.kind == K.VAR_DECL and d.hash not in self.env \
                    and d.type.get_canonical().kind.name not in ("CONSTANTARRAY", "INCOMPLETEARRAY"):
                return False   # memory, or a local declared inside: not a select's operand
        return True

    def _shared_constant(self, c):
        """Whether `c` is `a[k]` of a one-dimensional `__shared__` array and a literal k within it."""
        kids = self._kids(c)
        if len(kids) != 2 or self._strip(kids[1]).kind != self.K.INTEGER_LITERAL or self._space(c) != "shared":
            return False
        base = self._strip(kids[0])
        t = base.type.get_canonical() if base.kind == self.K.DECL_REF_EXPR else None
        if t is None or t.kind.name != "CONSTANTARRAY" or t.element_type.kind.name == "CONSTANTARRAY":
            return False
        index = self.code[kids[1].extent.start.offset:kids[1].extent.end.offset].decode(errors="replace")
        return index.isdigit() and int(index) < t.element_count

    def _for(self, c):
        kids = self._kids(c)
        body = kids[-1]
        parts = {"init": None, "cond": None, "inc": None}
        semis = self._header_semicolons(c)
        for ch in kids[:-1]:
            at = ch.extent.start.offset
            parts["init" if at < semis[0] else "cond" if at < semis[1] else "inc"] = ch
        if parts["init"] is not None:
            self._stmt(parts["init"])
        self._while(parts["cond"], parts["inc"], body)

    def _header_semicolons(self, c):
        code, at = self.code, c.extent.start.offset
        at = code.index(b"(", at)
        depth, semis = 0, []
        for i in range(at, c.extent.end.offset):
            ch = code[i:i + 1]
            depth += (ch == b"(") - (ch == b")")
            if ch == b";" and depth == 1:
                semis.append(i)
                if len(semis) == 2:
                    return semis
        raise _Unsupported("a for statement's header")

    def _while(self, cond, inc, body):
        """for and while: a header block (the condition, its phis first), the body, the
        increment, back to the header; the code after the loop follows the header."""
        parts = [x for x in (cond, inc, body) if x is not None]
        loop = _Loop(self._loop(), self._writes(parts))
        self.entries.append(self._here())   # where what the loop does not vary is hoisted to
        self.loops.append(loop)
        header = self._block()
        for key in self._assigned(parts):
            if key in self.env:
                self._consumed(self.env[key])   # by the header's phi
                self.env[key] = header.fixed()
        if cond is not None:
            self._ev(cond)
        env_header = dict(self.env)
        body_b, exit_b = _Block(loop), _Block(loop.parent)
        header.succ.extend([body_b, exit_b] if cond is not None else [body_b])
        self.cur, self.loads = body_b, {}
        self._stmt(body)
        if inc is not None:
            if loop.continued:   # for.inc stays a block of its own
                inc_b = _Block(loop)
                for b in loop.continued + ([self.cur] if self.cur is not None else []):
                    b.succ.append(inc_b)
                self.cur, self.loads = inc_b, {}
            self._ev(inc)
        else:
            for b in loop.continued:
                b.succ.append(header)
        if self.cur is not None:
            self.cur.succ.append(header)
        self.loops.pop()
        self.entries.pop()
        self._after_loop(exit_b, loop, env_header)

    def _after_loop(self, exit_b, loop, env_header):
        for b in loop.broke:
            b.succ.append(exit_b)
        self.cur, self.loads = exit_b, {}
        if loop.broke:   # values from the breaks merge with the header's
            merged = dict(env_header)
            for key in merged:
                self._consumed(merged[key])
                merged[key] = exit_b.fixed()
            self.env = merged
        else:
            self.env = env_header

    def _do(self, c):
        body, cond = self._kids(c)
        loop = _Loop(self._loop(), self._writes([body, cond]))
        self.entries.append(self._here())
        self.loops.append(loop)
        body_b = self._block()
        for key in self._assigned([body, cond]):
            if key in self.env:
                self._consumed(self.env[key])
                self.env[key] = body_b.fixed()
        exit_b = _Block(loop.parent)
        self._stmt(body)
        if loop.continued:
            latch = _Block(loop)
            for b in loop.continued + ([self.cur] if self.cur is not None else []):
                b.succ.append(latch)
            self.cur, self.loads = latch, {}
        self._ev(cond)
        env_exit = dict(self.env)
        self._here().succ.extend([body_b, exit_b])
        self.loops.pop()
        self.entries.pop()
        self._after_loop(exit_b, loop, env_exit)

    def _writes(self, stmts):
        """The memories statements may write: a store's, or all where they call anything but
        arithmetic."""
        K, out = self.K, set()
        for s in stmts:
            for n in s.walk_preorder():
                if n.kind == K.CALL_EXPR and self._call_writes(n):
                    return {"global", "shared", "local"}
                target = None
                if n.kind == K.COMPOUND_ASSIGNMENT_OPERATOR or (n.kind == K.BINARY_OPERATOR
                                                                and self._binary_token(n) == "="):
                    target = next(n.get_children())
                elif n.kind == K.UNARY_OPERATOR and self._unary_token(n) in ("++", "--"):
                    target = next(n.get_children())
                elif n.kind == K.CALL_EXPR and n.spelling == "operator=":
                    target = next(n.get_children())
                if target is not None and not self._local(target):
                    out.add(self._space(target))
        return out

    def _call_writes(self, n):
        """Whether a call may write memory: a barrier, atomic or the like, a call of a function the
        source defines that stores, or of one it declares only; not the math library's."""
        ref = n.referenced
        if ref is None or ref.kind == self.K.CONSTRUCTOR or n.spelling in _REINTERPRETATIONS | _LOADS \
                or self._written(n) in _MATH_CALLS or self._written(n) in _MATH_BRANCHING \
                or n.spelling.startswith("make_") or self._written(n) in _SPECIAL_REGISTERS:
            return False
        if self._written(n).startswith(_EFFECTS) or n.spelling.startswith(_EFFECTS):
            return True
        usr = ref.get_usr()
        if usr in self.definitions:
            if usr not in self.callee_writes:   # a recursive call counts as writing, while it is looked at
                self.callee_writes[usr] = True
                self.callee_writes[usr] = bool(self._writes([self.definitions[usr][1]]))
            return self.callee_writes[usr]
        return ref.location.file is None or ref.location.file.name == self.main_file

    def _local(self, c):
        """Whether an assignment's target is a local variable's value (or a lane of it)."""
        s = self._strip(c)
        if s.kind == self.K.MEMBER_REF_EXPR and not self._arrow(s):
            s = self._strip(next(s.get_children()))
        d = s.referenced if s.kind == self.K.DECL_REF_EXPR else None
        return d is not None and d.kind in (self.K.VAR_DECL, self.K.PARM_DECL) \
            and d.semantic_parent is not None and d.semantic_parent.kind in (self.K.FUNCTION_DECL,
                                                                            self.K.FUNCTION_TEMPLATE) \
            and d.hash not in self.memory and d.hash not in self.addressed \
            and d.type.get_canonical().kind.name not in ("CONSTANTARRAY", "INCOMPLETEARRAY")

    def _assigned(self, stmts):
        """The locals that the statements assign (their loop's phis)."""
        K, out = self.K, []
        for s in stmts:
            for n in s.walk_preorder():
                target = None
                if n.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                    kids = self._kids(n)
                    if len(kids) == 2 and (n.kind == K.COMPOUND_ASSIGNMENT_OPERATOR or self._binary_token(n) == "="):
                        target = kids[0]
                elif n.kind == K.UNARY_OPERATOR and self._unary_token(n) in ("++", "--"):
                    target = next(n.get_children())
                while target is not None and target.kind in (K.PAREN_EXPR, K.MEMBER_REF_EXPR, K.UNEXPOSED_EXPR) \
                        and not (target.kind == K.MEMBER_REF_EXPR and self._arrow(target)):
                    inner = self._kids(target)
                    target = inner[0] if inner else None
                if target is not None and target.kind == K.DECL_REF_EXPR and target.referenced is not None:
                    key = target.referenced.hash
                    if key not in out:
                        out.append(key)
        return out

    # -- expressions --
    def _unary_token(self, c):
        at = c.extent.start.offset
        text = self.code[at:at + 2].decode(errors="replace")
        if text in ("++", "--"):
            return text
        if text[:1] in "-+!~*&":
            return text[:1]
        end = c.extent.end.offset   # a postfix ++ or --
        return self.code[end - 2:end].decode(errors="replace")

    def _binary_token(self, c):
        lhs, rhs = self._kids(c)
        return self.code[lhs.extent.end.offset:rhs.extent.start.offset].decode(errors="replace").strip()

    def _arrow(self, c):
        kids = self._kids(c)
        if not kids:
            return False
        between = self.code[kids[0].extent.end.offset:c.extent.end.offset].decode(errors="replace")
        return between.lstrip().startswith("->")

    def _kind(self, c):
        return c.type.get_canonical().kind.name

    def _lanes(self, c):
        """The lane names of a CUDA vector type (float4: x, y, z, w), or None."""
        t = c.type.get_canonical()
        if t.kind.name != "RECORD":
            return None
        name = t.get_declaration().spelling
        if name[-1:] in "1234" and name.rstrip("1234") in ("float", "double", "int", "uint", "char", "uchar",
                                                           "short", "ushort", "long", "ulong", "longlong",
                                                           "ulonglong", "half", "bfloat"):
            return _LANES[:int(name[-1])]
        return None

    def _load(self, c):
        """A load of `c` (an lvalue): the earlier one if no effect came between. In loops that
        write no memory, a load of an invariant address is hoisted out of them."""
        key, address_loop = self._key(c)
        if key is not None and key in self.loads:
            return self.loads[key]
        loop = self._loop()
        while loop is not None and key is not None and key[2] not in loop.writes and address_loop is not loop:
            loop = loop.parent
        node = self._here().fixed(loop)
        lanes = self._lanes(c)
        if lanes:   # one vector load, then one extraction per lane
            node = {lane: self._op(node) for lane in lanes}
        if key is not None:
            self.loads[key] = node
        return node

    def _key(self, c):
        """((a load's address as written, the values of the locals it reads, its memory), the
        innermost loop of the walk's they vary in); (None, None) where it calls or loads."""
        parts, loops = [], []
        for n in c.walk_preorder():
            if n.kind == self.K.DECL_REF_EXPR and n.referenced is not None:
                d = n.referenced
                if d.hash not in self.env:
                    if d.hash in self.memory and d.semantic_parent is not None \
                            and d.semantic_parent.kind in (self.K.FUNCTION_DECL, self.K.FUNCTION_TEMPLATE):
                        return None, None   # a local in memory: its value is not known here
                    parts.append((n.spelling, "global"))
                    continue
                v = self.env[d.hash]
                parts.append((n.spelling, v.text if isinstance(v, _Constant) else v if isinstance(v, int) else id(v)))
                if isinstance(v, dict) or v is None:
                    return None, None
                loops.append(self._anchor(loop_of(v)))
            elif n.kind == self.K.CALL_EXPR or (n is not c and n.kind == self.K.ARRAY_SUBSCRIPT_EXPR):
                return None, None
        text = self.code[c.extent.start.offset:c.extent.end.offset]
        return (text, tuple(parts), self._space(c)), max(loops, key=lambda x: self._depth(x, self.loops), default=None)

    def _ev(self, c):
        """The value of an expression (a rank node, or {lane: node} for a vector), its effects
        placed in the current block."""
        self.nesting += 1
        try:
            if self.nesting > _MAX_NESTING:
                raise _Unsupported("an expression nested deeper than the walk follows")
            return self._value(c)
        finally:
            self.nesting -= 1

    def _value(self, c):
        K, k = self.K, c.kind
        kids = self._kids(c)
        if k in (K.INTEGER_LITERAL, K.FLOATING_LITERAL, K.CXX_BOOL_LITERAL_EXPR, K.CHARACTER_LITERAL,
                 K.CXX_NULL_PTR_LITERAL_EXPR, K.STRING_LITERAL):
            return _Constant(self.code[c.extent.start.offset:c.extent.end.offset])
        if k == K.PAREN_EXPR:
            return self._ev(kids[0])
        if k == K.UNEXPOSED_EXPR:
            if len(kids) != 1:
                return self._sequence(kids)
            inner = self._ev(kids[0])
            return self._op(inner) if self._converts(kids[0], c) else inner
        if k in (K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR,
                 K.CXX_REINTERPRET_CAST_EXPR, K.CXX_CONST_CAST_EXPR):
            exprs = [ch for ch in kids if ch.kind.is_expression()]
            inner = self._ev(exprs[-1]) if exprs else 0
            return self._op(inner) if exprs and self._converts(exprs[-1], c) else inner
        if k == K.DECL_REF_EXPR:
            return self._ref(c)
        if k == K.ARRAY_SUBSCRIPT_EXPR:
            self._address(c)
            return self._load(c)
        if k == K.MEMBER_REF_EXPR:
            return self._member(c, kids)
        if k == K.UNARY_OPERATOR:
            return self._unary(c, kids)
        if k == K.BINARY_OPERATOR:
            return self._binary(c, kids)
        if k == K.COMPOUND_ASSIGNMENT_OPERATOR:
            rhs = self._ev(kids[1])
            old = self._read_target(kids[0])
            node = self._op(old, rhs)
            tok = self._binary_token(c)
            if self._kind(c) in ("FLOAT", "DOUBLE"):
                node = self._traced(node, old, rhs)
                if node is not None and tok in ("+=", "-="):
                    self._sum_uses([kids[1]], [rhs], node)
                elif node is not None and self._multiplies(c, tok[:1]) and self._kind(kids[1]) == self._kind(c) \
                        and self._target(kids[0]) is not None and self._target(kids[0])[1] is None:
                    self._site(c, node).held = True   # `p *= y`: p holds p * y (of p's type, not y's wider one)
            return self._write(kids[0], node)
        if k == K.CONDITIONAL_OPERATOR:
            values = [self._ev(ch) for ch in kids]
            return self._merge_values(values)
        if k == K.CALL_EXPR:
            return self._call(c, kids)
        if k == K.INIT_LIST_EXPR:
            values = [self._ev(ch) for ch in kids]
            lanes = self._lanes(c)
            return dict(zip(lanes, values)) if lanes else (values[0] if len(values) == 1 else None)
        if k == K.CXX_UNARY_EXPR or k == K.TYPE_REF:
            return 0
        return self._sequence(kids)

    def _sequence(self, kids):
        value = None
        for ch in kids:
            if ch.kind.is_expression():
                value = self._ev(ch)
        return value

    def _merge_values(self, values):
        """A select of (cond, a, b): lane by lane for vectors."""
        cond, a, b = values if len(values) == 3 else (None, None, None)
        if isinstance(a, dict) and isinstance(b, dict):
            return {lane: self._op(cond, a.get(lane), b.get(lane)) for lane in a}
        if isinstance(a, dict) or isinstance(b, dict):
            return None
        return self._op(cond, a, b)

    def _converts(self, inner, outer):
        """Whether an implicit or written conversion is an instruction (between integer widths,
        integers and floats, float widths); lvalue reads, pointer and same-width integer ones
        are not."""
        a, b = inner.type.get_canonical(), outer.type.get_canonical()
        if a.kind == b.kind or a.kind.name in ("POINTER", "RECORD") or b.kind.name in ("POINTER", "RECORD", "VOID"):
            return False
        if a.kind.name in _INTS and b.kind.name in _INTS:
            return a.get_size() != b.get_size()
        return True

    def _ref(self, c):
        d = c.referenced
        if d is None or d.kind not in (self.K.PARM_DECL, self.K.VAR_DECL):
            return 0   # an enumerator, a function
        if d.hash in self.env:
            value = self.env[d.hash]
            use = self._consumed(value, (c.extent.start.offset, c.extent.end.offset))
            if use is not None:
                self.read_uses[use.read] = use
            return value
        if d.type.get_canonical().kind.name in ("CONSTANTARRAY", "INCOMPLETEARRAY"):
            return 0   # an array's address
        if d.hash not in self.memory and d.type.is_const_qualified():
            return 0   # a constant
        return self._load(c)   # a global, __shared__ or memory-resident variable

    def _member(self, c, kids):
        if not kids:
            return None   # a member of `this`
        base = self._strip(kids[0])
        if self._written(kids[0]) in _SPECIAL_REGISTERS:
            return 1   # a special register's read: a call of no operands that touches no memory
        if self._arrow(c) or base.kind == self.K.ARRAY_SUBSCRIPT_EXPR or (
                base.kind == self.K.UNARY_OPERATOR and self._unary_token(base) == "*"):
            self._address(c)
            return self._load(c)
        whole = self._ev(kids[0])
        return whole.get(c.spelling) if isinstance(whole, dict) else None

    def _address(self, c):
        """The values an lvalue's address reads (its base's and its index's loads), in order."""
        s = self._strip(c)
        if s.kind == self.K.MEMBER_REF_EXPR and not self._arrow(s):
            inner = self._kids(s)
            if inner:
                self._address(inner[0])
        elif s.kind in (self.K.ARRAY_SUBSCRIPT_EXPR, self.K.MEMBER_REF_EXPR, self.K.UNARY_OPERATOR):
            for ch in s.get_children():
                self._ev(ch)

    def _unary(self, c, kids):
        tok = self._unary_token(c)
        if tok == "&":
            return 0
        if tok == "*":
            self._ev(kids[0])
            return self._load(c)
        if tok in ("++", "--"):
            old = self._read_target(kids[0])
            self._write(kids[0], self._op(old))
            return old
        value = self._ev(kids[0])
        if tok in ("-", "~"):
            return self._op(value, plus=0)   # a negation or a not adds nothing
        return value if tok == "+" else self._op(value)

    def _binary(self, c, kids):
        if len(kids) != 2:
            return self._sequence(kids)
        tok = self._binary_token(c)
        if tok == "=":
            value = self._ev(kids[1])
            target = self._target(kids[0])
            if target is not None and target[1] is None and self._kind(kids[0]) in ("FLOAT", "DOUBLE"):
                self._stored(kids[1], value)
            return self._write(kids[0], value)
        if tok == ",":
            self._ev(kids[0])
            return self._ev(kids[1])
        lhs, rhs = self._ev(kids[0]), self._ev(kids[1])
        if tok == "+" and self._kind(c) in ("FLOAT", "DOUBLE", "DEPENDENT", "UNEXPOSED"):
            left, right = (self._product(k) or self._holds_product(k, v) for k, v in zip(kids, (lhs, rhs)))
            if left and right:
                self.found.append(((c.extent.start.offset, c.extent.end.offset), lhs, rhs, tuple(self.loops)))
        if isinstance(lhs, dict) or isinstance(rhs, dict):
            return None
        if tok in ("/", "%") and self._kind(c) in _INTS and self._strip(kids[1]).kind != self.K.INTEGER_LITERAL:
            return self._fixed()   # an integer division by a variable may trap: it stays in place
        node = self._op(lhs, rhs)
        if self._kind(c) in ("FLOAT", "DOUBLE"):
            node = self._traced(node, lhs, rhs)
            if node is not None and tok in ("+", "-"):
                self._sum_uses(kids, [lhs, rhs], node, tok)
            elif node is not None and self._multiplies(c, tok):
                self._site(c, node)
        return node

    def _traced(self, node, *operands):
        """`node`, or where an operand's rank is unknown (a call of a header's function gave it)
        outside every loop, a value of unknown rank that the product uses can follow all the
        same (no loop to be hoisted from)."""
        if node is None and not self.loops and not any(isinstance(o, dict) for o in operands):
            node = _Op((), 0, None)
            node.rank = None
        return node

    # -- products and their uses --
    def _multiplies(self, c, tok):
        """Whether `c`, of operator tok (`*` or `/`, or of `*=` and `/=`), is a float product, or
        under --use_fast_math a float quotient (a multiply by a reciprocal, which fuses as one)."""
        return tok == "*" or (tok == "/" and self.fast_math and self._kind(c) == "FLOAT")

    def _site(self, c, node):
        site = self.sites[node] = _Site((c.extent.start.offset, c.extent.end.offset), self.fn, self._here(),
                                        self._anchor(loop_of(node)), self.apart)
        return site

    def _consumed(self, value, read=None):
        """A use of `value` (a product's: recorded; a read of a local's, at `read`) that fuses
        nothing unless _sum_uses finds it a sum's operand."""
        site = self.sites.get(value) if isinstance(value, _Op) else None
        if site is None:
            return None
        use = _Use(read, self.fn, self._here(), self._loop(), self.apart)
        site.uses.append(use)
        return use

    def _stored(self, expr, value):
        """`p = expr` or `float p = expr`, p a local float: a product stored so is held (its reads
        are its uses), and a copy of another local (`float q = p`) is no use: q's reads are."""
        site = self.sites.get(value) if isinstance(value, _Op) else None
        if site is None:
            return
        inner = self._operand(expr)
        if (inner.extent.start.offset, inner.extent.end.offset) == site.extent:
            site.held = True
        elif inner.kind == self.K.DECL_REF_EXPR:
            use = self.read_uses.pop((inner.extent.start.offset, inner.extent.end.offset), None)
            if use is not None and use in site.uses:
                site.uses.remove(use)

    def _operand(self, c, negation=False):
        """c through parentheses and the implicit conversions that are no instruction (and a
        unary minus where `negation`: -(x * y) + z fuses as x * y + z does)."""
        while True:
            kids = self._kids(c)
            if c.kind == self.K.PAREN_EXPR or (c.kind == self.K.UNEXPOSED_EXPR and len(kids) == 1
                                                and not self._converts(kids[0], c)) \
                    or (negation and c.kind == self.K.UNARY_OPERATOR and self._unary_token(c) == "-"):
                c = kids[0]
            else:
                return c

    def _sum_uses(self, operands, values, node, tok="+"):
        """The sum `node` of `operands` (their `values`; of `s += x`, x alone): a product among
        them, or a local's read of one, is a use that may fuse it; of two, the first (ranks)."""
        uses = []
        for kid, value in zip(operands, values):
            inner = self._operand(kid, negation=True)
            extent = (inner.extent.start.offset, inner.extent.end.offset)
            use = self.read_uses.get(extent) if inner.kind == self.K.DECL_REF_EXPR else None
            if use is None:
                site = next((x for x in (self.sites.get(value) if isinstance(value, _Op) else None,
                                         self._negated_site(value)) if x is not None and x.extent == extent), None)
                if site is None:
                    continue
                use = _Use(None, self.fn, None, None, 0)
                site.uses.append(use)
            use.loop, use.apart, use.fusible = self._anchor(loop_of(node)), self.apart, True
            depth = self._depth(use.loop, self.loops)   # a sum hoisted out of loops: before the outermost
            use.block = self.entries[depth] if depth < len(self.loops) else self._here()
            uses.append((use, value))
        if len(uses) == 2:
            if tok == "-":   # ptxas fuses a difference's left product
                uses[1][0].fusible = False
            else:
                self.pairs.append(([u for u, _ in uses], uses[0][1], uses[1][1], tuple(self.loops)))

    def _negated_site(self, value):
        """The product that `value`, a negation of it, negates."""
        if isinstance(value, _Op) and value.plus == 0 and len(value.operands) == 1:
            inner = value.operands[0]
            return self.sites.get(inner) if isinstance(inner, _Op) else None
        return None

    def _strip(self, c):
        while c.kind in (self.K.PAREN_EXPR, self.K.UNEXPOSED_EXPR):
            kids = self._kids(c)
            if len(kids) != 1:
                break
            c = kids[0]
        return c

    def _product(self, c):
        s = self._strip(c)
        return s.kind == self.K.BINARY_OPERATOR and self.op_kind(s) == 3

    def _holds_product(self, c, value):
        """Whether `c` reads a local that holds a product (`value` a site's)."""
        return self._operand(c).kind == self.K.DECL_REF_EXPR and isinstance(value, _Op) and value in self.sites

    def _target(self, c):
        """(local's key, lane) of an assignment's target that is a local's value, else None."""
        s = self._strip(c)
        lane = None
        if s.kind == self.K.MEMBER_REF_EXPR and not self._arrow(s):
            lane = s.spelling
            s = self._strip(next(s.get_children()))
        if s.kind == self.K.DECL_REF_EXPR and s.referenced is not None and s.referenced.hash in self.env:
            return s.referenced.hash, lane
        return None

    def _read_target(self, c):
        t = self._target(c)
        if t is None:
            return self._ev(c)
        value = self.env[t[0]]
        value = value.get(t[1]) if t[1] and isinstance(value, dict) else value
        self._consumed(value)   # (`p += c` not modelled as a use that fuses)
        return value

    def _write(self, c, value):
        t = self._target(c)
        if t is None:   # a store, after the loads its address needs
            self._address(c)
            self._effect(self._space(c))
            return value
        key, lane = t
        if lane is None:
            self.env[key] = value
        else:
            old = self.env[key]
            lanes = dict(old) if isinstance(old, dict) else {}
            lanes[lane] = value
            self.env[key] = lanes
        return value

    def _written(self, c):
        """The name an expression starts with, as the source spells it (a macro's name where
        the runtime's header defines threadIdx or __syncthreads as one)."""
        text = self.code[c.extent.start.offset:c.extent.start.offset + 64].decode(errors="replace")
        m = _NAME.match(text)
        return m.group(1) if m else ""

    def _call(self, c, kids):
        name = c.spelling
        written = self._written(c)
        ref = c.referenced
        args = [ch for ch in kids[1:]] if kids and kids[0].kind in (self.K.UNEXPOSED_EXPR, self.K.DECL_REF_EXPR,
                                                                    self.K.MEMBER_REF_EXPR) \
            and kids[0].spelling == name else kids
        if ref is not None and ref.kind == self.K.CONSTRUCTOR:
            values = [self._ev(a) for a in kids]
            if len(values) == 1:
                return values[0]
            lanes = self._lanes(c)
            return dict(zip(lanes, values)) if lanes and len(values) == len(lanes) else (0 if not values else None)
        if name.startswith("operator"):
            operands = [a for a in kids if not (self._strip(a).kind == self.K.DECL_REF_EXPR
                                                and self._strip(a).spelling == name)]
            if name == "operator=" and len(operands) == 2:
                return self._write(operands[0], self._ev(operands[1]))
            self._sequence(operands)   # their loads and effects; an operator's result is not followed
            return None
        values = [self._ev(a) for a in args]
        if name.startswith("make_") and self._lanes(c):
            return dict(zip(self._lanes(c), values))
        if name in _REINTERPRETATIONS:
            return self._op(*values)
        if written in _MATH_CALLS or written in _MATH_BRANCHING:
            if any(v is None or isinstance(v, dict) for v in values) or self._kind(c) != "FLOAT":
                return None
            if written in _MATH_BRANCHING:
                if written in _APART and not (self.fast_math and written in _FAST_MATH_STRAIGHT):
                    self.apart += 1
                self._block().joined = True
                return self._fixed()
            loops = [self._anchor(loop_of(v)) for v in values]
            loop = max(loops, key=lambda x: self._depth(x, self.loops), default=None)
            calls, after = _MATH_CALLS[written]
            for _ in range(calls):
                node = self._here().fixed(loop)
            return self._op(node, plus=after) if after else node
        if name in _LOADS:
            return self._load(c)
        if written.startswith(_EFFECTS) or name.startswith(_EFFECTS):
            return self._effect()
        body = self.definitions.get(ref.get_usr()) if ref is not None else None
        if body is None or self.depth >= _MAX_INLINE_DEPTH:
            return None
        return self._inline(body, values)

    def _inline(self, definition, values):
        """A call of a function the source defines: its body, in the caller (the inliner runs
        before the pass that ranks). A callee of several returns gives no known value."""
        fn, body = definition
        params = [a for a in fn.get_children() if a.kind == self.K.PARM_DECL]
        saved, saved_returns = self.env, self.returns
        self.env, self.returns = {p.hash: v for p, v in zip(params, values)}, []
        self.depth += 1
        self._stmt(body)
        self.depth -= 1
        value = self.returns[0] if len(self.returns) == 1 else None
        self.env, self.returns = saved, saved_returns
        return value


_INTS = {"INT", "UINT", "LONG", "ULONG", "LONGLONG", "ULONGLONG", "SHORT", "USHORT", "CHAR_S", "SCHAR",
         "CHAR_U", "UCHAR", "BOOL"}


class Contraction:
    """The fused product of each `p*q + r*s` in a translation unit's kernels (and the device
    functions they inline), computed once, when the rewriter first meets such a sum."""

    def __init__(self, ci, top, code, fast_math=False):
        self.ci, self.K, self.code = ci, ci.CursorKind, code
        self.sums = {}
        self.fused = {}   # a product's extent -> {whether its uses fuse it}, one answer per walk that met it
        self.held = {}    # a local's read (extent) -> {the extent of the product it fuses, or None}
        self._holds = None   # the products some read fuses (holds())
        definitions, kernels = {}, []
        for fn in self._functions(top):
            body = next((ch for ch in fn.get_children() if ch.kind == self.K.COMPOUND_STMT), None)
            if body is None:
                continue
            definitions[fn.get_usr()] = (fn, body)
            if "kc_global" in {a.spelling for a in fn.get_children() if a.kind == self.K.ANNOTATE_ATTR}:
                kernels.append((fn, body))
        for fn, body in kernels:
            walk = _Walk(ci, fn, code, definitions, self.sums, self._addressed(body), fast_math)
            try:
                walk.run(body)
            except (_Unsupported, RecursionError):   # RecursionError: nesting deeper than Python's stack
                for extent in self._sums_in(body):
                    self.sums.setdefault(extent, set()).add(None)
                    self.fused.setdefault(extent, set()).add(None)
                continue
            for site, fused in walk.fused_sites():
                self.fused.setdefault(site.extent, set()).add(fused)
                for use in site.uses:
                    if use.read is not None:
                        self.held.setdefault(use.read, set()).add(site.extent if fused and site.held else None)

    def fuse_right(self, c):
        """Whether nvcc fuses the right product of the sum `c` (False: the left, also where
        the model does not know)."""
        return self.decision((c.extent.start.offset, c.extent.end.offset)) is True

    def holds(self, product):
        """Whether a local holds the product at `product` (its extent) for reads that fuse it."""
        if self._holds is None:
            self._holds = {extent for seen in self.held.values() if len(seen) == 1 for extent in seen} - {None}
        return product in self._holds

    def kept_apart(self, product):
        """Whether nvcc leaves the product at `product` (its extent) unfused with the sum that
        uses it, where a product in a sum would be fused: hoisted out of a loop the sum varies
        in, or an _APART call between them (only where every walk that met it says so)."""
        return self.fused.get(product) == {False}

    def held_product(self, read):
        """The extent of the product that the local's read at `read` (its extent) holds, where
        nvcc fuses it into the sum the read is an operand of, as if written there; else None."""
        seen = self.held.get(read)
        return next(iter(seen)) if seen is not None and len(seen) == 1 else None

    def decision(self, extent):
        """True (the right product fused), False (the left) or None (not known: every call
        site of a device function must agree) for the sum at `extent` (its file offsets)."""
        seen = self.sums.get(extent, {None})
        return seen.pop() if len(seen) == 1 else None

    def _functions(self, cursors):
        """The functions the source defines (a header's are not inlined here: their results are
        unknown), looked for in the source's own top-level declarations only."""
        K, main = self.K, self.ci.conf.lib.clang_Location_isFromMainFile
        for c in cursors:
            if not main(c.location):
                continue
            if c.kind in (K.NAMESPACE, K.LINKAGE_SPEC, K.UNEXPOSED_DECL):
                yield from self._functions(c.get_children())
            elif c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and c.is_definition():
                yield c

    def _addressed(self, body):
        K, out = self.K, set()
        for n in body.walk_preorder():
            if n.kind == K.UNARY_OPERATOR:
                kids = list(n.get_children())
                at = n.extent.start.offset
                if self.code[at:at + 1] == b"&" and kids and kids[0].kind == K.DECL_REF_EXPR \
                        and kids[0].referenced is not None:
                    out.add(kids[0].referenced.hash)
        return out

    def _sums_in(self, body):
        for n in body.walk_preorder():
            if n.kind == self.K.BINARY_OPERATOR:
                yield (n.extent.start.offset, n.extent.end.offset)
