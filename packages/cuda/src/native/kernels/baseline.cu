// The NCCL baseline's local kernels (host/baseline.cc runs them around NCCL's grouped send / recv).
// Row order and arithmetic are the contiguous layout's (contiguous.cuh, weighted_sum.cuh), so the
// baseline's outputs are bit-exact with core's reference too and the bench compares transports,
// not different work.
//
///  sendX / sendScales / sendMeta  Shape: [R, C, ...]     rows for destination d at [d][routeRow]
///  outMeta                        Shape: [N, 4]          compact output meta (srcRank, srcToken, slot, e)
///  expertOut                      Shape: [N, hidden]     bf16, row-aligned with the compact output
///  backSend                       Shape: [R, C, hidden]  bf16 rows for source s at [s][stageStart - s*C + i]
///  backRecv                       Shape: [R, C, hidden]  bf16 rows returned by destination d, route order
///  y                              Shape: [T, hidden]     bf16 out
#include "contiguous.cuh"
#include "copy.cuh"
#include "launch_baseline.h"
#include "launch_contiguous.h"
#include "weighted_sum.cuh"

namespace sy {
namespace {

constexpr int kThreads = kContigThreads;
constexpr int kWarps = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) packKernel(SyCtx c, const uint8_t* x, const float* scales,
                                                     const int32_t* topkIdx, int T, uint8_t* sendX,
                                                     uint8_t* sendScales, uint8_t* sendMeta) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), S = p.scalesPerRow();
  const int E = R * L;
  const uint64_t C = p.v[P_ROWS_PER_SOURCE];
  const uint64_t rowBytes = p.rowBytes();
  const uint64_t scaleBytes = static_cast<uint64_t>(S) * 4;
  const int lane = threadIdx.x & 31;
  const uint64_t entries = static_cast<uint64_t>(T) * K;
  for (uint64_t q = static_cast<uint64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5); q < entries;
       q += static_cast<uint64_t>(gridDim.x) * kWarps) {
    const int t = static_cast<int>(q / K), k = static_cast<int>(q % K);
    const int ex = topkIdx[q];
    if (ex < 0 || ex >= E) continue;
    const uint64_t row = static_cast<uint64_t>(ex / L) * C + routeRow(c.contig, E, t, k, K, ex);
    warpCopy(sendX + row * rowBytes, x + static_cast<uint64_t>(t) * rowBytes, rowBytes, lane);
    if (S) {
      warpCopy(sendScales + row * scaleBytes, reinterpret_cast<const uint8_t*>(scales) + t * scaleBytes, scaleBytes,
               lane);
    }
    if (lane == 0) reinterpret_cast<int4*>(sendMeta)[row] = make_int4(c.rank, t, k, ex % L);
  }
}

__global__ void __launch_bounds__(kThreads) gatherKernel(SyCtx c, const uint8_t* outMeta, const uint8_t* expertOut,
                                                       uint8_t* backSend) {
  const SyParams& p = c.p;
  const SyContig& g = c.contig;
  const int R = p.ranks(), L = p.localExperts();
  const uint64_t rowBytes = static_cast<uint64_t>(p.hidden()) * 2;
  const int lane = threadIdx.x & 31;
  const int total = g.offsets[L];
  for (int row = blockIdx.x * kWarps + (threadIdx.x >> 5); row < total; row += gridDim.x * kWarps) {
    const int4 m = reinterpret_cast<const int4*>(outMeta)[row];
    if (m.x < 0) continue;  // padding
    const int pair = m.w * R + m.x;
    const uint64_t back = static_cast<uint64_t>(g.stageStart[pair]) + (row - g.pairStart[pair]);
    warpCopy(backSend + back * rowBytes, expertOut + static_cast<uint64_t>(row) * rowBytes, rowBytes, lane);
  }
}

__global__ void __launch_bounds__(kContigReduceThreads) reduceKernel(SyCtx c, const int32_t* topkIdx,
                                                                   const float* topkWeights, int T,
                                                                   const uint16_t* backRecv, uint16_t* y) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), H = p.hidden();
  const int E = R * L;
  const uint64_t C = p.v[P_ROWS_PER_SOURCE];
  const int warps = kContigReduceThreads / kWarp;
  const bool vec = (H % 8) == 0 && (reinterpret_cast<uint64_t>(y) & 15) == 0;
  for (int t = blockIdx.x * warps + (threadIdx.x >> 5); t < T; t += gridDim.x * warps) {
    const int32_t* idx = topkIdx + static_cast<uint64_t>(t) * K;
    warpWeightedSum(
        idx, topkWeights + static_cast<uint64_t>(t) * K, K, H,
        [&](int k) {
          const int ex = idx[k];
          const uint64_t row = static_cast<uint64_t>(ex / L) * C + routeRow(c.contig, E, t, k, K, ex);
          return backRecv + row * H;
        },
        y + static_cast<uint64_t>(t) * H, vec, threadIdx.x & 31);
  }
}

}  // namespace

cudaError_t launchBaselinePack(const SyCtx& ctx, const uint8_t* x, const float* scales, const int32_t* topkIdx,
                               int numTokens, uint8_t* sendX, uint8_t* sendScales, uint8_t* sendMeta,
                               cudaStream_t stream) {
  packKernel<<<ctx.contig.blocks, kThreads, 0, stream>>>(ctx, x, scales, topkIdx, numTokens, sendX, sendScales,
                                                         sendMeta);
  return cudaGetLastError();
}

cudaError_t launchBaselineGather(const SyCtx& ctx, const uint8_t* outMeta, const uint8_t* expertOut,
                                 uint8_t* backSend, cudaStream_t stream) {
  gatherKernel<<<ctx.contig.blocks, kThreads, 0, stream>>>(ctx, outMeta, expertOut, backSend);
  return cudaGetLastError();
}

cudaError_t launchBaselineReduce(const SyCtx& ctx, const int32_t* topkIdx, const float* topkWeights, int numTokens,
                                 const uint8_t* backRecv, void* y, cudaStream_t stream) {
  reduceKernel<<<ctx.contig.blocks, kContigReduceThreads, 0, stream>>>(
      ctx, topkIdx, topkWeights, numTokens, reinterpret_cast<const uint16_t*>(backRecv), static_cast<uint16_t*>(y));
  return cudaGetLastError();
}

}  // namespace sy
