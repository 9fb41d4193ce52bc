// The check of combine receive (combine_recv.cuh, one block): count the tokens of this rank's
// batch that route to each expert rank (the caller's ids, there from the start), wait for every
// expert rank's signal, then check that the partials each announced equal its count (core's
// combineRecv: "expert rank P announced N partials, M of this rank's tokens route to it"), and
// stamp the per-peer counters when stats are on.
//
///  combineSignal Shape: [R]      u32 (epoch, partials + 1) from each expert rank
///  topkIdx       Shape: [T, K]   int32 global expert ids, -1 = unused slot; expert e lives on rank e / L
//
// The check block counts the used slots per owner rank in shared memory before it waits (so after
// the last arrival only the comparison is left) and records the lowest disagreeing rank
// (E_COUNT_MISMATCH with that peer, announced, used). Worlds of more than
// kMaxCheckedPeers ranks, and slots naming an expert past the world, fall back to comparing totals
// (peer 0xffffffff).
#pragma once
#include <cstdint>

#include "params.cuh"
#include "signal.cuh"
#include "topk_check.cuh"

namespace sy {

/// Largest world whose expert ranks are checked one by one (shared memory: 8 bytes a rank).
constexpr int kMaxCheckedPeers = 1024;

struct CombineCheckShared {
  int announced[kMaxCheckedPeers];  ///< partials each expert rank announced, -1 where its wait failed
  int used[kMaxCheckedPeers];       ///< tokens of this rank's batch that route to each rank
  int scratch[64];  ///< blockSumsOf's
  int bad;                          ///< lowest disagreeing rank, R when none
  unsigned long long badEntry;      ///< the first bad topkIdx entry (topk_check.cuh's key)
};

/// Rows announced but never written (combine recv's check block, every thread, before it waits for
/// the expert ranks: off the path of the sums; dispatch recv added the entries of the records it
/// placed to SyTables::named: a block's sums (addNamed), or, in the lean receive, a record's):
/// dispatch recv placed only what the records name, each row below its (expert, source) count and
/// none twice (readRecord, claimRow), so a source whose records name fewer entries than its counts
/// announce left rows unwritten.
/// E_COUNT_MISMATCH, stage dispatch recv, naming the source (detail0 named, detail1 announced); the
/// counters are reset for the next step. The counts [L, R] are summed per source by the whole block
/// into `sum` [R] (shared), one load a thread. Block-collective.
__device__ __noinline__ void rowsNamedCheck(int32_t* named, const int32_t* counts, SyState* state, int R, int L,
                                            int* sum) {
  for (int s = threadIdx.x; s < R; s += blockDim.x) sum[s] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < L * R; i += blockDim.x) {
    const int n = __ldcg(&counts[i]);  // counts[e * R + s]
    if (n != 0) atomicAdd(&sum[i % R], n);
  }
  __syncthreads();
  for (int s = threadIdx.x; s < R; s += blockDim.x) {
    const int got = __ldcg(&named[s]);
    named[s] = 0;
    if (got != sum[s] && !hasError(state)) {
      recordError(state, E_COUNT_MISMATCH, S_DISPATCH_RECV, static_cast<uint32_t>(s), R_DISPATCH_ROUTES,
                  static_cast<uint32_t>(got), static_cast<uint32_t>(sum[s]));
    }
  }
  __syncthreads();  // `sum` is free for the caller
}

/// Block-collective: the block's sums of a and of b (one pair of barriers for both).
template <int kThreads>
__device__ inline int2 blockSumsOf(int a, int b, int* scratch) {
  static_assert(kThreads / 32 <= 32, "scratch holds two sums a warp");
  for (int off = 16; off > 0; off >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, off);
    b += __shfl_xor_sync(0xffffffffu, b, off);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) {
    scratch[warp] = a;
    scratch[32 + warp] = b;
  }
  __syncthreads();
  int2 total = make_int2(0, 0);
  for (int w = 0; w < kThreads / 32; ++w) {
    total.x += scratch[w];
    total.y += scratch[32 + w];
  }
  return total;
}

