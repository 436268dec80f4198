"""Products nvcc computes once and so fuses with no sum: the front end's model of how common
subexpressions limit contraction.

nvcc's optimizer merges a product written twice in one function, `x * y` and `y * x` alike,
into one value (common subexpression elimination; hoisting out of an `if`, or out of both its
arms where both begin with it). NVVM then
fuses that value with a sum, and ptxas with a difference, only where every use of it is a sum
or a difference: the machine code of nvcc 13.0 (cuobjdump of sm_90) shows `c + x * y` as an
FFMA beside another `c2 - x * y`, but as an FMUL and an FADD beside `d / (x * y)`, `d * (x * y)`,
a store of `x * y` or `x * 0.5f` (logs/2026-12-07-cse-contraction.md). NVIDIA's BlackScholes
computes `d2 = d1 - V * sqrtT` so, `V * sqrtT` being its `d1`'s divisor too.

This module finds such products: the same two operands (variables, parameters or literals),
multiplied in several places of one function with no assignment to either operand between
them, where at least one place uses the product otherwise than as an operand of a sum or
difference; a local variable that holds a product (`float p = x * y;`) uses it as its reads do.
Under --use_fast_math a float quotient (a multiply by a reciprocal there) is one too. The rewriter
(arith.py) leaves every one of them unfused. Two arms of one `if` that do not both
begin with the product keep it apart on a GPU, each arm fused on its own; they count as merged
here.
"""
from collections import defaultdict

_MUL, _DIV, _ADD, _SUB = 3, 4, 6, 7
_ASSIGNMENTS = {22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}   # =, *=, /=, %=, +=, -=, <<=, >>=, &=, ^=, |=
_ASSIGN, _ADD_ASSIGN, _SUB_ASSIGN = 22, 26, 27
_FLOAT = {"FLOAT", "DOUBLE"}


def through_conversions(K, c):
    """c through parentheses and implicit conversions (K: libclang's CursorKind)."""
    while c.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR):
        kids = list(c.get_children())
        if len(kids) != 1:
            return c
        c = kids[0]
    return c


