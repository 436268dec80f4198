"""Device code made to compute what nvcc's code computes: the front end's rewrites of
arithmetic whose result differs between a GPU and C++ on a CPU.

- `a*b + c`, `a*b - c`, `c + a*b`, `c - a*b`, `-(a*b) ± c`, `s += a*b` and `s -= a*b` of float or double
  become one fused multiply-add, as nvcc and NVRTC contract them by default (their
  -fmad=true; `--fmad=false` turns this off, and so does -G, which optimizes nothing). When
  both operands of a sum are products, the one nvcc fuses is: its optimizer orders the sum's
  operands by rank and fuses the first product (ranks.py); where the rank model cannot follow
  the code, the left one. Of a difference, which ptxas fuses, the left one. A product nvcc
  computes once for a use it cannot fuse (the same operands multiplied elsewhere in the
  function) is fused nowhere (shared_products.py); one hoisted out of a loop its sum varies
  in, or with a call nvcc keeps it apart by between, neither (ranks.py). A product held in a
  local (`float p = a*b;`) is fused into the sums that read it where nvcc fuses it (ranks.py):
  it becomes `::kc::hold_mul_{kc_held_N, a, b}()`, which keeps a and b in kc_held_N (declared
  at the top of the function), and each such read `p` the operands `kc_held_N.kc_a ,
  kc_held_N.kc_b` of the multiply-add written in its place.
- A conversion of a floating value to an integer type (a cast, an assignment, an argument)
  saturates, as PTX's cvt.rzi does, where x86 gives INT_MIN.
- `a << n` and `a >> n` clamp the amount, as PTX's shl and shr do: shifting by the width or
  more gives 0 (or -1), where x86 shifts by the amount modulo the width.
- A call of `expf`, `exp2f`, `exp10f`, `expm1f`, `tanhf`, `logf`, `log1pf`, `sinf`, `cosf`, `sincosf`,
  `tanf`, `sinpif`, `cospif`, `sincospif`, `erff`, `erfcf`, `normcdff`, `atanf`, `atan2f`, `asinf`, `acosf`,
  `sinhf`, `coshf`, `hypotf`, `rsqrtf`, `rnorm3df`, `__expf` or `__exp10f` (or `exp`,
  `sin`, `sincos`, ... of a float), and of `log2f`, `log10f`, `cbrtf`, `powf` or `sqrtf`, calls the GPU's version in
  cpu/src/kc_gpu_math.h: their results there (the special-function unit's, or CUDA's own
  reductions and polynomials) are not the C library's.

Each rewrite is a call of a helper in cpu/src/kc_gpu_arith.h, spelled with point
insertions and single-token replacements so that every line keeps its number and nested
rewrites compose: `a*b + c` becomes `::kc::mad_{a , b, c}()`. Template code is rewritten too:
the helpers act only where the operands turn out to be floating (or integer) values.
Expressions that a macro's body spells are left alone: their text is not in the source. A call
written in a macro's arguments (`CHECK(expf(x))`) is renamed all the same.
"""
from dataclasses import dataclass, field

from .libclang import main_file, spelled_offset
from .ranks import Contraction
from .shared_products import SharedProducts, through_conversions

# libclang's CXBinaryOperatorKind
_MUL, _DIV, _ADD, _SUB, _SHL, _SHR = 3, 4, 6, 7, 8, 9
_MUL_ASSIGN, _DIV_ASSIGN, _ADD_ASSIGN, _SUB_ASSIGN, _SHL_ASSIGN, _SHR_ASSIGN = 23, 24, 26, 27, 28, 29

_FLOAT = {"FLOAT", "DOUBLE"}
_INTEGER = {"INT", "UINT", "LONG", "ULONG", "LONGLONG", "ULONGLONG", "SHORT", "USHORT", "CHAR_S", "SCHAR",
            "CHAR_U", "UCHAR", "CHAR16", "CHAR32", "WCHAR"}
