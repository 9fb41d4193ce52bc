// Host entry point of the benchmark's device-side random fill (fill.cu).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace sy {

/// `count` elements of `kind` (0 bf16 spread, 1 fp8 bits, 2 fp32 pow2 scales, 3 bf16 in [-3, 3]) at `ptr`.
cudaError_t launchFillRandom(void* ptr, uint64_t count, int kind, uint64_t seed, cudaStream_t stream);

}  // namespace sy
