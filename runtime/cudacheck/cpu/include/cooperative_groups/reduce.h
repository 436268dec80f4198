// cg::reduce and its operators, as CUDA's <cooperative_groups/reduce.h> offers them (NVRTC
// needs this include for them too).
#pragma once
#include "../cooperative_groups.h"

namespace cooperative_groups {

// cg::reduce(tile, value, op) from <cooperative_groups/reduce.h>: a butterfly of shuffles.
template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

template <unsigned Size, class T, class Op>
inline T reduce(const thread_block_tile<Size>& g, T v, Op op) {
    for (unsigned m = Size / 2; m > 0; m /= 2) v = op(v, g.shfl_xor(v, m));
    return v;
}

}  // namespace cooperative_groups
