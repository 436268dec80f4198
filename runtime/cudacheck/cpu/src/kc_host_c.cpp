// The CUDA runtime API under its C names, for a whole program's C units (cpu/host_units.py):
// a .c file calls cudaMalloc or cudaSetDevice (declared by a header, or implicitly, as C
// allows), and the toolkit's runtime library defines them with C linkage. kc_host.h declares
// them as C++ functions (with the caller's line as a defaulted parameter), so each is defined
// here a second time under its C symbol (an asm label), calling the C++ one; a C caller's
// line is unknown (0). The C++ names and these symbols do not meet: C++ names are mangled.
#define KC_PROGRAM
#include "../include/cuda_cpu.h"

#define KC_C_NAME(name) __asm__(#name)

extern "C" {
cudaError_t kc_c_malloc(void** p, size_t size) KC_C_NAME(cudaMalloc);
cudaError_t kc_c_malloc(void** p, size_t size) { return cudaMalloc(p, size, 0); }
cudaError_t kc_c_free(void* p) KC_C_NAME(cudaFree);
cudaError_t kc_c_free(void* p) { return cudaFree(p, 0); }
cudaError_t kc_c_malloc_host(void** p, size_t size) KC_C_NAME(cudaMallocHost);
cudaError_t kc_c_malloc_host(void** p, size_t size) { return cudaMallocHost(p, size); }
cudaError_t kc_c_free_host(void* p) KC_C_NAME(cudaFreeHost);
cudaError_t kc_c_free_host(void* p) { return cudaFreeHost(p); }
cudaError_t kc_c_memcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) KC_C_NAME(cudaMemcpy);
cudaError_t kc_c_memcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) { return cudaMemcpy(d, s, n, k, 0); }
cudaError_t kc_c_memset(void* p, int v, size_t n) KC_C_NAME(cudaMemset);
cudaError_t kc_c_memset(void* p, int v, size_t n) { return cudaMemset(p, v, n, 0); }
cudaError_t kc_c_device_synchronize(void) KC_C_NAME(cudaDeviceSynchronize);
cudaError_t kc_c_device_synchronize(void) { return cudaDeviceSynchronize(); }
cudaError_t kc_c_device_reset(void) KC_C_NAME(cudaDeviceReset);
cudaError_t kc_c_device_reset(void) { return cudaDeviceReset(); }
cudaError_t kc_c_get_last_error(void) KC_C_NAME(cudaGetLastError);
cudaError_t kc_c_get_last_error(void) { return cudaGetLastError(); }
cudaError_t kc_c_peek_at_last_error(void) KC_C_NAME(cudaPeekAtLastError);
cudaError_t kc_c_peek_at_last_error(void) { return cudaPeekAtLastError(); }
const char* kc_c_get_error_string(cudaError_t e) KC_C_NAME(cudaGetErrorString);
const char* kc_c_get_error_string(cudaError_t e) { return cudaGetErrorString(e); }
cudaError_t kc_c_get_device_count(int* n) KC_C_NAME(cudaGetDeviceCount);
cudaError_t kc_c_get_device_count(int* n) { return cudaGetDeviceCount(n); }
cudaError_t kc_c_get_device(int* d) KC_C_NAME(cudaGetDevice);
cudaError_t kc_c_get_device(int* d) { return cudaGetDevice(d); }
cudaError_t kc_c_set_device(int d) KC_C_NAME(cudaSetDevice);
cudaError_t kc_c_set_device(int d) { return cudaSetDevice(d); }
cudaError_t kc_c_get_device_properties(cudaDeviceProp* p, int d) KC_C_NAME(cudaGetDeviceProperties);
cudaError_t kc_c_get_device_properties(cudaDeviceProp* p, int d) { return cudaGetDeviceProperties(p, d); }
cudaError_t kc_c_mem_get_info(size_t* free, size_t* total) KC_C_NAME(cudaMemGetInfo);
cudaError_t kc_c_mem_get_info(size_t* free, size_t* total) { return cudaMemGetInfo(free, total); }
}
