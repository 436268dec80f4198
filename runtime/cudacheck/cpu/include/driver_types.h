// Everything <driver_types.h> declares is in cuda_cpu.h, which the CPU runtime
// includes before every kernel.
#pragma once
