// Dispatch receive, one round of bounded staging (contiguous layout, layout stagingTokens Q > 0):
// waits for every source's rows of the round in buffer round % 2, writes each row straight to its
// final place in the compact output, clears the round's signal words, then tells every source the
// buffer is free again (credit word [2][rank] in the source's heap = rounds consumed).
//
///  dispatchSignal Shape: [3, R]           u32 here at [round % 2][src]: (epoch, rows of the round)
///  dispatchX      Shape: [2, R, Cq, hidden] staging, dispatchScales [2, R, Cq, hidden/128],
///  dispatchMeta   Shape: [2, R, Cq, 4]    (index among src's rows for the expert, srcToken, slot, localExpert)
///  counts         Shape: [L, R]           rows per (local expert, source), from the count signals (waitKernel)
///  recvX          Shape: [N, hidden]      row pairStart[e][src] + index; recvScales [N, hidden/128], recvMeta [N, 4]
//
// Grid: ctx.contig.blocks blocks (the SM budget); every block waits for the R signal words (threads
// 0..R-1, bounded by %globaltimer), then one warp per staged row. A row whose expert or index lies
// outside the announced counts is a protocol error (nothing written for it). The last block to
// finish clears and credits.
#include "contiguous.cuh"
#include "copy.cuh"
#include "launch_contiguous.h"
#include "signal.cuh"

namespace sy {
namespace {

constexpr int kThreads = kContigThreads;
constexpr int kWarps = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) roundRecvKernel(SyCtx c, int round) {
  const SyParams& p = c.p;
  const SyContig& g = c.contig;
  const int R = p.ranks(), L = p.localExperts(), S = p.scalesPerRow();
  const uint64_t Cq = p.roundRows();
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  const uint64_t rowBytes = p.rowBytes();
  const uint64_t scaleBytes = static_cast<uint64_t>(S) * 4;
  const int b = round & 1;
  uint32_t* words = reinterpret_cast<uint32_t*>(c.heap + p.offset(R_DISPATCH_SIGNAL));
  extern __shared__ int32_t sStart[];  // [R + 1]: first row of each source in this round's row space
  __shared__ bool sLast;

  for (int s = threadIdx.x; s < R; s += kThreads) {
    const int n = hasError(c.state) ? -1
                                    : waitSignal(words + b * R + s, epoch, static_cast<uint32_t>(Cq), c.state,
                                                 c.timeoutNs, S_DISPATCH_RECV, static_cast<uint32_t>(s),
                                                 R_DISPATCH_SIGNAL);
    sStart[s + 1] = n < 0 ? 0 : n;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    sStart[0] = 0;
    for (int s = 0; s < R; ++s) sStart[s + 1] += sStart[s];
  }
  __syncthreads();

  const int total = sStart[R];
  const uint8_t* stageX = c.heap + p.offset(R_DISPATCH_X);
  const uint8_t* stageScales = c.heap + p.offset(R_DISPATCH_SCALES);
  const int4* stageMeta = reinterpret_cast<const int4*>(c.heap + p.offset(R_DISPATCH_META));
  uint8_t* outX = g.recvX;
  uint8_t* outScales = g.recvScales;
  int4* outMeta = reinterpret_cast<int4*>(g.recvMeta);
  if (!hasError(c.state)) {
    for (int i = blockIdx.x * kWarps + warp; i < total; i += gridDim.x * kWarps) {
      int s = 0;
      while (sStart[s + 1] <= i) ++s;
      const uint64_t from = (static_cast<uint64_t>(b) * R + s) * Cq + static_cast<uint64_t>(i - sStart[s]);
      const int4 m = stageMeta[from];  // (index, srcToken, slot, localExpert)
      const int e = m.w;
      if (e < 0 || e >= L || m.x < 0 || m.x >= c.counts[e * R + s]) {
        if (lane == 0) {
          recordError(c.state, E_COUNT_MISMATCH, S_DISPATCH_RECV, static_cast<uint32_t>(s), R_DISPATCH_META,
                      static_cast<uint32_t>(m.x), static_cast<uint32_t>(e));
        }
        continue;
      }
      const uint64_t row = static_cast<uint64_t>(g.pairStart[e * R + s] + m.x);
      warpCopy(outX + row * rowBytes, stageX + from * rowBytes, rowBytes, lane);
      if (S) warpCopy(outScales + row * scaleBytes, stageScales + from * scaleBytes, scaleBytes, lane);
      if (lane == 0) outMeta[row] = make_int4(s, m.y, m.z, e);
    }
  }

  // Every block has read its rows of the buffer before any source may overwrite it.
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) sLast = atomicAdd(&g.done[D_ROUND_RECV], 1u) == gridDim.x - 1;
  __syncthreads();
  if (!sLast) return;
  for (int s = threadIdx.x; s < R; s += kThreads) words[b * R + s] = 0;
  __threadfence_system();
  __syncthreads();
  if (!hasError(c.state)) {
    for (int s = threadIdx.x; s < R; s += kThreads) {
      uint32_t* credit = reinterpret_cast<uint32_t*>(c.peers[s] + p.offset(R_DISPATCH_SIGNAL)) + 2 * R + c.rank;
      stReleaseSys(credit, encodeSignal(epoch, static_cast<uint32_t>(round + 1)));
    }
  }
  if (threadIdx.x == 0) g.done[D_ROUND_RECV] = 0;
}

}  // namespace

cudaError_t launchDispatchRecvRound(const SyCtx& ctx, int round, cudaStream_t stream) {
  const size_t smem = sizeof(int32_t) * (static_cast<size_t>(ctx.p.ranks()) + 1);
  roundRecvKernel<<<ctx.contig.blocks, kThreads, smem, stream>>>(ctx, round);
  return cudaGetLastError();
}

cudaError_t loadRoundKernels() { return loadKernels(roundRecvKernel); }

}  // namespace sy
