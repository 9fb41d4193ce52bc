// The NCCL baseline's local kernels (host/baseline.cc runs them around NCCL's grouped send / recv).
// Row order is version 1's contiguous staging order (contiguous.cuh): one row per (token, expert),
// which is what one writes without a special library; the dispatch output equals core's reference
// bit for bit, and so does y (the weighted sum follows version 2's order: per-rank partials rounded
// to bf16, summed in ascending rank order, 8 outputs a lane with the slots' loads in flight).
//
///  sendX / sendScales / sendMeta  Shape: [R, C, ...]     rows for destination d at [d][routeRow]
///  outMeta                        Shape: [N, 4]          compact output meta (srcRank, srcToken, slot, e)
///  expertOut                      Shape: [N, hidden]     bf16, row-aligned with the compact output
///  backSend                       Shape: [R, C, hidden]  bf16 rows for source s at [s][stageStart - s*C + i]
///  backRecv                       Shape: [R, C, hidden]  bf16 rows returned by destination d, route order
///  y                              Shape: [T, hidden]     bf16 out
#include <climits>

#include "../../../src/native/kernels/codec.cuh"
#include "../../../src/native/kernels/copy.cuh"
#include "../../../src/native/kernels/weighted_sum.cuh"
#include "launch_baseline.h"
#include "launch_route.h"

namespace sy {
namespace {

constexpr int kThreads = kContigThreads;
constexpr int kWarps = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) packKernel(BaselineCtx c, const uint8_t* x, const float* scales,
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

__global__ void __launch_bounds__(kThreads) gatherKernel(BaselineCtx c, const uint8_t* outMeta, const uint8_t* expertOut,
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

constexpr int kReduceThreads = 512;  // 128 registers a thread: the slot lists stay in registers

__global__ void __launch_bounds__(kReduceThreads) reduceKernel(BaselineCtx c, const int32_t* topkIdx,
                                                                   const float* topkWeights, int T,
                                                                   const uint16_t* backRecv, uint16_t* y) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), H = p.hidden();
  const int E = R * L;
  const uint64_t C = p.v[P_ROWS_PER_SOURCE];
  const int warps = kReduceThreads / kWarp;
  const int lane = threadIdx.x & 31;
  const bool vec = (H % 8) == 0 && (reinterpret_cast<uint64_t>(y) & 15) == 0;
  // Protocol version 2's order (core's combineToken): per rank ascending, its slots in slot order
  // into an fp32 partial rounded to bf16; the partials summed in fp32, rounded once.
  for (int t = blockIdx.x * warps + (threadIdx.x >> 5); t < T; t += gridDim.x * warps) {
    const int32_t* idx = topkIdx + static_cast<uint64_t>(t) * K;
    const float* w = topkWeights + static_cast<uint64_t>(t) * K;
    if (vec && K <= 8) {
      // Lane k: slot k's rank, row and weight; then the used slots in (rank, slot) order.
      const int ex = lane < K ? idx[lane] : -1;
      const int rk = ex >= 0 ? ex / L : 0;
      const uint16_t* row =
          ex >= 0 ? backRecv + (static_cast<uint64_t>(rk) * C + routeRow(c.contig, E, t, lane, K, ex)) * H : nullptr;
      const float wk = ex >= 0 ? w[lane] : 0.0f;
      int key = ex >= 0 ? rk * 32 + lane : INT_MAX;
      int n = 0;
      const uint16_t* src[8];
      float wt[8];
      bool opens[8];  // the slot at position i starts a new rank
      int last = -1;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int m = __reduce_min_sync(kFullMask, key);
        const int k = m == INT_MAX ? 0 : (m & 31);
        src[i] = reinterpret_cast<const uint16_t*>(__shfl_sync(kFullMask, reinterpret_cast<uint64_t>(row), k));
        wt[i] = __shfl_sync(kFullMask, wk, k);
        opens[i] = m != INT_MAX && (m >> 5) != last;
        if (m != INT_MAX) {
          last = m >> 5;
          ++n;
        }
        if (key == m) key = INT_MAX;
      }
      for (int h0 = lane * 8; h0 < H; h0 += 256) {
        uint4 v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = i < n ? *reinterpret_cast<const uint4*>(src[i] + h0) : make_uint4(0, 0, 0, 0);
        float acc[8], part[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[j] = part[j] = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          if (i >= n) break;
          if (i > 0 && opens[i]) {  // close the previous rank's partial
#pragma unroll
            for (int j = 0; j < 8; ++j) {
              acc[j] = __fadd_rn(acc[j], bf16ToFloat(floatToBf16(part[j])));
              part[j] = 0.0f;
            }
          }
          accumulateBf16x8(part, wt[i], v[i]);
        }
        if (n > 0) {
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[j] = __fadd_rn(acc[j], bf16ToFloat(floatToBf16(part[j])));
        }
        *reinterpret_cast<uint4*>(y + static_cast<uint64_t>(t) * H + h0) = packBf16x8(acc);
      }
      continue;
    }
    for (int h = lane; h < H; h += kWarp) {  // scalar: more than 8 slots, or unaligned rows
      float acc = 0.0f;
      int done = -1;  // ranks below and at `done` are summed
      while (true) {
        int r = R;
        for (int k = 0; k < K; ++k) {
          const int ex = idx[k];
          if (ex >= 0 && ex / L > done && ex / L < r) r = ex / L;
        }
        if (r == R) break;
        float part = 0.0f;
        for (int k = 0; k < K; ++k) {
          const int ex = idx[k];
          if (ex < 0 || ex / L != r) continue;
          const uint64_t row = static_cast<uint64_t>(r) * C + routeRow(c.contig, E, t, k, K, ex);
          part = __fadd_rn(part, __fmul_rn(w[k], bf16ToFloat(backRecv[row * H + h])));
        }
        acc = __fadd_rn(acc, bf16ToFloat(floatToBf16(part)));
        done = r;
      }
      y[static_cast<uint64_t>(t) * H + h] = floatToBf16(acc);
    }
  }
}

