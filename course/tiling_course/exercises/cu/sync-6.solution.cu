// A histogram: hist[b] counts the values of data that equal b. Each of the n values is a
// bin index (0 <= data[i] < the number of bins); one thread per value; hist starts at zero.
// Threads of every block add into the same counts, so each addition is one atomic operation.
extern "C" __global__ void histogram(const int* data, unsigned int* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[data[i]], 1u);  // load, add and store as one step no other thread can split
}
