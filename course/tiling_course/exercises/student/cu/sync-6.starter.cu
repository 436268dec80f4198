// A histogram: hist[b] counts the values of data that equal b. Each of the n values is a
// bin index (0 <= data[i] < the number of bins); one thread per value; hist starts at zero.
extern "C" __global__ void histogram(const int* data, unsigned int* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        hist[data[i]] += 1;
}
