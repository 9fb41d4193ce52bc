// Dispatch send (contiguous layout, docs/protocol.md): counts first, then every row at its final
// place in the destination's symmetric recvX / recvScales, then the records and one signal.
//
///  x              Shape: [T, hidden]        input dtype (bf16, or fp8 with scales)
///  scales         Shape: [T, hidden / 128]  fp32, fp8 input only
///  topkIdx        Shape: [T, K]             int32 global expert ids, -1 = unused slot
///  topkWeights    Shape: [T, K]             fp32 router weights (carried in the records)
///  countSignal    Shape: [R(src), E]        u32 signal on every rank at [rank][ex]: this rank's rows for ex
///  recvX          Shape: [N, hidden]        on d (symmetric): expert blocks padded to A, rows by (src, token)
///  recvScales     Shape: [N, hidden / 128]  fp32 (fp8 dispatch)
///  dispatchRoutes Shape: [R(src), M, W]     i32 route records on d (records.cuh)
///  dispatchSignal Shape: [R(src)]           u32 signal on d at [rank]: records
//
// One kernel on at most `budget` blocks (the SM budget, within one wave). Each block counts its
// chunk of tokens and plans it (plan.cuh's planChunkByBlocks); the block with the last chunk
// writes the step's per-expert totals to every rank as soon as every block's counts are in,
// before its walk and before any row moves. Every block then waits (bounded, stage
// "dispatch send") until every rank's counts of this step are here, and computes where each
// expert's rows from this rank start on each destination:
//   first[d * L + e] = sum_{e' < e} alignUp(sum_s count[s][d*L+e'], A) + sum_{s < rank} count[s][d*L+e].
// One warp per token (or per span of its row when tokens are fewer than warps): read (and
// quantise) each 2 KB once, store it at the row of the token's first entry on each other rank, and
// at every entry's row on this rank (the fan-out of its own records is done here, so the receive
// skips them): where rows, input and scales are 16-byte aligned, each lane with a row stores the
// piece there by bulk copies from the warp's staging (bulkSendPieces), else the lanes store every
// row themselves; the first span's warp writes the records. One system fence per block; the last block writes each destination's dispatchSignal.
#include "launch.h"
#include "payload.cuh"
#include "phase_clock.cuh"
#include "plan.cuh"
#include "put.cuh"
#include "records.cuh"
#include "stage.cuh"

namespace sy {
namespace {

constexpr int kThreads = kStageThreads;
constexpr int kWarps = kThreads / kWarp;

/// Worlds up to this many ranks sum each (source, destination)'s counts in shared memory as they
/// arrive; larger ones re-read the words (slower, same check).
constexpr int kSummedRanks = 64;

/// Dynamic shared memory: the plan's, and after it first[E], total[E], a scan buffer [L], its
/// scratch and the (source, destination) row sums [R, R] (R <= kSummedRanks); then, with put
/// peers, the chunk's record ranges [2R] (plan.cuh).
__host__ __device__ inline int contigSendReused(const SyParams& p) {
  const int plan = planSmemBytes(p.experts(), p.ranks(), p.topK());
  const int R = p.ranks();
  const int bases = 4 * (2 * p.experts() + p.localExperts() + 33 + (R <= kSummedRanks ? R * R : 0));
  return plan > bases ? plan : bases;
}

/// Then, 16-byte aligned, each warp's staging for the bulk sends (PieceStage, payload.cuh).
__host__ __device__ inline int contigSendStage(const SyParams& p, bool puts) {
  return (contigSendReused(p) + (puts ? 8 * p.ranks() : 0) + 15) / 16 * 16;
}

constexpr int kStageBytes = kWarps * static_cast<int>(sizeof(PieceStage));

template <bool kPuts, bool kBulk>
__global__ void __launch_bounds__(kThreads) contigSendKernel(SyCtx c, const uint8_t* x, const float* xScales,
                                                             const int32_t* topkIdx, const float* topkWeights, int T,
                                                             int chunk) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), M = p.maxTokens(), W = p.routeWords();
  const int S = p.scalesPerRow(), E = p.experts(), dp = p.dpSize(), A = p.alignment();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t epoch = stepEpoch(c.state);
  SY_CLOCK_BEGIN(c.rank);
  extern __shared__ __align__(16) int sMem[];
  const int t0 = min(T, static_cast<int>(blockIdx.x) * chunk);
  const int t1 = min(T, t0 + chunk);
  const bool lastChunk = blockIdx.x == gridDim.x - 1;
  bool ok = !__syncthreads_or(hasError(c.state));  // block-uniform
  // The plan checks every topkIdx entry (plan.cuh): a bad one and this block stores nothing.
  int* sRecRange = sMem + contigSendReused(p) / 4;  // [2R] put path
  // The last chunk's block stores this rank's totals per expert on every rank as soon as every
  // block's counts are in, before its walk (planChunkByBlocks).
  const auto announce = [&](int i, int total) {
    for (int d = 0; d < R && i < E; ++d) storeCountWord<kPuts>(c, d, i, E, encodeSignal(epoch, static_cast<uint32_t>(total)));
  };
  if (ok) ok = planChunkByBlocks(c, topkIdx, t0, t1, lastChunk, sMem, kPuts ? sRecRange : nullptr, [&] { SY_CLOCK_MARK; }, announce);
  SY_CLOCK_MARK;  // 3: this block's plan (1 and 2 inside planChunkByBlocks)

