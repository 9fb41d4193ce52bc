// Random inputs made on the device for the benchmark, so no gigabytes cross from the host and no
// timing runs on zeros (METHOD.md). Deterministic per (seed, element index): a splitmix64 hash.
//
///  kind 0 (SY_FILL_BF16_SPREAD): bf16, magnitudes stepping through 17 binades per 128-element block
///                                (like the checks' inputs, so fp8 block scales differ)
///  kind 1 (SY_FILL_FP8):         e4m3 bits, never NaN
///  kind 2 (SY_FILL_SCALES):      fp32 powers of two in [2^-10, 2^9]
///  kind 3 (SY_FILL_BF16_UNIT):   bf16 in [-3, 3] (expert outputs)
#include <cuda_runtime.h>

#include <cstdint>

#include "../../../src/native/kernels/codec.cuh"
#include "launch_fill.h"

namespace sy {
namespace {

__device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fillKernel(uint8_t* out, uint64_t count, int kind, uint64_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t h = splitmix64(seed * 0x2545f4914f6cdd1dull + i);
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    switch (kind) {
      case 0: {
        const float mag = ldexpf(1.0f, static_cast<int>((i / 128) % 17) - 8);
        reinterpret_cast<uint16_t*>(out)[i] = floatToBf16((u - 0.5f) * mag);
        break;
      }
      case 1: {
        const uint8_t b = static_cast<uint8_t>(h & 0xff);
        out[i] = (b & 0x7f) == 0x7f ? static_cast<uint8_t>(b & 0xfe) : b;
        break;
      }
      case 2:
        reinterpret_cast<float*>(out)[i] = ldexpf(1.0f, static_cast<int>(h % 20) - 10);
        break;
      default:
        reinterpret_cast<uint16_t*>(out)[i] = floatToBf16((u - 0.5f) * 6.0f);
    }
  }
}

}  // namespace

cudaError_t launchFillRandom(void* ptr, uint64_t count, int kind, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const uint64_t want = (count + 255) / 256;
  const int blocks = static_cast<int>(want < 4096 ? want : 4096);
  fillKernel<<<blocks, 256, 0, stream>>>(static_cast<uint8_t*>(ptr), count, kind, seed);
  return cudaGetLastError();
}

}  // namespace sy
