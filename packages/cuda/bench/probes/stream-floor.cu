// Probe: the floor of the contiguous combine's bytes on 24 SMs. At 4096 tokens, hidden 7168, top-8
// over two ranks, the send of an expert rank reads about 32,768 expert rows (4 a partial, 470 MB) and
// writes 8,192 partials (117 MB); the receive of a home reads 8,192 partials (2 a token, 117 MB) and
// writes 4,096 rows (59 MB): shapes "send" and "recv". Here kernels move exactly those bytes with no
// arithmetic but an integer xor (so nothing is dead), on 24 blocks of one SM each, the ways a warp
// can keep bytes in flight: its registers (U 16-byte vectors of each of an output's rows a thread,
// loads first), or shared memory filled by cp.async (a ring of stages a thread; no register holds
// the bytes in flight). The same on all SMs for reference. One GPU, no NVSHMEM; each figure is the
// median of 9 timed launches after 3 warm-up (timing.cuh), printed as one JSON line a variant.
//   nvcc -O3 -std=c++17 -arch=sm_90 stream-floor.cu -o stream-floor && ./stream-floor
#include "check.cuh"
#include "timing.cuh"
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

constexpr uint64_t kHidden = 7168;       // bf16 outputs a row
constexpr uint64_t kVecs = kHidden / 8;  // 16-byte vectors a row

__device__ inline uint4 mix(uint4 a, uint4 b) { return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w); }

/// Registers: each thread takes U output vectors in turn (kRowsPerOut rows each, outRows rows out);
/// their kRowsPerOut x U loads are issued before any use.
template <int kThreads, int U, int kRowsPerOut>
__global__ void __launch_bounds__(kThreads) viaRegisters(const uint4* rows, uint4* out, uint64_t outRows) {
  const uint64_t n = outRows * kVecs;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * kThreads;
  for (uint64_t base = blockIdx.x * static_cast<uint64_t>(kThreads) + threadIdx.x; base < n; base += U * step) {
    uint4 v[U][kRowsPerOut];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t i = base + u * step;
      const uint64_t o = i / kVecs, c = i % kVecs;
#pragma unroll
      for (int r = 0; r < kRowsPerOut; ++r) {
        v[u][r] = i < n ? rows[(o * kRowsPerOut + r) * kVecs + c] : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t i = base + u * step;
      uint4 m = v[u][0];
#pragma unroll
      for (int r = 1; r < kRowsPerOut; ++r) m = mix(m, v[u][r]);
      if (i < n) out[i] = m;
    }
  }
}

__device__ inline void cpAsync16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem))),
               "l"(gmem)
               : "memory");
}

/// cp.async: a ring of S stages a thread, each stage one output vector's row vectors in shared
/// memory; stage k + S - 1 is issued before stage k is used.
template <int kThreads, int S, int kRowsPerOut>
__global__ void __launch_bounds__(kThreads) viaCpAsync(const uint4* rows, uint4* out, uint64_t outRows) {
  extern __shared__ uint4 ring[];  // [S][kRowsPerOut][kThreads]
  const uint64_t n = outRows * kVecs;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * kThreads;
  const uint64_t first = blockIdx.x * static_cast<uint64_t>(kThreads) + threadIdx.x;
  const auto issue = [&](uint64_t k) {
    const uint64_t i = first + k * step;
    if (i < n) {
      const uint64_t o = i / kVecs, c = i % kVecs;
#pragma unroll
      for (int r = 0; r < kRowsPerOut; ++r) {
        cpAsync16(&ring[((k % S) * kRowsPerOut + r) * kThreads + threadIdx.x], &rows[(o * kRowsPerOut + r) * kVecs + c]);
      }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  for (int k = 0; k < S - 1; ++k) issue(k);
  for (uint64_t k = 0; first + k * step < n; ++k) {
    issue(k + S - 1);
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 1) : "memory");
    const uint4* s = &ring[(k % S) * kRowsPerOut * kThreads + threadIdx.x];
    uint4 m = s[0];
#pragma unroll
    for (int r = 1; r < kRowsPerOut; ++r) m = mix(m, s[r * kThreads]);
    out[first + k * step] = m;
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
}

/// Every way on 24 SMs and on all, for one shape: outRows rows out of kRowsPerOut rows each (1 on a
/// failed CUDA call).
template <int kRowsPerOut>
int shape(const char* name, uint64_t outRows, int sms) {
  const uint64_t readBytes = outRows * kRowsPerOut * kHidden * 2, writeBytes = outRows * kHidden * 2;
  uint4 *rows = nullptr, *out = nullptr;
  CK(cudaMalloc(&rows, readBytes));
  CK(cudaMalloc(&out, writeBytes));
  CK(cudaMemset(rows, 1, readBytes));
  const auto report = [&](const char* way, int blocks, int threads, int depth, float us) {
    std::printf(
        "{\"probe\":\"stream-floor\",\"shape\":\"%s\",\"way\":\"%s\",\"blocks\":%d,\"threads\":%d,\"depth\":%d,"
        "\"readMB\":%.1f,\"writeMB\":%.1f,\"us\":%.1f,\"GBps\":%.0f}\n",
        name, way, blocks, threads, depth, readBytes / 1e6, writeBytes / 1e6, us, (readBytes + writeBytes) / (us * 1e3));
  };
  for (int blocks : {24, sms}) {
    report("registers", blocks, 512, 1, medianUs([&] { viaRegisters<512, 1, kRowsPerOut><<<blocks, 512>>>(rows, out, outRows); }));
    report("registers", blocks, 512, 2, medianUs([&] { viaRegisters<512, 2, kRowsPerOut><<<blocks, 512>>>(rows, out, outRows); }));
    report("registers", blocks, 512, 4, medianUs([&] { viaRegisters<512, 4, kRowsPerOut><<<blocks, 512>>>(rows, out, outRows); }));
    report("registers", blocks, 1024, 2, medianUs([&] { viaRegisters<1024, 2, kRowsPerOut><<<blocks, 1024>>>(rows, out, outRows); }));
    for (int depth : {4, 6}) {
      const int smem = depth * kRowsPerOut * 512 * 16;
      auto k = depth == 4 ? viaCpAsync<512, 4, kRowsPerOut> : viaCpAsync<512, 6, kRowsPerOut>;
      CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      report("cp.async", blocks, 512, depth, medianUs([&] { k<<<blocks, 512, smem>>>(rows, out, outRows); }));
    }
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  cudaFree(rows);
  cudaFree(out);
  return 0;
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (shape<4>("send", 8192, sms) != 0) return 1;  // an expert rank's partials: 4096 tokens x 2 homes
  return shape<2>("recv", 4096, sms);              // a home's rows: 4096 tokens, a partial from each of 2 ranks
}
