// 2-D kernel on pitched rows (as cudaMallocPitch lays them out): each row starts `pitch`
// BYTES after the previous one, reached through char* arithmetic.
extern "C" __global__ void pitched_affine(const float* in, size_t pitch_in, float* out, size_t pitch_out,
                                          int w, int h, float a, float b) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        const float* src = (const float*)((const char*)in + y * pitch_in);
        float* dst = (float*)((char*)out + y * pitch_out);
        dst[x] = a * src[x] + b;
    }
}
