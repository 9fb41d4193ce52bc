// Dispatch send's plan (both layouts): for this block's chunk of tokens, every (token, slot)'s
// index among the source's rows for its expert, and every (token, destination rank)'s record
// number j, exactly as core's planRoutes (backend/reference/routes.ts) numbers them: in
// ascending token order over the tokens this rank owns (t % dpSize == rank % dpSize).
//
///  topkIdx            Shape: [T, K]   int32 global expert ids, -1 = unused slot (K <= 32)
///  plan.entryIndex    Shape: [M, K]   int32 out: index of (t, k) among the source's rows of topkIdx[t][k]
///  plan.recordIndex   Shape: [M, K]   int32 out: record j of t on the rank of slot k, at that rank's first slot
///  plan.totals        Shape: [E + R]  int32 out (the block whose chunk ends at T): rows per expert, records per rank
//
// The masked send (planChunk), no grid-wide step: each block first counts the tokens before its
// chunk into shared counters (one thread per token, order-free atomics), then warp 0 walks its own
// tokens in order, 32 at a time (lane = token; a bit per (expert, lane) ranks the group's tokens
// naming an expert), ids staged in shared memory kPlanStage tokens at a time. The counters then
// hold the counts up to the chunk's end, which for the last chunk are the step's totals. The
// contiguous send (planChunkByBlocks), whose blocks are all resident and wait for one another's
// counts anyway: each block counts only its own chunk, publishes the counts, and takes the sum of
// the blocks before it as its counters before the walk; the last block has the totals first.
#pragma once
#include <cstdint>

#include "copy.cuh"
#include "params.cuh"
#include "stage.cuh"
#include "topk_check.cuh"