_UNKNOWN = {"DEPENDENT", "UNEXPOSED"}   # inside a template: decided by the helper when instantiated


def fmad_enabled(options):
    """nvcc's and NVRTC's -fmad: on unless an option turns it off. -G (--device-debug) turns it off
    too, unless -dopt asks for optimized device code: NVVM then emits each product and sum as
    its own mul.f32 and add.f32, and ptxas, optimizing nothing, leaves them apart (Rodinia's
    hotspot3D, built -G, computes so on an H200)."""
    flat = [o.replace("--", "-") for o in options]
    debug = any(o in ("-G", "-device-debug") for o in flat) and not any(
        o in ("-dopt=on", "-dopt") or o.startswith("-dopt=on") for o in flat)
    return not debug and not any(o in ("-fmad=false", "-fmad=0") for o in flat)


def _arguments_start(code, macro):
    """The offset of the `(` that opens a function-like macro's arguments (its end: none)."""
    start, end = macro.extent.start.offset, macro.extent.end.offset
    at = start + len(macro.spelling.encode())
    while at < end and code[at:at + 1].isspace():
        at += 1
    return at if code[at:at + 1] == b"(" else end


@dataclass
class _Edits:
    macros: list                                   # (start, end, arguments' start) offsets of macro expansions
    prefixes: dict = field(default_factory=dict)   # offset -> [text], outermost first
    other: list = field(default_factory=list)      # (start, end, text)

    def safe(self, *offsets):
        return all(not (lo < o < hi) for o in offsets for lo, hi, _ in self.macros)

    def in_arguments(self, start, end):
        """Whether [start, end) lies outside every macro expansion or within the arguments of one
        (text of the source that the macro's body places: a rename there renames what the
        expansion calls, wherever and however often the body uses it)."""
        return all(not (lo < start < hi) or args < start <= end < hi for lo, hi, args in self.macros)

    def rename(self, start, end, text):
        if (start, end, text) not in self.other:   # an argument the body uses twice: one edit
            self.other.append((start, end, text))

    def result(self):
        return self.other + [(o, o, "".join(texts)) for o, texts in self.prefixes.items()]


