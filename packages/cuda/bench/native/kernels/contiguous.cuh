// Index arithmetic of the NCCL baseline (version 1's contiguous staging order: one row per (token,
// expert)), and a host test (test/native/contiguous_dump.cu compiles this header for the CPU).
// Everything here is pure integer arithmetic, __host__ __device__.
//
// Symbols: R ranks, L local experts, E = R * L experts, M maxTokensPerRank, K topK,
// C = rowsPerSource = M * min(K, L), A = expertAlignment.
//
// Send side ("route"): every (token t, slot k) that names expert ex = dst * L + e gets a row in
// dst's staging block [rank][row], rows ordered by (e, t). Its row is
//   regionBase[ex] + chunkBase[chunk(t)][ex] + rank of t among the chunk's tokens naming ex,
// where regionBase[ex] = sum of this rank's counts for experts dst*L .. ex-1 and chunkBase is the
// exclusive prefix over chunks of the per-chunk counts. Within a chunk of 32 * W tokens the rank
// comes from a bit mask per (expert, warp): bit `lane` of word [ex][warp] is set when token
// chunk * 32W + warp * 32 + lane names ex; pre[ex][w] counts the bits of words 0..w-1.
//
// Receive side: counts[e * R + s] rows from source s for local expert e (core's [L, R] order).
//   offsets[e]      = sum over e' < e of alignUp(sum_s counts[e'][s], A), offsets[L] = padded total
//   expertCount[e]  = sum_s counts[e][s]
//   pairStart[e][s] = offsets[e] + sum over s' < s of counts[e][s']  (first compact row of (e, s))
//   stageStart[e][s]= s * C + sum over e' < e of counts[e'][s]       (first staging row of (e, s))
//
#pragma once
#include <cstdint>

#include "../../../src/native/kernels/align.cuh"

