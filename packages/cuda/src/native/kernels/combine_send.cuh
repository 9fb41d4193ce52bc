// Combine send (both layouts, docs/protocol.md): the expert rank sums on its side. For every route
// record (s, j) of the step, token t: acc = 0 (fp32); for each entry in slot order
// acc = fp32(acc + fp32(w_k * out[row])); partial = bf16(acc) (__fmul_rn / __fadd_rn: never an FMA),
// written to combineX[rank][t] on every rank of s's DP group; then combineSignal[rank] on every
// home = partials written to it. Bit-exact with core's partialOf.
//
///  expertOut      Shape: [rows, hidden]          bf16, row-aligned with recvX (masked L*R*M rows, contiguous N)
///  dispatchRoutes Shape: [R(src), M, W]          i32 route records (this rank's heap, checked by dispatch recv)
///  ctx.t          pairStart [L, R], records [R]   from dispatch recv (recv_tables.cuh)
///  combineX       Shape: [R(expert rank), M, hidden]  bf16 on each home: partial at [rank][t]
///  combineSignal  Shape: [R(expert rank)]        u32 on each home at [rank]
//
// One kernel. One warp per record (or span of 512-output chunks of it when records are fewer than
// warps): the record is decoded once, lane i holds entry i (row, weight); each lane sums 8 outputs
// a 256-output stage with the next stages' 16-byte loads in flight (ring_sums.cuh on sm_90, else
// pipelinedSums, weighted_sum.cuh); the partial goes out with 16-byte stores. Past the first
// round of items a warp claims its next record from a counter in the endpoint's state
// (SyState::combineClaims), so the warps finish together whatever the records' sizes. One system
// fence per block; the last block writes every home's signal.
#pragma once
#include "codec.cuh"
#include "launch.h"
#include "records.cuh"
#include "phase_clock.cuh"
#include "put.cuh"
#include "ring_sums.cuh"
#include "stage.cuh"
#include "weighted_sum.cuh"