namespace sy {

/// Tokens whose ids the in-order walk stages in shared memory at a time.
constexpr int kPlanStage = 128;

/// Dynamic shared memory of planChunk: counters [E], [R], staged ids and their ranks
/// [2, kPlanStage * K], bits [E], [R].
__host__ __device__ inline int planSmemBytes(int experts, int ranks, int topK) {
  return 4 * (2 * experts + 2 * ranks + 2 * kPlanStage * topK);
}

/// planChunk's optional copy of a one-stage chunk's plan entries in shared memory, [2][kPlanStage *
/// K] ints (entry indices, then record indices), so the chunk's senders read them without a
/// global round trip.
__host__ __device__ inline int planEntriesSmemBytes(int topK) { return 4 * 2 * kPlanStage * topK; }

/// Warp 0's walk over one group of up to 32 staged tokens (lane = token t, its K slots at `row`
/// and their ranks at `rrow` in shared memory): every slot's index among the source's rows of its
/// expert, and at the first slot of each rank the token's record number there; then the counters
/// move past the group. The slots are read once into registers (KMAX >= K), so the walk is a short
/// chain of shared-memory atomics and reads rather than a reload of every slot in every loop (one
/// token's walk at top-8 took 9,000 cycles that way). KMAX is 8: wider arrays would take registers
/// from every kernel that plans; walkGroupWide serves larger K.
template <int KMAX>
__device__ inline void walkGroup(const SyCtx& c, const int* row, const int* rrow, int t, bool active, int K, int* cnt,
                                 int* recs, uint32_t* bits, uint32_t* dbits, int lane, int* se) {
  const uint32_t below = (1u << lane) - 1u;
  int ex[KMAX], rk[KMAX];  // rk: the slot's rank at the first slot of that rank, else -1
#pragma unroll
  for (int k = 0; k < KMAX; ++k) {
    ex[k] = active && k < K ? row[k] : -1;
    rk[k] = ex[k] >= 0 ? rrow[k] : -1;
#pragma unroll
    for (int q = 0; q < k; ++q) rk[k] = rk[q] == rk[k] ? -1 : rk[k];  // rk[q] is final: its rank's first slot
  }
#pragma unroll
  for (int k = 0; k < KMAX; ++k) {
    if (ex[k] >= 0) atomicOr(&bits[ex[k]], 1u << lane);
    if (rk[k] >= 0) atomicOr(&dbits[rk[k]], 1u << lane);
  }
  __syncwarp();
  uint32_t be[KMAX], bd[KMAX];  // the group's lanes naming each slot's expert / rank
#pragma unroll
  for (int k = 0; k < KMAX; ++k) {
    be[k] = ex[k] >= 0 ? bits[ex[k]] : 0u;
    bd[k] = rk[k] >= 0 ? dbits[rk[k]] : 0u;
    if (ex[k] < 0) continue;
    const uint64_t at = static_cast<uint64_t>(t) * K + k;
    const int entry = cnt[ex[k]] + __popc(be[k] & below);
    c.plan.entryIndex[at] = entry;
    if (se != nullptr) se[k] = entry;
    if (rk[k] >= 0) {
      const int record = recs[rk[k]] + __popc(bd[k] & below);
      c.plan.recordIndex[at] = record;
      if (se != nullptr) se[kPlanStage * K + k] = record;
    }
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < KMAX; ++k) {  // the lowest lane naming an expert (rank) advances its counter
    if (ex[k] >= 0 && (be[k] & below) == 0) cnt[ex[k]] += __popc(be[k]);
    if (rk[k] >= 0 && (bd[k] & below) == 0) recs[rk[k]] += __popc(bd[k]);
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < KMAX; ++k) {
    if (ex[k] >= 0) bits[ex[k]] = 0;
    if (rk[k] >= 0) dbits[rk[k]] = 0;
  }
  __syncwarp();
}

/// walkGroup for any K (up to kMaxTopK): the slots read from shared memory in every loop.
__device__ inline void walkGroupWide(const SyCtx& c, const int* row, const int* rrow, int t, bool active, int K,
                                     int* cnt, int* recs, uint32_t* bits, uint32_t* dbits, int lane, int* se) {
  const uint32_t below = (1u << lane) - 1u;
  for (int k = 0; k < K; ++k) {
    const int ex = active ? row[k] : -1;
    if (ex >= 0) {
      atomicOr(&bits[ex], 1u << lane);
      atomicOr(&dbits[rrow[k]], 1u << lane);
    }
  }
  __syncwarp();
  for (int k = 0; k < K; ++k) {
    const int ex = active ? row[k] : -1;
    if (ex < 0) continue;
    const int r = rrow[k];
    bool firstOfRank = true;
    for (int q = 0; q < k; ++q) firstOfRank = firstOfRank && rrow[q] != r;
    const uint64_t at = static_cast<uint64_t>(t) * K + k;
    const int entry = cnt[ex] + __popc(bits[ex] & below);
    c.plan.entryIndex[at] = entry;
    if (se != nullptr) se[k] = entry;
    if (firstOfRank) {
      const int record = recs[r] + __popc(dbits[r] & below);
      c.plan.recordIndex[at] = record;
      if (se != nullptr) se[kPlanStage * K + k] = record;
    }
  }
  __syncwarp();
  for (int k = 0; k < K; ++k) {  // the lowest lane of each word advances its counter
    const int ex = active ? row[k] : -1;
    if (ex < 0) continue;
    const int r = rrow[k];
    bool firstOfRank = true;
    for (int q = 0; q < k; ++q) firstOfRank = firstOfRank && rrow[q] != r;
    if ((bits[ex] & below) == 0) cnt[ex] += __popc(bits[ex]);
    if (firstOfRank && (dbits[r] & below) == 0) recs[r] += __popc(dbits[r]);
  }
  __syncwarp();
  for (int k = 0; k < K; ++k) {
    const int ex = active ? row[k] : -1;
    if (ex >= 0) bits[ex] = dbits[rrow[k]] = 0;
  }
  __syncwarp();
}

/// Warp 0's walk over a chunk of one token (the masked send's small pieces give a block a token):
/// lane k is slot k. The slot's index among the source's rows of its expert is that expert's count
/// before the token, and the token's record on a rank (at the rank's first slot) that rank's; then
/// each count moves by one. The same numbers as walkGroup with one lane, in a few instructions: at
/// a token a block the walk's code, fetched cold at each launch, is what it costs. A token naming
/// an expert twice moves its count twice without an atomic; the other warps report that token and
/// the plan is not used.
__device__ inline void walkOne(const SyCtx& c, const int* row, const int* rrow, int t, bool active, int K, int* cnt,
                               int* recs, int lane, int* se) {
  const int ex = active && lane < K ? row[lane] : -1;
  const int rk = ex >= 0 ? rrow[lane] : -1;
  const uint32_t sameRank = __match_any_sync(kFullMask, rk);
  const bool first = rk >= 0 && (sameRank & ((1u << lane) - 1u)) == 0;
  if (ex >= 0) {
    const uint64_t at = static_cast<uint64_t>(t) * K + lane;
    const int entry = cnt[ex];
    c.plan.entryIndex[at] = entry;
    if (se != nullptr) se[lane] = entry;
    if (first) {
      const int record = recs[rk];
      c.plan.recordIndex[at] = record;
      if (se != nullptr) se[kPlanStage * K + lane] = record;
    }
  }
  __syncwarp();
  if (ex >= 0) cnt[ex] += 1;
  if (first) recs[rk] += 1;
  __syncwarp();
}

/// Checks token t's K ids (the first bad one's key into *sBad, the smallest kept) and, when `count`
/// and they are good, adds its slots to the counters cnt [E] and its ranks to recs [R] (shared
/// memory, any order). Up to 8 slots are loaded together into registers.
__device__ inline void checkCountToken(const int32_t* topkIdx, int t, int K, int E, int L, bool count, int* cnt,
                                       int* recs, unsigned long long* sBad) {
  const int32_t* row = topkIdx + static_cast<uint64_t>(t) * K;
  if (K <= 8) {
    int v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = k < K ? row[k] : -1;
    const unsigned long long bad = firstBadOf<8>(v, K, E, t);
    if (bad != kNoBadEntry) atomicMin(sBad, bad);
    if (bad != kNoBadEntry || !count) return;
    int rk[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      rk[k] = v[k] >= 0 ? v[k] / L : -1;
      if (v[k] >= 0) atomicAdd(&cnt[v[k]], 1);
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      bool first = rk[k] >= 0;
#pragma unroll
      for (int q = 0; q < k; ++q) first = first && rk[q] != rk[k];
      if (first) atomicAdd(&recs[rk[k]], 1);
    }
    return;
  }
  const unsigned long long bad = firstBadIn(row, K, E, t);
  if (bad != kNoBadEntry) atomicMin(sBad, bad);
  if (bad != kNoBadEntry || !count) return;
  for (int k = 0; k < K; ++k) {
    const int ex = row[k];
    if (ex < 0) continue;
    atomicAdd(&cnt[ex], 1);
    const int r = ex / L;
    bool first = true;
    for (int q = 0; q < k; ++q) first = first && !(row[q] >= 0 && row[q] / L == r);
    if (first) atomicAdd(&recs[r], 1);
  }
}

/// Block-collective step 2 of the plans below: the chunk [t0, t1) in token order, the counters
/// cnt [E] / recs [R] (shared memory) holding the counts before it on entry and through its end on
/// return (warp 0's view; the caller's barrier publishes them). `ids`: the staging area of
/// planSmemBytes. A bad id staged here is recorded into *sBad.
__device__ inline void walkChunk(const SyCtx& c, const int32_t* topkIdx, int t0, int t1, int* cnt, int* recs, int* ids,
                                 int* entries, unsigned long long* sBad) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), E = p.experts(), dp = p.dpSize();
  const int mine = c.rank % dp;
  // 2. The chunk in token order, by warp 0, 32 tokens at a time (lane = token): one bit per (expert,
  // lane) and per (rank, lane) gives each slot the number of earlier tokens of the group naming the
  // same expert (rank); the counters hold the groups before. An id out of range is staged as -1
  // (the walk indexes shared memory with the ids); while warp 0 walks, the other warps look for an
  // expert named twice by a staged token, a warp a token (the walk's numbering is then wrong, but
  // in range).
  int* rks = ids + kPlanStage * K;                                      // [kPlanStage * K] rank of each slot
  uint32_t* bits = reinterpret_cast<uint32_t*>(rks + kPlanStage * K);  // [E]
  uint32_t* dbits = bits + E;                                          // [R]
  for (int i = threadIdx.x; i < E + R; i += blockDim.x) bits[i] = 0;
  for (int s0 = t0; s0 < t1; s0 += kPlanStage) {
    const int n = min(kPlanStage, t1 - s0);
    __syncthreads();
    for (int i = threadIdx.x; i < n * K; i += blockDim.x) {
      int ex = topkIdx[static_cast<uint64_t>(s0) * K + i];
      if (ex < -1 || ex >= E) {
        atomicMin(sBad, badKey(s0 + i / K, i % K, -1));
        ex = -1;
      }
      ids[i] = ex;
      rks[i] = ex >= 0 ? ex / L : -1;  // the divisions here, in parallel, not in the walk
    }
    __syncthreads();
    if (threadIdx.x >= 32) {  // a warp a token, lane k its slot k (K <= 32): one match, no serial compares
      const int lane = threadIdx.x & 31, checkers = blockDim.x / 32 - 1;
      for (int i = threadIdx.x / 32 - 1; i < n; i += checkers) {
        const int ex = lane < K ? ids[i * K + lane] : -1;
        const uint32_t same = __match_any_sync(kFullMask, ex);
        const uint32_t earlier = same & ((1u << lane) - 1u);
        // The token's first bad slot is its lowest slot naming an expert an earlier slot named; the
        // earlier slot is the lowest naming it (the keys of firstBadOf).
        const uint32_t dup = __ballot_sync(kFullMask, ex >= 0 && earlier != 0);
        if (dup != 0 && lane == __ffs(dup) - 1) atomicMin(sBad, badKey(s0 + i, lane, __ffs(earlier) - 1));
      }
      continue;
    }
    const int lane = threadIdx.x;
    if (n == 1) {
      walkOne(c, ids, rks, s0, s0 % dp == mine, K, cnt, recs, lane, entries != nullptr && t1 - t0 == 1 ? entries : nullptr);
      continue;
    }
    for (int g = 0; g < n; g += 32) {
      const int i = g + lane;
      const int t = s0 + i;
      const bool active = i < n && t % dp == mine;
      int* se = entries != nullptr && t1 - t0 <= kPlanStage && i < n ? entries + i * K : nullptr;
      if (K <= 8) {
        walkGroup<8>(c, ids + i * K, rks + i * K, t, active, K, cnt, recs, bits, dbits, lane, se);  // top-8 and below
      } else {
        walkGroupWide(c, ids + i * K, rks + i * K, t, active, K, cnt, recs, bits, dbits, lane, se);
      }
    }
  }
}

