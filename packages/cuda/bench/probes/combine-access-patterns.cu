// Probe: contiguous combine's receive and send access patterns alone on 24 blocks (no NVSHMEM; includes src/native/kernels/weighted_sum.cuh). Build: nvcc -O3 -std=c++17 -arch=sm_90 -I../../src/native/kernels combine-access-patterns.cu -o combine-access-patterns (record: results/2026-11-24-contiguous-combine).
// Access-pattern microbenchmark for contiguous combine at 1 rank on 24 SMs (not part of the library):
// times the combine receive's per-warp pipeline (weighted_sum.cuh) against flattened streaming
// variants, and the combine send's 8-row pattern, each on 24 blocks.
#include <cstdio>
#include <vector>
#include <algorithm>
#include "weighted_sum.cuh"

using namespace sy;
constexpr int H = 7168, T = 4096, K = 8, BLOCKS = 24;

template <int kThreads>
__global__ void __launch_bounds__(kThreads) recvPipelined(const uint16_t* part, uint16_t* y, int hint) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = kThreads / 32;
  const float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  for (int t = blockIdx.x * warps + warp; t < T; t += gridDim.x * warps) {
    const uint16_t* row = part + static_cast<uint64_t>(t) * H;
    pipelinedSums<false>(1, 0, H / 256, H, lane, ones, [&](int) { return row; },
                         [&](int h0, uint4 o) {
                           uint4* d = reinterpret_cast<uint4*>(y + static_cast<uint64_t>(t) * H + h0);
                           if (hint) __stcs(d, o); else *d = o;
                         });
  }
}

// Flattened: every thread takes kU 16-byte vectors of the [T, H] block in turn (loads first).
template <int kThreads, int kU>
__global__ void __launch_bounds__(kThreads) recvFlat(const uint16_t* part, uint16_t* y, int hint) {
  const uint4* s = reinterpret_cast<const uint4*>(part);
  uint4* d = reinterpret_cast<uint4*>(y);
  const uint64_t n = static_cast<uint64_t>(T) * H / 8;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * kThreads;
  for (uint64_t base = blockIdx.x * kThreads + threadIdx.x; base < n; base += kU * step) {
    uint4 v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const uint64_t i = base + u * step;
      v[u] = i < n ? (hint ? __ldcg(s + i) : s[i]) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const uint64_t i = base + u * step;
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      accumulateBf16x8Sum(acc, v[u]);
      if (i < n) { if (hint) __stcs(d + i, packBf16x8(acc)); else d[i] = packBf16x8(acc); }
    }
  }
}

// Per-warp token, but the row as one flat run of 8 loads a lane per batch, single buffered.
template <int kThreads>
__global__ void __launch_bounds__(kThreads) sendPipelined(const uint16_t* out, const uint32_t* rows, uint16_t* part) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = kThreads / 32;
  for (int t = blockIdx.x * warps + warp; t < T; t += gridDim.x * warps) {
    float w8[8];
    uint32_t r8[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) { w8[u] = 0.125f * (u + 1); r8[u] = rows[t * K + u]; }
    pipelinedSums<true>(8, 0, H / 256, H, lane, w8, [&](int u) { return out + static_cast<uint64_t>(r8[u]) * H; },
                        [&](int h0, uint4 o) { *reinterpret_cast<uint4*>(part + static_cast<uint64_t>(t) * H + h0) = o; });
  }
}

// Combine send's 8-row pattern through the bulk-copy engine (cp.async.bulk global -> shared with
// an mbarrier a buffer): a warp keeps kBuf stages (8 rows x 512 B each) in flight, then sums
// from shared memory. Tests whether the per-SM load ceiling of 16-byte LDG is what bounds send.
__device__ inline uint32_t smemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
template <int kBuf>
__global__ void __launch_bounds__(512) sendBulk(const uint16_t* out, const uint32_t* rows, uint16_t* part) {
  extern __shared__ uint4 sm[];
  __shared__ uint64_t bars[16][kBuf];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = 16;
  uint4* mine = sm + warp * kBuf * 256;  // kBuf buffers of 8 rows x 32 lanes x 16 B
  if (lane == 0) {
    for (int b = 0; b < kBuf; ++b) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smemAddr(&bars[warp][b])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncwarp();
  uint32_t phase = 0;
  constexpr int S = H / 256;
  for (int t = blockIdx.x * warps + warp; t < T; t += gridDim.x * warps) {
    float w8[8];
    uint32_t r8[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) { w8[u] = 0.125f * (u + 1); r8[u] = rows[t * K + u]; }
    auto issue = [&](int s) {
      const int b = s % kBuf;
      if (lane == 0) {
        const uint32_t bar = smemAddr(&bars[warp][b]);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(4096) : "memory");
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const uint16_t* src = out + static_cast<uint64_t>(r8[u]) * H + s * 256;
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 512, [%2];" ::"r"(
                           smemAddr(mine + b * 256 + u * 32)),
                       "l"(src), "r"(bar)
                       : "memory");
        }
      }
    };
    for (int s = 0; s < kBuf && s < S; ++s) issue(s);
    for (int s = 0; s < S; ++s) {
      const int b = s % kBuf;
      const uint32_t bar = smemAddr(&bars[warp][b]);
      const uint32_t par = (phase >> b) & 1u;
      uint32_t done = 0;
      while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar), "r"(par) : "memory");
      }
      phase ^= 1u << b;
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
      for (int u = 0; u < 8; ++u) accumulateBf16x8(acc, w8[u], mine[b * 256 + u * 32 + lane]);
      *reinterpret_cast<uint4*>(part + static_cast<uint64_t>(t) * H + s * 256 + lane * 8) = packBf16x8(acc);
      __syncwarp();
      if (s + kBuf < S) issue(s + kBuf);
    }
  }
}

