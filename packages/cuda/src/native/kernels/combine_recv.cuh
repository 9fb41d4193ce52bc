// Combine receive (both layouts, docs/protocol.md): the home sums each token's partials,
//   y[t][h] = bf16( sum over ranks r ascending that t routes to of fp32(partial_r[t][h]) )
// fp32 accumulation from 0 (__fadd_rn), one rounding: bit-exact with core's sumPartials.
//
///  combineSignal Shape: [R(expert rank)]           u32 (epoch, partials + 1)
///  combineX      Shape: [R(expert rank), M, hidden] bf16 partials at [r][t]
///  topkIdx       Shape: [T, K]                     int32 (this rank's batch), -1 = unused slot
///  y             Shape: [T, hidden]                bf16 out
//
// One kernel. Warp 0 of each block polls the expert ranks' signals (a lane per rank) and publishes
// each arrival in shared memory. Each other warp takes a token (or a span of 512-output chunks of
// it when tokens are fewer than warps): the lanes find the token's ranks in ascending order, wait
// for those ranks' flags (the reduction of tokens whose ranks arrived overlaps the arrival of the
// others), then sums 8 outputs a lane per 256-output stage with a batch of 16-byte loads in flight
// and the next batch's loads issued before the adds (pipelinedSums, weighted_sum.cuh). Blocks of
// 512 threads take batches of 8 loads; under an SM budget, with the weights at the expert ranks
// and at most 4 ranks, the receive runs on blocks of 1,024 (kWideThreads: twice the warps an SM
// to cover the loads' latency, batches of 4, 64 registers a thread). One or two
// more blocks check: one waits for every rank and checks each one's announced partials against the
// tokens that route to it; the rows dispatch recv's records named are compared with the counts by
// a block of their own, or by that block first under an SM budget (combine_check.cuh). The last
// block to finish advances the step counter.
#pragma once
#include <climits>

#include "codec.cuh"
#include "combine_check.cuh"
#include "launch.h"
#include "records.cuh"
#include "phase_clock.cuh"
#include "stage.cuh"
#include "weighted_sum.cuh"