  if (ok) {
    if (lastChunk) {
      // sMem[0, E) holds this rank's totals per expert, sMem[E, E + R) its records per rank.
      if (kPuts) {  // put peers: the E words at once (each is its own signal: no fence, no order)
        __syncthreads();
        for (int d = 0; d < R; ++d) {
          if (!isPutPeer<kPuts>(c, d)) continue;
          putRange(c.heap + p.offset(R_COUNT_SIGNAL) + static_cast<uint64_t>(c.rank) * E * 4, c.out.counts + d * E,
                   static_cast<uint64_t>(E) * 4, d);
        }
        completeBlockPuts<kPuts>(c);  // delivered now: every rank waits for them
      }
      for (int d = threadIdx.x; d < R && c.stats.dispatchSent != nullptr; d += kThreads) {
        c.stats.dispatchSent[d] = static_cast<uint32_t>(sMem[E + d]);
      }
    }
    __syncthreads();
  }
  // Every rank's counts: first[ex] and total[ex] (rows of ex over all sources).
  int* first = sMem;
  int* total = sMem + E;
  int* scan = total + E;  // [L]
  int* scratch = scan + L;
  int* srcDst = scratch + 33;  // [R, R] rows each source sends each destination (R <= kSummedRanks)
  const bool summed = R <= kSummedRanks;
  if (ok) {
    for (int i = threadIdx.x; i < R * R && summed; i += kThreads) srcDst[i] = 0;
    for (int i = threadIdx.x; i < 2 * E; i += kThreads) first[i] = 0;  // first[E], then total[E]
    __syncthreads();
    // Relaxed waits: a count word is its own data; the rows it places are ordered by dispatchSignal.
    // A thread a (source, expert) word, so words already here cost one round trip (warp 0 alone
    // polling 16 words a lane one after the other took 12 µs at 256 experts and 2 ranks).
    const uint32_t* words = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_COUNT_SIGNAL));
    for (int i = threadIdx.x; i < R * E; i += kThreads) {
      const int s = i / E, ex = i % E;
      const int n = waitSignal(words + i, epoch, static_cast<uint32_t>(M), c.state, c.timeoutNs, S_DISPATCH_SEND,
                               static_cast<uint32_t>(s), R_COUNT_SIGNAL, false);
      if (n <= 0) continue;  // none, or an error recorded (checked below)
      if (s < c.rank) atomicAdd(&first[ex], n);
      atomicAdd(&total[ex], n);
      if (summed) atomicAdd(&srcDst[s * R + ex / L], n);
    }
    __syncthreads();
    // A corrupted rank's counts must not move this rank's stores past a destination's recvX: each
    // source's rows for one destination are at most M * J (recv_tables.cuh checks the same there).
    const uint32_t perSource = static_cast<uint32_t>(M) * static_cast<uint32_t>(p.slotsPerRank());
    for (int i = threadIdx.x; i < R * R && !hasError(c.state); i += kThreads) {
      const int s = i / R, d = i % R;
      uint32_t rows = 0;
      if (summed) {
        rows = static_cast<uint32_t>(srcDst[i]);
      } else {
        for (int e = 0; e < L; ++e) rows += signalCount(ldRelaxedSys(words + static_cast<uint64_t>(s) * E + d * L + e));
      }
      if (rows > perSource) {
        recordError(c.state, E_COUNT_TOO_LARGE, S_DISPATCH_SEND, static_cast<uint32_t>(s), R_COUNT_SIGNAL, rows,
                    perSource);
      }
    }
    __syncthreads();
    for (int d = 0; d < R; ++d) {  // destination d's padded block starts, a scan over its L experts
      for (int e = threadIdx.x; e < L; e += kThreads) scan[e] = alignUpInt(total[d * L + e], A);
      __syncthreads();
      blockExclusiveScan(scan, L, scratch);
      for (int e = threadIdx.x; e < L; e += kThreads) first[d * L + e] += scan[e];
      __syncthreads();
    }
    ok = !hasError(c.state);
  }
  SY_CLOCK_MARK;  // 4: every rank's counts and the row starts

  if (ok) {
    const uint64_t rowBytes = p.rowBytes();
    const int pieces = piecesPerRow(rowBytes);
    const int spans = spansFor(t1 - t0, pieces, kWarps);
    const int items = (t1 - t0) * spans;
    const uint64_t xOff = p.offset(R_RECV_X);
    const uint64_t sOff = p.offset(R_RECV_SCALES);
    // Rows by the SM's bulk copies from the warp's staging (sm_90, aligned rows): a lane a
    // destination row, so no lane loops over the rows with its own stores.
    constexpr bool bulk = kBulk && SY_BULK_COPIES;  // kBulk: the launch found bulkPieces(p, x)
    PieceStage* stage = reinterpret_cast<PieceStage*>(reinterpret_cast<uint8_t*>(sMem) + contigSendStage(p, kPuts)) + warp;
    uint32_t staged = 0;
    for (int item = warp; item < items; item += kWarps) {
      const int t = t0 + item / spans;
      const int span = item % spans;
      const int p0 = span * pieces / spans, p1 = (span + 1) * pieces / spans;
      if (t % dp != c.rank % dp) continue;
      // The token's slots and its plan entries, loaded together (one round trip, not three).
      const uint64_t at = static_cast<uint64_t>(t) * K + lane;
      const bool slot = lane < K;
      const int ex = slot ? topkIdx[at] : -1;
      const int jv = slot ? c.plan.recordIndex[at] : 0;  // meaningful at each rank's first slot
      const int index = slot ? c.plan.entryIndex[at] : 0;
      const float w = slot ? topkWeights[at] : 0.0f;
      const TokenSlots s = tokenSlotsOf(ex, L, lane);
      const int row = s.ex >= 0 ? first[s.ex] + index : 0;  // this entry's final row on its rank
      // Each leader lane's destination heap, loaded once a token: read from c.peers behind every
      // piece's stores it would wait for them (the compiler cannot tell the two apart).
      const uint64_t base = s.leader ? reinterpret_cast<uint64_t>(c.peers[s.ex / L]) : 0;
      // Other ranks: the row of the record's first entry. This rank: every entry's row. A put
      // peer's row goes to this rank's outbox at [d][j] (put after the chunk, below).
      auto each = [&](auto&& fn) {
        for (uint32_t m = s.leaders; m != 0; m &= m - 1) {
          const int l = __ffs(m) - 1;
          const int d = __shfl_sync(kFullMask, s.ex, l) / L;
          uint8_t* peer = reinterpret_cast<uint8_t*>(__shfl_sync(kFullMask, base, l));
          if (isPutHeap<kPuts>(peer)) {
            const int jl = __shfl_sync(kFullMask, jv, l);
            fn(outboxRow(c, d, jl), outboxScales(c, d, jl));
            continue;
          }
          uint32_t rows = d == c.rank ? __shfl_sync(kFullMask, s.group, l) : (1u << l);
          for (; rows != 0; rows &= rows - 1) {
            const uint64_t r = static_cast<uint64_t>(__shfl_sync(kFullMask, row, __ffs(rows) - 1));
            fn(peer + xOff + r * rowBytes,
               reinterpret_cast<float*>(peer + sOff) + r * S);
          }
        }
      };
      if (p0 < p1) {
        if constexpr (bulk) {
          // This lane's row: its entry's on this rank, the record's first entry's on another, or a
          // put peer's outbox row.
          uint8_t* rowX = nullptr;
          float* rowS = nullptr;
          const int d = s.ex >= 0 ? s.ex / L : -1;
          if (s.leader || (d >= 0 && d == c.rank)) {
            uint8_t* heap = reinterpret_cast<uint8_t*>(s.leader ? base : reinterpret_cast<uint64_t>(c.peers[d]));
            if (!isPutHeap<kPuts>(heap)) {
              rowX = heap + xOff + static_cast<uint64_t>(row) * rowBytes;
              rowS = reinterpret_cast<float*>(heap + sOff) + static_cast<uint64_t>(row) * S;
            } else if (s.leader) {
              rowX = outboxRow(c, d, jv);
              rowS = outboxScales(c, d, jv);
            }
          }
          bulkSendPieces(p, x, xScales, t, p0, p1, lane, rowX, rowS, stage, staged);
        } else {
          sendPieces(p, x, xScales, t, p0, p1, lane, each);
        }
      }
      if (p0 == 0) {
        const int j = jv;
        for (uint32_t m = s.leaders; m != 0; m &= m - 1) {
          const int l = __ffs(m) - 1;
          const int d = __shfl_sync(kFullMask, s.ex, l) / L;
          const int jl = __shfl_sync(kFullMask, j, l);
          const int rl = __shfl_sync(kFullMask, row, l);
          if (isPutPeer<kPuts>(c, d) && lane == 0) c.out.destRow[static_cast<uint64_t>(d) * M + jl] = rl;
          writeRecord(recordSlot<kPuts>(c, d, jl, M, W), t, s, l, lane, L, index, w);
        }
      }
    }
    if constexpr (bulk) bulkSendDone();
    if (kPuts) {  // the chunk's records to each put peer: one range; each row (and scales) to its place
      __syncthreads();
      for (int d = 0; d < R; ++d) {
        if (!isPutPeer<kPuts>(c, d)) continue;
        const int j0 = sRecRange[d], j1 = sRecRange[R + d];
        if (j1 <= j0) continue;
        const uint64_t from = static_cast<uint64_t>(d) * M, to = static_cast<uint64_t>(c.rank) * M + j0;
        putRange(c.heap + p.offset(R_DISPATCH_ROUTES) + to * W * 4, c.out.routes + (from + j0) * W,
                 static_cast<uint64_t>(j1 - j0) * W * 4, d);
        for (int j = j0 + warp; j < j1; j += kWarps) {
          const uint64_t r = static_cast<uint64_t>(c.out.destRow[from + j]);
          putRangeWarp(c.heap + xOff + r * rowBytes, c.out.rows + (from + j) * rowBytes, rowBytes, d);
          putRangeWarp(c.heap + sOff + r * S * 4, c.out.scales + (from + j) * S, static_cast<uint64_t>(S) * 4, d);
        }
      }
    }
  }
  completeBlockPuts<kPuts>(c);
  SY_CLOCK_MARK;  // 5: warp 0's rows and records
  const bool last = lastBlockDone(c.state, DONE_SEND);
  SY_CLOCK_ENDER(last);
  SY_CLOCK_MARK;  // 6: every warp's, fenced
  if (!last || hasError(c.state)) {
    SY_CLOCK_END("contigSend", epoch);
    return;
  }
  for (int d = threadIdx.x; d < R; d += kThreads) {
    releaseSignal<kPuts>(c, R_DISPATCH_SIGNAL, d, encodeSignal(epoch, static_cast<uint32_t>(__ldcg(&c.plan.totals[E + d]))));
  }
  SY_CLOCK_END("contigSend", epoch);
}

}  // namespace