/// The check block. Errors go to the state's error word; the caller syncs the block after.
template <int kThreads>
__device__ inline void waitExpertRanks(const SyCtx& c, const int32_t* topkIdx, int T, CombineCheckShared& s) {
  const SyParams& p = c.p;
  const int R = p.ranks(), K = p.topK(), L = p.localExperts();
  const bool perPeer = R <= kMaxCheckedPeers;
  const bool stamp = c.stats.combineWaitNs != nullptr;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  const uint32_t* words = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_COMBINE_SIGNAL));
  const uint32_t maxRows = static_cast<uint32_t>(p.maxTokens());
  if (perPeer) {
    for (int i = threadIdx.x; i < R; i += kThreads) s.used[i] = 0;
  }
  if (threadIdx.x == 0) {
    s.bad = R;
    s.badEntry = kNoBadEntry;
  }
  __syncthreads();
  // The ids checked as dispatch send checks them (topk_check.cuh); a bad token counts for no rank.
  // A token's first slot on each owner rank counts it for that rank. Few tokens (one pass of
  // the block's warps): a few tokens a warp, a lane a slot, the pass's first slots naming one rank
  // added by one atomic. More: a thread a token, its slots in registers (a second pass of every
  // warp measured slower than a thread's compares one after another).
  int used = 0;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const TokenLanes g = tokenLanes(K, lane);
  if (T <= (kThreads / 32) * g.perPass) {
    // Warp-uniform; at most one pass here (written as a loop: as a plain branch it compiled to a
    // spill load more than the measured code).
    for (int base = warp * g.perPass; base < T; base += (kThreads / 32) * g.perPass) {
      const int t = base + g.group;
      const int ex = t < T && g.slot < K ? topkIdx[static_cast<uint64_t>(t) * K + g.slot] : -1;
      const unsigned long long badEntry = groupFirstBad(g, ex, p.experts(), t, lane);
      if (badEntry != kNoBadEntry && lane == g.group * g.lanes) atomicMin(&s.badEntry, badEntry);
      const int owner = badEntry == kNoBadEntry && ex >= 0 ? ex / L : -1;
      const int q = firstSameBelow(g, owner, lane);  // every lane: a warp-collective (-1 keys match nothing)
      const bool first = owner >= 0 && q < 0;
      used += first ? 1 : 0;
      const uint32_t same = __match_any_sync(kFullMask, first ? owner : -1 - lane);
      if (first && perPeer && owner < R && (same & ((1u << lane) - 1u)) == 0) atomicAdd(&s.used[owner], __popc(same));
    }
  } else {
    // Runs of one owner are counted in registers and added once (at one rank every slot has owner 0:
    // one shared atomic a thread instead of one a slot, all on the same word).
    int runOwner = -1, runCount = 0;
    const auto count = [&](int owner) {
      ++used;
      if (owner != runOwner) {
        if (runCount > 0 && perPeer && runOwner < R) atomicAdd(&s.used[runOwner], runCount);
        runOwner = owner;
        runCount = 0;
      }
      ++runCount;
    };
    for (int t = threadIdx.x; t < T; t += kThreads) {
      const int32_t* row = topkIdx + static_cast<uint64_t>(t) * K;
      if (K <= 8) {  // the slots in registers, loaded together
        int v[8], rk[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = k < K ? row[k] : -1;
        const unsigned long long badEntry = firstBadOf<8>(v, K, p.experts(), t);
        if (badEntry != kNoBadEntry) {
          atomicMin(&s.badEntry, badEntry);
          continue;
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          rk[k] = v[k] >= 0 ? v[k] / L : -1;
          bool first = rk[k] >= 0;
#pragma unroll
          for (int q = 0; q < k; ++q) first = first && rk[q] != rk[k];
          if (first) count(rk[k]);
        }
        continue;
      }
      const unsigned long long badEntry = firstBadIn(row, K, p.experts(), t);
      if (badEntry != kNoBadEntry) {
        atomicMin(&s.badEntry, badEntry);
        continue;
      }
      for (int k = 0; k < K; ++k) {
        const int e = row[k];
        if (e < 0) continue;
        const int owner = e / L;
        bool first = true;
        for (int q = 0; q < k; ++q) first = first && !(row[q] >= 0 && row[q] / L == owner);
        if (first) count(owner);
      }
    }
    if (runCount > 0 && perPeer && runOwner < R) atomicAdd(&s.used[runOwner], runCount);
  }
  // Then the signals: the caller's ids are counted before the wait, off the path after the last arrival.
  const uint64_t t0 = globalTimerNs();
  int received = 0;
  for (int peer = threadIdx.x; peer < R; peer += kThreads) {
    // -1 too when the step had failed before the wait (read beside its first poll)
    const int n = waitSignal(words + peer, epoch, maxRows, c.state, c.timeoutNs, S_COMBINE_RECV,
                             static_cast<uint32_t>(peer), R_COMBINE_SIGNAL);
    received += n < 0 ? 0 : n;
    if (perPeer) s.announced[peer] = n;
    if (stamp) {
      c.stats.combineWaitNs[peer] = globalTimerNs() - t0;
      c.stats.combineReceived[peer] = n < 0 ? 0u : static_cast<uint32_t>(n);
    }
  }
  const int2 sums = blockSumsOf<kThreads>(received, used, s.scratch);  // its barriers publish `used` and `announced`
  received = sums.x;
  used = sums.y;
  // The comparisons first, the error word only when one disagrees (recordError keeps the first
  // error; one recorded before, a failed wait's included, stands): no round trip on a good step.
  if (perPeer) {
    for (int peer = threadIdx.x; peer < R; peer += kThreads) {
      if (s.announced[peer] >= 0 && s.announced[peer] != s.used[peer]) atomicMin(&s.bad, peer);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (s.badEntry != kNoBadEntry) reportBadInput(c.state, s.badEntry, topkIdx, K, S_COMBINE_RECV);
    if ((s.bad < R || used != received) && !hasError(c.state)) {
      if (s.bad < R) {
        recordError(c.state, E_COUNT_MISMATCH, S_COMBINE_RECV, static_cast<uint32_t>(s.bad), R_COMBINE_SIGNAL,
                    static_cast<uint32_t>(s.announced[s.bad]), static_cast<uint32_t>(s.used[s.bad]));
      } else {
        recordError(c.state, E_COUNT_MISMATCH, S_COMBINE_RECV, 0xffffffffu, R_COMBINE_SIGNAL,
                    static_cast<uint32_t>(received), static_cast<uint32_t>(used));
      }
    }
  }
}

}  // namespace sy
