// Dispatch receive (contiguous layout, docs/protocol.md): the rows are already at their final
// places in recvX (each sender wrote every token once, at its record's first entry). Waits for
// every source, checks counts and records, then fans each record's payload out from its first
// entry's row to its other entries' rows, writes recvMeta for every row, and the meta of each
// expert block's padding rows (-1, -1, -1, e; their x and scales are unspecified). Order and
// padding as core's reference: blocks in expert order padded to expertAlignment, rows by (srcRank,
// srcToken).
//
///  dispatchRoutes Shape: [R(src), M, W]       i32 route records (symmetric)
///  recvX          Shape: [N, hidden]          symmetric output (dispatch dtype)
///  recvScales     Shape: [N, hidden / 128]    symmetric, fp32 (fp8 dispatch)
///  recvMeta       Shape: [N, 4]               local, int32 (srcRank, srcToken, topkSlot, localExpert)
//
// One kernel on at most `budget` blocks. Every block builds the tables (recv_tables.cuh); then
// one warp per record (or span of 2 KB pieces of it when records are few) fans out (records from
// this rank were fanned out by its own send, which wrote every entry's row locally): its lane 0
// bulk-loads the span into the warp's 8 KB of shared memory and bulk-stores it to the record's
// other rows (bulk_copy.cuh), while the first span's warp copies scales and writes meta; then one
// thread per padding row writes its meta.
#include "bulk_copy.cuh"
#include "launch.h"
#include "payload.cuh"
#include "phase_clock.cuh"
#include "records.cuh"
#include "recv_tables.cuh"
#include "stage.cuh"

namespace sy {
namespace {

constexpr int kThreads = kStageThreads;
constexpr int kWarps = kThreads / kWarp;
/// Bytes of a record's row a warp bulk-loads into shared memory before it stores them to the
/// record's other rows (a warp's buffer).
constexpr int kFanBytes = 8192;

/// Dynamic shared memory: the receive tables, then a 16-byte slot a warp for its mbarrier, then
/// each warp's buffer (128-byte aligned).
__host__ __device__ inline int fanBarriersAt(int L, int R) { return (recvTablesSmemBytes(L, R) + 127) / 128 * 128; }
__host__ __device__ inline int fanBuffersAt(int L, int R) { return fanBarriersAt(L, R) + 128 * ((kWarps * 16 + 127) / 128); }
__host__ __device__ inline int contigRecvSmemBytes(int L, int R) { return fanBuffersAt(L, R) + kWarps * kFanBytes; }

/// Block-collective end of the fan-out's claims: every block counts itself done in DONE_FAN_OUT (the
/// ones whose tables failed too, so no step leaves the count behind), with no fence, since the
/// count only picks the block that completes it, which resets the claims.
__device__ inline void doneClaiming(SyState* state) {
  if (lastBlockDone(state, DONE_FAN_OUT, DoneFence::None) && threadIdx.x == 0) state->recvClaims = 0;
}

__global__ void __launch_bounds__(kThreads) contigRecvKernel(SyCtx c) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), M = p.maxTokens(), W = p.routeWords(), S = p.scalesPerRow();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  extern __shared__ __align__(128) int sMem[];  // the bulk copies' buffers 16-byte, the mbarriers 8-byte aligned
  SY_CLOCK_BEGIN(c.rank);
  const RecvTables t = carveRecvTables(sMem, L, R);
  uint8_t* smemBytes = reinterpret_cast<uint8_t*>(sMem);
  uint64_t* bar = reinterpret_cast<uint64_t*>(smemBytes + fanBarriersAt(L, R) + warp * 16);
  uint8_t* buf = smemBytes + fanBuffersAt(L, R) + warp * kFanBytes;
  if (lane == 0) mbarInit(bar);  // this lane alone uses it, after fence.mbarrier_init
  if (!buildRecvTables(c, stepEpoch(c.state), t)) {
    doneClaiming(c.state);
    return;
  }
  if (lane == 0) fenceProxyAsync();  // the rows the tables' acquire made visible, to the bulk loads
  uint32_t parity = 0;
  SY_CLOCK_MARK;  // 1: the tables (the wait for every source, counts, scans)
  const uint64_t mark = stepMark(c.state);