template <typename F>
float timeIt(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> v;
  for (int i = 0; i < 15; ++i) {
    cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); v.push_back(ms * 1000);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  const size_t rowsN = static_cast<size_t>(T) * K + 256 * 64;
  uint16_t *part, *y, *out; uint32_t* rows;
  cudaMalloc(&part, (size_t)T * H * 2); cudaMalloc(&y, (size_t)T * H * 2);
  cudaMalloc(&out, rowsN * H * 2); cudaMalloc(&rows, (size_t)T * K * 4);
  cudaMemset(part, 0x3f, (size_t)T * H * 2);
  {
    std::vector<uint16_t> h(rowsN * H);
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint16_t>(0x3c00 + (i * 2654435761u >> 7) % 0x0700);
    cudaMemcpy(out, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  }
  std::vector<uint32_t> hr(T * K);
  for (int i = 0; i < T * K; ++i) hr[i] = (uint32_t)((i * 2654435761u) % rowsN);
  cudaMemcpy(rows, hr.data(), hr.size() * 4, cudaMemcpyHostToDevice);
  // Evict: touch a big buffer between runs is skipped: L2 (~50 MB) is smaller than each data set.
  printf("recv pipelined 512 thr (as now)    %.1f us\n", timeIt([&] { recvPipelined<512><<<BLOCKS - 1, 512>>>(part, y, 0); }));
  printf("recv pipelined 512 thr, st.cs      %.1f us\n", timeIt([&] { recvPipelined<512><<<BLOCKS - 1, 512>>>(part, y, 1); }));
  printf("recv pipelined 1024 thr            %.1f us\n", timeIt([&] { recvPipelined<1024><<<BLOCKS - 1, 1024>>>(part, y, 0); }));
  printf("recv flat 512 x8                   %.1f us\n", timeIt([&] { recvFlat<512, 8><<<BLOCKS - 1, 512>>>(part, y, 0); }));
  printf("recv flat 512 x8 ld.cg st.cs       %.1f us\n", timeIt([&] { recvFlat<512, 8><<<BLOCKS - 1, 512>>>(part, y, 1); }));
  printf("recv flat 1024 x8                  %.1f us\n", timeIt([&] { recvFlat<1024, 8><<<BLOCKS - 1, 1024>>>(part, y, 0); }));
  printf("recv flat 1024 x4                  %.1f us\n", timeIt([&] { recvFlat<1024, 4><<<BLOCKS - 1, 1024>>>(part, y, 0); }));
  printf("recv flat 512 x16                  %.1f us\n", timeIt([&] { recvFlat<512, 16><<<BLOCKS - 1, 512>>>(part, y, 0); }));
  printf("send pipelined 512 thr (as now)    %.1f us\n", timeIt([&] { sendPipelined<512><<<BLOCKS, 512>>>(out, rows, part); }));
  printf("send pipelined 1024 thr            %.1f us\n", timeIt([&] { sendPipelined<1024><<<BLOCKS, 1024>>>(out, rows, part); }));
  cudaFuncSetAttribute(sendBulk<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, 16 * 3 * 4096);
  cudaFuncSetAttribute(sendBulk<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 16 * 2 * 4096);
  printf("send bulk 512 thr, 2 stages/warp   %.1f us\n", timeIt([&] { sendBulk<2><<<BLOCKS, 512, 16 * 2 * 4096>>>(out, rows, part); }));
  printf("send bulk 512 thr, 3 stages/warp   %.1f us\n", timeIt([&] { sendBulk<3><<<BLOCKS, 512, 16 * 3 * 4096>>>(out, rows, part); }));
  {  // the bulk variant's partials equal the LDG variant's, bit for bit
    std::vector<uint16_t> a((size_t)T * H), b((size_t)T * H);
    sendPipelined<512><<<BLOCKS, 512>>>(out, rows, part);
    cudaMemcpy(a.data(), part, a.size() * 2, cudaMemcpyDeviceToHost);
    cudaMemset(part, 0, a.size() * 2);
    sendBulk<3><<<BLOCKS, 512, 16 * 3 * 4096>>>(out, rows, part);
    cudaMemcpy(b.data(), part, b.size() * 2, cudaMemcpyDeviceToHost);
    printf("bulk vs LDG partials: %s\n", a == b ? "identical" : "DIFFER");
  }
  printf("err %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
