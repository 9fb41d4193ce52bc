// Dispatch send (contiguous layout): every (token, slot) this rank owns goes to its expert's rank,
// into that rank's staging block for this source, rows ordered by (local expert, token), exactly
// as core's reference (backend/reference/dispatchSend.ts); then one signal per destination.
//
///  x            Shape: [T, hidden]        dispatch dtype (fp8 after quantisation, or passthrough)
///  scales       Shape: [T, hidden / 128]  fp32, fp8 dispatch only
///  topkIdx      Shape: [T, K]             int32 global expert ids, -1 = unused
///  dispatchX    Shape: [R, C, hidden]     on the destination: row j from source `rank` at [rank][j]
///  dispatchScales Shape: [R, C, hidden/128] fp32 (fp8 dispatch)
///  dispatchMeta Shape: [R, C, 4]          int32 (srcRank, srcToken, topkSlot, localExpert)
///  countSignal  Shape: [R, L]             u32 on the destination at [rank][e] (written by the route)
///  dispatchSignal Shape: [R]              u32 on the destination at [rank]: (epoch, rows staged)
//
// Launches, all within ctx.contig.blocks blocks (the SM budget) except the route's one block per
// 512 tokens: quantise (quantize.cu, bf16 -> fp8 only, once per
// token), route (dispatch_route.cu: rows, counts, count signals), then the copy: one
// warp per (token, slot), 16-byte NVLink stores straight into the peer's heap; the last block to
// finish writes every destination's dispatchSignal (release, system scope) after a system fence.
#include "contiguous.cuh"
#include "launch.h"
#include "launch_contiguous.h"
#include "signal.cuh"
#include "stage_row.cuh"

namespace sy {
namespace {

constexpr int kThreads = kContigThreads;
constexpr int kWarps = kThreads / kWarp;

__global__ void __launch_bounds__(kThreads) contigSendKernel(SyCtx c, const uint8_t* x, const float* scales,
                                                           const int32_t* topkIdx, int T) {
  const SyParams& p = c.p;
  const SyContig& g = c.contig;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), dp = p.dpSize();
  const int E = R * L;
  const uint64_t C = p.v[P_ROWS_PER_SOURCE];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  const int mine = c.rank % dp;
  __shared__ bool sLast;

  if (!hasError(c.state)) {
    const uint64_t entries = static_cast<uint64_t>(T) * K;
    for (uint64_t q = static_cast<uint64_t>(blockIdx.x) * kWarps + warp; q < entries;
         q += static_cast<uint64_t>(gridDim.x) * kWarps) {
      const int t = static_cast<int>(q / K);
      const int k = static_cast<int>(q % K);
      const int ex = topkIdx[q];
      if (ex < 0 || ex >= E || t % dp != mine) continue;
      const int dst = ex / L;
      const uint64_t slot = static_cast<uint64_t>(c.rank) * C + routeRow(g, E, t, k, K, ex);
      stageRow(p, c.peers[dst], slot, x, scales, t, make_int4(c.rank, t, k, ex % L), lane);
    }
  }

  // Every row of every block is out before any destination hears "done".
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    sLast = atomicAdd(&g.done[D_SEND], 1u) == gridDim.x - 1;
    if (sLast) {
      g.done[D_SEND] = 0;
      __threadfence_system();
    }
  }
  __syncthreads();
  if (!sLast || hasError(c.state)) return;
  for (int dst = threadIdx.x; dst < R; dst += kThreads) {
    uint32_t* sig = reinterpret_cast<uint32_t*>(c.peers[dst] + p.offset(R_DISPATCH_SIGNAL)) + c.rank;
    stReleaseSys(sig, encodeSignal(epoch, static_cast<uint32_t>(__ldcg(&g.staged[dst]))));
  }
}

}  // namespace

cudaError_t launchDispatchSendContiguous(const SyCtx& ctx, const void* x, const float* scales,
                                         const int32_t* topkIdx, int numTokens, cudaStream_t stream,
                                         const RoundStream& rounds) {
  const uint8_t* src = static_cast<const uint8_t*>(x);
  if (ctx.p.quantize()) {
    const cudaError_t rc = launchQuantize(ctx, x, numTokens, ctx.contig.blocks, stream);  // within the SM budget
    if (rc != cudaSuccess) return rc;
    src = ctx.quantX;
    scales = ctx.quantScales;
  }
  cudaError_t rc = launchRoute(ctx, topkIdx, numTokens, true, stream);
  if (rc != cudaSuccess) return rc;
  if (ctx.p.stagingTokens() > 0) {  // bounded staging: the round sender, on its own stream
    rc = cudaEventRecord(rounds.fork, stream);
    if (rc == cudaSuccess) rc = cudaStreamWaitEvent(rounds.stream, rounds.fork, 0);
    if (rc == cudaSuccess) rc = launchDispatchSendRounds(ctx, src, scales, topkIdx, numTokens, rounds.stream);
    if (rc == cudaSuccess) rc = cudaEventRecord(rounds.join, rounds.stream);
    return rc;
  }
  contigSendKernel<<<ctx.contig.blocks, kThreads, 0, stream>>>(ctx, src, scales, topkIdx, numTokens);
  return cudaGetLastError();
}

}  // namespace sy