/// Block-collective. `last` = this block's chunk ends at T (it writes plan.totals). Every token's
/// ids are checked on the way (topk_check.cuh): the block's chunk as it is staged, every other token
/// in the loads that count the tokens before the chunk. Returns true in every thread when all of
/// topkIdx [T, K] is good; otherwise records E_BAD_INPUT for the first bad entry and returns false
/// (the plan is then meaningless: the caller stores nothing).
/// `recRange` (put path, shared memory [2R] or null): this chunk's records to each rank, as the
/// range [recRange[d], recRange[R + d]) of that rank's record numbers. `mark()` is called after the
/// tokens before the chunk are counted and after the walk (the kernel's phase stamps in profiling
/// builds: phase_clock.cuh; nothing otherwise).
struct NoMark {
  __device__ void operator()() const {}
};
template <typename Mark = NoMark>
__device__ inline bool planChunk(const SyCtx& c, const int32_t* topkIdx, int T, int t0, int t1, bool last, int* smem,
                                 int* entries = nullptr, int* recRange = nullptr, Mark mark = {}) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), E = p.experts(), dp = p.dpSize();
  const int mine = c.rank % dp;
  int* cnt = smem;          // [E]
  int* recs = cnt + E;      // [R]
  int* ids = recs + R;      // [kPlanStage * K]
  __shared__ unsigned long long sBad;  // the first bad entry's key (topk_check.cuh)
  if (threadIdx.x == 0) sBad = kNoBadEntry;
  for (int i = threadIdx.x; i < E + R; i += blockDim.x) cnt[i] = 0;
  __syncthreads();
  // 1. Tokens outside the chunk: those before it counted in any order (up to 8 slots in registers,
  // loaded together), those after it only checked.
  const int others = t0 + (T - t1);
  for (int i = threadIdx.x; i < others; i += blockDim.x) {
    const int t = i < t0 ? i : t1 + (i - t0);
    checkCountToken(topkIdx, t, K, E, L, t < t0 && t % dp == mine, cnt, recs, &sBad);
  }
  mark();  // the tokens before the chunk counted (this thread's share)
  if (recRange != nullptr) {  // the counters now hold the records before the chunk
    __syncthreads();
    for (int i = threadIdx.x; i < R; i += blockDim.x) recRange[i] = recs[i];
  }
  walkChunk(c, topkIdx, t0, t1, cnt, recs, ids, entries, &sBad);
  mark();  // the walk (warp 0's view)
  __syncthreads();
  const unsigned long long bad = sBad;
  for (int i = threadIdx.x; i < R && recRange != nullptr; i += blockDim.x) recRange[R + i] = recs[i];
  if (last && bad == kNoBadEntry) {
    for (int i = threadIdx.x; i < E + R; i += blockDim.x) c.plan.totals[i] = cnt[i];
  }
  if (bad != kNoBadEntry && threadIdx.x == 0) reportBadInput(c.state, bad, topkIdx, K, S_DISPATCH_SEND);
  return bad == kNoBadEntry;
}