namespace sy {
namespace combine_recv_stage {

constexpr int kOutPerPiece = 512;

/// Threads of the wide receive's blocks (combine.cu launches it for the contiguous layout's SM
/// budget when a token's partials come from at most batchSources(kWideBatch) ranks): twice the
/// warps an SM to cover the loads' latency, each lane with half the registers (64), so batches of
/// kWideBatch loads.
constexpr int kWideThreads = 1024;
constexpr int kWideBatch = 4;

/// Weights at home (core's combineTokenAtHome): y[t] = bf16(sum over the slots k ascending with an
/// expert of w[t][k] * combineX[t][k]), fp32 accumulation from 0 with __fmul_rn / __fadd_rn, one
/// rounding; chunks [c0, c1) of 512 outputs. Lane k holds slot k's expert id `ex` (an id outside
/// [0, E) is none: combine recv's check reports it). Up to 8 used slots and 16-byte rows: pipelined
/// (pipelinedSums), else element by element.
__device__ inline void homeSum(const uint16_t* rows, const float* weights, int ex, int t, int K, int H, int c0, int c1,
                               int lane, bool vec, uint16_t* yRow) {
  const uint32_t used = __ballot_sync(kFullMask, lane < K && ex >= 0);
  const int n = __popc(used);
  const uint64_t base = static_cast<uint64_t>(t) * K;
  if (vec && n <= 8) {
    float w8[8];
    int slots[8];
    uint32_t m = used;
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      slots[u] = m != 0 ? __ffs(m) - 1 : 0;
      w8[u] = m != 0 ? weights[base + slots[u]] : 0.0f;
      m &= m - 1;
    }
    const auto src = [&](int u) { return rows + (base + slots[u]) * H; };
    pipelinedSums<true>(n, 2 * c0, min(2 * c1, (H + 255) / 256), H, lane, w8, src,
                        [&](int h0, uint4 out) { *reinterpret_cast<uint4*>(yRow + h0) = out; });
    return;
  }
  const int end = min(H, c1 * kOutPerPiece);
  for (int h0 = c0 * kOutPerPiece + lane; h0 < end; h0 += kWarp) {
    float acc = 0.0f;
    for (uint32_t m = used; m != 0; m &= m - 1) {
      const int k = __ffs(m) - 1;
      acc = __fadd_rn(acc, __fmul_rn(weights[base + k], bf16ToFloat(rows[(base + k) * H + h0])));
    }
    yRow[h0] = floatToBf16(acc);
  }
}

/// kHome: weights at home (homeWeights [T, topK]), a kernel of its own so that the partials' path
/// keeps its registers.
/// The stage, run by blocks [0, nb) of kThreads threads (kStageThreads, or kWideThreads without
/// weights at home) of the combine kernel (combine.cu); this is block b.
template <bool kHome, int kThreads = kStageThreads>
__device__ inline void run(const SyCtx& c, const int32_t* topkIdx, const float* homeWeights, int T, uint16_t* y,
                           bool namedBlock, int nb, int b) {
  static_assert(kThreads == kStageThreads || (kThreads == kWideThreads && !kHome), "the receive's block sizes");
  constexpr int kWarps = kThreads / kWarp;
  constexpr int kBatch = kThreads == kWideThreads ? kWideBatch : 8;  // loads a batch: two fit the registers
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), H = p.hidden(), M = p.maxTokens();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t epoch = stepEpoch(c.state);
  SY_CLOCK_BEGIN(c.rank);
  __shared__ CombineCheckShared sCheck;
  // The last block or two only check, so the checks overlap the reduction: the check block the
  // announced counts and the ids (topk_check.cuh; the workers skip an id outside [0, E), reading
  // nothing for it); the rows dispatch recv's records named against the counts (this rank's
  // tables: nothing to wait for) on a block of their own (`namedBlock`: grids without an SM
  // budget), else by the check block before it waits.
  const int workers = nb - 1 - (namedBlock ? 1 : 0);
  const bool named = R <= kMaxCheckedPeers && b == (namedBlock ? workers + 1 : workers);
  if (named) rowsNamedCheck(c.t.named, c.t.counts, c.state, R, L, sCheck.used);
  if (b == workers) waitExpertRanks<kThreads>(c, topkIdx, T, sCheck);