  const uint64_t rowBytes = p.rowBytes();
  const int pieces = piecesPerRow(rowBytes);
  const int spans = spansFor(t.recStart[R], pieces, gridDim.x * kWarps);
  const uint64_t items = static_cast<uint64_t>(t.recStart[R]) * spans;
  uint8_t* routes = c.heap + p.offset(R_DISPATCH_ROUTES);
  uint8_t* outX = regionPtr(c, R_RECV_X);
  float* outS = reinterpret_cast<float*>(regionPtr(c, R_RECV_SCALES));
  int4* outMeta = reinterpret_cast<int4*>(regionPtr(c, R_RECV_META));
  const bool vec = (rowBytes & 15) == 0;
  // A warp's first item is its own; past the first round each warp claims its next one from a
  // counter (a record fans out to 0 to K - 1 more rows, so a fixed deal leaves an SM's schedulers
  // uneven), a record ahead so the claim's latency hides behind a record's copies.
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * kWarps;
  const bool claims = items > stride && R > 1;  // one rank: no fan-out to balance, only the claims' contention
  const auto claim = [&](uint64_t after) {  // without claims the fixed deal
    return claims ? claimItem(&c.state->recvClaims, after, items, stride, lane) : after + stride;
  };
  uint64_t item = static_cast<uint64_t>(blockIdx.x) * kWarps + warp;
  for (uint64_t then = claim(item); item < items; item = then, then = claim(then)) {
    const int q = static_cast<int>(item / spans);
    const int span = static_cast<int>(item % spans);
    const int p0 = span * pieces / spans, p1 = (span + 1) * pieces / spans;
    const int s = sourceOf(t.recStart, R, q);
    const int j = q - t.recStart[s];
    const RecordView r = readRecord(recordAt(routes, s, j, M, W), s, j, p, t.count, c.state, S_DISPATCH_RECV,
                                    p0 == 0, lane);
    if (!r.ok) continue;
    const uint64_t row = lane < r.n ? static_cast<uint64_t>(t.start[r.e.expert * R + s] + r.e.index) : 0;
    const uint64_t row0 = __shfl_sync(kFullMask, row, 0);
    const uint64_t prior = p0 == 0 ? claimRow(c.t.taken, row, mark, r.n, lane) : 0;  // checked after the copy
    const bool fan = s != c.rank && r.n > 1;
    // The span's bytes kFanBytes at a time through the warp's buffer by bulk copies (lane 0), else
    // (rows not 16-byte multiples, or an architecture before sm_90) by the warp's own copies.
    const uint64_t s0 = static_cast<uint64_t>(p0) * kPieceBytes, s1 = min(rowBytes, static_cast<uint64_t>(p1) * kPieceBytes);
    for (uint64_t b0 = s0; b0 < s1 && fan; b0 += kFanBytes) {
      const uint8_t* src = outX + row0 * rowBytes;
      const uint64_t b1 = min(s1, b0 + kFanBytes);
      if (vec && SY_BULK_COPIES) {
        if (lane == 0) {
          bulkWaitRead();  // the buffer's last stores have read it
          bulkLoad(buf, src + b0, static_cast<uint32_t>(b1 - b0), bar);
          mbarWait(bar, parity);
        }
        parity ^= 1;
        for (int i = 1; i < r.n; ++i) {
          const uint64_t dst = __shfl_sync(kFullMask, row, i);
          if (lane == 0) bulkStore(outX + dst * rowBytes + b0, buf, static_cast<uint32_t>(b1 - b0));
        }
        if (lane == 0) bulkCommit();
      } else {
        for (int i = 1; i < r.n; ++i) {
          warpCopy(outX + __shfl_sync(kFullMask, row, i) * rowBytes + b0, src + b0, b1 - b0, lane);
        }
      }
    }
    if (p0 != 0) continue;
    if (fan && S > 0) {
      const float* sRow = outS + row0 * S;
      for (int i = 1; i < r.n; ++i) {
        float* dst = outS + __shfl_sync(kFullMask, row, i) * S;
        for (int k = lane; k < S; k += kWarp) dst[k] = sRow[k];
      }
    }
    reportTaken(prior, mark, r.n, s, j, c.state, S_DISPATCH_RECV, lane);
    if (lane == 0) atomicAdd(&t.named[s], r.n);
    if (lane < r.n) outMeta[row] = make_int4(s, r.token, r.e.slot, r.e.expert);
  }

  if (lane == 0) bulkWaitAll();  // the fan-out's rows written before the kernel ends
  SY_CLOCK_MARK;  // 2: warp 0's fan-out of its records
  // Padding rows [offsets[e] + rows of e, offsets[e + 1]), at most A - 1 an expert: a thread a row
  // writes its meta (-1, -1, -1, e); x and scales are left as they are (the protocol leaves them
  // unspecified: zeroing them moved 60 MB a rank at contiguous 4096, 43 µs of this kernel).
  const int A = p.alignment();
  const uint64_t padItems = static_cast<uint64_t>(L) * (A > 1 ? A - 1 : 0);
  for (uint64_t item = static_cast<uint64_t>(blockIdx.x) * kThreads + threadIdx.x; item < padItems;
       item += static_cast<uint64_t>(gridDim.x) * kThreads) {
    const int e = static_cast<int>(item / (A - 1));
    int rows = 0;
    for (int s = 0; s < R; ++s) rows += t.count[e * R + s];
    const uint64_t row = static_cast<uint64_t>(t.offsets[e] + rows) + item % (A - 1);
    if (row < static_cast<uint64_t>(t.offsets[e + 1])) outMeta[row] = make_int4(-1, -1, -1, e);
  }
  SY_CLOCK_MARK;  // 3: thread 0's share of the padding rows' meta
  addNamed(c, t);
  doneClaiming(c.state);  // its barrier: every warp's last claim made
  SY_CLOCK_END("contigRecv", stepEpoch(c.state));
}

}  // namespace

cudaError_t launchDispatchRecvContiguous(const SyCtx& ctx, int budget, cudaStream_t stream) {
  const SyParams& p = ctx.p;
  const int smem = contigRecvSmemBytes(p.localExperts(), p.ranks());
  cudaError_t rc = allowSmem(reinterpret_cast<const void*>(contigRecvKernel), smem);
  if (rc != cudaSuccess) return rc;
  contigRecvKernel<<<budget < 1 ? 1 : budget, kThreads, smem, stream>>>(ctx);
  return cudaGetLastError();
}

}  // namespace sy