/// planChunk for a grid whose blocks are all resident at once (the contiguous send, whose blocks
/// wait for one another's counts anyway), without every block reading every token: each block
/// checks and counts only its own chunk and publishes its counts (plan.blockCounts [B, E + R],
/// its first bad entry in plan.blockBad, then plan.blockMarks[b] = stepMark, released at GPU
/// scope). Once every block's mark is in (a thread a block, bounded by the timeout), the first bad
/// entry is the smallest of all, a block's counters before its chunk are the sum over the blocks
/// before it, and the last block (`last`) has the step's totals before its walk: it writes
/// plan.totals and calls `announce(i, total)` for every i in [0, E + R) there, so the count words
/// leave while the walks run. Then the walk, as planChunk's. Same numbering, totals and first bad
/// entry as planChunk.
template <typename Mark, typename Announce>
__device__ inline bool planChunkByBlocks(const SyCtx& c, const int32_t* topkIdx, int t0, int t1, bool last, int* smem,
                                         int* recRange, Mark mark, Announce announce) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), E = p.experts(), dp = p.dpSize();
  const int mine = c.rank % dp;
  const int n = E + R;
  int* cnt = smem;      // [E]
  int* recs = cnt + E;  // [R]
  int* ids = recs + R;  // [kPlanStage * K]
  __shared__ unsigned long long sBad;
  if (threadIdx.x == 0) sBad = kNoBadEntry;
  for (int i = threadIdx.x; i < n; i += blockDim.x) cnt[i] = 0;
  __syncthreads();
  for (int t = t0 + static_cast<int>(threadIdx.x); t < t1; t += blockDim.x) {
    checkCountToken(topkIdx, t, K, E, L, t % dp == mine, cnt, recs, &sBad);
  }
  __syncthreads();
  const int b = blockIdx.x, B = gridDim.x;
  const uint64_t step = stepMark(c.state);
  for (int i = threadIdx.x; i < n; i += blockDim.x) c.plan.blockCounts[static_cast<uint64_t>(b) * n + i] = cnt[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    c.plan.blockBad[b] = sBad;
    __threadfence();
    stReleaseGpu64(&c.plan.blockMarks[b], step);
  }
  for (int i = threadIdx.x; i < B; i += blockDim.x) {
    waitMark(&c.plan.blockMarks[i], step, c.state, c.timeoutNs, S_DISPATCH_SEND, static_cast<uint32_t>(c.rank),
             R_COUNT_SIGNAL);
  }
  if (__syncthreads_or(hasError(c.state))) return false;
  for (int i = threadIdx.x; i < B; i += blockDim.x) {
    const unsigned long long bad = __ldcg(&c.plan.blockBad[i]);
    if (bad != kNoBadEntry) atomicMin(&sBad, bad);
  }
  __syncthreads();
  const unsigned long long bad = sBad;
  if (bad != kNoBadEntry) {
    if (threadIdx.x == 0) reportBadInput(c.state, bad, topkIdx, K, S_DISPATCH_SEND);
    return false;
  }
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    int before = 0;
    for (int q = 0; q < b; ++q) before += __ldcg(&c.plan.blockCounts[static_cast<uint64_t>(q) * n + i]);
    if (last) {
      const int total = before + cnt[i];
      c.plan.totals[i] = total;
      announce(i, total);
    }
    cnt[i] = before;
  }
  __syncthreads();
  mark();  // every block's counts, the counters before the chunk (and the last block's announced)
  if (recRange != nullptr) {  // the counters now hold the records before the chunk
    for (int i = threadIdx.x; i < R; i += blockDim.x) recRange[i] = recs[i];
  }
  walkChunk(c, topkIdx, t0, t1, cnt, recs, ids, nullptr, &sBad);
  mark();  // the walk (warp 0's view)
  __syncthreads();
  for (int i = threadIdx.x; i < R && recRange != nullptr; i += blockDim.x) recRange[R + i] = recs[i];
  return true;
}

}  // namespace sy
