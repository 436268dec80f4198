// Everything <device_launch_parameters.h> declares for device code is in cuda_cpu.h, which the CPU runtime
// includes before every kernel.
#pragma once
