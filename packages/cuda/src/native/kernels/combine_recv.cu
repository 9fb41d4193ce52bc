// Combine receive (masked layout): waits for every expert rank's signal, checks that each one
// announced exactly the slots this rank's tokens route to it, then
//   y[t][h] = bf16_rne( sum_{k = 0..K-1, topkIdx[t][k] >= 0} fp32(w[t][k] * x_k[h]) )
// with fp32 products and fp32 adds in slot order (__fmul_rn / __fadd_rn: never contracted to an
// FMA), rounded once: bit-exact with core's combineToken.
//
///  combineSignal Shape: [R]              u32 (epoch, rows + 1) from each expert rank
///  combineX      Shape: [M, K, hidden]   bf16 expert outputs for (token, slot)
///  topkIdx       Shape: [T, K]           int32, topkWeights Shape: [T, K] fp32
///  y             Shape: [T, hidden]      bf16 out
//
// Grid: (token blocks, hidden chunks of kThreads * 8). Every block waits on all R signals itself
// (acquire), block (0, 0) also checks every expert rank's count and stamps the stats
// (combine_check.cuh). The last block to finish advances the step counter.
#include "codec.cuh"
#include "combine_check.cuh"
#include "launch.h"
#include "signal.cuh"
#include "weighted_sum.cuh"

namespace sy {
namespace {

constexpr int kThreads = 256;
constexpr int kVec = 8;
constexpr int kSlots = 8;  // slots whose rows one thread loads at once

__global__ void __launch_bounds__(kThreads) combineRecvKernel(SyCtx c, const int32_t* topkIdx,
                                                             const float* topkWeights, int T, uint16_t* y) {
  const SyParams& p = c.p;
  const int K = p.topK(), H = p.hidden();
  __shared__ CombineCheckShared sCheck;
  __shared__ bool sLast;

  // 1. Wait for every expert rank; block (0, 0) checks each rank's announced rows (combine_check.cuh).
  waitExpertRanks<kThreads>(c, topkIdx, T, blockIdx.x == 0 && blockIdx.y == 0, sCheck);
  __syncthreads();

  // 2. Weighted sum in slot order.
  if (!hasError(c.state)) {
    const uint16_t* rows = reinterpret_cast<const uint16_t*>(c.heap + p.offset(R_COMBINE_X));
    const bool vec = (H % kVec) == 0 && (reinterpret_cast<uint64_t>(y) & 15) == 0;
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
      const int32_t* idx = topkIdx + static_cast<uint64_t>(t) * K;
      const float* w = topkWeights + static_cast<uint64_t>(t) * K;
      const int h0 = (blockIdx.y * kThreads + threadIdx.x) * kVec;
      if (h0 >= H) continue;
      float acc[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[j] = 0.0f;
      const uint16_t* tokenRows = rows + static_cast<uint64_t>(t) * K * H + h0;
      if (vec) {
        // kSlots slots at a time: their ids, then their rows, all loads in flight before the adds
        // (version 1 waited for each slot's id and then its row in turn: 2K round trips).
        for (int k0 = 0; k0 < K; k0 += kSlots) {
          int id[kSlots];
          float wk[kSlots];
          uint4 v[kSlots];
#pragma unroll
          for (int j = 0; j < kSlots; ++j) {
            id[j] = k0 + j < K ? idx[k0 + j] : -1;
            wk[j] = k0 + j < K ? w[k0 + j] : 0.0f;
          }
#pragma unroll
          for (int j = 0; j < kSlots; ++j) {
            v[j] = id[j] >= 0 ? *reinterpret_cast<const uint4*>(tokenRows + static_cast<uint64_t>(k0 + j) * H)
                              : make_uint4(0, 0, 0, 0);
          }
#pragma unroll
          for (int j = 0; j < kSlots; ++j) {
            if (id[j] >= 0) accumulateBf16x8(acc, wk[j], v[j]);  // slot order kept
          }
        }
      } else {
        for (int k = 0; k < K; ++k) {
          if (idx[k] < 0) continue;
          const float wk = w[k];
          const uint16_t* r = tokenRows + static_cast<uint64_t>(k) * H;
          for (int j = 0; j < kVec && h0 + j < H; ++j) acc[j] = __fadd_rn(acc[j], __fmul_rn(wk, bf16ToFloat(r[j])));
        }
      }
      uint16_t* out = y + static_cast<uint64_t>(t) * H + h0;
      if (vec) {
        *reinterpret_cast<uint4*>(out) = packBf16x8(acc);
      } else {
        for (int j = 0; j < kVec && h0 + j < H; ++j) out[j] = floatToBf16(acc[j]);
      }
    }
  }

  // 3. The last block advances the step, so the next step's signals carry the next epoch.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const uint32_t old = atomicAdd(&c.state->combineRecvDone, 1u);
    sLast = old == gridDim.x * gridDim.y - 1;
    if (sLast) {
      c.state->combineRecvDone = 0;
      c.state->step = c.state->step + 1;
      __threadfence();
    }
  }
}

}  // namespace

cudaError_t launchCombineRecv(const SyCtx& ctx, const int32_t* topkIdx, const float* topkWeights, int numTokens,
                              void* y, cudaStream_t stream) {
  const int H = ctx.p.hidden();
  const int chunks = (H + kThreads * kVec - 1) / (kThreads * kVec);
  const int tokenBlocks = numTokens < 1 ? 1 : (numTokens > 1024 ? 1024 : numTokens);
  dim3 grid(tokenBlocks, chunks);
  combineRecvKernel<<<grid, kThreads, 0, stream>>>(ctx, topkIdx, topkWeights, numTokens,
                                                   static_cast<uint16_t*>(y));
  return cudaGetLastError();
}

}  // namespace sy
