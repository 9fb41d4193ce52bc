// Dispatch receive (masked layout, docs/protocol.md): waits for every source, checks its counts
// and records, and packs each local expert's rows at the front of its block, ordered by
// (srcRank, srcToken): the row of entry (e, index) from source s is e*R*M + sum_{s'<s} count[s'][e] + index.
//
///  dispatchX      Shape: [R(src), M, hidden]      record j's payload from s (symmetric)
///  dispatchScales Shape: [R(src), M, hidden/128]  fp32 (fp8 dispatch)
///  dispatchRoutes Shape: [R(src), M, W]           i32 route records
///  recvX          Shape: [L, R * M, hidden]       local output (dispatch dtype); rows past the count unspecified
///  recvScales     Shape: [L, R * M, hidden/128]   fp32 (fp8 dispatch)
///  recvMeta       Shape: [L, R * M, 4]            int32 (srcRank, srcToken, topkSlot, localExpert)
//
// One kernel. Every block builds the tables (recv_tables.cuh), or in the lean way (run, below) one
// block builds them while the others place; then one warp per record (or per span of 2 KB pieces of
// it when records are fewer than warps; of 512 bytes in the lean way when they are very few): lane
// i holds entry i, each piece is read once and stored at each entry's row (the fan-out). The first
// span's warp also claims the rows, copies the scales and writes the meta, or, when a record's spans
// and one warp more fit the grid's warps, a warp of its own does, beside the copies.
// A bad record is a ProtocolError (E_BAD_RECORD) and is not placed.
#pragma once
#include "launch.h"
#include "payload.cuh"
#include "records.cuh"
#include "recv_tables.cuh"
#include "phase_clock.cuh"
#include "stage.cuh"

