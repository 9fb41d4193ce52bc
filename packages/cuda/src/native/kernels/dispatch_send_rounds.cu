// Dispatch send, one round of bounded staging (contiguous layout, layout stagingTokens Q > 0):
// the source's tokens [round * Q, (round + 1) * Q) go into buffer round % 2 of their
// destinations' staging, then one signal per destination. Rounds 0 and 1 run in dispatch send;
// round k >= 2 runs in dispatch recv, after this rank consumed round k - 2, and first waits until
// every destination consumed its round k - 2 (the credit word [2][dst] in this rank's heap).
//
///  x            Shape: [T, hidden]        dispatch dtype (fp8 after quantisation, or passthrough)
///  scales       Shape: [T, hidden / 128]  fp32, fp8 dispatch only
///  topkIdx      Shape: [T, K]             int32 global expert ids, -1 = unused
///  dispatchX    Shape: [2, R, Cq, hidden] on the destination: this round's rows at [round % 2][rank][slot]
///  dispatchScales Shape: [2, R, Cq, hidden/128], dispatchMeta Shape: [2, R, Cq, 4] (index, srcToken, slot, localExpert)
///  dispatchSignal Shape: [3, R]           u32 on the destination at [round % 2][rank]: (epoch, rows of the round);
///                                         [2][dst] here: (epoch, rounds dst consumed)
//
// Grid: ctx.contig.blocks blocks (the SM budget), one warp per (token, slot). A row's slot in the
// round buffer comes from an atomic per destination (any order: the receiver places each row by
// its index, routeRow - regionBase, the row's rank among this source's rows for its expert). The
// last block to finish writes every destination's round signal after a system fence.
#include "contiguous.cuh"
#include "copy.cuh"
#include "launch_contiguous.h"
#include "signal.cuh"

namespace sy {
namespace {

constexpr int kThreads = kContigThreads;
constexpr int kWarps = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) roundSendKernel(SyCtx c, const uint8_t* x, const float* scales,
                                                          const int32_t* topkIdx, int T, int round) {
  const SyParams& p = c.p;
  const SyContig& g = c.contig;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), dp = p.dpSize(), S = p.scalesPerRow();
  const int E = R * L;
  const int Q = p.stagingTokens();
  const uint64_t Cq = p.roundRows();
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  const uint64_t rowBytes = p.rowBytes();
  const uint64_t scaleBytes = static_cast<uint64_t>(S) * 4;
  const int mine = c.rank % dp;
  const uint64_t buffer = static_cast<uint64_t>(round & 1) * R + c.rank;  // [buffer][rank] on every destination
  uint32_t* words = reinterpret_cast<uint32_t*>(c.heap + p.offset(R_DISPATCH_SIGNAL));
  __shared__ bool sLast;

  // Buffer round % 2 on every destination is free once it consumed round - 2.
  if (round >= 2) {
    for (int dst = threadIdx.x; dst < R; dst += kThreads) {
      waitAtLeast(words + 2 * R + dst, epoch, static_cast<uint32_t>(round - 1), c.state, c.timeoutNs,
                  S_DISPATCH_RECV, static_cast<uint32_t>(dst), R_DISPATCH_SIGNAL);
    }
    __syncthreads();
  }

  const int t0 = round * Q;
  const int t1 = T < t0 + Q ? T : t0 + Q;
  if (!hasError(c.state) && t0 < t1) {
    const uint64_t first = static_cast<uint64_t>(t0) * K, last = static_cast<uint64_t>(t1) * K;
    for (uint64_t q = first + static_cast<uint64_t>(blockIdx.x) * kWarps + warp; q < last;
         q += static_cast<uint64_t>(gridDim.x) * kWarps) {
      const int t = static_cast<int>(q / K);
      const int k = static_cast<int>(q % K);
      const int ex = topkIdx[q];
      if (ex < 0 || ex >= E || t % dp != mine) continue;
      const int dst = ex / L;
      int slot = 0;
      if (lane == 0) slot = atomicAdd(&g.roundFill[dst], 1);
      slot = __shfl_sync(0xffffffffu, slot, 0);
      const uint64_t row = buffer * Cq + static_cast<uint64_t>(slot);
      const int index = routeRow(g, E, t, k, K, ex) - g.regionBase[ex];
      uint8_t* base = c.peers[dst];
      warpCopy(base + p.offset(R_DISPATCH_X) + row * rowBytes, x + static_cast<uint64_t>(t) * rowBytes, rowBytes,
               lane);
      if (S) {
        warpCopy(base + p.offset(R_DISPATCH_SCALES) + row * scaleBytes,
                 reinterpret_cast<const uint8_t*>(scales) + static_cast<uint64_t>(t) * scaleBytes, scaleBytes, lane);
      }
      if (lane == 0) reinterpret_cast<int4*>(base + p.offset(R_DISPATCH_META))[row] = make_int4(index, t, k, ex % L);
    }
  }

  // Every row of every block is out before any destination hears of the round.
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) sLast = atomicAdd(&g.done[D_SEND], 1u) == gridDim.x - 1;
  __syncthreads();
  if (!sLast) return;
  __threadfence();
  const bool failed = hasError(c.state);
  for (int dst = threadIdx.x; dst < R; dst += kThreads) {
    const uint32_t rows = static_cast<uint32_t>(atomicExch(&g.roundFill[dst], 0));
    if (failed) continue;
    uint32_t* sig = reinterpret_cast<uint32_t*>(c.peers[dst] + p.offset(R_DISPATCH_SIGNAL)) + buffer;
    stReleaseSys(sig, encodeSignal(epoch, rows));
  }
  if (threadIdx.x == 0) g.done[D_SEND] = 0;  // next round, next step, graph replays
}

}  // namespace

cudaError_t launchDispatchSendRound(const SyCtx& ctx, const RoundSource& src, int round, cudaStream_t stream) {
  roundSendKernel<<<ctx.contig.blocks, kThreads, 0, stream>>>(ctx, src.x, src.scales, src.topkIdx, src.tokens,
                                                              round);
  return cudaGetLastError();
}

}  // namespace sy
