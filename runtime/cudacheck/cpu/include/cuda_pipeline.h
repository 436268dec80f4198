// <cuda_pipeline.h> on the CPU runtime: the pipeline primitives (cuda_pipeline_primitives.h).
// CUDA's header also declares the C++ class nvcuda::experimental::pipeline, which the CPU
// runtime does not provide.
#pragma once
#include "cuda_pipeline_primitives.h"
