// Everything <cuda_runtime_api.h> declares for device code is in cuda_cpu.h, which the CPU runtime
// includes before every kernel.
#pragma once