cudaError_t launchDispatchSendContiguous(const SyCtx& ctx, const void* x, const float* scales, const int32_t* topkIdx,
                                         const float* topkWeights, int numTokens, int budget, cudaStream_t stream) {
  const SyParams& p = ctx.p;
  // The blocks wait for one another's counts: never more than are resident at once.
  int blocks = budget < 1 ? 1 : (budget < ctx.plan.blocks ? budget : ctx.plan.blocks);
  const int chunk = chunkTokens(numTokens, blocks);
  blocks = numTokens > 0 ? (numTokens + chunk - 1) / chunk : 1;  // every block has tokens; the last ends at T
  // Bulk sends where the rows allow them, the build has them and the staging fits, else the lanes'
  // own stores: a kernel each, so that neither path's registers weigh on the other's.
  const int base = contigSendStage(p, ctx.puts);
  const KernelRoom room = kernelRoom(ctx.puts ? reinterpret_cast<const void*>(contigSendKernel<true, true>)
                                              : reinterpret_cast<const void*>(contigSendKernel<false, true>));
  const bool bulk = bulkPieces(p, x) && room.arch >= 90 && base + kStageBytes <= room.room;
  const int smem = base + (bulk ? kStageBytes : 0);
  auto kernel = ctx.puts ? (bulk ? contigSendKernel<true, true> : contigSendKernel<true, false>)
                         : (bulk ? contigSendKernel<false, true> : contigSendKernel<false, false>);
  cudaError_t rc = allowSmem(reinterpret_cast<const void*>(kernel), smem);
  if (rc != cudaSuccess) return rc;
  kernel<<<blocks, kThreads, smem, stream>>>(ctx, static_cast<const uint8_t*>(x), p.inputFp8() ? scales : nullptr,
                                             topkIdx, topkWeights, numTokens, chunk);
  return cudaGetLastError();
}

}  // namespace sy
