// Combine send (contiguous layout): every compact row this rank's experts received goes back to
// its token's home, combineX[srcToken][slot] on every rank of the source's DP group; then one
// signal per home rank (combineSignal[rank] = rows written to that home), as the masked stage.
//
///  expertOut    Shape: [N, hidden]   bf16, row-aligned with recvX (padding rows are ignored)
///  recvMeta     Shape: [N, 4]        int32 (srcRank, srcToken, topkSlot, localExpert), -1 on padding (local)
///  counts       Shape: [L, R]        int32 rows per (local expert, source), from dispatch recv
///  combineX     Shape: [M, K, hidden] bf16 on each home rank
///  combineSignal Shape: [R]          u32 on each home rank, at [this rank]
//
// Grid: ctx.contig.blocks blocks (the SM budget), one warp per compact row with 16-byte NVLink
// stores; the last block to finish fences and writes every home's signal (release, system scope).
#include "contiguous.cuh"
#include "copy.cuh"
#include "launch_contiguous.h"
#include "signal.cuh"

namespace sy {
namespace {

constexpr int kThreads = kContigThreads;
constexpr int kWarps = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) contigCombineSendKernel(SyCtx c, const uint8_t* expertOut) {
  const SyParams& p = c.p;
  const SyContig& g = c.contig;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), dp = p.dpSize();
  const int lane = threadIdx.x & 31;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  const uint64_t rowBytes = static_cast<uint64_t>(p.hidden()) * 2;
  const int4* meta = reinterpret_cast<const int4*>(g.recvMeta);
  __shared__ bool sLast;

  if (!hasError(c.state)) {
    const int total = g.offsets[L];
    for (int row = blockIdx.x * kWarps + (threadIdx.x >> 5); row < total; row += gridDim.x * kWarps) {
      const int4 m = meta[row];
      if (m.x < 0) continue;  // padding
      const uint8_t* src = expertOut + static_cast<uint64_t>(row) * rowBytes;
      const uint64_t dstOff = p.offset(R_COMBINE_X) + (static_cast<uint64_t>(m.y) * K + m.z) * rowBytes;
      const int group = m.x / dp * dp;
      for (int home = group; home < group + dp; ++home) warpCopy(c.peers[home] + dstOff, src, rowBytes, lane);
    }
  }

  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    sLast = atomicAdd(&g.done[D_COMBINE_SEND], 1u) == gridDim.x - 1;
    if (sLast) {
      g.done[D_COMBINE_SEND] = 0;
      __threadfence_system();
    }
  }
  __syncthreads();
  if (!sLast) return;
  // Rows written to home h: every (e, s) with s in h's DP group.
  for (int home = threadIdx.x; home < R; home += kThreads) {
    const int group = home / dp * dp;
    uint32_t sent = 0;
    for (int e = 0; e < L; ++e) {
      for (int s = group; s < group + dp; ++s) sent += static_cast<uint32_t>(c.counts[e * R + s]);
    }
    if (c.stats.combineSent != nullptr) c.stats.combineSent[home] = sent;
    uint32_t* sig = reinterpret_cast<uint32_t*>(c.peers[home] + p.offset(R_COMBINE_SIGNAL)) + c.rank;
    stReleaseSys(sig, encodeSignal(epoch, sent));
  }
}

}  // namespace

cudaError_t launchCombineSendContiguous(const SyCtx& ctx, const void* expertOut, cudaStream_t stream) {
  contigCombineSendKernel<<<ctx.contig.blocks, kThreads, 0, stream>>>(ctx, static_cast<const uint8_t*>(expertOut));
  return cudaGetLastError();
}

cudaError_t loadCombineSendContiguousKernels() { return loadKernels(contigCombineSendKernel); }

}  // namespace sy
