// Combine receive (contiguous layout): the masked stage's protocol and arithmetic (combine_recv.cu)
// on a bounded grid: waits for every expert rank's signal, checks that the announced rows add up
// to the slots this rank's tokens use, then
//   y[t][h] = bf16_rne( sum_{k = 0..K-1, topkIdx[t][k] >= 0} fp32(w[t][k] * x_k[h]) )
// with __fmul_rn / __fadd_rn in slot order, rounded once: bit-exact with core's combineToken.
//
///  combineSignal Shape: [R]              u32 (epoch, rows + 1) from each expert rank
///  combineX      Shape: [M, K, hidden]   bf16 expert outputs for (token, slot)
///  topkIdx       Shape: [T, K]           int32, topkWeights Shape: [T, K] fp32
///  y             Shape: [T, hidden]      bf16 out
//
// Grid: ctx.contig.blocks blocks of 1024 threads (the SM budget), one warp per token: each lane
// holds 8 outputs and has the K slots' 16-byte loads in flight together. Every block waits on all
// R signals itself; block 0 also checks the total; the last block advances the step counter.
#include "codec.cuh"
#include "contiguous.cuh"
#include "copy.cuh"
#include "launch_contiguous.h"
#include "signal.cuh"
#include "weighted_sum.cuh"

namespace sy {
namespace {

constexpr int kThreads = kContigReduceThreads;
constexpr int kWarps = kThreads / kWarp;

__device__ int blockSumWide(int v, int* scratch) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  int total = 0;
  for (int w = 0; w < kWarps; ++w) total += scratch[w];
  return total;
}

__global__ void __launch_bounds__(kThreads) contigCombineRecvKernel(SyCtx c, const int32_t* topkIdx,
                                                                  const float* topkWeights, int T, uint16_t* y) {
  const SyParams& p = c.p;
  const int R = p.ranks(), K = p.topK(), H = p.hidden();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  __shared__ int scratch[kWarps];
  __shared__ bool sLast;

  // 1. Wait for every expert rank.
  const uint32_t* words = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_COMBINE_SIGNAL));
  const uint32_t maxRows = static_cast<uint32_t>(p.maxTokens()) * static_cast<uint32_t>(K);
  int received = 0;
  for (int peer = threadIdx.x; peer < R; peer += kThreads) {
    if (hasError(c.state)) break;
    const int n = waitSignal(words + peer, epoch, maxRows, c.state, c.timeoutNs, S_COMBINE_RECV,
                             static_cast<uint32_t>(peer), R_COMBINE_SIGNAL);
    received += n < 0 ? 0 : n;
  }
  received = blockSumWide(received, scratch);
  if (blockIdx.x == 0) {
    int used = 0;
    for (int i = threadIdx.x; i < T * K; i += kThreads) used += topkIdx[i] >= 0 ? 1 : 0;
    used = blockSumWide(used, scratch);
    if (threadIdx.x == 0 && !hasError(c.state) && used != received) {
      recordError(c.state, E_COUNT_MISMATCH, S_COMBINE_RECV, 0xffffffffu, R_COMBINE_SIGNAL,
                  static_cast<uint32_t>(received), static_cast<uint32_t>(used));
    }
  }
  __syncthreads();

  // 2. Weighted sum in slot order, one warp per token.
  if (!hasError(c.state)) {
    const uint16_t* rows = reinterpret_cast<const uint16_t*>(c.heap + p.offset(R_COMBINE_X));
    const bool vec = (H % 8) == 0 && (reinterpret_cast<uint64_t>(y) & 15) == 0;
    for (int t = blockIdx.x * kWarps + warp; t < T; t += gridDim.x * kWarps) {
      const int32_t* idx = topkIdx + static_cast<uint64_t>(t) * K;
      const float* w = topkWeights + static_cast<uint64_t>(t) * K;
      const uint16_t* base = rows + static_cast<uint64_t>(t) * K * H;
      uint16_t* out = y + static_cast<uint64_t>(t) * H;
      warpWeightedSum(
          idx, w, K, H, [&](int k) { return base + static_cast<uint64_t>(k) * H; }, out, vec, lane);
    }
  }

  // 3. The last block advances the step, so the next step's signals carry the next epoch.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    sLast = atomicAdd(&c.state->combineRecvDone, 1u) == gridDim.x - 1;
    if (sLast) {
      c.state->combineRecvDone = 0;
      c.state->step = c.state->step + 1;
      __threadfence();
    }
  }
}

}  // namespace

cudaError_t launchCombineRecvContiguous(const SyCtx& ctx, const int32_t* topkIdx, const float* topkWeights,
                                        int numTokens, void* y, cudaStream_t stream) {
  contigCombineRecvKernel<<<ctx.contig.blocks, kThreads, 0, stream>>>(ctx, topkIdx, topkWeights, numTokens,
                                                                      static_cast<uint16_t*>(y));
  return cudaGetLastError();
}

}  // namespace sy