class SharedProducts:
    """The products of one function (a cursor) that nvcc leaves unfused, by their extents:
    `unfused`, a set of (start, end) offsets."""

    def __init__(self, ci, fn, op_kind, quotients=False):
        """quotients: --use_fast_math, where a float quotient is a multiply by a reciprocal that
        ptxas fuses as it fuses a product, and merges as it merges one."""
        self.K, self.op_kind = ci.CursorKind, op_kind
        self.ops = {_MUL: "*", _DIV: "/"} if quotients else {_MUL: "*"}
        self.places = defaultdict(list)   # operand key -> [(product, how it is used: _use)]
        self.writes = defaultdict(list)   # variable (its declaration's hash) -> offsets written
        self.uses = defaultdict(list)     # variable -> for each read of it, whether a sum's operand
        self._walk(fn)
        self.unfused = set()
        for key, places in self.places.items():
            places = [(product, self._resolved(use)) for product, use in places]
            for product, fusible in places:
                if fusible and any(self._merged(product, other, key) for other, other_fusible in places
                                   if not other_fusible):
                    self.unfused.add((product.extent.start.offset, product.extent.end.offset))

    def _walk(self, fn):
        # (cursor, the nearest enclosing cursor that is not parentheses, an implicit conversion or
        # a negation, and its child on the way down)
        stack = [(fn, None, None)]
        while stack:
            c, parent, child = stack.pop()
            k = c.kind
            if k == self.K.BINARY_OPERATOR and self.op_kind(c) in self.ops \
                    and c.type.get_canonical().kind.name in (_FLOAT if self.op_kind(c) == _MUL else {"FLOAT"}):
                key = self._key(c, self.ops[self.op_kind(c)])
                if key is not None:
                    self.places[key].append((c, self._use(parent, child)))
            elif k == self.K.DECL_REF_EXPR and c.referenced is not None and c.referenced.kind == self.K.VAR_DECL \
                    and not self._assigned(parent, child):
                self.uses[c.referenced.hash].append(self._fusible(parent, child))
            if k in (self.K.BINARY_OPERATOR, self.K.COMPOUND_ASSIGNMENT_OPERATOR) \
                    and self.op_kind(c) in _ASSIGNMENTS:
                self._written(next(c.get_children(), None))
            elif k == self.K.UNARY_OPERATOR and self._changes(c):
                self._written(next(c.get_children(), None))
            see_through = k in (self.K.PAREN_EXPR, self.K.UNEXPOSED_EXPR) or (k == self.K.UNARY_OPERATOR and
                                                                            self._negation(c))
            for kid in c.get_children():
                stack.append((kid, parent, child) if see_through else (kid, c, kid))

    def _strip(self, c):
        return through_conversions(self.K, c)

    def _operand_key(self, c):
        c = self._strip(c)
        if c.kind == self.K.DECL_REF_EXPR and c.referenced is not None \
                and c.referenced.kind in (self.K.VAR_DECL, self.K.PARM_DECL):
            return ("variable", c.referenced.hash)
        if c.kind in (self.K.FLOATING_LITERAL, self.K.INTEGER_LITERAL):
            return ("literal", " ".join(t.spelling for t in c.get_tokens()))
        return None

    def _key(self, product, op):
        """The operator and the two operands (a product's in either order); None unless both are
        variables, parameters or literals."""
        ops = [k for k in product.get_children() if k.kind.is_expression()]
        if len(ops) != 2:
            return None
        keys = [self._operand_key(o) for o in ops]
        if None in keys:
            return None
        return (op, *(sorted(keys) if op == "*" else keys))

    def _use(self, parent, child):
        """How a product is used: True (a sum's operand), False (otherwise), or ("variable", hash)
        where it is a local variable's value (`float p = x * y;`, `p = x * y;`), whose reads decide."""
        if parent is not None and parent.kind == self.K.VAR_DECL:
            return ("variable", parent.hash)
        if self._assigned_value(parent, child):
            target = self._strip(next(parent.get_children()))
            if target.kind == self.K.DECL_REF_EXPR and target.referenced is not None:
                return ("variable", target.referenced.hash)
        return self._fusible(parent, child)

    def _resolved(self, use):
        """A use as True or False: a variable's value is fused where every read of it is a sum's operand."""
        if isinstance(use, tuple):
            reads = self.uses[use[1]]
            return bool(reads) and all(reads)
        return use

    def _assigned(self, parent, child):
        """Whether child is the target of the assignment parent."""
        return parent is not None and parent.kind in (self.K.BINARY_OPERATOR, self.K.COMPOUND_ASSIGNMENT_OPERATOR) \
            and self.op_kind(parent) in _ASSIGNMENTS and next(parent.get_children(), None) == child

    def _assigned_value(self, parent, child):
        """Whether child is the value of the plain assignment parent (`p = child`)."""
        return parent is not None and parent.kind == self.K.BINARY_OPERATOR and self.op_kind(parent) == _ASSIGN \
            and list(parent.get_children())[-1] == child

    def _fusible(self, parent, child):
        """Whether `child` (a product, through parentheses) is an operand of the sum or difference
        `parent` (of `s += ...`, the right one): the uses nvcc may fuse it into."""
        if parent is None:
            return False
        if parent.kind == self.K.BINARY_OPERATOR:
            return self.op_kind(parent) in (_ADD, _SUB)
        if parent.kind == self.K.COMPOUND_ASSIGNMENT_OPERATOR and self.op_kind(parent) in (_ADD_ASSIGN, _SUB_ASSIGN):
            return list(parent.get_children())[-1] == child
        return False

    def _written(self, target):
        target = self._strip(target) if target is not None else None
        if target is not None and target.kind == self.K.DECL_REF_EXPR and target.referenced is not None:
            self.writes[target.referenced.hash].append(target.extent.start.offset)

    def _negation(self, c):
        """A unary minus: -(x * y) + c is fused as x * y + c is."""
        tokens = [t.spelling for t in c.get_tokens()]
        return bool(tokens) and tokens[0] == "-"

    def _changes(self, c):
        """A unary ++, -- or & (whose operand may be written through the address)."""
        tokens = [t.spelling for t in c.get_tokens()]
        return bool(tokens) and (tokens[0] in ("++", "--", "&") or tokens[-1] in ("++", "--"))

    def _merged(self, a, b, key):
        """Whether nvcc computes the products a and b as one value: no operand written between them."""
        lo, hi = sorted((a.extent.start.offset, b.extent.start.offset))
        variables = [v for kind, v in key[1:] if kind == "variable"]
        return not any(lo <= w <= hi for v in variables for w in self.writes[v])
