// The caller's expert ids, checked on the device (core's validateRankInput rule for topkIdx): every
// entry in [-1, E), and no expert named twice by one token. The C and Python paths hand device
// pointers the host cannot read without a synchronisation, so the kernels that read topkIdx check
// it where they read it: dispatch send's plan (plan.cuh, before any store leaves a block: in the
// masked send every block checks every token, the ones outside its chunk in the same loads as the
// ones before it; in the contiguous send each block checks its own chunk and takes the smallest
// bad key of all blocks once their counts are in) and combine recv's count check (combine_check.cuh).
//
///  topkIdx  Shape: [T, K]  int32 global expert ids, -1 = unused slot
//
// The first bad entry (lowest token, then lowest slot) is recorded as E_BAD_INPUT: peer = the
// entry's value, detail0 = the token, detail1 = the slot | (the earlier slot naming the same
// expert + 1) << 16 (0 there: the value is outside [-1, E)). Finders keep the smallest key.
#pragma once
#include <cstdint>

#include "copy.cuh"
#include "params.cuh"
#include "signal.cuh"

namespace sy {

/// No bad entry (the largest key).
constexpr unsigned long long kNoBadEntry = ~0ull;

/// A bad entry's key, ordered by token, then slot: token << 16 | slot << 8 | (earlier slot + 1).
__device__ inline unsigned long long badKey(int t, int k, int q) {
  return (static_cast<unsigned long long>(t) << 16) | (static_cast<unsigned long long>(k) << 8) |
         static_cast<unsigned long long>(q + 1);
}

/// The first bad slot of one token whose K ids are v[0, K) (K <= KMAX), as badKey, or kNoBadEntry.
template <int KMAX>
__device__ inline unsigned long long firstBadOf(const int (&v)[KMAX], int K, int E, int t) {
#pragma unroll
  for (int k = 0; k < KMAX; ++k) {
    if (k >= K) break;
    if (v[k] < -1 || v[k] >= E) return badKey(t, k, -1);
    if (v[k] < 0) continue;
#pragma unroll
    for (int q = 0; q < k; ++q) {
      if (v[q] == v[k]) return badKey(t, k, q);
    }
  }
  return kNoBadEntry;
}

/// The same, reading the slots from `row` (any K up to kMaxTopK).
__device__ inline unsigned long long firstBadIn(const int32_t* row, int K, int E, int t) {
  for (int k = 0; k < K; ++k) {
    const int e = row[k];
    if (e < -1 || e >= E) return badKey(t, k, -1);
    if (e < 0) continue;
    for (int q = 0; q < k; ++q) {
      if (row[q] == e) return badKey(t, k, q);
    }
  }
  return kNoBadEntry;
}

/// A warp's lanes as token slots, for the checks and counts a warp does a few tokens at a time
/// (rather than a thread a token, whose compares and branches run one after another): groups of
/// `lanes` = K rounded up to a power of two, a token a group, lane `slot` of a group holding that
/// slot's id (-1 past K). A pass of the warp takes `perPass` = 32 / lanes tokens.
struct TokenLanes {
  int lanes;
  int perPass;
  int group;       ///< this lane's group: the pass's token `group`
  int slot;        ///< this lane's slot in its token
  uint32_t mask;   ///< the lanes of this lane's group
  uint32_t below;  ///< the lanes of this lane's group below it
};

__device__ inline TokenLanes tokenLanes(int K, int lane) {
  TokenLanes g;
  g.lanes = 1;
  while (g.lanes < K) g.lanes <<= 1;  // K <= kMaxTopK = 32
  g.perPass = kWarp / g.lanes;
  g.group = lane / g.lanes;
  g.slot = lane % g.lanes;
  g.mask = (g.lanes == kWarp ? kFullMask : (1u << g.lanes) - 1u) << (g.group * g.lanes);
  g.below = g.mask & ((1u << lane) - 1u);
  return g;
}

/// Warp-collective: the lanes of each group whose `key` another lane of the same group below it
/// holds too, as the lowest such lane (-1: none); lanes with a negative key match nothing.
__device__ inline int firstSameBelow(const TokenLanes& g, int key, int lane) {
  const unsigned long long tagged =
      (static_cast<unsigned long long>(g.group) << 32) | (key >= 0 ? static_cast<uint32_t>(key) : 0x80000000u | lane);
  const uint32_t earlier = __match_any_sync(kFullMask, tagged) & g.below;
  return earlier != 0 ? __ffs(earlier) - 1 - g.group * g.lanes : -1;
}

/// Warp-collective: the key of the first bad slot of the group's token t, its lanes' ids `ex` (-1
/// past K), exactly as firstBadOf finds it (an id outside [-1, E), else an expert an earlier slot
/// named), or kNoBadEntry; every lane of the group gets it.
__device__ inline unsigned long long groupFirstBad(const TokenLanes& g, int ex, int E, int t, int lane) {
  const bool outside = ex < -1 || ex >= E;
  const int q = firstSameBelow(g, outside ? -1 : ex, lane);
  const uint32_t bad = __ballot_sync(kFullMask, outside || q >= 0) & g.mask;
  const int first = bad != 0 ? __ffs(bad) - 1 : lane;
  const int firstQ = __shfl_sync(kFullMask, outside ? -1 : q, first);
  return bad != 0 ? badKey(t, first - g.group * g.lanes, firstQ) : kNoBadEntry;
}

/// Records the entry of `key` (one thread): E_BAD_INPUT, as the comment at the top says.
__device__ inline void reportBadInput(SyState* state, unsigned long long key, const int32_t* topkIdx, int K,
                                      uint32_t stage) {
  const int t = static_cast<int>(key >> 16), k = static_cast<int>((key >> 8) & 0xff);
  const uint32_t earlier = static_cast<uint32_t>(key & 0xff);
  const int32_t value = topkIdx[static_cast<uint64_t>(t) * K + k];
  recordError(state, E_BAD_INPUT, stage, static_cast<uint32_t>(value), 0xffffffffu, static_cast<uint32_t>(t),
              static_cast<uint32_t>(k) | (earlier << 16));
}

}  // namespace sy
