// Combine receive (contiguous layout): the masked stage's protocol and arithmetic (combine_recv.cu)
// on a bounded grid: waits for every expert rank's signal, checks that each one announced exactly
// the slots this rank's tokens route to it, then
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
// R signals itself; block 0 also checks every expert rank's count and stamps the stats
// (combine_check.cuh); the last block advances the step counter.
#include "codec.cuh"
#include "combine_check.cuh"
#include "contiguous.cuh"
#include "copy.cuh"
#include "launch_contiguous.h"
#include "signal.cuh"
#include "weighted_sum.cuh"

namespace sy {
namespace {

constexpr int kThreads = kContigReduceThreads;
constexpr int kWarps = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) contigCombineRecvKernel(SyCtx c, const int32_t* topkIdx,
                                                                  const float* topkWeights, int T, uint16_t* y) {
  const SyParams& p = c.p;
  const int K = p.topK(), H = p.hidden();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __shared__ CombineCheckShared sCheck;
  __shared__ bool sLast;

  // 1. Wait for every expert rank; block 0 checks each rank's announced rows (combine_check.cuh).
  waitExpertRanks<kThreads>(c, topkIdx, T, blockIdx.x == 0, sCheck);
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

cudaError_t loadCombineRecvContiguousKernels() { return loadKernels(contigCombineRecvKernel); }

}  // namespace sy
