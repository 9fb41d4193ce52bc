// Dispatch receive (contiguous layout): waits for every source, checks its signals, lays the
// rows out per local expert, compactly, as core's reference (backend/reference/dispatchRecv.ts):
// blocks in expert order, rows by (srcRank, srcToken), each block padded to expertAlignment with
// zero rows whose meta is (-1, -1, -1, e).
//
///  dispatchSignal Shape: [R]              u32 (epoch, rows staged + 1) from each source
///  countSignal    Shape: [R, L]           u32 (epoch, rows for expert e + 1) from each source
///  dispatchX      Shape: [R, C, hidden]   staging (symmetric), written by the sources
///  dispatchScales Shape: [R, C, hidden/128], dispatchMeta Shape: [R, C, 4]
///  recvX          Shape: [N, hidden]      output (ctx.contig.recvX), N = R * C + L * (expertAlignment - 1),
///                                         or exactly offsets[L] rows (exact output)
///  recvScales     Shape: [N, hidden/128], recvMeta Shape: [N, 4]
///  counts         Shape: [L, R]           int32 out: rows per (local expert, source)
//
// Bounded staging (stagingTokens > 0) runs the wait kernel without the dispatchSignal totals and
// the compaction for the padding rows only; its rounds place the rows (dispatch_recv_rounds.cu).
// Exact output enqueues the wait kernel with sy_dispatch_recv and the rest with
// sy_dispatch_recv_into, once the host has read the padded total and sized the caller's buffers.
//
// Two kernels. waitKernel (one block): one thread per source waits for its dispatchSignal, one
// per (source, expert) for its countSignal (all bounded by %globaltimer; errors recorded with
// stage, peer and region), checks that the per-expert counts add up to the announced total, then
// builds the receive tables (contiguous.cuh). compactKernel (ctx.contig.blocks blocks, the SM
// budget): one warp per output row, 16-byte loads and stores, padding rows zeroed.
#include "contiguous.cuh"
#include "copy.cuh"
#include "launch_contiguous.h"
#include "signal.cuh"

namespace sy {
namespace {

constexpr int kWaitThreads = 1024;

__global__ void __launch_bounds__(kWaitThreads) waitKernel(SyCtx c) {
  const SyParams& p = c.p;
  const SyContig& g = c.contig;
  const int R = p.ranks(), L = p.localExperts();
  const int E = R * L;
  const uint32_t C = static_cast<uint32_t>(p.v[P_ROWS_PER_SOURCE]);
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  extern __shared__ int32_t sMem[];
  int32_t* sCounts = sMem;            // [L * R]
  int32_t* sTotal = sCounts + E;      // [R]
  int32_t* sRows = sTotal + R;        // [L]
  int32_t* sOffsets = sRows + L;      // [L + 1]
  __shared__ bool sFailed;

  const uint64_t t0 = globalTimerNs();
  const uint32_t* done = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_DISPATCH_SIGNAL));
  const uint32_t* perExpert = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_COUNT_SIGNAL));
  // Bounded staging announces rows per round (dispatch_recv_rounds.cu): only the counts here.
  const bool bounded = p.stagingTokens() > 0;
  for (int s = threadIdx.x; s < R; s += kWaitThreads) {
    sTotal[s] = hasError(c.state) ? -1
                : bounded         ? 0
                                  : waitSignal(done + s, epoch, C, c.state, c.timeoutNs, S_DISPATCH_RECV,
                                               static_cast<uint32_t>(s), R_DISPATCH_SIGNAL);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < E; i += kWaitThreads) {
    const int s = i / L, e = i % L;
    int n = -1;
    if (sTotal[s] >= 0 && !hasError(c.state)) {
      n = waitSignal(perExpert + i, epoch, static_cast<uint32_t>(p.maxTokens()), c.state, c.timeoutNs,
                     S_DISPATCH_RECV, static_cast<uint32_t>(s), R_COUNT_SIGNAL);
    }
    sCounts[e * R + s] = n < 0 ? 0 : n;
    // Stats: time until both of this (source, expert)'s signals were seen, [L, R] as the masked layout.
    if (c.stats.dispatchWaitNs != nullptr) c.stats.dispatchWaitNs[e * R + s] = globalTimerNs() - t0;
  }
  __syncthreads();
  for (int s = threadIdx.x; s < R; s += kWaitThreads) {
    int sum = 0;
    for (int e = 0; e < L; ++e) sum += sCounts[e * R + s];
    if (!bounded && sTotal[s] >= 0 && sum != sTotal[s]) {
      recordError(c.state, E_COUNT_MISMATCH, S_DISPATCH_RECV, static_cast<uint32_t>(s), R_COUNT_SIGNAL,
                  static_cast<uint32_t>(sTotal[s]), static_cast<uint32_t>(sum));
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) sFailed = hasError(c.state);
  __syncthreads();
  // After an error nothing is delivered: zero counts, so compaction and combine send move nothing.
  for (int i = threadIdx.x; i < E; i += kWaitThreads) {
    if (sFailed) sCounts[i] = 0;
    c.counts[i] = sCounts[i];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < L; e += kWaitThreads) sRows[e] = expertRows(sCounts, e, R);
  __syncthreads();
  if (threadIdx.x == 0) paddedOffsets(sRows, L, static_cast<int>(p.v[P_EXPERT_ALIGNMENT]), sOffsets);
  __syncthreads();
  for (int e = threadIdx.x; e <= L; e += kWaitThreads) g.offsets[e] = sOffsets[e];
  for (int e = threadIdx.x; e < L; e += kWaitThreads) fillExpertTables(sCounts, e, R, sOffsets, g.expertCount, g.pairStart);
  for (int s = threadIdx.x; s < R; s += kWaitThreads) fillSourceTables(sCounts, s, L, R, static_cast<int>(C), g.stageStart);
}