__global__ void __launch_bounds__(kContigThreads) compactKernel(CompactArgs a) {
  const SyContig& g = a.tables;
  const int lane = threadIdx.x & 31;
  const int warps = kContigThreads / kWarp;
  const int total = g.offsets[a.L];
  for (int row = blockIdx.x * warps + (threadIdx.x >> 5); row < total; row += gridDim.x * warps) {
    const RowSource r = sourceOfRow(row, g.offsets, g.expertCount, g.pairStart, g.stageStart, a.L, a.R);
    uint8_t* ox = a.outX + static_cast<uint64_t>(row) * a.rowBytes;
    uint8_t* os = a.outScales ? a.outScales + static_cast<uint64_t>(row) * a.scaleBytes : nullptr;
    int4* om = reinterpret_cast<int4*>(a.outMeta) + row;
    if (r.source >= 0) {
      const uint64_t from = static_cast<uint64_t>(r.from);
      warpCopy(ox, a.stageX + from * a.rowBytes, a.rowBytes, lane);
      if (os) warpCopy(os, a.stageScales + from * a.scaleBytes, a.scaleBytes, lane);
      if (lane == 0) *om = reinterpret_cast<const int4*>(a.stageMeta)[from];
    } else if (lane == 0) {  // padding: meta only (x and scales unspecified, as the protocol's)
      *om = make_int4(-1, -1, -1, r.expert);
    }
  }
}

}  // namespace

cudaError_t launchCompact(const CompactArgs& a, cudaStream_t stream) {
  compactKernel<<<a.tables.blocks, kContigThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t launchBaselinePack(const BaselineCtx& ctx, const uint8_t* x, const float* scales, const int32_t* topkIdx,
                               int numTokens, uint8_t* sendX, uint8_t* sendScales, uint8_t* sendMeta,
                               cudaStream_t stream) {
  packKernel<<<ctx.contig.blocks, kThreads, 0, stream>>>(ctx, x, scales, topkIdx, numTokens, sendX, sendScales,
                                                         sendMeta);
  return cudaGetLastError();
}

cudaError_t launchBaselineGather(const BaselineCtx& ctx, const uint8_t* outMeta, const uint8_t* expertOut,
                                 uint8_t* backSend, cudaStream_t stream) {
  gatherKernel<<<ctx.contig.blocks, kThreads, 0, stream>>>(ctx, outMeta, expertOut, backSend);
  return cudaGetLastError();
}

cudaError_t launchBaselineReduce(const BaselineCtx& ctx, const int32_t* topkIdx, const float* topkWeights, int numTokens,
                                 const uint8_t* backRecv, void* y, cudaStream_t stream) {
  reduceKernel<<<2 * ctx.contig.blocks, kReduceThreads, 0, stream>>>(
      ctx, topkIdx, topkWeights, numTokens, reinterpret_cast<const uint16_t*>(backRecv), static_cast<uint16_t*>(y));
  return cudaGetLastError();
}

}  // namespace sy
