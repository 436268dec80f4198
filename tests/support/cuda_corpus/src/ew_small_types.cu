// bool, signed char and short element types: a masked select, a saturating multiply-add
// of int8 by int16 into int16, and a byte-sized flag of the sign.
extern "C" __global__ void small_types(const bool* mask, const signed char* a, const short* b, short* out,
                                       signed char* sign, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = mask[i] ? (int)a[i] * (int)b[i] + 7 : (int)b[i] - (int)a[i];
        out[i] = (short)max(-32768, min(32767, v));
        sign[i] = (signed char)((v > 0) - (v < 0));
    }
}
