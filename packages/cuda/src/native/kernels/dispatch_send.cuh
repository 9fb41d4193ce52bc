// Dispatch send (masked layout, docs/protocol.md): for every destination rank d, one route record
// per token this rank owns that routes there, in token order: its payload, scales and record
// straight into d's symmetric heap, then d's per-local-expert counts, then d's dispatchSignal.
//
///  x              Shape: [T, hidden]          input dtype (bf16, or fp8 with scales)
///  scales         Shape: [T, hidden / 128]    fp32, fp8 input only
///  topkIdx        Shape: [T, K]               int32 global expert ids, -1 = unused slot
///  topkWeights    Shape: [T, K]               fp32 router weights (carried in the records); null with
///                                             weights at home (the records carry +0)
///  dispatchX      Shape: [R(src), M, hidden]  on d: record j's payload at [rank][j] (dispatch dtype)
///  dispatchScales Shape: [R(src), M, hidden/128] fp32 (fp8 dispatch)
///  dispatchRoutes Shape: [R(src), M, W]       i32 route records (records.cuh)
///  countSignal    Shape: [R(src), L]          u32 signal on d at [rank][e]: rows for d's expert e
///  dispatchSignal Shape: [R(src)]             u32 signal on d at [rank]: records
//
// One kernel. Each block takes a chunk of tokens: the plan (plan.cuh: indices and record numbers,
// no grid-wide step), then one warp per (token, span of its row: the whole row when the block has
// at least a token per warp, else 2 KB pieces spread over the warps, whose input is fetched into L2
// before the plan; 512-byte pieces and a block a token when the step's tokens are few: smallPieces):
// each piece is read once,
// quantised in registers when bf16 goes out as fp8 (payload.cuh), and stored with 16-byte stores
// into each destination's record slot; the first span's warp also writes the records. One system
// fence per block; the block of the last chunk stores the counts once its plan has them, the last
// block to finish (stage.cuh) fences and releases each destination's dispatchSignal.
#pragma once
#include "launch.h"
#include "payload.cuh"
#include "plan.cuh"
#include "put.cuh"
#include "records.cuh"
#include "phase_clock.cuh"
#include "stage.cuh"

namespace sy {
namespace dispatch_send_stage {

constexpr int kThreads = kStageThreads;
constexpr int kWarps = kThreads / kWarp;

/// The stage, run by blocks [0, nb) of the dispatch kernel (dispatch.cu); this is block b. V: the
/// 16-byte vectors a lane of a piece (payload.cuh's smallPieces over one wave: 1, else kPieceVecs).
template <bool kPuts, int V>
__device__ inline void run(const SyCtx& c, const uint8_t* x, const float* xScales, const int32_t* topkIdx,
                           const float* topkWeights, int T, int chunk, int nb, int b) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), M = p.maxTokens(), W = p.routeWords();
  const int S = p.scalesPerRow(), E = p.experts(), dp = p.dpSize();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t epoch = stepEpoch(c.state);
  SY_CLOCK_BEGIN(c.rank);
  extern __shared__ int sPlan[];
  const int t0 = min(T, static_cast<int>(b) * chunk);
  const int t1 = min(T, t0 + chunk);
  const uint64_t rowBytes = p.rowBytes();
  const int pieces = piecesPerRow(rowBytes, V * 512);
  const int spans = spansFor(t1 - t0, pieces, kWarps);
  const int items = (t1 - t0) * spans;
  // A warp a piece (one token, or a few): the warp's input is fetched into L2 now, while the plan
  // runs, so its loads after the plan wait for L2, not HBM (held in registers instead, the plan
  // spilled).
  // Its token's slots and weights are loaded now too, and a one-stage chunk's plan entries kept in
  // shared memory (planEntriesSmemBytes): after the plan the warp loads nothing but its input.
  const bool early = items <= kWarps && warp < items;
  int preEx = -1;
  float preW = 0.0f;
  if (early) {
    const int t = t0 + warp / spans;
    prefetchPiece<V>(p, x, t, warp % spans * pieces / spans, lane);
    if (lane < K) {
      preEx = topkIdx[static_cast<uint64_t>(t) * K + lane];
      preW = topkWeights != nullptr ? topkWeights[static_cast<uint64_t>(t) * K + lane] : 0.0f;
    }
  }
  const bool oneStage = t1 - t0 <= kPlanStage;
  int* sEntries = sPlan + planSmemBytes(E, R, K) / 4;
  int* sRecRange = sEntries + planEntriesSmemBytes(K) / 4;  // [2R] put path: the chunk's records to each rank
  bool failed = __syncthreads_or(hasError(c.state));  // block-uniform
  // The plan checks every topkIdx entry (plan.cuh): a bad one and this block stores nothing.
  const bool lastChunk = b == nb - 1;
  if (!failed) {
    failed = !planChunk(c, topkIdx, T, t0, t1, lastChunk, sPlan, oneStage ? sEntries : nullptr,
                        kPuts ? sRecRange : nullptr, [&] { SY_CLOCK_MARK; });
  }

