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
// One kernel. Every block builds the tables (recv_tables.cuh), then one warp per record (or per
// span of 2 KB pieces of it when records are fewer than warps): lane i holds entry i, each piece is
// read once and stored at each entry's row (the fan-out); the first span's warp also copies the
// scales and writes the meta. A bad record is a ProtocolError (E_BAD_RECORD) and is not placed.
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

/// The stage, run by blocks [0, nb) of the dispatch kernel (dispatch.cu); this is block b.
__device__ inline void run(const SyCtx& c, int nb, int b) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), M = p.maxTokens(), W = p.routeWords(), S = p.scalesPerRow();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  extern __shared__ int sMem[];
  const RecvTables t = carveRecvTables(sMem, L, R);
  SY_CLOCK_BEGIN;
  if (!buildRecvTables(c, stepEpoch(c.state), t, b)) {
    SY_CLOCK_END("dispatchRecv", stepEpoch(c.state));
    return;
  }
  SY_CLOCK_MARK;  // 1: the tables
  const uint64_t mark = stepMark(c.state);

  const uint64_t rowBytes = p.rowBytes();
  const int pieces = piecesPerRow(rowBytes);
  const int spans = spansFor(t.recStart[R], pieces, nb * kWarps);
  const uint64_t items = static_cast<uint64_t>(t.recStart[R]) * spans;
  uint8_t* routes = c.heap + p.offset(R_DISPATCH_ROUTES);
  const uint8_t* inX = c.heap + p.offset(R_DISPATCH_X);
  const float* inS = reinterpret_cast<const float*>(c.heap + p.offset(R_DISPATCH_SCALES));
  uint8_t* outX = regionPtr(c, R_RECV_X);
  float* outS = reinterpret_cast<float*>(regionPtr(c, R_RECV_SCALES));
  int4* outMeta = reinterpret_cast<int4*>(regionPtr(c, R_RECV_META));
  const bool vec = (rowBytes & 15) == 0;
  for (uint64_t item = static_cast<uint64_t>(b) * kWarps + warp; item < items;
       item += static_cast<uint64_t>(nb) * kWarps) {
    const int q = static_cast<int>(item / spans);
    const int span = static_cast<int>(item % spans);
    const int p0 = span * pieces / spans, p1 = (span + 1) * pieces / spans;
    const int s = sourceOfRecord(t, R, q);
    const int j = q - t.recStart[s];
    const RecordView r = readRecord(recordAt(routes, s, j, M, W), s, j, p, t.count, c.state, S_DISPATCH_RECV,
                                    p0 == 0, lane);
    if (!r.ok) continue;
    const uint64_t row = lane < r.n ? static_cast<uint64_t>(t.start[r.e.expert * R + s] + r.e.index) : 0;
    const uint64_t slot = static_cast<uint64_t>(s) * M + j;
    const uint64_t prior = p0 == 0 ? claimRow(c.t.taken, row, mark, r.n, lane) : 0;  // checked after the copy
    const uint8_t* src = inX + slot * rowBytes;
    for (int piece = p0; piece < p1; ++piece) {
      const uint64_t b0 = static_cast<uint64_t>(piece) * kPieceBytes;
      const uint64_t b1 = min(rowBytes, b0 + kPieceBytes);
      if (vec) {
        uint4 v[kPieceVecs];
#pragma unroll
        for (int i = 0; i < kPieceVecs; ++i) {
          const uint64_t o = b0 + i * 512 + lane * 16;
          v[i] = o < b1 ? *reinterpret_cast<const uint4*>(src + o) : make_uint4(0, 0, 0, 0);
        }
        for (int i = 0; i < r.n; ++i) {
          uint8_t* dst = outX + __shfl_sync(kFullMask, row, i) * rowBytes;
#pragma unroll
          for (int u = 0; u < kPieceVecs; ++u) {
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
    if (p0 != 0) continue;
    if (S > 0) {
      const float* sRow = inS + slot * S;
      for (int i = 0; i < r.n; ++i) {
        float* dst = outS + __shfl_sync(kFullMask, row, i) * S;
        for (int k = lane; k < S; k += kWarp) dst[k] = sRow[k];
      }
    }
    reportTaken(prior, mark, r.n, s, j, c.state, S_DISPATCH_RECV, lane);
    if (lane == 0) atomicAdd(&t.named[s], r.n);
    if (lane < r.n) outMeta[row] = make_int4(s, r.token, r.e.slot, r.e.expert);
  }
  addNamed(c, t);
  SY_CLOCK_END("dispatchRecv", stepEpoch(c.state));
}

}  // namespace dispatch_recv_stage
}  // namespace sy
