// Everything <cuda_runtime.h> declares for device code is in cuda_cpu.h, which the CPU runtime
// includes before every kernel.
#pragma once
// A whole program's C++ host unit (a .cpp file, cpu/host_units.py) that includes this header
// gets the runtime API from cuda_cpu.h, which every CUDA unit has read already.
#ifndef KC_CUDA_CPU_H
#include "cuda_cpu.h"
#endif