namespace sy {
namespace combine_send_stage {

constexpr int kThreads = kStageThreads;
constexpr int kOutPerPiece = 512;  // outputs of one work item: two 8-wide vectors a lane
constexpr int kPairShared = 2048;  // pairStart entries (L * R = experts) held in shared memory

/// Where combine send's row for home h goes: h's combineX (stores), or, for a put peer, this
/// rank's outbox row `staged` (put to h after the warp wrote it: putStaged).
template <bool kPuts>
__device__ inline uint16_t* combineRow(const SyCtx& c, int h, uint64_t dst, uint16_t* staged) {
  return isPutPeer<kPuts>(c, h) ? staged : reinterpret_cast<uint16_t*>(c.peers[h] + c.p.offset(R_COMBINE_X)) + dst;
}

/// Warp-collective: outputs [h0, h1) of the staged row to combineX element `dst` on every put peer
/// of the homes [group, group + dp).
template <bool kPuts>
__device__ inline void putStaged(const SyCtx& c, int group, uint64_t dst, const uint16_t* staged, int h0, int h1) {
  if (!kPuts || h1 <= h0) return;
  __syncwarp();
  for (int h = group; h < group + c.p.dpSize(); ++h) {
    if (!isPutPeer<kPuts>(c, h)) continue;
    putRangeWarp(c.heap + c.p.offset(R_COMBINE_X) + (dst + h0) * 2, staged + h0, static_cast<uint64_t>(h1 - h0) * 2, h);
  }
}

/// Weights at home: the record's entries (lane i: entry i's output row and its token slot) copied
/// unweighted, chunks [c0, c1) of 512 outputs, to combineX[t][slot] on every rank of the source's
/// DP group (16-byte vectors when rows allow, else 2-byte elements). Put peers: through the
/// outbox rows [q][i] of record q.
template <bool kPuts>
__device__ inline void homeRows(const SyCtx& c, const uint16_t* expertOut, uint64_t row, int slot, int n, int t,
                                      int group, int c0, int c1, int lane, uint64_t q) {
  const SyParams& p = c.p;
  const int H = p.hidden(), K = p.topK(), dp = p.dpSize(), J = p.slotsPerRank();
  const int h1 = min(H, c1 * kOutPerPiece);
  const bool vec = (H % 8) == 0 && (reinterpret_cast<uint64_t>(expertOut) & 15) == 0;
  for (int i = 0; i < n; ++i) {
    const uint16_t* src = expertOut + __shfl_sync(kFullMask, row, i) * H;
    const uint64_t dst = (static_cast<uint64_t>(t) * K + __shfl_sync(kFullMask, slot, i)) * H;
    uint16_t* staged = kPuts ? c.out.combine + (q * J + i) * H : nullptr;
    if (vec) {
      for (int h0 = c0 * kOutPerPiece + lane * 8; h0 < h1; h0 += 256) {
        const uint4 v = *reinterpret_cast<const uint4*>(src + h0);
        for (int h = group; h < group + dp; ++h) {
          *reinterpret_cast<uint4*>(combineRow<kPuts>(c, h, dst, staged) + h0) = v;
        }
      }
    } else {
      for (int h0 = c0 * kOutPerPiece + lane; h0 < h1; h0 += 32) {
        const uint16_t v = src[h0];
        for (int h = group; h < group + dp; ++h) combineRow<kPuts>(c, h, dst, staged)[h0] = v;
      }
    }
    putStaged<kPuts>(c, group, dst, staged, c0 * kOutPerPiece, h1);
  }
}
constexpr int kWarps = kThreads / kWarp;

// The stage's shared memory, at namespace scope: one copy for both ways of the sums (run's own
// statics would be one copy an instantiation, and with relocatable device code every kernel of
// the module carries them all, which left the ring's block no room).
constexpr int kSmallRanks = 1024;  // worlds whose records' prefix is held in shared memory
__shared__ int sRecStart[kSmallRanks + 1];
__shared__ int sScratch[kWarps + 1];
__shared__ int sPair[kPairShared];  // pairStart [L, R] when L * R (= E) fits

/// The stage, run by blocks [0, nb) of the combine kernel (combine.cu); this is block b. kRing: the
/// sums' loads go through rings in dynamic shared memory (ring_sums.cuh; the launch gives
/// ringSmemBytes(kThreads)), else through registers (pipelinedSums).
template <bool kPuts, bool kRing = false>
__device__ inline void run(const SyCtx& c, const uint16_t* expertOut, int nb, int b) {
  const SyParams& p = c.p;
  const int R = p.ranks(), M = p.maxTokens(), W = p.routeWords(), H = p.hidden(), dp = p.dpSize();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t epoch = stepEpoch(c.state);
  SY_CLOCK_BEGIN(c.rank);
  const bool failed = hasError(c.state);
  const bool small = R <= kSmallRanks;
  const int pairs = p.localExperts() * R;
  const bool pairShared = pairs <= kPairShared;
  // The records' prefix (a thread a source loads its count: one round trip, not one a source; one
  // scan) and the pair table, loaded together and beside the error word (at most 2 counts and 4
  // pairs a thread: R <= 1024, L * R <= 2048), whose value is applied only once all are here, so
  // the three are one round trip: a record's rows are then a shared-memory read.
  static_assert(kSmallRanks <= 2 * kThreads && kPairShared <= 4 * kThreads,
                "combine send's shared tables take at most 2 counts and 4 pairs a thread");
  int counts[2], pairIn[4];
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int s = threadIdx.x + k * kThreads;
    counts[k] = small && s < R ? c.t.records[s] : 0;
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int i = threadIdx.x + k * kThreads;
    pairIn[k] = pairShared && i < pairs ? c.t.pairStart[i] : 0;
  }
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int s = threadIdx.x + k * kThreads;
    if (small && s < R) sRecStart[s] = failed ? 0 : counts[k];
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int i = threadIdx.x + k * kThreads;
    if (pairShared && i < pairs) sPair[i] = pairIn[k];
  }
  __syncthreads();
  if (small) {
    const int total = blockExclusiveScan(sRecStart, R, sScratch);
    if (threadIdx.x == 0) sRecStart[R] = total;
    __syncthreads();
  }
  SY_CLOCK_MARK;  // 1: the record counts

