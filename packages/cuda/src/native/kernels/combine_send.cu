// Combine send (masked layout): every row this rank's experts received goes back to its token's
// home: combineX[srcToken][slot] on every rank of the source's DP group. Then one signal per home
// rank, combineSignal[rank] = (epoch, rows written to that home).
//
///  expertOut    Shape: [L * R * M, hidden]  bf16, row-aligned with dispatchX (rows without data are ignored)
///  dispatchMeta Shape: [L, R, M, 4]         int32 (srcRank, srcToken, topkSlot, localExpert), this rank's heap
///  counts       Shape: [L, R]               int32 rows per (local expert, source), from dispatch recv
///  combineX     Shape: [M, K, hidden]       bf16 on each home rank: row for (token, slot) at [token][slot]
///  combineSignal Shape: [R]                 u32 on each home rank, at [this rank]
//
// Grid: blocks take (expert, source) pairs in turn; the whole block copies a pair's rows
// (flattened over row x 16-byte vector; one warp per row where puts are needed). Each block fences its
// stores and counts itself done; the last block to finish writes every home's signal.
#include "copy.cuh"
#include "launch.h"
#include "signal.cuh"
#include "transport.cuh"

namespace sy {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / kWarp;
constexpr int kChunk = 256;  // rows whose metadata a block stages in shared memory at a time

/// kPuts: some home needs NVSHMEM puts (c.staging set). The all-NVLink instantiation carries no put
/// code, which would otherwise double its registers (128 vs 64: one block per SM instead of two).
template <bool kPuts>
__global__ void __launch_bounds__(kThreads, kPuts ? 1 : 2) combineSendKernel(SyCtx c, const uint8_t* expertOut) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), H = p.hidden(), dp = p.dpSize();
  const int M = p.maxTokens();
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  if (hasError(c.state)) return;
  const uint64_t rowBytes = static_cast<uint64_t>(H) * 2;
  const int4* meta = reinterpret_cast<const int4*>(c.heap + p.offset(R_DISPATCH_META));
  bool putIssued = false;

  __shared__ int4 sMeta[kChunk];
  const uint64_t align = reinterpret_cast<uint64_t>(expertOut) | rowBytes;
  for (int pair = blockIdx.x; pair < L * R; pair += gridDim.x) {
    const int n = c.counts[pair];
    for (int c0 = 0; c0 < n; c0 += kChunk) {
      const int m = min(kChunk, n - c0);
      const uint64_t row0 = static_cast<uint64_t>(pair) * M + c0;
      for (int q = threadIdx.x; q < m; q += kThreads) sMeta[q] = meta[row0 + q];
      __syncthreads();
      if constexpr (!kPuts) {
        // Every home is reachable with stores: the whole block copies the chunk, once per DP rank.
        for (int h = 0; h < dp; ++h) {
          blockCopyRows(m, static_cast<uint32_t>(rowBytes), align, [&](int q, uint8_t*& d, const uint8_t*& src) {
            const int4 mm = sMeta[q];
            const int home = mm.x / dp * dp + h;
            d = c.peers[home] + p.offset(R_COMBINE_X) + (static_cast<uint64_t>(mm.y) * K + mm.z) * rowBytes;
            src = expertOut + (row0 + q) * rowBytes;
          });
        }
      } else {
        // Some homes need puts: one warp per row, staged in symmetric memory for those.
        for (int q = warp; q < m; q += kWarps) {
          const int4 mm = sMeta[q];
          const uint64_t row = row0 + q;
          const uint8_t* src = expertOut + row * rowBytes;
          const uint64_t dstOff = p.offset(R_COMBINE_X) + (static_cast<uint64_t>(mm.y) * K + mm.z) * rowBytes;
          const int group = mm.x / dp * dp;
          bool staged = false;
          for (int home = group; home < group + dp; ++home) {
            uint8_t* peer = c.peers[home];
            if (peer != nullptr) {
              warpCopy(peer + dstOff, src, rowBytes, lane);
            } else {
              uint8_t* stage = c.staging + row * rowBytes;
              if (!staged) {
                warpCopy(stage, src, rowBytes, lane);
                __threadfence_system();
                __syncwarp();
                staged = true;
              }
              putWarp(c.heap + dstOff, stage, rowBytes, home);
              putIssued = true;
            }
          }
        }
      }
      __syncthreads();
    }
  }

  __shared__ bool sLast;
  __shared__ int sAnyPut;
  if (threadIdx.x == 0) sAnyPut = 0;
  __syncthreads();
  if (putIssued) sAnyPut = 1;
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    if (kPuts && sAnyPut) putQuiet();
    const uint32_t old = atomicAdd(&c.state->combineSendDone, 1u);
    sLast = old == gridDim.x - 1;
    if (sLast) {
      c.state->combineSendDone = 0;
      __threadfence_system();
    }
  }
  __syncthreads();
  if (!sLast) return;
  // Rows written to home h: every (e, s) with s in h's DP group. The whole block sums them in
  // shared memory, kThreads homes at a time (version 1 had one thread loop over the L counts of
  // its home: L dependent L2 loads, ~20 us at L = 64, which was most of a 1-token combine send).
  __shared__ uint32_t sSent[kThreads];
  for (int h0 = 0; h0 < R; h0 += kThreads) {
    sSent[threadIdx.x] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < L * R; i += kThreads) {
      const int s = i % R;
      const int group = s / dp * dp;
      const int lo = max(group, h0), hi = min(group + dp, h0 + kThreads);
      if (lo >= hi) continue;
      const uint32_t n = static_cast<uint32_t>(__ldcg(&c.counts[i]));
      if (n == 0) continue;
      for (int home = lo; home < hi; ++home) atomicAdd(&sSent[home - h0], n);
    }
    __syncthreads();
    const int home = h0 + threadIdx.x;
    if (home < R) {
      const uint32_t sent = sSent[threadIdx.x];
      if (c.stats.combineSent != nullptr) c.stats.combineSent[home] = sent;
      const uint32_t word = encodeSignal(epoch, sent);
      const uint64_t sigOff = p.offset(R_COMBINE_SIGNAL) + static_cast<uint64_t>(c.rank) * 4;
      uint8_t* peer = c.peers[home];
      if (peer != nullptr) {
        stReleaseSys(reinterpret_cast<uint32_t*>(peer + sigOff), word);
      } else if constexpr (kPuts) {
        putSignal(reinterpret_cast<uint32_t*>(c.heap + sigOff), word, home);
      }
    }
    __syncthreads();
  }
}

}  // namespace

cudaError_t launchCombineSend(const SyCtx& ctx, const void* expertOut, int blocks, cudaStream_t stream) {
  const uint8_t* out = static_cast<const uint8_t*>(expertOut);
  if (ctx.staging != nullptr) combineSendKernel<true><<<blocks, kThreads, 0, stream>>>(ctx, out);
  else combineSendKernel<false><<<blocks, kThreads, 0, stream>>>(ctx, out);
  return cudaGetLastError();
}

cudaError_t combineSendOccupancy(int* blocksPerSm) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocksPerSm, combineSendKernel<false>, kThreads, 0);
}

}  // namespace sy