class Rewriter:
    """The rewrites of one translation unit's device functions (frontend.Reader calls
    function() for each)."""

    def __init__(self, ci, tu, top, code, fmad=True, fast_math=False):
        self.ci, self.K, self.code, self.fmad, self.fast_math = ci, ci.CursorKind, code, fmad, fast_math
        self.math = {**_GPU_MATH, **_FAST_MATH} if fast_math else _GPU_MATH
        self.op_kind = ci.conf.lib.clang_getCursorBinaryOperatorKind
        macros = [(c.extent.start.offset, c.extent.end.offset, _arguments_start(code, c))
                  for c in top if c.kind == self.K.MACRO_INSTANTIATION]   # the source's top-level cursors
        self.edits = _Edits(macros)
        self.top, self._contraction = top, None
        self._unfused = set()            # this function's products nvcc leaves unfused (shared_products.py)
        self._summed_quotients = set()   # the quotients _quotient_sum rewrote, by their extents
        self._renamed_calls = set()      # calls whose callee a rewrite of their parent renamed, by extents
        self._holders = {}               # a held product's extent -> (its holder's name, "*" or "/")
        self._body = None                # the offset just inside the function's body, for holders
        self.main_file = tu.spelling
        self._main_ptr = main_file(ci, tu)

    def result(self):
        """The edits of every function() so far, as frontend.Program.edits holds them."""
        return self.edits.result()

    def function(self, fn):
        self._unfused = SharedProducts(self.ci, fn, self.op_kind, self.fast_math).unfused if self.fmad else set()
        body = next((ch for ch in fn.get_children() if ch.kind == self.K.COMPOUND_STMT), None)
        self._body = body.extent.start.offset + 1 if body is not None else None
        stack = [fn]
        while stack:
            c = stack.pop()
            k = c.kind
            if k == self.K.BINARY_OPERATOR:
                self._binary(c)
            elif k == self.K.COMPOUND_ASSIGNMENT_OPERATOR:
                self._compound(c)
            elif k == self.K.UNEXPOSED_EXPR:
                self._implicit_conversion(c)
            elif k in (self.K.CSTYLE_CAST_EXPR, self.K.CXX_STATIC_CAST_EXPR, self.K.CXX_FUNCTIONAL_CAST_EXPR):
                self._dependent_cast(c)
            elif k == self.K.CALL_EXPR:
                self._math_call(c)
            stack.extend(reversed(list(c.get_children())))

    # -- helpers --
    @staticmethod
    def _kind(c):
        return c.type.get_canonical().kind.name

    def _strip(self, c):
        """c without its parentheses and the implicit casts that change nothing (an lvalue
        read): the parenthesised expressions stripped, for their tokens to be dropped."""
        parens = []
        while True:
            if c.kind == self.K.PAREN_EXPR:
                parens.append(c)
            elif not (c.kind == self.K.UNEXPOSED_EXPR
                      and c.type.get_canonical().spelling == _only_child_type(c)):
                return c, parens
            kids = list(c.get_children())
            if len(kids) != 1:
                return c, parens
            c = kids[0]

    def _between(self, lhs, rhs):
        """The source text between two operands: their operator, as written."""
        return self.code[lhs.extent.end.offset:rhs.extent.start.offset].decode(errors="replace").strip()

    def _operands(self, c):
        kids = list(c.get_children())
        return kids if len(kids) == 2 else None

    def _product(self, c):
        """(product, parens, its operands' edits) if c is a product a*b, seen through parentheses,
        that nvcc fuses with a sum c is an operand of; the edits make `a , b` of it (for a local
        that holds one, `kc_held_N.kc_a , kc_held_N.kc_b`)."""
        inner, parens = self._strip(c)
        if inner.kind == self.K.DECL_REF_EXPR:
            return self._held(inner, parens, "*")
        if inner.kind != self.K.BINARY_OPERATOR or self.op_kind(inner) != _MUL or self._span(inner) in self._unfused:
            return None   # (a product nvcc computes once for a use it cannot fuse: shared_products.py)
        ops = self._operands(inner)
        if ops is None or self._between(*ops) != "*" or self._walked().kept_apart(self._span(inner)):
            return None
        return inner, parens, [self._token(*ops, ",")]

    def _held(self, read, parens, op):
        """(read, parens, edits) where the local's read is of a product (op "*") or a quotient
        ("/") that a holder holds (_hold) and nvcc fuses into the sum it is an operand of."""
        holder = self._holders.get(self._walked().held_product(self._span(read)))
        if holder is None or holder[1] != op:
            return None
        return read, parens, [(*self._span(read), f"{holder[0]}.kc_a , {holder[0]}.kc_b")]

    def _walked(self):
        """The unit's model of what nvcc fuses (ranks.py), built the first time it is asked."""
        if self._contraction is None:
            self._contraction = Contraction(self.ci, self.top, self.code, self.fast_math)
        return self._contraction

    def _hold(self, c, op, helper):
        """`x * y` (op "*"; under --use_fast_math also `x / y`, "/"), or `p *= y` and `p /= y`,
        whose value a local holds and every read of it nvcc fuses into a sum (ranks.py): as
        `::kc::hold_mul_{kc_held_N, x, y}()`, which keeps the operands in kc_held_N, declared at
        the top of the function, for those reads. Whether it was rewritten."""
        ops = self._operands(c)
        span = self._span(c)
        if ops is None or self._body is None or self._kind(c) not in _FLOAT or span in self._unfused \
                or not self._walked().holds(span) or not self.edits.safe(self._body):
            return False
        name = f"kc_held_{span[0]}"
        if not self._apply(ops[0].extent.start.offset, f"::kc::{helper}(", [self._token(*ops, ",")],
                           ops[1].extent.end.offset, first=f"{name}, "):
            return False
        declaration = f"::kc::held_product<{c.type.get_canonical().spelling}> {name}; "
        self.edits.prefixes.setdefault(self._body, []).insert(0, declaration)   # before what starts there
        self._holders[span] = (name, op)
        return True

    def _negated_product(self, c):
        """(minus offset, product, parens, edits) if c is -(a*b) or -a*b's negation of a
        product, seen through parentheses: nvcc contracts -(a*b) + c too."""
        inner, _ = self._strip(c)
        if inner.kind != self.K.UNARY_OPERATOR:
            return None
        at = inner.extent.start.offset
        if self.code[at:at + 1] != b"-" or self.code[at + 1:at + 2] in (b"-", b"="):
            return None
        kids = list(inner.get_children())
        product = self._product(kids[0]) if len(kids) == 1 else None
        return None if product is None else (at, *product)

    def _in_main(self, *cursors):
        return all(x.extent.start.file is not None and x.extent.end.file is not None
                   and x.extent.start.offset < x.extent.end.offset for x in cursors)

    def _apply(self, prefix_at, prefix, replacements, suffix_at, first=""):
        """One rewrite: `prefix` inserted at prefix_at, each (start, end, text) replacement,
        and the closing text at suffix_at; nothing if any of it falls inside a macro's
        expansion. A helper of several operands is called as `::kc::mad_{a, b, c}()` (a
        braced list, evaluated left to right as the source reads); one of one operand as
        `::kc::cvt<int>(x)`. first: an operand put before the source's (a holder's name)."""
        points = [prefix_at, suffix_at] + [p for s, e, _ in replacements for p in (s, e)]
        if not self.edits.safe(*points):
            return False
        ordered = prefix.endswith("(") and not prefix.startswith("::kc::cvt")
        self.edits.prefixes.setdefault(prefix_at, []).append((prefix[:-1] + "_{" if ordered else prefix) + first)
        self.edits.other.extend(replacements)
        self.edits.other.append((suffix_at, suffix_at, "}()" if ordered else ")"))
        return True

    def _token(self, lhs, rhs, text):
        """The replacement of the operator between lhs and rhs by `text`."""
        start, end = lhs.extent.end.offset, rhs.extent.start.offset
        raw = self.code[start:end]
        at = start + (len(raw) - len(raw.lstrip()))
        op = raw.strip()
        return at, at + len(op), text

    def _drop_parens(self, parens):
        return [e for p in parens for e in ((p.extent.start.offset, p.extent.start.offset + 1, ""),
                                            (p.extent.end.offset - 1, p.extent.end.offset, ""))]

    # -- the rewrites --
    def _binary(self, c):
        op = self.op_kind(c)
        ops = self._operands(c)
        if ops is None or not self._in_main(c, *ops):
            return
        lhs, rhs = ops
        if op in (_ADD, _SUB) and self.fmad and self._kind(c) in _FLOAT | _UNKNOWN:
            if self._between(lhs, rhs) not in ("+", "-"):
                return
            left = self._product(lhs)
            if left is not None and not (op == _ADD and self._right_fused(c, rhs)):
                _, parens, joined = left
                self._apply(lhs.extent.start.offset, "::kc::mad(" if op == _ADD else "::kc::msub(",
                            self._drop_parens(parens) + joined + [self._token(lhs, rhs, ",")],
                            rhs.extent.end.offset)
                return
            negated = self._negated_product(lhs)
            if negated is not None and self._strip(lhs)[0].extent.start.offset == lhs.extent.start.offset:
                minus, _, parens, joined = negated
                self._apply(lhs.extent.start.offset, "::kc::neg_mad(" if op == _ADD else "::kc::neg_msub(",
                            [(minus, minus + 1, "")] + self._drop_parens(parens)
                            + joined + [self._token(lhs, rhs, ",")], rhs.extent.end.offset)
                return
            right = self._product(rhs)
            if op == _SUB and self.fast_math and self._quotient(lhs) is not None:
                self._quotient_sum(op, lhs, rhs)   # ptxas fuses a difference's left operand: a/b - c*d too
            elif right is not None:
                self._fuse_right(lhs, rhs, right, "::kc::add_mul(" if op == _ADD else "::kc::sub_mul(")
            elif self.fast_math:
                self._quotient_sum(op, lhs, rhs)
        elif op in (_SHL, _SHR) and self._shiftable(lhs, rhs):
            self._shift(lhs, rhs, ("<<", ">>"), "::kc::shl(" if op == _SHL else "::kc::shr(")
        elif op == _MUL and self.fmad and self._between(lhs, rhs) == "*":
            self._hold(c, "*", "hold_mul")
        elif op == _DIV and self.fast_math and self._kind(c) in {"FLOAT"} | _UNKNOWN \
                and self._between(lhs, rhs) == "/" and self._span(c) not in self._summed_quotients \
                and not self._reciprocal_root(lhs, rhs) and not (self.fmad and self._hold(c, "/", "hold_div")):
            self._apply(lhs.extent.start.offset, "::kc::fast_div(", [self._token(lhs, rhs, ",")], rhs.extent.end.offset)

    def _quotient(self, c):
        """(quotient, parens, its operands' edits) if c is a float quotient a/b, seen through
        parentheses (or a local's read of one, as _product)."""
        inner, parens = self._strip(c)
        if inner.kind == self.K.DECL_REF_EXPR:
            return self._held(inner, parens, "/")
        if inner.kind != self.K.BINARY_OPERATOR or self.op_kind(inner) != _DIV \
                or self._kind(inner) not in {"FLOAT"} | _UNKNOWN or self._span(inner) in self._unfused:
            return None
        ops = self._operands(inner)
        if ops is None or self._between(*ops) != "/" or self._root_of_reciprocal(*ops) is not None \
                or self._walked().kept_apart(self._span(inner)):
            return None
        return inner, parens, [self._token(*ops, ",")]

    def _root_of_reciprocal(self, lhs, rhs):
        """--use_fast_math's `1 / sqrtf(x)` (1 a literal, the quotient a float): the sqrtf call (its
        callee's text (start, end) and the call), or None. nvcc computes it as one
        rsqrt.approx.ftz of x, where any other quotient of a square root is div.approx of
        sqrt.approx (PTX of nvcc 13.0)."""
        call, _ = self._strip(rhs)
        if call.kind != self.K.CALL_EXPR or call.spelling not in ("sqrtf", "sqrt") or self._kind(call) != "FLOAT" \
                or not self._is_one(lhs):
            return None
        callee = self._library_callee(call)
        return None if callee is None else (callee, call)

    def _reciprocal_root(self, lhs, rhs):
        """`1 / sqrtf(x)` as `::kc::gpu_fast_rsqrtf(x)`: the `1 /` dropped, the callee renamed.
        Whether it was rewritten."""
        found = self._root_of_reciprocal(lhs, rhs)
        if found is None or not self.edits.safe(lhs.extent.start.offset, rhs.extent.start.offset, *found[0]):
            return False
        self.edits.other.append((lhs.extent.start.offset, rhs.extent.start.offset, ""))
        self.edits.rename(*found[0], "::kc::gpu_fast_rsqrtf")
        self._renamed_calls.add(self._span(found[1]))
        return True

    def _is_one(self, c):
        """Whether c is the literal 1 (`1`, `1.0f`, `1.`, `0x1p0f`), through parentheses and conversions."""
        c = through_conversions(self.K, c)
        text = self.code[c.extent.start.offset:c.extent.end.offset].decode(errors="replace")
        try:
            if c.kind == self.K.INTEGER_LITERAL:
                return int(text.rstrip("uUlL"), 0) == 1
            if c.kind == self.K.FLOATING_LITERAL:
                text = text.rstrip("fFlL")
                return (float.fromhex(text) if text[:2].lower() == "0x" else float(text)) == 1.0
        except ValueError:
            pass
        return False

    @staticmethod
    def _span(c):
        return c.extent.start.offset, c.extent.end.offset

    def _quotient_sum(self, op, lhs, rhs):
        """--use_fast_math's `a/b ± c` and `c ± a/b`, as ptxas fuses the quotient's multiply by
        the reciprocal with the sum (kc_gpu_math.h's quotient_sum); the quotient, rewritten here,
        is not rewritten again as a division of its own."""
        left, right = self._quotient(lhs), self._quotient(rhs)
        if left is not None:
            quotient, parens, joined = left
            done = self._apply(lhs.extent.start.offset, "::kc::quotient_add(" if op == _ADD else "::kc::quotient_sub(",
                               self._drop_parens(parens) + joined + [self._token(lhs, rhs, ",")],
                               rhs.extent.end.offset)
        elif right is not None:
            quotient, parens, joined = right
            done = self._apply(lhs.extent.start.offset, "::kc::add_quotient(" if op == _ADD else "::kc::sub_quotient(",
                               [self._token(lhs, rhs, ",")] + self._drop_parens(parens) + joined,
                               rhs.extent.end.offset)
        else:
            return
        if done:
            self._summed_quotients.add(self._span(quotient))

    def _quotient_sum_to(self, op, lhs, rhs):
        """--use_fast_math's `s += a/b` and `s -= a/b`: `s ± a/b` fused as _quotient_sum fuses it."""
        right = self._quotient(rhs)
        if right is None:
            return
        quotient, parens, joined = right
        helper = "::kc::add_quotient_to(" if op == _ADD_ASSIGN else "::kc::sub_quotient_to("
        if self._apply(lhs.extent.start.offset, helper,
                       [self._token(lhs, rhs, ",")] + self._drop_parens(parens) + joined,
                       rhs.extent.end.offset):
            self._summed_quotients.add(self._span(quotient))

    def _right_fused(self, c, rhs):
        """Whether, of `p*q + r*s`, nvcc fuses r*s: the optimizer orders the sum's operands by
        rank (ranks.py), built for the whole unit the first time such a sum is met."""
        if self._product(rhs) is None:
            return False
        return self._walked().fuse_right(c)

    def _compound(self, c):
        op = self.op_kind(c)
        ops = self._operands(c)
        if ops is None or not self._in_main(c, *ops) or self._bitfield(ops[0]):
            return
        lhs, rhs = ops
        if op in (_ADD_ASSIGN, _SUB_ASSIGN) and self.fmad and self._kind(c) in _FLOAT | _INTEGER | _UNKNOWN:
            if self._between(lhs, rhs) not in ("+=", "-="):
                return
            right = self._product(rhs)
            if right is not None and self._kind(right[0]) in _FLOAT | _UNKNOWN:
                self._fuse_right(lhs, rhs, right, "::kc::add_mul_to(" if op == _ADD_ASSIGN else "::kc::sub_mul_to(")
            elif right is None and self.fast_math:
                self._quotient_sum_to(op, lhs, rhs)
        elif op in (_SHL_ASSIGN, _SHR_ASSIGN) and self._shiftable(lhs, rhs):
            self._shift(lhs, rhs, ("<<=", ">>="), "::kc::shl_to(" if op == _SHL_ASSIGN else "::kc::shr_to(")
        elif op == _MUL_ASSIGN and self.fmad and self._between(lhs, rhs) == "*=":
            self._hold(c, "*", "hold_mul_to")
        elif op == _DIV_ASSIGN and self.fast_math and self._kind(lhs) in {"FLOAT"} | _UNKNOWN \
                and self._between(lhs, rhs) == "/=" and not (self.fmad and self._hold(c, "/", "hold_div_to")):
            self._apply(lhs.extent.start.offset, "::kc::fast_div_to(", [self._token(lhs, rhs, ",")],
                        rhs.extent.end.offset)

    def _fuse_right(self, lhs, rhs, right, helper):
        """`lhs op a*b` (op: + - += -=), right = _product(rhs), as helper(lhs, a, b)."""
        _, parens, joined = right
        self._apply(lhs.extent.start.offset, helper, [self._token(lhs, rhs, ",")] + self._drop_parens(parens) + joined,
                    rhs.extent.end.offset)

    def _shift(self, lhs, rhs, spelled, helper):
        """`lhs << n` and the like, the operator spelled one of `spelled`, as helper(lhs, n)."""
        if self._between(lhs, rhs) in spelled:
            self._apply(lhs.extent.start.offset, helper, [self._token(lhs, rhs, ",")], rhs.extent.end.offset)

    def _math_call(self, c):
        """A call of the C library's (or CUDA's) expf, tanhf, sinf, rsqrtf, __expf, ... (self.math) on
        floats: its callee, as written (`expf`, `std::exp`, `::tanhf`), becomes the GPU's version. A
        function that returns nothing (sincos) counts where the overload called takes a float."""
        if self._kind(c) not in ("FLOAT", "VOID") or c.spelling not in self.math:
            return
        if self._kind(c) == "VOID" and not self._takes_float(c):
            return   # sincos(double, double*, double*)
        if self._span(c) in self._renamed_calls:
            return   # renamed already: `1 / sqrtf(x)` (_reciprocal_root)
        callee = self._library_callee(c)
        if callee is not None:
            self.edits.rename(*callee, self.math[c.spelling])

    def _library_callee(self, c):
        """The text (start, end) of the callee of the call c when it calls the library's function
        of c's name as written in the source (`expf`, `std::exp`, `::tanhf`, in a macro's
        arguments too), else None."""
        kids = list(c.get_children())
        ref = kids[0] if kids else None   # the callee, through its decay to a pointer and parentheses
        while ref is not None and ref.kind in (self.K.UNEXPOSED_EXPR, self.K.PAREN_EXPR):
            inner = list(ref.get_children())
            ref = inner[0] if len(inner) == 1 else None
        if ref is None or ref.kind != self.K.DECL_REF_EXPR:
            return None
        decl = ref.referenced
        if decl is None or decl.spelling != c.spelling or decl.location.file is None \
                or decl.location.file.name == self.main_file:
            return None   # a function of the source's own
        # where the callee's text is: in a macro's arguments, its spelling, not the expansion's place
        start, end = (spelled_offset(self.ci, x, self._main_ptr) for x in (ref.extent.start, ref.extent.end))
        written = self.code[start:end].decode(errors="replace").replace(" ", "")
        if written.split("::")[-1] != c.spelling or not self.edits.in_arguments(start, end):
            return None   # spelled by a macro's body: its text is not here
        return start, end

    def _takes_float(self, c):
        args = list(c.get_arguments())
        return bool(args) and self._kind(args[0]) == "FLOAT"

    def _shiftable(self, lhs, rhs):
        """Both operands integers (or unknown, in a template), and the amount not a literal:
        a literal amount below the width shifts alike everywhere."""
        kinds = {self._kind(lhs), self._kind(rhs)}
        if not kinds <= _INTEGER | {"BOOL"} | _UNKNOWN:
            return False
        amount, _ = self._strip(rhs)
        return amount.kind != self.K.INTEGER_LITERAL

    def _bitfield(self, c):
        inner, _ = self._strip(c)
        ref = inner.referenced if inner.kind == self.K.MEMBER_REF_EXPR else None
        return ref is not None and ref.kind == self.K.FIELD_DECL and ref.is_bitfield()

    def _implicit_conversion(self, c):
        """An implicit (or a cast's) conversion of a float or double to an integer type."""
        if self._kind(c) not in _INTEGER:
            return
        kids = list(c.get_children())
        if len(kids) != 1 or self._kind(kids[0]) not in _FLOAT or not self._in_main(kids[0]):
            return
        x = kids[0]
        self._apply(x.extent.start.offset, f"::kc::cvt<{c.type.get_canonical().spelling}>(", [], x.extent.end.offset)

    def _dependent_cast(self, c):
        """(int)x in a template, x of a type not known until instantiation."""
        if self._kind(c) not in _INTEGER:
            return
        kids = [k for k in c.get_children() if k.kind.is_expression()]
        if not kids or self._kind(kids[-1]) not in _UNKNOWN or not self._in_main(kids[-1]):
            return
        x = kids[-1]
        self._apply(x.extent.start.offset, f"::kc::cvt<{c.type.get_canonical().spelling}>(", [], x.extent.end.offset)