  if (!failed && small) {
    const int chunks = (H + kOutPerPiece - 1) / kOutPerPiece;
    const int spans = spansFor(sRecStart[R], chunks, nb * kWarps);
    const uint64_t items = static_cast<uint64_t>(sRecStart[R]) * spans;
    const uint8_t* routes = c.heap + p.offset(R_DISPATCH_ROUTES);
    const bool vec = (H % 8) == 0 && (reinterpret_cast<uint64_t>(expertOut) & 15) == 0;
    // A record's head and this lane's entry, loaded one item ahead: the next record's loads are
    // in flight while this record is summed (its decode is a dependent global load otherwise).
    struct Rec {
      int t, n, s, c0, c1, ee, idx, q;
      float w;  ///< the entry's weight; with weights at home (records carry none) its slot's bits
    };
    const bool home = p.combineAtHome();
    // A record has K / R entries on average: with 4 or more, one-entry records are rare (3 % at top-8
    // over two ranks) and take the two-source shape, whose code the others run anyway.
    const bool oneEntryShape = p.topK() < 4 * R;
    const auto fetch = [&](uint64_t it) {
      Rec r{0, 0, 0, 0, 0, 0, 0, 0, 0.0f};
      if (it >= items) return r;
      const int q = static_cast<int>(it / spans);
      const int span = static_cast<int>(it % spans);
      r.c0 = span * chunks / spans;
      r.c1 = (span + 1) * chunks / spans;
      for (int lo = 0, hi = R - 1; lo <= hi;) {
        const int mid = (lo + hi) / 2;
        if (sRecStart[mid] <= q) {
          r.s = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      const int j = q - sRecStart[r.s];
      r.q = q;
      // The record: head and this lane's entry loaded together (entries past n are never used).
      const int32_t* rec = reinterpret_cast<const int32_t*>(routes) + (static_cast<uint64_t>(r.s) * M + j) * W;
      r.t = rec[0];
      r.n = rec[1];
      if (lane < p.slotsPerRank()) {
        const int32_t* e = rec + 2 + 4 * lane;
        r.ee = e[0];
        r.idx = e[2];
        r.w = __int_as_float(home ? e[1] : e[3]);
      }
      return r;
    };
    // A warp's first item is its own (b * kWarps + warp); past the first round each warp claims
    // its items from a counter, so a warp whose records had fewer entries takes more of them and
    // the warps finish close together (in a fixed order the warps that drew the larger records
    // hold the kernel's end). Each claim is made a record before its head is fetched, and each
    // head a record before it is summed, so neither load waits.
    const uint64_t stride = static_cast<uint64_t>(nb) * kWarps;
    const bool claims = items > stride;
    const auto claim = [&](uint64_t after) -> uint64_t {  // the item after `after`, or items
      if (!claims) return items;  // one round
      return claimItem(&c.state->combineClaims, after, items, stride, lane);
    };
    uint64_t item = static_cast<uint64_t>(b) * kWarps + warp;
    uint64_t then = claim(item), after = items;  // the warp's next item, and the one after it
    Rec next = fetch(item);
    for (; item < items; item = then, then = after) {
      const Rec cur = next;
      next = fetch(then);
      after = claim(then);
      const int t = cur.t, n = cur.n, s = cur.s, c0 = cur.c0, c1 = cur.c1, ee = cur.ee, idx = cur.idx;
      const uint64_t q = static_cast<uint64_t>(cur.q);
      float w = cur.w;
      const uint64_t row = lane < n ? static_cast<uint64_t>((pairShared ? sPair[ee * R + s] : c.t.pairStart[ee * R + s]) + idx) : 0;
      if (lane >= n) w = 0.0f;
      const int group = s / dp * dp;
      if (home) {  // each entry's row, unweighted, to its (token, slot) row on every home of the group
        homeRows<kPuts>(c, expertOut, row, __float_as_int(w), n, t, group, c0, c1, lane, q);
        continue;
      }
      const uint64_t dstRow = (static_cast<uint64_t>(c.rank) * M + t) * H;
      uint16_t* staged = kPuts ? c.out.combine + q * H : nullptr;  // put peers: outbox row q
      if (vec && n <= 8) {  // the common case (J <= 8): pipelined over 256-output stages
        float w8[8];
        uint32_t rows[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          w8[u] = __shfl_sync(kFullMask, w, u);
          rows[u] = static_cast<uint32_t>(__shfl_sync(kFullMask, row, u));
        }
        const auto src = [&](int u) { return expertOut + static_cast<uint64_t>(rows[u]) * H; };
        // The group's first home's row, found once a record: the hot loop's stores then load no
        // heap base (c.peers, which the compiler must reload behind every store it cannot tell apart).
        // (Held opaque, so a stage's store address is one add, not the row's rebuilt from dstRow.)
        uint16_t* const firstHome = opaque(combineRow<kPuts>(c, group, dstRow, staged));
        const auto store = [&](uint32_t h0, uint4 out) {
          *reinterpret_cast<uint4*>(firstHome + h0) = out;
          for (int h = group + 1; h < group + dp; ++h) *reinterpret_cast<uint4*>(combineRow<kPuts>(c, h, dstRow, staged) + h0) = out;
        };
        const int s1 = min(2 * c1, (H + 255) / 256);
        if constexpr (kRing) {
          extern __shared__ uint4 sRing[];  // [kWarps][kRingVecs][32]
          ringSums<true>(n, 2 * c0, s1, H, lane, w8, src, store, sRing + warp * kRingVecs * kWarp + lane, oneEntryShape);
        } else {
          pipelinedSums<true>(n, 2 * c0, s1, H, lane, w8, src, store, oneEntryShape);
        }
        putStaged<kPuts>(c, group, dstRow, staged, c0 * kOutPerPiece, min(H, c1 * kOutPerPiece));
        continue;
      }
      for (int ch = c0; ch < c1; ++ch) {  // more than 8 entries, or rows not 16-byte aligned
        {
          const int end = min(H, (ch + 1) * kOutPerPiece);
          for (int hb = ch * kOutPerPiece; hb < end; hb += kWarp) {  // warp-uniform
            const int h0 = hb + lane;
            float acc = 0.0f;
            for (int i = 0; i < n; ++i) {
              const uint64_t r = __shfl_sync(kFullMask, row, i & 31);
              const float wi = __shfl_sync(kFullMask, w, i & 31);
              if (h0 < end) acc = __fadd_rn(acc, __fmul_rn(wi, bf16ToFloat(expertOut[r * H + h0])));
            }
            if (h0 >= end) continue;
            const uint16_t out = floatToBf16(acc);
            for (int h = group; h < group + dp; ++h) combineRow<kPuts>(c, h, dstRow, staged)[h0] = out;
          }
        }
      }
      putStaged<kPuts>(c, group, dstRow, staged, c0 * kOutPerPiece, min(H, c1 * kOutPerPiece));
    }
  }

  completeBlockPuts<kPuts>(c);
  SY_CLOCK_MARK;  // 2: warp 0's partials
  const bool last = lastBlockDone(c.state, DONE_COMBINE_SEND, DoneFence::System, nb);
  SY_CLOCK_ENDER(last);
  if (last && threadIdx.x == 0) c.state->combineClaims = 0;  // every warp has claimed its last
  SY_CLOCK_MARK;  // 3: every warp's, fenced
  if (!last || failed) {
    SY_CLOCK_END("combineSend", epoch);
    return;
  }
  for (int h = threadIdx.x; h < R; h += kThreads) {
    const int group = h / dp * dp;
    uint32_t sent = 0;
    for (int s = group; s < group + dp; ++s) sent += static_cast<uint32_t>(__ldcg(&c.t.records[s]));
    if (c.stats.combineSent != nullptr) c.stats.combineSent[h] = sent;
    releaseSignal<kPuts>(c, R_COMBINE_SIGNAL, h, encodeSignal(epoch, sent));
  }
  SY_CLOCK_END("combineSend", epoch);
}

}  // namespace combine_send_stage
}  // namespace sy