namespace sy {

/// Device tables of one contiguous endpoint (all device pointers; sizes in the comments).
struct SyContig {
  // Route (send side): this step's tokens.
  int32_t* localPos;     ///< [M * K] rank of token t among its chunk's tokens naming topkIdx[t][k]; -1 unused
  int32_t* chunkCount;   ///< [chunks, E] per-chunk counts, turned into the exclusive prefix over chunks
  int32_t* regionBase;   ///< [E] first row of expert ex in its destination's block (prefix over e)
  int32_t* regionTotal;  ///< [E] rows this rank sends to expert ex
  int32_t* staged;       ///< [R] rows this rank sends to each destination
  // Receive side, written by dispatch recv from the signals.
  int32_t* offsets;      ///< [L + 1] padded prefix sums; offsets[L] = rows in use
  int32_t* expertCount;  ///< [L] rows per local expert (without padding)
  int32_t* pairStart;    ///< [L * R] first compact row of (e, s)
  int32_t* stageStart;   ///< [L * R] first staging row of (e, s)
  uint32_t* done;        ///< [4] completion counters: route (zeroed, self-resetting)
  int chunkTokens;       ///< tokens per route chunk (32 * W, W warps)
  int blocks;            ///< SM budget: grid size of the copy kernels
};

enum ContigDone : int { D_ROUTE = 0 };

__host__ __device__ inline int popcount32(uint32_t v) {
#ifdef __CUDA_ARCH__
  return __popc(v);
#else
  return __builtin_popcount(v);
#endif
}

/// Warps per route chunk for E experts: the chunk's masks (E * W u32) and prefixes (E * W u16)
/// must fit in `smemBytes`; at most 16 warps (512 tokens) and no more than the tokens need.
__host__ __device__ inline int routeWarps(int experts, int maxTokens, int smemBytes) {
  int w = smemBytes / (experts * 6);
  if (w > 16) w = 16;
  const int need = (maxTokens + 31) / 32;
  if (w > need) w = need;
  return w;
}

/// Dynamic shared memory of the route kernel: masks then prefixes.
__host__ __device__ inline int routeSmemBytes(int experts, int warps) { return experts * warps * 6; }

/// Rank of (warp, lane)'s token among the chunk's tokens naming ex (mask and prefix of the chunk).
__host__ __device__ inline int rankInChunk(const uint32_t* bits, const uint16_t* pre, int ex, int warps, int warp,
                                           int lane) {
  const int i = ex * warps + warp;
  return pre[i] + popcount32(bits[i] & ((1u << lane) - 1u));
}

/// Staging row (within the destination's block) of token t's slot k naming expert ex.
__host__ __device__ inline int routeRow(const SyContig& c, int experts, int t, int k, int topK, int ex) {
  const int chunk = t / c.chunkTokens;
  return c.regionBase[ex] + c.chunkCount[chunk * experts + ex] + c.localPos[t * topK + k];
}

/// Rows of local expert e over all sources.
__host__ __device__ inline int expertRows(const int32_t* counts, int e, int R) {
  int n = 0;
  for (int s = 0; s < R; ++s) n += counts[e * R + s];
  return n;
}

/// Expert e's part of the receive tables, given its first row offsets[e] (already set).
__host__ __device__ inline void fillExpertTables(const int32_t* counts, int e, int R, const int32_t* offsets,
                                                 int32_t* expertCount, int32_t* pairStart) {
  int row = offsets[e];
  for (int s = 0; s < R; ++s) {
    pairStart[e * R + s] = row;
    row += counts[e * R + s];
  }
  expertCount[e] = row - offsets[e];
}

/// Source s's part of the receive tables: where each of its experts' rows start in staging.
__host__ __device__ inline void fillSourceTables(const int32_t* counts, int s, int L, int R, int C,
                                                 int32_t* stageStart) {
  int from = s * C;
  for (int e = 0; e < L; ++e) {
    stageStart[e * R + s] = from;
    from += counts[e * R + s];
  }
}

/// offsets [L + 1] from rows per expert [L]: padded prefix sums (the one sequential part).
__host__ __device__ inline void paddedOffsets(const int32_t* rows, int L, int align, int32_t* offsets) {
  int next = 0;
  for (int e = 0; e < L; ++e) {
    offsets[e] = next;
    next += alignUpInt(rows[e], align);
  }
  offsets[L] = next;
}

/// Receive tables from counts [L * R], sequentially (host; the kernel runs the parts in parallel).
/// `rows` is scratch [L].
__host__ __device__ inline void buildRecvTables(const int32_t* counts, int L, int R, int C, int align, int32_t* rows,
                                                int32_t* offsets, int32_t* expertCount, int32_t* pairStart,
                                                int32_t* stageStart) {
  for (int e = 0; e < L; ++e) rows[e] = expertRows(counts, e, R);
  paddedOffsets(rows, L, align, offsets);
  for (int e = 0; e < L; ++e) fillExpertTables(counts, e, R, offsets, expertCount, pairStart);
  for (int s = 0; s < R; ++s) fillSourceTables(counts, s, L, R, C, stageStart);
}

/// Where compact row `row` (< offsets[L]) comes from: its local expert, and either the source and
/// staging row, or padding (source -1).
struct RowSource {
  int expert;
  int source;  ///< -1 for a padding row
  int from;    ///< staging row (s * C + ...), valid when source >= 0
};

__host__ __device__ inline RowSource sourceOfRow(int row, const int32_t* offsets, const int32_t* expertCount,
                                                 const int32_t* pairStart, const int32_t* stageStart, int L, int R) {
  // Largest e with offsets[e] <= row (offsets is non-decreasing; empty experts share a start).
  int lo = 0, hi = L - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (offsets[mid] <= row) lo = mid;
    else hi = mid - 1;
  }
  const int e = lo;
  RowSource r{e, -1, -1};
  if (row - offsets[e] >= expertCount[e]) return r;  // padding
  // Largest s with pairStart[e][s] <= row: it has rows, since row is inside the expert's rows.
  int a = 0, b = R - 1;
  while (a < b) {
    const int mid = (a + b + 1) / 2;
    if (pairStart[e * R + mid] <= row) a = mid;
    else b = mid - 1;
  }
  r.source = a;
  r.from = stageStart[e * R + a] + (row - pairStart[e * R + a]);
  return r;
}

}  // namespace sy