namespace sy {
namespace dispatch_recv_stage {

constexpr int kThreads = kStageThreads;
constexpr int kWarps = kThreads / kWarp;

/// Worlds up to this many ranks receive the lean way (see run): each placing lane reads the count
/// words of its entry's expert from every source up to its record's, at most this many loads.
constexpr int kLeanRanks = 8;

/// Whether this endpoint receives the lean way (the host picks the kernel by it): a world of at most
/// kLeanRanks and a grid of at least two blocks, since the launch has a block more than it places
/// with, the last, which builds the tables (with an SM budget of one block the extra block would
/// leave the one wave the grids keep to, so that endpoint builds the tables first).
inline bool leanReceive(const SyCtx& ctx) { return ctx.p.ranks() <= kLeanRanks && ctx.maxBlocks >= 2; }

/// Places the step's records on blocks [0, nb) (this is block b): a warp a record, or a span of
/// its pieces of V * 512 bytes. `recStart` [R + 1]: the records' prefix by source; read(rec, s, j, report, lane)
/// reads and checks record j of s and gives it with the output row of the lane's entry. mark():
/// a phase stamp (profiling builds) after each step of an item.
template <int V, typename Read, typename Mark>
__device__ inline void placeRecordsBy(const SyCtx& c, const int* recStart, int* named, int nb, int b, Read read,
                                      Mark mark) {
  const SyParams& p = c.p;
  const int R = p.ranks(), M = p.maxTokens(), W = p.routeWords(), S = p.scalesPerRow();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint64_t stepMarkOf = stepMark(c.state);
  const uint64_t rowBytes = p.rowBytes();
  const int pieces = piecesPerRow(rowBytes, V * 512);
  const int spans = spansFor(recStart[R], pieces, nb * kWarps);
  // A record cut into spans gets one warp more, for its claims, scales and meta, beside the
  // payload's warps rather than after the first span's copies, when that still fits one round.
  const int apart = spans > 1 && static_cast<uint64_t>(recStart[R]) * (spans + 1) <= static_cast<uint64_t>(nb) * kWarps;
  const int perRecord = spans + apart;
  const uint64_t items = static_cast<uint64_t>(recStart[R]) * perRecord;
  uint8_t* routes = c.heap + p.offset(R_DISPATCH_ROUTES);
  const uint8_t* inX = c.heap + p.offset(R_DISPATCH_X);
  const float* inS = reinterpret_cast<const float*>(c.heap + p.offset(R_DISPATCH_SCALES));
  uint8_t* outX = regionPtr(c, R_RECV_X);
  float* outS = reinterpret_cast<float*>(regionPtr(c, R_RECV_SCALES));
  int4* outMeta = reinterpret_cast<int4*>(regionPtr(c, R_RECV_META));
  const bool vec = (rowBytes & 15) == 0;
  for (uint64_t item = static_cast<uint64_t>(b) * kWarps + warp; item < items;
       item += static_cast<uint64_t>(nb) * kWarps) {
    const int q = static_cast<int>(item / perRecord);
    const int span = static_cast<int>(item % perRecord);
    // This warp claims the rows, copies the scales and writes the meta.
    const bool books = apart ? span == spans : span == 0;
    const int p0 = span < spans ? span * pieces / spans : 0, p1 = span < spans ? (span + 1) * pieces / spans : 0;
    const int s = sourceOf(recStart, R, q);
    const int j = q - recStart[s];
    uint64_t row = 0;
    const RecordView r = read(recordAt(routes, s, j, M, W), s, j, books, lane, &row);
    if (!r.ok) continue;
    mark();  // the record and its count words
    const uint64_t slot = static_cast<uint64_t>(s) * M + j;
    const uint64_t prior = books ? claimRow(c.t.taken, row, stepMarkOf, r.n, lane) : 0;  // checked after the copy
    const uint8_t* src = inX + slot * rowBytes;
    for (int piece = p0; piece < p1; ++piece) {
      const uint64_t b0 = static_cast<uint64_t>(piece) * V * 512;
      const uint64_t b1 = min(rowBytes, b0 + V * 512);
      if (vec) {
        uint4 v[V];
#pragma unroll
        for (int i = 0; i < V; ++i) {
          const uint64_t o = b0 + i * 512 + lane * 16;
          v[i] = o < b1 ? *reinterpret_cast<const uint4*>(src + o) : make_uint4(0, 0, 0, 0);
        }
        for (int i = 0; i < r.n; ++i) {
          uint8_t* dst = outX + __shfl_sync(kFullMask, row, i) * rowBytes;
#pragma unroll
          for (int u = 0; u < V; ++u) {
            const uint64_t o = b0 + u * 512 + lane * 16;
            if (o < b1) *reinterpret_cast<uint4*>(dst + o) = v[u];
          }
        }
      } else {
        for (int i = 0; i < r.n; ++i) {
          warpCopy(outX + __shfl_sync(kFullMask, row, i) * rowBytes + b0, src + b0, b1 - b0, lane);
        }
      }
    }
    mark();  // the payload's stores issued
    if (!books) continue;
    if (S > 0) {
      const float* sRow = inS + slot * S;
      for (int i = 0; i < r.n; ++i) {
        float* dst = outS + __shfl_sync(kFullMask, row, i) * S;
        for (int k = lane; k < S; k += kWarp) dst[k] = sRow[k];
      }
    }
    mark();  // the scales
    reportTaken(prior, stepMarkOf, r.n, s, j, c.state, S_DISPATCH_RECV, lane);
    if (lane == 0) atomicAdd(&named[s], r.n);
    if (lane < r.n) outMeta[row] = make_int4(s, r.token, r.e.slot, r.e.expert);
    mark();  // the claims checked, the meta
  }
}

/// placeRecordsBy with pieces of 512 bytes when the step's records are so few that every such piece
/// has a warp of the placing blocks (more warps share a record; each runs a quarter of the code),
/// else of kPieceBytes. The lean receive's (in the table-first receive's registers the second
/// instantiation spilled).
template <typename Read, typename Mark>
__device__ inline void placeRecords(const SyCtx& c, const int* recStart, int* named, int nb, int b, Read read, Mark mark) {
  if (smallPieces(c.p.rowBytes(), static_cast<uint64_t>(recStart[c.p.ranks()]), static_cast<uint64_t>(nb) * kWarps)) {
    placeRecordsBy<1>(c, recStart, named, nb, b, read, mark);
  } else {
    placeRecordsBy<kPieceVecs>(c, recStart, named, nb, b, read, mark);
  }
}

/// The stage, run by blocks [0, nb) of the dispatch kernel (dispatch.cu); this is block b.
///
/// Lean (worlds up to kLeanRanks): the last block builds the tables (recv_tables.cuh: every count
/// checked, SyTables for combine send and the host, the stats) while blocks [0, nb - 1) place: they
/// wait for every source's signal, then each placing lane reads the count words of its entry's
/// expert from the sources up to its record's (checked for the step's epoch and at most M rows, as
/// the tables check them) and places at e * R * M + the earlier sources' counts + index, so no block
/// scan or table stands between the last arrival and the copies. Otherwise every block builds the
/// tables first and places from them. On a step that fails, the two ways differ in what was placed:
/// an error recorded after a placing warp's waits read the error word (a count error the tables'
/// block finds, such as a source's rows over M * J or a word no record reads; another warp's bad
/// record or claim; a timeout elsewhere; destroy's abort) does not stop that warp, so rows may be
/// written on a step that then fails (inside recvX: every word a lane uses is checked), and with
/// several faults in one step the first recorded error may be another. A failed step's output is
/// never read (the endpoint refuses later steps).
/// kLean: leanReceive(ctx) (the host picks the kernel), so each way has its registers.
template <bool kLean>
__device__ inline void run(const SyCtx& c, int nb, int b) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), M = p.maxTokens();
  extern __shared__ int sMem[];
  const RecvTables t = carveRecvTables(sMem, L, R);
  const uint32_t epoch = stepEpoch(c.state);
  SY_CLOCK_BEGIN(c.rank);
  if constexpr (!kLean) {
    if (!buildRecvTables(c, epoch, t, b)) {
      SY_CLOCK_END("dispatchRecv", epoch);
      return;
    }
    SY_CLOCK_MARK;  // 1: the tables
    const int32_t* count = t.count;
    placeRecordsBy<kPieceVecs>(c, t.recStart, t.named, nb, b,
                 [&](const int32_t* rec, int s, int j, bool report, int lane, uint64_t* row) {
                   const RecordView r = readRecord(rec, s, j, p, count, c.state, S_DISPATCH_RECV, report, lane);
                   *row = r.ok && lane < r.n ? static_cast<uint64_t>(t.start[r.e.expert * R + s] + r.e.index) : 0;
                   return r;
                 },
                 [] {});
    addNamed(c, t);
    SY_CLOCK_END("dispatchRecv", epoch);
    return;
  } else {
    if (b == nb - 1) {  // the tables, beside the placing blocks
      buildRecvTables(c, epoch, t, 0);
      SY_CLOCK_END("dispatchRecv", epoch);
      return;
    }
    const uint32_t* counts = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_COUNT_SIGNAL));
    // Each warp waits for the sources' signals itself (lane s: source s) and takes the records'
    // prefix by shuffles into a row of its own, and its records' entries are counted straight into
    // SyTables::named: no barrier of the block before, between or after the placing.
    __shared__ int sRecStart[kWarps][kLeanRanks + 1];
    const int lane = threadIdx.x & 31;
    int* recStart = sRecStart[threadIdx.x >> 5];
    int n = 0;
    if (lane < R) n = waitRecords(c, epoch, lane);  // -1 too when the step had failed before it
    const bool failed = __any_sync(kFullMask, n < 0);
    n = max(n, 0);
    int at = n;  // inclusive prefix over the lanes