# The functions whose GPU results the C library does not give, rebuilt in kc_gpu_math.h as
# kc::gpu_<name>; a call's spelling is the function's name, or its overload's for a float
# argument (the name less its final f: exp, sin, normcdf, ...).
_REBUILT = ("expf", "exp2f", "exp10f", "expm1f", "tanhf", "logf", "log1pf", "log2f", "log10f", "sinf", "cosf",
            "sincosf", "tanf", "sinpif", "cospif", "sincospif", "erff", "erfcf", "normcdff", "atanf", "atan2f",
            "asinf", "acosf", "sinhf", "coshf", "hypotf", "rsqrtf", "cbrtf", "powf", "sqrtf")


def _with_overloads(pairs):
    """{spelling: replacement} for each (name, replacement) and its float overload's name."""
    return {spelling: to for name, to in pairs for spelling in (name, name[:-1])}


_GPU_MATH = {**_with_overloads((name, f"::kc::gpu_{name}") for name in _REBUILT),
             "rnorm3df": "::kc::gpu_rnorm3df", "__expf": "::kc::gpu_fast_expf", "__exp10f": "::kc::gpu_fast_exp10f"}
# --use_fast_math: what nvcc and NVRTC compile these (and their overloads for a float: exp,
# exp2, sin, ...) to instead (their PTX: ex2.approx.ftz of x * log2(e), of x * log2(10) and of x,
# sin.approx.ftz, cos.approx.ftz, and for tanf their quotient by div.approx.ftz: __tanf). expm1f,
# sinpif, cospif, sincospif, erff, erfcf, normcdff, atanf, atan2f, asinf, acosf, sinhf, coshf and
# cbrtf stay their precise versions, flushed as -ftz=true flushes them; hypotf's sqrt.rn becomes
# sqrt.approx.ftz, kept precise here. logf, log2f and log10f are __logf, __log2f and __log10f
# (lg2.approx.ftz), powf is __powf (ex2.approx.ftz of y times lg2.approx.ftz); division of floats
# is div.approx.ftz (`::kc::fast_div`); sqrtf is sqrt.approx.ftz, and `1 / sqrtf(x)` one
# rsqrt.approx.ftz (`_reciprocal_root`). tanhf (tanh.approx) keeps its precise version here: that
# approximation is not the GPU's yet.
_FAST_MATH = _with_overloads([*((name, f"::kc::gpu_fast_{name}") for name in ("expf", "exp2f", "exp10f", "sqrtf")),
                               *((name, f"::__{name}") for name in ("sinf", "cosf", "sincosf", "tanf", "logf",
                                                                     "log2f", "log10f", "powf"))])


def _only_child_type(c):
    kids = list(c.get_children())
    return kids[0].type.get_canonical().spelling if len(kids) == 1 else None
