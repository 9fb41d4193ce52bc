// Device program: packBf16x8 (weighted_sum.cuh: the hardware's bf16 conversion, floatToBf16 where a
// value is NaN) against floatToBf16 (codec.cuh, itself checked against core's TypeScript codec by
// test/codec.native.test.ts) for every one of the 2^32 fp32 bit patterns, each in every one of the
// eight positions. Prints the count of differing values and the first few; exits 1 on any.
// Build and run on a GPU machine (device-run.sh step pack-check):
//   nvcc -O3 -std=c++17 -arch=sm_90 test/native/pack_check.cu -o pack_check && ./pack_check
#include <cstdio>

#include "../../src/native/kernels/weighted_sum.cuh"

__device__ unsigned long long gBad;
__device__ uint32_t gFirst[8];

__global__ void check(uint64_t base) {
  const uint64_t i = base + static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc[8];
  uint32_t bits[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {  // position k holds pattern i + k * 2^29: every pattern visits every position
    bits[k] = k == 0 ? static_cast<uint32_t>(i) : static_cast<uint32_t>(i + k * 0x20000000ull);
    acc[k] = __uint_as_float(bits[k]);
  }
  const uint4 p = sy::packBf16x8(acc);
  const uint32_t u[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const uint16_t got = static_cast<uint16_t>(u[k / 2] >> (16 * (k & 1)));
    if (got != sy::floatToBf16(acc[k])) {
      const unsigned long long n = atomicAdd(&gBad, 1ull);
      if (n < 8) gFirst[n] = bits[k];
    }
  }
}

int main() {
  const uint64_t total = 1ull << 32, chunk = 1ull << 30;
  for (uint64_t base = 0; base < total; base += chunk) check<<<static_cast<unsigned>(chunk / 256), 256>>>(base);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("pack-check: CUDA error %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  unsigned long long bad = 0;
  uint32_t first[8] = {};
  cudaMemcpyFromSymbol(&bad, gBad, sizeof bad);
  cudaMemcpyFromSymbol(first, gFirst, sizeof first);
  std::printf("pack-check: %llu of %llu values differ from floatToBf16 (2^32 patterns x 8 positions)\n", bad,
              static_cast<unsigned long long>(total * 8));
  for (unsigned long long k = 0; k < bad && k < 8; ++k) std::printf("  differs: fp32 bits 0x%08x\n", first[k]);
  return bad == 0 ? 0 : 1;
}
