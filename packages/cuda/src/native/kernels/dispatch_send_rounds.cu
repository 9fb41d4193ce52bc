// Dispatch send with bounded staging (contiguous layout, layout stagingTokens Q > 0): one kernel,
// launched by dispatch send on the endpoint's side stream, that carries the source's tokens to
// every destination in ceil(M / Q) rounds. Round k holds tokens [kQ, (k+1)Q) and goes into buffer
// k % 2 of the destination's staging; from round 2 on it waits until that destination consumed
// round k - 2 (its credit word). Each destination has its own blocks and its own pace, so a rank's
// dispatch recv needs only the other ranks' dispatch send, never their dispatch recv. Joined back
// into the caller's stream by combine recv (endpoint.cc).
//
///  x            Shape: [T, hidden]        dispatch dtype (fp8 after quantisation, or passthrough)
///  scales       Shape: [T, hidden / 128]  fp32, fp8 dispatch only
///  topkIdx      Shape: [T, K]             int32 global expert ids, -1 = unused
///  dispatchX    Shape: [2, R, Cq, hidden] on the destination: round k's rows at [k % 2][rank][slot]
///  dispatchScales Shape: [2, R, Cq, hidden/128], dispatchMeta Shape: [2, R, Cq, 4] (index, srcToken, slot, localExpert)
///  dispatchSignal Shape: [3, R]           u32 on the destination at [k % 2][rank]: (epoch, rows of round k);
///                                         [2][dst] here: (epoch, rounds dst consumed), written by dst
//
// Grid: R groups of G blocks, group d for destination d; one warp per (token, slot). A row's slot
// in the round buffer comes from an atomic per (destination, buffer), in any order: the receiver
// places each row by its index (routeRow - regionBase, its rank among this source's rows for its
// expert). The last block of the group to finish a round writes its signal after a system fence.
#include "contiguous.cuh"
#include "launch_contiguous.h"
#include "signal.cuh"
#include "stage_row.cuh"

namespace sy {
namespace {

constexpr int kThreads = kContigThreads;
constexpr int kWarps = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) roundSendKernel(SyCtx c, const uint8_t* x, const float* scales,
                                                          const int32_t* topkIdx, int T) {
  const SyParams& p = c.p;
  const SyContig& g = c.contig;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), dp = p.dpSize();
  const int E = R * L;
  const int Q = p.stagingTokens(), rounds = p.stagingRounds();
  const uint64_t Cq = p.roundRows();
  const int G = gridDim.x / R;
  const int dst = blockIdx.x / G, gb = blockIdx.x % G;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  const int mine = c.rank % dp;
  const uint32_t* credit = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_DISPATCH_SIGNAL)) + 2 * R + dst;
  uint8_t* base = c.peers[dst];
  __shared__ bool sLast;

  for (int k = 0; k < rounds; ++k) {
    const int b = k & 1;
    // Buffer b on dst is free once dst consumed round k - 2.
    if (k >= 2 && threadIdx.x == 0 && !hasError(c.state)) {
      // Twice the timeout: when a rank is missing, the receive kernels' own error (naming it) comes first.
      waitAtLeast(credit, epoch, static_cast<uint32_t>(k - 1), c.state, 2 * c.timeoutNs, S_DISPATCH_RECV,
                  static_cast<uint32_t>(dst), R_DISPATCH_SIGNAL);
    }
    __syncthreads();
    const int t0 = k * Q;
    const int t1 = T < t0 + Q ? T : t0 + Q;
    if (!hasError(c.state) && t0 < t1) {
      const uint64_t buffer = static_cast<uint64_t>(b) * R + c.rank;  // [b][rank] on dst
      const uint64_t last = static_cast<uint64_t>(t1) * K;
      for (uint64_t q = static_cast<uint64_t>(t0) * K + static_cast<uint64_t>(gb) * kWarps + warp; q < last;
           q += static_cast<uint64_t>(G) * kWarps) {
        const int t = static_cast<int>(q / K);
        const int kk = static_cast<int>(q % K);
        const int ex = topkIdx[q];
        if (ex < 0 || ex >= E || ex / L != dst || t % dp != mine) continue;
        int slot = 0;
        if (lane == 0) slot = atomicAdd(&g.roundFill[dst * 2 + b], 1);
        slot = __shfl_sync(0xffffffffu, slot, 0);
        const int index = routeRow(g, E, t, kk, K, ex) - g.regionBase[ex];
        stageRow(p, base, buffer * Cq + static_cast<uint64_t>(slot), x, scales, t, make_int4(index, t, kk, ex % L),
                 lane);
      }
    }
    // Every row of the group's blocks is out before dst hears of the round.
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
      sLast = atomicAdd(&g.roundDone[dst * 2 + b], 1u) == static_cast<uint32_t>(G - 1);
      if (sLast) {
        __threadfence();
        const uint32_t rows = static_cast<uint32_t>(atomicExch(&g.roundFill[dst * 2 + b], 0));
        g.roundDone[dst * 2 + b] = 0;  // buffer b's next round starts after dst's credit for this one
        __threadfence();
        if (!hasError(c.state)) {
          uint32_t* sig = reinterpret_cast<uint32_t*>(base + p.offset(R_DISPATCH_SIGNAL)) + b * R + c.rank;
          stReleaseSys(sig, encodeSignal(epoch, rows));
        }
      }
    }
    __syncthreads();
  }
}

}  // namespace

/// Blocks per destination of the round sender: the SM budget shared by the R destinations.
int roundSendBlocksPerPeer(const SyCtx& ctx) {
  const int g = ctx.contig.blocks / ctx.p.ranks();
  return g > 0 ? g : 1;
}

cudaError_t loadRoundSendKernels() { return loadKernels(roundSendKernel); }

cudaError_t launchDispatchSendRounds(const SyCtx& ctx, const uint8_t* x, const float* scales, const int32_t* topkIdx,
                                     int numTokens, cudaStream_t stream) {
  const int blocks = roundSendBlocksPerPeer(ctx) * ctx.p.ranks();
  roundSendKernel<<<blocks, kThreads, 0, stream>>>(ctx, x, scales, topkIdx, numTokens);
  return cudaGetLastError();
}

}  // namespace sy