/// The warp writes `bytes` zero bytes at `dst`.
__device__ inline void warpZero(uint8_t* dst, uint64_t bytes, int lane) {
  if (((reinterpret_cast<uint64_t>(dst) | bytes) & 15) == 0) {
    uint4* d = reinterpret_cast<uint4*>(dst);
    for (uint64_t i = lane; i < bytes / 16; i += kWarp) d[i] = make_uint4(0, 0, 0, 0);
  } else {
    for (uint64_t i = lane; i < bytes; i += kWarp) dst[i] = 0;
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
      if (a.padOnly) continue;
      const uint64_t from = static_cast<uint64_t>(r.from);
      warpCopy(ox, a.stageX + from * a.rowBytes, a.rowBytes, lane);
      if (os) warpCopy(os, a.stageScales + from * a.scaleBytes, a.scaleBytes, lane);
      if (lane == 0) *om = reinterpret_cast<const int4*>(a.stageMeta)[from];
    } else {
      warpZero(ox, a.rowBytes, lane);
      if (os) warpZero(os, a.scaleBytes, lane);
      if (lane == 0) *om = make_int4(-1, -1, -1, r.expert);
    }
  }
}

}  // namespace

cudaError_t launchCompact(const CompactArgs& a, cudaStream_t stream) {
  compactKernel<<<a.tables.blocks, kContigThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t launchDispatchRecvWait(const SyCtx& ctx, cudaStream_t stream) {
  const SyParams& p = ctx.p;
  const int R = p.ranks(), L = p.localExperts();
  const size_t smem = sizeof(int32_t) * (static_cast<size_t>(R) * L + R + 2 * L + 1);
  waitKernel<<<1, kWaitThreads, smem, stream>>>(ctx);
  return cudaGetLastError();
}

cudaError_t launchDispatchRecvPlace(const SyCtx& ctx, cudaStream_t stream) {
  const SyParams& p = ctx.p;
  const bool fp8 = p.scalesPerRow() > 0;
  const bool bounded = p.stagingTokens() > 0;
  CompactArgs a{};
  a.padOnly = bounded;
  a.stageX = ctx.heap + p.offset(R_DISPATCH_X);
  a.stageScales = fp8 ? ctx.heap + p.offset(R_DISPATCH_SCALES) : nullptr;
  a.stageMeta = ctx.heap + p.offset(R_DISPATCH_META);
  a.outX = ctx.contig.recvX;
  a.outScales = fp8 ? ctx.contig.recvScales : nullptr;
  a.outMeta = ctx.contig.recvMeta;
  a.rowBytes = static_cast<uint32_t>(p.rowBytes());
  a.scaleBytes = static_cast<uint32_t>(p.scalesPerRow()) * 4;
  a.L = p.localExperts();
  a.R = p.ranks();
  a.tables = ctx.contig;
  cudaError_t rc = launchCompact(a, stream);
  for (int k = 0; bounded && k < p.stagingRounds() && rc == cudaSuccess; ++k) rc = launchDispatchRecvRound(ctx, k, stream);
  return rc;
}

cudaError_t launchDispatchRecvContiguous(const SyCtx& ctx, cudaStream_t stream) {
  const cudaError_t rc = launchDispatchRecvWait(ctx, stream);
  return rc != cudaSuccess ? rc : launchDispatchRecvPlace(ctx, stream);
}

cudaError_t loadDispatchRecvContiguousKernels() { return loadKernels(waitKernel, compactKernel); }

}  // namespace sy
