// Route records (docs/protocol.md): one per (token, destination rank), W = 2 + 4 J i32 words:
// srcToken, n, then n entries (localExpert, topk slot, index, weight bits) in ascending slot order.
//
///  dispatchRoutes Shape: [R(src), M(j), W]  i32, symmetric, written by the sources
//
// The send side writes a record with the warp of the token (lanes = slots); the receive side
// reads one with lane i holding entry i, and checks it as core's readRecord does.
#pragma once
#include <cstdint>

#include "copy.cuh"
#include "params.cuh"
#include "signal.cuh"

namespace sy {

/// A token's slots on the warp: lane k holds slot k's expert (or -1), the lanes of its rank
/// (`group`), and whether it is its rank's first slot (the record's writer).
struct TokenSlots {
  int ex;          ///< global expert of slot `lane`, -1 when unused or past K
  uint32_t group;  ///< lanes whose experts live on the same rank as this lane's (0 when unused)
  bool leader;     ///< the lowest lane of its group
  uint32_t leaders;///< ballot of leaders: one bit per destination rank of the token
};

__device__ inline TokenSlots tokenSlotsOf(int ex, int L, int lane) {
  TokenSlots s;
  s.ex = ex;
  const int key = s.ex >= 0 ? s.ex / L : -1 - lane;
  const uint32_t m = __match_any_sync(kFullMask, key);
  s.group = s.ex >= 0 ? m : 0u;
  s.leader = s.ex >= 0 && (__ffs(m) - 1) == lane;
  s.leaders = __ballot_sync(kFullMask, s.leader);
  return s;
}

/// Words of record j from `src` in a heap whose dispatchRoutes starts at `routes`.
__device__ inline int32_t* recordAt(uint8_t* routes, int src, int j, int M, int W) {
  return reinterpret_cast<int32_t*>(routes) + (static_cast<uint64_t>(src) * M + j) * W;
}

/// The warp writes token t's record for the group of leader lane `leaderLane` at `rec`:
/// each lane of the group its entry (position = lanes of the group below it), the leader the head.
__device__ inline void writeRecord(int32_t* rec, int t, const TokenSlots& s, int leaderLane, int lane, int L, int index,
                                   float weight) {
  const uint32_t group = __shfl_sync(kFullMask, s.group, leaderLane);
  if ((group >> lane) & 1u) {
    const int i = __popc(group & ((1u << lane) - 1u));
    int32_t* e = rec + 2 + 4 * i;
    e[0] = s.ex % L;
    e[1] = lane;
    e[2] = index;
    e[3] = __float_as_int(weight);
  }
  if (lane == leaderLane) {
    rec[0] = t;
    rec[1] = __popc(group);
  }
}

/// One entry of a record as a receiving lane holds it (lane i < n: entry i).
struct RecordEntry {
  int expert;  ///< local expert
  int slot;
  int index;
  float weight;
};

struct RecordView {
  int token;
  int n;
  RecordEntry e;  ///< this lane's entry (lane < n)
  bool ok;
};

/// Reads record `rec` from source `src` with the warp and checks it (core's readRecord): token in
/// [0, M), n in [1, J], each entry's local expert in [0, L), slot in [0, K), index below
/// rowsOf(e), the rows source `src` announced for local expert e (called by the lanes of good
/// entries only). A bad record is recorded (E_BAD_RECORD, record j, the fault) once by lane 0 when
/// `report`, and comes back with ok = false.
template <typename RowsOf>
__device__ inline RecordView readRecordBy(const int32_t* rec, int src, int j, const SyParams& p, RowsOf rowsOf,
                                          SyState* state, uint32_t stage, bool report, int lane) {
  const int M = p.maxTokens(), J = p.slotsPerRank(), L = p.localExperts(), K = p.topK();
  // Lane i's entry words are loaded with the head, not after it: every slot's words lie inside the
  // record (W = 2 + 4 J), so the head's round trip and the entry's overlap.
  int32_t w[4] = {0, 0, 0, 0};
  if (lane < J) {
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = rec[2 + 4 * lane + k];
  }
  RecordView v;
  v.token = rec[0];
  v.n = rec[1];
  uint32_t fault = 0;
  if (v.token < 0 || v.token >= M) fault = F_TOKEN;
  else if (v.n < 1 || v.n > J) fault = F_ENTRIES;
  v.e = RecordEntry{0, 0, 0, 0.0f};
  uint32_t mine = 0;
  if (fault == 0 && lane < v.n) {
    v.e.expert = w[0];
    v.e.slot = w[1];
    v.e.index = w[2];
    v.e.weight = __int_as_float(w[3]);
    if (v.e.expert < 0 || v.e.expert >= L) mine = F_EXPERT;
    else if (v.e.slot < 0 || v.e.slot >= K) mine = F_SLOT;
    else if (v.e.index < 0 || v.e.index >= rowsOf(v.e.expert)) mine = F_INDEX;
  }
  const uint32_t bad = __ballot_sync(kFullMask, mine != 0);
  if (fault == 0 && bad != 0) fault = __shfl_sync(kFullMask, mine, __ffs(bad) - 1);
  v.ok = fault == 0;
  // A lane's rowsOf may have recorded a bad count word just now: ordered before lane 0's report, so
  // that error (naming the count's source) stays the one recorded.
  if (!v.ok) __syncwarp();
  if (!v.ok && report && lane == 0) {
    recordError(state, E_BAD_RECORD, stage, static_cast<uint32_t>(src), R_DISPATCH_ROUTES, static_cast<uint32_t>(j),
                fault);
  }
  return v;
}

/// readRecordBy with the rows of the receive tables (`counts` [L, R] at e * R + src).
__device__ inline RecordView readRecord(const int32_t* rec, int src, int j, const SyParams& p, const int32_t* counts,
                                        SyState* state, uint32_t stage, bool report, int lane) {
  const int R = p.ranks();
  return readRecordBy(rec, src, j, p, [&](int e) { return counts[e * R + src]; }, state, stage, report, lane);
}

/// Marks the output row of each lane's entry (lanes < n) as named in the step of `mark`
/// (SyTables::taken, stepMark) and returns what the row held: issued before the row's copy, its
/// answer checked after it (reportTaken), so the atomic's round trip overlaps the copy. An entry
/// naming a row another entry of this step named is a bad record (F_TAKEN, core's "names ... a
/// second time"), reported by the lane that finds it; the row is then shared, so the step must
/// fail. With the index check of readRecord this gives core's rule that the records name every row
/// of an (expert, source) exactly once, but for rows named by none (a count larger than the
/// records), which leave an unwritten row (the rows-named comparison, combine_check.cuh).
__device__ inline uint64_t claimRow(uint64_t* taken, uint64_t row, uint64_t mark, int n, int lane) {
  if (lane >= n) return 0;
  return atomicExch(reinterpret_cast<unsigned long long*>(taken + row), static_cast<unsigned long long>(mark));
}

__device__ inline void reportTaken(uint64_t prior, uint64_t mark, int n, int src, int j, SyState* state,
                                   uint32_t stage, int lane) {
  if (lane < n && prior == mark) {
    recordError(state, E_BAD_RECORD, stage, static_cast<uint32_t>(src), R_DISPATCH_ROUTES, static_cast<uint32_t>(j),
                F_TAKEN);
  }
}

}  // namespace sy
