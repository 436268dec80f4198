"""CUDA C as the token stream that the similarity report compares (tiling_course.grading.similarity):
comments and layout gone, every name a student chooses read as `ID` and every literal as
`NUM` or `STR`, so that renaming a variable, changing a `#define`'s value, re-indenting or
re-commenting a kernel leaves its stream as it was. What carries the kernel's structure
and cannot be renamed stays: keywords, operators, preprocessor directives (`#define`,
`#ifndef`), and CUDA's built-in variables and barriers (`threadIdx.x`, `__syncthreads`).

    cudatokens.normalized(source)     # [Token("__shared__", 3), Token("ID", 3), ...]
"""
import re
from typing import NamedTuple


class Token(NamedTuple):
    text: str       # the normalised token
    line: int       # its line in the source, from 1


# C++'s keywords, the CUDA qualifiers, and the built-in names a kernel cannot rename.
KEYWORDS = frozenset("""
    alignas alignof asm auto bool break case catch char char16_t char32_t char8_t class const consteval
    constexpr constinit const_cast continue decltype default delete do double dynamic_cast else enum explicit
    extern false float for friend goto if inline int long mutable namespace new noexcept nullptr operator
    private protected public register reinterpret_cast return short signed sizeof static static_assert
    static_cast struct switch template this throw true try typedef typeid typename union unsigned using
    virtual void volatile wchar_t while
    __global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __forceinline__
    __noinline__ __launch_bounds__
    threadIdx blockIdx blockDim gridDim warpSize __syncthreads __syncwarp
""".split())
# x, y, z after one of these and a dot are CUDA's, not the student's.
_BUILTIN_VECTORS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})

_TOKEN = re.compile(r"""
      (?P<space>(?:\s|\\\n)+)                      # a backslash-newline continues a directive: layout too
    | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<directive>\#[ \t]*[A-Za-z_]\w*)
    | (?P<string>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*"?|(?:u8|[uUL])?'(?:\\.|[^'\\\n])*'?)
    | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
    | (?P<name>[A-Za-z_]\w*)
    | (?P<punct>>>=|<<=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|&&|\|\||[-+*/%&|^!=<>]=|\#\#|\S)
""", re.S | re.X)


def normalized(source):
    """The tokens of `source` (a str), normalised: see the module's docstring."""
    tokens, line = [], 1
    for m in _TOKEN.finditer(source.lstrip("\ufeff")):
        kind, text = m.lastgroup, m.group()
        if kind == "directive":
            tokens.append(Token("#" + text[1:].strip(), line))
        elif kind == "string":
            tokens.append(Token("STR", line))
        elif kind == "number":
            tokens.append(Token("NUM", line))
        elif kind == "name":
            builtin_member = len(tokens) >= 2 and tokens[-1].text == "." and tokens[-2].text in _BUILTIN_VECTORS
            tokens.append(Token(text if text in KEYWORDS or builtin_member else "ID", line))
        elif kind == "punct":
            tokens.append(Token(text, line))
        line += text.count("\n")
    return tokens