#pragma unroll
    for (int o = 1; o < kLeanRanks; o <<= 1) {
      const int v = __shfl_up_sync(kFullMask, at, o);
      if (lane >= o) at += v;
    }
    if (lane < R) recStart[lane] = at - n;
    if (lane == R - 1) recStart[R] = failed ? 0 : at;
    __syncwarp();
    SY_CLOCK_MARK;  // 1: the signals
    placeRecords(c, recStart, c.t.named, nb - 1, b,
                 [&](const int32_t* rec, int s, int j, bool report, int lane, uint64_t* row) {
                   int before = 0;
                   const RecordView r = readRecordBy(
                       rec, s, j, p,
                       [&](int e) {  // source s's rows of e, and the earlier sources' (count words, checked)
                         uint32_t w[kLeanRanks];
#pragma unroll
                         for (int s2 = 0; s2 < kLeanRanks; ++s2) {
                           w[s2] = s2 <= s ? ldRelaxedSys(counts + static_cast<uint64_t>(s2) * L + e) : 0u;
                         }
                         int rows = -1;
#pragma unroll
                         for (int s2 = 0; s2 < kLeanRanks; ++s2) {
                           if (s2 > s) break;
                           const int n = checkedCount(c, w[s2], epoch, s2);
                           if (n < 0) return -1;
                           if (s2 < s) before += n;
                           else rows = n;
                         }
                         return rows;
                       },
                       c.state, S_DISPATCH_RECV, report, lane);
                   *row = r.ok && lane < r.n ? static_cast<uint64_t>(r.e.expert) * R * M + before + r.e.index : 0;
                   return r;
                 },
                 [&] { SY_CLOCK_MARK; });
    SY_CLOCK_END("dispatchRecv", epoch);
  }
}

}  // namespace dispatch_recv_stage
}  // namespace sy