  const uint32_t* words = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_COMBINE_SIGNAL));
  const uint16_t* partials = reinterpret_cast<const uint16_t*>(c.heap + p.offset(R_COMBINE_X));
  const bool vec = (H % 8) == 0 && (reinterpret_cast<uint64_t>(y) & 15) == 0;
  const int chunks = (H + kOutPerPiece - 1) / kOutPerPiece;
  // Warp 0 of each worker block polls the signals (a lane per rank) and publishes each arrival in
  // shared memory; the other warps wait on those flags, not on the signal words (thousands of
  // warps polling a few words would crowd one L2 slice, which ranks sharing a GPU felt most).
  __shared__ int sArrived[kMaxCheckedPeers];  // 0 not yet, 1 arrived (acquired), -1 failed
  const bool worker = b < workers;
  if (worker) {
    for (int r = threadIdx.x; r < R; r += kThreads) sArrived[r] = 0;
  }
  __syncthreads();
  if (worker && warp == 0) {
    for (int r = lane; r < R; r += kWarp) {
      // -1 too when the step had failed before the wait (read beside its first poll)
      const int got = waitSignal(words + r, epoch, static_cast<uint32_t>(M), c.state, c.timeoutNs, S_COMBINE_RECV,
                                 static_cast<uint32_t>(r), R_COMBINE_SIGNAL);
      __threadfence_block();
      atomicExch(&sArrived[r], got < 0 ? -1 : 1);
    }
  }
  SY_CLOCK_MARK;  // 1: warp 0 (block 0) saw every signal
  constexpr int kItemWarps = kWarps - 1;
  const int spans = spansFor(T, chunks, workers * kItemWarps);
  const uint64_t items = !worker || warp == 0 ? 0 : static_cast<uint64_t>(T) * spans;
  for (uint64_t item = static_cast<uint64_t>(b) * kItemWarps + (warp - 1); item < items;
       item += static_cast<uint64_t>(workers) * kItemWarps) {
    const int t = static_cast<int>(item / spans);
    const int span = static_cast<int>(item % spans);
    const int c0 = span * chunks / spans, c1 = (span + 1) * chunks / spans;
    // The token's ranks, ascending: lane i < n holds the i-th.
    const int ex = lane < K ? topkIdx[static_cast<uint64_t>(t) * K + lane] : -1;
    int rk = ex >= 0 && ex < p.experts() ? ex / L : INT_MAX;
    int mine = 0, n = 0;
    while (true) {
      const int r = __reduce_min_sync(kFullMask, rk);
      if (r == INT_MAX) break;
      if (lane == n) mine = r;
      ++n;
      if (rk == r) rk = INT_MAX;
    }
    // Wait for those ranks' flags (each lane one).
    bool ok = true;
    if (lane < n) {
      int v;
      uint32_t spins = 0;
      while ((v = reinterpret_cast<volatile int*>(sArrived)[mine]) == 0) {
        __nanosleep(32);
        if ((++spins & 255u) == 0 && hasError(c.state)) {
          v = -1;
          break;
        }
      }
      __threadfence_block();
      ok = v > 0;
    }
    if (__ballot_sync(kFullMask, !ok) != 0) break;  // the error word has it
    __syncwarp();
    const uint64_t at = static_cast<uint64_t>(t) * H;
    if constexpr (kHome) {  // weights at home: sum w * row over the token's slots in ascending order
      homeSum(partials, homeWeights, ex < p.experts() ? ex : -1, t, K, H, c0, c1, lane, vec, y + at);
      continue;
    }
    if (vec && n <= batchSources(kBatch)) {  // pipelined over 256-output stages
      const float ones[8] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
      int ranks[batchSources(kBatch)];
#pragma unroll
      for (int u = 0; u < batchSources(kBatch); ++u) ranks[u] = __shfl_sync(kFullMask, mine, u);
      const auto src = [&](int u) { return partials + (static_cast<uint64_t>(ranks[u]) * M + t) * H; };
      pipelinedSums<false, kBatch>(n, 2 * c0, min(2 * c1, (H + 255) / 256), H, lane, ones, src,
                           [&](int h0, uint4 out) { *reinterpret_cast<uint4*>(y + at + h0) = out; });
      continue;
    }
    for (int ch = c0; ch < c1; ++ch) {  // more ranks than a batch sums, or rows not 16-byte aligned
      {
        const int end = min(H, (ch + 1) * kOutPerPiece);
        for (int hb = ch * kOutPerPiece; hb < end; hb += kWarp) {
          const int h0 = hb + lane;
          float acc = 0.0f;
          for (int i = 0; i < n; ++i) {
            const uint64_t r = static_cast<uint64_t>(__shfl_sync(kFullMask, mine, i));
            if (h0 < end) acc = __fadd_rn(acc, bf16ToFloat(partials[(r * M + t) * H + h0]));
          }
          if (h0 < end) y[at + h0] = floatToBf16(acc);
        }
      }
    }
  }

  SY_CLOCK_MARK;  // 2: warp 0's part of the sums (none: it polls)
  // The last block advances the step, so the next step's signals carry the next epoch. Nothing is
  // fenced: y, the step and the check's verdict are read by the host and the next kernels only once
  // this kernel is done, and every block read the epoch before it counted.
  const bool last = lastBlockDone(c.state, DONE_COMBINE_RECV, DoneFence::None, nb);
  SY_CLOCK_ENDER(last);
  SY_CLOCK_MARK;  // 3: every block's sums and the check counted
  if (last && threadIdx.x == 0) {
    c.state->step = c.state->step + 1;
    if (c.state->step == 0) c.state->stepHigh = c.state->stepHigh + 1;
  }
  SY_CLOCK_END("combineRecv", epoch);
}

}  // namespace combine_recv_stage
}  // namespace sy