  if (!failed) {
    SY_CLOCK_MARK;  // 3: the plan's end (1 and 2 inside planChunk)
    if (lastChunk) {
      // The step's counts are known here (sPlan[0, E) = rows per expert): stored now, relaxed, so
      // the stage's end only fences and releases dispatchSignal (the receiver acquires it first).
      for (int i = threadIdx.x; i < R * L; i += kThreads) {
        const int d = i / L, e = i % L;  // a put peer's: put with the signal by the stage's last block
        storeCountWord<kPuts>(c, d, e, L, encodeSignal(epoch, static_cast<uint32_t>(sPlan[d * L + e])));
      }
    }
    SY_CLOCK_MARK;  // 4: the count words
    for (int item = warp; item < items; item += kWarps) {
      const int t = t0 + item / spans;
      const int span = item % spans;
      const int p0 = span * pieces / spans, p1 = (span + 1) * pieces / spans;
      if (t % dp != c.rank % dp) continue;
      // The token's slots and its plan entries, loaded together (one round trip, not three).
      const uint64_t at = static_cast<uint64_t>(t) * K + lane;
      const bool slot = lane < K;
      const int ex = early ? preEx : slot ? topkIdx[at] : -1;
      const float w = early ? preW : slot && topkWeights != nullptr ? topkWeights[at] : 0.0f;  // none: weights at home
      const int* se = sEntries + (t - t0) * K + lane;  // oneStage: this block's plan entries
      const int jv = !slot ? 0 : oneStage ? se[kPlanStage * K] : c.plan.recordIndex[at];  // at each rank's first slot
      const int index = !slot ? 0 : oneStage ? se[0] : c.plan.entryIndex[at];
      const TokenSlots s = tokenSlotsOf(ex, L, lane);
      const int j = jv;
      // Every destination's record slot [rank][j]: one row per destination rank (a put peer's in
      // this rank's outbox at [d][j]).
      auto each = [&](auto&& fn) {
        for (uint32_t m = s.leaders; m != 0; m &= m - 1) {
          const int l = __ffs(m) - 1;
          const int d = __shfl_sync(kFullMask, s.ex, l) / L;
          const int jl = __shfl_sync(kFullMask, j, l);
          uint8_t* peer = c.peers[d];
          if (isPutPeer<kPuts>(c, d)) {
            fn(outboxRow(c, d, jl), outboxScales(c, d, jl));
            continue;
          }
          const uint64_t slot = static_cast<uint64_t>(c.rank) * M + jl;
          fn(peer + p.offset(R_DISPATCH_X) + slot * rowBytes,
             reinterpret_cast<float*>(peer + p.offset(R_DISPATCH_SCALES)) + slot * S);
        }
      };
      if (p0 < p1) sendPieces<V>(p, x, xScales, t, p0, p1, lane, each);
      if (p0 == 0) {
        for (uint32_t m = s.leaders; m != 0; m &= m - 1) {
          const int l = __ffs(m) - 1;
          const int d = __shfl_sync(kFullMask, s.ex, l) / L;
          const int jl = __shfl_sync(kFullMask, j, l);
          writeRecord(recordSlot<kPuts>(c, d, jl, M, W), t, s, l, lane, L, index, w);
        }
      }
    }
    if (kPuts) {  // the chunk's records to each put peer: one range of each region, rows coalesced
      __syncthreads();
      for (int d = 0; d < R; ++d) {
        if (!isPutPeer<kPuts>(c, d)) continue;
        const int j0 = sRecRange[d], n = sRecRange[R + d] - j0;
        if (n <= 0) continue;
        const uint64_t from = static_cast<uint64_t>(d) * M + j0, to = static_cast<uint64_t>(c.rank) * M + j0;
        putRange(c.heap + p.offset(R_DISPATCH_X) + to * rowBytes, c.out.rows + from * rowBytes, n * rowBytes, d);
        putRange(c.heap + p.offset(R_DISPATCH_SCALES) + to * S * 4, c.out.scales + from * S,
                 static_cast<uint64_t>(n) * S * 4, d);
        putRange(c.heap + p.offset(R_DISPATCH_ROUTES) + to * W * 4, c.out.routes + from * W,
                 static_cast<uint64_t>(n) * W * 4, d);
      }
    }
  }
  completeBlockPuts<kPuts>(c);

  SY_CLOCK_MARK;  // 5: warp 0's rows and records
  const bool last = lastBlockDone(c.state, DONE_SEND, DoneFence::System, nb);
  SY_CLOCK_ENDER(last);
  SY_CLOCK_MARK;  // 6: every warp's, fenced
  if (!last || failed) {
    SY_CLOCK_END("dispatchSend", epoch);
    return;
  }
  // The counts were stored by the last chunk's block; every block's rows and records are fenced.
  const int32_t* totals = c.plan.totals;
  for (int d = threadIdx.x; d < R; d += kThreads) {
    const uint32_t records = static_cast<uint32_t>(__ldcg(&totals[E + d]));
    if (c.stats.dispatchSent != nullptr) c.stats.dispatchSent[d] = records;
    if (isPutPeer<kPuts>(c, d)) {  // the count words (written by the last chunk's block), then the signal
      nvshmem_putmem_nbi(c.heap + p.offset(R_COUNT_SIGNAL) + static_cast<uint64_t>(c.rank) * L * 4, c.out.counts + d * L,
                         static_cast<uint64_t>(L) * 4, d);
    }
    releaseSignal<kPuts>(c, R_DISPATCH_SIGNAL, d, encodeSignal(epoch, records));
  }
  SY_CLOCK_END("dispatchSend", epoch);
}

}  // namespace dispatch_send_stage
}  // namespace sy
